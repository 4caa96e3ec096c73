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

This module runs the steps; the tasks are planned in :mod:`.planning` (chunk sizes, per-unit eligibility,
one task per chunk or global model), their results become each model's status and the forecast blocks in
:mod:`.blocks`, and :mod:`.records` writes the blocks into the score set.

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
from tycheon.backtest.blocks import Block, _block, _blocks, _model_status, _support
from tycheon.backtest.calibration import calibrated_run
from tycheon.backtest.columns import ColumnBuffers, code_dtypes, known_constant
from tycheon.backtest.conformal import expected_band_levels
from tycheon.backtest.execution import BACKENDS, run_tasks
from tycheon.backtest.factories import Factory, factory_capabilities, factory_unfitted
from tycheon.backtest.guards import GuardCounter
from tycheon.backtest.heap import release_free_memory
from tycheon.backtest.planning import (
    DEFAULT_CHUNK_SIZE,
    _availability,
    _plan_tasks,
    _UnitState,
    default_chunk_size,
    worker_chunk_size,
)
from tycheon.backtest.protocol import Origin, RollingOrigin, StaticSplit
from tycheon.backtest.records import ScoreSetWriter, build_scoreset
from tycheon.backtest.scoreset import ScoreSet
from tycheon.backtest.tasks import OriginOutput, TaskResult
from tycheon.backtest.units import cached_unit, parse_unit
from tycheon.data.demand import CLASSES
from tycheon.data.panel import Panel

__all__ = ["DEFAULT_CHUNK_SIZE", "default_chunk_size", "run", "worker_chunk_size"]

# backends whose rows are written as each task's result arrives (rows planned before the tasks run): with
# workers the main process is otherwise idle; in process the writing costs the same either way, and
# streaming lets go of each task's forecasts once written instead of holding every task's next to the table
STREAMING_BACKENDS = ("sequential", "joblib", "dask", "auto")


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
