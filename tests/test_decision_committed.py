"""Over the committed results (issue 35): every class table lists the decision metrics, the intermittent and
lumpy headlines are not won by a model that forecasts zero unless its row says so, the fpp3 PBS lumpy headline
is not decided by a few blocks (recomputed here from the score parts, independently of the published
``winner_trimmed``), the inventory tables are there, and the across-datasets page ranks only models that cover
every comparable cell.

Read from the newest version of each benchmark computed by the current statistics version."""

from __future__ import annotations

from functools import cache

import numpy as np
import pandas as pd
import pytest

from benchmarks.history import statistics_version_of
from benchmarks.render.pages import SiteModel
from benchmarks.results_io import RESULTS_DIR, existing_versions, read_results
from benchmarks.score_source import score_source
from tests._shared import leaderboard_panel
from tycheon._version import STATISTICS_VERSION
from tycheon.analysis.headline import HEADLINE_POINT, HEADLINE_SERVICE
from tycheon.analysis.relative import relative_to_reference
from tycheon.metrics.aggregate import block_scores

NEW = ("rmsse", "mase", "wape", "scaled_bias", "spl50", "spl80", "spl90", "spl95", "crps_band")


@cache
def _current(name: str):
    newest = list(existing_versions(RESULTS_DIR / name))[-1]
    doc = read_results(newest)
    assert statistics_version_of(doc) == STATISTICS_VERSION, f"{newest} is not of the current statistics"
    return newest, doc


@pytest.mark.parametrize("name", ["small", "full"])
def test_every_class_table_lists_the_decision_metrics(name):
    _, doc = _current(name)
    cells: dict[tuple, set[str]] = {}
    for lb in doc.leaderboards:
        cells.setdefault((lb.dataset, lb.unit, lb.demand_class), set()).add(lb.metric)
    series = {k: v for k, v in cells.items() if k[1] == "series"}
    assert series
    for key, metrics in series.items():
        point = {"rmsse", "mase", "wape", "scaled_bias"}
        assert point <= metrics, key
    banded = [k for k, v in series.items() if {"spl90", "crps_band"} <= v]
    assert len(banded) >= len(series) // 2  # the band tables exist wherever the cell has calibrated bands
    for lb in doc.leaderboards:
        assert lb.tests.ranking in ("gmean_rel_rw", "pooled", "abs_mean", "mean")
        for r in lb.rows:
            assert r.zero_forecast_share is None or 0.0 <= r.zero_forecast_share <= 1.0


@pytest.fixture(scope="module")
def site(committed_docs):
    """The committed results rendered, once per test run (tests/_shared.py)."""
    return committed_docs.docs


@pytest.mark.slow
@pytest.mark.parametrize("name", ["small", "full"])
def test_no_intermittent_or_lumpy_headline_is_won_by_a_zero_forecaster_unless_its_page_says_so(name, site):
    """A headline winner (RMSSE or SPL 0.9) of an intermittent or lumpy table that forecasts zero on half the
    steps of series with demand or more has its page say so beside it (read from the rendered page)."""
    _, doc = _current(name)
    seen = flagged = 0
    for lb in doc.leaderboards:
        if lb.demand_class not in ("intermittent", "lumpy") or lb.winner is None:
            continue
        if lb.metric not in (HEADLINE_POINT[lb.demand_class], HEADLINE_SERVICE):
            continue
        seen += 1
        top = lb.rows[0]
        assert top.model == lb.winner and top.zero_forecast_share is not None
        assert top.zero_forecast_flag == (top.zero_forecast_share >= 0.5)
        if top.zero_forecast_flag:
            flagged += 1
            page, metric = SiteModel.leaderboard_page(name, lb.key).split("#")
            text = leaderboard_panel(site / page, metric)
            facts = text.split('class="tyc-caption tyc-winner-facts"', 1)[1].split("</p>", 1)[0]
            assert f"it forecasts zero on {round(100 * top.zero_forecast_share)}% of the steps" in facts
    assert seen > 0
    print(f"{name}: {seen} intermittent/lumpy headline tables, {flagged} won by a flagged model (said on its page)")


def test_the_fpp3_pbs_lumpy_headline_is_not_decided_by_its_largest_blocks():
    """Recomputed from full's score parts: the series-unit lumpy RMSSE blocks, the headline rule (relative
    error to the random walk, geometric mean over series) with and without the largest 1% of blocks."""
    path, doc = _current("full")
    lb = next(
        t
        for t in doc.leaderboards
        if (t.dataset, t.unit, t.demand_class, t.metric) == ("fpp3_pbs", "series", "lumpy", "rmsse")
    )
    assert lb.winner is not None
    cfg = doc.config
    table = score_source(path, doc).chunk(
        dataset="fpp3_pbs",
        protocol="rolling_origin",
        columns=[
            "model",
            "unit",
            "series_id",
            "origin",
            "step",
            "actual",
            "point",
            "demand_class",
            "scale_mae",
            "scale_rmse",
        ],
        key_order=True,
    )
    table = table[(table["unit"] == "series") & (table["demand_class"] == "lumpy")]
    blocks = block_scores(table, metrics=["rmsse"])
    wide = blocks.pivot_table(index=["series_id", "origin"], columns="model", values="rmsse", observed=True)
    models = [r.model for r in lb.rows]
    wide = wide[models]

    def winner(w: pd.DataFrame) -> str:
        rel = relative_to_reference(
            w, reference=cfg["random_walk"], horizon=cfg["horizon"], stride=cfg["stride"], interval=False
        )
        return min(models, key=lambda m: (rel[m].gmean if rel[m].gmean is not None else np.inf, m))

    assert winner(wide) == lb.winner  # the published headline, recomputed
    k = int(np.ceil(0.01 * len(wide)))
    worst = np.nan_to_num(wide.to_numpy(), nan=-np.inf).max(axis=1)
    keep = np.ones(len(wide), dtype=bool)
    keep[np.argsort(-worst, kind="stable")[:k]] = False
    assert winner(wide[keep]) == lb.winner
    assert lb.tests.winner_trimmed == lb.winner and lb.tests.winner_trimmed_differs is False


@pytest.mark.parametrize("name", ["small", "full"])
def test_cells_with_bands_carry_the_inventory_simulation(name):
    _, doc = _current(name)
    tables = [t for t in doc.intervals if t.inventory is not None]
    assert tables
    for t in tables:
        inv = t.inventory
        assert inv.target == doc.config.get("service_level", 0.9)
        ranked = [r for r in inv.rows if r.rank is not None]
        if inv.cell_ok:
            assert inv.winner == ranked[0].model
            needed = [r.stock_needed for r in ranked if r.stock_needed is not None]
            assert needed == sorted(needed)
        else:
            assert inv.winner is None and not ranked


def test_the_across_page_ranks_only_models_that_cover_every_comparable_cell():
    _, doc = _current("full")
    across = doc.analyses.across
    assert across is not None
    ranked = [m for m in across.models if m.ranked]
    assert ranked and all(m.n_cells == m.n_eligible for m in ranked)
    theta = next((m for m in across.models if m.model == "sktime_theta"), None)
    if theta is not None and theta.n_cells < theta.n_eligible:
        assert not theta.ranked and theta.rank is None and theta.reason
