"""Shared test helpers: past-only History slices from plain arrays, a failing forecaster, a protocol that
breaks its own embargo, and the check that two score sets are the same."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from tycheon.backtest.protocol import RollingOrigin
from tycheon.forecasters.base import Forecaster, History


def make_history(values, *, season: int = 12, freq: str = "MS", start: str = "2020-01-01") -> History:
    """A History over ``values`` ``[series, time]`` (NaN on the left = ragged start), monthly by default."""
    y = np.atleast_2d(np.asarray(values, dtype=np.float64))
    s, t = y.shape
    periods = pd.date_range(start, periods=t, freq=freq)
    observed = np.isfinite(y)
    ends = pd.date_range(start, periods=t + 1, freq=freq)[1:].to_numpy()
    available_at = np.where(observed, np.broadcast_to(ends, (s, t)), np.datetime64("NaT"))
    return History(
        values=y,
        observed=observed,
        series_ids=np.array([f"s{i}" for i in range(s)]),
        periods=periods,
        as_of=pd.Timestamp(ends[-1]),
        available_at=available_at.astype("datetime64[ns]"),
        freq=freq,
        season_length=season,
    )


def ragged_panel(
    rng: np.random.Generator, *, n_series: int, n_periods: int, min_len: int, intermittent: bool = False
) -> np.ndarray:
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


class NoEmbargoProtocol(RollingOrigin):
    """A broken protocol: it declares its embargo but trains right up to each origin (the guards must
    catch it)."""

    def origins(self, panel, *, min_history=1):
        return [
            dataclasses.replace(o, fit_end=o.index, fit_time=panel.periods[o.index])
            for o in super().origins(panel, min_history=min_history)
        ]


def assert_same_scores(a, b, *, meta: tuple[str, ...] = ()) -> None:
    """Two score sets are the same: the table bit for bit, the samples, and the ``meta`` keys named
    (``"models"`` compared without its timings, which differ from run to run)."""
    pd.testing.assert_frame_equal(a.table, b.table, check_exact=True)
    assert (a.samples is None and b.samples is None) or np.array_equal(a.samples, b.samples, equal_nan=True)
    for key in meta:
        if key == "models":

            def untimed(m):
                return {n: {k: v for k, v in d.items() if not k.endswith("seconds")} for n, d in m.items()}

            assert untimed(a.meta["models"]) == untimed(b.meta["models"])
        else:
            assert a.meta[key] == b.meta[key], key
