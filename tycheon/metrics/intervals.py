"""Interval scores: interval score, MSIS (M4), coverage and width.

Arrays are ``[step]`` or ``[block, step]``; results reduce over the last axis. NaN/inf inputs raise
:class:`MetricInputError`; ``lower > upper`` is refused. The zero-scale rule of
:mod:`tycheon.metrics.point` applies to MSIS.
"""

from __future__ import annotations

import numpy as np

from tycheon._validate import as_float_array, as_output, check_finite, check_scale, same_shape
from tycheon.errors import MetricInputError
from tycheon.metrics._kernels import interval_score_kernel
from tycheon.metrics.point import ZeroScale

__all__ = ["coverage", "interval_score", "interval_width", "msis"]


def _triple(actual: object, lower: object, upper: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y = as_float_array(actual, "actual", ndim=(1, 2))
    lo = as_float_array(lower, "lower", ndim=(1, 2))
    hi = as_float_array(upper, "upper", ndim=(1, 2))
    same_shape(actual=y, lower=lo, upper=hi)
    for arr, name in ((y, "actual"), (lo, "lower"), (hi, "upper")):
        check_finite(arr, name)
    if np.any(lo > hi):
        raise MetricInputError(f"{int(np.sum(lo > hi))} interval(s) have lower > upper")
    return y, lo, hi


def _alpha(alpha: float) -> float:
    if not 0.0 < alpha < 1.0:
        raise MetricInputError(f"alpha must be in (0, 1) (0.05 for a 95% interval); got {alpha}")
    return float(alpha)


def interval_score(*, actual: object, lower: object, upper: object, alpha: float) -> np.ndarray:
    r"""Interval score of a central :math:`(1-\alpha)` interval, elementwise.

    .. math::

        \mathrm{IS}_\alpha(l, u; y) = (u - l) + \frac{2}{\alpha}(l - y)\mathbb 1\{y < l\}
            + \frac{2}{\alpha}(y - u)\mathbb 1\{y > u\}

    References
    ----------
    Gneiting & Raftery (2007), eq. (43).
    """
    y, lo, hi = _triple(actual, lower, upper)
    return interval_score_kernel(y, lo, hi, _alpha(alpha))


def msis(
    *, actual: object, lower: object, upper: object, alpha: float, scale: object, zero_scale: ZeroScale = "raise"
) -> float | np.ndarray:
    r"""Mean scaled interval score (M4): the block's mean interval score over the in-sample
    seasonal-naive MAE.

    .. math:: \mathrm{MSIS} = \frac{\frac1H\sum_h \mathrm{IS}_\alpha(l_h, u_h; y_h)}{s_{\mathrm{MAE}}}

    References
    ----------
    Makridakis, Spiliotis & Assimakopoulos (2020). The M4 competition. IJF 36(1), eq. (3).
    """
    y, lo, hi = _triple(actual, lower, upper)
    s = check_scale(scale, y.shape[:-1], zero_scale)
    return as_output(np.mean(interval_score_kernel(y, lo, hi, _alpha(alpha)), axis=-1) / s)


def coverage(*, actual: object, lower: object, upper: object) -> float | np.ndarray:
    r"""Share of steps whose actual lies in the closed interval.

    .. math:: \mathrm{cov} = \frac1H\sum_h \mathbb 1\{l_h \le y_h \le u_h\}

    References
    ----------
    Gneiting, Balabdaoui & Raftery (2007); WP26 section 3.1.
    """
    y, lo, hi = _triple(actual, lower, upper)
    return as_output(np.mean((lo <= y) & (y <= hi), axis=-1))


def interval_width(*, actual: object, lower: object, upper: object) -> float | np.ndarray:
    r"""Mean width of the interval over the steps (``actual`` only fixes the shape check).

    .. math:: \bar w = \frac1H\sum_h (u_h - l_h)

    References
    ----------
    WP26 section 3.3 (sharpness).
    """
    _, lo, hi = _triple(actual, lower, upper)
    return as_output(np.mean(hi - lo, axis=-1))
