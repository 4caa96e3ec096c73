"""The forecaster interface: a past-only :class:`History`, a :class:`Forecast`, and :class:`Forecaster`.

A forecaster is built from parameters only (the constructor stores them, scikit-learn style), fitted on a
past-only history and asked for steps ``1..h``. The public :meth:`Forecaster.fit` and
:meth:`Forecaster.predict` check inputs and outputs and time the call; subclasses implement ``_fit`` and
``_predict`` (template method).

Every forecaster works on a *panel slice*: ``History.values`` is ``[series, time]``. Vectorised forecasters
(``capabilities.vectorised``) forecast every series in one array operation; :class:`LocalForecaster`
subclasses implement ``_predict_series`` on one 1-d series and the base loops.
"""

from __future__ import annotations

import inspect
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from tycheon._typing import BoolArray, FloatArray, IntArray, as_generator
from tycheon.errors import TycheonError

__all__ = [
    "Availability",
    "Capabilities",
    "Forecast",
    "FitUpdateForecaster",
    "Forecaster",
    "ForecasterError",
    "History",
    "LocalForecaster",
    "run_start",
]


def run_start(observed: BoolArray, upto: int) -> IntArray:
    """First column of each row's current run in ``[0, upto)``: one past the last unobserved column
    before ``upto`` when the row is observed in column ``upto - 1``, else 0 (nothing is cut from a row
    that has exited; it is not forecast at that origin).

    ``observed`` is ``[series, time]``; the result is ``[series]``. For a row observed contiguously from
    its entry (every series of a panel) this is its first observed column or 0, so masking columns before
    it changes nothing. The engine hands a model the current run of each series at an origin
    (:func:`tycheon.backtest.slices.published_window`); a model with fitted state estimates on the current
    run of its training history, so that both read the same stretch of a series that exited and re-entered.
    """
    obs = np.asarray(observed[:, :upto], dtype=bool)  # [series, upto]
    if upto == 0:
        return np.zeros(len(obs), dtype=np.int64)
    gaps = ~obs[:, ::-1]  # [series, upto] reversed: the first True is the last unobserved column
    has_gap = gaps.any(axis=1)
    last_gap = upto - 1 - np.argmax(gaps, axis=1)
    return np.where(obs[:, -1] & has_gap, last_gap + 1, 0).astype(np.int64)


class ForecasterError(TycheonError, RuntimeError):
    """A forecaster produced an output that breaks the contract (wrong shape, non-finite point)."""


class _LazyFrame:
    """Descriptor behind ``History.attributes``: stores a DataFrame or a zero-argument callable that
    builds it, and calls the callable once, on first access (a dataclass descriptor-typed field)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = f"_{name}"

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:  # the dataclass default: build an empty frame per history, lazily
            return pd.DataFrame
        value = obj.__dict__[self.slot]
        if not isinstance(value, pd.DataFrame):
            value = value()
            if not isinstance(value, pd.DataFrame):
                raise TypeError(f"History.attributes must be a DataFrame, got {type(value).__name__}")
            obj.__dict__[self.slot] = value
        return value

    def __set__(self, obj: Any, value: Any) -> None:
        if not (isinstance(value, pd.DataFrame) or callable(value)):
            raise TypeError(
                f"History.attributes must be a DataFrame or a zero-argument callable returning one, got "
                f"{type(value).__name__}"
            )
        obj.__dict__[self.slot] = value


@dataclass(frozen=True, eq=False)
class History:
    """A past-only panel slice: the only data object a forecaster ever receives.

    The engine builds it as a *copy* of the columns published by ``as_of``; nothing reachable from it
    holds later data (a numpy view would keep the full array alive through ``.base``).

    Attributes
    ----------
    values : ndarray, shape (S, T)
        Observations, ``NaN`` before a series starts (ragged starts). For predict histories the engine
        guarantees every series is observed in the last column.
    observed : ndarray of bool, shape (S, T)
    series_ids : ndarray of str, shape (S,)
    periods : DatetimeIndex, length T
    as_of : Timestamp
        When this history is known (the origin for predict, the fit time for fit).
    available_at : ndarray of datetime64[ns], shape (S, T)
        Publication time of each cell (``NaT`` where unobserved); the guards check it against ``as_of``.
    freq : str
    season_length : int
    attributes : DataFrame
        Static attributes of these series (index ``series_id``), possibly empty. The constructor also
        accepts a zero-argument callable returning that frame: it is called on first access and its
        result kept (the engine hands out histories this way, so a chunk's attribute rows are copied
        only for models that read them).

    ``n_observed()`` and ``first_observed()`` are computed once per history and cached: several models
    receive the same (read-only) history at an origin.
    """

    values: FloatArray  # [series, time]
    observed: BoolArray  # [series, time]
    series_ids: np.ndarray  # [series]
    periods: pd.DatetimeIndex  # [time]
    as_of: pd.Timestamp
    available_at: np.ndarray  # [series, time]
    freq: str
    season_length: int
    attributes: pd.DataFrame = _LazyFrame()  # type: ignore[assignment]

    def __post_init__(self) -> None:
        s, t = self.values.shape
        if self.observed.shape != (s, t) or self.available_at.shape != (s, t):
            raise ValueError(
                f"History arrays must share the shape [series, time] = {(s, t)}: observed has "
                f"{self.observed.shape}, available_at has {self.available_at.shape}"
            )
        if len(self.series_ids) != s or len(self.periods) != t:
            raise ValueError(
                f"History labels must match the [series, time] shape {(s, t)}: {len(self.series_ids)} "
                f"series ids, {len(self.periods)} periods"
            )

    @property
    def n_series(self) -> int:
        return self.values.shape[0]

    @property
    def n_periods(self) -> int:
        return self.values.shape[1]

    def n_observed(self) -> IntArray:
        """Observed cells per series ``[series]`` (cached; treat as read-only)."""
        cached = self.__dict__.get("_n_observed")
        if cached is None:
            cached = self.observed.sum(axis=1)
            cached.flags.writeable = False
            self.__dict__["_n_observed"] = cached
        return cached

    def first_observed(self) -> IntArray:
        """Column of each series' first observation ``[series]`` (cached; treat as read-only).

        Raises ``ValueError`` when a series has interior gaps or no observation (see
        :func:`tycheon.forecasters.kernels.baselines.first_observed`).
        """
        cached = self.__dict__.get("_first_observed")
        if cached is None:
            from tycheon.forecasters.kernels.baselines import first_observed

            cached = first_observed(self.observed)
            cached.flags.writeable = False
            self.__dict__["_first_observed"] = cached
        return cached

    def series(self, i: int) -> FloatArray:
        """The observed values of series ``i`` (a contiguous 1-d array, ragged start removed)."""
        return self.values[i][self.observed[i]]


@dataclass(frozen=True, eq=False)
class Forecast:
    """Forecasts for steps ``1..h`` of ``S`` series.

    Attributes
    ----------
    point : ndarray, shape (S, h)
    quantile_levels : tuple of float
        Levels in (0, 1), increasing; empty when the forecaster gives none.
    quantiles : ndarray, shape (S, h, Q), optional
    samples : ndarray, shape (S, h, N), optional
        Sample paths (joint over steps within a series).
    """

    point: FloatArray  # [series, horizon]
    quantile_levels: tuple[float, ...] = ()
    quantiles: FloatArray | None = None  # [series, horizon, level]
    samples: FloatArray | None = None  # [series, horizon, sample]

    def validate(self, *, n_series: int, horizon: int, owner: str) -> None:
        """Check shapes and finiteness; raise :class:`ForecasterError` naming the forecaster."""
        if self.point.shape != (n_series, horizon):
            raise ForecasterError(
                f"{owner}: point forecast has shape {self.point.shape}, expected {(n_series, horizon)}"
            )
        if not np.isfinite(self.point).all():
            bad = int((~np.isfinite(self.point)).sum())
            raise ForecasterError(f"{owner}: {bad} non-finite point forecast value(s)")
        if self.quantiles is not None:
            expected = (n_series, horizon, len(self.quantile_levels))
            if self.quantiles.shape != expected:
                raise ForecasterError(f"{owner}: quantiles have shape {self.quantiles.shape}, expected {expected}")
            if not np.isfinite(self.quantiles).all():
                bad = int((~np.isfinite(self.quantiles)).sum())
                raise ForecasterError(f"{owner}: {bad} non-finite quantile value(s)")
            crossed = np.diff(self.quantiles, axis=2) < 0  # [series, horizon, level pair]
            if crossed.any():
                i, h, j = (int(x) for x in np.argwhere(crossed)[0])
                raise ForecasterError(
                    f"{owner}: quantiles cross in {int(crossed.sum())} place(s), first at series {i}, step "
                    f"{h + 1}: q{self.quantile_levels[j]:g} > q{self.quantile_levels[j + 1]:g}; quantiles must "
                    "not decrease as their level increases"
                )
        if self.samples is not None:
            if self.samples.ndim != 3 or self.samples.shape[:2] != (n_series, horizon):
                raise ForecasterError(
                    f"{owner}: samples have shape {self.samples.shape}, expected ({n_series}, {horizon}, N)"
                )
            if not np.isfinite(self.samples).all():
                bad = int((~np.isfinite(self.samples)).sum())
                raise ForecasterError(f"{owner}: {bad} non-finite sample value(s)")


@dataclass(frozen=True)
class Availability:
    """Whether a forecaster can run here; ``reason`` says precisely why not (package missing, weights
    that need a download, no network). Unavailable models are listed as skipped, never faked."""

    ok: bool
    reason: str = ""


@dataclass(frozen=True)
class Capabilities:
    """What a forecaster needs and gives.

    Attributes
    ----------
    min_obs : int
        Fewest observations a series needs (the engine abstains below ``max(min_obs, min_history)``);
        :meth:`Forecaster.min_history` may raise it with the season length.
    is_global : bool
        Learns across series (refit at every origin on data strictly before it).
    vectorised : bool
        Forecasts every series of a panel slice in one array operation.
    quantiles, samples : bool
        Gives its own quantiles / sample paths (otherwise the engine's conformal bands are its intervals).
    """

    min_obs: int = 1
    is_global: bool = False
    vectorised: bool = False
    quantiles: bool = False
    samples: bool = False


class Forecaster(ABC):
    """Base class: constructor stores parameters; ``fit``/``predict`` wrap ``_fit``/``_predict``.

    Subclasses declare ``capabilities`` and keyword-only ``__init__`` parameters that they store
    unchanged under the same names (so :meth:`get_params` and :meth:`clone` round-trip a config).
    """

    capabilities: ClassVar[Capabilities] = Capabilities()
    forecaster_id: ClassVar[str] = ""

    def __init__(self) -> None:  # noqa: B027 - parameters only; subclasses store theirs
        pass

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [
            p.name
            for p in sig.parameters.values()
            if p.name != "self" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]

    def get_params(self) -> dict[str, Any]:
        """The constructor parameters, read back from the attributes of the same names."""
        return {name: getattr(self, name) for name in self._param_names()}

    def clone(self) -> Forecaster:
        """A new, unfitted forecaster with the same parameters."""
        return type(self)(**self.get_params())

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"

    @classmethod
    def availability(cls) -> Availability:
        """Can this forecaster run in this environment? Override to check optional packages/weights."""
        return Availability(ok=True)

    def min_history(self, season_length: int) -> int:
        """Fewest observations needed for a series with this season length (default: ``min_obs``)."""
        return self.capabilities.min_obs

    def fit(self, history: History) -> Forecaster:
        """Fit on a past-only history (a no-op for most local forecasters) and return ``self``."""
        start = time.perf_counter()
        self._fit(history)
        self.fit_seconds_ = time.perf_counter() - start
        self.fitted_as_of_ = history.as_of
        return self

    def predict(
        self,
        history: History,
        *,
        horizon: int,
        quantile_levels: Sequence[float] = (),
        n_samples: int = 0,
        seed: int | np.random.Generator | None = None,
    ) -> Forecast:
        """Forecast steps ``1..horizon`` for every series of ``history``.

        Parameters
        ----------
        history : History
            Data published by the origin only.
        horizon : int
            Number of steps, >= 1.
        quantile_levels : sequence of float
            Requested levels in (0, 1); forecasters without quantiles ignore them.
        n_samples : int
            Requested sample paths (0 for none); forecasters without samples ignore it.
        seed : int, Generator or None
            Randomness for sampling; nothing reads global RNG state.
        """
        if horizon < 1:
            raise ValueError(f"horizon must be >= 1, got {horizon}")
        levels = tuple(float(q) for q in quantile_levels)
        if any(not 0.0 < q < 1.0 for q in levels) or list(levels) != sorted(set(levels)):
            raise ValueError(f"quantile levels must be strictly increasing in (0, 1), got {levels}")
        start = time.perf_counter()
        forecast = self._predict(
            history, horizon=horizon, quantile_levels=levels, n_samples=n_samples, rng=as_generator(seed)
        )
        self.predict_seconds_ = time.perf_counter() - start
        forecast.validate(n_series=history.n_series, horizon=horizon, owner=type(self).__name__)
        return forecast

    def _fit(self, history: History) -> None:  # noqa: B027 - a hook with a do-nothing default
        """Hook: learn from ``history`` (default: nothing to learn)."""

    @abstractmethod
    def _predict(
        self,
        history: History,
        *,
        horizon: int,
        quantile_levels: tuple[float, ...],
        n_samples: int,
        rng: np.random.Generator,
    ) -> Forecast:
        """Hook: forecast every series of ``history``."""


class LocalForecaster(Forecaster):
    """A forecaster that models each series on its own; subclasses implement ``_predict_series``."""

    @abstractmethod
    def _predict_series(
        self,
        y: FloatArray,
        *,
        horizon: int,
        season_length: int,
        quantile_levels: tuple[float, ...],
        rng: np.random.Generator,
    ) -> tuple[FloatArray, FloatArray | None]:
        """Forecast one series: return ``point[h]`` and ``quantiles[h, Q]`` (or None)."""

    def _predict(
        self,
        history: History,
        *,
        horizon: int,
        quantile_levels: tuple[float, ...],
        n_samples: int,
        rng: np.random.Generator,
    ) -> Forecast:
        n = history.n_series
        point = np.full((n, horizon), np.nan)
        quantiles = np.full((n, horizon, len(quantile_levels)), np.nan) if quantile_levels else None
        with_q = np.zeros(n, dtype=bool)
        for i in range(n):
            p, q = self._forecast_series(history, i, horizon=horizon, quantile_levels=quantile_levels, rng=rng)
            point[i] = p
            if q is not None and quantiles is not None:
                quantiles[i] = q
                with_q[i] = True
        if not with_q.any():
            return Forecast(point=point)
        if not with_q.all():
            # A forecast's quantiles describe every series or none; a partial set would leave rows that
            # look like quantiles but are not.
            missing = history.series_ids[~with_q][:5].tolist()
            raise ForecasterError(
                f"{type(self).__name__}: quantiles for {int(with_q.sum())} of {n} series only; none for e.g. {missing}"
            )
        return Forecast(point=point, quantile_levels=quantile_levels, quantiles=quantiles)

    def _forecast_series(
        self,
        history: History,
        i: int,
        *,
        horizon: int,
        quantile_levels: tuple[float, ...],
        rng: np.random.Generator,
    ) -> tuple[FloatArray, FloatArray | None]:
        """Forecast series ``i`` of ``history`` (default: :meth:`_predict_series` on its observed values)."""
        return self._predict_series(
            history.series(i),
            horizon=horizon,
            season_length=history.season_length,
            quantile_levels=quantile_levels,
            rng=rng,
        )


class FitUpdateForecaster(LocalForecaster):
    """A local forecaster with estimated parameters, fitted and *updated* separately.

    ``fit`` estimates each series' parameters on the training history (:meth:`_estimate`, e.g. ETS's
    smoothing weights and initial states, ARIMA's coefficients); ``predict`` keeps them and advances the
    series' state with the history published by the origin (:meth:`_update`: the model's filter run over
    the longer series with the parameters fixed). Where the predict history of a series is the training
    history itself (a refit at this origin with no embargo), the fitted model forecasts directly, which
    is exactly what estimating at the origin gives. A series the fit did not see (too short, or new) is
    estimated on its predict history at its first origin and keeps those parameters until the next fit.
    A forecaster never fitted estimates on every history it is given and keeps nothing.

    So a refit at every origin (the rolling protocol) estimates on the data published by each origin
    (less the embargo), a static split or a refit calendar keeps the parameters of the last refit, and
    the guards cover both paths: the training history passes guards 2 and 3 at ``fit``, the predict
    history guard 1 at every ``predict`` (:mod:`tycheon.backtest.guards`).

    The estimate of a training series is made when the series is first forecast, from its training
    values (``training_``), so a series the engine never forecasts from this fit (it exited, or is below
    the model's minimum at every origin the fit serves) costs nothing; the parameters are the same as
    estimating at ``fit``.

    Subclasses implement :meth:`_estimate` and :meth:`_update`; ``fitted_`` maps a series id to its
    estimated state and the values it was estimated on.
    """

    def _fit(self, history: History) -> None:
        need = self.min_history(history.season_length)
        self.training_: dict[Any, FloatArray] = {}
        self.fitted_: dict[Any, tuple[Any, FloatArray]] = {}
        since = run_start(history.observed, history.n_periods)  # the current run, as a predict history has it
        for i, sid in enumerate(history.series_ids):
            y = history.values[i, since[i] :][history.observed[i, since[i] :]]
            if len(y) >= need:
                self.training_[sid] = y

    def _forecast_series(self, history, i, *, horizon, quantile_levels, rng):
        sid = history.series_ids[i]
        y = history.series(i)
        fitted = getattr(self, "fitted_", None)
        known = None if fitted is None else fitted.get(sid)
        if known is None:
            # estimated on its training values; never fitted: on this history, kept nowhere; not seen at fit:
            # on its predict history at its first origin, kept until the next fit
            trained_on = y if fitted is None else self.training_.pop(sid, y)
            known = (self._estimate(trained_on, season_length=history.season_length), trained_on)
            if fitted is not None:
                fitted[sid] = known
        state, trained_on = known
        same = len(trained_on) == len(y) and np.array_equal(trained_on, y)
        return self._update(
            state,
            y,
            same=same,
            horizon=horizon,
            season_length=history.season_length,
            quantile_levels=quantile_levels,
            rng=rng,
        )

    def _predict_series(self, y, *, horizon, season_length, quantile_levels, rng):
        state = self._estimate(y, season_length=season_length)
        return self._update(
            state, y, same=True, horizon=horizon, season_length=season_length, quantile_levels=quantile_levels, rng=rng
        )

    @abstractmethod
    def _estimate(self, y: FloatArray, *, season_length: int) -> Any:
        """Estimate the parameters (and initial state) of one series; returns the fitted state."""

    @abstractmethod
    def _update(
        self,
        state: Any,
        y: FloatArray,
        *,
        same: bool,
        horizon: int,
        season_length: int,
        quantile_levels: tuple[float, ...],
        rng: np.random.Generator,
    ) -> tuple[FloatArray, FloatArray | None]:
        """Forecast from ``state`` after running it over ``y`` with its parameters fixed (``same``: ``y``
        is the series it was estimated on); returns ``point[h]`` and ``quantiles[h, Q]`` (or None)."""
