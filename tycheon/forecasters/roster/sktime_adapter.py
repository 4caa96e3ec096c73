"""An sktime forecaster from the reviewed allow-list, by its class name and parameters, as a roster member.

The class is looked up by *exact* name in :mod:`.sktime_allowlist` (``sktime_allowlist.toml``), never in
sktime's whole registry (some registered classes ``eval`` a string parameter) and never by importing a
caller's module path; ``params`` are checked against the list's rules when the forecaster is constructed,
so a parameter off the list, of the wrong type, out of range or non-finite is refused before anything runs.
The class is built with ``params`` and fitted to each series on its own at every origin: a ``pd.Series``
on a ``PeriodIndex`` of the series' observed periods (an integer index where the frequency has no period
equivalent), forecasting ``fh = 1..h``. An estimator whose allow-list entry names a ``season_param``
(ThetaForecaster's ``sp``) gets the panel's season length (``History.season_length``) there when ``params``
does not set it, so one config serves yearly, quarterly and monthly data alike (a fixed ``sp = 12`` asks a
yearly series for two 12-year cycles). Quantiles come from
``predict_quantiles`` when the estimator has the ``capability:pred_int`` tag; otherwise the engine's
conformal bands are its intervals.

Reference: Löning, M. et al. (2019). sktime: A unified interface for machine learning with time series.
arXiv:1909.07872.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pandas as pd

from tycheon.forecasters.base import Availability, Capabilities, Forecast, Forecaster, History
from tycheon.forecasters.registry import register
from tycheon.forecasters.roster._common import package_availability, period_index, relay_library_warnings
from tycheon.forecasters.roster.baselines import check_history_length
from tycheon.forecasters.roster.sktime_allowlist import (
    SktimeAllowListError,
    allowed_class,
    allowed_estimators,
    check_params,
    season_param,
)

__all__ = ["SktimeAllowListError", "SktimeForecaster", "UnknownSktimeEstimatorError", "sktime_forecaster_names"]


class UnknownSktimeEstimatorError(SktimeAllowListError, LookupError):
    """The name is not an sktime forecaster on the allow-list."""


def sktime_forecaster_names() -> list[str]:
    """Sorted names of the sktime forecasters on the allow-list (``sktime_allowlist.toml``)."""
    return allowed_estimators()


def _resolve(name: str) -> type:
    try:
        return allowed_class(name)
    except SktimeAllowListError as err:
        raise UnknownSktimeEstimatorError(str(err)) from err


@register("sktime", cost="fitted", test_params=[{"estimator": "ThetaForecaster", "params": {"sp": 12}}])
class SktimeForecaster(Forecaster):
    """Adapter: an sktime forecaster named ``estimator`` with constructor ``params``, fitted per series.

    Parameters
    ----------
    estimator : str
        Exact class name on the allow-list, e.g. ``"ThetaForecaster"``, ``"NaiveForecaster"`` (the default).
    params : dict or None
        Keyword arguments for its constructor (e.g. ``{"sp": 12}``), each listed under the estimator.
        Where the allow-list names the estimator's ``season_param`` and ``params`` leaves it out, that
        parameter is the panel's season length.

    Raises
    ------
    UnknownSktimeEstimatorError
        ``estimator`` is not on the allow-list.
    SktimeAllowListError
        A parameter is not listed for the estimator, or its value breaks the listed rule.
    """

    capabilities: ClassVar[Capabilities] = Capabilities(min_obs=2, quantiles=True)

    def __init__(self, *, estimator: str = "NaiveForecaster", params: dict[str, Any] | None = None) -> None:
        if not isinstance(estimator, str) or not estimator:
            raise TypeError(f"estimator must be a non-empty sktime registry name, got {estimator!r}")
        if params is not None and not isinstance(params, dict):
            raise TypeError(f"params must be a dict or None, got {type(params).__name__}")
        if estimator not in allowed_estimators():
            _resolve(estimator)  # raises with the allowed names
        check_params(estimator, params)
        self.estimator = estimator
        self.params = params

    @classmethod
    def availability(cls) -> Availability:
        return package_availability("sktime", install_hint="pip install tycheon[sktime]")

    def estimator_class(self) -> type:
        """The sktime class named by ``estimator`` (raises :class:`UnknownSktimeEstimatorError`)."""
        return _resolve(self.estimator)

    def _predict(
        self,
        history: History,
        *,
        horizon: int,
        quantile_levels: tuple[float, ...],
        n_samples: int,
        rng: np.random.Generator,
    ) -> Forecast:
        check_history_length(self, history)
        cls = self.estimator_class()
        gives_q = bool(quantile_levels) and bool(cls.get_class_tag("capability:pred_int", False))  # type: ignore[attr-defined]
        index = period_index(history.periods, history.freq)
        point = np.empty((history.n_series, horizon))  # [series, horizon]
        quantiles = np.empty((history.n_series, horizon, len(quantile_levels))) if gives_q else None
        kwargs = self.constructor_params(season_length=history.season_length)
        for i in range(history.n_series):
            series = pd.Series(history.series(i), index=index[history.observed[i]])
            p, q = self._forecast_one(
                cls, series, kwargs=kwargs, horizon=horizon, quantile_levels=quantile_levels if gives_q else ()
            )
            point[i] = p
            if quantiles is not None:
                quantiles[i] = q
        if quantiles is None:
            return Forecast(point=point)
        return Forecast(point=point, quantile_levels=quantile_levels, quantiles=quantiles)

    def constructor_params(self, *, season_length: int) -> dict[str, Any]:
        """The estimator's constructor arguments for a panel of this season length: ``params``, plus
        the allow-list's ``season_param`` set to ``season_length`` when ``params`` does not set it."""
        kwargs = dict(self.params or {})
        name = season_param(self.estimator)
        if name is not None and name not in kwargs:
            kwargs[name] = int(season_length)
        return kwargs

    def _forecast_one(
        self,
        cls: type,
        series: pd.Series,
        *,
        kwargs: dict[str, Any],
        horizon: int,
        quantile_levels: tuple[float, ...],
    ) -> tuple[np.ndarray, np.ndarray | None]:
        from sktime.forecasting.base import ForecastingHorizon

        fh = ForecastingHorizon(np.arange(1, horizon + 1), is_relative=True)
        with relay_library_warnings(f"sktime {self.estimator}"):
            model = cls(**kwargs)
            model.fit(series, fh=fh)
            point = np.asarray(model.predict(fh), dtype=np.float64).reshape(horizon)
            if not quantile_levels:
                return point, None
            q = model.predict_quantiles(fh, alpha=list(quantile_levels))  # columns (variable, alpha)
        return point, np.asarray(q, dtype=np.float64).reshape(horizon, len(quantile_levels))
