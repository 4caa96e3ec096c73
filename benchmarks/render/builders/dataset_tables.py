"""A dataset's tables beyond its leaderboards, one page type each: interval quality, the selection-rule
replay, how stable the order is under other protocols, and the competition holdout as published."""

from __future__ import annotations

from typing import NamedTuple

from benchmarks.results_model import CompetitionTable, IntervalRow, IntervalTable, ReplayTable, SensitivityTable

from .. import charts
from ..load import Run
from ..pages import CLASS_ORDER, Page, SiteModel
from .registry import Built, in_nav, page_type

_INTERVAL_COLUMNS = (
    ("coverage80", "coverage 80%"),
    ("coverage95", "coverage 95%"),
    ("msis80", "MSIS 80%"),
    ("msis95", "MSIS 95%"),
)


class NamedIntervalRow(NamedTuple):
    """An interval row with the model's display name beside it."""

    row: IntervalRow
    display_name: str


def interval_page(site: SiteModel, run: Run, dataset: str, tables: list[IntervalTable], path: str) -> Page:
    order = {c: i for i, c in enumerate(CLASS_ORDER)}
    tables = sorted(tables, key=lambda t: (t.protocol, t.unit, order.get(t.demand_class, 99)))
    models = site.models(run)
    name = {mid: m.display_name for mid, m in models.items()}
    sections = []
    for t in tables:
        rows = [NamedIntervalRow(r, name.get(r.model, r.model)) for r in t.rows]
        # best interval first (its rank, then MSIS 80%), unranked rows last by name
        rows.sort(
            key=lambda n: (
                n.row.rank_interval is None,
                n.row.rank_interval or 0,
                n.row.msis80 is None,
                n.row.msis80 or 0.0,
                n.display_name.lower(),
            )
        )
        empty = [label for key, label in _INTERVAL_COLUMNS if rows and all(getattr(r.row, key) is None for r in rows)]
        sections.append(
            {
                "table": t,
                "rows": rows,
                "empty": empty,
                "not_scored": site.not_scored(
                    run, dataset=dataset, protocol=t.protocol, present={r.model for r in t.rows}
                ),
            }
        )
    common = sections[0]["not_scored"] if sections else []
    for section in sections:  # the skipped-models table is shown once, and again only where it differs
        section["not_scored_differs"] = section["not_scored"] != common
    pivots = []  # coverage side by side across demand classes, one pivot per (protocol, unit)
    for protocol, unit in dict.fromkeys((t.protocol, t.unit) for t in tables):
        group = [t for t in tables if (t.protocol, t.unit) == (protocol, unit)]
        classes = [t.demand_class for t in group]
        model_ids = list(dict.fromkeys(r.model for t in group for r in t.rows))
        cells = {(t.demand_class, r.model): r for t in group for r in t.rows}
        no95 = bool(cells) and all(r.coverage95 is None and r.msis95 is None for r in cells.values())
        by_name = sorted(((mid, name.get(mid, mid)) for mid in model_ids), key=lambda m: m[1].lower())
        pivots.append(
            {"protocol": protocol, "unit": unit, "classes": classes, "cells": cells, "no95": no95, "models": by_name}
        )
    calibration = next((p.n_calibration_origins for p in run.data.protocols if p.id == "rolling_origin"), None)
    return Page(
        path=path,
        template="intervals.md.j2",
        title="Intervals",
        context={
            "run": run,
            "dataset": dataset,
            "sections": sections,
            "pivots": pivots,
            "calibration": calibration,
            "common_not_scored": common,
            "warnings": site.warnings_for(run, dataset),
            "provenance": site.provenance(run),
            "dataset_page": site.dataset_page(run.name, dataset),
        },
    )


def replay_page(site: SiteModel, run: Run, dataset: str, tables: list[ReplayTable], path: str) -> Page:
    """The selection-rule replay of one dataset: a floor/served/oracle chart and table per unit."""
    sections = []
    for t in sorted(tables, key=lambda t: (t.protocol, t.unit)):
        rows = [r for r in t.rows if r.variant == "all_folds"]
        order = {c: i for i, c in enumerate(CLASS_ORDER)}
        rows.sort(key=lambda r: order.get(r.demand_class, 99))
        figure = charts.to_json(
            charts.replay_figure(
                classes=[r.demand_class for r in rows],
                floor=[r.floor for r in rows],
                served=[r.served for r in rows],
                oracle=[r.oracle for r in rows],
                metric=t.rule.metric,
            )
        )
        top = [c for c in t.chosen_share if c.variant == "all_folds"][:5]
        sections.append({"table": t, "figure": figure, "top_choices": top})
    rule = tables[0].rule
    return Page(
        path=path,
        template="replay.md.j2",
        title="Selection rule",
        context={
            "run": run,
            "dataset": dataset,
            "sections": sections,
            "rule": rule,
            "names": site.display_names(run),
            "warnings": site.warnings_for(run, dataset),
            "provenance": site.provenance(run),
            "dataset_page": site.dataset_page(run.name, dataset),
        },
    )


def sensitivity_page(site: SiteModel, run: Run, table: SensitivityTable, path: str) -> Page:
    """How stable is this order: the ranking-variance report of one dataset, with a bump chart."""
    names = {mid: m.display_name for mid, m in site.models(run).items()}
    runs = [r.name for r in table.runs]
    figure = charts.to_json(
        charts.bump_figure(
            runs=runs,
            models=[
                (names.get(r.model, r.model), [r.ranks[n] for n in runs], site.styles[r.model]) for r in table.ranks
            ],
        )
    )
    return Page(
        path=path,
        template="sensitivity.md.j2",
        title="How stable is this order",
        context={
            "run": run,
            "dataset": table.dataset,
            "table": table,
            "figure": figure,
            "names": names,
            "learners": sorted(m for m, learns in table.fitted_state.items() if learns),
            "warnings": site.warnings_for(run, table.dataset),
            "provenance": site.provenance(run),
            "dataset_page": site.dataset_page(run.name, table.dataset),
        },
    )


def competition_page(site: SiteModel, run: Run, dataset: str, tables: list[CompetitionTable], path: str) -> Page:
    sections = []
    for t in sorted(tables, key=lambda t: (t.competition, t.metric, t.protocol)):
        sections.append(
            {
                "table": t,
                "not_scored": site.not_scored(
                    run, dataset=dataset, protocol=t.protocol, present={r.model for r in t.rows if r.status == "ran"}
                ),
            }
        )
    return Page(
        path=path,
        template="competition.md.j2",
        title="Competition",
        context={
            "run": run,
            "dataset": dataset,
            "sections": sections,
            "warnings": site.warnings_for(run, dataset),
            "provenance": site.provenance(run),
            "dataset_page": site.dataset_page(run.name, dataset),
        },
    )


@page_type(
    "intervals",
    path="benchmarks/{name}/{dataset}/intervals.md",
    scope="dataset",
    order=10,
    link="intervals_page",
    link_text="Interval quality: coverage and MSIS by demand class",
    link_order=30,
)
def _intervals(site: SiteModel, run: Run, dataset: str) -> Built:
    tables = [t for t in run.data.intervals if t.dataset == dataset]
    return in_nav(interval_page(site, run, dataset, tables, site.intervals_page(run.name, dataset)) if tables else None)


@page_type(
    "replay",
    path="benchmarks/{name}/{dataset}/selection-rule.md",
    scope="dataset",
    order=20,
    link="replay_page",
    link_text="What a selection rule is worth: floor, served and oracle per demand class",
    link_order=50,
)
def _replay(site: SiteModel, run: Run, dataset: str) -> Built:
    tables = [t for t in run.data.replay if t.dataset == dataset]
    return in_nav(replay_page(site, run, dataset, tables, site.replay_page(run.name, dataset)) if tables else None)


@page_type(
    "sensitivity",
    path="benchmarks/{name}/{dataset}/sensitivity.md",
    scope="dataset",
    order=30,
    link="sensitivity_page",
    link_text="How stable is this order: the ranking under other legitimate protocols",
    link_order=60,
)
def _sensitivity(site: SiteModel, run: Run, dataset: str) -> Built:
    audit = next((t for t in run.data.sensitivity if t.dataset == dataset), None)
    return in_nav(sensitivity_page(site, run, audit, site.sensitivity_page(run.name, dataset)) if audit else None)


@page_type(
    "competition",
    path="benchmarks/{name}/{dataset}/competition.md",
    scope="dataset",
    order=40,
    link="competition_page",
    link_text="Competition holdout as published",
    link_order=40,
)
def _competition(site: SiteModel, run: Run, dataset: str) -> Built:
    tables = [t for t in run.data.competition if t.dataset == dataset]
    path = site.competition_page(run.name, dataset)
    return in_nav(competition_page(site, run, dataset, tables, path) if tables else None)
