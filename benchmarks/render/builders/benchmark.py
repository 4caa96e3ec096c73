"""A benchmark's pages: its index, a page per dataset, a page per unit of analysis and every leaderboard.

These are the frame of the site's Benchmarks section; the other pages of a dataset and of a benchmark are
page types of those scopes (:func:`~.registry.build_scope`), listed in the navigation after the units
and the datasets, and linked from the dataset page under their ``link_text`` (its "Other tables" list).
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any, NamedTuple

from markupsafe import Markup

from benchmarks.results_model import Leaderboard

from .. import charts
from ..fmt import plain, reader_text, safe_label
from ..load import Run
from ..pages import CLASS_ORDER, NavNode, Page, SiteModel, named, null_notes
from ..panels import panel_id
from .analyses import ranked_on, uncertainty_anchor, uncertainty_unit_path
from .dataset_tables import intervals_anchor
from .registry import Built, build_scope, page_part, page_type

page_part("dataset", path="benchmarks/{name}/{dataset}/index.md", module=__name__)
page_part("unit", path="benchmarks/{name}/{dataset}/{protocol}/{unit}/index.md", module=__name__)
page_part(
    "leaderboard", path="benchmarks/{name}/{dataset}/{protocol}/{unit}/leaderboard-{demand_class}.md", module=__name__
)


class UnitKey(NamedTuple):
    """The leaderboards of one unit of analysis: every (demand class, metric) of it."""

    dataset: str
    protocol: str
    unit: str


def _cd(site: SiteModel, run: Run, lb: Leaderboard) -> str | None:
    """The CD diagram as the compact spec the page ships (:func:`~..charts.cd_spec`; tycheon.js draws it)."""
    ranked = sorted((r for r in lb.rows if r.mean_rank is not None), key=lambda r: (r.mean_rank, r.model))
    if not ranked:
        return None
    methods = [
        (r.display_name + ("\u2020" if not r.full_support else ""), r.mean_rank, site.styles[r.model]) for r in ranked
    ]
    return charts.cd_spec_json(
        charts.cd_spec(methods=methods, cd=lb.tests.nemenyi_cd, conservative_cd=lb.tests.conservative_cd)
    )


def _cd_groups(lb: Leaderboard) -> list[tuple[str, list[str]]]:
    ranked = sorted((r for r in lb.rows if r.mean_rank is not None), key=lambda r: (r.mean_rank, r.model))
    methods = [(r.display_name, r.mean_rank, charts.style_for(0)) for r in ranked]
    return charts.cd_groups(methods=methods, cd=lb.tests.nemenyi_cd)


def _cell_views(site: SiteModel, run: Run) -> dict[str, dict[tuple[str, ...], tuple[str, str]]]:
    """The other views of a leaderboard's cell, each by the key it shares with the leaderboard: the
    interval table of its (dataset, protocol, unit, class), the uncertainty table of its exact key and the
    stability audit of its (dataset, protocol, unit); each a (page path, anchor of the table)."""
    name = run.name
    return {
        "intervals": {
            (t.dataset, t.protocol, t.unit, t.demand_class): (
                site.intervals_page(name, t.dataset),
                intervals_anchor(t.protocol, t.unit, t.demand_class),
            )
            for t in run.data.intervals
        },
        "uncertainty": {
            (t.dataset, t.protocol, t.unit, t.demand_class, t.metric): (
                uncertainty_unit_path(name, t.dataset, t.unit),
                uncertainty_anchor(t.protocol, t.demand_class, t.metric),
            )
            for t in run.data.analyses.uncertainty
        },
        "stability": {
            (t.dataset, t.protocol, t.unit): (site.sensitivity_page(name, t.dataset), "ranks")
            for t in run.data.sensitivity
        },
    }


# the results file's sentences a leaderboard quotes, each read as a reader should meet it
_SAID = ("cell_reason", "runner_up_reason", "time_reason", "ranking_text", "inference", "inference_pooled")


def _said(lb: Leaderboard, names: dict[str, str]) -> dict[str, str]:
    """The sentences of ``lb.tests`` the page quotes, without machine or internal-document notes
    (:func:`~..fmt.reader_text`) and with display names for model ids (:func:`~..pages.named`)."""
    return {key: named(reader_text(getattr(lb.tests, key, None)), names) for key in _SAID}


def _notes(lb: Leaderboard) -> dict:
    """The footnotes of a leaderboard's empty cells (:func:`~..pages.null_notes`), plus one per reason a
    model's "% better than RW" has no interval, under ``marks[(model, 'skill')]``: each reason is written
    once below the table instead of on every row."""
    notes = null_notes(lb.rows)
    numbers: dict[str, int] = {}
    for r in lb.rows:
        if r.skill_rw_low is not None or not r.skill_rw_reason or r.is_random_walk:
            continue
        if r.skill_rw_reason not in numbers:
            numbers[r.skill_rw_reason] = len(notes["notes"]) + 1
            notes["notes"].append(
                {
                    "number": numbers[r.skill_rw_reason],
                    "label": "95% interval of the share better than the random walk",
                    "reason": reader_text(r.skill_rw_reason),
                    "models": [],
                }
            )
        notes["notes"][numbers[r.skill_rw_reason] - 1]["models"].append(r.display_name)
        notes["marks"][(r.model, "skill")] = numbers[r.skill_rw_reason]
    return notes


def _warning_line(site: SiteModel, run: Run, dataset: str) -> dict[str, object]:
    """What a leaderboard says of its dataset's warnings, which the dataset page lists in full: the kinds of
    its data warnings (``synthetic``, ``subsample``; notes of kind ``other`` are counted in neither) and how
    many analyses were not computed (the benchmark page lists each)."""
    warnings = site.warnings_for(run, dataset)
    skipped = [w for w in warnings if w.message.startswith("analysis not computed: ")]
    kinds = [w.kind.replace("_", " ") for w in warnings if w not in skipped and w.kind != "other"]
    return {"warning_kinds": list(dict.fromkeys(kinds)), "n_not_computed": len(skipped)}


def _default_metric(lbs: list[Leaderboard], ranked: list[str]) -> str:
    """The metric whose panel a cell's page shows first: its demand class's point headline
    (:func:`tycheon.analysis.headline.headline_metrics`, the one the home page answers on), else the first."""
    from tycheon.analysis.headline import headline_metrics

    point = headline_metrics(lbs[0].demand_class, ranked)[0]
    return point if any(lb.metric == point for lb in lbs) else lbs[0].metric


def _panel(site: SiteModel, run: Run, lb: Leaderboard, *, shared: dict[str, Any]) -> dict[str, Any]:
    """What one metric's panel of a cell's page shows (``_leaderboard_panel.html.j2``)."""
    key = lb.key
    names = shared["names"]
    views = shared["views"]
    present = {r.model for r in lb.rows}
    return {
        "run": run,
        "lb": lb,
        "dataset": shared["datasets"].get(key.dataset),
        "cd_figure": _cd(site, run, lb),
        "cd_groups": _cd_groups(lb),
        "not_scored": site.not_scored(run, dataset=key.dataset, protocol=key.protocol, present=present),
        "names": names,
        "said": _said(lb, names),
        **_warning_line(site, run, key.dataset),
        "protocol": next((p for p in run.data.protocols if p.id == key.protocol), None),
        "verdicts": site.verdict_counts(lb),
        "dm": site.dm_counts(lb),
        "notes": _notes(lb),
        "dataset_page": site.dataset_page(run.name, key.dataset),
        "bench_page": site.bench_page(run.name),
        "ranked_on": ranked_on(lb),
        "csv_all": site.leaderboards_download(run.name, run.version),
        "cell_views": {
            "intervals": views["intervals"].get(key[:4]),
            "uncertainty": views["uncertainty"].get(tuple(key)),
            "stability": views["stability"].get(key[:3]),
        },
        "stability_page": (
            site.sensitivity_page(run.name, key.dataset)
            if any(t.dataset == key.dataset for t in run.data.sensitivity)
            else None
        ),
    }


def leaderboard_pages(site: SiteModel, run: Run) -> tuple[list[Page], dict[UnitKey, list[Page]]]:
    """A page per cell (dataset, protocol, unit, demand class) of the run's latest version, each holding
    every metric's leaderboard as a panel (:mod:`~..panels`), plus a lookup by (dataset, protocol, unit)."""
    lbs = site.leaderboards(run)
    ranked = list(dict.fromkeys(lb.metric for lb in lbs))
    cells: dict[tuple[str, ...], list[Leaderboard]] = {}
    for lb in lbs:
        cells.setdefault(tuple(lb.key[:4]), []).append(lb)
    paths = {cell: site.cell_page(run.name, members[0].key) for cell, members in cells.items()}
    pages: list[Page] = []
    by_unit: dict[UnitKey, list[Page]] = {}
    shared = {
        "datasets": {d.name: d for d in run.data.datasets},
        "views": _cell_views(site, run),
        "names": site.display_names(run),  # model id -> display name: no page shows a raw id
    }
    for cell, members in cells.items():
        dataset, protocol, unit, demand_class = cell
        siblings = [c for c in paths if c[:3] == cell[:3]]
        switch_unit = []
        for u in dict.fromkeys(c[2] for c in paths if c[:2] == cell[:2]):
            same = (dataset, protocol, u, demand_class)
            switch_unit.append((u, paths.get(same, site.unit_page(run.name, dataset, protocol, u))))
        default = _default_metric(members, ranked)
        panels = {lb.metric: _panel(site, run, lb, shared=shared) for lb in members}
        page = Page(
            path=paths[cell],
            template="leaderboard.md.j2",
            title=safe_label(f"{demand_class}, {unit}"),
            context={
                "run": run,
                "cell": {"dataset": dataset, "protocol": protocol, "unit": unit, "demand_class": demand_class},
                "switch_class": [(c[3], paths[c]) for c in siblings],
                "switch_unit": switch_unit,
                "switch_metric": [(lb.metric, panel_id(lb.metric)) for lb in members],
                "default": default,
                "panels": panels,
            },
        )
        pages.append(page)
        by_unit.setdefault(UnitKey(dataset, protocol, unit), []).append(page)
    return pages, by_unit


def _unit_pages(
    site: SiteModel, run: Run, dataset: str, by_unit: dict[UnitKey, list[Page]]
) -> tuple[list[Page], list[NavNode], list[dict]]:
    """The dataset's unit pages (each a matrix of its leaderboards), their navigation entries with the
    leaderboards as children, and the matrices (the dataset page shows them too)."""
    pages, nav, matrices = [], [], []
    for (ds, protocol, unit), unit_pages in by_unit.items():
        if ds != dataset:
            continue
        unit_lbs = [panel["lb"] for p in unit_pages for panel in p.context["panels"].values()]
        metrics = list(dict.fromkeys(lb.metric for lb in unit_lbs))
        classes = [c for c in CLASS_ORDER if any(lb.demand_class == c for lb in unit_lbs)]
        cells = {(lb.demand_class, lb.metric): site.leaderboard_page(run.name, lb.key) for lb in unit_lbs}
        winners = {(lb.demand_class, lb.metric): [r for r in lb.rows if r.rank == 1] for lb in unit_lbs}
        matrix = {
            "protocol": protocol,
            "unit": unit,
            "metrics": metrics,
            "classes": classes,
            "cells": cells,
            "winners": winners,
            "unit_page": site.unit_page(run.name, dataset, protocol, unit),
        }
        matrices.append(matrix)
        unit_title = (
            unit if sum(1 for k in by_unit if (k.dataset, k.unit) == (ds, unit)) == 1 else f"{unit} ({protocol})"
        )
        pages.append(
            Page(
                path=matrix["unit_page"],
                template="unit.md.j2",
                title=safe_label(unit_title),
                context={"run": run, "dataset": dataset, "matrix": matrix},
            )
        )
        nav.append(
            NavNode(
                title=safe_label(unit_title),
                page=matrix["unit_page"],
                children=[NavNode(title=p.title, page=p.path) for p in unit_pages],
            )
        )
    return pages, nav, matrices


def _class_counts(run: Run, lbs: list[Leaderboard], dataset: str) -> dict[str, int] | None:
    """The blocks of each demand class of the dataset, as its class-winners analysis counted them."""
    class_counts = next(
        (cw.class_counts for cw in run.data.analyses.class_winners if cw.dataset == dataset and cw.unit == "series"),
        None,
    )
    if not class_counts:  # older results: the blocks each class's headline table scored
        head = next((lb for lb in lbs if lb.dataset == dataset), None)
        table = (head.dataset, head.protocol, head.unit, head.metric) if head is not None else None
        class_counts = {
            lb.demand_class: lb.n_blocks_total
            for lb in lbs
            if lb.demand_class != "all" and (lb.dataset, lb.protocol, lb.unit, lb.metric) == table
        } or None
    return class_counts


class Scored(NamedTuple):
    """One protocol that scored a dataset: at which horizon, on how many series."""

    protocol: str
    kind: str
    horizon: int
    n_series: int | None


class DatasetAbout(NamedTuple):
    """What a dataset is, as its page states it: the results file's own description where it has one, the
    dataset catalogue's (the manifest ``benchmarks/datasets.toml`` and the loaders' declarations) otherwise.
    Counts come only from the results file; a field neither records is None."""

    description: str | None
    source: str | None
    licence: str | None
    frequency: str | None
    season_length: int | None
    n_series: int | None
    n_series_total: int | None
    series: str | None  # what one series is
    scored: list[Scored]


def _series_definition(dataset: str, horizon: int | None) -> str | None:
    """What one series of a catalogue dataset is, from its loader's declaration (None off the catalogue)."""
    from tycheon.data import competitions, fpp3
    from tycheon.data.datasets import UnknownDatasetError, spec

    try:
        entry = spec(dataset)
    except UnknownDatasetError:
        return None
    if entry.loader is fpp3.load_fpp3:
        declared = fpp3.FPP3_DATASETS[entry.fixed["name"]]
        value = next(iter(declared["values"].values()))
        return (
            f"one {' x '.join(declared['levels'])} combination, the bottom of the hierarchy (the other units "
            f"sum it up); its value: {value} per period"
        )
    if entry.loader is competitions.load_competition:
        title = competitions.COMPETITIONS[entry.fixed["competition"]]["title"]
        test = f"its test part, the last {horizon} periods" if horizon else "its published test part"
        subset = entry.fixed["subset"]
        return f"one {subset} series of the {title} competition as published: its training part, then {test}"
    if entry.synthetic:
        return "one buying entity of the generated marketplace: its demand per period"
    return None


def dataset_about(run: Run, dataset: str) -> DatasetAbout:
    """The dataset page's description of ``dataset`` (see :class:`DatasetAbout`)."""
    from benchmarks.run_inputs import MANIFEST
    from tycheon.data.manifest import ManifestError, read_manifest

    from .dataset_tables import competition_horizons

    info = next((d for d in run.data.datasets if d.name == dataset), None)
    try:
        manifest = read_manifest(MANIFEST)
    except ManifestError:
        manifest = None
    entry = manifest.entries.get(dataset) if manifest is not None else None
    horizon = competition_horizons(run).get(dataset)
    scored: list[Scored] = []
    for p in run.data.protocols:
        if p.kind == "competition":
            tables = [t for t in run.data.competition if t.dataset == dataset and t.protocol == p.id]
            if tables:
                n = max((r.n_series for t in tables for r in t.rows if r.status == "ran"), default=None)
                scored.append(Scored(p.id, p.kind, tables[0].horizon, n))
        elif dataset in p.origins or any(lb.dataset == dataset and lb.protocol == p.id for lb in run.data.leaderboards):
            scored.append(Scored(p.id, p.kind, p.horizon, info.n_series if info else None))
    competition_series = next((s.n_series for s in scored if s.kind == "competition" and s.n_series), None)
    return DatasetAbout(
        description=info.description if info else (entry.description or None) if entry else None,
        source=entry.source if entry else None,
        licence=entry.licence if entry else None,
        frequency=info.freq if info else entry.frequency if entry else None,
        season_length=info.season_length if info else entry.season_length if entry else None,
        n_series=info.n_series if info else competition_series,
        n_series_total=info.n_series_total if info else None,
        series=_series_definition(dataset, horizon),
        scored=scored,
    )


def config_value(value: Any, names: dict[str, str]) -> Markup:
    """One setting of a run's recorded configuration as a reader reads it, escaped: model ids as display
    names, numbers without an exponent, text without machine or repository notes (:func:`~..fmt.reader_text`),
    a list as a comma-separated line (of settings, one item each), a mapping as one "key: value" item each.

    >>> str(config_value({"skip_models": {"ses": "too slow on 2 cores"}, "alpha": 1e-05}, {"ses": "SES"}))
    '<ul><li><code>skip_models</code>: <ul><li>SES: too slow</li></ul></li><li><code>alpha</code>: 0.00001</li></ul>'
    """
    if value is None:
        return Markup("none")
    if isinstance(value, bool):
        return Markup("yes" if value else "no")
    if isinstance(value, int | float):
        return Markup(html.escape(plain(value) if isinstance(value, float) else str(value)))
    if isinstance(value, str):
        return Markup(html.escape(names.get(value) or named(reader_text(value), names)))
    if isinstance(value, dict):
        if not value:
            return Markup("none")
        items = []
        for key, item in value.items():
            label = html.escape(names[key]) if key in names else f"<code>{html.escape(str(key))}</code>"
            items.append(f"<li>{label}: {config_value(item, names)}</li>")
        return Markup(f"<ul>{''.join(items)}</ul>")
    if isinstance(value, list):
        if not value:
            return Markup("none")
        if any(isinstance(item, dict | list) for item in value):
            return Markup("<ol>" + "".join(f"<li>{config_value(item, names)}</li>" for item in value) + "</ol>")
        return Markup(", ".join(str(config_value(item, names)) for item in value))
    return Markup(html.escape(str(value)))


def config_rows(run: Run) -> list[tuple[str, Markup]]:
    """The run's recorded configuration, one (setting, value as :func:`config_value` writes it) per
    top-level key: what the benchmark page shows instead of the raw JSON (the results file keeps that)."""
    config = run.data.config if isinstance(run.data.config, dict) else {}
    names = SiteModel.display_names(run)
    return [(str(key), config_value(value, names)) for key, value in config.items()]


def benchmark_pages(site: SiteModel, name: str) -> tuple[list[Page], NavNode]:
    """The pages of benchmark ``name`` (its latest version) and its navigation entry: a node per dataset
    (its units, then the dataset page types), then the benchmark page types."""
    run = site.latest(name)
    lb_pages, by_unit = leaderboard_pages(site, run)
    lbs = site.leaderboards(run)
    pages: list[Page] = []
    nav = NavNode(title=safe_label(name), page=site.bench_page(name))
    # a dataset scored only by a competition protocol (full: every M1/M3/Tourism category) has a page too
    dataset_names = list(
        dict.fromkeys(
            [d.name for d in run.data.datasets] + [lb.dataset for lb in lbs] + [t.dataset for t in run.data.competition]
        )
    )
    dataset_entries = []
    for dataset in dataset_names:
        info = next((d for d in run.data.datasets if d.name == dataset), None)
        ds_nav = NavNode(title=safe_label(dataset), page=site.dataset_page(name, dataset))
        unit_pages, unit_nav, matrices = _unit_pages(site, run, dataset, by_unit)
        pages.extend(unit_pages)
        ds_nav.children.extend(unit_nav)
        typed = build_scope("dataset", site, run, dataset)
        pages.extend(typed.pages)
        ds_nav.children.extend(typed.nav)
        pages.append(
            Page(
                path=site.dataset_page(name, dataset),
                template="dataset.md.j2",
                title=safe_label(dataset),
                context={
                    "run": run,
                    "name": dataset,
                    "info": info,
                    "about": dataset_about(run, dataset),
                    "matrices": matrices,
                    "class_counts": _class_counts(run, lbs, dataset),
                    **typed.links,
                    "other_tables": typed.listed,  # (text, page) of each dataset page type with a link text
                    "warnings": site.warnings_for(run, dataset),
                    "not_ran": site.not_ran(run, dataset=dataset),
                    "provenance": site.provenance(run),
                },
            )
        )
        dataset_entries.append((dataset, info, site.dataset_page(name, dataset)))
        nav.children.append(ds_nav)
    pages.extend(lb_pages)
    typed = build_scope("benchmark", site, run)
    pages.extend(typed.pages)
    nav.children.extend(typed.nav)
    from .home import answer_rows, headline_tables  # the home page's answer; its tables are listed here

    answer, _ = answer_rows(site, run)
    tables, pooled_metric = headline_tables(site, run)
    pages.append(
        Page(
            path=site.bench_page(name),
            template="benchmark.md.j2",
            title=safe_label(name),
            context={
                "run": run,
                "answer": answer,
                "tables": tables,
                "pooled_metric": pooled_metric,
                "datasets": dataset_entries,
                "provenance": site.provenance(run),
                "warnings": site.run_warnings(run),
                "not_ran": site.not_ran(run),
                "history_page": site.history_page(name),
                "versions": [r.version for r in site.by_name[name]],
                "config": config_rows(run),
            },
        )
    )
    return pages, nav


@page_type("benchmark", path="benchmarks/{name}/index.md", scope="site", order=10)
def _benchmarks(site: SiteModel, *, root: Path) -> Built:
    """Every benchmark's pages, under one Benchmarks entry of the navigation (none without results)."""
    pages: list[Page] = []
    nodes: list[NavNode] = []
    for name in site.names:
        built, node = benchmark_pages(site, name)
        pages.extend(built)
        nodes.append(node)
    return pages, [NavNode(title="Benchmarks", children=nodes)] if nodes else []
