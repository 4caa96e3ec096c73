"""Row blocks of a frame without copying its cells (used where an elementwise step runs a block at a time)."""

from __future__ import annotations

import pandas as pd

__all__ = ["row_slice"]


def row_slice(table: pd.DataFrame, start: int, stop: int) -> pd.DataFrame:
    """Rows ``start:stop`` of ``table`` as a frame with a fresh ``RangeIndex`` whose columns are slices of
    ``table``'s own arrays (no copy of the cells; the caller must not write into them). The whole range
    returns ``table`` itself."""
    if start == 0 and stop == len(table):
        return table
    return pd.DataFrame({c: table[c].array[start:stop] for c in table.columns}, copy=False)
