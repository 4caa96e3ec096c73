"""Tiny forecasters and a tiny panel generator for tests of the engine (not benchmark methods).

They are deliberately simple so that a test can compute the expected forecast by hand, and they live in
the package (not in a test module) so that joblib and Dask workers can import them.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pandas as pd

from tycheon.data.panel import Panel
from tycheon.forecasters.base import Capabilities, Forecast, Forecaster, History

__all__ = ["ConstantForecaster", "GlobalMeanForecaster", "MeanForecaster", "NaiveForecaster", "toy_panel"]

_Z = {0.1: -1.2815515655446004, 0.5: 0.0, 0.9: 1.2815515655446004}


def _last_observed(history: History) -> np.ndarray:
    """Last observed value per series (the engine guarantees one in the last column)."""
    idx = history.n_periods - 1 - np.argmax(history.observed[:, ::-1], axis=1)
    return history.values[np.arange(history.n_series), idx]  # [series]


class NaiveForecaster(Forecaster):
    """Last value, vectorised; quantiles and sample paths from the spread of first differences."""

    capabilities: ClassVar[Capabilities] = Capabilities(vectorised=True, quantiles=True, samples=True)

    def __init__(self, *, min_obs: int = 1) -> None:
        self.min_obs = min_obs

    def min_history(self, season_length: int) -> int:
        return self.min_obs

    def _predict(
        self,
        history: History,
        *,
        horizon: int,
        quantile_levels: tuple[float, ...],
        n_samples: int,
        rng: np.random.Generator,
    ) -> Forecast:
        last = _last_observed(history)
        point = np.repeat(last[:, None], horizon, axis=1)  # [series, horizon]
        diffs = np.diff(history.values, axis=1)  # [series, time - 1], NaN across a ragged start
        ok = np.isfinite(diffs)
        cnt = ok.sum(axis=1)
        d = np.where(ok, diffs, 0.0)
        mean = d.sum(axis=1) / np.maximum(cnt, 1)
        sd = np.sqrt(np.where(ok, (d - mean[:, None]) ** 2, 0.0).sum(axis=1) / np.maximum(cnt, 1))
        grow = np.sqrt(np.arange(1, horizon + 1))  # [horizon]
        quantiles = None
        if quantile_levels:
            z = np.array([_Z.get(q, 0.0) for q in quantile_levels])
            quantiles = point[:, :, None] + sd[:, None, None] * grow[None, :, None] * z[None, None, :]
        samples = None
        if n_samples:
            noise = rng.standard_normal((len(last), horizon, n_samples))
            samples = point[:, :, None] + sd[:, None, None] * grow[None, :, None] * noise
        return Forecast(
            point=point,
            quantile_levels=quantile_levels if quantiles is not None else (),
            quantiles=quantiles,
            samples=samples,
        )


class MeanForecaster(Forecaster):
    """Mean of each series' observed history, vectorised."""

    capabilities: ClassVar[Capabilities] = Capabilities(vectorised=True)

    def _predict(
        self,
        history: History,
        *,
        horizon: int,
        quantile_levels: tuple[float, ...],
        n_samples: int,
        rng: np.random.Generator,
    ) -> Forecast:
        mean = np.nanmean(history.values, axis=1)
        return Forecast(point=np.repeat(mean[:, None], horizon, axis=1))


class ConstantForecaster(Forecaster):
    """Always the same value: its errors are exchangeable whenever the data are."""

    capabilities: ClassVar[Capabilities] = Capabilities(vectorised=True)

    def __init__(self, *, value: float = 0.0) -> None:
        self.value = value

    def _predict(
        self,
        history: History,
        *,
        horizon: int,
        quantile_levels: tuple[float, ...],
        n_samples: int,
        rng: np.random.Generator,
    ) -> Forecast:
        return Forecast(point=np.full((history.n_series, horizon), float(self.value)))


class GlobalMeanForecaster(Forecaster):
    """A global model: half the series mean, half the mean over every series of the training history."""

    capabilities: ClassVar[Capabilities] = Capabilities(vectorised=True, is_global=True)

    def _fit(self, history: History) -> None:
        self.level_ = float(np.nanmean(history.values)) if history.observed.any() else 0.0

    def _predict(
        self,
        history: History,
        *,
        horizon: int,
        quantile_levels: tuple[float, ...],
        n_samples: int,
        rng: np.random.Generator,
    ) -> Forecast:
        mean = 0.5 * np.nanmean(history.values, axis=1) + 0.5 * self.level_
        return Forecast(point=np.repeat(mean[:, None], horizon, axis=1))


def toy_panel(
    *,
    n_series: int = 12,
    n_periods: int = 36,
    seed: int = 0,
    zero_share: float = 0.3,
    ragged: bool = True,
    levels: bool = True,
    freq: str = "MS",
) -> Panel:
    """A small seasonal panel with zeros, ragged starts and a two-level hierarchy (``region``, ``store``).

    Series ``k`` has level ``10 * (k + 1)``, a 12-period season, gamma noise and zero demand with
    probability ``zero_share``; with ``ragged`` a third of the series start late.
    """
    rng = np.random.default_rng(seed)
    periods = pd.date_range("2020-01-01", periods=n_periods, freq=freq)
    rows = []
    for k in range(n_series):
        start = int(rng.integers(1, n_periods // 2)) if ragged and k % 3 == 2 else 0
        t = np.arange(start, n_periods)
        season = 1.0 + 0.4 * np.sin(2 * np.pi * t / 12)
        y = 10.0 * (k + 1) * season * rng.gamma(4.0, 0.25, size=len(t))
        y = np.where(rng.random(len(t)) < zero_share, 0.0, np.round(y, 2))
        rows.append(pd.DataFrame({"series_id": f"s{k:03d}", "period": periods[t], "value": y}))
    frame = pd.concat(rows, ignore_index=True)
    attrs = None
    lv: tuple[str, ...] = ()
    if levels:
        ids = [f"s{k:03d}" for k in range(n_series)]
        attrs = pd.DataFrame(
            {
                "series_id": ids,
                "region": [f"r{k % 2}" for k in range(n_series)],
                "store": [f"st{k % 4}" for k in range(n_series)],
            }
        )
        lv = ("region", "store")
    return Panel.from_long(frame, freq=freq, attributes=attrs, levels=lv, name="toy", meta={"synthetic": True})
