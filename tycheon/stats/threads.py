"""BLAS on the calling thread only, while statistics are computed.

The statistics of a leaderboard make thousands of small BLAS calls (a dot product per Diebold-Mariano
test, a product of bootstrap weights per family). With OpenBLAS's own threads each call wakes them and
they then spin waiting for the next, taking a core from the work itself (the 2-core m5scale study's
re-verified leaderboards were markedly faster without them: benchmarks/perf/MEASUREMENTS.md). A
multi-threaded dot product also sums in an order that depends on the number of threads, so on the calling
thread the statistics no longer depend on the machine's core count. ``threadpoolctl`` comes with
statsforecast and scikit-learn; where it is missing this does nothing.
"""

from __future__ import annotations

import contextlib
from typing import Any

__all__ = ["single_thread_blas"]


def single_thread_blas() -> Any:
    """A context manager within which BLAS runs on the calling thread (``threadpoolctl``'s
    ``threadpool_limits(1, "blas")``); a no-op context where threadpoolctl is not installed."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a dependency of statsforecast
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")
