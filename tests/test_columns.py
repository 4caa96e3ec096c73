"""Score-set columns prepared while the tasks run (tycheon.backtest.columns)."""

from __future__ import annotations

import numpy as np
import pytest

from tests._forecasters_support import assert_same_scores
from tycheon.backtest import columns as columns_module
from tycheon.backtest.columns import BAND_COLUMNS, MIN_USE, ColumnBuffers
from tycheon.backtest.engine import run
from tycheon.backtest.factories import forecaster_factory, instance_factory
from tycheon.backtest.protocol import RollingOrigin
from tycheon.backtest.scoreset import SCORESET_COLUMNS, quantile_column
from tycheon.testing.toys import MeanForecaster, NaiveForecaster, toy_panel


def test_buffers_hand_out_views_of_the_first_rows_once_and_only_when_the_bound_fits():
    buffers = ColumnBuffers(100, quantile_levels=(0.1, 0.9), n_samples=3)
    got = buffers.take(80)
    numeric = [n for n in SCORESET_COLUMNS if n not in BAND_COLUMNS]
    assert set(got) == {*numeric, quantile_column(0.1), quantile_column(0.9), "samples"}
    assert all(len(a) == 80 for a in got.values()) and got["samples"].shape == (80, 3)
    assert got["point"].base is not None and got["point"].base.shape == (100,)  # a view of the buffer
    assert not any(d == "object" for d in (str(a.dtype) for a in got.values()))
    assert buffers.take(80) == {}  # handed out once
    assert ColumnBuffers(100).take(101) == {}  # more rows than the bound: the builder allocates
    assert ColumnBuffers(100).take(int(MIN_USE * 100) - 1) == {}  # a loose bound pins no idle memory


def test_when_the_allocation_fails_then_the_builder_gets_nothing_and_allocates_itself(monkeypatch):
    real_empty = np.empty

    def failing_empty(shape, dtype=float):
        raise MemoryError("no room")

    monkeypatch.setattr(columns_module.np, "empty", failing_empty)
    buffers = ColumnBuffers(50)
    monkeypatch.setattr(columns_module.np, "empty", real_empty)
    assert buffers.take(50) == {}


def test_a_run_with_prepared_columns_equals_one_without(monkeypatch):
    import tycheon.backtest.engine as engine

    panel = toy_panel(n_series=30, n_periods=40, seed=2, zero_share=0.3)
    protocol = RollingOrigin(horizon=3, stride=2, n_origins=7, mode="analysis")
    factories = {
        "naive": instance_factory(NaiveForecaster()),
        "mean": instance_factory(MeanForecaster()),
        "snaive": forecaster_factory("seasonal_naive"),
    }  # needs 13 observations: fewer rows
    kwargs = dict(units=("series", "total"), quantile_levels=(0.2, 0.8), n_samples=4, chunk_size=8, band_min_origins=2)
    taken = []

    class Recording(ColumnBuffers):
        def take(self, total):
            got = super().take(total)
            taken.append(bool(got))
            return got

    monkeypatch.setattr(engine, "ColumnBuffers", Recording)
    with_buffers = run(panel, protocol, factories, **kwargs)
    assert taken == [True]  # the prepared columns were used

    class Off(Recording):
        def take(self, total):
            super().take(total)
            return {}

    monkeypatch.setattr(engine, "ColumnBuffers", Off)
    without = run(panel, protocol, factories, **kwargs)
    assert_same_scores(with_buffers, without, meta=("conformal",))
    assert with_buffers.table["has_band"].any()


def test_codes_are_written_in_the_dtype_pandas_keeps_them_in():
    import pandas as pd

    from tycheon.backtest.columns import code_dtype, code_dtypes

    for n in (1, 126, 127, 128, 32766, 32767, 40000):
        made = pd.Categorical.from_codes(np.zeros(3, dtype=code_dtype(n)), categories=pd.RangeIndex(n))
        assert made.codes.dtype == np.dtype(code_dtype(n)), n  # a different dtype would mean a copy
    assert code_dtypes({"series_id": 30490, "model": 8}) == {
        "model": "int8",
        "unit": "int16",  # no bound: the wide default, narrowed by pandas
        "series_id": "int16",
        "demand_class": "int16",
    }


def test_the_engine_writes_text_codes_that_become_the_tables_codes_without_a_copy(monkeypatch):
    from tycheon.backtest import records
    from tycheon.contract import TEXT_COLUMNS

    written = {}
    finish = records.ScoreSetWriter.finish

    def spy(self, meta=None):
        written.update({name: self.data[name] for name in TEXT_COLUMNS})
        return finish(self, meta)

    monkeypatch.setattr(records.ScoreSetWriter, "finish", spy)
    panel = toy_panel(n_series=20, n_periods=30, seed=4, zero_share=0.2)
    protocol = RollingOrigin(horizon=2, stride=2, n_origins=4, mode="analysis")
    factories = {"naive": instance_factory(NaiveForecaster()), "mean": instance_factory(MeanForecaster())}
    scores = run(panel, protocol, factories, units=("series", "total"), quantile_levels=())
    for name in TEXT_COLUMNS:
        codes = scores.table[name].array.codes
        assert codes.dtype == np.int8 and np.shares_memory(codes, written[name]), name
    assert sorted(scores.table["model"].unique()) == ["mean", "naive"]
    assert set(scores.table["unit"]) == {"series", "total"}


def test_released_heap_memory_is_reported_where_glibc_trims():
    import sys

    from tycheon.backtest.heap import release_free_memory

    blocks = [np.ones(4096) for _ in range(2000)]  # 32 KiB each: below the mmap threshold, on the heap
    del blocks
    released = release_free_memory()
    assert isinstance(released, bool)
    if sys.platform.startswith("linux"):
        import ctypes.util

        if ctypes.util.find_library("c") and "musl" not in (ctypes.util.find_library("c") or ""):
            assert released  # 64 MB freed on the heap: glibc gives pages back


def _mapping_fields(address: int) -> dict[str, list[str]]:
    """The ``/proc/self/smaps`` entry (field -> values) of the mapping that holds ``address``."""
    fields: dict[str, list[str]] = {}
    with open("/proc/self/smaps") as smaps:
        inside = False
        for line in smaps:
            head = line.split()[0]
            if "-" in head and all(c in "0123456789abcdef-" for c in head):
                if inside:
                    break
                lo, hi = (int(x, 16) for x in head.split("-"))
                inside = lo <= address < hi
            elif inside:
                fields[head.rstrip(":")] = line.split()[1:]
    return fields


def test_touched_pages_are_resident_and_zero():
    import platform
    import sys

    from tycheon.backtest.heap import SMALL_PAGES_FROM, small_page_array, touch_pages

    small = small_page_array(100, "int16")
    assert touch_pages(small) is False and not small.any()  # below the threshold: written, not advised
    with pytest.raises(ValueError, match="C-contiguous"):
        touch_pages(small_page_array((SMALL_PAGES_FROM // 4, 2), "float32")[:, 0])
    big = small_page_array(4 * SMALL_PAGES_FROM // 8, "float64")  # 16 MiB
    populated = touch_pages(big)
    assert not big.any() and big.flags.writeable
    if not sys.platform.startswith("linux"):
        assert populated is False
        return
    kernel = tuple(int(p) for p in platform.release().split("-")[0].split(".")[:2])
    if kernel >= (5, 14):
        assert populated  # MADV_POPULATE_WRITE exists from Linux 5.14
    rss_kib = int(_mapping_fields(big.__array_interface__["data"][0])["Rss"][0])
    assert rss_kib * 1024 >= big.nbytes  # every page faulted in before any value was written
    big[-1] = 2.0
    assert big[-1] == 2.0 and not big[:-1].any()


def test_a_small_page_array_is_its_own_mapping_advised_against_huge_pages():
    import sys

    from tycheon.backtest.heap import SMALL_PAGES_FROM, small_page_array

    small = small_page_array(10, "float64")
    assert small.shape == (10,) and small.dtype == np.float64 and small.flags.writeable
    big = small_page_array((SMALL_PAGES_FROM // 8, 2), "float64")
    assert big.shape == (SMALL_PAGES_FROM // 8, 2) and big.flags.writeable and big.flags.c_contiguous
    big[-1, -1] = 3.5
    assert big[-1, -1] == 3.5 and not big[:-1].any()
    if not sys.platform.startswith("linux"):
        return
    flags = _mapping_fields(big.__array_interface__["data"][0]).get("VmFlags")
    assert flags is not None and "nh" in flags  # MADV_NOHUGEPAGE on the array's own mapping
