"""A dataset's tables beyond its leaderboards, one page type each: interval quality, the selection-rule
replay, how stable the order is under other protocols, and the competition holdout as published."""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

from benchmarks.results_model import (
    CompetitionTable,
    IntervalRow,
    IntervalTable,
    InventoryRow,
    ReplayTable,
    SensitivityTable,
    TableKey,
)

from .. import audit_charts, charts
from ..fmt import slugify
from ..load import Run
from ..pages import CLASS_ORDER, Page, SiteModel
from .analyses import in_rank_order, leaderboard_ranks, ranked_on, reader_words
from .registry import Built, in_nav, page_type

_INTERVAL_COLUMNS = (
    ("coverage80", "coverage 80%"),
    ("coverage95", "coverage 95%"),
    ("msis80", "MSIS 80%"),
    ("msis95", "MSIS 95%"),
)


class NamedIntervalRow(NamedTuple):
    """An interval row with the model's display name and its leaderboard rank beside it."""

    row: IntervalRow
    display_name: str
    lb_rank: int | None = None


class NamedInventoryRow(NamedTuple):
    """An inventory row with the model's display name and, where it has none, why there is no stock needed."""

    row: InventoryRow
    display_name: str
    reason: str


def intervals_anchor(protocol: str, unit: str, demand_class: str) -> str:
    """The id of one (unit, demand class) table on the intervals page (its leaderboards link to it)."""
    return "iv-" + slugify(f"{protocol}-{unit}-{demand_class}")


def point_metric(run: Run) -> str | None:
    """The metric of the intervals' point ranking: the config's first metric (the harness ranks
    ``rank_point`` on it), whose leaderboards give the intervals' row order."""
    metrics = run.data.config.get("metrics")
    return str(metrics[0]) if isinstance(metrics, list) and metrics else None


def _interval_section(site: SiteModel, run: Run, t: IntervalTable, boards: dict, metric: str | None) -> dict:
    """One (unit, demand class) table: its rows in the order of the point metric's leaderboard of the same
    cell (that leaderboard's rank column; unranked last), its inventory simulation with display names."""
    name = site.display_names(run)
    reader = reader_words(name)
    key = TableKey(t.dataset, t.protocol, t.unit, t.demand_class, metric or "")
    lb, rank = boards.get(key, (None, {}))
    by_model = {r.model: r for r in t.rows}
    order = in_rank_order(list(by_model), rank, name)
    rows = [NamedIntervalRow(by_model[m], name.get(m, m), rank.get(m)) for m in order]
    inv = t.inventory
    return {
        "table": t,
        "rows": rows,
        "empty": [label for k, label in _INTERVAL_COLUMNS if rows and all(getattr(r.row, k) is None for r in rows)],
        "anchor": intervals_anchor(t.protocol, t.unit, t.demand_class),
        "lb_page": site.leaderboard_page(run.name, key) if lb is not None else None,
        "ranked_on": ranked_on(lb) if lb is not None else None,
        "not_scored": site.not_scored(run, dataset=t.dataset, protocol=t.protocol, present=set(by_model)),
        "inventory": [NamedInventoryRow(r, name.get(r.model, r.model), reader(r.stock_needed_reason)) for r in inv.rows]
        if inv
        else [],
        "winner": name.get(inv.winner, inv.winner) if inv and inv.winner else None,
        "policy": reader(inv.policy_text) if inv else "",
        "inventory_note": reader(inv.cell_reason) if inv else reader(t.inventory_reason),
    }


def interval_page(site: SiteModel, run: Run, dataset: str, tables: list[IntervalTable], path: str) -> Page:
    """The interval quality of one dataset: per unit, one table per demand class behind a class switcher (an
    exclusive group of disclosures, one open at a time), each with its inventory simulation. What every
    table shared (the skipped models, the inventory policy) is written once, and again only where it
    differs."""
    order = {c: i for i, c in enumerate(CLASS_ORDER)}
    tables = sorted(tables, key=lambda t: (t.protocol, t.unit, order.get(t.demand_class, 99)))
    boards = leaderboard_ranks(site, run)
    metric = point_metric(run)
    sections = [_interval_section(site, run, t, boards, metric) for t in tables]
    common = sections[0]["not_scored"] if sections else []
    policy = Counter(s["policy"] for s in sections if s["policy"]).most_common(1)
    common_policy = policy[0][0] if policy else ""
    for section in sections:
        section["not_scored_differs"] = section["not_scored"] != common
        section["policy_differs"] = section["policy"] != common_policy
    units = []
    for protocol, unit in dict.fromkeys((t.protocol, t.unit) for t in tables):
        group = [s for s in sections if (s["table"].protocol, s["table"].unit) == (protocol, unit)]
        rows = [r.row for s in group for r in s["rows"]]
        no95 = bool(rows) and all(r.coverage95 is None and r.msis95 is None for r in rows)
        units.append({"protocol": protocol, "unit": unit, "sections": group, "no95": no95})
    calibration = next((p.n_calibration_origins for p in run.data.protocols if p.id == "rolling_origin"), None)
    return Page(
        path=path,
        template="intervals.md.j2",
        title="Intervals",
        context={
            "run": run,
            "dataset": dataset,
            "units": units,
            "calibration": calibration,
            "point_metric": metric,
            "common_not_scored": common,
            "common_policy": common_policy,
            "warnings": site.warnings_for(run, dataset),
            "bench_page": site.bench_page(run.name),
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
            audit_charts.replay_figure(
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
            "bench_page": site.bench_page(run.name),
            "provenance": site.provenance(run),
            "dataset_page": site.dataset_page(run.name, dataset),
        },
    )


def sensitivity_page(site: SiteModel, run: Run, table: SensitivityTable, path: str) -> Page:
    """How stable is this order: the ranking-variance report of one dataset, with a bump chart."""
    names = {mid: m.display_name for mid, m in site.models(run).items()}
    runs = [r.name for r in table.runs]
    # the rows in the order of the leaderboard of the audited cell (its unit, every demand class, its metric)
    key = TableKey(table.dataset, table.protocol, table.unit, "all", table.metric)
    lb, rank = leaderboard_ranks(site, run).get(key, (None, {}))
    by_model = {r.model: r for r in table.ranks}
    ranks = [(by_model[m], rank.get(m)) for m in in_rank_order(list(by_model), rank, names)]
    figure = charts.to_json(
        audit_charts.bump_figure(
            runs=runs,
            models=[
                (names.get(r.model, r.model), [r.ranks[n] for n in runs], site.styles[r.model]) for r in table.ranks
            ],
        )
    )
    # what moved, for the page's first paragraph: the between contrast, each protocol's own noise, and the
    # models whose panel rank changes in some run (widest range first)
    between = next((c for c in table.comparisons if c.kind == "between"), None)
    within = {a.protocol: a.within_mean for a in table.attribution}
    moved = sorted(
        (r for r in table.ranks if r.rank_max > r.rank_min),
        key=lambda r: (-(r.rank_max - r.rank_min), r.reference_rank, r.model),
    )
    winners = sorted({m.model for m in table.ranks if m.rank_min == 1})
    steps = table.by_horizon
    horizon_figure = (
        charts.to_json(
            audit_charts.horizon_pss_figure(
                steps=[s.step for s in steps],
                pss=[s.pss_mean for s in steps],
                lo=[s.pss_ci_low for s in steps],
                hi=[s.pss_ci_high for s in steps],
                within=[s.within_pss_mean for s in steps],
            )
        )
        if steps
        else None
    )
    arms = {"static_arm": "static arm vs rolling reference", "rolling_arm": "rolling arm vs static reference"}
    aggregation_figure = (
        charts.to_json(
            audit_charts.aggregation_figure(
                curves=[
                    (
                        label,
                        [a.k for a in table.aggregation if a.curve == arm],
                        [a.prevalence_mean for a in table.aggregation if a.curve == arm],
                        [a.prevalence_min for a in table.aggregation if a.curve == arm],
                        [a.prevalence_max for a in table.aggregation if a.curve == arm],
                    )
                    for arm, label in arms.items()
                ]
            )
        )
        if table.aggregation
        else None
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
            "between": between,
            "within": within,
            "moved": moved,
            "winners": winners,
            "horizon_figure": horizon_figure,
            "aggregation_figure": aggregation_figure,
            "arms": arms,
            "names": names,
            "ranks": ranks,
            "lb_page": site.leaderboard_page(run.name, key) if lb is not None else None,
            "ranked_on": ranked_on(lb) if lb is not None else None,
            "learners": sorted((names.get(m, m) for m, learns in table.fitted_state.items() if learns), key=str.lower),
            "warnings": site.warnings_for(run, table.dataset),
            "bench_page": site.bench_page(run.name),
            "provenance": site.provenance(run),
            "dataset_page": site.dataset_page(run.name, table.dataset),
        },
    )


def competition_horizons(run: Run) -> dict[str, int]:
    """Each dataset's own competition horizon, as its competition tables record it (the competition
    protocol's single ``horizon`` is only the longest of them: M3 monthly is scored at 18, not 24)."""
    return {t.dataset: t.horizon for t in run.data.competition}


def competition_page(site: SiteModel, run: Run, dataset: str, tables: list[CompetitionTable], path: str) -> Page:
    """The competition holdout of one dataset: a table per (competition, metric) at the dataset's own
    horizon, and the protocol as it applied to this dataset."""
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
            "protocols": [p for p in run.data.protocols if p.id in {t.protocol for t in tables}],
            "horizon": competition_horizons(run).get(dataset),
            "warnings": site.warnings_for(run, dataset),
            "bench_page": site.bench_page(run.name),
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
