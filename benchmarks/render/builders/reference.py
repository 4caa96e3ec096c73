"""The reference pages: methodology (the library's definitions and the tests the tables ran), the
glossary (every term the tables use, metrics as the latest results record them), the references (the
project's protocol documents, every cited work and every model's source) and how to submit a model."""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

from benchmarks.results_model import IntervalRow, LeaderboardRow, LeaderboardTests, ModelSource
from tycheon.metrics.registry import METRICS, MetricSpec
from tycheon.metrics.scale import SCALE_TEXT

from ..definitions import load_references, model_columns, read_package, registry_glossary
from ..fmt import relurl
from ..pages import Page, SiteModel
from .registry import Built, in_nav, page_path, page_type


def methodology_page(site: SiteModel, *, root: Path) -> Page:
    protocols = []
    seen = set()
    for name in site.names:
        for p in site.latest(name).data.protocols:
            key = (p.id, p.description)
            if key not in seen:
                seen.add(key)
                protocols.append({"name": name, **p.model_dump()})
    tests = sorted(
        {
            (lb.tests.dm_loss, lb.tests.alpha, lb.tests.dm_overlap_lag)
            for name in site.names
            for lb in site.latest(name).data.leaderboards
        },
        key=repr,
    )
    packages = [read_package(root, "tycheon.metrics"), read_package(root, "tycheon.stats")]
    verdict_defs = [d for d in packages[1].definitions if "verdict" in d.name]
    here = page_path("methodology")
    return Page(
        path=here,
        template="methodology.md.j2",
        title="Methodology",
        context={
            "packages": packages,
            "verdict_defs": verdict_defs,
            "row_columns": model_columns(LeaderboardRow),
            "test_columns": model_columns(LeaderboardTests),
            "interval_columns": model_columns(IntervalRow),
            "protocols": protocols,
            "tests": tests,
            "refs": load_references(),
            "doc_links": docstring_links(here),
        },
    )


# How the library's docstrings name the project's documents, and the reference each phrase links to
DOCSTRING_CITES = {
    "ADR-0006": "adr-0006",
    "WP26": "wp26",
    "evaluation-choices paper": "evaluation-choices",
    "Evaluation-choices paper": "evaluation-choices",
    "protocol-sensitivity audit": "sensitivity-audit",
}


def docstring_links(here: str) -> dict[str, str]:
    """``{phrase: address}`` linking the project documents a docstring names to their References entries."""
    refs = load_references()
    target = relurl(here, page_path("references"))
    return {phrase: f"{target}#{refs.get(key).anchor}" for phrase, key in DOCSTRING_CITES.items()}


def glossary_page(site: SiteModel, *, root: Path) -> Page:
    """Every term the tables use, defined once; metrics from the registry as the latest results record it.

    Results files without a ``metric_glossary`` block fall back to the registry's literal specs read with
    ``ast`` (:func:`registry_glossary`); the page says which source it used.
    """
    source, metrics = "none", []
    for name in reversed(site.names):
        block = site.latest(name).data.metric_glossary
        if block:
            run = f"{name} {site.latest(name).version}"
            source, metrics = f"the benchmark run copied this table from it ({run})", [g.model_dump() for g in block]
            break
    if not metrics:
        metrics = registry_glossary(root)
        source = "this table is read from the library's source, as no results file records it" if metrics else "none"
    used = sorted({lb.metric for name in site.names for lb in site.latest(name).data.leaderboards})
    for m in metrics:
        m["used"] = m["name"] in used
        # the wording is the registry's (a metric is declared once); a name it no longer has reads the
        # recorded direction as the registry would word it
        m["scale_text"] = SCALE_TEXT.get(m["scale_column"] or "", m["scale_column"])
        spec = METRICS.get(m["name"])
        m["better"] = spec.better if spec is not None else MetricSpec.default_better(bool(m["lower_is_better"]))
    settings = sorted(
        {
            (lb.tests.alpha, lb.tests.min_cell, lb.tests.cell_counts)
            for name in site.names
            for lb in site.latest(name).data.leaderboards
        },
        key=repr,
    )
    baselines = sorted(
        {(lb.baseline, lb.random_walk) for name in site.names for lb in site.latest(name).data.leaderboards}
    )
    units = sorted({u for name in site.names for d in site.latest(name).data.datasets for u in d.units})
    return Page(
        path=page_path("glossary"),
        template="glossary.md.j2",
        title="Glossary",
        context={
            "metrics": metrics,
            "metric_source": source,
            "used": used,
            "settings": settings,
            "baselines": baselines,
            "units": units,
            "refs": load_references(),
        },
    )


REFERENCE_GROUPS = (
    ("methods", "Forecasting methods"),
    ("competitions", "Forecasting competitions"),
    ("statistics", "Statistics, metrics and classifications"),
    ("textbooks", "Textbooks"),
)


def references_page(site: SiteModel) -> Page:
    """The project's protocol documents (each with a summary for readers), every model on the site with its
    method's source, and every cited work, from the one references file (:func:`load_references`).

    A model of the results without an entry in that file is listed as "source not recorded" rather than
    dropped, and the test over the committed site fails on it.
    """
    refs = load_references()
    names: dict[str, str] = {}
    for name in site.names:
        for run in site.by_name[name]:
            for m in run.data.models:
                names[m.id] = m.display_name
    models = []
    for mid in sorted(site.model_ids, key=lambda m: names.get(m, m).casefold()):
        citation = refs.models.get(mid)
        models.append(
            {
                "id": mid,
                "display_name": names.get(mid, mid),
                "page": site.model_page(mid),
                "basis": citation.basis if citation else None,
                "note": citation.note if citation else None,
                "works": [refs.get(k) for k in citation.cites] if citation else [],
            }
        )
    return Page(
        path=page_path("references"),
        template="references.md.j2",
        title="References",
        context={
            "documents": refs.group("project"),
            "models": models,
            "groups": [(title, refs.group(key)) for key, title in REFERENCE_GROUPS],
        },
    )


def _config_fields() -> list[dict[str, Any]]:
    """``ModelConfig``'s fields (and its sources' fields) with the descriptions the schema gives them."""
    from benchmarks.config import ModelConfig, SktimeSource, TycheonSource

    rows = []
    for name, f in ModelConfig.model_fields.items():
        rows.append({"name": name, "required": f.is_required(), "description": f.description or ""})
        if name == "source":
            for source in (TycheonSource, SktimeSource):
                for sub, g in source.model_fields.items():
                    if sub == "kind":
                        continue
                    kind = get_args(source.model_fields["kind"].annotation)[0]
                    rows.append(
                        {
                            "name": f"source.{sub}",
                            "required": g.is_required(),
                            "description": f'(kind = "{kind}") {g.description or ""}',
                        }
                    )
    return rows


def _contributing_markdown(text: str) -> str:
    """CONTRIBUTING.md as a section of the submit page: its title dropped, every heading one level down."""
    lines = text.splitlines()
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    out, fenced = [], False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        out.append("#" + line if not fenced and line.startswith("#") else line)
    return "\n".join(out).strip() + "\n"


def submit_page(*, root: Path) -> Page:
    contributing = root / "CONTRIBUTING.md"
    examples = sorted((root / "benchmarks" / "models").glob("*.toml"))
    example = examples[0] if examples else None
    return Page(
        path=page_path("submit"),
        template="submit.md.j2",
        title="Submit a model",
        context={
            "contributing": _contributing_markdown(contributing.read_text(encoding="utf-8"))
            if contributing.exists()
            else None,
            "fields": _config_fields(),
            "source_kinds": list(get_args(ModelSource.model_fields["kind"].annotation)),
            "example_name": example.name if example else None,
            "example": example.read_text(encoding="utf-8") if example else None,
        },
    )


@page_type("glossary", path="glossary.md", scope="site", order=30)
def _glossary(site: SiteModel, *, root: Path) -> Built:
    return in_nav(glossary_page(site, root=root))


@page_type("methodology", path="methodology.md", scope="site", order=40)
def _methodology(site: SiteModel, *, root: Path) -> Built:
    return in_nav(methodology_page(site, root=root))


@page_type("references", path="references.md", scope="site", order=45)
def _references(site: SiteModel, *, root: Path) -> Built:
    return in_nav(references_page(site))


@page_type("submit", path="submit.md", scope="site", order=50)
def _submit(site: SiteModel, *, root: Path) -> Built:
    return in_nav(submit_page(root=root))
