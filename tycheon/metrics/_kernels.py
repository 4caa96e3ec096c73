"""Array kernels shared by the public metric functions and the score-set table layer.

Pure functions on validated float arrays: no NaN policy, no shape checks, no DataFrames. Each formula
lives here once; :mod:`~tycheon.metrics.point`, :mod:`~tycheon.metrics.probabilistic`,
:mod:`~tycheon.metrics.intervals` and :mod:`~tycheon.metrics.aggregate` validate and call them.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "crps_ensemble_kernel",
    "crps_quantile_kernel",
    "band_grid_quantile",
    "grid_quantile",
    "interval_score_kernel",
    "pinball_kernel",
    "smape_ratio",
]


def smape_ratio(y: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Elementwise :math:`2|y - f| / (|y| + |f|)`, 0 where :math:`y = f = 0` (M4 sMAPE term)."""
    den = np.abs(y) + np.abs(f)
    return np.divide(2.0 * np.abs(y - f), den, out=np.zeros_like(den), where=den > 0)


def pinball_kernel(y: np.ndarray, q: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """``y [obs]``, ``q [obs, level]``, ``levels [level]`` -> pinball loss ``[obs, level]``."""
    u = y[:, None] - q
    return np.maximum(levels * u, (levels - 1.0) * u)


def crps_quantile_kernel(y: np.ndarray, q: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Trapezoid of twice the pinball loss over sorted ``levels [level]`` -> ``[obs]``."""
    loss = pinball_kernel(y, q, levels)  # [obs, level]
    return 2.0 * np.sum(0.5 * (loss[:, 1:] + loss[:, :-1]) * np.diff(levels), axis=1)


def crps_ensemble_kernel(y: np.ndarray, x: np.ndarray, fair: bool) -> np.ndarray:
    """``y [n]``, ``x [n, m]`` -> CRPS ``[n]``; O(m log m) per row via the sorted-sample identity
    :math:`\\sum_{i,j}|x_i - x_j| = 2\\sum_i (2i - m - 1) x_{(i)}`."""
    m = x.shape[1]
    term1 = np.mean(np.abs(x - y[:, None]), axis=1)
    xs = np.sort(x, axis=1)
    coef = 2.0 * np.arange(1, m + 1) - m - 1.0
    pair_sum = 2.0 * (xs @ coef)  # sum over ordered pairs of |x_i - x_j|
    denom = 2.0 * m * (m - 1) if fair else 2.0 * m * m
    return term1 - pair_sum / denom


def interval_score_kernel(y: np.ndarray, lo: np.ndarray, hi: np.ndarray, alpha: float) -> np.ndarray:
    """Elementwise interval score of a central :math:`(1-\\alpha)` interval (NaN bounds give NaN)."""
    return (hi - lo) + (2.0 / alpha) * (np.maximum(lo - y, 0.0) + np.maximum(y - hi, 0.0))


def grid_quantile(values: np.ndarray, levels: np.ndarray, tau: float) -> np.ndarray:
    r"""The ``tau`` quantile of each row of a quantile grid, ``values [row, k]`` at ``levels [k]`` -> ``[row]``.

    Each row is sorted first (the monotone rearrangement of Chernozhukov, Fernández-Val & Galichon 2010,
    so a point forecast outside its band still gives a quantile function), then read at ``tau`` on the
    piecewise-linear quantile function through the grid:

    .. math:: q(\tau) = q_j + \frac{\tau - \tau_j}{\tau_{j+1} - \tau_j}(q_{j+1} - q_j),
              \qquad \tau_j \le \tau \le \tau_{j+1}

    exact (the grid value itself) where ``tau`` is on the grid. NaN for a row with any NaN value, and for
    every row where ``tau`` lies outside ``[levels[0], levels[-1]]`` (no extrapolation).
    """
    levels = np.asarray(levels, dtype=np.float64)
    q = np.sort(np.asarray(values, dtype=np.float64), axis=1)  # NaN sort last: a row with one is NaN below
    nan_row = np.isnan(values).any(axis=1)
    if not levels[0] <= tau <= levels[-1]:
        return np.full(len(q), np.nan)
    hit = np.flatnonzero(np.isclose(levels, tau, rtol=0.0, atol=1e-12))
    if hit.size:
        out = q[:, int(hit[0])].copy()
    else:
        j = int(np.searchsorted(levels, tau)) - 1
        w = (tau - levels[j]) / (levels[j + 1] - levels[j])
        out = q[:, j] + w * (q[:, j + 1] - q[:, j])
    out[nan_row] = np.nan
    return out


BAND_LEVELS_95 = np.array([0.025, 0.1, 0.5, 0.9, 0.975])
"""Quantile levels of the conformal bands read as a grid: lo95, lo80, point, hi80, hi95 (the one definition)."""
BAND_LEVELS_80 = np.array([0.1, 0.5, 0.9])
"""Quantile levels of a row with only the 80% band: lo80, point, hi80."""


def band_grid_quantile(bands: np.ndarray, tau: float) -> np.ndarray:
    """The ``tau`` quantile of the conformal bands ``[row, 5]`` (``lo95, lo80, point, hi80, hi95``) -> ``[row]``.

    A row with both bands is read on the five-point grid at 0.025, 0.1, 0.5, 0.9, 0.975; a row with only the
    80% band on the three-point grid ``lo80, point, hi80`` at 0.1, 0.5, 0.9 (NaN there for ``tau`` outside
    [0.1, 0.9]: no extrapolation); a row without the 80% band is NaN (:func:`grid_quantile` on each).
    """
    bands = np.asarray(bands, dtype=np.float64)
    out = grid_quantile(bands[:, 1:4], BAND_LEVELS_80, tau) if 0.1 <= tau <= 0.9 else np.full(len(bands), np.nan)
    full = ~np.isnan(bands).any(axis=1)
    if full.any():
        out[full] = grid_quantile(bands[full], BAND_LEVELS_95, tau)
    return out
