"""Multiple-testing adjustments: Benjamini–Hochberg (FDR) and Holm (FWER)."""

from __future__ import annotations

import numpy as np

from tycheon._validate import as_float_array, check_finite
from tycheon.errors import StatisticInputError

__all__ = ["benjamini_hochberg", "holm"]


def _pvalues(p_values: object) -> np.ndarray:
    p = as_float_array(p_values, "p_values", ndim=(1,))
    check_finite(p, "p_values")
    if np.any((p < 0) | (p > 1)):
        raise StatisticInputError("p-values must lie in [0, 1]")
    return p


def benjamini_hochberg(p_values: object) -> np.ndarray:
    r"""Benjamini–Hochberg adjusted p-values (reject where adjusted :math:`\le q`).

    .. math:: \tilde p_{(i)} = \min_{j \ge i} \min\Big\{1, \frac{m}{j} p_{(j)}\Big\}

    References
    ----------
    Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate. JRSS-B 57(1).
    """
    p = _pvalues(p_values)
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    adj = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    out = np.empty(m)
    out[order] = adj
    return out


def holm(p_values: object) -> np.ndarray:
    r"""Holm step-down adjusted p-values.

    .. math:: \tilde p_{(i)} = \max_{j \le i} \min\{1, (m - j + 1) p_{(j)}\}

    References
    ----------
    Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scand. J. Stat. 6(2);
    WP26 section 4.2.
    """
    p = _pvalues(p_values)
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, p[order] * (m - np.arange(m)))
    adj = np.maximum.accumulate(scaled)
    out = np.empty(m)
    out[order] = adj
    return out
