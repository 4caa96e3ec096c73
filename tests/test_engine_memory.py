"""Memory habits of the engine's main process that leave the score set unchanged: the categorical remap
a slice at a time, task chunks as views of the unit, arrow's pool released before the columns."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tycheon.backtest import records
from tycheon.backtest.heap import release_free_memory
from tycheon.backtest.units import build_unit
from tycheon.testing.toys import toy_panel


def test_codes_remapped_a_slice_at_a_time_equal_the_whole_column_remapped(monkeypatch):
    words = records._Dictionary("model", "int8")
    for name in ("tsb", "croston", "naive", "ses"):  # first-sight order, not sorted
        words.code(name)
    codes = np.random.default_rng(3).integers(0, 4, size=1000).astype(np.int8)
    expected = pd.Categorical(np.asarray(["tsb", "croston", "naive", "ses"], dtype=object)[codes])
    monkeypatch.setattr(records, "_REMAP_ROWS", 7)  # many slices, the last one short
    written = codes.copy()
    got = words.categorical(written)
    assert list(got.categories) == ["croston", "naive", "ses", "tsb"]
    assert np.shares_memory(got.codes, written) and got.codes.dtype == np.int8  # remapped in place
    assert (np.asarray(got) == np.asarray(expected)).all()


def test_a_chunk_of_a_unit_views_its_rows_and_equals_the_copy_of_the_same_rows():
    panel = toy_panel(n_series=12, n_periods=20, seed=2)
    data = build_unit(panel, "series", first_fit_end=10)
    view, copy = data.chunk(4, 9), data.take(np.arange(4, 9))
    for name in ("values", "observed", "available_at", "series_ids", "weight"):
        got, want = getattr(view, name), getattr(copy, name)
        assert np.shares_memory(got, getattr(data, name)), name
        assert got.dtype == want.dtype and np.array_equal(got, want, equal_nan=got.dtype.kind in "fM"), name
    pd.testing.assert_frame_equal(view.attributes, copy.attributes)
    assert view.periods is data.periods and view.n_series == 5


def test_release_asks_arrows_pool_once_pyarrow_is_loaded(monkeypatch):
    import pyarrow as pa

    calls = []

    class Pool:
        def release_unused(self) -> None:
            calls.append(True)

    monkeypatch.setattr(pa, "default_memory_pool", Pool)
    assert isinstance(release_free_memory(), bool)
    assert calls == [True]
