"""The one builder of the score set (ADR-0006 decision 1): forecast blocks in, a :class:`ScoreSet` out.

The engine collects one :class:`Block` per (model, unit, origin) holding ``[series, horizon]`` arrays;
:func:`build_scoreset` flattens them with numpy concatenation (no per-row Python), keeps the rows whose
target was observed, attaches the split-conformal bands (:mod:`tycheon.backtest.conformal`) and returns the
long record documented in :mod:`tycheon.backtest.scoreset`. Anything that wants to make a score set from
forecasts (a harness, a test, a combination of methods) uses this function, so every reader of a score set
sees the same columns with the same meaning.

Band columns: ``lo80/hi80`` and ``lo95/hi95``; ``has_band`` is True where the 80% band exists (it needs
the fewest calibration errors); the 95% band can still be NaN on such a row, and the counts per level are
in ``meta["conformal"]``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from tycheon._typing import BoolArray, FloatArray, IntArray
from tycheon.backtest.columns import ColumnBuffers
from tycheon.backtest.conformal import BAND_LEVELS, conformal_radii
from tycheon.backtest.scoreset import SCORESET_COLUMNS, ScoreSet, quantile_column

__all__ = ["POOL_POSITION", "Block", "build_scoreset"]

_TEXT_COLUMNS = ("model", "unit", "series_id", "demand_class")
POOL_POSITION = "_pool_position"  # the builder's scratch int64 column (ColumnBuffers ``extra``)


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
    radii : tuple, optional
        Conformal half-widths already computed (the engine's tasks compute them in the workers): one
        entry per level of :data:`~.conformal.BAND_LEVELS`, the radii of the kept cells (observed
        targets, series then step; NaN where no band) or None where no kept cell has a band at that
        level. When every block has them :func:`build_scoreset` uses them instead of calibrating itself.
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

    @property
    def kept(self) -> BoolArray:
        return np.isfinite(self.actual)  # [series, horizon]


def _cells(values: np.ndarray, flat: IntArray | None) -> np.ndarray:
    """The kept cells of a ``[series, horizon]`` array, in row order (``flat``: their flat positions,
    None when every cell is kept)."""
    return values.ravel() if flat is None else values.ravel()[flat]


class _Layout:
    """The kept cells of a block's ``[series, horizon]`` target array: mask, flat positions (None when
    every cell is kept), series row and step of each kept cell, and the kept actuals."""

    def __init__(self, block: Block) -> None:
        n, h = block.actual.shape
        self.keep = block.kept.ravel()  # [series * horizon]
        self.size = int(self.keep.sum())
        self.flat: IntArray | None = None if self.size == self.keep.size else np.flatnonzero(self.keep)
        if self.flat is None:
            self.srow = np.repeat(np.arange(n), h)
            self.step = np.tile(np.arange(1, h + 1, dtype=np.int64), n)
        else:
            self.srow, self.step = np.divmod(self.flat, h)
            self.step += 1
        self.actual = _cells(block.actual, self.flat)


def _text_columns(
    data: dict[str, np.ndarray],
    blocks: Sequence[Block],
    *,
    bounds: IntArray,
    pool_pos: IntArray,
    column: Callable[[str, str], np.ndarray],
) -> None:
    """Fill the object columns: ``model``/``unit`` block by block (one slice fill each), ``series_id`` and
    ``demand_class`` from the row's position ``pool_pos`` in the concatenated per-series arrays of the
    blocks (one ``np.take`` each), so no object column is written row by row."""
    for name in ("model", "unit"):
        col = data[name] = column(name, "object")
        for b, lo, hi in zip(blocks, bounds[:-1], bounds[1:]):
            col[lo:hi] = getattr(b, name)
    for name, part in (("series_id", "series_ids"), ("demand_class", "demand_class")):
        pool = np.empty(int(sum(len(getattr(b, part)) for b in blocks)), dtype=object)
        start = 0
        for b in blocks:
            values = getattr(b, part)
            pool[start:start + len(values)] = values
            start += len(values)
        data[name] = np.take(pool, pool_pos)  # a fresh array: faster than a take into a None-filled one


def build_scoreset(
    blocks: Sequence[Block],
    *,
    quantile_levels: Sequence[float] = (),
    n_samples: int = 0,
    band_min_origins: int = 0,
    meta: dict[str, Any] | None = None,
    buffers: ColumnBuffers | None = None,
) -> ScoreSet:
    """Flatten forecast blocks into the score-set record and attach conformal bands.

    Rows come out in block order, then series, then step, so the same blocks always give the same table.
    Every numeric column is allocated once at its final length and filled block by block (no per-block
    parts to concatenate), and the table wraps those arrays without a consolidating copy: at panel scale
    the record is the largest object of a run, so it is held once. The text columns are built in one
    ``np.take`` each from a small array of their values (model, unit) or from the blocks' own per-series
    arrays (series id, demand class), so no object column is written row by row or through temporaries.
    ``buffers`` (:class:`~tycheon.backtest.columns.ColumnBuffers`) supplies columns allocated and touched
    ahead of time; the values written are the same either way.
    """
    levels = tuple(float(q) for q in quantile_levels)
    meta = dict(meta or {})
    # blocks of models that shared one target array (the engine's tasks hand the same array to models with
    # the same minimum history) share its kept cells, row layout and gathered actuals
    layouts: dict[int, _Layout] = {}
    for b in blocks:
        if id(b.actual) not in layouts:
            layouts[id(b.actual)] = _Layout(b)
    kept = [layouts[id(b.actual)].keep for b in blocks]
    sizes = np.array([layouts[id(b.actual)].size for b in blocks], dtype=np.int64)
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    total = int(bounds[-1])
    ready = buffers.take(total) if buffers is not None else {}

    def column(name: str, dtype: str, width: int = 0) -> np.ndarray:
        shape = (total, width) if width else (total,)
        return ready.pop(name) if name in ready else np.empty(shape, dtype=dtype)

    data: dict[str, np.ndarray] = {
        name: column(name, dtype) for name, dtype in SCORESET_COLUMNS.items()
        if name not in (*_TEXT_COLUMNS, "lo80", "hi80", "lo95", "hi95", "has_band")
    }
    # series id and demand class: per row, a position in the pool of the blocks' per-series arrays
    series_start = np.concatenate([[0], np.cumsum([len(b.series_rows) for b in blocks])]).astype(np.int64)
    pool_pos = column(POOL_POSITION, "int64")
    qmat = [column(quantile_column(q), "float64") for q in levels]  # one column per level
    smat = column("samples", "float64", n_samples) if n_samples else None  # [row, sample]
    # bands computed upstream (per chunk, in the workers) are used as they are; otherwise calibrate here
    precomputed = bool(blocks) and all(b.radii is not None for b in blocks)
    key = np.empty(0 if precomputed else total, dtype=np.int64)
    key_offset: dict[int, int] = {}
    next_offset = 0
    target_ns = data["target_period"].view(np.int64)
    for k, (b, keep, lo, hi) in enumerate(zip(blocks, kept, bounds[:-1], bounds[1:])):
        n, h = b.point.shape
        if b.unit_key not in key_offset:
            key_offset[b.unit_key] = next_offset
            next_offset += b.n_unit_series * h
        rows = slice(int(lo), int(hi))
        # flat [series * horizon] positions of the kept cells: one integer gather per column instead of
        # a broadcast plus a boolean mask (and no gather at all when every target was observed)
        layout = layouts[id(b.actual)]
        flat, srow, step = layout.flat, layout.srow, layout.step
        np.add(srow, series_start[k], out=pool_pos[rows])
        data["origin"][rows] = b.origin.to_datetime64()
        data["step"][rows] = step
        target_ns[rows] = b.target_periods.asi8[step - 1]  # int64 ns: no DatetimeIndex conversion per block
        data["actual"][rows] = layout.actual
        data["point"][rows] = _cells(b.point, flat)
        data["available_at"][rows] = _cells(b.available_at, flat)
        data["season_length"][rows] = np.asarray(b.season_length, dtype=np.int64)[srow]
        data["scale_mae"][rows] = b.scale_mae[srow]
        data["scale_rmse"][rows] = b.scale_rmse[srow]
        data["weight"][rows] = b.weight[srow]
        data["has_quantiles"][rows] = b.quantiles is not None
        data["has_samples"][rows] = b.samples is not None
        if not precomputed:
            key[rows] = key_offset[b.unit_key] + b.series_rows.astype(np.int64)[srow] * h + step - 1
        if levels:
            q = None if b.quantiles is None else b.quantiles.reshape(n * h, len(levels))[keep]
            for j, col in enumerate(qmat):
                col[rows] = np.nan if q is None else q[:, j]
        if smat is not None:
            smat[rows] = np.nan if b.samples is None else b.samples.reshape(n * h, -1)[keep][:, :n_samples]

    _text_columns(data, blocks, bounds=bounds, pool_pos=pool_pos, column=column)
    del pool_pos
    conformal: dict[str, Any] = {"rows_with_band": {}, "rows_without_band": {},
                                 "min_origins": int(band_min_origins)}
    if precomputed:
        # the bands straight into their columns, block by block: no full-length radius arrays
        for k, level in enumerate(BAND_LEVELS):
            lo_col, hi_col, with_band = column(f"lo{level}", "float64"), column(f"hi{level}", "float64"), 0
            for b, lo, hi in zip(blocks, bounds[:-1], bounds[1:]):
                rows = slice(int(lo), int(hi))
                radius = b.radii[k]  # type: ignore[index]
                if radius is None:  # no band at this level anywhere in the block
                    lo_col[rows] = hi_col[rows] = np.nan
                    continue
                np.subtract(data["point"][rows], radius, out=lo_col[rows])
                np.add(data["point"][rows], radius, out=hi_col[rows])
                with_band += int(np.isfinite(radius).sum())
            data[f"lo{level}"], data[f"hi{level}"] = lo_col, hi_col
            conformal["rows_with_band"][str(level)] = with_band
            conformal["rows_without_band"][str(level)] = total - with_band
    else:
        abs_error = np.abs(data["actual"] - data["point"])
        radii = conformal_radii(keys=key, origin=data["origin"], available_at=data["available_at"],
                                abs_error=abs_error, levels_percent=BAND_LEVELS, min_origins=band_min_origins)
        del abs_error
        for level, radius in zip(BAND_LEVELS, radii):
            data[f"lo{level}"] = data["point"] - radius
            data[f"hi{level}"] = data["point"] + radius
            has = np.isfinite(radius)
            conformal["rows_with_band"][str(level)] = int(has.sum())
            conformal["rows_without_band"][str(level)] = int(total - has.sum())
        del radii
    del key
    data["has_band"] = np.isfinite(data["lo80"], out=column("has_band", "bool"))
    columns = {name: data.pop(name) for name in SCORESET_COLUMNS}
    for level, col in zip(levels, qmat):
        columns[quantile_column(level)] = col
    # copy=False: the table wraps the fresh arrays instead of consolidating them into a second copy
    table = pd.DataFrame(columns, copy=False)
    meta["conformal"] = conformal
    return ScoreSet(table=table, quantile_levels=levels, samples=smat, meta=meta)
