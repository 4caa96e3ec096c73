"""Predictive distributions from in-sample residuals: Gaussian quantiles and bootstrapped sample paths.

Given point forecasts ``[series, horizon]`` and one-step residuals ``[series, time]`` (``NaN`` where
undefined), with a step pattern saying how many independent one-step errors accumulate by step ``h``:

- ``random_walk``: step ``h`` carries ``h`` errors (:math:`\\sigma_h = \\sigma\\sqrt h`);
- ``seasonal``: step ``h`` carries :math:`\\lfloor (h-1)/m \\rfloor + 1` errors
  (:math:`\\sigma_h = \\sigma\\sqrt{\\lfloor (h-1)/m \\rfloor + 1}`), the seasonal random walk.

:math:`\\sigma^2 = \\frac{1}{n_e}\\sum_t e_t^2` over the :math:`n_e` defined residuals (no mean removed,
statsforecast's ``_calculate_sigma`` with its ``n`` equal to the residual count). Quantiles are
:math:`\\hat y_{T+h} + z_q \\sigma_h`. Sample paths add resampled residuals (with replacement, each
series from its own residuals) cumulated the same way, so paths are joint over steps.

Reference: Hyndman, R. J. and Athanasopoulos, G. (2021). Forecasting: Principles and Practice, 3rd ed.,
section 5.5 (benchmark prediction intervals) and 5.5 "bootstrapped residuals".
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from tycheon._typing import FloatArray

__all__ = ["bootstrap_paths", "error_counts", "gaussian_quantiles", "residual_sigma"]

StepPattern = Literal["random_walk", "seasonal"]


def error_counts(*, horizon: int, pattern: StepPattern, season: int = 1) -> np.ndarray:
    """Number of accumulated one-step errors at each step 1..h: ``[horizon]``."""
    steps = np.arange(1, horizon + 1)
    if pattern == "random_walk":
        return steps
    return (steps - 1) // season + 1


def residual_sigma(residuals: FloatArray) -> FloatArray:
    """Root mean square of the defined residuals per series (0 where none is defined): ``[series]``."""
    n = np.isfinite(residuals).sum(axis=1)
    ss = np.nansum(residuals**2, axis=1)
    return np.sqrt(np.where(n > 0, ss / np.maximum(n, 1), 0.0))


def gaussian_quantiles(
    point: FloatArray, sigma: FloatArray, *, counts: np.ndarray, levels: tuple[float, ...]
) -> FloatArray:
    """:math:`\\hat y + z_q\\,\\sigma\\sqrt{c_h}`: ``[series, horizon, level]``."""
    from scipy.stats import norm  # here, not at import: scipy.stats is a large part of a cold start

    z = norm.ppf(np.asarray(levels, dtype=np.float64))  # [level]
    scale = sigma[:, None] * np.sqrt(counts)[None, :]  # [series, horizon]
    return point[:, :, None] + scale[:, :, None] * z[None, None, :]


def bootstrap_paths(
    point: FloatArray,
    residuals: FloatArray,
    *,
    pattern: StepPattern,
    season: int,
    n_samples: int,
    rng: np.random.Generator,
) -> FloatArray:
    """Sample paths: the point plus cumulated resampled residuals: ``[series, horizon, sample]``.

    For ``random_walk`` each step adds a fresh error to the previous step; for ``seasonal`` each season
    position adds a fresh error per elapsed cycle. A series without residuals gets its point forecast.
    """
    s, h = point.shape
    valid = np.isfinite(residuals)
    n_valid = valid.sum(axis=1)  # [series]
    # left-compact each row's residuals so that draws index 0..n_valid-1
    order = np.argsort(~valid, axis=1, kind="stable")
    compact = np.take_along_axis(np.where(valid, residuals, 0.0), order, axis=1)  # [series, time]
    n_draw = h  # one draw per step, cumulated along the step pattern below
    u = rng.random((s, n_draw, n_samples))
    idx = np.minimum((u * np.maximum(n_valid, 1)[:, None, None]).astype(np.int64), compact.shape[1] - 1)
    draws = np.take_along_axis(compact[:, :, None], idx.reshape(s, -1)[:, :, None], axis=1)
    draws = draws.reshape(s, n_draw, n_samples)
    draws[n_valid == 0] = 0.0
    if pattern == "random_walk":
        noise = np.cumsum(draws, axis=1)
    else:
        noise = np.empty_like(draws)
        for j in range(h):  # step j adds its draw to the same season position one cycle earlier
            noise[:, j] = draws[:, j] + (noise[:, j - season] if j >= season else 0.0)
    return point[:, :, None] + noise
