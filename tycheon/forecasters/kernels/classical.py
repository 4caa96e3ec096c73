"""Kernels of the M3 classical methods on one contiguous series: the seasonality test, classical
multiplicative decomposition, least-squares SES and the Theta lines.

Every function takes a 1-d float64 array ``y`` (the observed history, oldest first) and returns arrays;
position ``t = 0`` is the first observation, so seasonal phases are counted from the series' start.

- :func:`acf`: the sample autocorrelation
  :math:`r_k = \\sum_{t=0}^{n-1-k}(y_t-\\bar y)(y_{t+k}-\\bar y) / \\sum_t (y_t-\\bar y)^2`
  (Box-Jenkins; statsmodels ``acf(adjusted=False)``, R ``acf``).
- :func:`is_seasonal`: the 90% test at lag ``m`` used by the M3 Theta method as R ``forecast::thetaf``
  codes it: seasonal when ``m > 1``, ``n > 2m``, the series is not constant and
  :math:`|r_m| > z_{0.95}\\sqrt{(1 + 2\\sum_{k=1}^{m-1} r_k^2)/n}` (Bartlett's standard error of
  :math:`r_m` under an MA(m-1) null; :math:`z_{0.95} = 1.6449`).
- :func:`multiplicative_indices`: classical multiplicative decomposition (R ``decompose``, statsmodels
  ``seasonal_decompose``): the centred moving average of order ``m`` (``2 x m`` when ``m`` is even) as
  the trend, the ratios :math:`y_t / T_t` averaged by phase :math:`t \\bmod m`, normalised to mean 1.
- :func:`ls_alpha` (with :func:`tycheon.forecasters.kernels.smoothing.ses_sse` and ``ses_one``): SES :math:`f_1 = y_1`,
  :math:`f_{t+1} = \\alpha y_t + (1-\\alpha) f_t` (statsmodels ``SimpleExpSmoothing`` with
  ``initial_level = y[0]``), the weight chosen by least squares of the one-step errors.
- :func:`theta_lines`: the least-squares line :math:`a + b t` (theta line 0) and the theta-2 line
  :math:`2 y_t - (a + b t)`.

References
----------
Assimakopoulos, V. and Nikolopoulos, K. (2000). The theta model: a decomposition approach to
forecasting. IJF 16(4), 521-530.
Makridakis, S. and Hibon, M. (2000). The M3-Competition: results, conclusions and implications. IJF
16(4), 451-476 (methods SINGLE, NAIVE2, THETA: seasonal adjustment by classical decomposition).
Hyndman, R. J. and Billah, B. (2003). Unmasking the Theta method. IJF 19(2), 287-290.
Box, G. E. P. and Jenkins, G. M. (1976). Time Series Analysis, section 6.2.2 (Bartlett's formula).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from tycheon._typing import FloatArray
from tycheon.forecasters.kernels.smoothing import ses_sse

__all__ = [
    "SEASONALITY_Z",
    "acf",
    "is_seasonal",
    "ls_alpha",
    "multiplicative_indices",
    "seasonal_factors",
    "theta_lines",
]

SEASONALITY_Z = 1.6448536269514722  # the standard normal's 0.95 quantile (R qnorm(0.95))
ALPHA_LOWER = 1e-4
ALPHA_UPPER = 1.0
_GRID_STEPS = 100


def acf(y: FloatArray, nlags: int) -> FloatArray:
    """Sample autocorrelations ``[nlags + 1]`` at lags ``0..nlags`` (``r_0 = 1``); needs a non-constant
    series with more than ``nlags`` observations."""
    x = np.asarray(y, dtype=np.float64) - float(np.mean(y))
    denom = float(np.dot(x, x))
    return np.array([1.0] + [float(np.dot(x[: x.size - k], x[k:])) / denom for k in range(1, nlags + 1)])


def is_seasonal(y: FloatArray, season: int) -> bool:
    """The 90% autocorrelation test at lag ``season`` (``forecast::thetaf``); False when it cannot run
    (``season < 2``, ``n <= 2 season`` or a constant series)."""
    n = y.size
    if season < 2 or n <= 2 * season or float(np.ptp(y)) == 0.0:
        return False
    r = acf(y, season)[1:]  # lags 1..m
    stat = np.sqrt((1.0 + 2.0 * float(np.sum(r[:-1] ** 2))) / n)
    return bool(abs(r[-1]) > SEASONALITY_Z * stat)


def multiplicative_indices(y: FloatArray, season: int) -> FloatArray:
    """Classical multiplicative seasonal indices ``[season]`` by phase (mean 1); needs ``n > 2 season``
    positive observations so that every phase has a ratio to its centred moving average."""
    n = y.size
    if season % 2 == 0:
        weights = np.r_[0.5, np.ones(season - 1), 0.5] / season
    else:
        weights = np.ones(season) / season
    half = weights.size // 2
    trend = np.full(n, np.nan)
    trend[half : n - half] = np.convolve(y, weights, mode="valid")  # centred: NaN at both ends
    ratio = y / trend
    phase_means = np.array([np.nanmean(ratio[p::season]) for p in range(season)])
    return phase_means / phase_means.mean()


def seasonal_factors(y: FloatArray, season: int, *, horizon: int) -> tuple[FloatArray, FloatArray]:
    """Factors in sample ``[n]`` and over the horizon ``[horizon]``: the classical multiplicative
    indices continued by phase when the series is positive and :func:`is_seasonal` says so, else ones.

    Multiplicative indices are undefined for a series with a zero or negative value (their ratios to
    the trend divide by zero or flip sign); such a series is left unadjusted, as R ``thetaf`` does when
    the indices come out near zero.
    """
    n = y.size
    if not (float(np.min(y)) > 0.0 and is_seasonal(y, season)):
        return np.ones(n), np.ones(horizon)
    idx = multiplicative_indices(y, season)
    return idx[np.arange(n) % season], idx[np.arange(n, n + horizon) % season]


@njit(cache=True)
def ls_alpha(x: np.ndarray) -> float:
    """The SES weight in ``[1e-4, 1]`` with the least one-step SSE: the best of a 0.01 grid, refined by
    golden-section search in the grid cells on both sides (to ``1e-10``); ties keep the smaller weight.
    The grid guards the search against a second local minimum of the SSE curve."""
    lo, hi = ALPHA_LOWER, ALPHA_UPPER
    step = (hi - lo) / _GRID_STEPS
    best_k = 0
    best = ses_sse(x, lo)
    for k in range(1, _GRID_STEPS + 1):
        v = ses_sse(x, lo + k * step)
        if v < best:
            best, best_k = v, k
    a = max(lo, lo + (best_k - 1) * step)
    b = min(hi, lo + (best_k + 1) * step)
    gr = (np.sqrt(5.0) - 1.0) / 2.0
    c = b - gr * (b - a)
    d = a + gr * (b - a)
    fc = ses_sse(x, c)
    fd = ses_sse(x, d)
    while b - a > 1e-10:
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - gr * (b - a)
            fc = ses_sse(x, c)
        else:
            a, c, fc = c, d, fd
            d = a + gr * (b - a)
            fd = ses_sse(x, d)
    mid = 0.5 * (a + b)
    return min(hi, max(lo, mid if ses_sse(x, mid) <= best else lo + best_k * step))


def theta_lines(y: FloatArray) -> tuple[float, float, FloatArray]:
    """``(a, b, line2)``: the least-squares line :math:`a + b t` over ``t = 0..n-1`` and the theta-2 line
    :math:`2 y_t - (a + b t)`; a single observation gives ``b = 0``."""
    n = y.size
    t = np.arange(n, dtype=np.float64)
    if n < 2:
        return float(y[0]), 0.0, y.copy()
    tc = t - t.mean()
    b = float(np.dot(tc, y - y.mean()) / np.dot(tc, tc))
    a = float(y.mean() - b * t.mean())
    return a, b, 2.0 * y - (a + b * t)
