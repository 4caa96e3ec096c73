"""In-sample seasonal-naive scales: the denominators of MASE and RMSSE, one path for every forecast.

For a training window :math:`y_1..y_n` and season length :math:`m`,

.. math::

    s_{\\mathrm{MAE}} = \\frac{1}{n-m}\\sum_{t=m+1}^{n} |y_t - y_{t-m}|, \\qquad
    s_{\\mathrm{RMSE}} = \\sqrt{\\frac{1}{n-m}\\sum_{t=m+1}^{n} (y_t - y_{t-m})^2}

(Hyndman & Koehler 2006 for MASE; Makridakis et al. 2022, M5, for RMSSE). When the window holds fewer
than :math:`m + 1` observations the lag falls back to 1 (the naive scale) and the lag actually used is
returned, so the score set records it. A window with a single observation has no scale (NaN).
"""

from __future__ import annotations

import numpy as np

from tycheon._typing import BoolArray, FloatArray, IntArray

__all__ = ["SCALE_TEXT", "seasonal_naive_scales"]

SCALE_TEXT = {
    "scale_mae": "the in-sample seasonal-naive MAE of the training window",
    "scale_rmse": "the in-sample seasonal-naive RMSE of the training window",
}
"""Score-set scale column -> what it divides by, in words (the glossary's "Divided by"). The scales a metric
may name (:attr:`tycheon.metrics.registry.MetricSpec.scale_column`); a new denominator is declared here."""


def seasonal_naive_scales(
    values: FloatArray, observed: BoolArray, season_length: int
) -> tuple[FloatArray, FloatArray, IntArray]:
    """Scales per series of a ``[series, time]`` training window.

    Parameters
    ----------
    values : ndarray, shape (S, T)
    observed : ndarray of bool, shape (S, T)
        Observed cells; a series' observations are contiguous (ragged start allowed).
    season_length : int

    Returns
    -------
    scale_mae, scale_rmse : ndarray, shape (S,)
    lag : ndarray of int, shape (S,)
        ``season_length`` where the window allowed it, else 1.
    """
    y = np.where(observed, values, np.nan)
    n = observed.sum(axis=1)
    lag = np.where(n > season_length, season_length, 1).astype(np.int64)
    out_mae = np.full(len(y), np.nan)
    out_rmse = np.full(len(y), np.nan)
    for m in np.unique(lag):
        rows = lag == m
        if y.shape[1] <= m:
            continue
        d = y[rows, m:] - y[rows, :-m]  # NaN wherever either side is unobserved
        cnt = np.isfinite(d).sum(axis=1)
        with np.errstate(invalid="ignore"):
            out_mae[rows] = np.where(cnt > 0, np.nansum(np.abs(d), axis=1) / np.maximum(cnt, 1), np.nan)
            out_rmse[rows] = np.where(cnt > 0, np.sqrt(np.nansum(d * d, axis=1) / np.maximum(cnt, 1)), np.nan)
    return out_mae, out_rmse, lag
