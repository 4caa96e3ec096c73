"""The walk-forward engine: ``run(panel, protocol, factories) -> ScoreSet``.

What the engine owns (DESIGN.md, ADR-0006 decisions 1-4, evaluation-choices paper sections 2-4, 6):

- **origins** from the protocol (rolling or static split), the same for every unit and model;
- **what a model may see**: training histories ``[0, fit_end)`` and predict histories ``[0, origin)``, both
  copies masked to the cells published in time, checked by the three guards (:mod:`.guards`);
- **abstention**: series below ``min_history`` (or exited, unpublished, or without a target) are not
  forecast and are counted per unit, origin and reason in ``meta["abstained"]``; a model's own
  ``min_history(season_length)`` further limits *its* support (``meta["models"][m]["support"]``);
- **units of analysis** (:mod:`.units`), **demand class** and **scales** per series at each origin from
  that origin's published training window only (:mod:`tycheon.data.demand`,
  :mod:`tycheon.metrics.scale`);
- **conformal bands** (:mod:`.conformal`; with ``protocol.n_calibration_origins > 0``, pooled
  scaled-residual bands calibrated on unscored origins too, :mod:`.calibration`) and the score-set
  record (:mod:`.records`);
- **execution** over tasks with a deterministic assembly order (:mod:`.execution`), so sequential, joblib
  and Dask runs give identical score sets and a repeated run is bit-identical. A task is one chunk of a
  unit's series with *every* local model (its histories are built once per origin and shared, read-only,
  by those models; :mod:`.tasks`), or one global model on the whole unit. Conformal radii, demand classes
  and scales are computed inside the tasks (per chunk and origin, from the same published window with the
  same row-wise kernels, so bit-identical to whole-unit values); the main process only assembles the
  score set, into columns a background thread allocates and touches while the tasks run (:mod:`.columns`).

``meta["guard_checks"]`` counts hand-overs: one fit, one embargo and one predict check per (model, chunk,
origin) where the model was fitted / asked to forecast, whether or not the history it got was shared with
another model (a shared history is checked for each model it is handed to; its cell scan is done once
and remembered on the read-only history, :mod:`.guards`).

Model status in ``meta["models"]``: ``{"status": "ran", "fit_seconds", "predict_seconds", "support",
"support_by_unit", "below_model_min_history"}``; ``{"status": "failed", "reason", "traceback"}`` for a model
that raised (anything but :class:`~.guards.LookaheadError`, which always propagates) or overran its soft
``time_budget`` (the model's own fit + predict seconds, checked between origins inside a task and on its
total after the run);
``{"status": "skipped", "reason"}`` when ``availability()`` says it cannot run here. A failed model
contributes no rows: partial results would be scored on an easier subset.

Failures are kept per (model, unit): a model that raises on one unit of analysis (say a small group whose
aggregate it cannot handle) loses that unit's rows only, and its ``ran`` status lists the unit in
``"failed_units"`` (unit -> ``{"reason", "traceback"}``); its other units keep their scores. It is
``failed`` as a whole when every unit failed or when it overran its time budget.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from tycheon._typing import Backend
from tycheon.backtest.assembly import PlannedModel, StreamingAssembly, plan_rows
from tycheon.backtest.calibration import calibrated_run
from tycheon.backtest.columns import ColumnBuffers, code_dtypes, known_constant
from tycheon.backtest.conformal import expected_band_levels
from tycheon.backtest.execution import BACKENDS, run_tasks, task_seed
from tycheon.backtest.factories import Factory, factory_availability, factory_capabilities, factory_unfitted
from tycheon.backtest.guards import GuardCounter
from tycheon.backtest.heap import release_free_memory
from tycheon.backtest.protocol import Origin, RollingOrigin, StaticSplit
from tycheon.backtest.records import Block, ScoreSetWriter, build_scoreset
from tycheon.backtest.scoreset import ScoreSet
from tycheon.backtest.slices import UnitData, eligibility
from tycheon.backtest.tasks import ChunkTask, ModelSpec, OriginOutput, TaskResult
from tycheon.backtest.units import cached_unit, parse_unit
from tycheon.data.demand import CLASSES
from tycheon.data.panel import Panel

__all__ = ["DEFAULT_CHUNK_SIZE", "default_chunk_size", "run"]

DEFAULT_CHUNK_SIZE = 4096
"""Series per task when the caller names none. Every task step (a model at an origin) pays the guards,
the history views and a block's bookkeeping once whatever its size, so larger chunks cost less: warm, in
process, 30,490 series x 8 baselines x 8 origins took 2.9 s in 1,024-series chunks (1,920 steps) and
2.35 s in 4,096 (512 steps), the same forecasts; 16,384 gained nothing more. Cold (fresh whole processes,
``python -m benchmarks.perf``, median of 3) the one-shot run went 6.25 -> 5.91 s. Eight tasks at that size
still give ``auto`` its probe and two workers a share each. The chunks of a unit are made equal
(:func:`default_chunk_size`)."""


def default_chunk_size(n_series: int) -> int:
    """Series per task of a unit when the caller names none: as few chunks as :data:`DEFAULT_CHUNK_SIZE`
    allows, of equal size (``ceil(n / ceil(n / 4096))``): 30,490 series give 8 chunks of 3,812, not 7 of
    4,096 and one of 1,802, so that two workers get equal work and finish together. A unit of at most
    4,096 series is one chunk either way."""
    n = max(1, int(n_series))
    return -(-n // -(-n // DEFAULT_CHUNK_SIZE))


_CLASS_NAMES = np.asarray(CLASSES, dtype=object)
_ROWS_CACHED = 256  # (rows, classes) pairs whose gathered ids, weights and class names a unit keeps
# backends whose rows are written as each task's result arrives (rows planned before the tasks run): with
# workers the main process is otherwise idle; in process the writing costs the same either way, and
# streaming lets go of each task's forecasts once written instead of holding every task's next to the table
STREAMING_BACKENDS = ("sequential", "joblib", "dask", "auto")


class _UnitState:
    """Per-unit facts computed once for all models: eligibility and abstention counts per origin (the
    per-origin series features, demand class and scales, are computed inside the tasks)."""

    def __init__(self, data: UnitData, origins: list[Origin], *, min_history: int) -> None:
        self.data = data
        n_s, n_o = data.n_series, len(origins)
        self.eligible = np.zeros((n_s, n_o), dtype=bool)  # [series, origin]
        self.n_obs = np.zeros((n_s, n_o), dtype=np.int64)  # [series, origin]
        self.abstained: dict[str, dict[str, int]] = {}
        for j, o in enumerate(origins):
            ok, counts, n_obs = eligibility(
                data, index=o.index, origin=o.timestamp, horizon=o.horizon, min_history=min_history
            )
            self.eligible[:, j], self.n_obs[:, j] = ok, n_obs
            self.abstained[str(o.timestamp.date())] = counts
        # the target periods of each origin, one index shared by the blocks of every model and chunk
        self.targets = {o.index: data.periods[o.index : o.index + o.horizon] for o in origins}
        self._rows: dict[tuple[int, int], tuple[Any, ...]] = {}

    def per_rows(self, rows: np.ndarray, demand_code: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Series ids, weights and class names of a task output's series: gathered once per rows and class
        arrays (a task hands the same ones to every model that shares a target array), so the blocks of
        those models share them and the writer sees the same inputs (:mod:`.records`)."""
        key = (id(rows), id(demand_code))
        got = self._rows.get(key)
        if got is None:
            if len(self._rows) >= _ROWS_CACHED:  # a task's outputs come together: older ones are done
                self._rows.clear()
            data = self.data
            # the arrays are kept with the entry, so their ids cannot be reused while it lives
            got = (rows, demand_code, data.series_ids[rows], data.weight[rows], _CLASS_NAMES[demand_code])
            self._rows[key] = got
        return got[2], got[3], got[4]


def _validate(
    panel: Panel,
    protocol: Any,
    factories: Mapping[str, Factory],
    *,
    quantile_levels: Sequence[float],
    n_samples: int,
    min_history: int,
    backend: str,
    chunk_size: int | None,
    time_budget: float | None,
    band_min_origins: int,
) -> tuple[float, ...]:
    if not isinstance(panel, Panel):
        raise TypeError(f"panel must be a tycheon Panel, got {type(panel).__name__}")
    if not isinstance(protocol, (RollingOrigin, StaticSplit)):
        raise TypeError(f"protocol must be a RollingOrigin or StaticSplit, got {type(protocol).__name__}")
    if not isinstance(factories, Mapping) or not factories:
        raise ValueError("factories must be a non-empty mapping of model name -> factory")
    for name, factory in factories.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"model names must be non-empty strings, got {name!r}")
        if not callable(factory):
            raise TypeError(f"the factory of model {name!r} is not callable: {factory!r}")
    levels = tuple(float(q) for q in quantile_levels)
    if any(not 0.0 < q < 1.0 for q in levels) or list(levels) != sorted(set(levels)):
        raise ValueError(f"quantile_levels must be strictly increasing in (0, 1), got {levels}")
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 0:
        raise ValueError(f"n_samples must be an integer >= 0, got {n_samples!r}")
    if not isinstance(min_history, (int, np.integer)) or min_history < 1:
        raise ValueError(f"min_history must be an integer >= 1, got {min_history!r}")
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; accepted: {', '.join(BACKENDS)}")
    if chunk_size is not None and (not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1):
        raise ValueError(f"chunk_size must be a positive integer or None, got {chunk_size!r}")
    if time_budget is not None and not time_budget > 0:
        raise ValueError(f"time_budget must be a positive number of seconds or None, got {time_budget!r}")
    if not isinstance(band_min_origins, (int, np.integer)) or band_min_origins < 0:
        raise ValueError(f"band_min_origins must be an integer >= 0, got {band_min_origins!r}")
    return levels


def run(
    panel: Panel,
    protocol: RollingOrigin | StaticSplit,
    factories: Mapping[str, Factory],
    *,
    units: Sequence[str] = ("series",),
    quantile_levels: Sequence[float] = (0.1, 0.5, 0.9),
    n_samples: int = 0,
    min_history: int = 1,
    backend: Backend = "sequential",
    n_jobs: int | None = None,
    chunk_size: int | None = None,
    dask_client: Any = None,
    seed: int = 0,
    progress: bool = False,
    time_budget: float | None = None,
    band_min_origins: int = 0,
) -> ScoreSet:
    """Walk every model forward over the protocol's origins and return the score set.

    Parameters
    ----------
    panel : Panel
    protocol : RollingOrigin or StaticSplit
    factories : mapping of str to Factory
        Model name -> ``(history, fit_time) -> fitted Forecaster`` (see :mod:`.factories`).
    units : sequence of str
        Units of analysis: ``series``, ``total``, ``level:<attr>``, ``groups:<k>``,
        ``groups_random:<k>`` (see :mod:`.units`).
    quantile_levels : sequence of float
        Quantiles requested from models that give them.
    n_samples : int
        Sample paths requested from models that give them (0: none).
    min_history : int
        Fewest published observations a series needs at an origin to be forecast (else abstained).
    backend : {"sequential", "joblib", "dask", "auto"}
        ``auto`` starts in process and moves the remaining tasks to joblib workers when timing the first
        tasks says starting workers pays (:mod:`.execution`); same tasks, same score set.
    n_jobs : int, optional
        joblib (and ``auto``) workers.
    chunk_size : int, optional
        Series per task for local models (default: equal chunks of at most :data:`DEFAULT_CHUNK_SIZE`,
        :func:`default_chunk_size`; all local models share the chunk's task);
        global models always get one task per unit.
    dask_client : distributed.Client, optional
        Required for ``backend="dask"``.
    seed : int
        Root of every task's seed (derived from seed, model, unit and chunk).
    progress : bool
        tqdm progress bar over tasks.
    time_budget : float, optional
        Soft per-model budget in seconds (the model's own fit + predict), checked between origins.
    band_min_origins : int
        Calibration errors required for a conformal band beyond the split-conformal rank condition.

    Returns
    -------
    ScoreSet
        With ``meta`` holding the protocol, origins, ``overlap_lag``, ``guard_checks``, ``abstained``
        (unit -> origin -> reason -> count), ``models`` (status per model) and ``conformal`` counts.

    Raises
    ------
    ProtocolError
        No usable origin on this panel (no full horizon, too little history).
    ValueError
        Unknown unit, backend or other invalid option (the message lists what is accepted).
    LookaheadError
        A guard found data a model must not see; never swallowed.
    """
    levels = _validate(
        panel,
        protocol,
        factories,
        quantile_levels=quantile_levels,
        n_samples=n_samples,
        min_history=min_history,
        backend=backend,
        chunk_size=chunk_size,
        time_budget=time_budget,
        band_min_origins=band_min_origins,
    )
    if protocol.n_calibration_origins:  # scored run + calibration run, pooled bands (.calibration)
        return calibrated_run(
            run,
            panel,
            protocol,
            factories,
            units=units,
            quantile_levels=quantile_levels,
            n_samples=n_samples,
            min_history=min_history,
            backend=backend,
            n_jobs=n_jobs,
            chunk_size=chunk_size,
            dask_client=dask_client,
            seed=seed,
            progress=progress,
            time_budget=time_budget,
            band_min_origins=band_min_origins,
        )
    unit_names = list(dict.fromkeys(units))
    if not unit_names:
        raise ValueError("units must name at least one unit of analysis, e.g. ('series',)")
    for unit in unit_names:
        parse_unit(unit, panel)
    origins = protocol.origins(panel, min_history=min_history)
    first_fit_end = origins[0].fit_end
    states = [
        _UnitState(cached_unit(panel, u, first_fit_end=first_fit_end, seed=seed), origins, min_history=min_history)
        for u in unit_names
    ]
    # series per task of a unit (by its size): equal chunks by default, else what the caller asked for
    chunk_of = default_chunk_size if chunk_size is None else (lambda n, size=int(chunk_size): size)
    runnable, models_meta = _availability(factories)
    # at most this many distinct values per text column: their codes are written at the width the
    # table keeps them in (.columns.code_dtypes), so no column is copied when the table is made
    text_bounds = {
        "model": len(runnable),
        "unit": len(states),
        "series_id": sum(s.data.n_series for s in states),
        "demand_class": len(CLASSES),
    }
    tasks = _plan_tasks(
        states,
        runnable,
        factories,
        protocol,
        origins,
        chunk_of=chunk_of,
        seed=seed,
        task_args={
            "quantile_levels": levels,
            "n_samples": int(n_samples),
            "time_budget": time_budget,
            "band_min_origins": int(band_min_origins),
        },
    )
    # each task's rows are written as its result arrives (rows planned now; see .assembly), so that no
    # task's forecasts are held once written; a plan that does not hold falls back to assembling at the end
    stream = (
        None
        if backend not in STREAMING_BACKENDS
        else _streaming(
            states,
            runnable,
            factories,
            origins,
            chunk_of=chunk_of,
            make_writer=lambda total: ScoreSetWriter(
                total,
                quantile_levels=levels,
                n_samples=int(n_samples),
                band_min_origins=int(band_min_origins),
                buffers=buffers,
                band_levels=band_levels,
                text_bounds=text_bounds,
            ),
        )
    )
    # the score set's columns are allocated and touched while the tasks run (see .columns): at the planned
    # row count when the rows are planned, else at an upper bound (every eligible (series, origin) pair x
    # horizon x model), whose untouched tail would otherwise stay resident
    capacity = (
        stream.plan.total
        if stream is not None
        else sum(int(state.eligible.sum()) for state in states) * protocol.horizon * len(runnable)
    )
    band_levels = expected_band_levels(len(origins), band_min_origins=int(band_min_origins))
    release_free_memory()  # the caller's and the panel's freed temporaries, before the largest allocation
    buffers = ColumnBuffers(
        capacity,
        quantile_levels=levels,
        n_samples=int(n_samples),
        band_levels=band_levels,
        codes=code_dtypes(text_bounds),
        constant=known_constant(n_units=len(states), quantile_levels=levels, n_samples=int(n_samples)),
    )
    per_task: list[list[TaskResult]] = run_tasks(
        tasks,
        backend=backend,
        n_jobs=n_jobs,
        dask_client=dask_client,
        progress=progress,
        desc=", ".join(runnable) or "backtest",  # the bar names the model(s) it runs
        on_result=None if stream is None else stream.on_result,
    )
    results: list[TaskResult] = [r for task_results in per_task for r in task_results]

    guards = GuardCounter()
    for r in results:
        guards.add(r.guards)
    failed = _model_status(results, runnable, models_meta, time_budget, units=unit_names)
    _support(states, runnable, failed, results, models_meta)
    meta: dict[str, Any] = {
        "panel": panel.name,
        "protocol": protocol.describe(),
        "origins": [str(o.timestamp.date()) for o in origins],
        "overlap_lag": protocol.overlap_lag,
        "units": unit_names,
        "min_history": int(min_history),
        "seed": int(seed),
        "chunk_size": {s.data.unit: chunk_of(s.data.n_series) for s in states},
        "guard_checks": guards.as_dict(),
        "abstained": {s.data.unit: s.abstained for s in states},
        "models": {name: models_meta[name] for name in factories},
        "warnings": panel.warnings,
    }
    if stream is not None and not failed:
        scores = stream.finish(meta)
        if scores is not None:
            return scores  # type: ignore[return-value]
    # no plan (a factory that does not say what it builds), or the plan did not hold (a model failed, or
    # forecast other rows than planned): assemble the blocks now; the stream's columns, if any, are
    # released first. The stream let go of the forecasts it had written; the tasks that gave them run
    # again here (each task is deterministic, its seed its own), except those whose every model failed
    # on the unit (their rows are dropped)
    released = [] if stream is None else sorted(stream.released)
    stream = None
    for i in released:
        if any((r.model, r.unit) not in failed for r in per_task[i]):
            per_task[i] = tasks[i]()
    if released:
        results = [r for task_results in per_task for r in task_results]
    blocks = _blocks(states, runnable, failed, results, origins)
    return build_scoreset(
        blocks,
        quantile_levels=levels,
        n_samples=int(n_samples),
        band_min_origins=int(band_min_origins),
        meta=meta,
        buffers=buffers,
        band_levels=band_levels,
        text_bounds=text_bounds,
    )


def worker_chunk_size(n_series: int, *, n_jobs: int, backend: Backend) -> int | None:
    """Series per task when a run uses worker processes: one chunk per worker (at least 32 series), so that
    every core is busy; a function of the run's settings alone, so results stay deterministic. ``None``
    (the engine's default) for the sequential backend."""
    return None if backend == "sequential" else max(32, -(-int(n_series) // int(n_jobs)))


def _availability(factories: Mapping[str, Factory]) -> tuple[list[str], dict[str, dict[str, Any]]]:
    """The models that can run here, and the skip record (with its reason) of each that cannot."""
    models_meta: dict[str, dict[str, Any]] = {}
    runnable: list[str] = []
    for name, factory in factories.items():
        avail = factory_availability(factory)
        if not avail.ok:
            models_meta[name] = {"status": "skipped", "reason": avail.reason}
        else:
            runnable.append(name)
    return runnable, models_meta


def _plan_tasks(
    states: list[_UnitState],
    runnable: list[str],
    factories: Mapping[str, Factory],
    protocol: RollingOrigin | StaticSplit,
    origins: list[Origin],
    *,
    chunk_of: Callable[[int], int],
    seed: int,
    task_args: dict[str, Any],
) -> list[ChunkTask]:
    """One task per (unit, chunk of series) for the local models together, one per unit for each global
    model; ``task_args`` are the run-wide settings every task carries."""
    tasks: list[ChunkTask] = []
    local = [name for name in runnable if not factory_capabilities(factories[name]).is_global]
    glob = [name for name in runnable if factory_capabilities(factories[name]).is_global]
    for state in states:
        data = state.data
        # local models share a task per chunk (one set of histories per origin); a global model gets
        # the whole unit to itself, so a slow global fit never holds up the local models
        groups = [(local, chunk_of(data.n_series))] + [([name], data.n_series) for name in glob]
        for names, step in groups:
            if not names:
                continue
            for c, start in enumerate(range(0, data.n_series, step)):
                rows = np.arange(start, min(start + step, data.n_series))
                specs = tuple(ModelSpec(name, factories[name], task_seed(seed, name, data.unit, c)) for name in names)
                tasks.append(
                    ChunkTask(
                        models=specs,
                        data=data.chunk(start, start + len(rows)),
                        rows=rows,
                        chunk=c,
                        origins=origins,
                        eligible=state.eligible[rows],
                        n_obs=state.n_obs[rows],
                        periods=data.periods,
                        embargo=protocol.embargo,
                        static=isinstance(protocol, StaticSplit),
                        horizon=protocol.horizon,
                        **task_args,
                    )
                )
    return tasks


def _model_status(
    results: list[TaskResult],
    runnable: list[str],
    models_meta: dict[str, dict[str, Any]],
    time_budget: float | None,
    *,
    units: list[str],
) -> set[tuple[str, str]]:
    """Each model's status into ``models_meta``; returns the failed ``(model, unit)`` pairs (every unit of
    a model that failed as a whole)."""
    failed: set[tuple[str, str]] = set()
    for name in runnable:
        mine = [r for r in results if r.model == name]
        fit_s = float(sum(r.fit_seconds for r in mine))
        predict_s = float(sum(r.predict_seconds for r in mine))
        failed_units: dict[str, dict[str, str]] = {}
        for r in mine:  # task order: the first failure of a unit is the one recorded
            if r.failed and r.unit not in failed_units:
                failed_units[r.unit] = {"reason": r.reason, "traceback": r.traceback}
        if failed_units and len(failed_units) == len(units):
            first = failed_units[units[0]]
            models_meta[name] = {"status": "failed", "reason": first["reason"], "traceback": first["traceback"]}
        elif time_budget is not None and fit_s + predict_s > time_budget:
            models_meta[name] = {
                "status": "failed",
                "traceback": "",
                "reason": f"exceeded its time budget of {time_budget:g} s "
                f"(used {fit_s + predict_s:.3g} s; a soft budget)",
            }
        else:
            models_meta[name] = {
                "status": "ran",
                "fit_seconds": fit_s,
                "predict_seconds": predict_s,
                "support": 0,
                "support_by_unit": {},
                "below_model_min_history": int(sum(r.below_model_min_history for r in mine)),
            }
            if failed_units:
                models_meta[name]["failed_units"] = failed_units
            failed.update((name, unit) for unit in failed_units)
            continue
        failed.update((name, unit) for unit in units)
    return failed


def _support(
    states: list[_UnitState],
    runnable: list[str],
    failed: set[tuple[str, str]],
    results: list[TaskResult],
    models_meta: dict[str, dict[str, Any]],
) -> None:
    """Series forecast per model (all units, origins) and per unit, into ``models_meta``."""
    counts: dict[tuple[str, str], int] = {}
    for r in results:
        counts[(r.unit, r.model)] = counts.get((r.unit, r.model), 0) + sum(len(o.rows) for o in r.outputs)
    for state in states:
        for name in runnable:
            if models_meta[name]["status"] == "ran" and (name, state.data.unit) not in failed:
                support = counts.get((state.data.unit, name), 0)
                models_meta[name]["support"] += support
                models_meta[name]["support_by_unit"][state.data.unit] = support


def _block(
    state: _UnitState,
    unit_key: int,
    name: str,
    origin: Origin,
    part: OriginOutput,
    *,
    with_q: bool = True,
    with_s: bool = True,
) -> Block:
    """The block of one task output (one model, chunk and origin of a unit)."""
    data, rows, features = state.data, part.rows, part.features
    assert features is not None  # the engine's tasks always attach them
    ids, weight, classes = state.per_rows(rows, features.demand_code)
    return Block(
        model=name,
        unit=data.unit,
        unit_key=unit_key,
        n_unit_series=data.n_series,
        origin=origin.timestamp,
        series_rows=rows,
        series_ids=ids,
        unit_series_ids=data.series_ids,
        target_periods=state.targets[origin.index],
        actual=part.actual,  # type: ignore[arg-type]  # set on every output the tasks return
        available_at=part.available_at,  # type: ignore[arg-type]
        point=part.point,
        quantiles=part.quantiles if with_q else None,
        samples=part.samples if with_s else None,
        demand_class=classes,
        demand_code=features.demand_code,
        season_length=features.season_length,
        scale_mae=features.scale_mae,
        scale_rmse=features.scale_rmse,
        weight=weight,
        radii=part.radii,  # every output of a model that ran has them
    )


def _blocks(
    states: list[_UnitState],
    runnable: list[str],
    failed: set[tuple[str, str]],
    results: list[TaskResult],
    origins: list[Origin],
) -> list[Block]:
    """Assemble blocks in (unit, model, origin) order, chunks in series order: deterministic."""
    by_key: dict[tuple[str, str], list[TaskResult]] = {}
    for r in results:  # results are in task order: chunk order within (unit, model)
        by_key.setdefault((r.unit, r.model), []).append(r)
    blocks: list[Block] = []
    for u, state in enumerate(states):
        for m, name in enumerate(runnable):
            if (name, state.data.unit) in failed:  # a unit's rows are all or none
                continue
            outputs = [o for r in by_key.get((state.data.unit, name), []) for o in r.outputs]
            for j, origin in enumerate(origins):
                parts = [o for o in outputs if o.origin_pos == j]
                # one block per chunk part, in chunk order: the rows come out as if the parts were
                # concatenated, without the copy; quantiles and samples are all-or-nothing per
                # (model, unit, origin)
                flags = {
                    "with_q": all(p.quantiles is not None for p in parts),
                    "with_s": all(p.samples is not None for p in parts),
                }
                blocks.extend(_block(state, u * len(runnable) + m, name, origin, p, **flags) for p in parts)
    return blocks


def _streaming(
    states: list[_UnitState],
    runnable: list[str],
    factories: Mapping[str, Factory],
    origins: list[Origin],
    *,
    chunk_of: Callable[[int], int],
    make_writer: Callable[[int], ScoreSetWriter],
) -> StreamingAssembly | None:
    """Plan the score-set rows and return the assembly that writes results as they arrive, or None when
    a factory does not say what it builds (its rows cannot be planned)."""
    models = []
    for name in runnable:
        forecaster = factory_unfitted(factories[name])
        if forecaster is None:
            return None
        is_global = factory_capabilities(factories[name]).is_global
        models.append(
            PlannedModel(
                name,
                min_history=forecaster.min_history,
                chunk_step=(lambda n: n) if is_global else chunk_of,
            )
        )
    plan = plan_rows([(s.data, s.eligible, s.n_obs) for s in states], models, origins)
    position = {name: m for m, name in enumerate(runnable)}

    def make_block(u: int, name: str, j: int, part: OriginOutput) -> Block:
        return _block(states[u], u * len(runnable) + position[name], name, origins[j], part)

    return StreamingAssembly(
        plan,
        make_writer=make_writer,
        make_block=make_block,
        unit_position={s.data.unit: u for u, s in enumerate(states)},
    )
