"""The one builder of the score set (ADR-0006 decision 1): forecast blocks in, a :class:`ScoreSet` out.

The engine collects one :class:`~.blocks.Block` per (model, unit, origin) holding ``[series, horizon]`` arrays;
:func:`build_scoreset` (through a :class:`ScoreSetWriter`) flattens them into preallocated columns with
array operations per block (no per-row Python), keeps the rows whose target was observed, attaches the
split-conformal bands (:mod:`tycheon.backtest.conformal`) and returns the long record documented in
:mod:`tycheon.backtest.scoreset`. Anything that wants to make a score set from
forecasts (a harness, a test, a combination of methods) uses this function, so every reader of a score set
sees the same columns with the same meaning.

Band columns: ``lo80/hi80`` and ``lo95/hi95``; ``has_band`` is True where the 80% band exists (it needs
the fewest calibration errors); the 95% band can still be NaN on such a row, and the counts per level are
in ``meta["conformal"]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tycheon._typing import IntArray
from tycheon.backtest.blocks import Block, _cells
from tycheon.backtest.columns import CONSTANT_COLUMNS, ColumnBuffers, buffer_dtype, code_dtypes
from tycheon.backtest.conformal import BAND_LEVELS, conformal_radii
from tycheon.backtest.heap import small_page_array
from tycheon.backtest.scoreset import SCORESET_COLUMNS, ScoreSet, quantile_column
from tycheon.contract import TEXT_COLUMNS
from tycheon.data.demand import CLASSES
from tycheon.errors import TycheonError

__all__ = ["Block", "RowPlanError", "ScoreSetWriter", "build_scoreset"]

_BAND_COLUMNS = ("lo80", "hi80", "lo95", "hi95")
_CLASS_NAMES = np.asarray(CLASSES, dtype=object)
_REMAP_ROWS = 1 << 20  # codes remapped per slice in _Dictionary.categorical (an 8 MiB intp temporary)


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
        # the first block written with this layout: its rows and the inputs of its per-cell columns
        self.written: tuple[int, tuple[Any, ...]] | None = None


_SHARED_COLUMNS = (
    "series_id",
    "demand_class",
    "origin",
    "step",
    "target_period",
    "available_at",
    "scale_mae",
    "scale_rmse",
)
"""Columns whose rows depend only on a block's cells and series, not on its model: blocks of several models
with the same inputs (:func:`_sources`) write the same values into them."""


def _sources(block: Block) -> tuple[Any, ...]:
    """What the :data:`_SHARED_COLUMNS` of a block's rows are made from (arrays compared by identity):
    only the inputs :meth:`ScoreSetWriter.write` reads (the ids and class names not where it encodes
    the unit's ids and the class positions)."""
    return (
        block.unit,
        block.origin,
        block.series_rows,
        block.series_ids if block.unit_series_ids is None else block.unit_series_ids,
        block.demand_class if block.demand_code is None else block.demand_code,
        block.target_periods,
        block.available_at,
        block.scale_mae,
        block.scale_rmse,
    )


def _same_sources(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """The inputs are the same objects (the unit name and origin: equal values)."""
    return a[0] == b[0] and a[1] == b[1] and all(x is y for x, y in zip(a[2:], b[2:], strict=True))


class _Dictionary:
    """The values of one text column as written: a code per row in order of first sight, turned into a
    categorical with sorted categories at the end (:meth:`categorical`), so the codes depend only on
    the values written, never on the order the blocks arrived in."""

    def __init__(self, name: str, dtype: str) -> None:
        self.name = name
        self.limit = int(np.iinfo(dtype).max)
        self.codes: dict[Any, int] = {}
        self._units: dict[str, tuple[np.ndarray, IntArray]] = {}  # unit -> (its ids, their codes)

    def _room(self, n_codes: int) -> None:
        """Raise unless ``n_codes`` distinct values fit the column's codes dtype."""
        if n_codes > self.limit + 1:
            raise ValueError(f"score-set column {self.name!r}: more than {self.limit + 1} distinct values")

    def code(self, value: Any) -> int:
        got = self.codes.get(value)
        if got is None:
            self._room(len(self.codes) + 1)
            got = self.codes[value] = len(self.codes)
        return got

    def encode(self, values: np.ndarray) -> IntArray:
        """Codes of an array of values (factorised first: few distinct values cost few lookups)."""
        local, uniques = pd.factorize(np.asarray(values, dtype=object))
        if (local < 0).any():
            raise ValueError(f"score-set column {self.name!r}: a missing value")
        if not self.codes:  # the first values: their codes are their order of first sight, as code() gives
            self._room(len(uniques))
            self.codes = dict(zip(uniques.tolist(), range(len(uniques)), strict=True))  # 30,490 ids: one call
            return local.astype(np.int64)
        return np.asarray([self.code(v) for v in uniques], dtype=np.int64)[local]

    def encode_positions(self, positions: IntArray, names: np.ndarray) -> IntArray:
        """Codes of ``names[positions]`` without hashing every value: only the names present are looked
        up (codes are assigned in another order than :meth:`encode` would, which the sorted categorical
        of :meth:`categorical` does not see)."""
        positions = np.asarray(positions)
        present = np.flatnonzero(np.bincount(positions, minlength=len(names)) if len(positions) else [])
        lookup = np.zeros(len(names), dtype=np.int64)
        for p in present:
            lookup[p] = self.code(names[p])
        return lookup[positions]

    def unit_codes(self, unit: str, ids: np.ndarray) -> IntArray:
        """Codes of every series id of a unit, encoded once per unit (and per ids array)."""
        cached = self._units.get(unit)
        if cached is None or cached[0] is not ids:
            cached = self._units[unit] = (ids, self.encode(ids))
        return cached[1]

    def categorical(self, codes: np.ndarray) -> pd.Categorical:
        """The column (codes as written) as a categorical with sorted categories; ``codes`` is reused."""
        values = list(self.codes)
        order = sorted(range(len(values)), key=values.__getitem__)
        if order != list(range(len(values))) and len(codes):  # first-sight order is not sorted: remap
            rank = np.empty(len(values), dtype=codes.dtype)
            rank[order] = np.arange(len(values), dtype=codes.dtype)
            # np.take casts its indices to intp: on the whole column that is an 8-byte-per-row temporary
            # (11M int8 codes x 8 B = 89 MB, a large run's peak: benchmarks/perf/MEASUREMENTS.md), so the
            # codes are remapped a slice at a time
            for start in range(0, len(codes), _REMAP_ROWS):
                part = codes[start : start + _REMAP_ROWS]
                np.take(rank, part, out=part)
        categories = pd.Index([values[i] for i in order], dtype=object)
        dtype = pd.CategoricalDtype(categories, ordered=False)
        return pd.Categorical.from_codes(codes, dtype=dtype, validate=False)


def _same_bits(values: np.ndarray, first: np.ndarray) -> bool:
    """Every element of ``values`` equals ``first[0]`` bit for bit (so -0.0 differs from 0.0, and NaN
    equals a NaN of the same payload), ``values`` and ``first`` of one dtype."""
    as_int = np.dtype(f"u{values.dtype.itemsize}")  # the constant columns are 1, 2, 4 or 8 bytes wide
    return bool((values.reshape(-1).view(as_int) == first.view(as_int)[0]).all())


def _one_value(value: np.generic, n: int) -> np.ndarray:
    """A read-only column of ``n`` rows that holds one value (stride 0): a band level without any band, or
    a column whose every row is alike, costs no memory. Reading, selecting and writing the table work as
    for any column; a copy (a selection, ``DataFrame.copy``) is an ordinary array."""
    return np.broadcast_to(value, (int(n),))  # broadcast_to views are read-only


class RowPlanError(TycheonError, RuntimeError):
    """A block does not fit the rows planned for it (size or bounds); the caller assembles otherwise."""


def _layout(block: Block, layouts: dict[int, _Layout] | None) -> _Layout:
    """The block's layout, shared (through ``layouts``, keyed by the target array) by blocks of models
    that received the same target array; the cache must not outlive the blocks it describes."""
    if layouts is None:
        return _Layout(block)
    key = id(block.actual)
    if key not in layouts:
        layouts[key] = _Layout(block)
    return layouts[key]


class ScoreSetWriter:
    """Writes forecast blocks into the score-set columns at given rows, in any order.

    Every column is allocated once at the final length ``total`` (taken from ``buffers``, a
    :class:`~tycheon.backtest.columns.ColumnBuffers`, when it can serve); :meth:`write` puts a block's
    kept cells (observed targets, series then step) at rows ``[start, start + size)``; :meth:`finish`
    checks every row was written, calibrates the bands when the blocks carried none, and wraps the
    columns in a table without a consolidating copy. :func:`build_scoreset` writes blocks back to back;
    the engine writes each task's blocks while the other tasks still run, at rows planned before they
    started (so the order of arrival does not matter).

    Parameters
    ----------
    total : int
        Rows of the score set.
    quantile_levels, n_samples
        Quantile columns and width of the sample matrix.
    band_min_origins : int
        Passed to the calibration when the blocks carry no radii.
    precomputed_bands : bool
        True when every block carries its conformal radii (``Block.radii``); False to calibrate in
        :meth:`finish` over the whole table.
    band_levels : sequence of int
        With precomputed radii, the levels whose band columns are allocated at once (where bands are
        expected); any other level's pair is allocated when its first band arrives, or stays one
        broadcast NaN when none does.
    text_bounds : mapping of str to int, optional
        At most how many distinct values each text column will hold (``model``, ``unit``,
        ``series_id``, ``demand_class``; :func:`~tycheon.backtest.columns.code_dtypes`): its codes are then
        written in the dtype the table keeps them in, so making the categoricals copies nothing. A
        column without a bound is written in a wide dtype and narrowed by pandas at the end.
    """

    def __init__(
        self,
        total: int,
        *,
        quantile_levels: Sequence[float] = (),
        n_samples: int = 0,
        band_min_origins: int = 0,
        precomputed_bands: bool = True,
        buffers: ColumnBuffers | None = None,
        band_levels: Sequence[int] = (),
        text_bounds: Mapping[str, int] | None = None,
    ) -> None:
        self.total = int(total)
        self.codes = code_dtypes(text_bounds)
        self.levels = tuple(float(q) for q in quantile_levels)
        self.n_samples = int(n_samples)
        self.band_min_origins = int(band_min_origins)
        self.precomputed = bool(precomputed_bands)
        self._ready = buffers.take(self.total) if buffers is not None else {}
        # band columns: with precomputed radii a level's pair is allocated when its first band arrives
        # (a level without any band, e.g. 95% with fewer than 19 earlier origins, costs no memory);
        # otherwise they are computed in finish()
        skip = {"has_band", *_BAND_COLUMNS}
        if self.precomputed:  # the levels where bands are expected: every row is written, no NaN fill
            skip -= {f"{side}{level}" for level in band_levels for side in ("lo", "hi")}
        self.dtypes = {name: buffer_dtype(name, dtype, self.codes) for name, dtype in SCORESET_COLUMNS.items()}
        self.data = {
            name: self._column(name, self.dtypes[name])
            for name in SCORESET_COLUMNS
            if name not in skip and name not in CONSTANT_COLUMNS
        }
        # a CONSTANT_COLUMNS column is its first value alone until a block writes another (see _put)
        self.constant: dict[str, np.ndarray] = {}
        self._checked: dict[str, Any] = {}  # per column, the last per-series array found to hold that value
        self.dictionaries = {name: _Dictionary(name, self.codes[name]) for name in TEXT_COLUMNS}
        self._target_ns = self.data["target_period"].view(np.int64)
        self.qmat = [self._column(quantile_column(q), "float64") for q in self.levels]  # one per level
        self.smat = self._column("samples", "float64", self.n_samples) if self.n_samples else None
        self.key = None if self.precomputed else np.empty(self.total, dtype=np.int64)
        self._key_offset: dict[int, int] = {}
        self._next_key = 0
        self.has_band = self._column("has_band", "bool")  # filled from lo80 in finish()
        self.with_band = dict.fromkeys(BAND_LEVELS, 0)
        self.rows_written = 0
        # prepared columns of CONSTANT_COLUMNS: used if a block writes another value, else let go at the end
        self._spare = {name: self._ready.pop(name) for name in CONSTANT_COLUMNS if name in self._ready}
        self._ready.clear()

    def _put(self, name: str, rows: slice, values: Any, take: np.ndarray | None = None) -> None:
        """Write ``values`` (a scalar, or per series with ``take`` the rows' series) at ``rows`` of a
        :data:`~tycheon.backtest.columns.CONSTANT_COLUMNS` column: nothing is written while every value
        equals, bit for bit, the first one the column got; the first other value allocates the column,
        filled with that one (so the rows written before hold it) and written from then on. A per-series
        array already found to hold the first value is not compared again (the blocks of a task's models
        share their series arrays; blocks are not modified once handed to the writer)."""
        column = self.data.get(name)
        if column is None:
            first = self.constant.get(name)
            if take is None and first is not None:  # a code or a flag: compared as it is (integers)
                if values == first[0]:
                    return
            elif take is not None and values is self._checked.get(name):  # this array was found to hold it
                return
            else:
                checked = values
                values = np.asarray(values, dtype=self.dtypes[name])
                if values.size == 0 or (take is not None and len(take) == 0):
                    return
                if first is None:
                    first = self.constant[name] = values.reshape(-1)[:1].copy()
                if _same_bits(values, first):
                    self._checked[name] = checked  # the blocks of a task's models share their arrays
                    return
            column = self._spare.pop(name, None)  # prepared by the buffers, if they could
            if column is None or column.dtype != np.dtype(self.dtypes[name]):
                column = small_page_array(self.total, self.dtypes[name])
            self.data[name] = column
            column.fill(first[0])
        column[rows] = values if take is None else np.asarray(values)[take]

    def _column(self, name: str, dtype: str, width: int = 0) -> np.ndarray:
        ready = self._ready.pop(name, None)
        if ready is not None and ready.dtype == np.dtype(dtype):  # prepared for other code widths: not used
            return ready
        return small_page_array((self.total, width) if width else (self.total,), dtype)

    def write(
        self,
        block: Block,
        start: int,
        *,
        layouts: dict[int, _Layout] | None = None,
        expected: int | None = None,
    ) -> int:
        """Write ``block`` at rows ``[start, start + size)`` and return ``size`` (its kept cells).

        Raises :class:`RowPlanError`, before writing anything, when ``expected`` is given and differs
        from the size, or when the rows fall outside the table.
        """
        layout = _layout(block, layouts)
        size = layout.size
        if expected is not None and size != expected:
            raise RowPlanError(f"{block.model}/{block.unit} at {block.origin.date()}: {size} rows, {expected} planned")
        if start < 0 or start + size > self.total:
            raise RowPlanError(f"rows [{start}, {start + size}) outside a table of {self.total}")
        data, n, h = self.data, *block.point.shape
        rows = slice(int(start), int(start) + size)
        # flat [series * horizon] positions of the kept cells: one integer gather per column instead of
        # a broadcast plus a boolean mask (and no gather at all when every target was observed)
        flat, srow, step = layout.flat, layout.srow, layout.step
        words = self.dictionaries
        data["model"][rows] = words["model"].code(block.model)
        self._put("unit", rows, words["unit"].code(block.unit))
        sources = _sources(block)
        if layout.written is not None and _same_sources(layout.written[1], sources):
            # another model's block of the same cells, series and inputs is written: its rows are copied
            # (contiguous) instead of gathered and encoded again
            first = slice(layout.written[0], layout.written[0] + size)
            for name in _SHARED_COLUMNS:
                data[name][rows] = data[name][first]
        else:
            self._write_shared(block, rows, layout)
            layout.written = (int(start), sources)
        data["actual"][rows] = layout.actual
        point = data["point"][rows]
        point[:] = _cells(block.point, flat)
        self._put("season_length", rows, block.season_length, srow)
        self._put("weight", rows, block.weight, srow)
        self._put("has_quantiles", rows, block.quantiles is not None)
        self._put("has_samples", rows, block.samples is not None)
        if self.levels:
            q = None if block.quantiles is None else block.quantiles.reshape(n * h, len(self.levels))[layout.keep]
            for j, col in enumerate(self.qmat):
                col[rows] = np.nan if q is None else q[:, j]
        if self.smat is not None:
            self.smat[rows] = (
                np.nan if block.samples is None else block.samples.reshape(n * h, -1)[layout.keep][:, : self.n_samples]
            )
        if self.precomputed:
            if block.radii is None:
                raise ValueError(f"{block.model}/{block.unit}: a block without radii in a writer of precomputed bands")
            for level, radius in zip(BAND_LEVELS, block.radii, strict=False):  # straight into the columns
                if radius is None:  # no band at this level anywhere in the block
                    if f"lo{level}" in data:
                        data[f"lo{level}"][rows] = data[f"hi{level}"][rows] = np.nan
                    continue
                if f"lo{level}" not in data:  # the level's first band: its columns, NaN until written
                    for name in (f"lo{level}", f"hi{level}"):
                        data[name] = self._column(name, "float64")
                        data[name].fill(np.nan)
                lo_col, hi_col = data[f"lo{level}"][rows], data[f"hi{level}"][rows]
                np.subtract(point, radius, out=lo_col)
                np.add(point, radius, out=hi_col)
                self.with_band[level] += int(np.count_nonzero(np.isfinite(radius)))
        else:
            if block.unit_key not in self._key_offset:
                self._key_offset[block.unit_key] = self._next_key
                self._next_key += block.n_unit_series * h
            if self.key is None:
                raise RowPlanError("a writer of precomputed bands keeps no calibration keys")
            self.key[rows] = self._key_offset[block.unit_key] + block.series_rows.astype(np.int64)[srow] * h + step - 1
        self.rows_written += size
        return size

    def _write_shared(self, block: Block, rows: slice, layout: _Layout) -> None:
        """The :data:`_SHARED_COLUMNS` of a block's rows, gathered from its series and cells."""
        data, words, srow, step = self.data, self.dictionaries, layout.srow, layout.step
        if block.unit_series_ids is not None:
            unit_codes = words["series_id"].unit_codes(block.unit, block.unit_series_ids)
            data["series_id"][rows] = unit_codes[np.asarray(block.series_rows)[srow]]
        else:
            data["series_id"][rows] = words["series_id"].encode(block.series_ids)[srow]
        if block.demand_code is not None:
            classes = words["demand_class"].encode_positions(block.demand_code, _CLASS_NAMES)
        else:
            classes = words["demand_class"].encode(block.demand_class)
        data["demand_class"][rows] = classes[srow]
        data["origin"][rows] = block.origin.to_datetime64()
        data["step"][rows] = step
        self._target_ns[rows] = block.target_periods.asi8[step - 1]  # int64 ns, no DatetimeIndex per block
        data["available_at"][rows] = _cells(block.available_at, layout.flat)
        data["scale_mae"][rows] = block.scale_mae[srow]
        data["scale_rmse"][rows] = block.scale_rmse[srow]

    def clear_quantiles(self, start: int, stop: int) -> None:
        """No quantiles on rows ``[start, stop)`` (a (model, unit, origin) where only some parts gave them)."""
        for col in self.qmat:
            col[start:stop] = np.nan
        self._put("has_quantiles", slice(start, stop), False)

    def clear_samples(self, start: int, stop: int) -> None:
        """No sample paths on rows ``[start, stop)``."""
        if self.smat is not None:
            self.smat[start:stop] = np.nan
        self._put("has_samples", slice(start, stop), False)

    def finish(self, meta: dict[str, Any] | None = None) -> ScoreSet:
        """The score set (raises ``ValueError`` unless exactly ``total`` rows were written)."""
        if self.rows_written != self.total:
            raise ValueError(f"{self.rows_written} of {self.total} score-set rows were written")
        data, total = self.data, self.total
        conformal: dict[str, Any] = {
            "rows_with_band": {},
            "rows_without_band": {},
            "min_origins": self.band_min_origins,
        }
        if self.precomputed:
            for level in BAND_LEVELS:
                for name in (f"lo{level}", f"hi{level}"):
                    if name not in data:  # no band at this level in the whole table: one NaN, broadcast
                        data[name] = _one_value(np.float64(np.nan), total)
                conformal["rows_with_band"][str(level)] = self.with_band[level]
                conformal["rows_without_band"][str(level)] = total - self.with_band[level]
        else:
            abs_error = np.abs(data["actual"] - data["point"])
            if self.key is None:
                raise RowPlanError("conformal calibration needs the rows' calibration keys, which were not kept")
            radii = conformal_radii(
                keys=self.key,
                origin=data["origin"],
                available_at=data["available_at"],
                abs_error=abs_error,
                levels_percent=BAND_LEVELS,
                min_origins=self.band_min_origins,
            )
            del abs_error
            for level, radius in zip(BAND_LEVELS, radii, strict=False):
                data[f"lo{level}"] = data["point"] - radius
                data[f"hi{level}"] = data["point"] + radius
                has = int(np.count_nonzero(np.isfinite(radius)))
                conformal["rows_with_band"][str(level)] = has
                conformal["rows_without_band"][str(level)] = total - has
            del radii
            self.key = None
        data["has_band"] = np.isfinite(data["lo80"], out=self.has_band)
        self._spare.clear()
        for name in CONSTANT_COLUMNS:  # one value in every row: that value, broadcast (see _put)
            if name not in data:
                first = self.constant.get(name, np.zeros(1, dtype=self.dtypes[name]))
                data[name] = _one_value(first[0], total)
        columns: dict[str, Any] = {name: data.pop(name) for name in SCORESET_COLUMNS}
        for name, words in self.dictionaries.items():
            columns[name] = words.categorical(columns[name])
        for q_level, col in zip(self.levels, self.qmat, strict=False):
            columns[quantile_column(q_level)] = col
        # copy=False: the table wraps the arrays instead of consolidating them into a second copy
        table = pd.DataFrame(columns, copy=False)
        meta = dict(meta or {})
        meta["conformal"] = conformal
        # conformed: the categories are exactly the values written, sorted (no O(rows) check again)
        return ScoreSet(table=table, quantile_levels=self.levels, samples=self.smat, meta=meta, conformed=True)


def build_scoreset(
    blocks: Sequence[Block],
    *,
    quantile_levels: Sequence[float] = (),
    n_samples: int = 0,
    band_min_origins: int = 0,
    meta: dict[str, Any] | None = None,
    buffers: ColumnBuffers | None = None,
    band_levels: Sequence[int] = (),
    text_bounds: Mapping[str, int] | None = None,
) -> ScoreSet:
    """Flatten forecast blocks into the score-set record and attach conformal bands.

    Rows come out in block order, then series, then step, so the same blocks always give the same table.
    The blocks are written back to back by a :class:`ScoreSetWriter`: every column is allocated once at
    its final length and filled block by block (no per-block parts to concatenate), and the table wraps
    those arrays without a consolidating copy (at panel scale the record is the largest object of a run,
    so it is held once). Bands computed upstream (``Block.radii`` on every block) are used as they are;
    otherwise they are calibrated here over the whole table. ``buffers`` supplies columns allocated and
    touched ahead of time; the values written are the same either way. ``text_bounds`` bounds the
    distinct values of text columns (see :class:`ScoreSetWriter`); without it the model, unit and
    series-id bounds are read off the blocks.
    """
    # blocks of models that shared one target array (the engine's tasks hand the same array to models with
    # the same minimum history) share its kept cells, row layout and gathered actuals
    layouts: dict[int, _Layout] = {}
    total = sum(_layout(b, layouts).size for b in blocks)
    writer = ScoreSetWriter(
        total,
        quantile_levels=quantile_levels,
        n_samples=n_samples,
        band_min_origins=band_min_origins,
        buffers=buffers,
        precomputed_bands=bool(blocks) and all(b.radii is not None for b in blocks),
        band_levels=band_levels,
        text_bounds=_text_bounds(blocks) if text_bounds is None else text_bounds,
    )
    start = 0
    for b in blocks:
        start += writer.write(b, start, layouts=layouts)
    return writer.finish(meta)


def _text_bounds(blocks: Sequence[Block]) -> dict[str, int]:
    """Upper bounds on the distinct models, units and series ids of ``blocks``: a unit's series are at
    most its ids (``unit_series_ids``, where its blocks carry them) plus the series of its other blocks."""
    whole: dict[str, int] = {}  # unit -> most ids of the unit a block carries
    loose: dict[str, int] = {}  # unit -> series of its blocks without them, added up
    for b in blocks:
        if b.unit_series_ids is not None:
            whole[b.unit] = max(whole.get(b.unit, 0), len(b.unit_series_ids))
        else:
            loose[b.unit] = loose.get(b.unit, 0) + len(b.series_ids)
    return {
        "model": len({b.model for b in blocks}),
        "unit": len(whole.keys() | loose.keys()),
        "series_id": sum(whole.values()) + sum(loose.values()),
    }
