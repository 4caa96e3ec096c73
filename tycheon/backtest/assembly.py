"""Score-set rows planned before the tasks run, and each task's forecasts written as its result arrives.

With worker processes (joblib, Dask) the main process waits while the tasks run. The rows of the score
set are known in advance: the engine's eligibility says which series are forecast at each origin, a
model's ``min_history`` which of those it forecasts, and the panel which targets are observed. So the
engine plans the row range of every (unit, model, origin, chunk) before handing out the tasks (the same
order :func:`~tycheon.backtest.records.build_scoreset` writes them in: unit, model, origin, chunk, then
series and step) and a :class:`StreamingAssembly` writes each task's blocks into those rows as soon as
its result is back, while later tasks still run.

Memory: once a task's blocks are written, its outputs keep only their rows (the engine counts support
from them) and let go of the forecast arrays, so the main process never holds every task's forecasts next
to the table (:attr:`StreamingAssembly.released` names those tasks; should the plan fail later, the
engine runs them again for the assembly after the run).

The plan is checked, not trusted: every block must have exactly its planned rows (checked before it is
written) and every row must be written. Anything else - a model that failed, one whose fitted
``min_history`` differs from the unfitted one, a factory that does not say what it builds - makes
:meth:`StreamingAssembly.finish` return None, and the engine assembles the score set from the blocks
after the run instead. Both routes write the same values in the same order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from tycheon.backtest.protocol import Origin
from tycheon.backtest.records import Block, RowPlanError, ScoreSetWriter
from tycheon.backtest.slices import UnitData
from tycheon.backtest.tasks import OriginOutput, TaskResult

__all__ = ["PlannedModel", "RowPlan", "StreamingAssembly", "plan_rows"]

RowKey = tuple[int, str, int, int]  # (unit position, model, origin position, chunk)


@dataclass(frozen=True)
class PlannedModel:
    """A model as the plan sees it: its name, its minimum history for a season length, and how many
    series each of its tasks covers (the chunk size for local models, the whole unit for global ones)."""

    name: str
    min_history: Callable[[int], int]
    chunk_step: Callable[[int], int]  # n_series of the unit -> series per task


@dataclass
class RowPlan:
    """First row and row count of every (unit, model, origin, chunk), in score-set order."""

    total: int = 0
    rows: dict[RowKey, tuple[int, int]] = field(default_factory=dict)

    def span(self, unit: int, model: str, origin: int) -> tuple[int, int]:
        """Rows ``[start, stop)`` of a (unit, model, origin) over all its chunks (they are contiguous)."""
        parts = [v for (u, m, j, _), v in self.rows.items() if (u, m, j) == (unit, model, origin)]
        return min(s for s, _ in parts), max(s + n for s, n in parts)


def observed_targets(data: UnitData, origins: Sequence[Origin]) -> np.ndarray:
    """Observed target cells per series and origin ``[series, origin]``: the rows a forecast there yields
    (a target is kept when it is observed with a finite value)."""
    kept = data.observed & np.isfinite(data.values)  # [series, time]
    # counts of kept cells before each column: a window's count is a difference of two of them (one pass
    # over the panel instead of a strided boolean sum per origin)
    before = np.zeros((data.n_series, kept.shape[1] + 1), dtype=np.int64)
    np.cumsum(kept, axis=1, out=before[:, 1:])
    out = np.zeros((data.n_series, len(origins)), dtype=np.int64)
    for j, o in enumerate(origins):
        stop = min(o.index + o.horizon, kept.shape[1])
        out[:, j] = before[:, stop] - before[:, min(o.index, stop)]
    return out


def plan_rows(
    units: Sequence[tuple[UnitData, np.ndarray, np.ndarray]],
    models: Sequence[PlannedModel],
    origins: Sequence[Origin],
) -> RowPlan:
    """Plan the rows of every (unit, model, origin, chunk).

    Parameters
    ----------
    units : sequence of (UnitData, eligible, n_obs)
        Per unit, the engine's ``[series, origin]`` eligibility and published history lengths.
    models : sequence of PlannedModel
        In the order of the score set.
    origins : sequence of Origin
    """
    plan = RowPlan()
    for u, (data, eligible, n_obs) in enumerate(units):
        if not data.n_series:
            continue
        targets = observed_targets(data, origins)  # [series, origin]
        for model in models:
            need = int(model.min_history(data.season_length))
            starts = np.arange(0, data.n_series, max(1, model.chunk_step(data.n_series)))
            for j in range(len(origins)):
                cells = np.where(eligible[:, j] & (n_obs[:, j] >= need), targets[:, j], 0)  # [series]
                for c, size in enumerate(np.add.reduceat(cells, starts)):
                    plan.rows[(u, model.name, j, c)] = (plan.total, int(size))
                    plan.total += int(size)
    return plan


_NO_FORECAST = np.empty((0, 0))


def _spent(out: OriginOutput) -> OriginOutput:
    """An output whose rows are written: its rows and origin only (the arrays are let go)."""
    return OriginOutput(out.origin_pos, out.rows, _NO_FORECAST, None, None)


class StreamingAssembly:
    """Writes task results into a :class:`~tycheon.backtest.records.ScoreSetWriter` as they arrive.

    Parameters
    ----------
    plan : RowPlan
    make_writer : callable
        ``make_writer(total)``: the writer, created at the first result (so that columns prepared in
        the background are taken only once the workers are busy).
    make_block : callable
        ``make_block(unit_position, model, origin_position, output) -> Block``.
    unit_position : dict
        Unit name -> position in the plan.
    """

    def __init__(
        self,
        plan: RowPlan,
        *,
        make_writer: Callable[[int], ScoreSetWriter],
        make_block: Callable[[int, str, int, OriginOutput], Block],
        unit_position: dict[str, int],
    ) -> None:
        self.plan = plan
        self._make_writer = make_writer
        self._make_block = make_block
        self._unit_position = unit_position
        self.writer: ScoreSetWriter | None = None
        self.broken = ""  # why the plan could not be followed ("" while it holds)
        self._quantiles: dict[tuple[int, str, int], set[bool]] = {}
        self._samples: dict[tuple[int, str, int], set[bool]] = {}
        self.released: set[int] = set()  # tasks whose forecast arrays were let go after writing

    def on_result(self, index: int, task_results: Sequence[TaskResult]) -> None:
        """``run_tasks``' callback: write the rows of the task at ``index`` as its results arrive, then
        release the task's forecast arrays (see the module docstring)."""
        if self.add(task_results):
            for result in task_results:
                result.outputs = [_spent(out) for out in result.outputs]
            self.released.add(index)

    def add(self, task_results: Sequence[TaskResult]) -> bool:
        """Write one task's results (one :class:`TaskResult` per model of the task); True when every
        block was written."""
        if self.broken:
            return False
        if self.writer is None:
            self.writer = self._make_writer(self.plan.total)
        layouts: dict[int, object] = {}  # shared target arrays of this task only
        for result in task_results:
            if result.failed:
                self.broken = f"{result.model} failed"
                return False
            u = self._unit_position[result.unit]
            for out in result.outputs:
                key = (u, result.model, out.origin_pos, result.chunk)
                start, size = self.plan.rows.get(key, (-1, -1))
                block = self._make_block(u, result.model, out.origin_pos, out)
                try:
                    self.writer.write(block, start, layouts=layouts, expected=size)  # type: ignore[arg-type]
                except RowPlanError as err:
                    self.broken = str(err)
                    return False
                self._quantiles.setdefault(key[:3], set()).add(block.quantiles is not None)
                self._samples.setdefault(key[:3], set()).add(block.samples is not None)
        return True

    @property
    def complete(self) -> bool:
        """The plan held and every planned row is written (:meth:`finish` will return the score set)."""
        writer = self.writer
        return not self.broken and writer is not None and writer.rows_written == writer.total

    def finish(self, meta: dict) -> object | None:
        """The score set, or None when the plan did not hold (the caller then assembles the blocks)."""
        writer = self.writer
        if self.broken or writer is None or writer.rows_written != writer.total:
            self.writer = None
            return None
        # quantiles and samples are all-or-nothing per (model, unit, origin), as in build_scoreset's input
        for key, seen in self._quantiles.items():
            if len(seen) > 1:
                writer.clear_quantiles(*self.plan.span(*key))
        for key, seen in self._samples.items():
            if len(seen) > 1:
                writer.clear_samples(*self.plan.span(*key))
        self.writer = None
        return writer.finish(meta)
