"""Baselines: statsforecast oracles (pinned and live), the momentum worked example, distributions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from statsforecast.models import (
    HistoricAverage,
    Naive,
    RandomWalkWithDrift,
    SeasonalNaive,
    SimpleExponentialSmoothing,
    WindowAverage,
)

from tests._forecasters_support import make_history, ragged_panel
from tycheon.forecasters import create
from tycheon.forecasters.roster.baselines import InsufficientHistoryError

SERIES_C = [4, 5, 0, 6, 3, 0, 0, 8, 2, 1, 0, 0, 5, 7]

# Pinned from statsforecast 2.1.1, Model().forecast(np.array(SERIES_C, float), 1)["mean"][0]
PINNED_C = {
    "ses": 3.7519109260842995,  # SimpleExponentialSmoothing(alpha=0.3)
    "naive": 7.0,  # Naive()
    "drift": 7.230769230769231,  # RandomWalkWithDrift()
    "historic_mean": 2.9285714285714284,  # HistoricAverage()
    "moving_average": 4.0,  # WindowAverage(window_size=3)
}

LIVE = {
    "naive": lambda m: Naive(),
    "seasonal_naive": lambda m: SeasonalNaive(season_length=m),
    "drift": lambda m: RandomWalkWithDrift(),
    "historic_mean": lambda m: HistoricAverage(),
    "moving_average": lambda m: WindowAverage(window_size=3),
    "ses": lambda m: SimpleExponentialSmoothing(alpha=0.3),
}


@pytest.mark.parametrize("model_id", sorted(PINNED_C))
def test_point_matches_pinned_statsforecast_value(model_id):
    point = create(model_id).predict(make_history([SERIES_C], season=4), horizon=1).point
    assert point[0, 0] == pytest.approx(PINNED_C[model_id], abs=1e-9)


@pytest.mark.parametrize("model_id", sorted(LIVE))
def test_point_matches_live_statsforecast_on_ragged_panel(model_id):
    rng = np.random.default_rng(3)
    y = ragged_panel(rng, n_series=25, n_periods=40, min_len=14)
    forecast = create(model_id).predict(make_history(y, season=12), horizon=15)
    ref = LIVE[model_id](12)
    expected = np.array([ref.forecast(row[np.isfinite(row)], 15)["mean"] for row in y])
    np.testing.assert_allclose(forecast.point, expected, rtol=0, atol=1e-9)


@pytest.mark.parametrize(("model_id", "season"), [("naive", 1), ("seasonal_naive", 12), ("seasonal_naive", 4)])
def test_gaussian_quantiles_match_statsforecast_intervals(model_id, season):
    rng = np.random.default_rng(4)
    y = ragged_panel(rng, n_series=6, n_periods=40, min_len=20)
    levels = (0.05, 0.2, 0.5, 0.8, 0.95)
    forecast = create(model_id).predict(make_history(y, season=season), horizon=14, quantile_levels=levels)
    ref = LIVE[model_id](season)
    for i, row in enumerate(y):
        out = ref.forecast(row[np.isfinite(row)], 14, level=[60, 90])
        for j, key in enumerate(["lo-90", "lo-60", "mean", "hi-60", "hi-90"]):
            np.testing.assert_allclose(forecast.quantiles[i, :, j], out[key], rtol=1e-9)


def test_naive_quantile_width_grows_with_sqrt_h():
    y = np.array([[10.0, 12, 11, 14, 13, 15]])  # errors 2, -1, 3, -1, 2 -> sigma^2 = 19/5
    q = create("naive").predict(make_history(y), horizon=4, quantile_levels=(0.9,)).quantiles
    sigma = np.sqrt(19 / 5)
    np.testing.assert_allclose(q[0, :, 0], 15 + norm.ppf(0.9) * sigma * np.sqrt([1, 2, 3, 4]), rtol=1e-12)


def test_snaive_momentum_worked_example():
    # season m = 4, k = 3 (default), clip [0.5, 2.0] (default). y_1..y_8 = 10 20 30 40 | 11 22 36 48
    # last k:             y_6 + y_7 + y_8 = 22 + 36 + 48 = 106
    # same k a year ago:  y_2 + y_3 + y_4 = 20 + 30 + 40 = 90
    # ratio r = 106 / 90 = 1.1777..., inside [0.5, 2.0]
    # forecast = r * last season (11, 22, 36, 48), repeated:
    #   h=1: 11*106/90 = 1166/90 = 12.9555...   h=2: 22*106/90 = 2332/90 = 25.9111...
    #   h=3: 36*106/90 = 3816/90 = 42.4         h=4: 48*106/90 = 5088/90 = 56.5333...
    #   h=5: 1166/90 again (the same season position, the same ratio)
    y = [[10.0, 20, 30, 40, 11, 22, 36, 48]]
    point = create("snaive_momentum").predict(make_history(y, season=4), horizon=5).point
    np.testing.assert_allclose(point[0], [1166 / 90, 2332 / 90, 3816 / 90, 5088 / 90, 1166 / 90], rtol=1e-14)


def test_snaive_momentum_clips_the_ratio_and_uses_one_when_base_is_zero():
    # growth 5x (15 / 3) is clipped to 2.0; a year-ago base of 0 gives ratio 1; a collapse to 0.1 -> 0.5
    y = [[1.0, 1, 1, 1, 5, 5, 5, 5], [0.0, 0, 0, 0, 3, 4, 5, 6], [10.0, 10, 10, 10, 1, 1, 1, 1]]
    point = create("snaive_momentum").predict(make_history(y, season=4), horizon=4).point
    np.testing.assert_allclose(point, [[10.0] * 4, [3.0, 4, 5, 6], [0.5] * 4])
    wide = create("snaive_momentum", clip_high=10.0).predict(make_history(y, season=4), horizon=1).point
    assert wide[0, 0] == pytest.approx(25.0)


def test_snaive_momentum_with_ratio_one_is_seasonal_naive():
    rng = np.random.default_rng(5)
    y = ragged_panel(rng, n_series=8, n_periods=36, min_len=16)
    y[:, -3:] = y[:, -15:-12]  # the last k=3 equal the same periods a year earlier
    mom = create("snaive_momentum").predict(make_history(y), horizon=12).point
    snaive = create("seasonal_naive").predict(make_history(y), horizon=12).point
    np.testing.assert_allclose(mom, snaive, rtol=1e-14)


def test_snaive_momentum_refuses_series_shorter_than_season_plus_k_plus_one():
    y = np.full((2, 20), 5.0)
    y[1, :5] = np.nan  # 15 observations < 12 + 3 + 1
    with pytest.raises(InsufficientHistoryError, match=r"at least 16 observations.*\['s1'\]"):
        create("snaive_momentum").predict(make_history(y), horizon=1)
    assert create("snaive_momentum", k=1).min_history(12) == 14


def test_ewma_equals_pandas_ewm_with_span_and_adjust_false():
    rng = np.random.default_rng(6)
    y = ragged_panel(rng, n_series=10, n_periods=30, min_len=5)
    point = create("ewma").predict(make_history(y), horizon=2).point
    # the level after the last observation is the one-step forecast
    expected = [pd.Series(row[np.isfinite(row)]).ewm(span=3, adjust=False).mean().iloc[-1] for row in y]
    np.testing.assert_allclose(point[:, 0], expected, rtol=1e-12)


def test_median12_uses_the_last_window_or_all_observations():
    y = np.full((2, 15), np.nan)
    y[0] = np.arange(15.0)  # last 12: 3..14 -> median 8.5
    y[1, -5:] = [9.0, 1, 7, 3, 100]  # only 5 observed -> median 7
    point = create("median12").predict(make_history(y), horizon=2).point
    np.testing.assert_array_equal(point, [[8.5, 8.5], [7.0, 7.0]])


def test_drift_on_ragged_series_uses_first_observed_value():
    y = [[np.nan, np.nan, 2.0, 4.0, 6.0]]  # slope (6 - 2) / 2 = 2
    point = create("drift").predict(make_history(y), horizon=3).point
    np.testing.assert_array_equal(point, [[8.0, 10.0, 12.0]])


@pytest.mark.parametrize("model_id", ["naive", "seasonal_naive", "snaive_momentum"])
def test_sample_paths_are_seeded_and_consistent_with_quantiles(model_id):
    rng = np.random.default_rng(8)
    y = ragged_panel(rng, n_series=3, n_periods=48, min_len=30)
    model = create(model_id)
    a = model.predict(make_history(y), horizon=13, quantile_levels=(0.1, 0.9), n_samples=4000, seed=11)
    b = model.predict(make_history(y), horizon=13, quantile_levels=(0.1, 0.9), n_samples=4000, seed=11)
    np.testing.assert_array_equal(a.samples, b.samples)
    assert a.samples.shape == (3, 13, 4000)
    # bootstrapped residuals have the same second moment as the Gaussian's sigma: the 80% spreads agree
    spread_samples = np.quantile(a.samples, 0.9, axis=2) - np.quantile(a.samples, 0.1, axis=2)
    spread_gauss = a.quantiles[:, :, 1] - a.quantiles[:, :, 0]
    np.testing.assert_allclose(spread_samples, spread_gauss, rtol=0.25)


def test_constructor_rejects_bad_parameters():
    with pytest.raises(ValueError, match="window must be a positive integer"):
        create("moving_average", window=0)
    with pytest.raises(ValueError, match="clip_low <= 1 <= clip_high"):
        create("snaive_momentum", clip_low=1.5)
    with pytest.raises(ValueError, match="span must be a number >= 1"):
        create("ewma", span=0.5)


def test_when_a_smoothing_weight_is_a_bool_then_it_is_refused():
    # True == 1 in Python; a flag passed for a weight is a config mistake, not alpha = 1
    with pytest.raises(ValueError, match=r"alpha must be a number in \(0, 1\], got True"):
        create("ses", alpha=True)


def test_interior_gap_is_refused_with_the_rows_named():
    y = np.array([[1.0, np.nan, 3.0, 4.0]])
    with pytest.raises(ValueError, match=r"rows \[0\] are not observed contiguously"):
        create("naive").predict(make_history(y), horizon=1)
