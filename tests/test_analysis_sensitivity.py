"""Protocol sensitivity (protocol-sensitivity audit, sections 4-6): pairing, PSS, TOST, Borda, and the
engine's static and rolling runs of one roster."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.weightstats import ttost_paired

from tycheon.analysis.sensitivity import (
    TargetPairingError,
    borda,
    check_same_targets,
    compare_runs,
    fitted_state,
    run_losses,
    sensitivity_protocols,
    sensitivity_record,
    sensitivity_report,
    sensitivity_runs,
)
from tycheon.backtest.engine import run
from tycheon.backtest.factories import instance_factory
from tycheon.backtest.protocol import RollingOrigin, StaticSplit
from tycheon.forecasters.base import Capabilities, Forecast, Forecaster
from tycheon.stats.ranking import tost_equivalence
from tycheon.testing.toys import MeanForecaster, NaiveForecaster, toy_panel

H = 3


def _table(points: dict[str, np.ndarray], actual: np.ndarray) -> pd.DataFrame:
    """Score-set rows of ``points[model] [series, origin, step]`` against ``actual``."""
    n_s, n_o, h = actual.shape
    s, o, k = np.meshgrid(np.arange(n_s), np.arange(n_o), np.arange(h), indexing="ij")
    s, o, k = s.ravel(), o.ravel(), k.ravel()
    origin = pd.Timestamp("2020-01-01") + pd.to_timedelta(0, "D")
    origins = pd.date_range(origin, periods=n_o * h + h, freq="MS")
    parts = []
    for m, pt in points.items():
        parts.append(
            pd.DataFrame(
                {
                    "model": m,
                    "unit": "series",
                    "series_id": [f"s{i:03d}" for i in s],
                    "origin": origins[o * h],
                    "step": k + 1,
                    "target_period": origins[o * h + k],
                    "actual": actual.ravel(),
                    "point": pt.ravel(),
                    "scale_mae": 1.0 + s,
                    "scale_rmse": 2.0 + s,
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def _noisy(rng, y, sds):
    return {f"m{j}": y + rng.normal(scale=sd, size=y.shape) for j, sd in enumerate(sds)}


def test_pss_is_zero_between_two_identical_runs():
    rng = np.random.default_rng(0)
    y = 10 + rng.normal(size=(30, 5, H))
    table = _table(_noisy(rng, y, (0.5, 0.7, 0.9, 1.1)), y)
    c = compare_runs(run_losses(table, label="p"), run_losses(table, label="q"))
    assert c.defined.all()
    np.testing.assert_allclose(c.pss_u, 0.0, atol=1e-12)
    assert not c.swap_u.any() and c.panel_pss == pytest.approx(0.0, abs=1e-12) and not c.panel_swap


def test_pss_per_series_matches_a_plain_loop_over_scipy_kendall_tau_b():
    rng = np.random.default_rng(1)
    y = 10 + rng.normal(size=(12, 6, H))
    sds = (0.5, 0.6, 0.7, 0.8, 0.9)
    ta, tb = _table(_noisy(rng, y, sds), y), _table(_noisy(rng, y, sds), y)
    c = compare_runs(run_losses(ta, label="p"), run_losses(tb, label="q"))

    def coord_losses(t, sid):  # plain loop: mean over origins of e^2 / scale_rmse^2, per step and model
        sub = t[t["series_id"] == sid]
        out = {}
        for h in range(1, H + 1):
            for m in sorted(sub["model"].unique()):
                r = sub[(sub["step"] == h) & (sub["model"] == m)]
                out[(h, m)] = float(np.mean((r["point"] - r["actual"]) ** 2 / r["scale_rmse"] ** 2))
        return out

    for u, sid in enumerate(sorted(ta["series_id"].unique())):
        la, lb = coord_losses(ta, sid), coord_losses(tb, sid)
        models = sorted({m for _, m in la})
        taus = [
            stats.kendalltau([la[(h, m)] for m in models], [lb[(h, m)] for m in models]).statistic
            for h in range(1, H + 1)
        ]
        assert c.pss_u[u] == pytest.approx(np.mean([1 - t for t in taus]), abs=1e-12)
        wins = [
            np.argmin([la[(h, m)] for m in models]) != np.argmin([lb[(h, m)] for m in models]) for h in range(1, H + 1)
        ]
        assert c.swap_u[u] == (np.mean(wins) > 0.5)


def test_a_reversed_order_on_every_coordinate_gives_pss_two_and_a_winner_swap():
    y = np.zeros((4, 3, H))
    a = {"m0": y + 1.0, "m1": y + 2.0, "m2": y + 3.0}
    b = {"m0": y + 3.0, "m1": y + 2.0, "m2": y + 1.0}
    c = compare_runs(run_losses(_table(a, y), label="p"), run_losses(_table(b, y), label="q"))
    np.testing.assert_allclose(c.pss_u, 2.0)
    assert c.swap_u.all()


def test_when_a_static_and_a_rolling_protocol_score_different_targets_then_the_pair_is_refused():
    panel = toy_panel(n_series=4, n_periods=36)
    rolling = RollingOrigin(horizon=3, stride=3, n_origins=4)
    first = rolling.origins(panel)[0].index
    static = StaticSplit(horizon=3, stride=3, boundary=first + 1, n_origins=3)
    with pytest.raises(
        TargetPairingError,
        match=r"target 20\d\d-\d\d-\d\d, step 1\) is scored by rolling but not "
        r"by static",
    ):
        check_same_targets(rolling, static, panel, labels=("rolling", "static"))
    check_same_targets(rolling, StaticSplit(horizon=3, stride=3, boundary=first, n_origins=4, embargo=2), panel)


def test_when_two_runs_differ_in_one_scored_cell_then_the_comparison_names_it():
    rng = np.random.default_rng(2)
    y = 10 + rng.normal(size=(5, 4, H))
    table = _table(_noisy(rng, y, (0.5, 0.7, 0.9)), y)
    drop = table[(table["model"] == "m1") & (table["series_id"] == "s002") & (table["step"] == 2)].index[1]
    with pytest.raises(
        TargetPairingError,
        match=r"model 'm1', series 's002', target 2020-05-01, step 2 is "
        r"scored by 'p' but not by 'q'",
    ):
        compare_runs(run_losses(table, label="p"), run_losses(table.drop(index=drop), label="q"))


def test_tost_of_the_report_matches_statsmodels_ttost_paired():
    rng = np.random.default_rng(3)
    x1, x2 = rng.gamma(2.0, 0.1, size=40), rng.gamma(2.0, 0.08, size=40)
    for low, upp in ((-0.05, 0.05), (-0.1, 0.02), (-0.01, 0.3)):
        p_sm, lower, upper = ttost_paired(x1, x2, low, upp)
        ours = tost_equivalence(x1 - x2, delta=upp, low=low)
        assert ours.p_value == pytest.approx(p_sm, rel=1e-10)
        assert ours.p_lower == pytest.approx(lower[1], rel=1e-10)
        assert ours.p_upper == pytest.approx(upper[1], rel=1e-10)


def test_borda_is_the_mean_rank_with_ties_by_name():
    out = borda({"r1": {"a": 1, "b": 2, "c": 3}, "r2": {"a": 2, "b": 1, "c": 3}, "r3": {"a": 3, "b": 1, "c": 2}})
    assert out.loc["b", "mean_rank"] == pytest.approx(4 / 3)
    assert list(out.index) == ["b", "a", "c"] and out.loc["a", "borda_rank"] == 2
    tie = borda({"r1": {"x": 1, "y": 2}, "r2": {"x": 2, "y": 1}})
    assert list(tie.index) == ["x", "y"] and (tie["borda_rank"] == 1).all()


class _FrozenYearMean(Forecaster):
    """A model with fitted state: each series' mean of the last 12 training periods, frozen at fit."""

    capabilities = Capabilities(vectorised=True, is_global=True)

    def _fit(self, history):
        self.level_ = dict(zip(history.series_ids, np.nanmean(history.values[:, -12:], axis=1), strict=False))

    def _predict(self, history, *, horizon, quantile_levels, n_samples, rng):
        level = np.array([self.level_[s] for s in history.series_ids])
        return Forecast(point=np.repeat(level[:, None], horizon, axis=1))


def _engine_runs(panel, roster):
    base = RollingOrigin(horizon=3, stride=3, n_origins=5)
    protocols = sensitivity_protocols(base, panel, static_gap=3, boundary_shifts=(-3, -1, 1, 3), refit_shift=2)
    return protocols, {name: run_losses(run(panel, p, roster).table, label=name) for name, p in protocols.items()}


def test_refit_free_local_models_rank_identically_under_every_protocol():
    """Local forecasters fit nothing, so a static split and a rolling origin hand them the same predict
    history: every displacement is exactly zero (the engine's definition of the static split)."""
    panel = toy_panel(n_series=10, n_periods=48, seed=4, ragged=False)
    roster = {"naive": instance_factory(NaiveForecaster()), "mean": instance_factory(MeanForecaster())}
    protocols, runs = _engine_runs(panel, roster)
    assert set(protocols) == {
        "rolling",
        "static",
        "static_boundary-3",
        "static_boundary-1",
        "static_boundary+1",
        "static_boundary+3",
        "rolling_embargo1",
        "rolling_embargo2",
        "rolling_refit_every2",
        "rolling_refit_every3",
    }
    assert protocols["rolling_refit_every3"].refit_every == 3 and protocols["rolling_embargo2"].embargo == 2
    rep = sensitivity_report(runs, seed=0, n_resamples=200)
    np.testing.assert_allclose(rep.comparisons["pss_mean"], 0.0, atol=1e-12)
    assert (rep.ranks["keep_share"] == 1.0).all()


def test_a_global_model_moves_the_ranking_between_static_and_rolling_and_the_report_is_complete():
    panel = toy_panel(n_series=12, n_periods=60, seed=5, ragged=False, zero_share=0.1)
    roster = {
        "naive": instance_factory(NaiveForecaster()),
        "mean": instance_factory(MeanForecaster()),
        "year": instance_factory(_FrozenYearMean()),
    }
    _, runs = _engine_runs(panel, roster)
    rep = sensitivity_report(runs, seed=0, n_resamples=200)
    between = rep.comparisons.query("kind == 'between'").iloc[0]
    assert between["pss_mean"] > 0  # the frozen global fit reorders some series
    assert 0.0 <= between["pss_ci_low"] <= between["pss_mean"] <= between["pss_ci_high"] <= 2.0
    assert set(rep.attribution["protocol"]) == {"static", "rolling"}
    assert rep.resolution == pytest.approx(4 / (3 * 2 * 3))
    # the attribution's TOST is the paired TOST of between vs mean within PSS
    row = rep.attribution.set_index("protocol").loc["static"]
    static_within = [c for c in runs if c.startswith("static_")]
    assert row["n_references"] == len(static_within)
    b_u = compare_runs(runs["rolling"], runs["static"]).pss_u
    n_u = np.mean([compare_runs(runs["static"], runs[c]).pss_u for c in static_within], axis=0)
    p_sm = ttost_paired(b_u, n_u, -rep.resolution, rep.resolution)[0]
    assert row["tost_p"] == pytest.approx(p_sm, rel=1e-10)
    assert row["diff_mean"] == pytest.approx(np.mean(b_u - n_u))
    assert rep.tost.p_value == pytest.approx(
        ttost_paired(b_u, np.zeros_like(b_u), -rep.resolution, rep.resolution)[0], rel=1e-10
    )
    assert set(rep.ranks.columns) >= {"rolling", "static", "mean_rank", "borda_rank", "keep_share", "rank_min"}


def test_sensitivity_runs_backtests_and_reduces_every_protocol_as_the_manual_path_does():
    panel = toy_panel(n_series=6, n_periods=48, seed=6, ragged=False)
    roster = {"naive": instance_factory(NaiveForecaster()), "year": instance_factory(_FrozenYearMean())}
    _, manual = _engine_runs(panel, roster)
    runs = sensitivity_runs(panel, RollingOrigin(horizon=3, stride=3, n_origins=5), roster)
    assert list(runs) == list(manual)
    for name in runs:
        np.testing.assert_array_equal(runs[name].cells, manual[name].cells)
        np.testing.assert_allclose(runs[name].coord, manual[name].coord, rtol=0, atol=0)


def test_the_record_carries_every_run_and_model_with_plain_values():
    panel = toy_panel(n_series=8, n_periods=60, seed=7, ragged=False, zero_share=0.1)
    roster = {"naive": instance_factory(NaiveForecaster()), "year": instance_factory(_FrozenYearMean())}
    protocols, runs = _engine_runs(panel, roster)
    rec = sensitivity_record(
        sensitivity_report(runs, seed=0, n_resamples=100),
        runs={n: str(p.describe()) for n, p in protocols.items()},
        fitted=fitted_state(roster),
    )
    assert rec["fitted_state"] == {"naive": False, "year": True}
    assert [r["name"] for r in rec["runs"]] == list(protocols)
    assert {r["model"] for r in rec["ranks"]} == {"naive", "year"}
    assert all(set(r["ranks"]) == set(protocols) for r in rec["ranks"])
    assert len(rec["comparisons"]) == len(protocols) - 1 and rec["tost"]["high"] == rec["resolution"]


def test_fitted_state_tells_refit_free_models_from_models_that_learn_when_fitted():
    from tycheon.backtest.factories import forecaster_factory

    state = fitted_state(
        {
            "naive": instance_factory(NaiveForecaster()),
            "year": instance_factory(_FrozenYearMean()),
            "ses": forecaster_factory("ses"),
            "opaque": lambda history, fit_time: None,
        }
    )
    assert state == {"naive": False, "year": True, "ses": False, "opaque": True}


# --- the audit's report, step by step and after aggregation (issue 36) ------------------------------------------


def _fitted_runs():
    panel = toy_panel(n_series=12, n_periods=60, seed=5, ragged=False, zero_share=0.1)
    roster = {
        "naive": instance_factory(NaiveForecaster()),
        "mean": instance_factory(MeanForecaster()),
        "year": instance_factory(_FrozenYearMean()),
    }
    return _engine_runs(panel, roster)[1]


def test_pss_by_horizon_is_the_mean_one_minus_scipys_tau_b_at_each_step():
    runs = _fitted_runs()
    rep = sensitivity_report(runs, seed=0, n_resamples=200)
    a, b = runs["rolling"].coord, runs["static"].coord  # [series, step, model]
    assert list(rep.by_horizon["step"]) == list(range(1, a.shape[1] + 1))
    for h in range(a.shape[1]):
        taus = [stats.kendalltau(a[u, h], b[u, h], variant="b").statistic for u in range(a.shape[0])]
        disp = np.array([1.0 - t for t in taus if np.isfinite(t)])
        row = rep.by_horizon.iloc[h]
        assert row["n_series"] == disp.size
        assert row["pss_mean"] == pytest.approx(disp.mean(), abs=1e-12)
        assert row["pss_ci_low"] <= row["pss_mean"] <= row["pss_ci_high"]
        differs = [np.argmin(a[u, h]) != np.argmin(b[u, h]) for u in range(a.shape[0]) if np.isfinite(taus[u])]
        assert row["swap_share"] == pytest.approx(np.mean(differs), abs=1e-12)
    # the steps' displacements average to the per-series PSS when every coordinate is defined
    between = rep.comparisons.query("kind == 'between'").iloc[0]
    assert rep.by_horizon["pss_mean"].mean() == pytest.approx(between["pss_mean"], abs=1e-12)
    assert (rep.by_horizon["within_pss_mean"] >= 0).all()


def _plain_aggregated_reversal(runs, subset, reference):
    """Hard-reversal share after Borda aggregation of ``subset``, written as plain loops (the oracle)."""
    ref = runs[reference].coord
    n_s, n_h, _ = ref.shape
    models = runs[reference].models
    reversals = []
    for u in range(n_s):
        differ, defined = 0, 0
        for h in range(n_h):
            if np.ptp(ref[u, h]) == 0:
                continue
            defined += 1
            mean_rank = np.mean([stats.rankdata(runs[n].coord[u, h], method="min") for n in subset], axis=0)
            best = min(range(len(models)), key=lambda m: (mean_rank[m], models[m]))  # ties by model name
            differ += best != int(np.argmin(ref[u, h]))
        if defined:
            reversals.append(differ / defined > 0.5)
    return float(np.mean(reversals))


def test_aggregation_curves_match_the_plain_loop_and_start_at_the_single_run_winner_swap():
    from itertools import combinations

    runs = _fitted_runs()
    rep = sensitivity_report(runs, seed=0, n_resamples=200)
    curves = rep.aggregation
    static_arm = sorted(n for n in runs if n.startswith("static"))
    rolling_arm = sorted(n for n in runs if not n.startswith("static"))
    assert set(curves["curve"]) == {"static_arm", "rolling_arm"}
    for curve, arm, reference in (("static_arm", static_arm, "rolling"), ("rolling_arm", rolling_arm, "static")):
        mine = curves[curves["curve"] == curve].set_index("k")
        assert list(mine.index) == list(range(1, len(arm) + 1))
        for k in mine.index:
            shares = [_plain_aggregated_reversal(runs, c, reference) for c in combinations(arm, k)]
            assert mine.loc[k, "exhaustive"] and mine.loc[k, "n_subsets"] == len(shares)
            assert mine.loc[k, "prevalence_mean"] == pytest.approx(np.mean(shares), abs=1e-12)
            assert mine.loc[k, "prevalence_min"] == pytest.approx(min(shares), abs=1e-12)
            assert mine.loc[k, "prevalence_max"] == pytest.approx(max(shares), abs=1e-12)
    # one run of the static arm, the static reference itself, is the between contrast's winner swap
    between = rep.comparisons.query("kind == 'between'").iloc[0]
    assert _plain_aggregated_reversal(runs, ["static"], "rolling") == pytest.approx(between["swap_share"])


def test_aggregation_draws_subsets_at_random_where_there_are_too_many_and_is_seeded():
    from tycheon.analysis.sensitivity_report import aggregation_curves

    runs = _fitted_runs()
    a = aggregation_curves(runs, n_draws=3, seed=1)
    b = aggregation_curves(runs, n_draws=3, seed=1)
    pd.testing.assert_frame_equal(a, b)
    five = a[(a["curve"] == "static_arm") & (a["k"] == 2)].iloc[0]  # C(5, 2) = 10 subsets > 3 draws
    assert not five["exhaustive"] and five["n_subsets"] == 3
    assert five["prevalence_min"] <= five["prevalence_mean"] <= five["prevalence_max"]
