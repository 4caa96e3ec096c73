"""What a run is made of, decided before any model runs: the series per task (:func:`default_chunk_size`,
:func:`worker_chunk_size`), the per-unit facts every model shares (eligibility and abstention per origin,
:class:`_UnitState`), which models can run here (:func:`_availability`) and the tasks themselves
(:func:`_plan_tasks`: one per chunk of a unit's series for the local models together, one per unit for each
global model). The engine (:mod:`.engine`) runs the tasks and assembles their results.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from tycheon._typing import Backend
from tycheon.backtest.execution import task_seed
from tycheon.backtest.factories import Factory, factory_availability, factory_capabilities
from tycheon.backtest.protocol import Origin, RollingOrigin, StaticSplit
from tycheon.backtest.slices import UnitData, eligibility
from tycheon.backtest.tasks import ChunkTask, ModelSpec
from tycheon.data.demand import CLASSES

__all__ = ["DEFAULT_CHUNK_SIZE", "default_chunk_size", "worker_chunk_size"]

DEFAULT_CHUNK_SIZE = 4096
"""Series per task when the caller names none. Every task step (a model at an origin) pays the guards,
the history views and a block's bookkeeping once whatever its size, so larger chunks cost less: warm, in
process, 30,490 series x 8 baselines x 8 origins ran faster in 4,096-series chunks (512 steps) than in
1,024 (1,920 steps), the same forecasts, and 16,384 gained nothing more; a cold one-shot run (fresh whole
processes, ``python -m benchmarks.perf``) was faster too (timings: benchmarks/perf/MEASUREMENTS.md). Eight
tasks at that size still give ``auto`` its probe and two workers a share each. The chunks of a unit are
made equal (:func:`default_chunk_size`)."""


def default_chunk_size(n_series: int) -> int:
    """Series per task of a unit when the caller names none: as few chunks as :data:`DEFAULT_CHUNK_SIZE`
    allows, of equal size (``ceil(n / ceil(n / 4096))``): 30,490 series give 8 chunks of 3,812, not 7 of
    4,096 and one of 1,802, so that two workers get equal work and finish together. A unit of at most
    4,096 series is one chunk either way."""
    n = max(1, int(n_series))
    return -(-n // -(-n // DEFAULT_CHUNK_SIZE))


def worker_chunk_size(n_series: int, *, n_jobs: int, backend: Backend) -> int | None:
    """Series per task when a run uses worker processes: one chunk per worker (at least 32 series), so that
    every core is busy; a function of the run's settings alone, so results stay deterministic. ``None``
    (the engine's default) for the sequential backend."""
    return None if backend == "sequential" else max(32, -(-int(n_series) // int(n_jobs)))


_CLASS_NAMES = np.asarray(CLASSES, dtype=object)
_ROWS_CACHED = 256  # (rows, classes) pairs whose gathered ids, weights and class names a unit keeps


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
                        horizon=protocol.horizon,
                        **task_args,
                    )
                )
    return tasks
