"""Uncertainty on a leaderboard: panel-bootstrap CIs, ranking stability, Holm beside BH on the panel DM
family and the model confidence set, each on the table metric's own per-step loss."""

from __future__ import annotations

import numpy as np
import pytest

from tests._analysis_support import score_table, spec
from tycheon.analysis.cell import MIN_TIME_POINTS
from tycheon.analysis.uncertainty import leaderboard_uncertainties, leaderboard_uncertainty
from tycheon.errors import InputError
from tycheon.metrics.aggregate import block_scores, row_crps, step_loss
from tycheon.stats.bootstrap import panel_means_bootstrap
from tycheon.stats.dm import dm_panel
from tycheon.stats.multiplicity import benjamini_hochberg, holm

SD = {"base": 2.0, "rw": 2.6, "a": 1.0, "b": 1.05, "c": 4.0}


def _err(unit, model, rng, shape):
    common = np.random.default_rng(7).normal(0.0, 1.0, shape)  # shared by all models: strongly paired
    return common * SD[model] + rng.normal(0.0, 0.2, shape)


@pytest.fixture(scope="module")
def result():
    table = score_table({"series": 60}, list(SD), _err, n_origins=10)
    return table, leaderboard_uncertainty(table, spec=spec(), metric="rmsse", n_resamples=400)


def _cell_losses(table, metric, **kw):
    """Oracle: the registry's per-step loss of every row, ``[(series, origin, step, period), model]``."""
    rows = table[table["unit"] == "series"].reset_index(drop=True)
    rows = rows.assign(loss=step_loss(rows, metric, **kw))
    return rows.pivot_table(index=["series_id", "origin", "step", "target_period"], columns="model", values="loss")


def test_cis_are_the_panel_bootstrap_of_the_block_metric_over_origins(result):
    table, res = result
    rows = {r.model: r for r in res.rows}
    assert [r.model for r in res.rows] == ["a", "b", "base", "rw", "c"]  # by mean
    se = table.assign(se=(table["point"] - table["actual"]) ** 2)
    blocks = se.groupby(["model", "series_id", "origin"])["se"].mean() ** 0.5
    w = blocks.unstack("model")
    origin = w.index.get_level_values("origin")
    ref = panel_means_bootstrap(w, origin=origin, horizon=3, stride=3, reference="base", n_resamples=400, seed=3)
    j = ref.columns.index("a")
    assert rows["a"].mean == pytest.approx(w["a"].mean())
    assert (rows["a"].mean_low, rows["a"].mean_high) == pytest.approx((ref.mean_low[j], ref.mean_high[j]))
    assert (rows["a"].delta_low, rows["a"].delta_high) == pytest.approx((ref.delta_low[j], ref.delta_high[j]))
    assert rows["a"].delta_p == pytest.approx(ref.p_value[j])
    assert rows["a"].delta_high < 0 < rows["c"].delta_low  # a beats the baseline, c loses to it
    assert rows["base"].delta is None and rows["base"].dm_p is None
    assert res.n_blocks == 600 and res.n_complete_blocks == 600 and res.resample == "origin"
    assert (res.n_origins, res.block_length, res.interval_reason) == (10, 1, None)


def test_ranking_bootstrap_keeps_separated_models_and_lets_close_ones_swap(result):
    _, res = result
    rows = {r.model: r for r in res.rows}
    assert rows["c"].keep_fraction == 1.0 and (rows["c"].rank_low, rows["c"].rank_high) == (5, 5)
    assert rows["a"].rank_low == 1 and rows["b"].rank_high == 2  # a and b are close
    assert rows["a"].keep_fraction + rows["b"].keep_fraction <= 2.0


def test_holm_sits_beside_bh_on_the_panel_dm_of_the_tables_own_loss(result):
    table, res = result
    tested = [r for r in res.rows if r.dm_p is not None]
    p = [r.dm_p for r in tested]
    assert len(tested) == 4 and res.dm_test == "panel" and res.dm_reason is None and res.loss == "rmsse"
    assert [r.dm_p_holm for r in tested] == pytest.approx(list(holm(p)))
    assert [r.dm_p_bh for r in tested] == pytest.approx(list(benjamini_hochberg(p)))
    assert all(r.dm_p_holm >= r.dm_p_bh for r in tested)
    cells = _cell_losses(table, "rmsse")  # squared errors over the squared RMSE scale
    oracle = dm_panel(cells["b"], cells["base"], origin=cells.index.get_level_values("origin"), horizon=3, stride=3)
    assert next(r for r in res.rows if r.model == "b").dm_p == pytest.approx(oracle.p_value)


def test_the_model_confidence_set_keeps_the_best_and_drops_the_clearly_worse(result):
    _, res = result
    rows = {r.model: r for r in res.rows}
    assert res.mcs_reason is None and res.mcs_n_periods == 10 * 3 and res.mcs_size == 0.10
    assert rows["a"].in_mcs and rows["a"].mcs_p == pytest.approx(1.0) or rows["b"].mcs_p == pytest.approx(1.0)
    assert not rows["c"].in_mcs and rows["c"].mcs_p < 0.10
    assert all(r.in_mcs == (r.mcs_p >= 0.10) for r in res.rows)


@pytest.mark.parametrize("metric", ["mase", "rmsse"])
def test_the_mcs_runs_on_the_period_means_of_the_tables_own_per_step_loss(metric):
    from arch.bootstrap import MCS

    def err(unit, model, rng, shape):  # "spiky": rare large errors, cheap on MASE and dear on RMSSE
        spikes = rng.random(shape) < 0.08
        return {"base": 1.0, "flat": 1.2, "spiky": 0.0}[model] * rng.normal(0, 1, shape) + 9.0 * spikes * (
            model == "spiky"
        )

    table = score_table({"series": 40}, ["base", "flat", "spiky"], err, n_origins=10)
    k = table["series_id"].str[1:].astype(int) % 3
    table["scale_mae"], table["scale_rmse"] = 1.0 + k, 3.0 - k  # scales of their own: the MCS reads the metric's
    res = leaderboard_uncertainty(table, spec=spec(), metric=metric, n_resamples=300)
    periods = _cell_losses(table, metric).groupby(level="target_period").mean()  # [period, model]
    oracle = MCS(periods, size=0.10, reps=300, block_size=3, method="R", seed=3)
    oracle.compute()
    got = {r.model: r.mcs_p for r in res.rows}
    assert got == pytest.approx({str(m): float(v) for m, v in oracle.pvalues["Pvalue"].items()})
    assert res.loss == metric and res.mcs_n_periods == 30


def test_series_resampling_and_bad_options():
    table = score_table({"series": 20}, ["base", "a"], _err)
    res = leaderboard_uncertainty(table, spec=spec(), metric="mase", n_resamples=200, resample="series", mcs=False)
    assert res.resample == "series" and res.mcs_reason == "not asked" and res.block_length == 1
    assert res.interval_reason is None and all(r.delta_low is not None for r in res.rows if r.model != "base")
    with pytest.raises(InputError, match="resample"):
        leaderboard_uncertainty(table, spec=spec(), metric="mase", resample="period")
    with pytest.raises(InputError, match="unit 'total'"):
        leaderboard_uncertainty(table, spec=spec(), metric="mase", unit="total")


def test_models_with_identical_losses_share_one_mcs_outcome_instead_of_breaking_it():
    def err(unit, model, rng, shape):
        common = np.random.default_rng(11).normal(0.0, 1.0, shape)
        return common * {"base": 2.0, "a": 1.0, "twin": 1.0, "c": 3.0}[model]

    table = score_table({"series": 30}, ["base", "a", "twin", "c"], err, n_origins=10)
    res = leaderboard_uncertainty(table, spec=spec(), metric="mase", n_resamples=300)
    rows = {r.model: r for r in res.rows}
    assert res.mcs_reason is None
    assert rows["a"].mcs_p == rows["twin"].mcs_p and rows["a"].in_mcs == rows["twin"].in_mcs
    assert not rows["c"].in_mcs


def test_a_demand_class_leaderboard_and_calendar_blocks():
    table = score_table(
        {"series": 40}, list(SD), _err, n_origins=10, demand_class=lambda s, o: "lumpy" if s % 4 == 0 else "smooth"
    )
    lumpy = leaderboard_uncertainty(table, spec=spec(), metric="mase", demand_class="lumpy", n_resamples=200)
    assert lumpy.demand_class == "lumpy" and lumpy.n_blocks == 10 * 10
    whole = leaderboard_uncertainty(table, spec=spec(), metric="mase", n_resamples=200)
    assert whole.n_blocks == 400
    mine = table[(table["demand_class"] == "lumpy") & (table["model"] == "a")]
    assert next(r for r in lumpy.rows if r.model == "a").mean == pytest.approx(
        (mine["point"] - mine["actual"]).abs().groupby([mine["series_id"], mine["origin"]]).mean().mean()
    )
    blocks = leaderboard_uncertainty(table, spec=spec(), metric="mase", resample="block", n_resamples=200, mcs=False)
    assert blocks.resample == "block" and blocks.n_blocks == 400
    with pytest.raises(InputError, match="erratic"):
        leaderboard_uncertainty(table, spec=spec(), metric="mase", demand_class="erratic")


@pytest.mark.parametrize("resample", ["origin", "block", "series"])
def test_when_the_metrics_of_a_leaderboard_share_one_draw_then_each_equals_its_own_call(resample):
    table = score_table(
        {"series": 30}, list(SD), _err, n_origins=8, demand_class=lambda s, o: "lumpy" if s % 3 == 0 else "smooth"
    )
    for dc in ("all", "lumpy"):
        kw = dict(spec=spec(), unit="series", demand_class=dc, resample=resample, n_resamples=150)
        together = leaderboard_uncertainties(table, metrics=("mase", "rmsse"), **kw)
        alone = [leaderboard_uncertainty(table, metric=m, **kw) for m in ("mase", "rmsse")]
        assert [u.metric for u in together] == ["mase", "rmsse"]
        assert together == alone  # dataclasses: every CI, rank, p-value and MCS outcome equal
        assert together[0].rows != together[1].rows  # two metrics, two leaderboards


def test_with_fewer_origins_than_a_test_over_time_needs_there_is_no_interval_and_the_reason_is_given():
    few = MIN_TIME_POINTS - 1
    table = score_table({"series": 40}, list(SD), _err, n_origins=few)
    res = leaderboard_uncertainty(table, spec=spec(), metric="mase", n_resamples=200)
    assert res.interval_reason is not None and f"{few} scored origin(s)" in res.interval_reason
    assert res.dm_reason == res.interval_reason and res.mcs_reason == res.interval_reason
    rows = {r.model: r for r in res.rows}
    w = table.assign(e=(table["point"] - table["actual"]).abs()).groupby(["model", "series_id", "origin"])["e"].mean()
    assert rows["a"].mean == pytest.approx(w["a"].mean())  # the estimates are still given
    assert rows["c"].delta == pytest.approx((w["c"] - w["base"]).mean())
    assert rows["c"].rank == 5 and rows["a"].rank in (1, 2)
    for r in res.rows:
        assert r.mean_low is r.mean_high is r.delta_low is r.delta_p is r.rank_low is r.keep_fraction is None
        assert r.dm_p is r.dm_p_holm is r.mcs_p is r.in_mcs is None
    labelled = leaderboard_uncertainty(table, spec=spec(), metric="mase", n_resamples=200, resample="series")
    assert labelled.interval_reason is None and labelled.rows[0].mean_low is not None  # assumes series independent
    assert labelled.dm_reason == res.dm_reason  # the DM family is the panel test whatever the resampling


def test_a_crps_table_tests_the_crps_of_the_models_own_quantiles():
    table = score_table({"series": 30}, ["base", "rw", "a"], _err, n_origins=10)
    spread = {"base": 2.0, "rw": 2.6, "a": 1.0}
    width = table["model"].map(spread).to_numpy()
    levels = (0.1, 0.5, 0.9)
    for q, z in zip(levels, (-1.2816, 0.0, 1.2816), strict=True):
        table[f"q{q:g}"] = table["point"] + z * width
    res = leaderboard_uncertainty(table, spec=spec(metrics=("crps",), quantile_levels=levels), metric="crps",
                                  n_resamples=200)  # fmt: skip
    rows = table[table["unit"] == "series"].reset_index(drop=True)
    crps = row_crps(rows, quantile_levels=levels, crps_kind="approx_quantiles").values
    cells = _cell_losses(table, "crps", crps=crps)
    oracle = dm_panel(cells["a"], cells["base"], origin=cells.index.get_level_values("origin"), horizon=3, stride=3)
    got = {r.model: r for r in res.rows}
    assert res.loss == "crps" and got["a"].dm_p == pytest.approx(oracle.p_value)
    blocks = block_scores(rows, metrics=["crps"], quantile_levels=levels, crps_kind="approx_quantiles")
    assert got["a"].mean == pytest.approx(blocks.loc[blocks["model"] == "a", "crps"].mean())
