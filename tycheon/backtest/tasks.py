"""One unit of work: every local model on one chunk of one unit's series, over every origin.

A :class:`ChunkTask` is picklable (it travels to joblib and Dask workers with only its chunk's arrays). At
each origin it builds the chunk's training history and its predict histories **once** and hands the same
(read-only) histories to every model of the task, so the cost of slicing, masking and copying is paid
per chunk rather than per model. Each model is still isolated:

- its own fitted forecaster, wrapped so that guard 1 runs on every predict;
- guards 2 and 3 run for every model on the history it is handed (a shared history is checked once per
  model that receives it, so ``meta["guard_checks"]`` still counts one check per (model, chunk, origin)
  hand-over, exactly as when every model had its own copy);
- its own seed per origin (``task_seed(seed, model, unit, chunk)`` + origin column);
- its own failure: a model that raises, or overruns its soft time budget, gets a ``failed``
  :class:`TaskResult` with no outputs and stops; the other models of the chunk go on. A
  :class:`LookaheadError` is never caught here.

The time budget is soft and per model: the model's own fit + predict seconds in this task, checked
between origins, so a single slow fit or predict can exceed it.

The task also computes each model's split-conformal radii (:mod:`.conformal`; ``band_min_origins``
calibration errors at least): a calibration group ``(model, unit, series, step)`` lies inside one chunk, so the
radii computed here are exactly those of the whole run, and the main process only concatenates them.
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tycheon._typing import BoolArray, FloatArray, IntArray
from tycheon.backtest.conformal import BAND_LEVELS, band_grid, expected_band_levels
from tycheon.backtest.factories import Factory
from tycheon.backtest.guards import GuardCounter, GuardedForecaster, LookaheadError, check_embargo, check_fit
from tycheon.backtest.protocol import Origin
from tycheon.backtest.slices import UnitData, fit_history, predict_history, published_window
from tycheon.data.demand import adi_cv2, class_codes
from tycheon.errors import TycheonError
from tycheon.forecasters.base import Forecast, Forecaster, ForecasterError, History
from tycheon.metrics.scale import seasonal_naive_scales

__all__ = ["ChunkTask", "ModelSpec", "OriginOutput", "SeriesFeatures", "TaskResult"]

_TRACEBACK_LINES = 12


@dataclass(frozen=True, eq=False)
class SeriesFeatures:
    """Per-series facts of an origin's published training window ``[0, origin)`` (DESIGN.md; ADR-0006
    decision 4): the demand class as a code into :data:`tycheon.data.demand.CLASSES` (an integer travels
    back from a worker cheaper than a string), the season length used by the scales, and the
    seasonal-naive MAE/RMSE scales (:func:`tycheon.metrics.scale.seasonal_naive_scales`)."""

    demand_code: np.ndarray  # [series] int8 index into CLASSES
    season_length: IntArray  # [series]
    scale_mae: FloatArray  # [series]
    scale_rmse: FloatArray  # [series]

    def take(self, keep: np.ndarray) -> SeriesFeatures:
        return SeriesFeatures(
            self.demand_code[keep], self.season_length[keep], self.scale_mae[keep], self.scale_rmse[keep]
        )


def series_features(data: UnitData, rows: IntArray, *, index: int, origin: pd.Timestamp) -> SeriesFeatures:
    """Demand class and scales of ``rows`` from the cells published by ``origin`` in columns
    ``[0, index)``: the same kernels on the same window as for the whole unit (both are row-wise, so a
    chunk's values are bit-identical to the unit's)."""
    window, pub, _ = published_window(data, rows, index, origin, current_run=True)  # [series, i]
    codes = class_codes(*adi_cv2(window, pub))
    mae, rmse, lag = seasonal_naive_scales(window, pub, data.season_length)
    return SeriesFeatures(codes, lag, mae, rmse)


class TimeBudgetExceeded(TycheonError, RuntimeError):
    """The model used more than its (soft) time budget."""


@dataclass(frozen=True, eq=False)
class OriginOutput:
    """Forecasts of a model at one origin for ``rows`` (indices into the unit).

    ``radii`` holds the conformal half-widths when the task computed the bands (else None): one entry per
    level of :data:`~.conformal.BAND_LEVELS`, the radii of the kept cells (observed targets, series then
    step) with NaN where no band, or None where no kept cell has a band at that level (so grids of NaN
    are not shipped back from the workers).
    """

    origin_pos: int
    rows: IntArray  # [series]
    point: FloatArray  # [series, horizon]
    quantiles: FloatArray | None  # [series, horizon, level]
    samples: FloatArray | None  # [series, horizon, sample]
    radii: tuple[FloatArray | None, ...] | None = None  # per band level: [kept cell] or None
    actual: FloatArray | None = None  # [series, horizon] NaN where the target is unobserved
    available_at: np.ndarray | None = None  # [series, horizon] datetime64[ns]
    features: SeriesFeatures | None = None  # [series] demand class and scales at this origin


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


@dataclass(frozen=True, eq=False)
class ModelSpec:
    """One model of a task: its configured name, its factory and its seed entropy."""

    model: str
    factory: Factory
    seed_entropy: tuple[int, ...]


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


class _ModelRun:
    """The state of one model inside a task: its result, its fitted forecaster, its seconds used."""

    def __init__(self, spec: ModelSpec, unit: str, chunk: int) -> None:
        self.spec = spec
        self.result = TaskResult(spec.model, unit, chunk)
        self.fitted: GuardedForecaster | None = None
        self.fit_end: int | None = None  # the training cut of ``fitted``: origins with the same cut share it
        self.fitted_last: pd.Timestamp | None = None
        self.local_rows: list[IntArray] = []  # [series] chunk-local rows of each output

    @property
    def seconds(self) -> float:
        return self.result.fit_seconds + self.result.predict_seconds

    def fail(self, err: BaseException) -> None:
        self.result.failed = True
        self.result.reason = f"{type(err).__name__}: {err}"
        self.result.traceback = _short_traceback(err)
        self.result.outputs = []
        self.local_rows = []


@dataclass(eq=False)
class ChunkTask:
    """Run some models on one chunk of a unit over all origins; call it to get one :class:`TaskResult`
    per model, in the order of ``models``.

    ``eligible`` and ``n_obs`` are ``[series, origin]`` for the chunk's series (engine-level abstention
    already applied); each model's own ``min_history`` is applied here. ``band_min_origins`` is the fewest
    calibration errors a conformal band of the model's outputs needs.
    """

    models: tuple[ModelSpec, ...]
    data: UnitData
    rows: IntArray  # [series] indices of the chunk in the unit
    chunk: int
    origins: list[Origin]
    eligible: BoolArray  # [series, origin]
    n_obs: IntArray  # [series, origin]
    periods: pd.DatetimeIndex
    embargo: int
    horizon: int
    quantile_levels: tuple[float, ...]
    n_samples: int
    time_budget: float | None = None
    band_min_origins: int = 0

    def __call__(self) -> list[TaskResult]:
        runs = [_ModelRun(spec, self.data.unit, self.chunk) for spec in self.models]
        for j, origin in enumerate(self.origins):
            live = [r for r in runs if not r.result.failed]
            if not live:
                break
            rows = np.flatnonzero(self.eligible[:, j])
            fit_cache: list[History] = []
            features_cache: list[SeriesFeatures] = []
            predict_cache: dict[int, tuple[History, FloatArray, np.ndarray, SeriesFeatures, IntArray]] = {}
            for run in live:
                try:
                    self._step(run, j, origin, rows, fit_cache, features_cache, predict_cache)
                except LookaheadError:
                    raise
                except KeyboardInterrupt:
                    if multiprocessing.parent_process() is None:
                        raise  # Ctrl-C in the main process stops the run; inside a worker it is the model's
                    run.fail(KeyboardInterrupt("raised inside a worker"))
                except BaseException as err:  # any model failure, SystemExit too, is recorded; the others go on
                    run.fail(err)
        publication: list[IntArray] = []  # built once, for the first model with outputs
        for run in runs:
            if not run.result.failed:
                self._bands(run, publication)
        return [r.result for r in runs]

    def _publication_grid(self) -> IntArray:
        """``[series * step, origin]`` publication times (ns) of every target cell of the chunk at every
        origin: the same for all models (each reads it only where it has an error)."""
        n, h, n_orig = len(self.rows), self.horizon, len(self.origins)
        avail = self.data.available_at.view(np.int64)  # [series, period]
        pub = np.empty((n, h, n_orig), dtype=np.int64)
        for j, origin in enumerate(self.origins):
            pub[:, :, j] = avail[:, origin.index : origin.index + h]
        return pub.reshape(n * h, n_orig)

    def _fit_history(self, origin: Origin, cache: list[History]) -> History:
        if not cache:
            cache.append(fit_history(self.data, fit_end=origin.fit_end, fit_time=origin.fit_time))
        return cache[0]

    def _fit(self, run: _ModelRun, origin: Origin, history: History) -> None:
        result = run.result
        check_fit(history, fit_time=origin.fit_time, counter=result.guards, model=run.spec.model)
        check_embargo(
            history,
            origin_index=origin.index,
            embargo=self.embargo,
            periods=self.periods,
            counter=result.guards,
            model=run.spec.model,
        )
        t0 = time.perf_counter()
        fitted = run.spec.factory(history, origin.fit_time)
        result.fit_seconds += time.perf_counter() - t0
        if not isinstance(fitted, Forecaster):
            raise TypeError(f"the factory of {run.spec.model!r} returned {type(fitted).__name__}, not a Forecaster")
        run.fitted = GuardedForecaster(fitted, counter=result.guards, model=run.spec.model)
        run.fit_end = origin.fit_end
        # a fit that serves later origins (a static split, a refit calendar) checks where its training ended
        run.fitted_last = history.periods[-1] if history.n_periods else None

    def _step(
        self,
        run: _ModelRun,
        j: int,
        origin: Origin,
        rows: IntArray,
        fit_cache: list[History],
        features_cache: list[SeriesFeatures],
        predict_cache: dict[int, tuple[History, FloatArray, np.ndarray, SeriesFeatures, IntArray]],
    ) -> None:
        result, model = run.result, run.spec.model
        if self.time_budget is not None and run.seconds > self.time_budget:
            raise TimeBudgetExceeded(
                f"exceeded its time budget of {self.time_budget:g} s (a soft budget, checked between origins)"
            )
        if not len(rows):
            return
        if run.fitted is None or origin.fit_end != run.fit_end:
            # a refit origin (rolling: every origin unless a refit calendar says otherwise; static: the first)
            self._fit(run, origin, self._fit_history(origin, fit_cache))
        elif run.fitted_last is not None:
            # an update: the last fit serves this later origin with the parameters it estimated and the
            # history published by this origin (guard 1 at predict); its training must end before the embargo
            cut = origin.index - self.embargo
            if run.fitted_last >= self.periods[cut]:
                raise LookaheadError(
                    f"{model}: frozen training ends at {run.fitted_last.date()}, inside the embargo "
                    f"before origin {origin.timestamp.date()}"
                )
            result.guards.embargo += 1
        fitted = run.fitted
        if fitted is None:  # unreachable: the first origin with eligible rows always fits
            raise RuntimeError(f"{model}: no fitted forecaster at origin {origin.timestamp.date()}")
        need = fitted.min_history(self.data.season_length)
        enough = self.n_obs[rows, j] >= need
        result.below_model_min_history += int((~enough).sum())
        if not enough.any():
            return
        mine = rows[enough]
        if need not in predict_cache:  # models with the same minimum share one history and one target
            targets = slice(origin.index, origin.index + self.horizon)
            actual = np.where(self.data.observed[mine, targets], self.data.values[mine, targets], np.nan)
            avail = self.data.available_at[mine, targets]
            actual.flags.writeable = avail.flags.writeable = False  # shared by the outputs of those models
            if not features_cache:  # the features of every eligible series, once per origin
                features_cache.append(series_features(self.data, rows, index=origin.index, origin=origin.timestamp))
            features = features_cache[0]
            predict_cache[need] = (
                predict_history(self.data, mine, index=origin.index, origin=origin.timestamp),
                actual,
                avail,
                features if enough.all() else features.take(enough),
                self.rows[mine],  # one array for those models: it travels (and is written) once
            )
        history, actual, avail, features, unit_rows = predict_cache[need]
        rng = np.random.default_rng(np.random.SeedSequence(list(run.spec.seed_entropy) + [origin.index]))
        t0 = time.perf_counter()
        forecast = fitted.predict(
            history,
            origin=origin.timestamp,
            horizon=self.horizon,
            quantile_levels=self.quantile_levels,
            n_samples=self.n_samples,
            seed=rng,
        )
        result.predict_seconds += time.perf_counter() - t0
        samples = forecast.samples if self.n_samples else None
        if samples is not None and samples.shape[2] != self.n_samples:
            raise ForecasterError(f"{model}: gave {samples.shape[2]} sample paths, {self.n_samples} were requested")
        result.outputs.append(
            OriginOutput(
                j,
                unit_rows,
                np.asarray(forecast.point, dtype=np.float64),
                _align_quantiles(forecast, self.quantile_levels),
                samples,
                actual=actual,
                available_at=avail,
                features=features,
            )
        )
        run.local_rows.append(mine)

    def _bands(self, run: _ModelRun, publication: list[IntArray]) -> None:
        """Attach the conformal radii of the model's outputs (calibration groups are chunk-local).

        The errors go straight onto a ``[series, step, origin]`` grid of the chunk (read as the
        ``[key, origin]`` grid :func:`~.conformal.band_grid` takes, one key per (chunk series, step));
        every cell with an error (a kept row of the score set) asks for a band. The publication times
        come from :meth:`_publication_grid` (``publication`` holds it once built: the task's models share
        it). Only the levels where a band can exist (:func:`~.conformal.expected_band_levels`) are
        calibrated; at the others every radius is NaN, given as None.
        """
        outputs = run.result.outputs
        if not outputs:
            return
        n, h, n_orig = len(self.rows), self.horizon, len(self.origins)
        levels = expected_band_levels(n_orig, band_min_origins=int(self.band_min_origins))
        grid = None
        possible: list[tuple[int, ...]] = []  # [origin] levels with a band possible there
        if levels:
            err = np.full((n, h, n_orig), np.nan)  # [series, step, origin]
            for out, local in zip(outputs, run.local_rows, strict=False):
                if out.actual is None or out.available_at is None:
                    raise ValueError(f"{run.spec.model}: an origin output without actuals cannot calibrate bands")
                err[local, :, out.origin_pos] = np.abs(out.actual - out.point)  # NaN where not kept
            if not publication:
                publication.append(self._publication_grid())
            stamps = np.array([o.timestamp.value for o in self.origins], dtype=np.int64)  # [origin] ns
            grid, _ = band_grid(
                err=err.reshape(n * h, n_orig),
                pub=publication[0],  # read only where err is finite
                stamps=stamps,
                levels_percent=levels,
                min_origins=int(self.band_min_origins),
            )
            grid = grid.reshape(len(levels), n, h, n_orig)  # [level, series, step, origin]
            # an origin calibrates on errors of earlier origins only: with e of them at most, a level whose
            # rank exceeds e has no band there (the first origins of a run), so its radii are not gathered
            earlier = (stamps[None, :] < stamps[:, None]).sum(axis=1)  # [origin]
            possible = [expected_band_levels(int(e) + 1, band_min_origins=int(self.band_min_origins)) for e in earlier]
        for k, (out, local) in enumerate(zip(outputs, run.local_rows, strict=False)):
            keep = None
            per_level: list[FloatArray | None] = []
            for level in BAND_LEVELS:
                if grid is None or level not in possible[out.origin_pos]:
                    per_level.append(None)
                    continue
                if keep is None:  # [series, step]: the kept rows, in order
                    keep = np.isfinite(np.asarray(out.actual, dtype=np.float64))
                radius = grid[levels.index(level), local, :, out.origin_pos][keep]  # [kept cell]
                per_level.append(radius if np.isfinite(radius).any() else None)
            outputs[k] = dataclasses.replace(out, radii=tuple(per_level))

    def describe(self) -> dict[str, Any]:
        return {
            "models": [m.model for m in self.models],
            "unit": self.data.unit,
            "chunk": self.chunk,
            "n_series": len(self.rows),
        }
