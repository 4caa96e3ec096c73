"""Hand the memory the process has freed back to the operating system before the score set is allocated.

glibc's allocator keeps freed heap memory for reuse: after a caller has read a long frame, built a panel
from it and dropped the frame, the temporaries' pages stay resident (tens of megabytes for a
10,000-series frame: benchmarks/perf/MEASUREMENTS.md). The score-set columns are far larger than
the allocator's mmap threshold, so they are mapped afresh and never reuse those pages: without a trim a
one-shot run holds both. ``malloc_trim(0)`` returns the free pages (values are untouched: only memory no
object uses is released). Elsewhere (another libc, macOS, Windows) this does nothing.

Large arrays written once (the score set's columns) are mapped with small pages
(:func:`small_page_array`): numpy advises the kernel to back every allocation of 4 MiB or more with
transparent huge pages, and where the kernel then compacts memory to find one on the fault (THP
``defrag=madvise``, common), a fresh gigabyte costs seconds.

Touching such memory ahead of time (:func:`touch_pages`) asks the kernel to fault every page in at once
(``MADV_POPULATE_WRITE``, Linux 5.14) instead of taking one fault per page from a loop that writes zeros:
faster than ``ndarray.fill`` on the benchmarks' VM (benchmarks/perf/MEASUREMENTS.md).

Arrow has its own allocator (mimalloc or jemalloc), which glibc's trim does not reach: after
``pandas.read_parquet`` of the 30,490-series long frame (1.9M rows) it kept about a hundred megabytes of
freed buffers resident (benchmarks/perf/MEASUREMENTS.md), given back by ``MemoryPool.release_unused()``.
That pool is only asked when pyarrow is already imported (the caller read a parquet file); releasing never
imports it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import sys
from functools import cache

import numpy as np

__all__ = [
    "MADV_POPULATE_WRITE",
    "SMALL_PAGES_FROM",
    "advise_huge_pages",
    "release_free_memory",
    "small_page_array",
    "touch_pages",
]

SMALL_PAGES_FROM = 4 << 20
"""Bytes from which :func:`small_page_array` maps its own memory: numpy's threshold for advising huge pages."""

MADV_POPULATE_WRITE = 23
"""``madvise`` advice (Linux >= 5.14, ``<linux/mman.h>``): fault the range in, writable, as a write would."""


@cache
def _trim() -> object | None:
    if not sys.platform.startswith("linux"):
        return None
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


@cache
def _madvise() -> object | None:
    """libc's ``madvise`` through ctypes (which releases the GIL during the call; ``mmap.madvise`` holds it),
    or None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.madvise
    except (OSError, AttributeError):
        return None
    fn.argtypes, fn.restype = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int], ctypes.c_int
    return fn


def _release_arrow() -> None:
    """Arrow's default pool gives its unused memory back (only where pyarrow is already loaded)."""
    pyarrow = sys.modules.get("pyarrow")
    pool = getattr(pyarrow, "default_memory_pool", None)
    if callable(pool):
        pool().release_unused()


def release_free_memory() -> bool:
    """Return freed heap pages to the OS (glibc ``malloc_trim(0)``, and arrow's pool where pyarrow is
    loaded); True when glibc released memory."""
    _release_arrow()
    trim = _trim()
    return bool(trim(0)) if callable(trim) else False


def small_page_array(shape: int | tuple[int, ...], dtype: str | np.dtype) -> np.ndarray:
    """``np.empty(shape, dtype)`` backed by small pages: an anonymous mapping advised
    ``MADV_NOHUGEPAGE``, unmapped when the last array viewing it goes (smaller arrays, and systems
    without the advice, get ``np.empty``). The values are zero, not arbitrary, but callers must not
    rely on it.

    numpy advises huge pages for every allocation of 4 MiB or more (``NUMPY_MADVISE_HUGEPAGE``); under
    the kernel's ``defrag=madvise`` setting each first touch of such memory may stall in direct
    compaction. On the 2-core VM of the benchmarks a fresh GiB was touched faster on small pages, and
    the cold one-shot backtest of 30,490 series x 8 baselines (``python -m benchmarks.perf``) and warm
    joblib runs spent less time in ``run`` with the score-set columns on small pages than on huge ones
    (warm in-process runs the same either way); timings: benchmarks/perf/MEASUREMENTS.md.
    """
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    advice = getattr(mmap, "MADV_NOHUGEPAGE", None)
    if nbytes < SMALL_PAGES_FROM or advice is None:
        return np.empty(shape, dtype=dtype)
    mapping = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    mapping.madvise(advice)
    return np.frombuffer(mapping, dtype=dtype).reshape(shape)


def touch_pages(array: np.ndarray) -> bool:
    """Fault in every page of a freshly allocated, C-contiguous ``array`` (from :func:`small_page_array`),
    so that later writes find the memory mapped. Returns True when the kernel populated it in one call
    (``MADV_POPULATE_WRITE``, the GIL released), False when the pages were touched by writing zeros
    (older kernels, other systems, arrays not on their own page-aligned mapping).

    Either way the array holds zeros afterwards: a populated private anonymous page is a zero page made
    writable, exactly what a written zero leaves. Use it only on memory whose values are not yet set.
    """
    if not array.flags.c_contiguous:
        raise ValueError("touch_pages needs a C-contiguous array")
    fn = _madvise()
    address, nbytes = array.ctypes.data, array.nbytes
    if callable(fn) and nbytes >= SMALL_PAGES_FROM and address % mmap.PAGESIZE == 0:
        if fn(address, nbytes, MADV_POPULATE_WRITE) == 0:
            return True
    array.view(np.uint8).fill(0)  # GIL released for large arrays
    return False


def advise_huge_pages(enabled: bool) -> bool | None:
    """Turn numpy's transparent-huge-page advice for its new arrays of 4 MiB or more on or off in this
    process, as ``NUMPY_MADVISE_HUGEPAGE`` does when set before numpy is imported; returns the previous
    setting, or None where this numpy has no such switch (nothing changes then).

    tycheon itself never calls it: an application decides its process's memory policy. The benchmark
    harness turns the advice off (:mod:`benchmarks.memory_policy`), because under the kernel's
    ``defrag=madvise`` setting every fresh huge page may stall in direct compaction: on the 2-core VM of
    the benchmarks, filling a fresh 1 GiB array took several times the kernel time with the advice as
    without (benchmarks/perf/MEASUREMENTS.md).
    """
    from numpy._core import multiarray

    setter = getattr(multiarray, "_set_madvise_hugepage", None)
    if not callable(setter):  # pragma: no cover - numpy without the switch
        return None
    return bool(setter(bool(enabled)))
