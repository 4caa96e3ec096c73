"""Shared helpers for the roster tests: build past-only History slices from plain arrays."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from tycheon.forecasters.base import Forecast, Forecaster, History


def make_history(values, *, season: int = 12, freq: str = "MS", start: str = "2020-01-01") -> History:
    """A History over ``values`` ``[series, time]`` (NaN on the left = ragged start), monthly by default."""
    y = np.atleast_2d(np.asarray(values, dtype=np.float64))
    s, t = y.shape
    periods = pd.date_range(start, periods=t, freq=freq)
    observed = np.isfinite(y)
    ends = pd.date_range(start, periods=t + 1, freq=freq)[1:].to_numpy()
    available_at = np.where(observed, np.broadcast_to(ends, (s, t)), np.datetime64("NaT"))
    return History(
        values=y, observed=observed, series_ids=np.array([f"s{i}" for i in range(s)]),
        periods=periods, as_of=pd.Timestamp(ends[-1]), available_at=available_at.astype("datetime64[ns]"),
        freq=freq, season_length=season,
    )


def ragged_panel(rng: np.random.Generator, *, n_series: int, n_periods: int, min_len: int,
                 intermittent: bool = False) -> np.ndarray:
    """Positive (or intermittent, with zeros) series with random ragged starts: ``[series, time]``."""
    if intermittent:
        y = rng.poisson(0.5, (n_series, n_periods)) * rng.gamma(2.0, 5.0, (n_series, n_periods))
    else:
        t = np.arange(n_periods)
        y = 50 + 10 * np.sin(2 * np.pi * t / 12)[None, :] + rng.gamma(4.0, 3.0, (n_series, n_periods))
    y = y.astype(np.float64)
    starts = rng.integers(0, n_periods - min_len + 1, n_series)
    for i, s0 in enumerate(starts):
        y[i, :s0] = np.nan
    return y


class RaisingForecaster(Forecaster):
    """Deliberately fails at predict (for the engine's failure-isolation tests; not registered)."""

    def __init__(self, *, message: str = "deliberate failure") -> None:
        self.message = message

    def _predict(self, history, *, horizon, quantile_levels, n_samples, rng):
        raise RuntimeError(self.message)


class SleepingForecaster(Forecaster):
    """Sleeps ``seconds`` then forecasts the last value (for time-budget tests; not registered)."""

    def __init__(self, *, seconds: float = 5.0) -> None:
        self.seconds = seconds

    def _predict(self, history, *, horizon, quantile_levels, n_samples, rng):
        time.sleep(self.seconds)
        return Forecast(point=np.repeat(history.values[:, -1:], horizon, axis=1))
