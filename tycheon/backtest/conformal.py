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
import pandas as pd

from tycheon._typing import FloatArray, IntArray

__all__ = ["BAND_LEVELS", "conformal_radii", "conformal_radius", "conformal_rank"]

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
    (radius,), n_cal = _radii(keys=keys, origin=origin, available_at=available_at, abs_error=abs_error,
                              levels_percent=(level_percent,), min_origins=min_origins)
    return radius, n_cal


def conformal_radii(
    *,
    keys: IntArray,
    origin: np.ndarray,
    available_at: np.ndarray,
    abs_error: FloatArray,
    levels_percent: tuple[int, ...] = BAND_LEVELS,
    min_origins: int = 0,
) -> list[FloatArray]:
    """:func:`conformal_radius` at several levels at once (the calibration errors are sorted once).

    Returns one ``radius`` array of shape (n,) per level, in the order of ``levels_percent``.
    """
    radii, _ = _radii(keys=keys, origin=origin, available_at=available_at, abs_error=abs_error,
                      levels_percent=tuple(levels_percent), min_origins=min_origins)
    return radii


def _codes(keys: IntArray, n_orig: int) -> tuple[IntArray, int]:
    """A dense code per distinct key; only the grouping matters, not the order of the codes."""
    keys = np.asarray(keys, dtype=np.int64)
    # a key occurs at most once per origin, so there are >= n / n_orig distinct keys; keys that are
    # already small offsets (the engine's) serve as codes when that wastes at most half the table
    if keys.min() >= 0 and keys.max() < 2 * (-(-len(keys) // n_orig)) + 64:
        return keys, int(keys.max()) + 1
    codes, uniques = pd.factorize(keys)  # hashing: O(n), unlike a sort
    return codes.astype(np.int64), len(uniques)


def _radii(
    *,
    keys: IntArray,
    origin: np.ndarray,
    available_at: np.ndarray,
    abs_error: FloatArray,
    levels_percent: tuple[int, ...],
    min_origins: int,
) -> tuple[list[FloatArray], IntArray]:
    for level in levels_percent:
        if not 0 < int(level) < 100:
            raise ValueError(f"level_percent must be in (0, 100), got {level}")
    n_rows = len(keys)
    radii = [np.full(n_rows, np.nan) for _ in levels_percent]
    n_cal = np.zeros(n_rows, dtype=np.int64)
    if n_rows == 0:
        return radii, n_cal
    origin_ns = np.asarray(origin, dtype="datetime64[ns]").astype(np.int64)
    stamps = np.sort(pd.unique(origin_ns))  # few distinct origins: hash them, sort only those
    o_idx = np.searchsorted(stamps, origin_ns)
    n_orig = len(stamps)
    key_idx, n_keys = _codes(keys, n_orig)
    err = np.full((n_keys, n_orig), np.nan)  # [key, origin]
    err[key_idx, o_idx] = abs_error
    pub = np.full((n_keys, n_orig), np.iinfo(np.int64).max)  # [key, origin] publication time
    pub[key_idx, o_idx] = np.asarray(available_at, dtype="datetime64[ns]").astype(np.int64)
    # rows grouped by origin; a stable sort of small integers is a linear-time radix sort in numpy
    order = np.argsort(o_idx.astype(np.uint16) if n_orig < 2**16 else o_idx, kind="stable")
    cuts = np.searchsorted(o_idx[order], np.arange(n_orig + 1))
    # origin j can only use the columns up to the last one holding an error published by it: with the
    # usual publication after the target period that is columns [0, j), which halves the work
    earliest = pub.min(axis=0)  # [origin]
    for j in range(n_orig):
        width = int(np.flatnonzero(earliest <= stamps[j])[-1]) + 1 if (earliest <= stamps[j]).any() else 0
        rows = order[cuts[j]:cuts[j + 1]]
        if width == 0:  # nothing published yet: no calibration error, no band (n = 0 fails every rank)
            continue
        k = key_idx[rows]
        e = err[k, :width]  # [row, origin]
        usable = (pub[k, :width] <= stamps[j]) & np.isfinite(e)  # known at origin j
        ordered = np.sort(np.where(usable, e, np.inf), axis=1)
        n = usable.sum(axis=1)
        n_cal[rows] = n
        for radius, level in zip(radii, levels_percent):
            rank = conformal_rank(n, level)
            ok = (rank <= n) & (n >= min_origins)
            pick = ordered[np.arange(len(rows)), np.clip(rank - 1, 0, width - 1)]
            radius[rows] = np.where(ok, pick, np.nan)
    return radii, n_cal
