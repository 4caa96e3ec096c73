"""Point-forecast errors: MAE, RMSE, MASE, RMSSE, WAPE, sMAPE, MAPE, bias and scaled bias.

Every public function takes ``actual`` and ``point`` of one shape, ``[step]`` or ``[block, step]``, and
reduces over the last axis (the steps of one forecast block), returning a float or a ``[block]`` array.
Scaled metrics take the block's in-sample seasonal-naive scale (:mod:`tycheon.metrics.scale`), which the
score set records per (series, origin); the table-level path that picks the right scale column for each
metric is :func:`tycheon.metrics.aggregate.block_scores`.

NaN policy: NaN or infinite ``actual``/``point`` raise :class:`MetricInputError`.
Zero-scale rule: a scale that is zero (a constant training window) or NaN (a window too short to have
one) cannot scale anything. With ``zero_scale="raise"`` (default) that is a :class:`ZeroScaleError`;
with ``zero_scale="exclude"`` the block's scaled value is NaN, and the aggregation layer drops it from
scaled means and counts it in ``n_zero_scale``. A scaled error is never ``inf``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from tycheon._validate import as_float_array, as_output, check_finite, check_scale, same_shape
from tycheon.errors import MetricInputError
from tycheon.metrics.registry import block_value

__all__ = ["bias", "mae", "mape", "mase", "rmse", "rmsse", "scaled_bias", "smape", "wape"]

ZeroScale = Literal["raise", "exclude"]


def _pair(actual: object, point: object) -> tuple[np.ndarray, np.ndarray]:
    y = as_float_array(actual, "actual", ndim=(1, 2))
    f = as_float_array(point, "point", ndim=(1, 2))
    same_shape(actual=y, point=f)
    if y.shape[-1] == 0:
        raise MetricInputError("actual/point have no steps to score")
    check_finite(y, "actual")
    check_finite(f, "point")
    return y, f


def mae(*, actual: object, point: object) -> float | np.ndarray:
    r"""Mean absolute error over the steps of a block.

    .. math:: \mathrm{MAE} = \frac{1}{H}\sum_{h=1}^{H} |y_h - \hat y_h|

    References
    ----------
    Hyndman, R. J. & Koehler, A. B. (2006). Another look at measures of forecast accuracy. IJF 22(4).
    """
    y, f = _pair(actual, point)
    return as_output(block_value("mae", actual=y, point=f))


def rmse(*, actual: object, point: object) -> float | np.ndarray:
    r"""Root mean squared error over the steps of a block.

    .. math:: \mathrm{RMSE} = \sqrt{\frac{1}{H}\sum_{h=1}^{H} (y_h - \hat y_h)^2}

    References
    ----------
    Hyndman & Koehler (2006).
    """
    y, f = _pair(actual, point)
    return as_output(block_value("rmse", actual=y, point=f))


def mase(*, actual: object, point: object, scale: object, zero_scale: ZeroScale = "raise") -> float | np.ndarray:
    r"""Mean absolute scaled error: the block MAE over the in-sample seasonal-naive MAE.

    .. math::

        \mathrm{MASE} = \frac{\frac1H\sum_h |y_h - \hat y_h|}{s_{\mathrm{MAE}}}, \qquad
        s_{\mathrm{MAE}} = \frac{1}{n-m}\sum_{t=m+1}^{n}|y_t - y_{t-m}|

    ``scale`` is :math:`s_{\mathrm{MAE}}` of the origin's own training window (``scale_mae`` in the
    score set), one per block. See the module docstring for the zero-scale rule.

    References
    ----------
    Hyndman & Koehler (2006), eq. for MASE; evaluation-choices paper, section 3.
    """
    y, f = _pair(actual, point)
    s = check_scale(scale, y.shape[:-1], zero_scale)
    return as_output(block_value("mase", actual=y, point=f, scale=s))


def rmsse(*, actual: object, point: object, scale: object, zero_scale: ZeroScale = "raise") -> float | np.ndarray:
    r"""Root mean squared scaled error: the block RMSE over the in-sample seasonal-naive RMSE.

    .. math::

        \mathrm{RMSSE} = \frac{\sqrt{\frac1H\sum_h (y_h - \hat y_h)^2}}{s_{\mathrm{RMSE}}}, \qquad
        s_{\mathrm{RMSE}} = \sqrt{\frac{1}{n-m}\sum_{t=m+1}^{n}(y_t - y_{t-m})^2}

    ``scale`` must be :math:`s_{\mathrm{RMSE}}` (``scale_rmse``), never :math:`s_{\mathrm{MAE}}`: dividing
    by the smaller MAE scale inflates RMSSE by :math:`s_{\mathrm{RMSE}}/s_{\mathrm{MAE}} \ge 1` (paper,
    section 11).

    References
    ----------
    Makridakis, Spiliotis & Assimakopoulos (2022). M5 accuracy competition. IJF 38(4).
    """
    y, f = _pair(actual, point)
    s = check_scale(scale, y.shape[:-1], zero_scale)
    return as_output(block_value("rmsse", actual=y, point=f, scale=s))


def wape(*, actual: object, point: object) -> float | np.ndarray:
    r"""Weighted absolute percentage error (a ratio, not a percentage).

    .. math:: \mathrm{WAPE} = \frac{\sum_h |y_h - \hat y_h|}{\sum_h |y_h|}

    Undefined (``MetricInputError``) when every actual of a block is zero.

    References
    ----------
    Kolassa, S. & Schütz, W. (2007). Advantages of the MAD/mean ratio over the MAPE. Foresight 6.
    """
    y, f = _pair(actual, point)
    den = np.sum(np.abs(y), axis=-1)
    if np.any(den == 0):
        raise MetricInputError("WAPE is undefined for a block whose actuals are all zero")
    return as_output(block_value("wape", actual=y, point=f))


def smape(*, actual: object, point: object) -> float | np.ndarray:
    r"""Symmetric MAPE as a fraction in :math:`[0, 2]` (the M4 definition without the factor 100).

    .. math:: \mathrm{sMAPE} = \frac1H\sum_h \frac{2|y_h - \hat y_h|}{|y_h| + |\hat y_h|}

    A step with :math:`y_h = \hat y_h = 0` contributes 0 (a perfect forecast), as in utilsforecast.
    utilsforecast's ``smape`` omits the factor 2 (range :math:`[0, 1]`).

    References
    ----------
    Makridakis, Spiliotis & Assimakopoulos (2020). The M4 competition. IJF 36(1), eq. (1).
    """
    y, f = _pair(actual, point)
    return as_output(block_value("smape", actual=y, point=f))


def mape(*, actual: object, point: object) -> float | np.ndarray:
    r"""Mean absolute percentage error (a fraction), defined only when no actual is zero.

    .. math:: \mathrm{MAPE} = \frac1H\sum_h \frac{|y_h - \hat y_h|}{|y_h|}

    Raises :class:`MetricInputError` when an actual is zero (the table layer reports such blocks as
    undefined instead).

    References
    ----------
    Hyndman & Koehler (2006), section 3.2.
    """
    y, f = _pair(actual, point)
    if np.any(y == 0):
        raise MetricInputError("MAPE is undefined where an actual is zero; use WAPE or MASE")
    return as_output(block_value("mape", actual=y, point=f))


def bias(*, actual: object, point: object) -> float | np.ndarray:
    r"""Mean forecast error, forecast minus actual (positive = over-forecast).

    .. math:: \mathrm{bias} = \frac1H\sum_h (\hat y_h - y_h)

    References
    ----------
    Hyndman & Koehler (2006), section 3.1 (mean error, sign flipped to forecast minus actual).
    """
    y, f = _pair(actual, point)
    return as_output(block_value("bias", actual=y, point=f))


def scaled_bias(*, actual: object, point: object, scale: object, zero_scale: ZeroScale = "raise") -> float | np.ndarray:
    r"""Bias over the in-sample seasonal-naive MAE, comparable across series.

    .. math:: \mathrm{sbias} = \frac{\frac1H\sum_h (\hat y_h - y_h)}{s_{\mathrm{MAE}}}

    References
    ----------
    Hyndman & Koehler (2006) scaling applied to the mean error; evaluation-choices paper, section 7.
    """
    y, f = _pair(actual, point)
    s = check_scale(scale, y.shape[:-1], zero_scale)
    return as_output(block_value("scaled_bias", actual=y, point=f, scale=s))
