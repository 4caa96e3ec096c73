"""One unit of work: one model on one chunk of one unit's series, over every origin.

A :class:`ModelTask` is picklable (it travels to joblib and Dask workers with only its chunk's arrays). At
each origin it builds the training history (guards 2 and 3), calls the factory, wraps the fitted model
(guard 1 on every predict) and forecasts the chunk's eligible series in one call. A model that raises, or
overruns its time budget, ends the task with a ``failed`` result; a :class:`LookaheadError` is never
caught here.

The time budget is soft: it is checked between origins, so a single slow fit or predict can exceed it.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tycheon._typing import BoolArray, FloatArray, IntArray
from tycheon.backtest.factories import Factory
from tycheon.backtest.guards import GuardCounter, GuardedForecaster, LookaheadError, check_embargo, check_fit
from tycheon.backtest.protocol import Origin
from tycheon.backtest.slices import UnitData, fit_history, predict_history
from tycheon.forecasters.base import Forecast, Forecaster, ForecasterError

__all__ = ["ModelTask", "OriginOutput", "TaskResult"]

_TRACEBACK_LINES = 12


class TimeBudgetExceeded(RuntimeError):
    """The model used more than its (soft) time budget."""


@dataclass(frozen=True, eq=False)
class OriginOutput:
    """Forecasts of a task at one origin for ``rows`` (indices into the unit)."""

    origin_pos: int
    rows: IntArray  # [series]
    point: FloatArray  # [series, horizon]
    quantiles: FloatArray | None  # [series, horizon, level]
    samples: FloatArray | None  # [series, horizon, sample]


@dataclass
class TaskResult:
    model: str
    unit: str
    chunk: int
    outputs: list[OriginOutput] = field(default_factory=list)
    guards: GuardCounter = field(default_factory=GuardCounter)
    fit_seconds: float = 0.0
    predict_seconds: float = 0.0
    below_model_min_history: int = 0
    failed: bool = False
    reason: str = ""
    traceback: str = ""


def _short_traceback(err: BaseException) -> str:
    lines = traceback.format_exception(type(err), err, err.__traceback__)
    text = "".join(lines).rstrip().splitlines()
    return "\n".join(text[-_TRACEBACK_LINES:])


def _align_quantiles(forecast: Forecast, levels: tuple[float, ...]) -> FloatArray | None:
    """The forecast's quantiles at the requested levels (NaN for a level it does not give)."""
    if forecast.quantiles is None or not levels:
        return None
    given = np.asarray(forecast.quantile_levels, dtype=np.float64)
    n, h = forecast.point.shape
    out = np.full((n, h, len(levels)), np.nan)  # [series, horizon, level]
    for j, q in enumerate(levels):
        hit = np.flatnonzero(np.isclose(given, q, rtol=0, atol=1e-9))
        if len(hit):
            out[:, :, j] = forecast.quantiles[:, :, hit[0]]
    return out


@dataclass(eq=False)
class ModelTask:
    """Run one model on one chunk of a unit over all origins; call it to get a :class:`TaskResult`.

    ``eligible`` and ``n_obs`` are ``[series, origin]`` for the chunk's series (engine-level abstention
    already applied); the model's own ``min_history`` is applied here.
    """

    model: str
    factory: Factory
    data: UnitData
    rows: IntArray  # [series] indices of the chunk in the unit
    chunk: int
    origins: list[Origin]
    eligible: BoolArray  # [series, origin]
    n_obs: IntArray  # [series, origin]
    periods: pd.DatetimeIndex
    embargo: int
    static: bool
    horizon: int
    quantile_levels: tuple[float, ...]
    n_samples: int
    seed_entropy: tuple[int, ...]
    time_budget: float | None = None

    def __call__(self) -> TaskResult:
        result = TaskResult(self.model, self.data.unit, self.chunk)
        start = time.perf_counter()
        try:
            self._run(result, start)
        except LookaheadError:
            raise
        except Exception as err:  # any model failure is recorded, and the run goes on
            result.failed = True
            result.reason = f"{type(err).__name__}: {err}"
            result.traceback = _short_traceback(err)
            result.outputs = []
        return result

    def _fit(self, origin: Origin, result: TaskResult) -> tuple[GuardedForecaster, pd.Timestamp]:
        history = fit_history(self.data, fit_end=origin.fit_end, fit_time=origin.fit_time)
        check_fit(history, fit_time=origin.fit_time, counter=result.guards, model=self.model)
        check_embargo(history, origin_index=origin.index, embargo=self.embargo, periods=self.periods,
                      counter=result.guards, model=self.model)
        t0 = time.perf_counter()
        fitted = self.factory(history, origin.fit_time)
        result.fit_seconds += time.perf_counter() - t0
        if not isinstance(fitted, Forecaster):
            raise TypeError(f"the factory of {self.model!r} returned {type(fitted).__name__}, not a Forecaster")
        last = history.periods[-1] if history.n_periods else None
        return GuardedForecaster(fitted, counter=result.guards, model=self.model), last

    def _run(self, result: TaskResult, start: float) -> None:
        fitted: GuardedForecaster | None = None
        fitted_last: pd.Timestamp | None = None
        for j, origin in enumerate(self.origins):
            if self.time_budget is not None and time.perf_counter() - start > self.time_budget:
                raise TimeBudgetExceeded(
                    f"exceeded its time budget of {self.time_budget:g} s (a soft budget, checked between "
                    "origins)"
                )
            rows = np.flatnonzero(self.eligible[:, j])
            if not len(rows):
                continue
            if fitted is None or not self.static:
                fitted, fitted_last = self._fit(origin, result)
            elif fitted_last is not None:
                # a frozen fit still serves this later origin: its training must end before its embargo
                cut = origin.index - self.embargo
                if fitted_last >= self.periods[cut]:
                    raise LookaheadError(
                        f"{self.model}: frozen training ends at {fitted_last.date()}, inside the embargo "
                        f"before origin {origin.timestamp.date()}"
                    )
                result.guards.embargo += 1
            need = fitted.min_history(self.data.season_length)
            enough = self.n_obs[rows, j] >= need
            result.below_model_min_history += int((~enough).sum())
            rows = rows[enough]
            if not len(rows):
                continue
            history = predict_history(self.data, rows, index=origin.index, origin=origin.timestamp)
            rng = np.random.default_rng(np.random.SeedSequence(list(self.seed_entropy) + [origin.index]))
            t0 = time.perf_counter()
            forecast = fitted.predict(history, origin=origin.timestamp, horizon=self.horizon,
                                      quantile_levels=self.quantile_levels, n_samples=self.n_samples,
                                      seed=rng)
            result.predict_seconds += time.perf_counter() - t0
            samples = forecast.samples if self.n_samples else None
            if samples is not None and samples.shape[2] != self.n_samples:
                raise ForecasterError(
                    f"{self.model}: gave {samples.shape[2]} sample paths, {self.n_samples} were requested"
                )
            result.outputs.append(OriginOutput(j, self.rows[rows], np.asarray(forecast.point, dtype=np.float64),
                                               _align_quantiles(forecast, self.quantile_levels), samples))

    def describe(self) -> dict[str, Any]:
        return {"model": self.model, "unit": self.data.unit, "chunk": self.chunk, "n_series": len(self.rows)}
