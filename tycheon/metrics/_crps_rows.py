"""Quantile CRPS row by row in one compiled pass: :func:`~tycheon.metrics._kernels.crps_quantile_kernel`'s
arithmetic, operation for operation, without its ``[row, level]`` temporaries.

The array kernel computes, for a row's sorted quantiles :math:`q_1 \\le \\dots \\le q_K` at levels
:math:`\\tau_1 < \\dots < \\tau_K`, the pinball losses :math:`L_j = \\max(\\tau_j u_j, (\\tau_j - 1) u_j)`,
:math:`u_j = y - q_j`, and then :math:`2 \\sum_{j=1}^{K-1} \\tfrac12 (L_{j+1} + L_j)(\\tau_{j+1} - \\tau_j)`
(a trapezoid of twice the pinball loss over the levels; Laio & Tamea 2007, eq. 7). numpy sums the
``K - 1`` terms of a row left to right (its pairwise summation only splits runs of 8 and more), so the
loop below, which forms each term with the same operations in the same order and adds them left to
right starting from the first, gives the same bits; a test pins that on millions of rows with ties,
zeros and extreme magnitudes. Where the array path sorted each row (the conformal bands read as
quantiles), an insertion sort of the row's few values puts them in the same order (a sort of equal
values cannot be told apart by value).

At M5 size the leaderboards' band CRPS (about 2 million rows, five quantiles each, once for every
unit and demand class) was about a fifth of the leaderboards stage in the array form
(benchmarks/perf/MEASUREMENTS.md).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["quantile_crps_rows"]


@njit(cache=True, inline="always")
def _larger(a, b):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    """``np.maximum(a, b)`` as numpy computes it: NaN if either is, and +0 over -0."""
    if np.isnan(a) or np.isnan(b):
        return a + b
    if a > b:
        return a
    if b > a:
        return b
    return b if np.signbit(a) else a


@njit(cache=True)
def _rows(y, quantiles, levels, steps, sort, out):  # type: ignore[no-untyped-def]  # pragma: no cover - compiled
    k = len(levels)
    q = np.empty(k)
    for i in range(len(y)):
        finite = True
        for j in range(k):
            v = quantiles[i, j]
            if not np.isfinite(v):
                finite = False
                break
            q[j] = v
        if not finite:
            continue
        if sort:
            for j in range(1, k):
                v = q[j]
                m = j
                while m > 0 and q[m - 1] > v:
                    q[m] = q[m - 1]
                    m -= 1
                q[m] = v
        yi = y[i]
        u = yi - q[0]
        prev = _larger(levels[0] * u, (levels[0] - 1.0) * u)
        total = 0.0
        for j in range(1, k):
            u = yi - q[j]
            cur = _larger(levels[j] * u, (levels[j] - 1.0) * u)
            term = 0.5 * (cur + prev) * steps[j - 1]
            total = term if j == 1 else total + term
            prev = cur
        out[i] = 2.0 * total


_CHUNK = 1 << 18
"""Rows per call: the quantiles are staged as one ``[row, level]`` float64 block of this many rows (a few
MB), so the compiled loop sees one array type whatever the columns are (read-only, strided, broadcast)."""


def quantile_crps_rows(
    out: np.ndarray, y: np.ndarray, columns: list[np.ndarray], levels: np.ndarray, *, sort: bool
) -> None:
    """Write the quantile CRPS of every row whose ``columns`` (one array per level, ``levels`` ascending)
    are all finite into ``out`` (a writable float64 array; rows with a missing quantile are left as they
    are); with ``sort``, each row's quantiles are sorted first."""
    levels = np.ascontiguousarray(levels, dtype=np.float64)
    steps = np.diff(levels)
    for start in range(0, len(out), _CHUNK):
        stop = min(start + _CHUNK, len(out))
        quantiles = np.empty((stop - start, len(columns)))
        for j, column in enumerate(columns):
            quantiles[:, j] = column[start:stop]
        target = np.require(y[start:stop], dtype=np.float64, requirements=["C", "W"])
        _rows(target, quantiles, levels, steps, bool(sort), out[start:stop])
