"""M3's classical methods (theta_classic, naive2, ses_classic) against independent implementations.

Layered oracles: statsmodels' ``acf``, ``seasonal_decompose``, ``ThetaModel`` and ``SimpleExpSmoothing``
(written independently of this code; ThetaModel computes Theta as SES with drift, Hyndman & Billah 2003,
not through the theta lines, so agreement checks the algebra too), statsforecast's seasonality test and
``Theta``; plain formulas for Naive2; the least-squares weight against a dense grid.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from statsforecast.utils import AirPassengers
from statsmodels.tsa.forecasting.theta import ThetaModel
from statsmodels.tsa.holtwinters import SimpleExpSmoothing
from statsmodels.tsa.seasonal import seasonal_decompose
from statsmodels.tsa.stattools import acf as sm_acf

from tests._forecasters_support import make_history
from tycheon.data.datasets import load
from tycheon.forecasters import create
from tycheon.forecasters.kernels import classical as kc

AIR = np.asarray(AirPassengers, dtype=np.float64)  # Box & Jenkins' airline passengers, 1949-1960, monthly


def _forecast(model_id: str, y: np.ndarray, *, season: int, horizon: int, **params) -> np.ndarray:
    return create(model_id, **params).predict(make_history(y[None, :], season=season), horizon=horizon).point[0]


def _sm_ses(y: np.ndarray, alpha: float, horizon: int) -> np.ndarray:
    fit = SimpleExpSmoothing(y, initialization_method="known", initial_level=y[0]).fit(
        smoothing_level=alpha, optimized=False
    )
    return np.asarray(fit.forecast(horizon))


def _noise_and_walk() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    return rng.normal(10.0, 1.0, 120), 50.0 + np.cumsum(rng.normal(0.0, 1.0, 120))


def test_acf_equals_statsmodels():
    for y in (AIR, *_noise_and_walk()):
        np.testing.assert_allclose(kc.acf(y, 12), sm_acf(y, nlags=12, fft=False), rtol=0, atol=1e-14)


def test_when_series_is_airpassengers_then_it_is_seasonal():
    assert kc.is_seasonal(AIR, 12)


@pytest.mark.parametrize("kind", ["white_noise", "random_walk"])
def test_when_series_has_no_season_then_it_is_not_seasonal(kind):
    y = dict(zip(["white_noise", "random_walk"], _noise_and_walk(), strict=True))[kind]
    assert not kc.is_seasonal(y, 12)


def test_seasonality_decision_equals_the_statistic_as_statsforecast_writes_it():
    # statsforecast theta.py (2.x): r = acf(y, nlags=m, fft=False)[1:];
    # stat = sqrt((1 + 2 sum(r[:-1]^2)) / n); seasonal = |r[-1]| / stat > norm.ppf(0.95)
    from scipy.stats import norm

    rng = np.random.default_rng(8)
    decisions = []
    for i in range(60):
        t = np.arange(48)
        y = 100 + rng.normal(0, 5, 48) + (i % 3) * 4 * np.sin(2 * np.pi * t / 12)
        r = sm_acf(y, nlags=12, fft=False)[1:]
        theirs = np.abs(r[-1]) / np.sqrt((1 + 2 * np.sum(r[:-1] ** 2)) / len(y)) > norm.ppf(0.95)
        assert kc.is_seasonal(y, 12) == bool(theirs)
        decisions.append(bool(theirs))
    assert 0 < sum(decisions) < 60  # both outcomes are exercised


def test_when_series_is_constant_or_too_short_then_it_is_not_seasonal():
    assert not kc.is_seasonal(np.full(60, 3.0), 12)
    assert not kc.is_seasonal(AIR[:24], 12)  # R thetaf needs n > 2m
    assert not kc.is_seasonal(AIR, 1)


@pytest.mark.parametrize("season, n", [(12, 144), (12, 61), (4, 40), (7, 50)])
def test_seasonal_indices_equal_statsmodels_seasonal_decompose(season, n):
    y = AIR[:n] if season == 12 else AIR[:n] + np.arange(n) % season * 9.0
    theirs = seasonal_decompose(y, model="multiplicative", period=season).seasonal
    ours, ahead = kc.seasonal_factors(y, season, horizon=season) if kc.is_seasonal(y, season) else (None, None)
    idx = kc.multiplicative_indices(y, season)
    np.testing.assert_allclose(idx, theirs[:season], rtol=0, atol=1e-12)
    if ours is not None:
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
        np.testing.assert_allclose(ahead, idx[np.arange(n, n + season) % season], rtol=0, atol=0)


@pytest.mark.parametrize("cut", [60, 100, 132])
def test_theta_at_a_fixed_weight_equals_statsmodels_theta_model_on_a_trend(cut):
    y = AIR[:cut]
    res = ThetaModel(y, period=12, deseasonalize=False).fit()
    alpha = float(res.params["alpha"])
    ours = _forecast("theta_classic", y, season=1, horizon=18, alpha=alpha)
    np.testing.assert_allclose(ours, np.asarray(res.forecast(18)), rtol=1e-10, atol=0)


@pytest.mark.parametrize("alpha", [0.05, 0.3, 0.9])
def test_theta_at_a_fixed_weight_equals_statsmodels_theta_model_when_seasonal(alpha):
    # ThetaModel(use_test=False) always adjusts; AirPassengers passes the test, so both adjust
    y = AIR[:120]
    model = ThetaModel(y, period=12, deseasonalize=True, use_test=False, method="multiplicative")
    res = model.fit()
    res._alpha = alpha  # ThetaModel has no fixed-weight option; its forecast reads the weight from here
    res._one_step = _sm_ses(y / seasonal_decompose(y, model="multiplicative", period=12).seasonal, alpha, 1)[0]
    ours = _forecast("theta_classic", y, season=12, horizon=24, alpha=alpha)
    np.testing.assert_allclose(ours, np.asarray(res.forecast(24)), rtol=1e-10, atol=0)


@pytest.mark.parametrize("alpha", [0.1, 0.37, 1.0])
def test_single_at_a_fixed_weight_equals_simple_exp_smoothing(alpha):
    y = AIR[:100]
    ours = _forecast("ses_classic", y, season=1, horizon=5, alpha=alpha)
    np.testing.assert_allclose(ours, _sm_ses(y, alpha, 5), rtol=1e-12, atol=0)


def test_single_on_a_seasonal_series_smooths_the_adjusted_series():
    y = AIR[:120]
    s = seasonal_decompose(y, model="multiplicative", period=12).seasonal
    ours = _forecast("ses_classic", y, season=12, horizon=12, alpha=0.4)
    np.testing.assert_allclose(ours, _sm_ses(y / s, 0.4, 12) * s[:12], rtol=1e-12, atol=0)


def test_least_squares_weight_is_no_worse_than_a_dense_grid_or_statsmodels():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for y in (AIR[:100], *_noise_and_walk()):
            alpha = kc.ls_alpha(y)
            assert 1e-4 <= alpha <= 1.0
            grid = np.linspace(1e-4, 1.0, 5001)
            best = min(kc.ses_sse(y, float(a)) for a in grid)
            assert kc.ses_sse(y, alpha) <= best * (1 + 1e-12)
            fit = SimpleExpSmoothing(y, initialization_method="known", initial_level=y[0]).fit()
            assert kc.ses_sse(y, alpha) <= kc.ses_sse(y, float(fit.params["smoothing_level"])) * (1 + 1e-9)


def test_naive2_is_the_last_adjusted_value_reseasonalised():
    y = AIR[:120]
    s = seasonal_decompose(y, model="multiplicative", period=12).seasonal
    expected = y[-1] / s[-1] * np.resize(s[:12], 18)  # phases 120.. continue at 0 (120 % 12 == 0)
    np.testing.assert_allclose(_forecast("naive2", y, season=12, horizon=18), expected, rtol=1e-12, atol=0)


def test_on_a_series_without_seasonality_naive2_is_naive():
    _, walk = _noise_and_walk()
    np.testing.assert_array_equal(_forecast("naive2", walk, season=12, horizon=6), np.full(6, walk[-1]))


def test_a_series_with_a_zero_is_left_unadjusted():
    y = AIR[:120].copy()
    y[5] = 0.0
    assert kc.is_seasonal(y, 12)
    inside, ahead = kc.seasonal_factors(y, 12, horizon=3)
    assert (inside == 1).all() and (ahead == 1).all()


def test_theta_forecast_is_the_mean_of_the_line_and_ses_of_the_theta2_line():
    # the A&N construction written out with numpy's polyfit (an independent least-squares fit)
    y = AIR[:40]
    b, a = np.polyfit(np.arange(40), y, 1)
    line2 = 2 * y - (a + b * np.arange(40))
    alpha = kc.ls_alpha(line2)
    expected = 0.5 * (a + b * np.arange(40, 46) + _sm_ses(line2, alpha, 6))
    np.testing.assert_allclose(_forecast("theta_classic", y, season=1, horizon=6), expected, rtol=1e-10, atol=0)


@pytest.mark.parametrize("name, season, horizon", [("m3_yearly", 1, 6), ("m3_other", 1, 8), ("m3_quarterly", 4, 8)])
def test_theta_is_close_to_statsforecast_standard_theta_on_m3_series(name, season, horizon):
    # statsforecast's Theta (standard theta, Fiorucci et al. 2016) fits the initial level and the weight
    # jointly on the adjusted series by MSE; M3's Theta starts SES at the first value and fits the weight
    # on the theta-2 line. Measured (statsforecast 2.1.1) as max |ours - theirs| / mean |theirs| per series
    # over these 30: median 0.10% yearly, 0.007% other, 0.037% quarterly; 80th percentile 0.18%, 0.04%,
    # 0.13%; largest 19.5%, 0.48%, 2.3% (a short yearly series where the two fitted weights differ most).
    from statsforecast.models import Theta

    d = load(name).dense()
    rel = []
    for i in range(0, 30 * 5, 5):  # 30 series spread over the subset's first 150
        y = d.values[i][d.observed[i]][:-horizon]
        theirs = Theta(season_length=season).forecast(y, horizon)["mean"]
        ours = _forecast("theta_classic", y, season=season, horizon=horizon)
        rel.append(np.abs(ours - theirs).max() / np.abs(theirs).mean())
    assert np.median(rel) < 2e-3
    assert np.quantile(rel, 0.8) < 5e-3


@pytest.mark.parametrize("model_id", ["theta_classic", "ses_classic"])
def test_a_weight_outside_the_unit_interval_is_refused(model_id):
    with pytest.raises(ValueError, match=r"alpha must be a number in \(0, 1\], got 1.5"):
        create(model_id, alpha=1.5)
