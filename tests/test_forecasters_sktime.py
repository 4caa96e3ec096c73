"""The sktime adapter: lookup by exact registry name, per-series fit, quantiles where sktime has them."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from tests._forecasters_support import make_history, ragged_panel
from tycheon.forecasters import create
from tycheon.forecasters.roster import NumericalWarning
from tycheon.forecasters.roster.sktime_adapter import SktimeAllowListError, UnknownSktimeEstimatorError

pytest.importorskip("sktime")


def test_sktime_naive_last_equals_our_naive_on_a_ragged_panel():
    y = ragged_panel(np.random.default_rng(1), n_series=4, n_periods=30, min_len=10)
    ours = create("naive").predict(make_history(y), horizon=5).point
    theirs = create("sktime", estimator="NaiveForecaster", params={"strategy": "last"})
    np.testing.assert_array_equal(theirs.predict(make_history(y), horizon=5).point, ours)


def test_sktime_seasonal_naive_with_sp_equals_our_seasonal_naive():
    y = ragged_panel(np.random.default_rng(2), n_series=3, n_periods=40, min_len=25)
    ours = create("seasonal_naive").predict(make_history(y), horizon=14).point
    model = create("sktime", estimator="NaiveForecaster", params={"strategy": "last", "sp": 12})
    np.testing.assert_allclose(model.predict(make_history(y), horizon=14).point, ours, rtol=1e-12)


@pytest.mark.filterwarnings("ignore::FutureWarning")  # sktime's remember_data notice on the oracle
def test_quantiles_come_from_predict_quantiles_when_the_estimator_has_pred_int():
    from sktime.forecasting.theta import ThetaForecaster

    y = ragged_panel(np.random.default_rng(3), n_series=2, n_periods=36, min_len=30)
    levels = (0.1, 0.5, 0.9)
    fc = create("sktime", estimator="ThetaForecaster", params={"sp": 12}).predict(
        make_history(y), horizon=4, quantile_levels=levels
    )
    assert fc.quantiles is not None and fc.quantile_levels == levels
    # direct sktime on series 0, same index
    hist = make_history(y)
    s = pd.Series(hist.series(0), index=hist.periods[hist.observed[0]].to_period("M"))
    direct = ThetaForecaster(sp=12).fit(s, fh=[1, 2, 3, 4])
    np.testing.assert_allclose(fc.point[0], direct.predict().to_numpy(), rtol=1e-10)
    np.testing.assert_allclose(fc.quantiles[0], direct.predict_quantiles(alpha=list(levels)).to_numpy(), rtol=1e-10)
    assert (np.diff(fc.quantiles, axis=2) > 0).all()


def test_unknown_estimator_name_lists_close_matches():
    with pytest.raises(UnknownSktimeEstimatorError, match="not on the allow-list \\(close matches: ThetaForecaster"):
        create("sktime", estimator="ThetaForecastr").predict(make_history([[1.0, 2, 3]]), horizon=1)


def test_unknown_estimator_error_keeps_the_lookup_as_its_cause():
    model = create("sktime", estimator="ThetaForecaster")
    model.estimator = "ThetaForecastr"  # changed after construction: the lookup refuses it again
    with pytest.raises(UnknownSktimeEstimatorError) as info:
        model.estimator_class()
    assert isinstance(info.value.__cause__, SktimeAllowListError)


def test_a_module_path_is_not_imported():
    with pytest.raises(UnknownSktimeEstimatorError, match="'os.system' is not on the allow-list"):
        create("sktime", estimator="os.system").predict(make_history([[1.0, 2, 3]]), horizon=1)


def test_a_registered_class_off_the_allow_list_is_refused_before_it_is_built(tmp_path):
    # FhPlexForecaster (in sktime's registry) passes a string parameter to eval(); it is not on the list
    canary = tmp_path / "canary"
    with pytest.raises(UnknownSktimeEstimatorError, match="'FhPlexForecaster' is not on the allow-list"):
        create(
            "sktime",
            estimator="FhPlexForecaster",
            params={"fh_params": f"__import__('pathlib').Path({str(canary)!r}).touch()"},
        )
    assert not canary.exists()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"sp": float("nan")}, r"parameter 'sp' = nan of sktime NaiveForecaster: expected an int"),
        ({"window_length": 0}, r"parameter 'window_length' = 0 .*expected a value in \[1, 10000\]"),
        ({"strategy": "eval"}, r"parameter 'strategy' = 'eval' .*expected one of \['last', 'mean', 'drift'\]"),
        ({"remember_data": True}, r"parameter 'remember_data' of sktime NaiveForecaster is not on the allow-list"),
    ],
)
def test_params_off_the_list_or_out_of_range_are_refused_at_construction(params, message):
    with pytest.raises(SktimeAllowListError, match=message):
        create("sktime", estimator="NaiveForecaster", params=params)


def test_every_allowed_param_is_a_constructor_param_of_its_class():
    import inspect

    from tycheon.forecasters.roster.sktime_allowlist import allowed_class, allowed_estimators, rules

    for name in allowed_estimators():
        accepted = set(inspect.signature(allowed_class(name).__init__).parameters)
        assert set(rules(name)) <= accepted, name


def test_params_round_trip_and_bad_params_are_rejected():
    model = create("sktime", estimator="NaiveForecaster", params={"sp": 12})
    assert model.clone().get_params() == {"estimator": "NaiveForecaster", "params": {"sp": 12}}
    with pytest.raises(TypeError, match="params must be a dict"):
        create("sktime", estimator="NaiveForecaster", params=[("sp", 12)])


def test_sktime_api_notices_are_dropped_but_a_numerical_problem_is_relayed():
    # sktime warns FutureWarning (remember_data default) on every fit: a notice about its API, dropped.
    # statsmodels' Holt-Winters takes log(0) on an all-zero series: relayed with the estimator named.
    y = np.vstack([np.zeros(30), np.linspace(1.0, 30.0, 30)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        create("sktime", estimator="ExponentialSmoothing").predict(make_history(y), horizon=2)
    assert not any(issubclass(w.category, FutureWarning) for w in caught)
    relayed = [str(w.message) for w in caught if w.category is NumericalWarning]
    assert relayed == [
        "sktime ExponentialSmoothing: divide by zero encountered in log (RuntimeWarning in holtwinters/model.py)"
    ]


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize(("season", "freq", "period"), [(1, "YS", "Y"), (4, "QS", "Q"), (12, "MS", "M")])
def test_theta_without_sp_uses_the_panels_season_length(season, freq, period):
    # M1/M3 yearly series have 14-20 observations: sp = 12 there fails ("2 complete cycles requires 24")
    from sktime.forecasting.theta import ThetaForecaster

    rng = np.random.default_rng(5)
    y = 100 + np.cumsum(rng.normal(1.0, 2.0, size=(2, 30)), axis=1)
    hist = make_history(y, season=season, freq=freq)
    model = create("sktime", estimator="ThetaForecaster", params={})
    assert model.constructor_params(season_length=season) == {"sp": season}
    fc = model.predict(hist, horizon=4)
    s = pd.Series(hist.series(0), index=hist.periods[hist.observed[0]].to_period(period))
    direct = ThetaForecaster(sp=season).fit(s, fh=[1, 2, 3, 4]).predict().to_numpy()
    np.testing.assert_allclose(fc.point[0], direct, rtol=1e-10)
    if season > 1:
        # the fixed sp=12 of the old config is what failed on these lengths
        with pytest.raises(ValueError, match="complete cycles"):
            create("sktime", estimator="ThetaForecaster", params={"sp": 24}).predict(hist, horizon=4)


def test_an_explicit_sp_is_kept_and_only_a_listed_season_param_is_filled_in():
    assert create("sktime", estimator="ThetaForecaster", params={"sp": 12}).constructor_params(season_length=4) == {
        "sp": 12
    }
    # NaiveForecaster lists sp too, but there it would turn "last" into the seasonal naive: left alone
    naive = create("sktime", estimator="NaiveForecaster", params={"strategy": "last"})
    assert naive.constructor_params(season_length=12) == {"strategy": "last"}
