"""Uncertainty on a leaderboard: paired CIs, ranking stability, Holm beside BH and the model confidence set."""

from __future__ import annotations

import numpy as np
import pytest

from tests._analysis_support import score_table, spec
from tycheon.analysis.uncertainty import leaderboard_uncertainties, leaderboard_uncertainty
from tycheon.errors import InputError
from tycheon.stats.bootstrap import paired_means_bootstrap
from tycheon.stats.multiplicity import benjamini_hochberg, holm

SD = {"base": 2.0, "rw": 2.6, "a": 1.0, "b": 1.05, "c": 4.0}


def _err(unit, model, rng, shape):
    common = np.random.default_rng(7).normal(0.0, 1.0, shape)  # shared by all models: strongly paired
    return common * SD[model] + rng.normal(0.0, 0.2, shape)


@pytest.fixture(scope="module")
def result():
    table = score_table({"series": 60}, list(SD), _err, n_origins=10)
    return table, leaderboard_uncertainty(table, spec=spec(), metric="rmsse", n_resamples=400)


def test_cis_are_the_paired_bootstrap_of_the_block_metric(result):
    table, res = result
    rows = {r.model: r for r in res.rows}
    assert [r.model for r in res.rows] == ["a", "b", "base", "rw", "c"]  # by mean
    se = table.assign(se=(table["point"] - table["actual"]) ** 2)
    blocks = se.groupby(["model", "series_id", "origin"])["se"].mean() ** 0.5
    w = blocks.unstack("model")
    ref = paired_means_bootstrap(w, blocks=np.arange(len(w)), reference="base", n_resamples=400, seed=3)
    j = ref.columns.index("a")
    assert rows["a"].mean == pytest.approx(w["a"].mean())
    assert (rows["a"].delta_low, rows["a"].delta_high) == pytest.approx((ref.delta_low[j], ref.delta_high[j]))
    assert rows["a"].delta_high < 0 < rows["c"].delta_low  # a beats the baseline, c loses to it
    assert rows["base"].delta is None and rows["base"].dm_p is None
    assert res.n_blocks == 600 and res.n_complete_blocks == 600 and res.resample == "block"


def test_ranking_bootstrap_keeps_separated_models_and_lets_close_ones_swap(result):
    _, res = result
    rows = {r.model: r for r in res.rows}
    assert rows["c"].keep_fraction == 1.0 and (rows["c"].rank_low, rows["c"].rank_high) == (5, 5)
    assert rows["a"].rank_low == 1 and rows["b"].rank_high == 2  # a and b are close
    assert rows["a"].keep_fraction + rows["b"].keep_fraction <= 2.0


def test_holm_sits_beside_bh_on_the_same_dm_family(result):
    _, res = result
    tested = [r for r in res.rows if r.dm_p is not None]
    p = [r.dm_p for r in tested]
    assert [r.dm_p_holm for r in tested] == pytest.approx(list(holm(p)))
    assert [r.dm_p_bh for r in tested] == pytest.approx(list(benjamini_hochberg(p)))
    assert all(r.dm_p_holm >= r.dm_p_bh for r in tested)


def test_the_model_confidence_set_keeps_the_best_and_drops_the_clearly_worse(result):
    _, res = result
    rows = {r.model: r for r in res.rows}
    assert res.mcs_reason is None and res.mcs_n_periods == 10 * 3 and res.mcs_size == 0.10
    assert rows["a"].in_mcs and rows["a"].mcs_p == pytest.approx(1.0) or rows["b"].mcs_p == pytest.approx(1.0)
    assert not rows["c"].in_mcs and rows["c"].mcs_p < 0.10
    assert all(r.in_mcs == (r.mcs_p >= 0.10) for r in res.rows)


def test_series_resampling_and_bad_options():
    table = score_table({"series": 20}, ["base", "a"], _err)
    res = leaderboard_uncertainty(table, spec=spec(), metric="mase", n_resamples=200, resample="series", mcs=False)
    assert res.resample == "series" and res.mcs_reason == "not asked"
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
    calendar = leaderboard_uncertainty(table, spec=spec(), metric="mase", resample="origin", n_resamples=200, mcs=False)
    assert calendar.resample == "origin"
    with pytest.raises(InputError, match="erratic"):
        leaderboard_uncertainty(table, spec=spec(), metric="mase", demand_class="erratic")


@pytest.mark.parametrize("resample", ["block", "series"])
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
