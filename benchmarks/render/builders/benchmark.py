"""A benchmark's pages: its index, a page per dataset, a page per unit of analysis and every leaderboard.

These are the frame of the site's Benchmarks section; the other pages of a dataset and of a benchmark are
page types of those scopes (:func:`~.registry.build_scope`), listed in the navigation after the units
and the datasets, and linked from the dataset page under their ``link_text`` (its "Other tables" list).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from benchmarks.results_model import Leaderboard

from .. import charts
from ..fmt import safe_label
from ..load import Run
from ..pages import CLASS_ORDER, NavNode, Page, SiteModel, null_notes
from .registry import Built, build_scope, page_part, page_type

page_part("dataset", path="benchmarks/{name}/{dataset}/index.md", module=__name__)
page_part("unit", path="benchmarks/{name}/{dataset}/{protocol}/{unit}/index.md", module=__name__)
page_part(
    "leaderboard", path="benchmarks/{name}/{dataset}/{protocol}/{unit}/{demand_class}-{metric}.md", module=__name__
)


class UnitKey(NamedTuple):
    """The leaderboards of one unit of analysis: every (demand class, metric) of it."""

    dataset: str
    protocol: str
    unit: str


def _unit_key(lb: Leaderboard) -> UnitKey:
    return UnitKey(lb.dataset, lb.protocol, lb.unit)


def _cd(site: SiteModel, run: Run, lb: Leaderboard) -> str | None:
    ranked = sorted((r for r in lb.rows if r.mean_rank is not None), key=lambda r: (r.mean_rank, r.model))
    if not ranked:
        return None
    methods = [
        (r.display_name + ("\u2020" if not r.full_support else ""), r.mean_rank, site.styles[r.model]) for r in ranked
    ]
    return charts.to_json(
        charts.cd_figure(methods=methods, cd=lb.tests.nemenyi_cd, conservative_cd=lb.tests.conservative_cd)
    )


def _cd_groups(lb: Leaderboard) -> list[tuple[str, list[str]]]:
    ranked = sorted((r for r in lb.rows if r.mean_rank is not None), key=lambda r: (r.mean_rank, r.model))
    methods = [(r.display_name, r.mean_rank, charts.style_for(0)) for r in ranked]
    return charts.cd_groups(methods=methods, cd=lb.tests.nemenyi_cd)


def leaderboard_pages(site: SiteModel, run: Run) -> tuple[list[Page], dict[UnitKey, list[Page]]]:
    """Every leaderboard of the run's latest version, plus a lookup by (dataset, protocol, unit)."""
    lbs = site.leaderboards(run)
    paths = {lb.key: site.leaderboard_page(run.name, lb.key) for lb in lbs}
    pages: list[Page] = []
    by_unit: dict[UnitKey, list[Page]] = {}
    datasets = {d.name: d for d in run.data.datasets}
    for lb in lbs:
        key = lb.key
        path = paths[key]
        siblings = [k for k in paths if (k.dataset, k.protocol, k.unit) == _unit_key(lb)]
        switch_class = [(k.demand_class, paths[k]) for k in siblings if k.metric == key.metric]
        switch_metric = [(k.metric, paths[k]) for k in siblings if k.demand_class == key.demand_class]
        switch_unit = []
        for u in dict.fromkeys(k.unit for k in paths if (k.dataset, k.protocol) == (key.dataset, key.protocol)):
            same = key._replace(unit=u)
            switch_unit.append((u, paths.get(same, site.unit_page(run.name, key.dataset, key.protocol, u))))
        title = safe_label(f"{key.demand_class}, {key.metric}")
        present = {r.model for r in lb.rows}
        page = Page(
            path=path,
            template="leaderboard.md.j2",
            title=title,
            context={
                "run": run,
                "lb": lb,
                "dataset": datasets.get(key.dataset),
                "cd_figure": _cd(site, run, lb),
                "cd_groups": _cd_groups(lb),
                "not_scored": site.not_scored(run, dataset=key.dataset, protocol=key.protocol, present=present),
                "warnings": site.warnings_for(run, key.dataset),
                "provenance": site.provenance(run),
                "protocol": next((p for p in run.data.protocols if p.id == key.protocol), None),
                "switch_class": switch_class,
                "switch_metric": switch_metric,
                "switch_unit": switch_unit,
                "verdicts": site.verdict_counts(lb),
                "dm": site.dm_counts(lb),
                "notes": null_notes(lb.rows),
                "dataset_page": site.dataset_page(run.name, key.dataset),
                "stability_page": (
                    site.sensitivity_page(run.name, key.dataset)
                    if any(t.dataset == key.dataset for t in run.data.sensitivity)
                    else None
                ),
            },
        )
        pages.append(page)
        by_unit.setdefault(_unit_key(lb), []).append(page)
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
        unit_lbs = [p.context["lb"] for p in unit_pages]
        metrics = list(dict.fromkeys(lb.metric for lb in unit_lbs))
        classes = [c for c in CLASS_ORDER if any(lb.demand_class == c for lb in unit_lbs)]
        cells = {(lb.demand_class, lb.metric): p.path for lb, p in zip(unit_lbs, unit_pages, strict=True)}
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
