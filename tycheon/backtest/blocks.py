"""Forecast blocks: one model's forecasts for the eligible series of one unit at one origin
(:class:`Block`), the input the score-set writer (:mod:`.records`) flattens; and how the engine turns its
tasks' results into them: each model's status and support in ``meta["models"]`` (:func:`_model_status`,
:func:`_support`), the ``(model, unit)`` pairs that failed, and the blocks of the rest in a deterministic
order (:func:`_blocks`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from tycheon._typing import BoolArray, FloatArray, IntArray
from tycheon.backtest.planning import _UnitState
from tycheon.backtest.protocol import Origin
from tycheon.backtest.tasks import OriginOutput, TaskResult

__all__ = ["Block"]


@dataclass(frozen=True, eq=False)
class Block:
    """Forecasts of one model for the eligible series of one unit at one origin.

    Attributes
    ----------
    model, unit : str
    unit_key : int
        Index of the (unit, model) pair in the run; with ``series_rows`` it identifies a calibration
        group without string hashing.
    n_unit_series : int
        Number of series in the unit (for the calibration key).
    origin : Timestamp
    series_rows : ndarray of int, shape (n,)
        Row of each forecast series in the unit.
    series_ids : ndarray of str, shape (n,)
    target_periods : DatetimeIndex, length h
    actual : ndarray, shape (n, h)
        NaN where the target is unobserved (such rows are dropped).
    available_at : ndarray of datetime64[ns], shape (n, h)
    point : ndarray, shape (n, h)
    quantiles : ndarray, shape (n, h, Q), optional
    samples : ndarray, shape (n, h, N), optional
    demand_class : ndarray of str, shape (n,)
    season_length : ndarray of int, shape (n,)
    scale_mae, scale_rmse, weight : ndarray, shape (n,)
    demand_code : ndarray of int, shape (n,), optional
        ``demand_class`` as positions in :data:`tycheon.data.demand.CLASSES` (the engine's tasks compute
        the classes as these codes): the writer then encodes the column from them without hashing a
        string per series.
    unit_series_ids : ndarray of str, optional
        Every series id of the unit (``series_ids`` is ``unit_series_ids[series_rows]``), shared by the
        unit's blocks: the writer then encodes the unit's ids once instead of once per block.
    radii : tuple, optional
        Conformal half-widths already computed (the engine's tasks compute them in the workers): one
        entry per level of :data:`~.conformal.BAND_LEVELS`, the radii of the kept cells (observed
        targets, series then step; NaN where no band) or None where no kept cell has a band at that
        level. When every block has them :func:`~.records.build_scoreset` uses them instead of calibrating
        itself.
    """

    model: str
    unit: str
    unit_key: int
    n_unit_series: int
    origin: pd.Timestamp
    series_rows: IntArray  # [series]
    series_ids: np.ndarray  # [series]
    target_periods: pd.DatetimeIndex  # [horizon]
    actual: FloatArray  # [series, horizon]
    available_at: np.ndarray  # [series, horizon]
    point: FloatArray  # [series, horizon]
    quantiles: FloatArray | None  # [series, horizon, level]
    samples: FloatArray | None  # [series, horizon, sample]
    demand_class: np.ndarray  # [series]
    season_length: IntArray  # [series]
    scale_mae: FloatArray  # [series]
    scale_rmse: FloatArray  # [series]
    weight: FloatArray  # [series]
    radii: tuple[FloatArray | None, ...] | None = None  # per band level: [kept cell] or None
    unit_series_ids: np.ndarray | None = None  # [unit series], shared by the unit's blocks
    demand_code: IntArray | None = None  # [series] positions in CLASSES

    @property
    def kept(self) -> BoolArray:
        return np.isfinite(self.actual)  # [series, horizon]


def _cells(values: np.ndarray, flat: IntArray | None) -> np.ndarray:
    """The kept cells of a ``[series, horizon]`` array, in row order (``flat``: their flat positions,
    None when every cell is kept)."""
    return values.ravel() if flat is None else values.ravel()[flat]


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
