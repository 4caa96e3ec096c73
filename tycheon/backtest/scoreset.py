"""The score set: the one record that crosses every boundary after the engine (ADR-0006 decision 1).

A :class:`ScoreSet` is a long table with one row per (model, unit, series, origin, step), plus the
quantile levels it carries, optional sample paths aligned to the rows, and run metadata. Metrics, tests,
analyses and the renderer all read it, so they cannot disagree about what a forecast and an outcome are.

Columns of ``ScoreSet.table`` (``SCORESET_COLUMNS``, defined in :mod:`tycheon.contract`; quantile columns follow, one
per level):

====================  ==============  =============================================================
column                dtype           meaning
====================  ==============  =============================================================
``model``             category        model id as configured (not the class id)
``unit``              category        unit of analysis: ``series``, ``total``, ``level:<attr>``,
                                      ``groups:<k>`` (size-sorted) or ``groups_random:<k>``
``series_id``         category        series (or aggregate) identifier within the unit
``origin``            datetime64[ns]  forecast origin (first target period's start stamp)
``step``              int16           horizon step h = 1..H
``target_period``     datetime64[ns]  period being forecast
``actual``            float64         realised value
``point``             float64         point forecast
``available_at``      datetime64[ns]  when the actual was published
``demand_class``      category        smooth / erratic / intermittent / lumpy / undefined, from the
                                      origin's training window only
``season_length``     int16           season length m used by the scales
``scale_mae``         float64         in-sample seasonal-naive MAE on the origin's training window
``scale_rmse``        float64         in-sample seasonal-naive RMSE on the origin's training window
``weight``            float64         series weight (size) known before the origin; 1 when none
``lo80``, ``hi80``    float64         conformal 80% band (NaN where no band could be built)
``lo95``, ``hi95``    float64         conformal 95% band (NaN where no band could be built)
``has_band``          bool            the conformal bands exist for this row
``has_quantiles``     bool            the model gave its own quantiles for this row
``has_samples``       bool            the model gave sample paths for this row
``q<level>``          float64         model quantile at that level (``quantile_column(level)``)
====================  ==============  =============================================================

The text columns are pandas categoricals whose categories are sorted (so equal rows give equal codes,
and a ``sort=True`` group-by orders them as it orders strings; group with ``observed=True``); in parquet
they are dictionary-encoded. The file records the contract version (:data:`tycheon.contract.SCORESET_SCHEMA`,
schema-metadata key ``tycheon_scoreset_schema``); a file without it is a 1.x score set (object text
columns, int64 integers) and :func:`conform_table` turns such a table into the current form. Score sets
are concatenated with :func:`concat_tables`, which keeps the categoricals (``pd.concat`` falls back to
object columns when the categories differ).

Sample paths, when present, are ``samples[row, n]`` aligned with the table rows (NaN rows where a model
has none). ``meta`` holds run facts: protocol description, guard-check counts, abstention counts per
origin, overlap lag, per-model cost (fit/predict seconds) and status.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tycheon._frames import take_rows
from tycheon.backtest.heap import release_free_memory
from tycheon.contract import (
    KEY_COLUMNS,
    SCORESET_COLUMNS,
    SCORESET_SCHEMA,
    SCORESET_SCHEMA_KEY,
    TEXT_COLUMNS,
    quantile_column,
)

__all__ = [
    "KEY_COLUMNS",
    "SORT_KEYS",
    "SCORESET_COLUMNS",
    "RowOrder",
    "ScoreSet",
    "concat_in_key_order",
    "concat_tables",
    "conform_table",
    "key_order",
    "quantile_column",
    "sorted_categorical",
    "take_rows",
]

_INT_COLUMNS = tuple(name for name, dtype in SCORESET_COLUMNS.items() if dtype.startswith("int"))


def sorted_categorical(values: Any) -> pd.Categorical:
    """``values`` as a categorical whose categories are the sorted distinct values present (the score
    set's text-column form).

    A categorical already in that form is returned as it is (no copy of the codes); one with unused or
    unsorted categories has them dropped and sorted; anything else is factorised with sorted categories.
    """
    if isinstance(values, pd.Series):
        values = values.array
    if isinstance(values, pd.Categorical):
        if values.ordered:
            values = values.as_unordered()
        codes = values.codes
        if (codes < 0).any():
            raise ValueError("a score-set text column holds missing values")
        if len(values.categories):
            present = np.bincount(codes, minlength=len(values.categories)) > 0
            if not present.all():  # renumbered through a lookup: pandas' remove_unused_categories sorts the codes
                remap = (np.cumsum(present) - 1).astype(codes.dtype)
                dtype = pd.CategoricalDtype(values.categories[present], ordered=False)
                values = pd.Categorical.from_codes(remap[codes], dtype=dtype, validate=False)
        cats = values.categories
        if cats.is_monotonic_increasing and cats.is_unique:
            return values
        return values.reorder_categories(sorted(cats), ordered=False)
    codes, uniques = pd.factorize(np.asarray(values, dtype=object), sort=True)
    if (codes < 0).any():
        raise ValueError("a score-set text column holds missing values")
    return pd.Categorical.from_codes(codes, categories=pd.Index(uniques, dtype=object))


def conform_table(table: pd.DataFrame) -> pd.DataFrame:
    """The table with the score-set contract's dtypes (:data:`~tycheon.contract.SCORESET_COLUMNS`).

    Text columns become categoricals with sorted categories and ``step`` / ``season_length`` int16, so a
    table read from a 1.x sidecar (object text, int64 integers) or built by hand meets the current
    contract. Columns already in form are kept without a copy; values never change (an integer that
    does not fit int16 raises ``ValueError``). Other columns (quantiles, harness tags) are left alone.
    """
    changes: dict[str, Any] = {}
    for name in TEXT_COLUMNS:
        if name in table.columns:
            col = table[name]
            fixed = sorted_categorical(col)
            if fixed is not col.array:
                changes[name] = fixed
    for name in _INT_COLUMNS:
        if name in table.columns and table[name].dtype != np.int16:
            raw = table[name].to_numpy()
            cast = raw.astype(np.int16)
            if len(raw) and not np.array_equal(cast, raw):
                raise ValueError(f"score-set column {name!r} holds values outside int16")
            changes[name] = cast
    if not changes:
        return table
    out = table.copy(deep=False)
    for name, values in changes.items():
        out[name] = values
    return out


SORT_KEYS = ("unit", "model", "series_id", "origin", "step")
"""The score set's key order: unit, then model, series, origin and horizon step (the order every table
of :mod:`tycheon.analysis.leaderboard` reads its rows in)."""


def key_order(table: pd.DataFrame) -> np.ndarray:
    """Positions that put ``table`` in key order (:data:`SORT_KEYS`), stably: the order
    ``sort_values(SORT_KEYS, kind="stable")`` gives (each key's sorted codes, missing keys last),
    computed on integer codes without copying the table: the codes are folded into one int64 key and
    sorted by one stable argsort, which is fast on rows that already come in sorted runs (each model's
    rows, as the engine writes them); ``np.lexsort`` where the keys cannot be folded into 62 bits."""

    def codes(k: str) -> tuple[np.ndarray, int]:
        col = table[k]
        if isinstance(col.dtype, pd.CategoricalDtype) and col.cat.categories.is_monotonic_increasing:
            c, n = col.cat.codes.to_numpy(), len(col.cat.categories)  # sorted categories: codes sort as labels
        else:
            c, uniques = pd.factorize(col, sort=True)
            n = len(uniques)
        return np.where(c < 0, n, c), n + 1  # a missing key sorts last, as in sort_values

    key = np.zeros(len(table), dtype=np.int64)
    room = 1
    for k in SORT_KEYS:  # Horner's scheme, one key's codes alive at a time
        c, n = codes(k)
        room *= n
        if room >= 2**62:  # pragma: no cover - more combinations than one int64 key holds
            return np.lexsort([codes(k)[0] for k in SORT_KEYS[::-1]])
        key *= n
        key += c
        del c
    return np.argsort(key, kind="stable")


def concat_tables(frames: list[pd.DataFrame], *, sort_keys: bool = False, release: bool = False) -> pd.DataFrame:
    """Concatenate score-set tables (same columns) keeping the text columns categorical.

    Column by column (no intermediate frame, so the peak is the inputs plus the result): a column that
    is categorical in every frame gets the sorted union of the frames' categories, each frame's codes
    remapped onto them (``pandas.api.types.union_categoricals``); any other column is concatenated as
    :func:`pandas.concat` would (``numpy`` concatenation where the dtypes agree). Empty tables are left
    out (they add no rows); the index is reset.

    Parameters
    ----------
    frames : list of DataFrame
        The tables, in the order their rows are concatenated.
    sort_keys : bool, default False
        Put the rows in key order (:func:`key_order`), the order every leaderboard reads them in, so a
        unit's rows are one slice of the result (read without a copy) and the result does not depend on
        the order of ``frames``. Row keys are unique in a score set, so the order is fully determined.
    release : bool, default False
        Delete each column from the input frames once it is concatenated, so that the peak is the
        result plus about two columns instead of the inputs plus the result (the inputs are consumed:
        for a caller that drops them afterwards). The freed heap is handed back to the OS after each
        column (:func:`tycheon.backtest.heap.release_free_memory`).
    """
    return _concat(frames, sort_keys=sort_keys, release=release)[0]


def concat_in_key_order(frames: list[pd.DataFrame], *, release: bool = False) -> tuple[pd.DataFrame, RowOrder | None]:
    """:func:`concat_tables` with ``sort_keys=True``, and how it put the rows in order
    (:class:`RowOrder`, over the frames' rows laid end to end, ``frames`` as given, empty ones
    included), or None where they already were in key order. A caller that keeps other columns of the
    same rows elsewhere (on disk, say) puts them in the table's order with :meth:`RowOrder.gather`."""
    return _concat(frames, sort_keys=True, release=release)


@dataclass(frozen=True)
class RowOrder:
    """How :func:`concat_in_key_order` put the frames' rows (laid end to end) in key order: ``positions``,
    the permutation of :func:`key_order` over them. :meth:`gather` puts another column of the same rows
    in that order, frame by frame."""

    lengths: tuple[int, ...]
    positions: np.ndarray

    @cached_property
    def runs(self) -> list[tuple[int, int, int]]:
        """``(frame, start, stop)``: the stretches of the result whose rows all come from one frame, in
        order (one per (unit, frame) where each frame holds one model, as the harness joins them); found
        once, read by every :meth:`gather`."""
        offsets = np.cumsum(self.lengths)
        source = np.searchsorted(offsets, self.positions, side="right")  # [row] its frame
        edges = np.concatenate(([0], np.flatnonzero(np.diff(source)) + 1, [len(source)]))
        return [(int(source[a]), int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True) if b > a]

    def gather(self, part: Callable[[int], np.ndarray]) -> np.ndarray:
        """The column whose values in frame ``i`` are ``part(i)`` (a numpy array of that frame's length,
        asked for once per frame with rows, in order), in the result's row order. Each frame's values go
        straight into their stretches of one new array (:attr:`runs`), so the peak is the result plus one
        frame's column, not a concatenation of them all beside the result; where the stretches are many
        (the frames' rows interleave), the parts are concatenated and gathered."""
        runs = self.runs
        if len(runs) > max(64, len(self.positions) // 1024):
            return np.concatenate([part(i) for i in range(len(self.lengths))])[self.positions]
        offsets = np.concatenate(([0], np.cumsum(self.lengths)))
        out: np.ndarray | None = None
        for i in range(len(self.lengths)):
            mine = [(a, b) for f, a, b in runs if f == i]
            if not mine:
                continue
            values = part(i)
            if out is None:
                out = np.empty(len(self.positions), dtype=values.dtype)
            elif np.result_type(out, values) != out.dtype:  # a wider part: as a concatenation would upcast
                out = out.astype(np.result_type(out, values))
            for a, b in mine:
                out[a:b] = values[self.positions[a:b] - offsets[i]]
            del values
        if out is None:  # no rows
            return np.concatenate([part(i) for i in range(len(self.lengths))])
        return out


def _column_of(frames: list[pd.DataFrame], name: str) -> Callable[[int], np.ndarray]:
    return lambda i: frames[i][name].to_numpy()


def _reordered(col: Any, order: RowOrder) -> Any:
    """A joined column (numpy array, categorical or other extension array) of the frames' rows laid end to
    end, in ``order``; a categorical's codes are moved, not its values."""
    offsets = np.concatenate(([0], np.cumsum(order.lengths)))

    def part(values: Any) -> Callable[[int], np.ndarray]:
        return lambda i: values[offsets[i] : offsets[i + 1]]

    if isinstance(col, np.ndarray):
        return order.gather(part(col))
    if isinstance(col, pd.Categorical):
        return pd.Categorical.from_codes(order.gather(part(col.codes)), dtype=col.dtype)
    return col.take(order.positions)


def _concat(frames: list[pd.DataFrame], *, sort_keys: bool, release: bool) -> tuple[pd.DataFrame, RowOrder | None]:
    from pandas.api.types import union_categoricals

    lengths = tuple(len(f) for f in frames)
    given = list(range(len(frames)))
    kept = [i for i in given if lengths[i]] or given[:1]  # empty tables add no rows (nor dtypes)
    frames = [frames[i] for i in kept]
    columns = list(frames[0].columns) if frames else []
    if len(frames) == 1 and not sort_keys:
        return frames[0].reset_index(drop=True), None
    if not frames or any(list(f.columns) != columns for f in frames):
        out_frame = pd.concat(frames, ignore_index=True)
        if not sort_keys:
            return out_frame, None
        positions = key_order(out_frame)
        return out_frame.take(positions).reset_index(drop=True), RowOrder(lengths, positions=positions)

    def joined(name: str) -> Any:
        parts = [f[name] for f in frames]
        if all(isinstance(p.dtype, pd.CategoricalDtype) for p in parts):
            return sorted_categorical(union_categoricals([p.array for p in parts], sort_categories=True))
        if all(isinstance(p.dtype, np.dtype) and p.dtype == parts[0].dtype for p in parts):
            return np.concatenate([p.to_numpy() for p in parts])
        return pd.concat(parts, ignore_index=True).array

    inner: RowOrder | None = None  # over the frames with rows
    keys: dict[str, Any] = {}
    if sort_keys:  # the key columns first: the order is read from them
        keys = {k: joined(k) for k in SORT_KEYS}
        positions = key_order(pd.DataFrame(keys, copy=False))
        if not bool((np.diff(positions) == 1).all()):  # else already in key order: no gather
            inner = RowOrder(tuple(len(f) for f in frames), positions)
    out: dict[str, Any] = {}
    for name in columns:
        parts = [f[name] for f in frames]
        if name in keys:
            col = keys.pop(name) if inner is None else _reordered(keys.pop(name), inner)
        elif inner is None:
            col = joined(name)
        elif all(isinstance(p.dtype, np.dtype) and p.dtype == parts[0].dtype for p in parts):
            col = inner.gather(_column_of(frames, name))  # no concatenation beside the result
        else:
            col = _reordered(joined(name), inner)
        del parts
        if release:
            for f in frames:
                del f[name]
            # the inputs' columns are below glibc's mmap threshold (heap memory, kept for reuse when freed)
            # while the joined column is mapped afresh: without a trim the freed heap stays resident and
            # the peak is two tables again (m5scale's peak: benchmarks/perf/MEASUREMENTS.md)
            release_free_memory()
        out[name] = col
        del col
    # the same order over the frames as given (empty ones add no rows, so the positions are the same)
    order = None if inner is None else RowOrder(lengths, inner.positions)
    return pd.DataFrame(out, copy=False), order


@dataclass(frozen=True, eq=False)
class ScoreSet:
    """The long record of every scored forecast; see the module docstring for the columns."""

    table: pd.DataFrame
    quantile_levels: tuple[float, ...] = ()
    samples: np.ndarray | None = None  # [row, sample]
    meta: dict[str, Any] = field(default_factory=dict)
    conformed: bool = field(default=False, repr=False, compare=False, kw_only=True)
    """True when the maker knows the table meets the contract (the score-set writer); otherwise the
    table is put into form (:func:`conform_table`) on construction."""

    def __post_init__(self) -> None:
        expected = list(SCORESET_COLUMNS) + [quantile_column(q) for q in self.quantile_levels]
        missing = [c for c in expected if c not in self.table.columns]
        if missing:
            raise ValueError(f"score set table lacks column(s) {missing}")
        if self.samples is not None and len(self.samples) != len(self.table):
            raise ValueError("samples must have one row per table row")
        if not self.conformed:
            object.__setattr__(self, "table", conform_table(self.table))  # no copy when already in form

    @property
    def models(self) -> list[str]:
        return sorted(self.table["model"].unique())

    @property
    def units(self) -> list[str]:
        return sorted(self.table["unit"].unique())

    def select(self, **equals: Any) -> ScoreSet:
        """Rows where each named column equals the given value (e.g. ``unit="series"``)."""
        mask = np.ones(len(self.table), dtype=bool)
        for col, value in equals.items():
            mask &= (self.table[col] == value).to_numpy()
        samples = None if self.samples is None else self.samples[mask]
        # the text columns keep only the categories still present (conform_table, in __post_init__)
        return ScoreSet(self.table[mask].reset_index(drop=True), self.quantile_levels, samples, self.meta)

    def quantile_matrix(self) -> np.ndarray:
        """Model quantiles as ``[row, level]`` (NaN where a row has none)."""
        cols = [quantile_column(q) for q in self.quantile_levels]
        return self.table[cols].to_numpy(dtype=np.float64) if cols else np.empty((len(self.table), 0))

    def to_parquet(self, path: str | Path) -> None:
        """Write the table (and samples, as extra columns ``s0..``) to one parquet file with metadata."""
        frame = self.table.copy()
        if self.samples is not None:
            for j in range(self.samples.shape[1]):
                frame[f"s{j}"] = self.samples[:, j]
        meta = {
            "quantile_levels": list(self.quantile_levels),
            "n_samples": 0 if self.samples is None else int(self.samples.shape[1]),
            "meta": self.meta,
        }
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(frame, preserve_index=False)
        table = table.replace_schema_metadata(
            {
                **(table.schema.metadata or {}),
                b"tycheon": json.dumps(meta, default=str).encode(),
                SCORESET_SCHEMA_KEY: SCORESET_SCHEMA.encode(),
            }
        )
        pq.write_table(table, str(path))

    @classmethod
    def from_parquet(cls, path: str | Path) -> ScoreSet:
        import pyarrow.parquet as pq

        table = pq.read_table(str(path))
        meta = json.loads(table.schema.metadata[b"tycheon"])
        frame = table.to_pandas()
        n = meta["n_samples"]
        samples = None
        if n:
            cols = [f"s{j}" for j in range(n)]
            samples = frame[cols].to_numpy(dtype=np.float64)
            frame = frame.drop(columns=cols)
        return cls(frame, tuple(meta["quantile_levels"]), samples, meta["meta"])
