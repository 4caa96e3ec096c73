"""The model pages: one per model (every table it is in, its history, its runs and cost), and the models
index with the cost-accuracy charts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks.results_model import ModelEntry, ModelRun

from .. import charts
from ..definitions import forecaster_docs
from ..fmt import safe_label
from ..pages import NavNode, Page, SiteModel, reader_reason
from .registry import Built, page_part, page_path, page_type

page_part("model", path="models/{model}.md", module=__name__)


def runs_of(model: ModelEntry | None) -> list[ModelRun]:
    """The model's recorded runs (none for a model absent from a version)."""
    return model.runs if model is not None else []


def shown_runs(site: SiteModel, mid: str) -> list[tuple[str, ModelRun]]:
    """The model's runs in every benchmark's latest version, as its pages show them: each reason in one line
    (:func:`~..pages.reader_reason`: display names, no machine or repository note) and no traceback (the
    results file keeps it)."""
    shown = []
    for name in site.names:
        run = site.latest(name)
        names = site.display_names(run)
        for r in runs_of(site.models(run).get(mid)):
            reason = reader_reason(r.reason, r.traceback, names) or None
            shown.append((name, r.model_copy(update={"reason": reason, "traceback": None})))
    return shown


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
            # the pooled class's headline metrics only (a chart for each of ten metrics made every page heavy)
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
                    (
                        r
                        for r in runs_of(models.get(row.model))
                        if r.dataset == lb.dataset and r.protocol == lb.protocol
                    ),
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

    nav = NavNode(title="Models", page=page_path("models"))
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
                    # listing every table was too heavy; every other table is on its unit's page
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
        runs = shown_runs(site, mid)
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
                    "swatch": charts.swatch_svg(site.styles[mid]),
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
            path=page_path("models"),
            template="models.md.j2",
            title="Models",
            context={"models": summary, "charts": cost_charts(site, highlight=None)},
        )
    )
    return pages, nav


@page_type("models", path="models/index.md", scope="site", order=20)
def _models(site: SiteModel, *, root: Path) -> Built:
    pages, nav = model_pages(site, root=root)
    return pages, [nav]
