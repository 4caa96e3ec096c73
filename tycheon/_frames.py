"""Frames cut without copying their cells where they can be: row blocks (where an elementwise step runs a
block at a time), rows gathered column by column, and columns dropped in place."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pandas as pd

__all__ = ["drop_columns", "row_slice", "row_spans", "take_rows"]


def row_slice(table: pd.DataFrame, start: int, stop: int) -> pd.DataFrame:
    """Rows ``start:stop`` of ``table`` as a frame with a fresh ``RangeIndex`` whose columns are slices of
    ``table``'s own arrays (no copy of the cells; the caller must not write into them). The whole range
    returns ``table`` itself."""
    if start == 0 and stop == len(table):
        return table
    return pd.DataFrame({c: table[c].array[start:stop] for c in table.columns}, copy=False)


def drop_columns(table: pd.DataFrame, columns: list[str]) -> None:
    """Remove ``columns`` from ``table`` in place, one ``del`` each: the other columns' arrays stay as
    they are (``DataFrame.drop(..., inplace=True)`` builds a new frame, copying every remaining block:
    a second copy of the score set's other columns at the peak, see benchmarks/perf/MEASUREMENTS.md)."""
    for c in columns:
        del table[c]


def row_spans(n: int, size: int) -> Iterator[tuple[int, int]]:
    """``(start, stop)`` of consecutive blocks of at most ``size`` of ``n`` rows."""
    for a in range(0, n, size):
        yield a, min(n, a + size)


def take_rows(table: pd.DataFrame, positions: np.ndarray, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Rows ``positions`` of ``columns`` (default all) as a new frame with a fresh index, gathered column
    by column: one copy of only those cells, with no block-wise intermediate (``frame[cols]`` then a
    row selection then ``reset_index`` copied the rows two or three times).

    Where ``positions`` is one ascending run (``a, a+1, ..., b-1``: a unit of a table in key order, as
    :func:`tycheon.backtest.scoreset.concat_tables` with ``sort_keys`` and a reader of a large sidecar
    hand it over) the columns are slices of the table's own arrays, not copies; the caller must not write
    into them."""
    n = len(positions)
    run = bool(n) and int(positions[-1]) - int(positions[0]) == n - 1 and bool((np.diff(positions) == 1).all())
    a = int(positions[0]) if run else 0
    out = {}
    for c in table.columns if columns is None else columns:
        col = table[c]
        if run:
            out[c] = col.to_numpy()[a : a + n] if isinstance(col.dtype, np.dtype) else col.array[a : a + n]
        else:
            out[c] = col.to_numpy()[positions] if isinstance(col.dtype, np.dtype) else col.array.take(positions)
    return pd.DataFrame(out, copy=False)
