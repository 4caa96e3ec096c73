"""Closed-form baselines over a ragged ``[series, time]`` panel (numpy, one array operation per step).

``values`` is float64 ``[series, time]`` with ``NaN`` left of each series' first observation and every
series observed in the last column; ``starts`` is the first observed column per series. Kernels return
point forecasts ``[series, horizon]`` and, where the forecaster has a predictive distribution, its
in-sample residuals ``[series, time]`` (``NaN`` where undefined).

Definitions follow statsforecast 2.x (``Naive``, ``SeasonalNaive``, ``RandomWalkWithDrift``,
``HistoricAverage``, ``WindowAverage``) where one exists; see each function.
"""

from __future__ import annotations

import numpy as np

from tycheon._typing import FloatArray, IntArray

__all__ = [
    "drift_forecast",
    "first_observed",
    "historic_mean",
    "momentum_ratio",
    "naive_residuals",
    "seasonal_naive_forecast",
    "seasonal_residuals",
    "window_mean",
    "window_median",
]


def first_observed(observed: np.ndarray) -> IntArray:
    """Column of each row's first observation; raises if a row has interior gaps or no observation.

    The vectorised kernels rely on each series being observed contiguously from its start to the last
    column (the engine's contract for predict histories).
    """
    obs = np.asarray(observed, dtype=bool)
    t = obs.shape[1]
    starts = np.argmax(obs, axis=1).astype(np.int64)
    count = obs.sum(axis=1)
    bad = np.flatnonzero((count == 0) | (count != t - starts))
    if bad.size:
        raise ValueError(
            f"series at rows {bad[:5].tolist()} are not observed contiguously up to the last column; "
            "the vectorised kernels accept ragged starts (NaN on the left) only"
        )
    return starts


def _last(values: FloatArray) -> FloatArray:
    return values[:, -1]  # [series]


def seasonal_naive_forecast(values: FloatArray, *, season: int, horizon: int) -> FloatArray:
    """:math:`\\hat y_{T+h} = y_{T+h-m\\lceil h/m\\rceil}`: the last full season, repeated.

    Needs at least ``season`` observations per series (the forecaster declares it).
    """
    last_season = values[:, -season:]  # [series, season]
    reps = -(-horizon // season)
    return np.tile(last_season, (1, reps))[:, :horizon]  # [series, horizon]


def naive_residuals(values: FloatArray) -> FloatArray:
    """One-step random-walk errors :math:`e_t = y_t - y_{t-1}` (``NaN`` where undefined)."""
    res = np.full_like(values, np.nan)
    res[:, 1:] = values[:, 1:] - values[:, :-1]
    return res  # [series, time]


def seasonal_residuals(values: FloatArray, *, season: int) -> FloatArray:
    """In-sample seasonal-naive errors :math:`e_t = y_t - y_{t-m}` (``NaN`` where undefined)."""
    res = np.full_like(values, np.nan)
    if values.shape[1] > season:
        res[:, season:] = values[:, season:] - values[:, :-season]
    return res  # [series, time]


def drift_forecast(values: FloatArray, starts: IntArray, *, horizon: int) -> FloatArray:
    """Random walk with drift: :math:`y_T + h\\,(y_T - y_1)/(n-1)` with ``n`` observations (n >= 2)."""
    rows = np.arange(values.shape[0])
    n = values.shape[1] - starts
    slope = (_last(values) - values[rows, starts]) / (n - 1)  # [series]
    steps = np.arange(1, horizon + 1, dtype=np.float64)
    return slope[:, None] * steps[None, :] + _last(values)[:, None]  # [series, horizon]


def historic_mean(values: FloatArray) -> FloatArray:
    """Mean of every observed value per series: ``[series]``."""
    return np.nanmean(values, axis=1)


def window_mean(values: FloatArray, *, window: int) -> FloatArray:
    """Mean of the last ``window`` values (needs ``window`` observations): ``[series]``."""
    return values[:, -window:].mean(axis=1)


def window_median(values: FloatArray, *, window: int) -> FloatArray:
    """Median of the last ``min(window, n)`` observed values per series: ``[series]``."""
    return np.nanmedian(values[:, -window:], axis=1)


def _clipped_ratio(recent: FloatArray, year_ago: FloatArray, *, clip_low: float, clip_high: float) -> FloatArray:
    # recent / year_ago, 1 where year_ago is 0 (no base to grow from), clipped to [clip_low, clip_high]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(year_ago != 0, recent / np.where(year_ago != 0, year_ago, 1.0), 1.0)
    return np.clip(ratio, clip_low, clip_high)


def momentum_ratio(values: FloatArray, *, season: int, k: int, clip_low: float, clip_high: float) -> FloatArray:
    """Year-over-year momentum :math:`r = \\mathrm{clip}(\\sum_{j=0}^{k-1} y_{T-j} /
    \\sum_{j=0}^{k-1} y_{T-m-j},\\ [c_\\ell, c_u])`, with :math:`r = 1` when the denominator is 0.

    Needs ``season + k`` observations per series (the forecaster declares it): ``[series]``.
    """
    recent = values[:, -k:].sum(axis=1)
    year_ago = values[:, -season - k : values.shape[1] - season].sum(axis=1)
    return _clipped_ratio(recent, year_ago, clip_low=clip_low, clip_high=clip_high)  # [series]


def momentum_residuals(
    values: FloatArray, starts: IntArray, *, season: int, k: int, clip_low: float, clip_high: float
) -> FloatArray:
    """In-sample one-step errors of the momentum forecast: :math:`e_t = y_t - r_t\\, y_{t-m}` with
    :math:`r_t` the clipped ratio computed from :math:`y_{t-k..t-1}` and :math:`y_{t-m-k..t-m-1}`.

    Defined where ``t >= start + season + k`` (``NaN`` elsewhere): ``[series, time]``.
    """
    s, t = values.shape
    filled = np.where(np.isnan(values), 0.0, values)
    csum = np.concatenate([np.zeros((s, 1)), np.cumsum(filled, axis=1)], axis=1)  # [series, time+1]
    res = np.full_like(values, np.nan)
    first = season + k
    if t <= first:
        return res
    cols = np.arange(first, t)
    recent = csum[:, cols] - csum[:, cols - k]  # sum of y[t-k..t-1]
    year_ago = csum[:, cols - season] - csum[:, cols - season - k]  # sum of y[t-m-k..t-m-1]
    ratio = _clipped_ratio(recent, year_ago, clip_low=clip_low, clip_high=clip_high)  # [series, time - m - k]
    err = values[:, cols] - ratio * values[:, cols - season]
    valid = cols[None, :] >= (starts[:, None] + first)
    res[:, cols] = np.where(valid, err, np.nan)
    return res
