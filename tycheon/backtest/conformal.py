"""Split-conformal bands from each method's own past errors (paper section 6; WP26 section 3.6).

For a model ``m``, unit ``u``, series ``s`` and step ``h``, the band at origin ``o`` uses the absolute
errors :math:`e_{o'} = |y_{o'} - \\hat y_{o'}|` of the same ``(m, u, s, h)`` at earlier origins ``o'``
whose target was already **published** by ``o`` (``available_at <= o``: an error that is not yet
observable at ``o`` cannot calibrate it). With :math:`n` such errors and coverage :math:`1-\\alpha`,

.. math::

    r_o = e_{(k)}, \\qquad k = \\lceil (n + 1)(1 - \\alpha) \\rceil, \\qquad
    [\\hat y_o - r_o,\\ \\hat y_o + r_o],

where :math:`e_{(k)}` is the k-th smallest error (split conformal; WP26 section 3.6 uses the same rank on a
scaled score). Under exchangeable errors the band covers with probability at least :math:`1-\\alpha`
(Vovk, Gammerman & Shafer 2005; Lei et al. 2018, Theorem 2.1). When :math:`k > n` (too few earlier
origins, e.g. :math:`n < 4` at 80% and :math:`n < 19` at 95%) there is no band: NaN, never a made-up
width. ``min_origins`` can demand more calibration errors than the rank needs.

The rank is computed in integer arithmetic (coverage in percent) so that, e.g., :math:`n = 4` at 80% gives
``k = 4`` exactly rather than a floating-point ``ceil(4.000000001) = 5``.

References
----------
Vovk, V., Gammerman, A. and Shafer, G. (2005). Algorithmic Learning in a Random World. Springer.
Lei, J., G'Sell, M., Rinaldo, A., Tibshirani, R. J. and Wasserman, L. (2018). Distribution-free
predictive inference for regression. JASA 113(523), 1094-1111.
"""

from __future__ import annotations

import numpy as np

from tycheon._typing import FloatArray, IntArray

__all__ = ["BAND_LEVELS", "conformal_radius", "conformal_rank"]

BAND_LEVELS = (80, 95)


def conformal_rank(n: IntArray, level_percent: int) -> IntArray:
    """``ceil((n + 1) * level / 100)`` in exact integer arithmetic."""
    n = np.asarray(n, dtype=np.int64)
    return -((-(n + 1) * int(level_percent)) // 100)


def conformal_radius(
    *,
    keys: IntArray,
    origin: np.ndarray,
    available_at: np.ndarray,
    abs_error: FloatArray,
    level_percent: int,
    min_origins: int = 0,
) -> tuple[FloatArray, IntArray]:
    """Half-width of the split-conformal band for every row (NaN where none can be built).

    Parameters
    ----------
    keys : ndarray of int, shape (n,)
        Calibration group of each row: one code per (model, unit, series, step).
    origin, available_at : ndarray of datetime64[ns], shape (n,)
        The row's origin and the publication time of its actual.
    abs_error : ndarray, shape (n,)
        ``|actual - point|``.
    level_percent : int
        Coverage in percent (80, 95).
    min_origins : int
        Fewest calibration errors required on top of the rank condition.

    Returns
    -------
    radius : ndarray, shape (n,)
    n_calibration : ndarray of int, shape (n,)
        Errors available to each row.
    """
    if not 0 < int(level_percent) < 100:
        raise ValueError(f"level_percent must be in (0, 100), got {level_percent}")
    n_rows = len(keys)
    radius = np.full(n_rows, np.nan)
    n_cal = np.zeros(n_rows, dtype=np.int64)
    if n_rows == 0:
        return radius, n_cal
    key_codes, key_idx = np.unique(keys, return_inverse=True)
    origin_ns = np.asarray(origin, dtype="datetime64[ns]").astype(np.int64)
    stamps, o_idx = np.unique(origin_ns, return_inverse=True)
    n_keys, n_orig = len(key_codes), len(stamps)
    err = np.full((n_keys, n_orig), np.nan)  # [key, origin]
    err[key_idx, o_idx] = abs_error
    pub = np.full((n_keys, n_orig), np.iinfo(np.int64).max)  # [key, origin] publication time
    pub[key_idx, o_idx] = np.asarray(available_at, dtype="datetime64[ns]").astype(np.int64)
    for j in range(n_orig):
        rows = np.flatnonzero(o_idx == j)
        k = key_idx[rows]
        usable = (pub[k] <= stamps[j]) & np.isfinite(err[k])  # [row, origin]: known at origin j
        ordered = np.sort(np.where(usable, err[k], np.inf), axis=1)
        n = usable.sum(axis=1)
        rank = conformal_rank(n, level_percent)
        ok = (rank <= n) & (n >= min_origins)
        pick = ordered[np.arange(len(rows)), np.clip(rank - 1, 0, n_orig - 1)]
        radius[rows] = np.where(ok, pick, np.nan)
        n_cal[rows] = n
    return radius, n_cal
