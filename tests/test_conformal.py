"""Split-conformal bands (paper section 6; WP26 section 3.6): rank, publication rule, coverage."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tycheon.backtest.conformal import conformal_radius, conformal_rank
from tycheon.backtest.engine import run
from tycheon.backtest.factories import instance_factory
from tycheon.backtest.protocol import RollingOrigin
from tycheon.data.panel import Panel
from tycheon.testing.toys import ConstantForecaster, NaiveForecaster


@pytest.mark.parametrize(
    ("n", "level", "rank"), [(4, 80, 4), (3, 80, 4), (9, 80, 8), (19, 95, 19), (20, 95, 20), (18, 95, 19), (0, 80, 1)]
)
def test_conformal_rank_is_ceil_n_plus_one_times_level_in_exact_arithmetic(n, level, rank):
    assert conformal_rank(np.array([n]), level)[0] == rank
    assert rank == math.ceil(round((n + 1) * level / 100, 9))


def _loop_radius(keys, origin, avail, err, level, min_origins=0):
    """Plain-loop oracle: per row, the same key's errors published by the row's origin."""
    out = np.full(len(keys), np.nan)
    for i in range(len(keys)):
        cal = sorted(err[j] for j in range(len(keys)) if keys[j] == keys[i] and avail[j] <= origin[i])
        n = len(cal)
        k = -(-(n + 1) * level // 100)
        if k <= n and n >= min_origins:
            out[i] = cal[k - 1]
    return out


@pytest.mark.parametrize("level", [80, 95])
@pytest.mark.parametrize("min_origins", [0, 6])
def test_vectorised_radius_matches_a_plain_loop_with_publication_lags(level, min_origins):
    rng = np.random.default_rng(11)
    n_keys, n_orig = 5, 30
    keys = np.repeat(np.arange(n_keys), n_orig)
    o = np.tile(np.arange(n_orig), n_keys)
    lag = rng.integers(1, 4, size=len(keys))  # the actual is published 1-3 periods after the origin
    base = np.datetime64("2020-01-01", "ns")
    origin = base + o * np.timedelta64(1, "D")
    avail = base + (o + lag) * np.timedelta64(1, "D")
    err = rng.exponential(size=len(keys)).round(3)  # ties are possible: rank order still defined
    radius, n_cal = conformal_radius(
        keys=keys, origin=origin, available_at=avail, abs_error=err, level_percent=level, min_origins=min_origins
    )
    expected = _loop_radius(keys, origin, avail, err, level, min_origins)
    assert np.array_equal(radius, expected, equal_nan=True)
    assert np.isfinite(radius).any() and np.isnan(radius).any()


def _iid_panel(n_series=200, n_periods=50, seed=3):
    rng = np.random.default_rng(seed)
    periods = pd.date_range("2015-01-01", periods=n_periods, freq="MS")
    frame = pd.DataFrame(
        {
            "series_id": np.repeat([f"s{k:03d}" for k in range(n_series)], n_periods),
            "period": np.tile(periods, n_series),
            "value": 10.0 + rng.standard_normal(n_series * n_periods),
        }
    )
    return Panel.from_long(frame, freq="MS")


def test_when_errors_are_exchangeable_then_coverage_is_within_two_points_of_nominal():
    # iid noise around a constant, forecast by that constant: errors are exchangeable across origins, and
    # with n earlier errors the band covers with probability exactly ceil((n+1)(1-a))/(n+1) (continuous
    # errors; Lei et al. 2018, Theorem 2.1), between 1-a and 1-a+1/(n+1).
    panel = _iid_panel(n_series=100, n_periods=150)
    scores = run(
        panel,
        RollingOrigin(horizon=1, stride=1, n_origins=140),
        {"c": instance_factory(ConstantForecaster(value=10.0))},
    )
    t = scores.table
    origins = sorted(t["origin"].unique())
    n_earlier = t["origin"].map({o: i for i, o in enumerate(origins)}).to_numpy()  # h=1: all published
    actual = t["actual"].to_numpy()
    for level in (80, 95):
        lo, hi = t[f"lo{level}"].to_numpy(), t[f"hi{level}"].to_numpy()
        has = np.isfinite(lo)
        covered = (actual[has] >= lo[has]) & (actual[has] <= hi[has])
        assert abs(covered.mean() - level / 100) <= 0.02, (level, covered.mean())
        n = n_earlier[has]
        exact = (conformal_rank(n, level) / (n + 1)).mean()
        assert abs(covered.mean() - exact) <= 0.01, (level, covered.mean(), exact)
        # the first origins have too few earlier errors: n >= 4 at 80%, n >= 19 at 95%
        assert n_earlier[has].min() == (4 if level == 80 else 19)
    assert scores.meta["conformal"]["rows_without_band"] == {"80": 4 * 100, "95": 19 * 100}


def test_when_targets_are_not_yet_published_then_their_errors_do_not_calibrate():
    panel = _iid_panel(n_series=3, n_periods=40)
    protocol = RollingOrigin(horizon=3, stride=1, n_origins=20, mode="analysis")
    scores = run(panel, protocol, {"naive": instance_factory(NaiveForecaster())}, quantile_levels=())
    t = scores.table
    keys = pd.factorize(t["series_id"].astype(str) + "/" + t["step"].astype(str))[0]
    err = (t["actual"] - t["point"]).abs().to_numpy()
    for level in (80, 95):
        expected = _loop_radius(keys, t["origin"].to_numpy(), t["available_at"].to_numpy(), err, level)
        radius = t[f"hi{level}"].to_numpy() - t["point"].to_numpy()  # point + r - point: rounding only
        assert np.allclose(radius, expected, equal_nan=True, rtol=0, atol=1e-9)
        assert np.array_equal(np.isnan(radius), np.isnan(expected))
    # step 3 at origin o has its target published at o + 3: origins o-1 and o-2 cannot calibrate it
    step3 = t[t["step"] == 3].sort_values("origin")
    first = step3.loc[step3["has_band"], "origin"].min()
    assert list(sorted(step3["origin"].unique())).index(first) == 4 + 2


def test_band_min_origins_withholds_bands_until_enough_errors_exist():
    panel = _iid_panel(n_series=20, n_periods=30)
    protocol = RollingOrigin(horizon=1, stride=1, n_origins=20)
    scores = run(panel, protocol, {"c": instance_factory(ConstantForecaster(value=10.0))}, band_min_origins=8)
    t = scores.table
    origins = sorted(t["origin"].unique())
    assert not t[t["origin"].isin(origins[:8])]["has_band"].any()
    assert t[t["origin"].isin(origins[8:])]["has_band"].all()
    assert scores.meta["conformal"]["min_origins"] == 8


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_radius_matches_the_loop_with_missing_rows_shuffled_rows_and_early_or_late_publication(seed):
    # publication anywhere from 2 periods before to 5 after the origin (the kernel assumes no order),
    # a third of the (key, origin) rows missing, rows shuffled
    rng = np.random.default_rng(seed)
    n_keys, n_orig = 7, 12
    keys = np.repeat(np.arange(n_keys) * 1000 + 5, n_orig)  # sparse keys: hashed, not used as codes
    o = np.tile(np.arange(n_orig), n_keys)
    keep = rng.random(len(keys)) > 0.33
    perm = rng.permutation(int(keep.sum()))
    keys, o = keys[keep][perm], o[keep][perm]
    base = np.datetime64("2020-01-01", "ns")
    origin = base + o * np.timedelta64(1, "D")
    avail = base + (o + rng.integers(-2, 6, size=len(o))) * np.timedelta64(1, "D")
    err = rng.exponential(size=len(o)).round(2)
    finite = 0
    for level in (80, 95):
        for min_origins in (0, 3):
            radius, _ = conformal_radius(
                keys=keys,
                origin=origin,
                available_at=avail,
                abs_error=err,
                level_percent=level,
                min_origins=min_origins,
            )
            expected = _loop_radius(keys, origin, avail, err, level, min_origins)
            assert np.array_equal(radius, expected, equal_nan=True)
            finite += int(np.isfinite(radius).sum())
    assert finite > 0  # the comparison covered real bands, not only NaN


def test_bands_computed_per_chunk_in_the_tasks_equal_bands_calibrated_over_the_whole_table():
    # the engine calibrates inside each (unit, chunk) task; a (model, unit, series, step) group never
    # spans two chunks, so the kernel run once over the whole table must give the same radii
    panel = _iid_panel(n_series=23, n_periods=40)
    protocol = RollingOrigin(horizon=3, stride=2, n_origins=12, mode="analysis")
    factories = {"naive": instance_factory(NaiveForecaster()), "c": instance_factory(ConstantForecaster(value=10.0))}
    scores = run(panel, protocol, factories, units=("series", "groups:4"), chunk_size=5, quantile_levels=())
    t = scores.table
    keys = pd.factorize(
        t["model"].astype(str)
        + "/"
        + t["unit"].astype(str)
        + "/"
        + t["series_id"].astype(str)
        + "/"
        + t["step"].astype(str)
    )[0]
    err = (t["actual"] - t["point"]).abs().to_numpy()
    for level in (80, 95):
        radius, _ = conformal_radius(
            keys=keys,
            origin=t["origin"].to_numpy(),
            available_at=t["available_at"].to_numpy(),
            abs_error=err,
            level_percent=level,
        )
        assert np.array_equal(t[f"lo{level}"].to_numpy(), t["point"].to_numpy() - radius, equal_nan=True)
        assert np.array_equal(t[f"hi{level}"].to_numpy(), t["point"].to_numpy() + radius, equal_nan=True)
    assert t["has_band"].any() and not t["has_band"].all()


def test_band_grid_sweep_equals_a_per_cell_plain_loop_with_origins_in_any_order():
    # the kernel sorts each key's errors by publication time once and sweeps the origins in time order;
    # the oracle gathers, for every asking cell, the key's finite errors published by its origin
    from tycheon.backtest.conformal import band_grid

    rng = np.random.default_rng(5)
    n_keys, n_orig = 40, 9
    stamps = rng.permutation(np.arange(n_orig) * 10)  # origins not in time order
    err = rng.exponential(size=(n_keys, n_orig)).round(2)
    err[rng.random(err.shape) < 0.2] = np.nan
    pub = stamps[None, :] + rng.integers(1, 40, size=err.shape)  # published 1-39 after its origin
    want = np.isfinite(err) & (rng.random(err.shape) < 0.8)
    for min_origins in (0, 4):
        out, n_cal = band_grid(
            err=err, pub=pub, stamps=stamps, want=want, levels_percent=(50, 80), min_origins=min_origins
        )
        for k in range(n_keys):
            for c in range(n_orig):
                cal = sorted(err[k, j] for j in range(n_orig) if np.isfinite(err[k, j]) and pub[k, j] <= stamps[c])
                assert n_cal[k, c] == (len(cal) if want[k, c] else 0)
                for lv, level in enumerate((50, 80)):
                    rank = -(-(len(cal) + 1) * level // 100)
                    ok = want[k, c] and rank <= len(cal) and len(cal) >= min_origins
                    expected = cal[rank - 1] if ok else np.nan
                    assert np.array_equal(out[lv, k, c], expected, equal_nan=True)
        assert np.isfinite(out).any() and np.isnan(out[:, want]).any()
