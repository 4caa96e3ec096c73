"""The M3 competition's classical methods: THETA, NAIVE2 and SINGLE, as Makridakis & Hibon (2000) ran them.

All three work on the seasonally adjusted series and reseasonalise their forecasts. Seasonal adjustment
is M3's: classical multiplicative decomposition, applied only when the 90% autocorrelation test at the
seasonal lag finds seasonality (:func:`tycheon.forecasters.kernels.classical.seasonal_factors`, the test
as R ``forecast::thetaf`` codes it). Writing :math:`s_t` for the factors (ones when not seasonal) and
:math:`x_t = y_t / s_t` for the adjusted series of length :math:`n`:

- ``naive2``: :math:`\\hat y_{n+h} = x_n\\, s_{n+h}`.
- ``ses_classic`` (M3's SINGLE): SES on :math:`x` with its weight chosen by least squares,
  :math:`\\hat y_{n+h} = f_{n+1}(x)\\, s_{n+h}`.
- ``theta_classic`` (Assimakopoulos & Nikolopoulos 2000): the least-squares line
  :math:`L_0(t) = a + b t` (theta line 0) and the theta-2 line :math:`L_2(t) = 2 x_t - L_0(t)`;
  :math:`L_0` is extrapolated, :math:`L_2` is forecast by SES with its weight chosen by least squares on
  :math:`L_2`, and the two are averaged:
  :math:`\\hat y_{n+h} = \\tfrac12\\,[L_0(n - 1 + h) + f_{n+1}(L_2)]\\, s_{n+h}` (``t = 0..n-1``).
  For a fixed weight this equals SES of :math:`x` with a drift of half the trend slope (Hyndman & Billah
  2003), which is how statsmodels' ``ThetaModel`` computes it; the tests hold the two equal.

Point forecasts only: their intervals are the engine's conformal bands.

References
----------
Makridakis, S. and Hibon, M. (2000). The M3-Competition: results, conclusions and implications. IJF
16(4), 451-476.
Assimakopoulos, V. and Nikolopoulos, K. (2000). The theta model: a decomposition approach to
forecasting. IJF 16(4), 521-530.
Hyndman, R. J. and Billah, B. (2003). Unmasking the Theta method. IJF 19(2), 287-290.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

import numpy as np

from tycheon._typing import FloatArray
from tycheon.forecasters.base import Capabilities, LocalForecaster
from tycheon.forecasters.kernels.classical import ls_alpha, seasonal_factors, theta_lines
from tycheon.forecasters.kernels.smoothing import ses_one
from tycheon.forecasters.registry import register
from tycheon.forecasters.roster._common import check_unit_interval
from tycheon.forecasters.roster.baselines import check_history_length

__all__ = ["ClassicalForecaster", "Naive2Forecaster", "SesClassicForecaster", "ThetaClassicForecaster"]


class ClassicalForecaster(LocalForecaster):
    """An M3 classical method: forecast the seasonally adjusted series (:meth:`_adjusted_forecast`),
    then multiply by the seasonal factors continued over the horizon."""

    capabilities: ClassVar[Capabilities] = Capabilities(min_obs=1)

    @abstractmethod
    def _adjusted_forecast(self, x: FloatArray, *, horizon: int) -> FloatArray:
        """Forecast ``[horizon]`` of the seasonally adjusted series ``x``."""

    def _predict(self, history, *, horizon, quantile_levels, n_samples, rng):
        check_history_length(self, history)
        return super()._predict(history, horizon=horizon, quantile_levels=quantile_levels, n_samples=n_samples, rng=rng)

    def _predict_series(self, y, *, horizon, season_length, quantile_levels, rng):
        y = np.ascontiguousarray(y, dtype=np.float64)
        inside, ahead = seasonal_factors(y, season_length, horizon=horizon)
        return self._adjusted_forecast(y / inside, horizon=horizon) * ahead, None


def _check_alpha(alpha: float | None) -> None:
    if alpha is not None:
        check_unit_interval("alpha", alpha)


@register("naive2", cost="closed_form")
class Naive2Forecaster(ClassicalForecaster):
    """M3's NAIVE2: the last seasonally adjusted value, reseasonalised (Makridakis & Hibon 2000)."""

    def _adjusted_forecast(self, x, *, horizon):
        return np.full(horizon, x[-1])


@register("ses_classic", cost="closed_form", test_params=[{"alpha": 0.4}])
class SesClassicForecaster(ClassicalForecaster):
    """M3's SINGLE: SES on the seasonally adjusted series, :math:`f_1 = x_1`, with the weight that
    minimises the in-sample one-step squared errors (Makridakis & Hibon 2000), reseasonalised.

    Parameters
    ----------
    alpha : float or None
        A fixed weight in (0, 1]; None (default) chooses it by least squares in ``[1e-4, 1]``.
    """

    def __init__(self, *, alpha: float | None = None) -> None:
        _check_alpha(alpha)
        self.alpha = alpha

    def _adjusted_forecast(self, x, *, horizon):
        alpha = ls_alpha(x) if self.alpha is None else float(self.alpha)
        return np.full(horizon, ses_one(x, alpha))


@register("theta_classic", cost="closed_form", test_params=[{"alpha": 0.4}])
class ThetaClassicForecaster(ClassicalForecaster):
    """The Theta method as entered in M3 (Assimakopoulos & Nikolopoulos 2000): the mean of the
    extrapolated least-squares line and the SES forecast of the theta-2 line, on the seasonally
    adjusted series, reseasonalised. Needs 2 observations (a line).

    Parameters
    ----------
    alpha : float or None
        A fixed SES weight in (0, 1] for the theta-2 line; None (default) chooses it by least squares
        of the one-step errors on that line, in ``[1e-4, 1]``.
    """

    capabilities = Capabilities(min_obs=2)

    def __init__(self, *, alpha: float | None = None) -> None:
        _check_alpha(alpha)
        self.alpha = alpha

    def _adjusted_forecast(self, x, *, horizon):
        a, b, line2 = theta_lines(x)
        alpha = ls_alpha(line2) if self.alpha is None else float(self.alpha)
        line0 = a + b * (x.size - 1 + np.arange(1, horizon + 1))
        return 0.5 * (line0 + ses_one(line2, alpha))
