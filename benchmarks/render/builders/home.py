"""The home page: per benchmark, the answer (each dataset's headline winner per demand class), one row per
cell. The tables behind the answer (every headline table's winner, where the baselines win) are the
benchmark page's (:func:`headline_tables`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..fmt import reader_text
from ..load import Run
from ..pages import Page, SiteModel, named
from .registry import Built, in_nav, page_path, page_type


def answer_rows(site: SiteModel, run: Run) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The home page's answer: per dataset and demand class, the headline table's winner and runner-up.

    The headline unit of a dataset is its first unit of analysis; the headline metric of a demand class is
    :func:`tycheon.analysis.headline.headline_metrics` (RMSSE, with the scaled pinball loss at 0.9 beside
    it, where the benchmark ranks them; else its first metric, and the page says so). Beside the winner:
    its share better than the random walk with the interval, whether the runner-up is tied with it, its
    zero-forecast share, whether a few blocks decide the table, and the stock it needs at the target
    service level (the cell's inventory simulation). Only tables that reach the minimum cell name anyone;
    the others are returned apart, with their reason. Model ids the tables record (the service level's and
    the inventory's winners, the winner without the largest blocks) come with ``names`` (id -> display
    name); reasons read as a reader meets them (:func:`~..fmt.reader_text`, display names).
    """
    from tycheon.analysis.headline import HEADLINE_REASONS, headline_metrics

    rows, too_small = [], []
    names = site.display_names(run)
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
            too_small.append({"lb": head, "page": page, "reason": named(reader_text(head.tests.cell_reason), names)})
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
                "names": names,
                "runner_up_reason": named(reader_text(head.tests.runner_up_reason), names),
            }
        )
    return rows, too_small


def headline_tables(site: SiteModel, run: Run) -> tuple[list[dict[str, Any]], str | None]:
    """Every leaderboard of the run's latest version with its winners, verdict counts and baseline rank, and
    the headline metric of the pooled class (the metric of the "where the baselines win" table).

    A table is ``headline`` where its metric is one of its class's headline metrics
    (:func:`tycheon.analysis.headline.headline_metrics`); the benchmark page lists those, every other
    metric's winner is on its unit's page.
    """
    from tycheon.analysis.headline import headline_metrics

    tables = []
    lbs = site.leaderboards(run)
    ranked = list(dict.fromkeys(lb.metric for lb in lbs))
    for lb in lbs:
        baseline = site.baseline_row(lb)
        tables.append(
            {
                "headline": lb.metric in headline_metrics(lb.demand_class, ranked)[:2],
                "lb": lb,
                "page": site.leaderboard_page(run.name, lb.key),
                "winners": [r for r in lb.rows if r.rank == 1] if site.cell_ok(lb) else [],
                "cell_ok": site.cell_ok(lb),
                "verdicts": site.verdict_counts(lb),
                "dm": site.dm_counts(lb),
                "baseline_rank": baseline.rank if baseline else None,
                "n": len(lb.rows),
                "rw": site.rw_row(lb),
            }
        )
    pooled = headline_metrics("all", ranked)[0] if ranked else None
    return tables, pooled


def home_page(site: SiteModel) -> Page:
    benchmarks = []
    for name in site.names:
        run = site.latest(name)
        answer, too_small = answer_rows(site, run)
        benchmarks.append(
            {
                "name": name,
                "run": run,
                "page": site.bench_page(name),
                "answer": answer,
                "too_small": too_small,
                "history_page": site.history_page(name),
                "n_versions": len(site.by_name[name]),
                "warnings": site.run_warnings(run),
                "not_ran": site.not_ran(run),
            }
        )
    return Page(path=page_path("home"), template="home.md.j2", title="Home", context={"benchmarks": benchmarks})


@page_type("home", path="index.md", scope="site", order=0)
def _home(site: SiteModel, *, root: Path) -> Built:
    return in_nav(home_page(site))
