"""Hand the memory the process has freed back to the operating system before the score set is allocated.

glibc's allocator keeps freed heap memory for reuse: after a caller has read a long frame, built a panel
from it and dropped the frame, the temporaries' pages stay resident (about 90 MB for a 10,000-series
frame of 630,000 rows, measured with ``/proc/self/statm``). The score-set columns are far larger than
the allocator's mmap threshold, so they are mapped afresh and never reuse those pages: without a trim a
one-shot run holds both. ``malloc_trim(0)`` returns the free pages (values are untouched: only memory no
object uses is released). Elsewhere (another libc, macOS, Windows) this does nothing.

Arrow has its own allocator (mimalloc or jemalloc), which glibc's trim does not reach: after
``pandas.read_parquet`` of the 30,490-series long frame (1.9M rows) it kept about 110 MB of freed buffers
resident, given back by ``MemoryPool.release_unused()``. That pool is only asked when pyarrow is
already imported (the caller read a parquet file); releasing never imports it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from functools import cache

__all__ = ["release_free_memory"]


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
