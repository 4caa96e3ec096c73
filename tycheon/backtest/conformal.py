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

With ``protocol.n_calibration_origins > 0`` the engine replaces these per-series bands by bands from
scaled residuals pooled per (model, unit, step), calibrated on unscored origins too
(:mod:`tycheon.backtest.calibration`), so that bands exist from the first scored origin.

References
----------
Vovk, V., Gammerman, A. and Shafer, G. (2005). Algorithmic Learning in a Random World. Springer.
Lei, J., G'Sell, M., Rinaldo, A., Tibshirani, R. J. and Wasserman, L. (2018). Distribution-free
predictive inference for regression. JASA 113(523), 1094-1111.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numba import njit

from tycheon._typing import FloatArray, IntArray

__all__ = [
    "BAND_LEVELS",
    "band_grid",
    "check_levels",
    "conformal_radii",
    "conformal_radius",
    "conformal_rank",
    "expected_band_levels",
]

BAND_LEVELS = (80, 95)


def conformal_rank(n: IntArray, level_percent: int) -> IntArray:
    """``ceil((n + 1) * level / 100)`` in exact integer arithmetic."""
    n = np.asarray(n, dtype=np.int64)
    return -((-(n + 1) * int(level_percent)) // 100)


def expected_band_levels(n_origins: int, *, band_min_origins: int) -> tuple[int, ...]:
    """The levels of :data:`BAND_LEVELS` at which some cell of a run with ``n_origins`` origins can get a
    band: a cell has at most ``n_origins - 1`` earlier errors, and a level needs ``n >= band_min_origins``
    and its split-conformal rank within ``n`` (:func:`conformal_rank`). At any other level every radius
    is NaN (with 8 origins, 95% needs 19 errors and has 7 at most)."""
    n = max(0, int(n_origins) - 1)
    return tuple(
        level
        for level in BAND_LEVELS
        if n >= int(band_min_origins) and int(conformal_rank(np.asarray([n], dtype=np.int64), level)[0]) <= n
    )


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
    (radius,), n_cal = _radii(
        keys=keys,
        origin=origin,
        available_at=available_at,
        abs_error=abs_error,
        levels_percent=(level_percent,),
        min_origins=min_origins,
    )
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
    radii, _ = _radii(
        keys=keys,
        origin=origin,
        available_at=available_at,
        abs_error=abs_error,
        levels_percent=tuple(levels_percent),
        min_origins=min_origins,
    )
    return radii


@njit(cache=True)
def _sweep_select(err, pub, stamps, order, want, levels, min_origins, out, n_cal):  # pragma: no cover
    """Per key: its errors ordered by publication time, then a sweep over the origins in time order.

    A plain loop compiled by numba. At each origin the errors published by then join a sorted buffer
    (insertion sort; a key has at most one error per origin, and a run has few origins), so each error is
    inserted once per key instead of once per row that uses it; the rank-th smallest of the buffer is
    the radius of every requested cell (``want``) at that origin. The buffer holds exactly the errors a
    per-row gather would collect (finite, ``pub <= origin``), so the values are identical.
    """
    n_keys, n_orig = err.shape
    vals = np.empty(n_orig)
    pubs = np.empty(n_orig, dtype=np.int64)
    buf = np.empty(n_orig)
    for k in range(n_keys):
        m = 0  # the key's finite errors, sorted by publication time
        for c in range(n_orig):
            e = err[k, c]
            if np.isfinite(e):
                p = pub[k, c]
                j = m
                while j > 0 and pubs[j - 1] > p:
                    pubs[j] = pubs[j - 1]
                    vals[j] = vals[j - 1]
                    j -= 1
                pubs[j] = p
                vals[j] = e
                m += 1
        taken = 0  # errors moved into the sorted buffer so far
        for oi in range(n_orig):
            c = order[oi]
            now = stamps[c]
            while taken < m and pubs[taken] <= now:
                e = vals[taken]
                j = taken  # insertion sort: shift larger errors right
                while j > 0 and buf[j - 1] > e:
                    buf[j] = buf[j - 1]
                    j -= 1
                buf[j] = e
                taken += 1
            if not want[k, c]:
                continue
            n_cal[k, c] = taken
            if taken < min_origins:
                continue
            for lv in range(len(levels)):
                rank = ((taken + 1) * levels[lv] + 99) // 100  # ceil((n + 1) * level / 100), n >= 0
                if rank <= taken:
                    out[lv, k, c] = buf[rank - 1]


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
    check_levels(levels_percent)
    if len(keys) == 0:
        return [np.full(0, np.nan) for _ in levels_percent], np.zeros(0, dtype=np.int64)
    origin_ns = np.asarray(origin, dtype="datetime64[ns]").astype(np.int64)
    stamps = np.sort(pd.unique(origin_ns))  # few distinct origins: hash them, sort only those
    o_idx = np.searchsorted(stamps, origin_ns)
    n_orig = len(stamps)
    key_idx, n_keys = _codes(keys, n_orig)
    err = np.full((n_keys, n_orig), np.nan)  # [key, origin]
    err[key_idx, o_idx] = abs_error
    pub = np.full((n_keys, n_orig), np.iinfo(np.int64).max)  # [key, origin] publication time
    pub[key_idx, o_idx] = np.asarray(available_at, dtype="datetime64[ns]").astype(np.int64)
    want = np.zeros(err.shape, dtype=bool)  # each row asks for a band at its own cell
    want[key_idx, o_idx] = True
    out, grid_cal = band_grid(
        err=err, pub=pub, stamps=stamps, want=want, levels_percent=levels_percent, min_origins=min_origins
    )
    return list(out[:, key_idx, o_idx]), grid_cal[key_idx, o_idx]


def check_levels(levels_percent: tuple[int, ...]) -> None:
    """Raise ``ValueError`` unless every coverage level is an integer percent strictly inside (0, 100)."""
    for level in levels_percent:
        if not 0 < int(level) < 100:
            raise ValueError(f"level_percent must be in (0, 100), got {level}")


def band_grid(
    *,
    err: FloatArray,
    pub: IntArray,
    stamps: IntArray,
    want: np.ndarray | None = None,
    levels_percent: tuple[int, ...] = BAND_LEVELS,
    min_origins: int = 0,
) -> tuple[FloatArray, IntArray]:
    """The conformal radius of every cell of a ``[key, origin]`` error grid.

    Parameters
    ----------
    err : ndarray, shape (K, O)
        Absolute error of each key at each origin (NaN where there is none).
    pub : ndarray of int64, shape (K, O)
        Publication time (ns) of that error's actual (anything where ``err`` is NaN).
    stamps : ndarray of int64, shape (O,)
        Origin times (ns), in any order.
    want : ndarray of bool, shape (K, O), optional
        The cells asking for a band (default: every cell with an error).

    Returns
    -------
    radii : ndarray, shape (len(levels_percent), K, O)
        NaN where no band (or not asked).
    n_calibration : ndarray of int, shape (K, O)
        Errors published by each asking cell's origin (0 elsewhere).
    """
    check_levels(levels_percent)
    err = np.asarray(err, dtype=np.float64)
    want = np.isfinite(err) if want is None else np.asarray(want, dtype=bool)
    stamps = np.asarray(stamps, dtype=np.int64)
    levels = np.asarray(levels_percent, dtype=np.int64)
    out = np.full((len(levels),) + err.shape, np.nan)  # [level, key, origin]
    n_cal = np.zeros(err.shape, dtype=np.int64)
    if err.size:
        _sweep_select(
            err,
            np.asarray(pub, dtype=np.int64),
            stamps,
            np.argsort(stamps, kind="stable"),
            want,
            levels,
            int(min_origins),
            out,
            n_cal,
        )
    return out, n_cal
