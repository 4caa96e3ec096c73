"""The harness's memory policy: numpy's huge-page advice off, unless the user set it.

numpy advises the kernel to back every new array of 4 MiB or more with transparent huge pages. Where the
kernel's THP ``defrag`` setting is ``madvise`` (a common default), each first touch of such an array may
stall while the kernel compacts memory to find a 2 MiB page: on the 2-core VM the benchmarks run on, a
fresh 1 GiB array took several times the kernel time to fill with the advice as without
(:func:`tycheon.backtest.heap.advise_huge_pages`; timings in benchmarks/perf/MEASUREMENTS.md). The harness
makes and drops many such arrays (score sets, their joins, block scores, bootstrap weights), so its
processes (the run, the render, the evaluate command, the perf script's study run) turn the advice off at
start: the render of the m5scale results (which re-verifies every table from the 15.3M-row sidecar) was
faster without it, with the same peak resident set (benchmarks/perf/MEASUREMENTS.md). A user who set
``NUMPY_MADVISE_HUGEPAGE`` keeps their choice; tycheon's library code never changes it, and the perf
script's cold and warm comparisons (a user's own process) run with numpy's default.
"""

from __future__ import annotations

import os

from tycheon.backtest.heap import advise_huge_pages

__all__ = ["ENV", "apply"]

ENV = "NUMPY_MADVISE_HUGEPAGE"


def apply() -> bool | None:
    """Turn numpy's huge-page advice off in this process unless :data:`ENV` is set; returns the previous
    setting (None when left alone or numpy has no switch)."""
    if ENV in os.environ:
        return None
    return advise_huge_pages(False)
