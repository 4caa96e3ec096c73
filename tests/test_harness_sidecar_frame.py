"""The sidecar frame of a (dataset, protocol) shares the score-set table's arrays and holds the same
cells, in the same columns, as a copy of the table with its two tags (one-category categoricals) in front."""

from __future__ import annotations

import numpy as np
import pandas as pd

from benchmarks.roster_run import _SIDECAR_COLUMNS, _tagged
from tycheon.backtest.scoreset import SCORESET_COLUMNS


def _table(n: int = 12) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    data = {}
    for c, dtype in SCORESET_COLUMNS.items():
        if dtype.startswith("datetime"):
            data[c] = pd.date_range("2022-01-01", periods=n, freq="MS")
        elif dtype == "bool":
            data[c] = rng.random(n) < 0.5
        elif dtype.startswith(("int", "float")):
            data[c] = rng.integers(0, 9, n).astype(dtype)
        else:
            data[c] = [f"{c}{i % 3}" for i in range(n)]
    table = pd.DataFrame(data)
    table["q0.5"] = rng.normal(size=n)
    table["extra"] = 1.0  # not a score-set or quantile column: not in the sidecar
    return table


def test_the_sidecar_frame_is_the_tagged_table_without_copying_it():
    table = _table()
    frame = _tagged(table, "parts", "rolling_origin")
    expected = table[list(SCORESET_COLUMNS) + ["q0.5"]].copy()
    expected.insert(0, "protocol", pd.Categorical(["rolling_origin"] * len(table)))
    expected.insert(0, "dataset", pd.Categorical(["parts"] * len(table)))
    pd.testing.assert_frame_equal(frame, expected, check_exact=True)
    assert list(frame.columns[: len(_SIDECAR_COLUMNS)]) == _SIDECAR_COLUMNS
    for c in ("actual", "point", "q0.5", "origin"):
        assert np.shares_memory(frame[c].to_numpy(), table[c].to_numpy()), c
    # each tag is a one-category categorical: a byte of code a row, not a string per row
    for tag in ("dataset", "protocol"):
        assert len(frame[tag].cat.categories) == 1
        assert frame[tag].cat.codes.dtype == np.int8


def test_the_sidecar_frame_of_nothing_has_the_sidecar_columns():
    assert list(_tagged(None, "d", "p").columns) == _SIDECAR_COLUMNS
    assert list(_tagged(_table().iloc[:0], "d", "p").columns) == _SIDECAR_COLUMNS
