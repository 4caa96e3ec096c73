"""The reference pages: methodology (the library's definitions and the tests the tables ran), the
glossary (every term the tables use, metrics as the latest results record them), the references (the
project's protocol documents, every cited work and every model's source) and how to submit a model."""

from __future__ import annotations

import fnmatch
import re
import tomllib
from pathlib import Path
from typing import Any, NamedTuple, get_args

from benchmarks.results_model import IntervalRow, LeaderboardRow, LeaderboardTests, ModelSource
from tycheon.metrics.registry import METRICS, MetricSpec
from tycheon.metrics.scale import SCALE_TEXT

from ..definitions import load_references, model_columns, read_package, registry_glossary
from ..fmt import relurl
from ..pages import Page, SiteModel
from .dataset_tables import competition_horizons
from .registry import Built, in_nav, page_path, page_type

MODELS_DIR = "benchmarks/models"  # where a submission's model config goes


def methodology_page(site: SiteModel, *, root: Path) -> Page:
    protocols = []
    seen = set()
    for name in site.names:
        for p in site.latest(name).data.protocols:
            key = (p.id, p.description)
            if key not in seen:
                seen.add(key)
                entry = {"name": name, **p.model_dump(), "horizons": {}}
                if p.kind == "competition":
                    entry["horizons"] = competition_horizons(site.latest(name))
                protocols.append(entry)
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


# How the library's docstrings name the project's documents, and the reference each phrase links to; a
# document cited by number ("ADR-0006 decision 6") shows the words the References page cites it by
DOCSTRING_CITES = {
    "ADR-0006": "adr-0006",
    "WP26": "wp26",
    "evaluation-choices paper": "evaluation-choices",
    "Evaluation-choices paper": "evaluation-choices",
    "protocol-sensitivity audit": "sensitivity-audit",
}


_CITED_BY_NUMBER = ("ADR-0006", "WP26")


def docstring_links(here: str) -> dict[str, str | tuple[str, str]]:
    """``{phrase: address}`` linking the project documents a docstring names to their References entries;
    a document named by its number links under the words the References page cites it by
    (``{"ADR-0006": (address, "the walk-forward evaluation record")}``)."""
    refs = load_references()
    target = relurl(here, page_path("references"))
    links: dict[str, str | tuple[str, str]] = {}
    for phrase, key in DOCSTRING_CITES.items():
        href = f"{target}#{refs.get(key).anchor}"
        links[phrase] = (href, refs.get(key).cite) if phrase in _CITED_BY_NUMBER else href
    return links


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
    names = {mid: n for name in site.names for mid, n in site.display_names(site.latest(name)).items()}
    baselines = [
        ({"id": b, "name": names.get(b, b)}, {"id": rw, "name": names.get(rw, rw)})
        for b, rw in sorted(
            {(lb.baseline, lb.random_walk) for name in site.names for lb in site.latest(name).data.leaderboards}
        )
    ]
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


class CiRun(NamedTuple):
    """One workflow job that runs the benchmark, as its workflow file declares it."""

    workflow: str  # the workflow's name
    file: str  # its file under .github/workflows/
    job: str
    runs_on: str
    timeout_minutes: int | None  # the job's limit
    step_timeout_minutes: int | None  # the limit of the step that runs the benchmark
    python: str | None  # actions/setup-python's python-version
    install: str | None  # the install step's command
    commands: list[str]  # the commands that run a benchmark config, as run
    configs: list[str]  # the benchmark configs those commands name (--config)
    then: list[str]  # the workflow's later jobs (commit, publish, ...)


class CiFacts(NamedTuple):
    """What CI runs on a model submission and after its merge, read from the repository's own files."""

    pull_request: list[CiRun]  # jobs a pull request changing the models folder starts
    merge: list[CiRun]  # jobs a push to the default branch changing the models folder starts
    branch: str | None  # the branch a merge lands on
    time_budget_seconds: float | None  # per (dataset, model), of the pull request's benchmark config
    n_jobs: int | None  # worker processes of that config
    packages: list[str]  # the library's dependencies as constraints.txt pins them ("numpy==2.3.4")
    n_pins: int  # every pin of constraints.txt
    not_rerun: list[str]  # benchmark configs a merge does not re-run


def _commands(script: str, module: str) -> list[str]:
    """The ``python -m <module>...`` commands of a step's shell script, as ``python -m ...``: the
    interpreter's path and the words naming shell variables dropped, each cut before its first
    redirection or shell operator."""
    commands = []
    for line in script.replace("\\\n", " ").splitlines():
        words = line.split()
        for i, word in enumerate(words[:-2]):
            if word.endswith("python") and words[i + 1] == "-m" and words[i + 2].startswith(module):
                kept = ["python"]
                for w in words[i + 1 :]:
                    if w[0] in "<>|;&" or w[:2] == "2>":
                        break
                    if "$" in w:  # a runner's path or a shell list: dropped, with the option that names it
                        kept = kept[:-1] if kept[-1].startswith("--") else kept
                    else:
                        kept.append(w.rstrip(";"))
                    if w.endswith(";"):
                        break
                commands.append(" ".join(kept))
    return commands


def _ci_runs(workflows: Path, *, event: str, changed: str, module: str) -> tuple[list[CiRun], str | None]:
    """Every job of ``workflows/*.yml`` that ``event`` starts for a change of the file ``changed`` and that
    runs ``python -m <module>``; and the branch the event is limited to, if the workflows name one."""
    import yaml

    runs, branch = [], None
    for file in sorted(workflows.glob("*.yml")):
        doc = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
        triggers = doc.get("on", doc.get(True))  # YAML 1.1 reads the bare key `on` as true
        if isinstance(triggers, (str, list)):
            triggers = {t: None for t in ([triggers] if isinstance(triggers, str) else triggers)}
        if not isinstance(triggers, dict) or event not in triggers:
            continue
        trigger = triggers[event] or {}
        paths = trigger.get("paths")
        if paths is not None and not any(fnmatch.fnmatch(changed, p) for p in paths):
            continue
        jobs = doc.get("jobs", {})
        for i, (job_id, job) in enumerate(jobs.items()):
            steps = job.get("steps", [])
            bench = [st for st in steps if _commands(st.get("run", ""), module)]
            if not bench:
                continue
            branch = branch or next(iter(trigger.get("branches", [])), None)
            python = next(
                (st["with"].get("python-version") for st in steps if "setup-python" in st.get("uses", "")), None
            )
            install = next(
                (st["run"].strip() for st in steps if "run" in st and "install" in st.get("name", "").lower()), None
            )
            commands = [c for st in bench for c in _commands(st["run"], module) if "--config " in c]
            main = next((st for st in bench if any("--config " in c for c in _commands(st["run"], module))), bench[0])
            runs.append(
                CiRun(
                    workflow=str(doc.get("name", file.stem)),
                    file=file.name,
                    job=str(job_id),
                    runs_on=str(job.get("runs-on")),
                    timeout_minutes=job.get("timeout-minutes"),
                    step_timeout_minutes=main.get("timeout-minutes"),
                    python=None if python is None else str(python),
                    install=install,
                    commands=commands,
                    configs=list(
                        dict.fromkeys(c.split("--config ", 1)[1].split()[0] for c in commands if "--config " in c)
                    ),
                    then=[str(j) for j in list(jobs)[i + 1 :]],
                )
            )
    return runs, branch


def _pins(root: Path) -> tuple[list[str], int]:
    """The library's dependencies (``[project] dependencies``) as ``constraints.txt`` pins them, and the
    number of pins in that file."""
    normal = lambda name: re.sub(r"[-_.]+", "-", name).lower()  # noqa: E731  (PEP 503 names)
    pins = {}
    for line in (root / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if "==" in line and not line.lstrip().startswith("#"):
            name, version = line.split("#")[0].strip().split("==", 1)
            pins[normal(name)] = f"{name}=={version}"
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = [re.split(r"[\s<>=!~;\[]", d, maxsplit=1)[0] for d in project.get("dependencies", [])]
    return [pins[normal(n)] for n in names if normal(n) in pins], len(pins)


def ci_facts(root: Path) -> CiFacts | None:
    """What CI runs on a pull request that adds a model config and after its merge, from the repository's
    ``.github/workflows/*.yml``, the benchmark config they name and ``constraints.txt``; None without
    workflows."""
    workflows = root / ".github" / "workflows"
    if not workflows.is_dir():
        return None
    changed = f"{MODELS_DIR}/model.toml"
    pull_request, _ = _ci_runs(workflows, event="pull_request", changed=changed, module="benchmarks.")
    merge, branch = _ci_runs(workflows, event="push", changed=changed, module="benchmarks.")
    configs = root / "benchmarks" / "configs"
    rerun = {c for r in merge for c in r.configs}
    config = next((c for r in pull_request for c in r.configs), None)
    settings = {}
    if config is not None and (configs / f"{config}.toml").exists():
        settings = tomllib.loads((configs / f"{config}.toml").read_text(encoding="utf-8"))
    packages, n_pins = _pins(root) if (root / "constraints.txt").exists() else ([], 0)
    return CiFacts(
        pull_request=pull_request,
        merge=merge,
        branch=branch,
        time_budget_seconds=settings.get("time_budget_seconds"),
        n_jobs=settings.get("n_jobs"),
        packages=packages,
        n_pins=n_pins,
        not_rerun=sorted(p.stem for p in configs.glob("*.toml") if p.stem not in rerun),
    )


def submit_page(*, root: Path) -> Page:
    """How to submit a model: the steps, the config fields, an example, what CI runs and CONTRIBUTING.md."""
    from ..site import repository_url  # the site module imports the builders: read at call time

    contributing = root / "CONTRIBUTING.md"
    examples = sorted((root / MODELS_DIR).glob("*.toml"))
    example = examples[0] if examples else None
    ci = ci_facts(root)
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
            "ci": ci,
            "repository": repository_url(root),
            "branch": (ci.branch if ci else None) or "main",
            "models_dir": MODELS_DIR,
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
