"""Page builders: one function per kind of page, each returning pages and their navigation entries."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple, get_args

from benchmarks.results_model import (
    CompetitionTable,
    IntervalRow,
    IntervalTable,
    Leaderboard,
    LeaderboardRow,
    LeaderboardTests,
    ModelEntry,
    ModelRun,
    ModelSource,
    ReplayTable,
    ResultsDocument,
    SensitivityTable,
)

from . import charts
from .analyses import across_page, robustness_page, uncertainty_pages
from .definitions import forecaster_docs, model_columns, read_package, registry_glossary
from .fmt import safe_label
from .history import statistics_history
from .load import Run
from .pages import CLASS_ORDER, NavNode, Page, SiteModel, null_notes


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


def benchmark_pages(site: SiteModel, name: str) -> tuple[list[Page], NavNode]:
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
        matrices = []
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
                "unit_page": site.unit_page(name, dataset, protocol, unit),
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
            ds_nav.children.append(
                NavNode(
                    title=safe_label(unit_title),
                    page=matrix["unit_page"],
                    children=[NavNode(title=p.title, page=p.path) for p in unit_pages],
                )
            )
        intervals = [t for t in run.data.intervals if t.dataset == dataset]
        if intervals:
            path = site.intervals_page(name, dataset)
            pages.append(interval_page(site, run, dataset, intervals, path))
            ds_nav.children.append(NavNode(title="Intervals", page=path))
        replays = [t for t in run.data.replay if t.dataset == dataset]
        if replays:
            path = site.replay_page(name, dataset)
            pages.append(replay_page(site, run, dataset, replays, path))
            ds_nav.children.append(NavNode(title="Selection rule", page=path))
        audit = next((t for t in run.data.sensitivity if t.dataset == dataset), None)
        if audit is not None:
            path = site.sensitivity_page(name, dataset)
            pages.append(sensitivity_page(site, run, audit, path))
            ds_nav.children.append(NavNode(title="How stable is this order", page=path))
        competition = [t for t in run.data.competition if t.dataset == dataset]
        if competition:
            path = site.competition_page(name, dataset)
            pages.append(competition_page(site, run, dataset, competition, path))
            ds_nav.children.append(NavNode(title="Competition", page=path))
        robustness = robustness_page(site, run, dataset)
        uncertainty = None
        if robustness is not None:
            pages.append(robustness)
            ds_nav.children.append(NavNode(title=robustness.title, page=robustness.path))
            unc_pages = uncertainty_pages(site, run, dataset)
            if unc_pages:
                uncertainty = unc_pages[0]
                pages.extend(unc_pages)
                ds_nav.children.append(
                    NavNode(
                        title=uncertainty.title,
                        page=uncertainty.path,
                        children=[NavNode(title=p.title, page=p.path) for p in unc_pages[1:]],
                    )
                )
        class_counts = next(
            (
                cw.class_counts
                for cw in run.data.analyses.class_winners
                if cw.dataset == dataset and cw.unit == "series"
            ),
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
                    "class_counts": class_counts,
                    "intervals_page": site.intervals_page(name, dataset) if intervals else None,
                    "robustness_page": robustness.path if robustness is not None else None,
                    "uncertainty_page": uncertainty.path if uncertainty is not None else None,
                    "competition_page": site.competition_page(name, dataset) if competition else None,
                    "replay_page": site.replay_page(name, dataset) if replays else None,
                    "sensitivity_page": site.sensitivity_page(name, dataset) if audit is not None else None,
                    "warnings": site.warnings_for(run, dataset),
                    "not_ran": site.not_ran(run, dataset=dataset),
                    "provenance": site.provenance(run),
                },
            )
        )
        dataset_entries.append((dataset, info, site.dataset_page(name, dataset)))
        nav.children.append(ds_nav)
    pages.extend(lb_pages)
    across = across_page(site, run)
    if across is not None:
        pages.append(across)
        nav.children.append(NavNode(title=across.title, page=across.path))
    history = history_page(site, name)
    pages.append(history)
    nav.children.append(NavNode(title="Version history", page=history.path))
    pages.append(
        Page(
            path=site.bench_page(name),
            template="benchmark.md.j2",
            title=safe_label(name),
            context={
                "run": run,
                "datasets": dataset_entries,
                "provenance": site.provenance(run),
                "warnings": site.run_warnings(run),
                "not_ran": site.not_ran(run),
                "history_page": history.path,
                "versions": [r.version for r in site.by_name[name]],
            },
        )
    )
    return pages, nav


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


def _crossed(before: float | None, after: float | None, alpha: float) -> bool:
    """Whether a p-value moved across ``alpha`` (significant on one side, not on the other)."""
    return before is not None and after is not None and (before < alpha) != (after < alpha)


def _table_changes(old_lb: Leaderboard, new_lb: Leaderboard) -> list[dict[str, Any]]:
    """What a reader would notice in one table: verdicts that changed, rank moves of more than one place,
    DM p-values against the baseline that crossed alpha, models that joined or left the table."""
    before = {r.model: r for r in old_lb.rows}
    after = {r.model: r for r in new_lb.rows}
    alpha = new_lb.tests.alpha
    changes = []
    for model in sorted(set(before) | set(after)):
        b, a = before.get(model), after.get(model)
        name = (a or b).display_name
        if b is None or a is None:
            changes.append(
                {
                    "model": model,
                    "display_name": name,
                    "what": "joined the table" if b is None else "left the table",
                    "detail": f"rank {a.rank}" if a is not None else f"was rank {b.rank}",
                }
            )
            continue
        if b.verdict_vs_rw != a.verdict_vs_rw:
            changes.append(
                {
                    "model": model,
                    "display_name": name,
                    "what": "verdict against the random walk",
                    "detail": f"{b.verdict_vs_rw or 'none'} \u2192 {a.verdict_vs_rw or 'none'}",
                }
            )
        if abs(b.rank - a.rank) > 1:
            changes.append(
                {"model": model, "display_name": name, "what": "rank", "detail": f"{b.rank} \u2192 {a.rank}"}
            )
        if _crossed(b.dm_p_bh, a.dm_p_bh, alpha):
            changes.append(
                {
                    "model": model,
                    "display_name": name,
                    "what": f"DM p against the baseline crossed {alpha}",
                    "detail": f"{b.dm_p_bh:.3g} \u2192 {a.dm_p_bh:.3g}",
                }
            )
    return changes


def _diff(old: Run, new: Run) -> dict[str, Any]:
    """What changed between two consecutive versions in terms a reader cares about (nothing recomputed)."""
    old_lbs = {lb.key: lb for lb in old.data.leaderboards}
    new_lbs = {lb.key: lb for lb in new.data.leaderboards}
    tables = []
    for key in sorted(set(old_lbs) & set(new_lbs)):
        grouped: dict[tuple[str, str], list[str]] = {}  # the same change of several models is one line
        for c in _table_changes(old_lbs[key], new_lbs[key]):
            grouped.setdefault((c["what"], c["detail"]), []).append(c["display_name"])
        if grouped:
            tables.append(
                {
                    "key": key,
                    "changes": [{"what": w, "detail": d, "models": names} for (w, d), names in grouped.items()],
                }
            )
    old_models, new_models = SiteModel.models(old), SiteModel.models(new)
    status_changes = []
    for mid in sorted(set(old_models) & set(new_models)):
        o = {(r.dataset, r.protocol): r.status for r in _runs(old_models.get(mid))}
        n = {(r.dataset, r.protocol): r.status for r in _runs(new_models.get(mid))}
        for k in sorted(set(o) | set(n)):
            if o.get(k) != n.get(k):
                status_changes.append(
                    {
                        "model": mid,
                        "display_name": new_models[mid].display_name,
                        "dataset": k[0],
                        "protocol": k[1],
                        "before": o.get(k, "absent"),
                        "after": n.get(k, "absent"),
                    }
                )
    added_models = [new_models[m] for m in sorted(set(new_models) - set(old_models))]
    removed_models = [old_models[m] for m in sorted(set(old_models) - set(new_models))]
    added, removed = sorted(set(new_lbs) - set(old_lbs)), sorted(set(old_lbs) - set(new_lbs))
    changed = bool(tables or status_changes or added_models or removed_models or added or removed)
    return {
        "old": old.version,
        "new": new.version,
        "tables": tables,
        "changed": changed,
        "added": added,
        "removed": removed,
        "added_models": added_models,
        "removed_models": removed_models,
        "status_changes": status_changes,
        "config_changed": old.data.provenance.config_sha256 != new.data.provenance.config_sha256,
        "code_changed": old.data.provenance.code_sha256 != _computing_code(new.data),
    }


def _computing_code(doc: ResultsDocument) -> str:
    """sha256 of the code that computed a version's tables: a restatement keeps its source run's
    ``code_sha256`` (the code that made the scores) and records the restating code apart."""
    restated = doc.provenance.restated_from
    return doc.provenance.code_sha256 if restated is None else restated.code_sha256


def _runs(model: ModelEntry | None) -> list[ModelRun]:
    return model.runs if model is not None else []


def history_page(site: SiteModel, name: str) -> Page:
    runs = site.by_name[name]
    versions = []
    for run in reversed(runs):
        statuses = [r.status for m in run.data.models for r in m.runs]
        versions.append(
            {
                "run": run,
                "prov": run.data.provenance,
                "ran": statuses.count("ran"),
                "skipped": statuses.count("skipped"),
                "failed": statuses.count("failed"),
                "n_leaderboards": len(run.data.leaderboards),
            }
        )
    diffs = [_diff(old, new) for old, new in zip(runs[:-1], runs[1:], strict=False)][::-1]
    return Page(
        path=site.history_page(name),
        template="history.md.j2",
        title="Version history",
        context={
            "name": name,
            "versions": versions,
            "diffs": diffs,
            "statistics": statistics_history(runs),
            "lb_paths": {lb.key: site.leaderboard_page(name, lb.key) for lb in site.latest(name).data.leaderboards},
        },
    )


def _cost(run_record: ModelRun) -> float | None:
    t = run_record.timings
    fit, predict = t.get("fit_seconds"), t.get("predict_seconds")
    if fit is None and predict is None:
        return None
    return (fit or 0.0) + (predict or 0.0)


def cost_charts(site: SiteModel, *, highlight: str | None) -> list[dict[str, Any]]:
    """One cost-accuracy chart per (benchmark, dataset, protocol, headline metric) on the headline table.

    The headline table is the first unit of the dataset with demand class ``all``: accuracy is its mean
    metric, cost the model's recorded fit + predict seconds on that dataset and protocol.
    """
    from tycheon.analysis.headline import headline_metrics

    found = []
    for name in site.names:
        run = site.latest(name)
        models = site.models(run)
        lbs = site.leaderboards(run)
        ranked = list(dict.fromkeys(lb.metric for lb in lbs))
        for lb in lbs:
            # the pooled class's headline metrics only (one chart a metric: ten metrics weighed 0.5 MB a page)
            if lb.demand_class != "all" or lb.metric not in headline_metrics("all", ranked)[:2]:
                continue
            units = next((d.units for d in run.data.datasets if d.name == lb.dataset), [])
            if units and lb.unit != units[0]:
                continue
            if highlight is not None and highlight not in {r.model for r in lb.rows}:
                continue
            points, missing = [], []
            for row in lb.rows:
                record = next(
                    (r for r in _runs(models.get(row.model)) if r.dataset == lb.dataset and r.protocol == lb.protocol),
                    None,
                )
                seconds = _cost(record) if record else None
                if seconds is None or seconds <= 0 or row.mean is None:
                    missing.append(row.display_name)
                    continue
                points.append(
                    charts.CostPoint(
                        row.display_name, seconds, row.mean, site.styles[row.model], highlight=row.model == highlight
                    )
                )
            if not points:
                continue
            front = charts.pareto_front(points)
            found.append(
                {
                    "name": name,
                    "version": run.version,
                    "lb": lb,
                    "missing": missing,
                    "front": [p.label for p in front],
                    "figure": charts.to_json(charts.cost_accuracy_figure(points=points, metric=lb.metric)),
                    "page": site.leaderboard_page(name, lb.key),
                }
            )
    return found


def model_pages(site: SiteModel, *, root: Path) -> tuple[list[Page], NavNode]:
    from tycheon.analysis.headline import headline_metrics

    nav = NavNode(title="Models", page="models/index.md")
    docs = forecaster_docs(root)
    pages = []
    summary = []
    for mid in site.model_ids:
        appearances = []  # latest version of every benchmark: every table the model is in
        history = []  # every version: headline tables only
        config = None
        for name in site.names:
            for run in site.by_name[name]:
                model = site.models(run).get(mid)
                if model is None:
                    continue
                is_latest = run is site.latest(name)
                if is_latest:
                    config = model
                lbs = site.leaderboards(run)
                ranked = list(dict.fromkeys(lb.metric for lb in lbs))
                for lb in lbs:
                    # the headline metrics' tables (as the home page lists them): with ten metrics a model page
                    # listing every table weighed 2.2 MB; every other table is on its unit's page
                    if lb.metric not in headline_metrics(lb.demand_class, ranked)[:2]:
                        continue
                    row = next((r for r in lb.rows if r.model == mid), None)
                    if row is None:
                        continue
                    entry = {
                        "name": name,
                        "version": run.version,
                        "lb": lb,
                        "row": row,
                        "n": len(lb.rows),
                        "page": site.leaderboard_page(name, lb.key) if is_latest else None,
                    }
                    if is_latest:
                        appearances.append(entry)
                    if lb.demand_class == "all":
                        history.append(entry)
        runs = [(name, r) for name in site.names for r in _runs(site.models(site.latest(name)).get(mid))]
        title = safe_label(config.display_name if config is not None else mid)
        method_doc = docs.get(config.source.forecaster or "") if config is not None else None
        pages.append(
            Page(
                path=site.model_page(mid),
                template="model.md.j2",
                title=title,
                context={
                    "model": config,
                    "mid": mid,
                    "method_doc": method_doc,
                    "appearances": appearances,
                    "history": history,
                    "runs": runs,
                    "charts": cost_charts(site, highlight=mid),
                    "style": site.styles[mid],
                },
            )
        )
        nav.children.append(NavNode(title=title, page=site.model_page(mid)))
        summary.append(
            {
                "mid": mid,
                "model": config,
                "runs": runs,
                "wins": sum(1 for a in appearances if a["row"].rank == 1),
                "tables": len(appearances),
            }
        )
    pages.append(
        Page(
            path="models/index.md",
            template="models.md.j2",
            title="Models",
            context={"models": summary, "charts": cost_charts(site, highlight=None)},
        )
    )
    return pages, nav


def _answer_rows(site: SiteModel, run: Run) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The home page's answer: per dataset and demand class, the headline table's winner and runner-up.

    The headline unit of a dataset is its first unit of analysis; the headline metric of a demand class is
    :func:`tycheon.analysis.headline.headline_metrics` (RMSSE, with the scaled pinball loss at 0.9 beside
    it, where the benchmark ranks them; else its first metric, and the page says so). Beside the winner:
    its share better than the random walk with the interval, whether the runner-up is tied with it, its
    zero-forecast share, whether a few blocks decide the table, and the stock it needs at the target
    service level (the cell's inventory simulation). Only tables that reach the minimum cell name anyone;
    the others are returned apart, with their reason.
    """
    from tycheon.analysis.headline import HEADLINE_REASONS, headline_metrics

    rows, too_small = [], []
    lbs = site.leaderboards(run)  # display order: unit and metric in config order within each dataset
    ranked = list(dict.fromkeys(lb.metric for lb in lbs))
    unit: dict[str, tuple[str, str]] = {}
    for lb in lbs:
        unit.setdefault(lb.dataset, (lb.protocol, lb.unit))
    by_key = {(lb.dataset, lb.protocol, lb.unit, lb.demand_class, lb.metric): lb for lb in lbs}
    inventory = {
        (t.dataset, t.protocol, t.unit, t.demand_class): t.inventory for t in run.data.intervals if t.inventory
    }
    seen = set()
    for lb in lbs:
        cell = (lb.dataset, lb.protocol, lb.unit, lb.demand_class)
        if (lb.protocol, lb.unit) != unit[lb.dataset] or cell in seen:
            continue
        seen.add(cell)
        point, service, stands_in = headline_metrics(lb.demand_class, ranked)
        head = by_key.get((*cell, point))
        if head is None:
            continue
        page = site.leaderboard_page(run.name, head.key)
        if not site.cell_ok(head):
            too_small.append({"lb": head, "page": page})
            continue
        ranks = sorted({r.rank for r in head.rows})
        winners = [r for r in head.rows if ranks and r.rank == ranks[0]]
        runners = [r for r in head.rows if len(ranks) > 1 and r.rank == ranks[1]] if len(winners) == 1 else []
        beats = [r for r in head.rows if r.verdict_vs_rw == "beats" and not r.is_random_walk]
        judged = [r for r in head.rows if r.verdict_vs_rw is not None and not r.is_random_walk]
        svc = by_key.get((*cell, service)) if service else None
        inv = inventory.get(cell)
        stock = {r.model: r for r in inv.rows} if inv else {}
        rows.append(
            {
                "lb": head,
                "page": page,
                "winners": winners,
                "runners": runners,
                "beats": beats,
                "judged": judged,
                "rw": site.rw_row(head),
                "n": len(head.rows),
                "reason": HEADLINE_REASONS.get(head.demand_class, ""),
                "stands_in": stands_in,
                "service": svc if svc is not None and site.cell_ok(svc) else None,
                "service_page": site.leaderboard_page(run.name, svc.key) if svc is not None else None,
                "inventory": inv,
                "stock": stock.get(winners[0].model) if winners else None,
            }
        )
    return rows, too_small


def home_page(site: SiteModel) -> Page:
    from tycheon.analysis.headline import headline_metrics

    benchmarks = []
    for name in site.names:
        run = site.latest(name)
        tables = []
        lbs = site.leaderboards(run)
        ranked = list(dict.fromkeys(lb.metric for lb in lbs))
        for lb in lbs:
            baseline = site.baseline_row(lb)
            tables.append(
                {
                    # the home page lists the headline metrics' tables; every other is on its unit's page
                    "headline": lb.metric in headline_metrics(lb.demand_class, ranked)[:2],
                    "lb": lb,
                    "page": site.leaderboard_page(name, lb.key),
                    "winners": [r for r in lb.rows if r.rank == 1] if site.cell_ok(lb) else [],
                    "cell_ok": site.cell_ok(lb),
                    "verdicts": site.verdict_counts(lb),
                    "dm": site.dm_counts(lb),
                    "baseline_rank": baseline.rank if baseline else None,
                    "n": len(lb.rows),
                    "rw": site.rw_row(lb),
                }
            )
        answer, too_small = _answer_rows(site, run)
        benchmarks.append(
            {
                "name": name,
                # the baselines list reads the tables of the pooled class's headline metric (one line per unit)
                "headline_metric": answer[0]["lb"].metric if answer else (tables[0]["lb"].metric if tables else None),
                "run": run,
                "tables": tables,
                "page": site.bench_page(name),
                "answer": answer,
                "too_small": too_small,
                "history_page": site.history_page(name),
                "n_versions": len(site.by_name[name]),
                "warnings": site.run_warnings(run),
                "not_ran": site.not_ran(run),
            }
        )
    return Page(path="index.md", template="home.md.j2", title="Home", context={"benchmarks": benchmarks})


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
    return Page(
        path="methodology.md",
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
        },
    )


_SCALES = {  # what a registry scale column divides by, in words
    "scale_mae": "the in-sample seasonal-naive MAE of the training window",
    "scale_rmse": "the in-sample seasonal-naive RMSE of the training window",
}


def glossary_page(site: SiteModel, *, root: Path) -> Page:
    """Every term the tables use, defined once; metrics from the registry as the latest results record it.

    Results files without a ``metric_glossary`` block fall back to the registry's literal specs read with
    ``ast`` (:func:`registry_glossary`); the page says which source it used.
    """
    source, metrics = "none", []
    for name in reversed(site.names):
        block = site.latest(name).data.metric_glossary
        if block:
            source, metrics = f"results {name} {site.latest(name).version}", [g.model_dump() for g in block]
            break
    if not metrics:
        metrics = registry_glossary(root)
        source = "tycheon/metrics/registry.py (read from the source)" if metrics else "none"
    used = sorted({lb.metric for name in site.names for lb in site.latest(name).data.leaderboards})
    for m in metrics:
        m["used"] = m["name"] in used
        m["scale_text"] = _SCALES.get(m["scale_column"] or "", m["scale_column"])
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
        path="glossary.md",
        template="glossary.md.j2",
        title="Glossary",
        context={
            "metrics": metrics,
            "metric_source": source,
            "used": used,
            "settings": settings,
            "baselines": baselines,
            "units": units,
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
        path="submit.md",
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
