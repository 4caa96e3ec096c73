"""The forecaster contract: outputs are checked before anyone can score them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tycheon.data import Panel, PanelValidationError
from tycheon.forecasters.base import Forecast, ForecasterError, History, LocalForecaster


def _history(n: int = 3, t: int = 6) -> History:
    values = np.arange(n * t, dtype=float).reshape(n, t) + 1
    periods = pd.date_range("2020-01-01", periods=t, freq="MS")
    avail = np.tile((periods + pd.offsets.MonthBegin(1)).to_numpy(), (n, 1))
    return History(
        values,
        np.ones((n, t), bool),
        np.array([f"s{i}" for i in range(n)], dtype=object),
        periods,
        periods[-1] + pd.offsets.MonthBegin(1),
        avail,
        "MS",
        12,
    )


class _HalfQuantiles(LocalForecaster):
    def _predict_series(self, y, *, horizon, season_length, quantile_levels, rng):
        point = np.full(horizon, y[-1])
        if y[0] > 1:  # only some series get quantiles
            return point, np.tile(point[:, None], (1, len(quantile_levels)))
        return point, None


def test_when_only_some_series_get_quantiles_then_the_forecast_is_refused():
    with pytest.raises(ForecasterError, match=r"quantiles for 2 of 3 series only; none for e.g. \['s0'\]"):
        _HalfQuantiles().predict(_history(), horizon=2, quantile_levels=(0.1, 0.9))


@pytest.mark.parametrize(
    ("forecast", "message"),
    [
        (Forecast(np.zeros((2, 3)), (0.5,), np.full((2, 3, 1), np.nan)), "6 non-finite quantile"),
        (Forecast(np.zeros((2, 3)), samples=np.full((2, 3, 4), np.inf)), "24 non-finite sample"),
        (Forecast(np.zeros((2, 3)), samples=np.zeros((2, 3))), r"samples have shape \(2, 3\)"),
        (Forecast(np.full((2, 3), np.nan)), "6 non-finite point"),
    ],
)
def test_non_finite_or_misshapen_outputs_are_refused(forecast, message):
    with pytest.raises(ForecasterError, match=message):
        forecast.validate(n_series=2, horizon=3, owner="X")


def test_history_shape_errors_show_the_shapes():
    h = _history()
    with pytest.raises(ValueError, match=r"observed has \(2, 6\)"):
        History(h.values, h.observed[:2], h.series_ids, h.periods, h.as_of, h.available_at, "MS", 12)


@pytest.mark.parametrize(
    ("alias", "start"), [("ME", "MS"), ("M", "MS"), ("QE", "QS"), ("YE", "YS"), ("2ME", "2MS"), ("3QE-DEC", "3QS")]
)
def test_end_anchored_frequencies_are_refused_naming_the_start_alias(alias, start):
    frame = pd.DataFrame({"series_id": "a", "period": pd.date_range("2020-01-01", periods=4, freq="MS"), "value": 1.0})
    with pytest.raises(PanelValidationError, match=f"stamps periods at their end.*use '{start}'"):
        Panel.from_long(frame, freq=alias)


def test_subset_with_unknown_series_names_them():
    frame = pd.DataFrame({"series_id": "a", "period": pd.date_range("2020-01-01", periods=4, freq="MS"), "value": 1.0})
    with pytest.raises(PanelValidationError, match=r"e.g. \['zz'\]"):
        Panel.from_long(frame).subset(["a", "zz"])


def _small_history(**kwargs):
    values = np.array([[np.nan, 1.0, 2.0], [3.0, 0.0, 5.0]])
    observed = np.isfinite(values)
    avail = np.where(observed, np.datetime64("2020-01-01", "ns"), np.datetime64("NaT", "ns"))
    return History(
        values=values,
        observed=observed,
        series_ids=np.array(["a", "b"], dtype=object),
        periods=pd.date_range("2019-10-01", periods=3, freq="MS"),
        as_of=pd.Timestamp("2020-01-01"),
        available_at=avail,
        freq="MS",
        season_length=12,
        **kwargs,
    )


def test_history_attributes_given_as_a_callable_are_built_once_on_first_access():
    calls = []

    def build():
        calls.append(1)
        return pd.DataFrame({"region": ["x", "y"]}, index=pd.Index(["a", "b"], name="series_id"))

    h = _small_history(attributes=build)
    assert calls == []  # nothing built until a model reads it
    assert list(h.attributes["region"]) == ["x", "y"] and h.attributes is h.attributes
    assert calls == [1]
    a, b = _small_history(), _small_history()
    assert a.attributes.empty and a.attributes is not b.attributes  # the default is one frame per history
    with pytest.raises(TypeError, match="DataFrame or a zero-argument callable"):
        _small_history(attributes=3)
    with pytest.raises(TypeError, match="must be a DataFrame, got list"):
        _ = _small_history(attributes=lambda: [1, 2]).attributes


def test_history_counts_and_starts_are_cached_and_read_only():
    h = _small_history()
    assert h.n_observed().tolist() == [2, 3] and h.first_observed().tolist() == [1, 0]
    assert h.n_observed() is h.n_observed() and h.first_observed() is h.first_observed()
    assert not h.n_observed().flags.writeable and not h.first_observed().flags.writeable
