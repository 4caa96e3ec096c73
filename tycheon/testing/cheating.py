"""A deliberately cheating forecaster: it reads the future by a route the guards cannot see.

The guards check the :class:`~tycheon.forecasters.base.History` handed to ``predict`` (ADR-0006
decision 3), and that history really is past-only. This forecaster ignores that: it walks up the Python
call stack to the nearest frame holding a :class:`~tycheon.data.panel.Panel` (the engine's ``run`` has the
whole panel in scope) and forecasts the actual future values. The guards pass it; only the poisoning
canary (:mod:`tycheon.testing.canary`) catches it, which is the point of this class (ADR-0006,
"Consequences": a forecaster that reads data from elsewhere bypasses the guard; the canary is the defence).

When no panel is reachable (another process, another unit's aggregate ids) it falls back to the last
observed value.
"""

from __future__ import annotations

import inspect
from typing import ClassVar

import numpy as np
import pandas as pd

from tycheon.data.panel import Panel
from tycheon.forecasters.base import Capabilities, Forecast, Forecaster, History

__all__ = ["CheatingForecaster"]


def _panel_in_stack() -> Panel | None:
    frame = inspect.currentframe()
    try:
        while frame is not None:
            for value in frame.f_locals.values():
                if isinstance(value, Panel):
                    return value
            frame = frame.f_back
        return None
    finally:
        del frame


class CheatingForecaster(Forecaster):
    """Forecasts the realised future it finds on the call stack (a test double; never use it to score)."""

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
        idx = history.n_periods - 1 - np.argmax(history.observed[:, ::-1], axis=1)
        point = np.repeat(history.values[np.arange(history.n_series), idx][:, None], horizon, axis=1)
        panel = _panel_in_stack()
        if panel is None:
            return Forecast(point=point)
        view = panel.dense()
        rows = pd.Index(view.series_ids).get_indexer(history.series_ids)
        start = view.periods.get_indexer(pd.DatetimeIndex([history.as_of]))[0]
        if start < 0:
            return Forecast(point=point)
        cols = np.arange(start, min(start + horizon, view.shape[1]))
        for k, r in enumerate(rows):
            if r < 0:
                continue
            future = view.values[r, cols]
            seen = view.observed[r, cols]
            point[k, : len(cols)] = np.where(seen, future, point[k, : len(cols)])
        return Forecast(point=point)
