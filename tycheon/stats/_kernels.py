"""Array kernels for the tests: long-run variances and within-row ranks. No validation here."""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["autocov_sums", "long_run_variance", "row_ranks"]


def autocov_sums(x: np.ndarray, lags: int) -> np.ndarray:
    """``x [..., n]`` already demeaned -> ``[..., lags + 1]`` sums :math:`\\sum_t x_t x_{t-k}`, k=0..lags.

    One vectorised product per lag (lags is ceil(h/stride)-1, a handful); never a loop over observations.
    """
    n = x.shape[-1]
    out = np.zeros(x.shape[:-1] + (lags + 1,))
    for k in range(min(lags, n - 1) + 1):
        out[..., k] = np.einsum("...t,...t->...", x[..., k:], x[..., : n - k])
    return out


def long_run_variance(sums: np.ndarray, lags: int) -> tuple[np.ndarray, np.ndarray]:
    """Rectangular long-run variance sum; Bartlett where the rectangular one is <= 0.

    ``sums [..., lags + 1]`` from :func:`autocov_sums` (any common divisor is the caller's). Returns the
    estimate and a bool array, True where the Bartlett fallback was used.
    """
    k = np.arange(1, lags + 1)
    rect = sums[..., 0] + 2.0 * np.sum(sums[..., 1:], axis=-1)
    bart = sums[..., 0] + 2.0 * np.sum((1.0 - k / (lags + 1.0)) * sums[..., 1:], axis=-1)
    fallback = rect <= 0
    return np.where(fallback, bart, rect), fallback


def row_ranks(scores: np.ndarray) -> np.ndarray:
    """Average ranks within each row of ``scores [block, method]`` (1 = lowest)."""
    return stats.rankdata(scores, axis=1, method="average")
