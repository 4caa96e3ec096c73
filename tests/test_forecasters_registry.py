"""The registry and the whole roster: ids, parameter round trips, defaults on a small monthly panel."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests._forecasters_support import RaisingForecaster, make_history, ragged_panel
from tycheon.forecasters import Forecaster, available, create, get, register
from tycheon.forecasters.registry import UnknownForecasterError
from tycheon.forecasters.roster.foundation import FoundationModelUnavailableError
from tycheon.forecasters.roster.global_ml import NotFittedError

EXPECTED_IDS = {
    "naive",
    "seasonal_naive",
    "snaive_momentum",
    "drift",
    "historic_mean",
    "median12",
    "ewma",
    "moving_average",
    "ses",
    "croston",
    "croston_sba",
    "tsb",
    "adida",
    "imapa",
    "auto_ets",
    "damped_ets",
    "auto_theta",
    "auto_arima",
    "mstl",
    "sktime",
    "lightgbm_global",
    "chronos_bolt",
    "timesfm",
    "moirai",
    "theta_classic",
    "naive2",
    "ses_classic",
}
FOUNDATION = ["chronos_bolt", "timesfm", "moirai"]
FAST = [
    "naive",
    "seasonal_naive",
    "snaive_momentum",
    "drift",
    "historic_mean",
    "median12",
    "ewma",
    "moving_average",
    "ses",
    "croston",
    "croston_sba",
    "tsb",
    "adida",
    "imapa",
]


def _monthly_panel_with_zeros(n_series: int = 30, n_periods: int = 48) -> np.ndarray:
    rng = np.random.default_rng(12)
    y = ragged_panel(rng, n_series=n_series, n_periods=n_periods, min_len=30)
    y[:10] = y[:10] * (rng.random((10, n_periods)) < 0.4)  # intermittent rows (NaN starts kept)
    y[10] = np.where(np.isfinite(y[10]), 0.0, np.nan)  # an all-zero series
    return y


def test_every_stable_id_is_registered():
    assert EXPECTED_IDS <= set(available())


def test_duplicate_id_is_refused_and_names_the_owner():
    with pytest.raises(ValueError, match="'naive' is already registered to NaiveForecaster"):
        register("naive")(type("Impostor", (RaisingForecaster,), {}))


def test_unknown_id_lists_the_known_ids():
    with pytest.raises(UnknownForecasterError, match="unknown forecaster id 'naïve'.*croston.*snaive_momentum"):
        get("naïve")


def test_unknown_id_error_keeps_the_lookup_as_its_cause():
    with pytest.raises(UnknownForecasterError) as info:
        get("naïve")
    assert isinstance(info.value.__cause__, KeyError)


@pytest.mark.parametrize("model_id", sorted(EXPECTED_IDS))
def test_default_construction_and_clone_round_trip(model_id):
    model = create(model_id)
    clone = model.clone()
    assert type(clone) is type(model) and clone is not model
    assert clone.get_params() == model.get_params()
    assert create(model_id, **model.get_params()).get_params() == model.get_params()
    assert isinstance(model, Forecaster) and model.forecaster_id == model_id


@pytest.mark.parametrize(
    "model_id", FAST + ["auto_ets", "auto_theta", "mstl", "damped_ets", "theta_classic", "naive2", "ses_classic"]
)
def test_defaults_forecast_a_small_monthly_panel_with_zeros(model_id):
    y = _monthly_panel_with_zeros()
    if model_id not in FAST:
        y = y[8:16]  # per-series statistical fits are slow: 8 rows with intermittent and all-zero series
    model = create(model_id)
    assert model.min_history(12) <= 30  # every series of this panel is long enough
    history = make_history(y)
    model.fit(history)
    forecast = model.predict(history, horizon=6, quantile_levels=(0.1, 0.5, 0.9), n_samples=20, seed=1)
    assert forecast.point.shape == (len(y), 6) and np.isfinite(forecast.point).all()
    zero_row = 10 if model_id in FAST else 2
    np.testing.assert_allclose(forecast.point[zero_row], 0.0, atol=1e-9)  # no demand, no forecast
    if model.capabilities.quantiles:
        assert forecast.quantiles is not None and (np.diff(forecast.quantiles, axis=2) >= -1e-9).all()


@pytest.mark.parametrize("model_id", FOUNDATION)
def test_foundation_models_report_the_precise_reason_and_never_forecast(model_id):
    status = get(model_id).availability()
    assert not status.ok
    assert "is not installed" in status.reason or "Hugging Face hub" in status.reason
    with pytest.raises(FoundationModelUnavailableError, match=model_id):
        create(model_id).predict(make_history([[1.0, 2, 3]]), horizon=2)


def test_foundation_reason_names_the_weights_when_the_package_exists(monkeypatch, tmp_path):
    import importlib.util

    from tycheon.forecasters.roster import foundation

    real = importlib.util.find_spec
    monkeypatch.setattr(
        foundation.importlib.util, "find_spec", lambda name: object() if name == "chronos" else real(name)
    )
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    reason = get("chronos_bolt").availability().reason
    assert "weights 'amazon/chronos-bolt-small' must be downloaded from the Hugging Face hub" in reason
    assert "no network access" in reason


def test_lightgbm_global_is_seeded_and_refuses_predict_before_fit():
    y = _monthly_panel_with_zeros()
    fit_part = make_history(y[:, :42])
    with pytest.raises(NotFittedError, match="call fit first"):
        create("lightgbm_global").predict(fit_part, horizon=3)
    a = create("lightgbm_global", n_estimators=50).fit(fit_part).predict(fit_part, horizon=6)
    b = create("lightgbm_global", n_estimators=50).fit(fit_part).predict(fit_part, horizon=6)
    np.testing.assert_array_equal(a.point, b.point)
    assert np.isfinite(a.point).all()


def test_lightgbm_global_seed_alone_changes_the_forecast():
    fit_part = make_history(_monthly_panel_with_zeros()[:, :42])
    a = create("lightgbm_global", n_estimators=50, seed=0).fit(fit_part).predict(fit_part, horizon=6)
    b = create("lightgbm_global", n_estimators=50, seed=5).fit(fit_part).predict(fit_part, horizon=6)
    assert not np.array_equal(a.point, b.point)


def test_lightgbm_global_without_subsampling_the_seed_has_no_effect():
    fit_part = make_history(_monthly_panel_with_zeros()[:, :42])
    full = {"n_estimators": 50, "subsample": 1.0, "colsample": 1.0}
    a = create("lightgbm_global", seed=0, **full).fit(fit_part).predict(fit_part, horizon=6)
    b = create("lightgbm_global", seed=5, **full).fit(fit_part).predict(fit_part, horizon=6)
    np.testing.assert_array_equal(a.point, b.point)


def test_lightgbm_global_n_lags_alone_changes_the_forecast():
    fit_part = make_history(_monthly_panel_with_zeros()[:, :42])
    a = create("lightgbm_global", n_estimators=50).fit(fit_part).predict(fit_part, horizon=6)
    b = create("lightgbm_global", n_estimators=50, n_lags=3).fit(fit_part).predict(fit_part, horizon=6)
    assert not np.array_equal(a.point, b.point)


@pytest.mark.parametrize("name", ["subsample", "colsample"])
def test_lightgbm_global_refuses_a_sampling_share_outside_the_unit_interval(name):
    with pytest.raises(ValueError, match=rf"{name} must be a number in \(0, 1\], got 0"):
        create("lightgbm_global", **{name: 0})


def test_lightgbm_global_beats_the_last_value_on_a_strongly_seasonal_panel():
    rng = np.random.default_rng(13)
    t = np.arange(60)
    y = (100 + 40 * np.sin(2 * np.pi * t / 12))[None, :] * rng.uniform(0.5, 3, (20, 1))
    y = y + rng.normal(0, 2, y.shape)
    hist = make_history(y[:, :48])
    point = create("lightgbm_global", n_estimators=100).fit(hist).predict(hist, horizon=12).point
    err_model = np.abs(point - y[:, 48:]).mean()
    err_naive = np.abs(y[:, 47:48] - y[:, 48:]).mean()
    assert err_model < 0.5 * err_naive


@pytest.mark.parametrize("freq", ["MS", "2MS"])
def test_lightgbm_global_predict_continues_the_fit_season_positions(freq, monkeypatch):
    # "2MS" has no pandas period equivalent, so positions are column indices modulo the season: the
    # forecast steps must see positions 42, 43, 44 (mod 5) of the grid, not restart at 0 at the origin
    from tycheon.forecasters.roster import global_ml

    step_positions = []
    real_features = global_ml._features

    def spy(lags, position, season):
        step_positions.append(np.unique(position))
        return real_features(lags, position, season)

    history = make_history(_monthly_panel_with_zeros()[:, :42], freq=freq, season=5)
    model = create("lightgbm_global", n_estimators=5).fit(history)
    monkeypatch.setattr(global_ml, "_features", spy)
    model.predict(history, horizon=3)
    grid = pd.date_range("2020-01-01", periods=45, freq=freq)
    expected = global_ml._season_position(grid, freq, 5)[42:]
    assert [p.tolist() for p in step_positions] == [[x] for x in expected.tolist()]
    if freq == "2MS":
        assert expected.tolist() == [2.0, 3.0, 4.0]  # 42, 43, 44 mod 5
