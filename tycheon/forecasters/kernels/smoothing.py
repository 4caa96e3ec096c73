"""Exponential-smoothing recursions over a ragged ``[series, time]`` panel (numba, one loop over series).

Every kernel takes ``values`` (float64, ``[series, time]``) and ``starts`` (int64, ``[series]``), the
column of each series' first observation; columns ``starts[i]:`` of row ``i`` are its observed, contiguous
history. Each returns the flat one-step-ahead level per series (``[series]``), which the forecasters
repeat over the horizon.

The definitions, initialisations and edge cases are those of statsforecast 2.x
(``statsforecast/models.py`` and its C++ ``src/ses.cpp``), so that the performance comparison can demand
agreement to 1e-9:

- SES (``ses_forecast``): :math:`f_1 = y_1`, :math:`f_{t+1} = \\alpha y_t + (1-\\alpha) f_t`, forecast
  :math:`f_{n+1}`; a single observation forecasts itself.
- Golden-section search of :math:`\\alpha \\in [0.1, 0.3]` minimising the one-step SSE, stopping when the
  bracket is narrower than 1e-12 or the two probes tie (``golden_section_ses``).
- Croston: SES (alpha 0.1) of the positive demand sizes over SES (alpha 0.1) of the intervals between
  non-zero periods (the first counted from the series start); no positive demand forecasts the last value.
- Rounding of the mean interval (ADIDA, IMAPA) is half-to-even, as Python's ``round``.

References
----------
Croston, J. D. (1972). Forecasting and stock control for intermittent demands. ORQ 23(3), 289-303.
Syntetos, A. A. and Boylan, J. E. (2005). The accuracy of intermittent demand estimates. IJF 21(2), 303-314.
Teunter, R. H., Syntetos, A. A. and Babai, M. Z. (2011). Intermittent demand: linking forecasting to
inventory obsolescence. EJOR 214(3), 606-615.
Nikolopoulos, K. et al. (2011). An aggregate-disaggregate intermittent demand approach (ADIDA). JORS 62.
Petropoulos, F. and Kourentzes, N. (2015). Forecast combinations for intermittent demand (IMAPA). JORS 66.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = [
    "adida_level",
    "adida_params",
    "adida_update",
    "croston_level",
    "golden_section_alpha",
    "imapa_level",
    "imapa_params",
    "imapa_update",
    "ses_level",
    "ses_one",
    "ses_sse",
    "tsb_level",
]


@njit(cache=True)
def ses_one(x: np.ndarray, alpha: float) -> float:
    """One-step SES forecast of a contiguous 1-d array (statsforecast ``ses_forecast``)."""
    n = x.size
    if n == 1:
        return x[0]
    complement = 1.0 - alpha
    f = x[0]
    for i in range(1, n):
        f = alpha * x[i - 1] + complement * f
    return alpha * x[n - 1] + complement * f


@njit(cache=True)
def ses_sse(x: np.ndarray, alpha: float) -> float:
    """Sum of squared one-step SES errors :math:`\\sum_{t \\ge 2}(y_t - f_t)^2` with :math:`f_1 = y_1`
    (the first error is 0 by this start, so it adds nothing); 0 for fewer than two observations."""
    if x.size < 2:
        return 0.0
    complement = 1.0 - alpha
    f = x[0]
    sse = 0.0
    for i in range(1, x.size):
        f = alpha * x[i - 1] + complement * f
        err = x[i] - f
        sse += err * err
    return sse


@njit(cache=True)
def golden_section_alpha(x: np.ndarray, lower: float = 0.1, upper: float = 0.3) -> float:
    """The SES smoothing weight in ``[lower, upper]`` minimising in-sample one-step SSE (golden section)."""
    gr = (np.sqrt(5.0) + 1.0) / 2.0
    a = lower
    b = upper
    c = b - (b - a) / gr
    d = a + (b - a) / gr
    fc = ses_sse(x, c)
    fd = ses_sse(x, d)
    while abs(b - a) >= 1e-12:
        if fc < fd:
            b = d
            d = c
            fd = fc
            c = b - (b - a) / gr
            fc = ses_sse(x, c)
        elif fd < fc:
            a = c
            c = d
            fc = fd
            d = a + (b - a) / gr
            fd = ses_sse(x, d)
        else:
            break
    return (b + a) / 2.0


@njit(cache=True)
def ses_level(values: np.ndarray, starts: np.ndarray, alpha: float) -> np.ndarray:
    """SES with a fixed ``alpha`` for every series: ``[series]`` one-step forecasts."""
    out = np.empty(values.shape[0])
    for i in range(values.shape[0]):
        out[i] = ses_one(values[i, starts[i] :], alpha)
    return out


@njit(cache=True)
def _demand_and_intervals(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # positive demand sizes, and the gaps between non-zero periods (first gap from the series start)
    n_pos = 0
    n_nz = 0
    for v in y:
        if v > 0:
            n_pos += 1
        if v != 0:
            n_nz += 1
    demand = np.empty(n_pos)
    intervals = np.empty(n_nz)
    k = 0
    j = 0
    prev = 0
    for t in range(y.size):
        if y[t] > 0:
            demand[k] = y[t]
            k += 1
        if y[t] != 0:
            intervals[j] = t + 1 - prev
            prev = t + 1
            j += 1
    return demand, intervals


@njit(cache=True, inline="always")
def _ses_next(f: float, last: float, x: float, n: int, alpha: float, complement: float) -> float:
    """The level after ``x`` joins a series of ``n`` values smoothed so far (``last`` the latest of them):
    :func:`ses_one`'s first value, then its step ``alpha * x[i - 1] + (1 - alpha) * f``."""
    return x if n == 0 else alpha * last + complement * f


@njit(cache=True, inline="always")
def _ses_end(f: float, last: float, n: int, alpha: float, complement: float) -> float:
    """:func:`ses_one`'s forecast from the running level of ``n >= 1`` values: one value forecasts itself."""
    return f if n == 1 else alpha * last + complement * f


@njit(cache=True)
def croston_level(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Croston's classic estimate (alpha 0.1 for sizes and intervals): ``[series]``.

    One pass per series, no temporaries: the two SES recursions of :func:`ses_one` run as the sizes and
    intervals appear (:func:`_ses_next`, :func:`_ses_end`: ``ses_one``'s steps in its order, so the value
    is the same bit for bit as smoothing the arrays :func:`_demand_and_intervals` would build).
    """
    out = np.empty(values.shape[0])
    alpha = 0.1
    complement = 1.0 - alpha
    n_time = values.shape[1]
    for i in range(values.shape[0]):
        start = starts[i]
        n_size = n_gap = 0
        f_size = last_size = f_gap = last_gap = 0.0
        prev = 0  # position (1-based) of the previous non-zero period
        for t in range(n_time - start):
            v = values[i, start + t]
            if v > 0:
                f_size = _ses_next(f_size, last_size, v, n_size, alpha, complement)
                last_size = v
                n_size += 1
            if v != 0:
                gap = float(t + 1 - prev)
                prev = t + 1
                f_gap = _ses_next(f_gap, last_gap, gap, n_gap, alpha, complement)
                last_gap = gap
                n_gap += 1
        if n_size == 0:
            out[i] = values[i, n_time - 1]
            continue
        size = _ses_end(f_size, last_size, n_size, alpha, complement)
        gap = _ses_end(f_gap, last_gap, n_gap, alpha, complement)
        out[i] = size / gap if gap != 0.0 else size
    return out


@njit(cache=True)
def tsb_level(values: np.ndarray, starts: np.ndarray, alpha_d: float, alpha_p: float) -> np.ndarray:
    """TSB: SES(alpha_p) of the occurrence indicator times SES(alpha_d) of the positive sizes.

    One pass per series without temporaries, each SES step as :func:`ses_one` takes it (the same value
    bit for bit as smoothing the occurrence and size arrays).
    """
    out = np.empty(values.shape[0])
    c_d = 1.0 - alpha_d
    c_p = 1.0 - alpha_p
    n_time = values.shape[1]
    for i in range(values.shape[0]):
        start = starts[i]
        n = n_time - start
        n_size = 0
        f_size = last_size = f_occ = last_occ = 0.0
        for t in range(n):
            v = values[i, start + t]
            if v > 0:
                f_size = _ses_next(f_size, last_size, v, n_size, alpha_d, c_d)
                last_size = v
                n_size += 1
            occ = 1.0 if v != 0 else 0.0
            f_occ = _ses_next(f_occ, last_occ, occ, t, alpha_p, c_p)
            last_occ = occ
        if n_size == 0:
            out[i] = 0.0
            continue
        out[i] = _ses_end(f_occ, last_occ, n, alpha_p, c_p) * _ses_end(f_size, last_size, n_size, alpha_d, c_d)
    return out


@njit(cache=True)
def _chunk_sums(y: np.ndarray, level: int) -> np.ndarray:
    # sums of consecutive non-overlapping blocks, the incomplete block at the *start* dropped
    lost = y.size % level
    n_chunks = (y.size - lost) // level
    sums = np.empty(n_chunks)
    for c in range(n_chunks):
        s = 0.0
        base = lost + c * level
        for j in range(level):
            s += y[base + j]
        sums[c] = s
    return sums


@njit(cache=True)
def _optimised_ses(x: np.ndarray) -> float:
    return ses_one(x, golden_section_alpha(x, 0.1, 0.3))


@njit(cache=True)
def _mean_interval_rounded(y: np.ndarray) -> int:
    _, intervals = _demand_and_intervals(y)
    return int(np.rint(intervals.mean()))  # half-to-even, as Python's round


@njit(cache=True)
def _all_zero(y: np.ndarray) -> bool:
    for v in y:
        if v != 0:
            return False
    return True


@njit(cache=True)
def adida_level(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """ADIDA: optimised SES on block sums at the rounded mean interval, divided by the block length."""
    out = np.empty(values.shape[0])
    for i in range(values.shape[0]):
        y = values[i, starts[i] :]
        if _all_zero(y):
            out[i] = 0.0
            continue
        # level <= y.size always: the intervals sum to (last non-zero position + 1) <= y.size, so their
        # mean, and its rounding, is at most y.size; there is at least one block
        level = _mean_interval_rounded(y)
        sums = _chunk_sums(y, level)
        total = sums[0] if sums.size == 1 else _optimised_ses(sums)
        out[i] = total / level
    return out


@njit(cache=True)
def imapa_level(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """IMAPA: the mean over block lengths 1..round(mean interval) of ADIDA's per-period estimate."""
    out = np.empty(values.shape[0])
    for i in range(values.shape[0]):
        y = values[i, starts[i] :]
        if _all_zero(y):
            out[i] = 0.0
            continue
        top = _mean_interval_rounded(y)
        total = 0.0
        for level in range(1, top + 1):
            total += _optimised_ses(_chunk_sums(y, level)) / level
        out[i] = total / top
    return out


# --- fit and update (issue 36): the estimated parameters of ADIDA and IMAPA, kept between refits ----------------
# ADIDA estimates a block length (the rounded mean interval) and an SES weight on the block sums; IMAPA one
# weight per block length 1..top. ``*_params`` estimates them as ``*_level`` does (level 0: an all-zero series,
# nothing estimated); ``*_update`` forecasts a longer series with them kept: the block sums of the new series
# at the kept length, SES at the kept weight (a weight estimated from a single block is NaN and is then
# estimated on the new sums, as ``*_level`` would). On the series they were estimated on, update equals level.


@njit(cache=True)
def _kept_ses(sums: np.ndarray, alpha: float) -> float:
    if sums.size == 1:
        return sums[0]
    if np.isnan(alpha):
        return _optimised_ses(sums)
    return ses_one(sums, alpha)


@njit(cache=True)
def _weight(sums: np.ndarray) -> float:
    return np.nan if sums.size < 2 else golden_section_alpha(sums, 0.1, 0.3)


@njit(cache=True)
def adida_params(values: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(level[series], alpha[series])`` as :func:`adida_level` estimates them (level 0: all zero)."""
    n = values.shape[0]
    level = np.zeros(n, dtype=np.int64)
    alpha = np.full(n, np.nan)
    for i in range(n):
        y = values[i, starts[i] :]
        if _all_zero(y):
            continue
        level[i] = _mean_interval_rounded(y)
        alpha[i] = _weight(_chunk_sums(y, level[i]))
    return level, alpha


@njit(cache=True)
def adida_update(values: np.ndarray, starts: np.ndarray, level: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """ADIDA's one-step level of each series with its kept block length and weight (level 0: estimated
    on this series, as :func:`adida_level`)."""
    out = np.empty(values.shape[0])
    for i in range(values.shape[0]):
        y = values[i, starts[i] :]
        if level[i] == 0 or level[i] > y.size:
            out[i] = adida_level(values[i : i + 1], starts[i : i + 1])[0]
            continue
        out[i] = _kept_ses(_chunk_sums(y, level[i]), alpha[i]) / level[i]
    return out


@njit(cache=True)
def imapa_params(values: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(top[series], alpha[series, level - 1])`` as :func:`imapa_level` estimates them: the largest block
    length and the SES weight at each length 1..top (NaN beyond top; top 0: all zero)."""
    n = values.shape[0]
    top = np.zeros(n, dtype=np.int64)
    for i in range(n):
        y = values[i, starts[i] :]
        if not _all_zero(y):
            top[i] = _mean_interval_rounded(y)
    alpha = np.full((n, max(1, int(top.max()) if n else 1)), np.nan)
    for i in range(n):
        y = values[i, starts[i] :]
        for lv in range(1, top[i] + 1):
            alpha[i, lv - 1] = _weight(_chunk_sums(y, lv))
    return top, alpha


@njit(cache=True)
def imapa_update(values: np.ndarray, starts: np.ndarray, top: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """IMAPA's one-step level of each series with its kept block lengths and weights (top 0: estimated on
    this series, as :func:`imapa_level`)."""
    out = np.empty(values.shape[0])
    for i in range(values.shape[0]):
        y = values[i, starts[i] :]
        if top[i] == 0 or top[i] > y.size:
            out[i] = imapa_level(values[i : i + 1], starts[i : i + 1])[0]
            continue
        total = 0.0
        for lv in range(1, top[i] + 1):
            total += _kept_ses(_chunk_sums(y, lv), alpha[i, lv - 1]) / lv
        out[i] = total / top[i]
    return out
