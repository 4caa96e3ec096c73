"""A global LightGBM model on lag and calendar features, trained across the panel at every origin.

One gradient-boosted regressor is trained on rows pooled from every series of the *fit* history (the
engine refits it at every origin on data strictly before the origin, ``capabilities.is_global``). A row
is a target cell ``y[s, t]`` with features computed only from columns ``< t`` of the same series:

- lags :math:`y_{t-1}, \\dots, y_{t-L}` with :math:`L = m + 1` by default (``NaN`` before the series
  starts; LightGBM routes missing values natively),
- rolling means of the last 3 and the last :math:`m` lags,
- the season position of period ``t`` (month of year for monthly data; for a frequency with no pandas
  period equivalent, such as ``"2MS"``, the column index modulo :math:`m`, counted from the first
  period of the history, which is the same column for the fit and the predict histories of a backtest).

Lags and target are divided by the row's scale (mean absolute value of its observed lags, 1 when that
is 0), so that series of very different size share one model; forecasts are multiplied back.
Multi-step forecasts are **recursive**: step 1 is predicted, appended to the lags, and so on to ``h``.
Rows need an observed target and an observed first lag; every row lies entirely inside the fit history.
Each tree is grown on a random ``subsample`` of the rows (LightGBM ``bagging_fraction``, redrawn every
iteration) and a random ``colsample`` of the features (``feature_fraction``), both 0.8 by default
(stochastic gradient boosting, Friedman 2002). The seed (LightGBM ``random_state``) draws those
subsets, so different seeds give different forecasts, while ``deterministic=True`` and one thread make
a given seed reproduce its forecasts bit for bit. With ``subsample=1`` and ``colsample=1`` nothing is
drawn and the seed has no effect.

References: Ke, G. et al. (2017). LightGBM: a highly efficient gradient boosting decision tree.
NeurIPS 30; Friedman, J. H. (2002). Stochastic gradient boosting. CSDA 38(4), 367-378;
Januschowski, T. et al. (2022). Forecasting with trees. IJF 38(4).
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from tycheon._typing import FloatArray
from tycheon.errors import TycheonError
from tycheon.forecasters.base import Availability, Capabilities, Forecast, Forecaster, History
from tycheon.forecasters.registry import register
from tycheon.forecasters.roster._common import check_unit_interval, package_availability, period_index

__all__ = ["LightGbmGlobalForecaster", "NotFittedError"]


class NotFittedError(TycheonError, RuntimeError):
    """``predict`` was called before ``fit`` (or with a history older than the fit)."""


def _season_position(periods: pd.DatetimeIndex, freq: str, season: int) -> np.ndarray:
    index = period_index(periods, freq)
    ordinal = index.asi8 if isinstance(index, pd.PeriodIndex) else index.to_numpy()
    return np.mod(ordinal, max(season, 1)).astype(np.float64)  # [time]


def _features(lags: FloatArray, position: FloatArray, season: int) -> tuple[FloatArray, FloatArray]:
    """Scaled feature matrix and row scales from ``lags`` ``[rows, L]`` (lag 1 first)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        scale = np.nanmean(np.abs(lags), axis=1)
    scale = np.where(np.isfinite(scale) & (scale > 0), scale, 1.0)  # [rows]
    z = lags / scale[:, None]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN lag windows give NaN, on purpose
        roll3 = np.nanmean(z[:, :3], axis=1)
        roll_m = np.nanmean(z[:, :season], axis=1)
    x = np.column_stack([z, roll3, roll_m, position])
    return x, scale


@register(
    "lightgbm_global", cost="global", test_params=[{"n_lags": 3, "n_estimators": 50, "subsample": 1.0, "seed": 5}]
)
class LightGbmGlobalForecaster(Forecaster):
    """Global LightGBM on lags, rolling means and season position; recursive multi-step (see module doc).

    Parameters
    ----------
    n_lags : int or None
        Number of lags ``L`` (default ``season_length + 1``).
    n_estimators, learning_rate, num_leaves, min_child_samples : LightGBM settings
        Defaults 200, 0.05, 15, 10.
    subsample : float
        Share of the training rows each tree sees, in (0, 1] (LightGBM ``bagging_fraction`` with
        ``bagging_freq=1``; default 0.8).
    colsample : float
        Share of the features each tree sees, in (0, 1] (LightGBM ``feature_fraction``; default 0.8).
    seed : int
        LightGBM's ``random_state`` (default 0): it draws the row and feature subsets, so it only matters
        when ``subsample`` or ``colsample`` is below 1.
    """

    capabilities: ClassVar[Capabilities] = Capabilities(min_obs=1, is_global=True)

    def __init__(
        self,
        *,
        n_lags: int | None = None,
        n_estimators: int = 200,
        learning_rate: float = 0.05,
        num_leaves: int = 15,
        min_child_samples: int = 10,
        subsample: float = 0.8,
        colsample: float = 0.8,
        seed: int = 0,
    ) -> None:
        if n_lags is not None and (isinstance(n_lags, bool) or not isinstance(n_lags, int) or n_lags < 1):
            raise ValueError(f"n_lags must be a positive integer or None, got {n_lags!r}")
        check_unit_interval("subsample", subsample)
        check_unit_interval("colsample", colsample)
        self.n_lags = n_lags
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.min_child_samples = min_child_samples
        self.subsample = subsample
        self.colsample = colsample
        self.seed = seed

    @classmethod
    def availability(cls) -> Availability:
        return package_availability("lightgbm", install_hint="pip install tycheon[ml]")

    def _lags(self, season: int) -> int:
        return self.n_lags if self.n_lags is not None else season + 1

    def _fit(self, history: History) -> None:
        import lightgbm as lgb

        season = history.season_length
        n_lags = self._lags(season)
        y = np.where(history.observed, history.values, np.nan)  # [series, time]
        s, t = y.shape
        padded = np.concatenate([np.full((s, n_lags), np.nan), y], axis=1)
        # lag j of target column c is padded[:, n_lags + c - j]
        lag_cols = np.stack([padded[:, n_lags - j : n_lags - j + t] for j in range(1, n_lags + 1)], axis=2)
        keep = np.isfinite(y) & np.isfinite(lag_cols[:, :, 0])  # [series, time]
        if keep.sum() < 2 * self.min_child_samples:
            raise ValueError(
                f"lightgbm_global needs at least {2 * self.min_child_samples} training rows (observed target "
                f"with an observed previous value); the fit history has {int(keep.sum())}"
            )
        position = np.broadcast_to(_season_position(history.periods, history.freq, season), (s, t))
        x, scale = _features(lag_cols[keep], position[keep], season)
        target = y[keep] / scale
        params: dict[str, Any] = dict(
            objective="regression",
            n_estimators=self.n_estimators,
            learning_rate=self.learning_rate,
            num_leaves=self.num_leaves,
            min_child_samples=self.min_child_samples,
            subsample=float(self.subsample),
            subsample_freq=1,
            colsample_bytree=float(self.colsample),
            random_state=self.seed,
            deterministic=True,
            force_row_wise=True,
            n_jobs=1,
            verbose=-1,
        )
        self.model_ = lgb.LGBMRegressor(**params).fit(x, target)
        self.n_train_rows_ = int(keep.sum())

    def _predict(
        self,
        history: History,
        *,
        horizon: int,
        quantile_levels: tuple[float, ...],
        n_samples: int,
        rng: np.random.Generator,
    ) -> Forecast:
        model = getattr(self, "model_", None)
        if model is None:
            raise NotFittedError("lightgbm_global must be fit on the history before the origin; call fit first")
        if history.as_of < self.fitted_as_of_:
            raise NotFittedError(
                f"lightgbm_global was fit as of {self.fitted_as_of_} but asked to predict as of {history.as_of}"
            )
        season = history.season_length
        n_lags = self._lags(season)
        y = np.where(history.observed, history.values, np.nan)
        s = y.shape[0]
        window = np.full((s, n_lags), np.nan)  # lag 1 first
        tail = y[:, ::-1][:, :n_lags]
        window[:, : tail.shape[1]] = tail
        offset = pd.tseries.frequencies.to_offset(history.freq)
        future = pd.date_range(history.periods[-1], periods=horizon + 1, freq=offset)[1:]
        # positions of history and future together: where the frequency has no period equivalent the
        # position is counted from the first history period, as in _fit, not restarted at the origin
        positions = _season_position(pd.DatetimeIndex(history.periods.append(future)), history.freq, season)[-horizon:]
        point = np.empty((s, horizon))  # [series, horizon]
        for step in range(horizon):
            x, scale = _features(window, np.full(s, positions[step]), season)
            point[:, step] = model.predict(x) * scale
            window = np.concatenate([point[:, step : step + 1], window[:, :-1]], axis=1)
        return Forecast(point=point)
