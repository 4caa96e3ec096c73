"""CRPS, pinball, PIT, reliability and interval scores: pinned against properscoring 0.1 and
scoringrules 0.10, closed forms, plain loops and properties."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats

from tycheon.backtest.scoreset import quantile_column
from tycheon.errors import InputError
from tycheon.metrics import (
    CRPSKindMismatchError,
    block_scores,
    coverage,
    crps_difference,
    crps_ensemble,
    crps_quantiles,
    interval_score,
    interval_width,
    mean_crps,
    msis,
    pinball_loss,
    pit_from_quantiles,
    pit_from_samples,
    quantile_reliability,
    summarize,
)


@pytest.mark.slow
def test_when_samples_are_scored_then_fair_crps_matches_scoringrules_and_plain_matches_properscoring():
    import properscoring as ps
    import scoringrules as sr

    rng = np.random.default_rng(0)
    y = rng.normal(size=50)
    x = rng.normal(0.3, 1.2, size=(50, 40))
    fair = crps_ensemble(actual=y, samples=x, fair=True)
    plain = crps_ensemble(actual=y, samples=x, fair=False)
    assert fair.kind == "exact_samples"
    np.testing.assert_allclose(fair.values, sr.crps_ensemble(y, x, estimator="fair"), rtol=1e-10)
    np.testing.assert_allclose(plain.values, ps.crps_ensemble(y, x), rtol=1e-10)


def test_when_computed_by_a_double_loop_then_the_sorted_identity_agrees():
    rng = np.random.default_rng(1)
    y = rng.normal(size=6)
    x = rng.normal(size=(6, 7))
    got = crps_ensemble(actual=y, samples=x).values
    for i in range(6):
        m = x.shape[1]
        t1 = sum(abs(v - y[i]) for v in x[i]) / m
        t2 = sum(abs(a - b) for a, b in itertools.product(x[i], x[i])) / (2 * m * (m - 1))
        assert got[i] == pytest.approx(t1 - t2, rel=1e-12)


def test_when_quantiles_are_dense_then_trapezoid_crps_approaches_the_normal_closed_form():
    import properscoring as ps

    levels = np.linspace(0.0005, 0.9995, 1999)
    y = np.array([-1.3, 0.0, 0.4, 2.2])
    q = np.tile(stats.norm.ppf(levels), (4, 1))
    approx = crps_quantiles(actual=y, quantiles=q, levels=levels)
    assert approx.kind == "approx_quantiles"
    exact = ps.crps_gaussian(y, mu=0.0, sig=1.0)  # Gneiting & Raftery (2007) closed form
    np.testing.assert_allclose(approx.values, exact, atol=2e-3)
    assert np.all(approx.values <= exact + 1e-9)  # omitted tails: biased low


def test_when_few_quantiles_then_crps_is_the_trapezoid_of_pinball_from_scoringrules():
    import scoringrules as sr

    levels = np.array([0.1, 0.25, 0.5, 0.75, 0.9])
    rng = np.random.default_rng(2)
    y = rng.normal(size=8)
    q = np.sort(rng.normal(size=(8, 5)), axis=1)
    pin = np.stack([sr.quantile_score(y, q[:, k], levels[k]) for k in range(5)], axis=1)
    np.testing.assert_allclose(pinball_loss(actual=y, quantiles=q, levels=levels), pin, rtol=1e-12)
    expected = 2 * np.trapezoid(pin, levels, axis=1)
    np.testing.assert_allclose(crps_quantiles(actual=y, quantiles=q, levels=levels).values, expected, rtol=1e-12)


def test_when_crps_kinds_are_mixed_then_comparison_is_refused():
    rng = np.random.default_rng(3)
    y = rng.normal(size=5)
    exact = crps_ensemble(actual=y, samples=rng.normal(size=(5, 20)))
    approx = crps_quantiles(actual=y, quantiles=np.sort(rng.normal(size=(5, 3)), axis=1), levels=[0.1, 0.5, 0.9])
    with pytest.raises(CRPSKindMismatchError, match="ADR-0006"):
        crps_difference(exact, approx)
    with pytest.raises(CRPSKindMismatchError):
        mean_crps(exact, approx)
    np.testing.assert_allclose(crps_difference(exact, exact), 0.0)
    blocks = pd.DataFrame({"model": ["a", "b"], "unit": "series", "crps": [1.0, 2.0],
                           "crps_kind": ["exact_samples", "approx_quantiles"]})  # fmt: skip
    with pytest.raises(CRPSKindMismatchError):
        summarize(blocks, metrics=("crps",))


def test_when_the_score_set_has_samples_or_quantiles_then_block_crps_uses_one_kind():
    levels = (0.1, 0.5, 0.9)
    rng = np.random.default_rng(4)
    n = 12
    table = pd.DataFrame({
        "model": "m", "unit": "series", "series_id": np.repeat(["a", "b"], 6),
        "origin": np.tile(np.repeat(pd.to_datetime(["2020-01-01", "2020-04-01"]), 3), 2),
        "step": np.tile([1, 2, 3], 4), "actual": rng.normal(size=n), "point": 0.0,
        "scale_mae": 1.0, "scale_rmse": 1.2,
    })  # fmt: skip
    q = np.sort(rng.normal(size=(n, 3)), axis=1)
    for k, lv in enumerate(levels):
        table[quantile_column(lv)] = q[:, k]
    samples = rng.normal(size=(n, 30))
    approx = block_scores(table, metrics=("crps",), quantile_levels=levels)
    exact = block_scores(table, metrics=("crps",), samples=samples)
    assert set(approx.crps_kind) == {"approx_quantiles"} and set(exact.crps_kind) == {"exact_samples"}
    rows = crps_quantiles(actual=table.actual, quantiles=q, levels=levels).values
    np.testing.assert_allclose(approx["crps"], rows.reshape(4, 3).mean(axis=1))
    rows = crps_ensemble(actual=table.actual, samples=samples).values
    np.testing.assert_allclose(exact["crps"], rows.reshape(4, 3).mean(axis=1))


@settings(max_examples=60, deadline=None)
@given(
    y=st.floats(-100, 100),
    x=arrays(np.float64, st.integers(2, 12), elements=st.floats(-100, 100)),
)
def test_property_crps_is_nonnegative_and_zero_for_a_perfect_point_mass(y, x):
    scale = 1e-9 * (1.0 + abs(y) + np.abs(x).max())
    assert crps_ensemble(actual=[y], samples=x[None, :], fair=False).values[0] >= -scale
    # the fair estimator too: sum_{i<j}|x_i - x_j| <= (m - 1) sum_i |x_i - y| (triangle inequality)
    assert crps_ensemble(actual=[y], samples=x[None, :], fair=True).values[0] >= -scale
    assert crps_ensemble(actual=[y], samples=np.full((1, x.size), y)).values[0] == pytest.approx(0.0, abs=1e-9)
    q = np.sort(x)[None, :3] if x.size >= 3 else np.sort(np.r_[x, x])[None, :3]
    assert crps_quantiles(actual=[y], quantiles=q, levels=[0.1, 0.5, 0.9]).values[0] >= 0.0
    assert crps_quantiles(actual=[y], quantiles=[[y, y, y]], levels=[0.1, 0.5, 0.9]).values[0] == 0.0


def test_when_forecasts_are_calibrated_then_pit_is_uniform_and_quantiles_reliable():
    rng = np.random.default_rng(5)
    y = rng.normal(size=4000)
    pit = pit_from_samples(actual=y, samples=rng.normal(size=(4000, 200)))
    assert stats.kstest(pit, "uniform").pvalue > 0.01
    levels = np.array([0.1, 0.25, 0.5, 0.75, 0.9])
    q = np.tile(stats.norm.ppf(levels), (4000, 1))
    np.testing.assert_allclose(quantile_reliability(actual=y, quantiles=q, levels=levels), levels, atol=0.03)
    pq = pit_from_quantiles(actual=y, quantiles=q, levels=levels)
    hist = np.histogram(pq, bins=np.r_[0.0, levels, 1.0])[0] / y.size
    np.testing.assert_allclose(hist, np.diff(np.r_[0.0, levels, 1.0]), atol=0.03)
    # interpolation between knots, and the tail midpoints
    got = pit_from_quantiles(actual=[0.5, -9.0, 9.0], quantiles=[[0, 1, 2]] * 3, levels=[0.2, 0.5, 0.8])
    np.testing.assert_allclose(got, [0.35, 0.1, 0.9])
    assert pit_from_samples(actual=[1.0], samples=[[0.0, 1.0, 2.0, 3.0]])[0] == pytest.approx(0.375)


def test_when_intervals_are_scored_then_msis_matches_scoringrules_interval_score():
    import scoringrules as sr

    rng = np.random.default_rng(6)
    y = rng.normal(size=(5, 6))
    lo = rng.normal(-1, 0.3, size=(5, 6))
    hi = lo + rng.gamma(2.0, 0.5, size=(5, 6))
    scale = rng.gamma(2.0, 1.0, size=5)
    ref = sr.interval_score(y, lo, hi, 0.05)  # Gneiting & Raftery (2007) eq. (43)
    np.testing.assert_allclose(interval_score(actual=y, lower=lo, upper=hi, alpha=0.05), ref, rtol=1e-12)
    # M4 MSIS: mean interval score over the horizon / in-sample seasonal-naive MAE.
    # (utilsforecast 0.2.17 has no msis; the reference is scoringrules' interval score.)
    got = msis(actual=y, lower=lo, upper=hi, alpha=0.05, scale=scale)
    np.testing.assert_allclose(got, ref.mean(axis=1) / scale, rtol=1e-12)
    np.testing.assert_allclose(coverage(actual=y, lower=lo, upper=hi), ((lo <= y) & (y <= hi)).mean(axis=1))
    np.testing.assert_allclose(interval_width(actual=y, lower=lo, upper=hi), (hi - lo).mean(axis=1))


def test_when_probabilistic_inputs_are_bad_then_errors_say_what():
    with pytest.raises(InputError, match="strictly increasing"):
        crps_quantiles(actual=[0.0], quantiles=[[0.0, 1.0]], levels=[0.9, 0.1])
    with pytest.raises(InputError, match="at least 2 samples"):
        crps_ensemble(actual=[0.0], samples=[[1.0]])
    with pytest.raises(InputError, match="lower > upper"):
        interval_score(actual=[0.0], lower=[1.0], upper=[0.0], alpha=0.1)
    with pytest.raises(InputError, match="alpha"):
        interval_score(actual=[0.0], lower=[0.0], upper=[1.0], alpha=1.5)
    with pytest.raises(InputError, match="non-finite"):
        crps_ensemble(actual=[np.nan], samples=[[1.0, 2.0]])


def test_when_a_block_has_quantiles_on_some_steps_only_then_its_crps_and_coverage_are_missing_not_partial():
    levels = (0.1, 0.9)
    table = pd.DataFrame({
        "model": "m", "unit": "series", "series_id": ["a"] * 3 + ["b"] * 3, "origin": 0, "step": [1, 2, 3] * 2,
        "actual": 1.0, "point": 1.0, "scale_mae": 1.0, "scale_rmse": 1.0,
        "q0.1": [0.0, np.nan, 0.0, 0.0, 0.0, 0.0], "q0.9": 2.0,
        "lo80": [0.0, 0.0, 0.0, np.nan, 0.0, 0.0], "hi80": 2.0, "lo95": -1.0, "hi95": 3.0,
    })  # fmt: skip
    blocks = block_scores(table, metrics=("crps", "coverage80", "msis95"), quantile_levels=levels).set_index(
        "series_id"
    )
    assert np.isnan(blocks.loc["a", "crps"]) and np.isfinite(blocks.loc["b", "crps"])
    assert blocks.loc["a", "coverage80"] == 1.0 and np.isnan(blocks.loc["b", "coverage80"])
    assert blocks["crps_kind"].tolist() == [None, "approx_quantiles"]
    assert np.isfinite(blocks["msis95"]).all()


def test_when_the_actual_sits_on_a_knot_then_pit_is_that_knots_level():
    # the interpolated CDF passes through every knot (q_k, tau_k), the outermost ones included
    got = pit_from_quantiles(actual=[0.0, 1.0, 2.0], quantiles=[[0.0, 1.0, 2.0]] * 3, levels=[0.2, 0.5, 0.8])
    np.testing.assert_allclose(got, [0.2, 0.5, 0.8])
    # tied knots at y: the CDF at y is the largest level whose quantile is <= y
    tied = pit_from_quantiles(actual=[2.0], quantiles=[[0.0, 2.0, 2.0]], levels=[0.2, 0.5, 0.8])
    np.testing.assert_allclose(tied, [0.8])


def test_when_crps_kind_is_unknown_then_it_is_refused_not_computed_as_another_kind():
    levels = (0.1, 0.9)
    table = pd.DataFrame({"model": "m", "unit": "series", "series_id": "a", "origin": 0, "step": [1, 2],
                          "actual": 1.0, "point": 1.0, "scale_mae": 1.0, "scale_rmse": 1.0,
                          "q0.1": 0.0, "q0.9": 2.0})  # fmt: skip
    with pytest.raises(InputError, match="crps_kind must be 'exact_samples', 'approx_quantiles' or 'band_quantiles'"):
        block_scores(table, metrics=("crps",), quantile_levels=levels, crps_kind="exact")


def test_band_quantile_crps_reads_the_bands_on_one_grid_and_is_nan_where_a_band_is_missing():
    from tycheon.metrics.aggregate import row_crps

    rng = np.random.default_rng(5)
    n = 40
    point = rng.normal(10, 2, n)
    table = pd.DataFrame(
        {
            "actual": rng.normal(10, 2, n),
            "point": point,
            "lo80": point - 2.0,
            "hi80": point + 2.5,
            "lo95": point - 3.5,
            "hi95": point + 4.0,
        }
    )
    table.loc[3, "lo95"] = np.nan  # this row has an 80% band only
    got95 = row_crps(table, crps_kind="band_quantiles", band_level=95)
    cols = ["lo95", "lo80", "point", "hi80", "hi95"]
    ok = table[cols].notna().all(axis=1).to_numpy()
    ref = crps_quantiles(
        actual=table["actual"].to_numpy()[ok],
        quantiles=table.loc[ok, cols].to_numpy(),
        levels=np.array([0.025, 0.1, 0.5, 0.9, 0.975]),
    ).values
    assert got95.kind == "band_quantiles" and np.isnan(got95.values[3])
    np.testing.assert_allclose(got95.values[ok], ref, rtol=1e-13)
    got80 = row_crps(table, crps_kind="band_quantiles", band_level=80)
    ref80 = crps_quantiles(
        actual=table["actual"].to_numpy(),
        quantiles=table[["lo80", "point", "hi80"]].to_numpy(),
        levels=np.array([0.1, 0.5, 0.9]),
    ).values
    np.testing.assert_allclose(got80.values, ref80, rtol=1e-13)
    with pytest.raises(InputError, match="band_level"):
        row_crps(table, crps_kind="band_quantiles", band_level=90)


# ------------------------------------ the compiled per-row quantile CRPS against the array kernel


def _awkward_rows(seed: int, n: int, k: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """Rows built to catch a different operation order: quantiles equal to the actual and to each other,
    signed zeros, tiny and huge magnitudes (overflow to inf), and missing quantiles."""
    rng = np.random.default_rng(seed)
    y = rng.choice([0.0, -0.0, 1.0, 2.5, 1e-300, 1e300], size=n) * rng.integers(0, 2, size=n)
    y = y + rng.normal(size=n) * rng.choice([0.0, 1.0, 1e-8, 1e8], size=n)
    cols = []
    for _ in range(k):
        q = np.where(rng.random(n) < 0.3, y, y + rng.normal(size=n) * rng.choice([0.0, 1.0, 1e-12, 1e12], size=n))
        q[rng.random(n) < 0.02] = np.nan
        q[rng.random(n) < 0.05] = -0.0
        q[rng.random(n) < 0.05] = 0.0
        cols.append(q)
    return y, cols


@pytest.mark.parametrize("sort", [True, False])
@pytest.mark.parametrize("levels", [(0.025, 0.1, 0.5, 0.9, 0.975), (0.1, 0.5, 0.9), (0.2, 0.8)])
def test_compiled_row_crps_has_the_array_kernels_bits(sort, levels):
    """tycheon.metrics._crps_rows repeats crps_quantile_kernel's operations in its order (numpy adds a
    row's few terms left to right, and np.maximum puts +0 over -0): every bit of every row equal,
    signed zeros and infinities included, and rows with a missing quantile left untouched."""
    from tycheon.metrics._crps_rows import quantile_crps_rows
    from tycheon.metrics._kernels import crps_quantile_kernel

    lv = np.asarray(levels)
    y, cols = _awkward_rows(len(levels) + int(sort), 200_000, len(levels))
    q = np.column_stack(cols)
    ok = np.isfinite(q).all(axis=1)
    expected = np.full(len(y), -7.0)  # a sentinel: rows without every quantile stay as they were
    qk = np.sort(q[ok], axis=1) if sort else q[ok]
    expected[ok] = crps_quantile_kernel(y[ok], qk, lv)
    got = np.full(len(y), -7.0)
    quantile_crps_rows(got, y, cols, lv, sort=sort)
    assert got.tobytes() == expected.tobytes()
    # the awkward rows are there: zero CRPS (every quantile at the actual), huge actuals, missing quantiles
    assert (expected == 0).any() and (np.abs(y[ok]) > 1e250).any() and (expected == -7.0).any()


def test_compiled_row_crps_takes_read_only_strided_and_broadcast_columns():
    """Columns as a parquet read or the engine hand them over (read-only, a strided view, one broadcast
    value) give the values of the same columns as plain arrays."""
    from tycheon.metrics._crps_rows import quantile_crps_rows

    y, cols = _awkward_rows(9, 1000, 3)
    plain = [np.ascontiguousarray(c) for c in cols]
    plain[2] = np.full(len(y), 4.0)
    readonly = plain[0].copy()
    readonly.setflags(write=False)
    strided = np.repeat(plain[1], 2)[::2]
    broadcast = np.broadcast_to(np.float64(4.0), (len(y),))
    y_readonly = y.copy()
    y_readonly.setflags(write=False)
    lv = np.array([0.1, 0.5, 0.9])
    expected, got = np.full(len(y), np.nan), np.full(len(y), np.nan)
    quantile_crps_rows(expected, y, plain, lv, sort=True)
    quantile_crps_rows(got, y_readonly, [readonly, strided, broadcast], lv, sort=True)
    assert got.tobytes() == expected.tobytes() and np.isfinite(got).any()
