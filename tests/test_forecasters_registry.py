"""The registry and the whole roster: ids, parameter round trips, defaults on a small monthly panel."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests._forecasters_support import RaisingForecaster, make_history, ragged_panel
from tycheon.forecasters import Forecaster, available, create, get, register
from tycheon.forecasters.registry import UnknownForecasterError, ids, info
from tycheon.forecasters.roster.foundation import FoundationModelUnavailableError
from tycheon.forecasters.roster.global_ml import NotFittedError

MODELS = Path(__file__).resolve().parent.parent / "benchmarks" / "models"
# today's rosters of tycheon.evaluate, written out once: the registry derives them from the tags of the
# registrations, in registration order (ewma's class sits above moving_average's, auto_theta's above auto_ets's)
TODAYS_DEFAULT = (
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
)
TODAYS_OPT_IN = ("auto_theta", "auto_ets", "auto_arima")


def _monthly_panel_with_zeros(n_series: int = 30, n_periods: int = 48) -> np.ndarray:
    rng = np.random.default_rng(12)
    y = ragged_panel(rng, n_series=n_series, n_periods=n_periods, min_len=30)
    y[:10] = y[:10] * (rng.random((10, n_periods)) < 0.4)  # intermittent rows (NaN starts kept)
    y[10] = np.where(np.isfinite(y[10]), 0.0, np.nan)  # an all-zero series
    return y


def test_the_derived_rosters_of_evaluate_are_todays():
    from tycheon.evaluation import ALL_MODELS, DEFAULT_MODELS, SLOW_MODELS

    assert DEFAULT_MODELS == ids(roster="default") == TODAYS_DEFAULT
    assert SLOW_MODELS == ids(roster="opt_in") == TODAYS_OPT_IN
    assert ALL_MODELS == TODAYS_DEFAULT + TODAYS_OPT_IN


def _model_configs() -> dict[str, dict]:
    return {path.name: tomllib.loads(path.read_text(encoding="utf-8")) for path in sorted(MODELS.glob("*.toml"))}


def test_every_model_config_names_a_registered_forecaster():
    # kind "sktime" reaches sktime through the adapter registered as "sktime"
    named = {
        name: cfg["source"]["forecaster"] if cfg["source"]["kind"] == "tycheon" else cfg["source"]["kind"]
        for name, cfg in _model_configs().items()
    }
    assert named and {name: fid for name, fid in named.items() if fid not in available()} == {}


def test_every_registered_forecaster_has_a_model_config():
    configured = {cfg["source"].get("forecaster") for cfg in _model_configs().values()}
    assert [fid for fid in ids() if fid not in configured and fid != "sktime"] == []


def test_ids_are_in_registration_order_and_filter_on_every_tag():
    everything = ids()
    assert sorted(everything) == available()  # every registered id has its tags
    assert ids(cost="closed_form", trait="intermittent") == ("croston", "croston_sba", "tsb", "adida", "imapa")
    for fid in ids(roster="default", cost="closed_form"):
        assert info(fid).roster == "default" and info(fid).cost == "closed_form"
    positions = [everything.index(fid) for fid in ids(trait="baseline")]
    assert positions == sorted(positions)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"roster": "nightly"}, "roster must be one of 'default', 'opt_in', got 'nightly'"),
        ({"cost": "cheap"}, "cost must be one of 'closed_form', 'fitted', 'global', 'foundation', got 'cheap'"),
        ({"trait": "fast"}, "trait must be one of 'baseline', .*, got 'fast'"),
    ],
)
def test_an_unknown_tag_is_refused_and_the_accepted_ones_are_listed(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ids(**kwargs)
    registration = {("traits" if k == "trait" else k): ({v} if k == "trait" else v) for k, v in kwargs.items()}
    with pytest.raises(ValueError, match=message):
        register("tagged_wrongly", **registration)
    assert "tagged_wrongly" not in available()


def test_traits_given_as_one_string_are_refused():
    with pytest.raises(TypeError, match="traits must be a collection of trait names, got the string 'baseline'"):
        register("tagged_wrongly", traits="baseline")  # type: ignore[arg-type]


def test_unknown_id_has_no_tags_and_lists_the_known_ids():
    with pytest.raises(UnknownForecasterError, match="unknown forecaster id 'naïve'.*croston.*snaive_momentum"):
        info("naïve")


def test_duplicate_id_is_refused_and_names_the_owner():
    with pytest.raises(ValueError, match="'naive' is already registered to NaiveForecaster"):
        register("naive")(type("Impostor", (RaisingForecaster,), {}))


def test_unknown_id_lists_the_known_ids():
    with pytest.raises(UnknownForecasterError, match="unknown forecaster id 'naïve'.*croston.*snaive_momentum"):
        get("naïve")


def test_unknown_id_error_keeps_the_lookup_as_its_cause():
    with pytest.raises(UnknownForecasterError) as raised:
        get("naïve")
    assert isinstance(raised.value.__cause__, KeyError)


def _construction_params() -> list:
    # the defaults and every parameter set the registration names for the generic tests
    return [
        pytest.param(fid, dict(params), id=f"{fid}-{i}")
        for fid in ids()
        for i, params in enumerate(({}, *info(fid).test_params))
    ]


@pytest.mark.parametrize(("model_id", "params"), _construction_params())
def test_construction_and_clone_round_trip(model_id, params):
    model = create(model_id, **params)
    clone = model.clone()
    assert type(clone) is type(model) and clone is not model
    assert clone.get_params() == model.get_params()
    assert create(model_id, **model.get_params()).get_params() == model.get_params()
    assert isinstance(model, Forecaster) and model.forecaster_id == model_id
    assert {k: model.get_params()[k] for k in params} == params


def _per_series_params() -> list:
    # models fitted per series; those fitted at every origin (cost "fitted") are the slow ones
    return [
        pytest.param(fid, marks=() if info(fid).cost == "closed_form" else pytest.mark.slow)
        for fid in ids()
        if info(fid).cost in ("closed_form", "fitted")
    ]


@pytest.mark.parametrize("model_id", _per_series_params())
def test_defaults_forecast_a_small_monthly_panel_with_zeros(model_id):
    avail = get(model_id).availability()
    if not avail.ok:
        pytest.skip(f"{model_id} is not available here: {avail.reason}")
    y = _monthly_panel_with_zeros()
    vectorised = get(model_id).capabilities.vectorised
    if not vectorised:
        y = y[8:16]  # per-series fits are slow: 8 rows with intermittent and all-zero series
    model = create(model_id)
    assert model.min_history(12) <= 30  # every series of this panel is long enough
    history = make_history(y)
    model.fit(history)
    forecast = model.predict(history, horizon=6, quantile_levels=(0.1, 0.5, 0.9), n_samples=20, seed=1)
    assert forecast.point.shape == (len(y), 6) and np.isfinite(forecast.point).all()
    zero_row = 10 if vectorised else 2
    np.testing.assert_allclose(forecast.point[zero_row], 0.0, atol=1e-9)  # no demand, no forecast
    if model.capabilities.quantiles:
        assert forecast.quantiles is not None and (np.diff(forecast.quantiles, axis=2) >= -1e-9).all()


@pytest.mark.parametrize("model_id", ids(cost="foundation"))
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
