"""Probabilistic scores: CRPS (exact from samples, approximate from quantiles), pinball loss, PIT and
quantile reliability.

CRPS honesty (ADR-0006 decision 7): every CRPS comes back as a :class:`CRPSResult` carrying its ``kind``,
``"exact_samples"`` or ``"approx_quantiles"``. :func:`crps_difference` and :func:`mean_crps` refuse to put
the two kinds in one comparison (:class:`CRPSKindMismatchError`): the quantile integral omits the tails
outside the outermost levels, so it is biased low and would flatter quantile-only models.

NaN policy: NaN or infinite inputs raise :class:`MetricInputError`; the table layer only passes rows
where the model supplied samples or quantiles.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from tycheon._validate import as_float_array, check_finite
from tycheon.errors import CRPSKindMismatchError, MetricInputError
from tycheon.metrics._kernels import crps_ensemble_kernel, crps_quantile_kernel, pinball_kernel

__all__ = [
    "CRPSKind",
    "CRPSResult",
    "crps_difference",
    "crps_ensemble",
    "crps_quantiles",
    "mean_crps",
    "pinball_loss",
    "pit_from_quantiles",
    "pit_from_samples",
    "quantile_reliability",
]

CRPSKind = Literal["exact_samples", "approx_quantiles", "band_quantiles"]


@dataclass(frozen=True, eq=False)
class CRPSResult:
    """Per-observation CRPS values and how they were obtained."""

    values: np.ndarray  # [obs]
    kind: CRPSKind
    fair: bool | None = None  # ensemble estimator only

    def mean(self) -> float:
        return float(np.mean(self.values))


def _actual(actual: object) -> np.ndarray:
    y = as_float_array(actual, "actual", ndim=(0, 1))
    y = np.atleast_1d(y)
    check_finite(y, "actual")
    return y


def _levels(levels: object) -> np.ndarray:
    lv = as_float_array(levels, "levels", ndim=(1,))
    check_finite(lv, "levels")
    if lv.size == 0 or np.any(lv <= 0) or np.any(lv >= 1) or np.any(np.diff(lv) <= 0):
        raise MetricInputError(f"levels must be strictly increasing inside (0, 1); got {lv.tolist()}")
    return lv


def _quantiles(quantiles: object, n: int, k: int) -> np.ndarray:
    q = as_float_array(quantiles, "quantiles", ndim=(1, 2))
    q = q.reshape(1, -1) if q.ndim == 1 else q
    if q.shape != (n, k):
        raise MetricInputError(f"quantiles must have shape (n_obs, n_levels) = {(n, k)}; got {q.shape}")
    check_finite(q, "quantiles")
    return q


def crps_ensemble(*, actual: object, samples: object, fair: bool = True) -> CRPSResult:
    r"""Exact CRPS of the empirical distribution of sample paths (kind ``"exact_samples"``).

    .. math::

        \mathrm{CRPS}_{\mathrm{fair}}(X, y) = \frac1m\sum_{i=1}^m |X_i - y|
            - \frac{1}{2m(m-1)}\sum_{i,j} |X_i - X_j|

    The fair estimator is unbiased for the CRPS of the distribution the samples are drawn from; with
    ``fair=False`` the second denominator is :math:`2m^2` (the CRPS of the empirical distribution itself).

    Parameters
    ----------
    actual : array, shape (n,)
    samples : array, shape (n, m), m >= 2 for the fair estimator

    References
    ----------
    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules. JASA 102, eq. (20);
    Ferro, C. A. T. (2014). Fair scores for ensemble forecasts. QJRMS 140, eq. (6).
    """
    y = _actual(actual)
    x = as_float_array(samples, "samples", ndim=(1, 2))
    x = x.reshape(1, -1) if x.ndim == 1 else x
    if x.shape[0] != y.shape[0]:
        raise MetricInputError(f"samples must have one row per actual; got {x.shape[0]} rows for {y.shape[0]}")
    if x.shape[1] < (2 if fair else 1):
        raise MetricInputError(f"the fair CRPS needs at least 2 samples per row; got {x.shape[1]}")
    check_finite(x, "samples")
    return CRPSResult(crps_ensemble_kernel(y, x, fair), "exact_samples", fair)


def pinball_loss(*, actual: object, quantiles: object, levels: object) -> np.ndarray:
    r"""Pinball (quantile) loss per observation and level, shape ``[obs, level]``.

    .. math:: \rho_\tau(y, q) = \max\{\tau (y - q),\ (\tau - 1)(y - q)\}

    References
    ----------
    Koenker, R. & Bassett, G. (1978). Regression quantiles. Econometrica 46(1); Gneiting & Raftery
    (2007), section 6.
    """
    y = _actual(actual)
    lv = _levels(levels)
    q = _quantiles(quantiles, y.shape[0], lv.shape[0])
    return pinball_kernel(y, q, lv)


def crps_quantiles(*, actual: object, quantiles: object, levels: object) -> CRPSResult:
    r"""Approximate CRPS from quantiles by trapezoid integration of the pinball loss
    (kind ``"approx_quantiles"``).

    .. math::

        \mathrm{CRPS}(F, y) = 2\int_0^1 \rho_\tau(y, F^{-1}(\tau))\,d\tau
        \approx 2\sum_{k=1}^{K-1} \frac{\tau_{k+1}-\tau_k}{2}
            \left[\rho_{\tau_k}(y, q_k) + \rho_{\tau_{k+1}}(y, q_{k+1})\right]

    The tails :math:`(0, \tau_1)` and :math:`(\tau_K, 1)` are not observed and are omitted, so this is a
    lower-biased approximation, consistent across models with the same levels (WP26 section 3.4). Never
    compare it with :func:`crps_ensemble` values.

    References
    ----------
    Laio, F. & Tamea, S. (2007). Verification tools for probabilistic forecasts. HESS 11, eq. (7);
    Gneiting, T. & Ranjan, R. (2011). Comparing density forecasts using threshold- and quantile-weighted
    scoring rules. JBES 29(3), eq. (4).
    """
    y = _actual(actual)
    lv = _levels(levels)
    if lv.size < 2:
        raise MetricInputError("the quantile CRPS needs at least two levels to integrate over")
    q = _quantiles(quantiles, y.shape[0], lv.shape[0])
    return CRPSResult(crps_quantile_kernel(y, q, lv), "approx_quantiles")


def _same_kind(results: tuple[CRPSResult, ...]) -> CRPSKind:
    kinds = {r.kind for r in results}
    if len(kinds) > 1:
        raise CRPSKindMismatchError(
            f"cannot compare CRPS of different kinds {sorted(kinds)}: exact sample CRPS and the "
            "quantile-integral approximation are not on one footing (ADR-0006 decision 7); compare "
            "models that share a kind, or score all of them from the same quantile levels"
        )
    return next(iter(kinds))


def crps_difference(a: CRPSResult, b: CRPSResult) -> np.ndarray:
    r"""Paired CRPS differential for a test, refusing to mix kinds.

    .. math:: d_i = \mathrm{CRPS}^a_i - \mathrm{CRPS}^b_i

    References
    ----------
    ADR-0006 decision 7.
    """
    _same_kind((a, b))
    if a.values.shape != b.values.shape:
        raise MetricInputError(f"paired CRPS arrays differ in shape: {a.values.shape} vs {b.values.shape}")
    return a.values - b.values


def mean_crps(*results: CRPSResult) -> list[float]:
    r"""Mean CRPS of each result, for a table that ranks them; refuses to mix kinds.

    .. math:: \overline{\mathrm{CRPS}} = \frac1n\sum_i \mathrm{CRPS}_i

    References
    ----------
    ADR-0006 decision 7.
    """
    _same_kind(results)
    return [r.mean() for r in results]


def pit_from_samples(*, actual: object, samples: object) -> np.ndarray:
    r"""Probability integral transform from sample paths, with ties split in half.

    .. math:: \mathrm{PIT}_i = \frac1m\left(\#\{X_{ij} < y_i\} + \tfrac12\#\{X_{ij} = y_i\}\right)

    References
    ----------
    Gneiting, T., Balabdaoui, F. & Raftery, A. E. (2007). Probabilistic forecasts, calibration and
    sharpness. JRSS-B 69(2).
    """
    y = _actual(actual)
    x = as_float_array(samples, "samples", ndim=(2,))
    if x.shape[0] != y.shape[0]:
        raise MetricInputError("samples must have one row per actual")
    check_finite(x, "samples")
    below = np.mean(x < y[:, None], axis=1)
    ties = np.mean(x == y[:, None], axis=1)
    return below + 0.5 * ties


def pit_from_quantiles(*, actual: object, quantiles: object, levels: object) -> np.ndarray:
    r"""PIT from quantiles: the forecast CDF is linear between the knots :math:`(q_k, \tau_k)`.

    .. math::

        \mathrm{PIT}_i = \tau_k + (\tau_{k+1}-\tau_k)\frac{y_i - q_{ik}}{q_{i,k+1} - q_{ik}},
        \quad q_{ik} \le y_i < q_{i,k+1}

    so the CDF passes through every knot, :math:`\mathrm{PIT} = \tau_K` at :math:`y = q_K` included
    (tied knots at :math:`y`: the largest such level). Outside the knots the tail is not known; the value is put at
    the middle of the tail,
    :math:`\tau_1/2` below :math:`q_1` and :math:`(1+\tau_K)/2` above :math:`q_K`, so a calibrated
    forecast still gives a uniform histogram on bins aligned with the levels.

    References
    ----------
    Gneiting, Balabdaoui & Raftery (2007); WP26 section 3.5 (interpolated PIT).
    """
    y = _actual(actual)
    lv = _levels(levels)
    q = np.sort(_quantiles(quantiles, y.shape[0], lv.shape[0]), axis=1)  # monotone rearrangement
    k = np.sum(q <= y[:, None], axis=1)  # knots at or below y, 0..K
    on_top = (k == lv.size) & (y == q[:, -1])  # y at the last knot: F(q_K) = tau_K, not the tail midpoint
    inner = ((k > 0) & (k < lv.size)) | on_top
    lo = np.clip(k - 1, 0, lv.size - 1)
    hi = np.clip(k, 0, lv.size - 1)
    rows = np.arange(y.size)
    q_lo, q_hi = q[rows, lo], q[rows, hi]
    gap = q_hi - q_lo
    frac = np.divide(y - q_lo, gap, out=np.zeros_like(y), where=gap > 0)
    inner_val = lv[lo] + (lv[hi] - lv[lo]) * frac
    return np.where(inner, inner_val, np.where(k == 0, lv[0] / 2.0, (1.0 + lv[-1]) / 2.0))


def quantile_reliability(*, actual: object, quantiles: object, levels: object) -> np.ndarray:
    r"""Empirical frequency of :math:`y \le q_\tau` for each level, shape ``[level]`` (nominal is
    :math:`\tau`).

    .. math:: \hat\tau = \frac1n\sum_i \mathbb 1\{y_i \le q_{i,\tau}\}

    References
    ----------
    WP26 section 3.5 (reliability of each quantile).
    """
    y = _actual(actual)
    lv = _levels(levels)
    q = _quantiles(quantiles, y.shape[0], lv.shape[0])
    return np.mean(y[:, None] <= q, axis=0)
