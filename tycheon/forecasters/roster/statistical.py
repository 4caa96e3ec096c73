"""Classical statistical models per series, through statsforecast.

Every model here is statsforecast's (numba/C++ implementations of the R ``forecast`` package
algorithms): it is one to two orders of magnitude faster than statsmodels' equivalents, which matters
because a backtest refits every series at every origin, and its automatic selection follows Hyndman &
Khandakar (2008) and Hyndman et al. (2008) as the R reference does. statsmodels has no automatic ETS or
ARIMA order search of its own (``pmdarima`` would be needed), so choosing it would mean re-implementing
the selection. Quantiles come from statsforecast's prediction intervals: a level ``q < 0.5`` is the lower
end of the ``100(1 - 2q)``% interval, ``q > 0.5`` the upper end of the ``100(2q - 1)``% one, and
``q = 0.5`` the point forecast (the ETS, ARIMA and MSTL intervals are symmetric around the mean). AutoTheta
is the exception: its interval ends are quantiles of simulated sample paths, so its ``q = 0.5`` is the
median of the same samples (see :class:`AutoThetaForecaster`).

References
----------
Hyndman, R. J., Koehler, A. B., Ord, J. K. and Snyder, R. D. (2008). Forecasting with Exponential
Smoothing: The State Space Approach. Springer.
Hyndman, R. J. and Khandakar, Y. (2008). Automatic time series forecasting: the forecast package for R.
Journal of Statistical Software 27(3).
Fiorucci, J. A. et al. (2016). Models for optimising the theta method and their relationship to state
space models. IJF 32(4), 1151-1161.
Bandara, K., Hyndman, R. J. and Bergmeir, C. (2021). MSTL: a seasonal-trend decomposition algorithm for
time series with multiple seasonal patterns. arXiv:2107.13462.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar

import numpy as np

from tycheon._typing import FloatArray
from tycheon.forecasters.base import Capabilities, FitUpdateForecaster
from tycheon.forecasters.registry import register
from tycheon.forecasters.roster._common import relay_library_warnings
from tycheon.forecasters.roster.baselines import check_history_length

__all__ = [
    "AutoArimaForecaster",
    "AutoEtsForecaster",
    "AutoThetaForecaster",
    "DampedEtsForecaster",
    "MstlForecaster",
    "StatsforecastForecaster",
    "levels_for_quantiles",
]


def levels_for_quantiles(quantile_levels: tuple[float, ...]) -> list[float]:
    """The central-interval levels (percent) whose ends are the requested quantiles (0.5 excluded)."""
    levels = {round(100.0 * abs(1.0 - 2.0 * q), 10) for q in quantile_levels if q != 0.5}
    return sorted(levels)


def quantiles_from_intervals(
    out: dict[str, Any], quantile_levels: tuple[float, ...], *, median_key: str = "mean"
) -> FloatArray:
    """Read statsforecast's ``lo-<level>``/``hi-<level>`` keys back as ``[horizon, level]`` quantiles;
    ``q = 0.5`` is read from ``median_key`` (the point forecast ``"mean"``, or ``"lo-0.0"``: the
    degenerate level-0 interval, i.e. the median, of a model whose interval ends are simulated)."""
    cols = []
    for q in quantile_levels:
        if q == 0.5:
            cols.append(np.asarray(out[median_key], dtype=np.float64))
            continue
        level = round(100.0 * abs(1.0 - 2.0 * q), 10)
        key = f"{'lo' if q < 0.5 else 'hi'}-{level}"
        cols.append(np.asarray(out[key], dtype=np.float64))
    return np.stack(cols, axis=1)  # [horizon, level]


class StatsforecastForecaster(FitUpdateForecaster):
    """A statsforecast model per series: estimated at ``fit``, updated at the origins between refits.

    Fit and update (:class:`~tycheon.forecasters.base.FitUpdateForecaster`): the model is estimated
    with statsforecast's ``fit`` on each series' training history; an origin served by that fit calls
    the model's own fixed-parameter path, ``forward`` (ETS: ``forward_ets``, the same components,
    smoothing weights and initial states filtered over the longer series; ARIMA: ``forward_arima``, the
    same orders and coefficients through the Kalman filter; Theta: ``forward_theta``, the same variant,
    ``alpha``, ``theta`` and initial level; MSTL: the decomposition of the longer series with its trend
    model's ETS parameters fixed). At a refit origin with no embargo the training history is the predict
    history and the fitted model's ``predict`` is used, which equals statsforecast's ``forecast`` on it.

    Subclasses build the model from the season length in :meth:`_model`. Warnings raised inside the
    call go through :func:`~tycheon.forecasters.roster._common.relay_library_warnings`: API notices
    are dropped, numerical ones come back as :class:`~tycheon.forecasters.roster._common.NumericalWarning`
    naming the model (the fit itself is unchanged).
    """

    capabilities: ClassVar[Capabilities] = Capabilities(min_obs=7, quantiles=True)
    # True where the library's interval ends are quantiles of simulated paths: q = 0.5 is then the
    # simulated median (level 0), so that every quantile comes from one distribution and none can cross
    simulated_intervals: ClassVar[bool] = False

    @abstractmethod
    def _model(self, season_length: int) -> Any:
        """A fresh statsforecast model for this season length."""

    def _predict(self, history, *, horizon, quantile_levels, n_samples, rng):
        check_history_length(self, history)
        return super()._predict(history, horizon=horizon, quantile_levels=quantile_levels, n_samples=n_samples, rng=rng)

    def _estimate(self, y, *, season_length):
        with relay_library_warnings(self.forecaster_id or type(self).__name__):
            return self._model(season_length).fit(np.ascontiguousarray(y, dtype=np.float64))

    def _update(self, state, y, *, same, horizon, season_length, quantile_levels, rng):
        levels = levels_for_quantiles(quantile_levels)
        median_key = "mean"
        if self.simulated_intervals and 0.5 in quantile_levels:
            levels = [0.0, *levels]
            median_key = f"lo-{levels[0]}"
        with relay_library_warnings(self.forecaster_id or type(self).__name__):
            if same:
                out = state.predict(horizon, level=levels or None)
            else:
                out = state.forward(np.ascontiguousarray(y, dtype=np.float64), horizon, level=levels or None)
        point = np.asarray(out["mean"], dtype=np.float64)
        if not quantile_levels:
            return point, None
        return point, quantiles_from_intervals(out, quantile_levels, median_key=median_key)


@register("auto_theta", roster="opt_in", cost="fitted")
class AutoThetaForecaster(StatsforecastForecaster):
    """Theta with automatic choice among the standard, optimised and dynamic variants and a
    multiplicative seasonal-decomposition test (statsforecast ``AutoTheta``; Fiorucci et al. 2016).
    Needs 4 observations.

    The point forecast is the model's analytic mean; the quantiles are those of the sample paths
    statsforecast simulates for its intervals, the 0.5 quantile included (their median, asked as the
    level-0 interval). Taking the mean as the median instead made the quantiles cross wherever the
    simulated distribution is skewed or noisy: the full run of 2026-12-01 (code 5250fcc) lost AutoTheta on
    the M1 and M3 yearly and quarterly categories and M1 monthly with "q0.5 > q0.75" at 1-7 places each.
    """

    capabilities = Capabilities(min_obs=4, quantiles=True)
    simulated_intervals = True

    def _model(self, season_length: int) -> Any:
        from statsforecast.models import AutoTheta

        return AutoTheta(season_length=season_length)


@register("auto_ets", roster="opt_in", cost="fitted")
class AutoEtsForecaster(StatsforecastForecaster):
    """ETS with automatic selection of error, trend and season (statsforecast ``AutoETS``, model
    ``"ZZZ"``, AICc), Hyndman et al. (2008). Needs 7 observations (statsforecast refuses fewer).
    Seasonal components are considered only when the series covers more than one season."""

    def _model(self, season_length: int) -> Any:
        from statsforecast.models import AutoETS

        return AutoETS(season_length=season_length, model="ZZZ")


@register("damped_ets", cost="fitted")
class DampedEtsForecaster(StatsforecastForecaster):
    """ETS restricted to a damped additive trend, error and season selected automatically
    (statsforecast ``AutoETS(model="ZZZ", damped=True)``; Gardner & McKenzie 1985). Needs 8
    observations (the damped model has more parameters)."""

    capabilities = Capabilities(min_obs=8, quantiles=True)

    def _model(self, season_length: int) -> Any:
        from statsforecast.models import AutoETS

        return AutoETS(season_length=season_length, model="ZZZ", damped=True)


@register("auto_arima", roster="opt_in", cost="fitted")
class AutoArimaForecaster(StatsforecastForecaster):
    """Seasonal ARIMA with the Hyndman-Khandakar stepwise order search (statsforecast ``AutoARIMA``).
    Works from 1 observation (a constant model); the slowest of the family."""

    capabilities = Capabilities(min_obs=1, quantiles=True)

    def _model(self, season_length: int) -> Any:
        from statsforecast.models import AutoARIMA

        return AutoARIMA(season_length=season_length)


@register("mstl", cost="fitted")
class MstlForecaster(StatsforecastForecaster):
    """MSTL decomposition (Bandara et al. 2021) with the season length of the panel; the seasonal part
    is forecast by seasonal naive and the remainder by ``AutoETS(model="ZZN")`` (statsforecast ``MSTL``
    defaults). Runs where the season allows: a season length >= 2 and at least two full seasons plus one
    observation (``min_history = 2m + 1``); a panel with season length 1 is refused."""

    capabilities = Capabilities(min_obs=7, quantiles=True)

    def min_history(self, season_length: int) -> int:
        return max(self.capabilities.min_obs, 2 * season_length + 1)

    def _model(self, season_length: int) -> Any:
        if season_length < 2:
            raise ValueError(f"mstl needs a season length >= 2, got {season_length}; use auto_ets instead")
        from statsforecast.models import MSTL

        return MSTL(season_length=season_length)
