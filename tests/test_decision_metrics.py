"""Decision metrics (issue 35) against independent oracles: the band-grid quantile against ``np.interp`` row
by row, the scaled pinball losses against a plain loop, the band CRPS against ``row_crps``, the per-series
relative error against a plain loop, the skill interval's coverage under a null with a shock shared by every
series, and constructed leaderboards for the zero-forecast flag, the pooled WAPE, the ranking on the size of
the scaled bias, the runner-up test and the winner without the largest blocks."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests._analysis_support import HORIZON, score_table, spec
from tycheon.analysis.headline import HEADLINE_POINT, HEADLINE_REASONS, headline_metrics
from tycheon.analysis.leaderboard import leaderboard_tables
from tycheon.analysis.relative import CLIP, relative_to_reference
from tycheon.metrics._kernels import grid_quantile
from tycheon.metrics.aggregate import block_scores, row_crps
from tycheon.metrics.registry import BAND_GRID, METRICS, SERVICE_LEVELS, glossary
from tycheon.stats.dm import dm_panel

LEVELS = np.asarray(BAND_GRID[0])


def _with_bands(table: pd.DataFrame, width: float = 0.1) -> pd.DataFrame:
    out = table.copy()
    w = np.abs(out["point"]) * width + 1.0
    out["lo80"], out["hi80"] = out["point"] - w, out["point"] + w
    out["lo95"], out["hi95"] = out["point"] - 2.0 * w, out["point"] + 2.0 * w
    out["has_band"] = True
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=5, max_size=5),
    st.floats(0.025, 0.975),
)
def test_grid_quantile_is_the_interpolated_quantile_function_of_the_sorted_row(values, tau):
    row = np.asarray(values)
    got = grid_quantile(row[None, :], LEVELS, tau)[0]
    want = np.interp(tau, LEVELS, np.sort(row))  # the oracle: numpy's piecewise-linear interpolation
    assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-9)


def test_grid_quantile_is_exact_on_the_grid_nan_outside_it_and_for_a_row_with_a_nan():
    v = np.array([[1.0, 2.0, 3.0, 4.0, 5.0], [1.0, np.nan, 3.0, 4.0, 5.0]])
    assert grid_quantile(v, LEVELS, 0.9)[0] == 4.0
    assert grid_quantile(v, LEVELS, 0.5)[0] == 3.0
    assert np.isnan(grid_quantile(v, LEVELS, 0.9)[1])
    assert np.isnan(grid_quantile(v, LEVELS, 0.99)).all()


def _toy(seed: int = 0) -> pd.DataFrame:
    return _with_bands(
        score_table({"series": 6}, ["rw", "base", "a"], lambda u, m, r, sh: r.normal(0, 3, sh), n_origins=8, seed=seed)
    )


def test_scaled_pinball_losses_match_a_plain_loop_on_the_band_grid():
    t = _toy()
    t["scale_mae"] = 1.0 + (t["series_id"].str[1:].astype(int) % 3)  # scales that differ by series
    b = block_scores(t, metrics=[f"spl{round(q * 100):02d}" for q in SERVICE_LEVELS]).set_index(
        ["model", "series_id", "origin"]
    )
    for (m, s, o), g in t.groupby(["model", "series_id", "origin"]):
        for tau in SERVICE_LEVELS:
            losses = []
            for _, r in g.iterrows():
                grid = sorted([r["lo95"], r["lo80"], r["point"], r["hi80"], r["hi95"]])
                q = float(np.interp(tau, LEVELS, grid))
                u = r["actual"] - q
                losses.append(max(tau * u, (tau - 1.0) * u))
            want = sum(losses) / len(losses) / g["scale_mae"].iloc[0]
            assert math.isclose(b.loc[(m, s, o), f"spl{round(tau * 100):02d}"], want, rel_tol=1e-12)


def test_spl50_is_half_the_mase_and_the_band_crps_is_row_crps_over_the_mae_scale():
    t = _toy(1)
    b = block_scores(t, metrics=["mase", "spl50", "crps_band"])
    assert np.allclose(b["spl50"], b["mase"] / 2.0, rtol=1e-12)
    crps = row_crps(t, crps_kind="band_quantiles", band_level=95).values
    want = (
        pd.DataFrame({"k": list(zip(t["model"], t["series_id"], t["origin"], strict=True)), "c": crps / t["scale_mae"]})
        .groupby("k", sort=False)["c"]
        .mean()
    )
    got = b.set_index(pd.Index(list(zip(b["model"], b["series_id"], b["origin"], strict=True))))["crps_band"]
    assert np.allclose(got.loc[want.index].to_numpy(), want.to_numpy(), rtol=1e-12)


def test_a_step_with_only_the_80_band_is_read_on_its_three_point_grid():
    t = _toy(2)
    t["lo95"] = np.nan
    t["hi95"] = np.nan
    b = block_scores(t, metrics=["spl80", "spl90", "spl95", "crps_band"])
    g = t.assign(
        q8=t["point"] + 0.75 * (t["hi80"] - t["point"]),  # 0.8 on the line from (0.5, point) to (0.9, hi80)
    )
    u8, u9 = g["actual"] - g["q8"], g["actual"] - g["hi80"]
    g["p8"], g["p9"] = np.maximum(0.8 * u8, -0.2 * u8), np.maximum(0.9 * u9, -0.1 * u9)
    g["c"] = row_crps(t, crps_kind="band_quantiles", band_level=80).values  # the three-point grid's CRPS
    want = g.groupby(["model", "series_id", "origin"], sort=False)[["p8", "p9", "c"]].mean().reset_index()
    got = b.merge(want, on=["model", "series_id", "origin"])
    assert len(got) == len(b)
    assert np.allclose(got["spl80"], got["p8"], rtol=1e-12) and np.allclose(got["spl90"], got["p9"], rtol=1e-12)
    assert np.allclose(got["crps_band"], got["c"], rtol=1e-12)
    assert b["spl95"].isna().all()  # no 0.95 quantile without the 95% band: not extrapolated


def test_every_metric_states_what_it_elicits_and_the_glossary_carries_it():
    assert METRICS["rmsse"].elicits == "mean" and METRICS["mase"].elicits == "median"
    assert METRICS["spl90"].elicits == "the 0.9-quantile"
    assert METRICS["scaled_bias"].ranked and not METRICS["scaled_bias"].tested
    assert METRICS["wape"].rank_by == "pooled"
    rows = {g["name"]: g for g in glossary()}
    assert all(rows[n]["elicits"] for n in METRICS if METRICS[n].ranked)


def _wide(values: dict[str, np.ndarray], n_series: int, n_origins: int) -> pd.DataFrame:
    idx = pd.MultiIndex.from_product(
        [[f"s{i:02d}" for i in range(n_series)], pd.date_range("2020-01-01", periods=n_origins, freq="MS")],
        names=["series_id", "origin"],
    )
    return pd.DataFrame({m: v.reshape(-1) for m, v in values.items()}, index=idx)


def test_relative_error_is_the_geometric_mean_of_per_series_ratios_of_summed_errors():
    rng = np.random.default_rng(3)
    rw = rng.gamma(2.0, 1.0, (5, 8))
    a = rng.gamma(2.0, 1.0, (5, 8))
    a[0, :] = 0.0  # a series with no error at all: clipped to the hundredfold win
    a[1, 3] = np.nan  # a missing block: left out of both sums
    rel = relative_to_reference(_wide({"rw": rw, "a": a}, 5, 8), reference="rw", horizon=HORIZON, stride=HORIZON)
    logs = []
    for s in range(5):
        keep = ~np.isnan(a[s])
        num, den = a[s][keep].sum(), rw[s][keep].sum()
        logs.append(math.log(min(max(num / den, CLIP[0]), CLIP[1])))
    assert math.isclose(rel["a"].gmean, math.exp(sum(logs) / 5), rel_tol=1e-12)
    assert rel["a"].n_clipped == 1 and rel["a"].n_blocks == 39
    assert rel["rw"].gmean == 1.0 and rel["rw"].skill == 0.0
    assert rel["a"].skill_low is not None and rel["a"].skill_low <= rel["a"].skill <= rel["a"].skill_high


def test_relative_error_of_zero_against_zero_is_a_tie_and_a_short_panel_has_no_interval():
    rw = np.ones((3, 4))
    rw[0] = 0.0
    a = np.ones((3, 4))
    a[0] = 0.0
    rel = relative_to_reference(_wide({"rw": rw, "a": a}, 3, 4), reference="rw", horizon=HORIZON, stride=HORIZON)
    assert rel["a"].gmean == 1.0 and rel["a"].n_clipped == 0
    assert rel["a"].skill_low is None and "scored origin" in (rel["a"].reason or "")


@pytest.mark.slow
def test_the_skill_interval_covers_no_skill_under_a_shock_shared_by_every_series():
    """Two equally good models whose errors share a calendar shock (rho 0.5 across series): the 95% interval
    of the skill must cover 0 in about 95% of panels (asserted: at least 90%), where an interval that
    resampled series would cover it far less often."""
    n_panels, n_series, n_origins, covered = 200, 60, 12, 0
    rng = np.random.default_rng(11)
    for k in range(n_panels):
        shock = rng.normal(0.0, 1.0, (2, 1, n_origins))
        noise = rng.normal(0.0, 1.0, (2, n_series, n_origins))
        e = np.exp(0.4 * (np.sqrt(0.5) * shock + np.sqrt(0.5) * noise))  # positive errors, equal in law
        rel = relative_to_reference(
            _wide({"rw": e[0], "a": e[1]}, n_series, n_origins), reference="rw", horizon=1, stride=1, seed=k
        )["a"]
        covered += rel.skill_low <= 0.0 <= rel.skill_high
    assert covered / n_panels >= 0.90


def _board(metrics: tuple[str, ...], error, *, n_series: int = 12, **kw) -> list[dict]:
    t = _with_bands(score_table({"series": n_series}, ["rw", "base", "a", "b"], error, n_origins=8))
    for fn in kw.values():
        t = fn(t)
    return leaderboard_tables(t, spec=spec(metrics=metrics, min_cell=10))


def _table(boards: list[dict], metric: str) -> dict:
    return next(e for e in boards if e["metric"] == metric and e["demand_class"] == "all")


def test_a_model_that_forecasts_zero_is_flagged_with_its_share():
    def error(u, m, r, sh):
        return r.normal(0, 2, sh)

    def zero_b(t):
        t.loc[t["model"] == "b", "point"] = 0.0
        return t

    lb = _table(_board(("mase",), error, zero=zero_b), "mase")
    rows = {r["model"]: r for r in lb["rows"]}
    assert rows["b"]["zero_forecast_share"] == 1.0 and rows["b"]["zero_forecast_flag"] is True
    assert rows["a"]["zero_forecast_share"] == 0.0 and rows["a"]["zero_forecast_flag"] is False


def test_wape_ranks_on_its_ratio_pooled_over_the_cell():
    def error(u, m, r, sh):
        return {"rw": 3.0, "base": 2.0, "a": 1.0, "b": 1.5}[m] * r.normal(0, 1, sh)

    t = _with_bands(score_table({"series": 12}, ["rw", "base", "a", "b"], error, n_origins=8))
    lb = _table(leaderboard_tables(t, spec=spec(metrics=("wape",), min_cell=10)), "wape")
    for r in lb["rows"]:
        g = t[t["model"] == r["model"]]
        assert math.isclose(
            r["pooled"], (g["point"] - g["actual"]).abs().sum() / g["actual"].abs().sum(), rel_tol=1e-12
        )
    assert [r["model"] for r in lb["rows"]] == sorted(
        (r["model"] for r in lb["rows"]), key=lambda m: next(x["pooled"] for x in lb["rows"] if x["model"] == m)
    )
    assert lb["tests"]["ranking"] == "pooled"


def test_scaled_bias_ranks_on_the_size_of_the_mean_and_has_no_dm_test():
    def error(u, m, r, sh):
        return {"rw": 2.0, "base": -1.0, "a": 0.2, "b": -0.5}[m] + r.normal(0, 0.1, sh)

    lb = _table(_board(("scaled_bias",), error), "scaled_bias")
    assert [r["model"] for r in lb["rows"]] == ["a", "b", "base", "rw"]
    assert lb["rows"][2]["mean"] < 0  # the sign is kept
    assert all(r["dm_p"] is None for r in lb["rows"])


def test_one_huge_block_cannot_decide_the_headline_and_the_trimmed_winner_says_when_it_would():
    def error(u, m, r, sh):
        return {"rw": 3.0, "base": 2.5, "a": 1.0, "b": 1.2}[m] * (1.0 + 0.1 * r.standard_normal(sh))

    def blow_up(t):  # model a is best on every block but one, where its error is enormous
        hit = (t["model"] == "a") & (t["series_id"] == "s0") & (t["origin"] == t["origin"].min())
        t.loc[hit, "point"] = t.loc[hit, "actual"] + 1e4
        return t

    # one series can move the geometric mean over S series by at most log(100) / S: with 60 series less than
    # a's edge over b, log(1.2)
    boards = _board(("rmsse", "wape"), error, n_series=60, blow=blow_up)
    lb = _table(boards, "rmsse")
    by = {r["model"]: r for r in lb["rows"]}
    assert by["a"]["mean"] > by["b"]["mean"]  # the arithmetic mean is decided by the one block
    assert lb["winner"] == "a" and lb["tests"]["winner_trimmed"] == "a"  # the geometric mean is not
    assert lb["tests"]["winner_trimmed_differs"] is False
    wape = _table(boards, "wape")  # a pooled ratio is: its winner differs once the block is removed
    assert wape["winner"] == "b" and wape["tests"]["winner_trimmed"] == "a"
    assert wape["tests"]["winner_trimmed_differs"] is True


def test_the_runner_up_test_is_the_panel_dm_test_of_the_two():
    def error(u, m, r, sh):
        return {"rw": 3.0, "base": 2.5, "a": 1.0, "b": 1.05}[m] * r.normal(0, 1, sh)

    t = _with_bands(score_table({"series": 12}, ["rw", "base", "a", "b"], error, n_origins=8))
    lb = _table(leaderboard_tables(t, spec=spec(metrics=("rmsse",), min_cell=10)), "rmsse")
    w, ru = lb["winner"], lb["tests"]["runner_up"]
    ga = t[t["model"] == w].sort_values(["series_id", "origin", "step"])
    gb = t[t["model"] == ru].sort_values(["series_id", "origin", "step"])
    res = dm_panel(
        ((ga["point"] - ga["actual"]) ** 2).to_numpy(),
        ((gb["point"] - gb["actual"]) ** 2).to_numpy(),
        origin=ga["origin"].to_numpy(),
        horizon=HORIZON,
        stride=HORIZON,
    )
    assert math.isclose(lb["tests"]["runner_up_p"], res.p_value, rel_tol=1e-9)
    assert lb["tests"]["runner_up_tied"] == (res.p_value >= 0.05)
    lower = None if res.p_value >= 0.05 else (w if res.statistic < 0 else ru)
    assert lb["tests"]["runner_up_lower_loss"] == lower


def test_headline_is_rmsse_with_the_service_level_beside_it_and_says_why():
    assert headline_metrics("intermittent", ["rmsse", "mase", "spl90"]) == ("rmsse", "spl90", False)
    assert headline_metrics("lumpy", ["mase", "wape"]) == ("mase", None, True)
    assert set(HEADLINE_POINT) == set(HEADLINE_REASONS)
    assert "zero" in HEADLINE_REASONS["intermittent"]
