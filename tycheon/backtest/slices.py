"""Past-only slices: the histories the engine hands to forecasters, and who is eligible at an origin.

Every :class:`~tycheon.forecasters.base.History` built here holds *copies* of the sliced arrays, masked to
the cells published by its ``as_of``; no numpy view whose ``.base`` reaches later columns escapes. The
arrays are read-only: the engine hands one history to every model of a chunk at an origin, and a model
that wrote into it would change what the next model sees (it gets a ``ValueError`` instead, recorded
as its failure).

Eligibility at an origin ``i`` (the abstention rule of the evaluation-choices paper, section 2: a series
without enough history is not forecast, and it is counted, never imputed). A row's history at an origin is
its **current run**: the observed cells from its latest entry up to ``i - 1``. A series of a panel is
observed contiguously from entry to exit, so its run is all of its history; an aggregate (a group of
series, :mod:`.units`) is unobserved where none of its members is, so it can exit and re-enter, and a
re-entry starts a new run exactly as a late-entering series starts its history. A row is forecast only
when, on the cells of its run published by the origin,

- it has at least ``min_history`` observations in ``[0, i)`` (else reason ``too_short``);
- none of its observed history cells is still unpublished at the origin (else ``unpublished``: masking
  them would leave a gap inside the series);
- it is observed in the last history column ``i - 1`` (else ``not_observed_at_origin``: it exited);
- at least one of its targets ``i..i+h-1`` is observed (else ``no_target``: nothing to score).

The first reason that applies is the one counted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numba import njit

from tycheon._typing import BoolArray, FloatArray, IntArray
from tycheon.forecasters.base import History, run_start

__all__ = [
    "ABSTENTION_REASONS",
    "UnitData",
    "eligibility",
    "fit_history",
    "predict_history",
    "published_window",
    "run_start",
]

ABSTENTION_REASONS = ("too_short", "unpublished", "not_observed_at_origin", "no_target")


@dataclass(frozen=True, eq=False)
class UnitData:
    """The dense arrays of one unit of analysis (the panel itself, or summed aggregates of it).

    Attributes
    ----------
    unit : str
        The unit name (``series``, ``total``, ``level:<attr>``, ``groups:<k>``, ``groups_random:<k>``).
    values, observed, available_at : ndarray, shape (S, T)
    series_ids : ndarray of str, shape (S,)
    periods : DatetimeIndex, length T
    attributes : DataFrame
        Static attributes indexed by series id (empty columns for aggregates).
    weight : ndarray, shape (S,)
        Size known before the first origin (see :mod:`tycheon.backtest.units`).
    freq : str
    season_length : int
    """

    unit: str
    values: FloatArray  # [series, time]
    observed: BoolArray  # [series, time]
    available_at: np.ndarray  # [series, time] datetime64[ns]
    series_ids: np.ndarray  # [series]
    periods: pd.DatetimeIndex  # [time]
    freq: str
    season_length: int
    weight: FloatArray  # [series]
    attributes: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def n_series(self) -> int:
        return len(self.series_ids)

    def chunk(self, start: int, stop: int) -> UnitData:
        """The same unit restricted to series ``[start, stop)``: views of its arrays, no copy.

        A task of the engine holds its chunk this way, so that a run in process does not hold the unit
        twice (about 34 MB of values, mask and publication times at 30,490 series x 67 periods); a task
        sent to a worker is pickled with its views' own elements only, as a copy would be."""
        rows = slice(int(start), int(stop))
        attrs = self.attributes.iloc[rows] if len(self.attributes) else self.attributes
        return UnitData(
            self.unit,
            self.values[rows],
            self.observed[rows],
            self.available_at[rows],
            self.series_ids[rows],
            self.periods,
            self.freq,
            self.season_length,
            self.weight[rows],
            attrs,
        )

    def take(self, rows: IntArray) -> UnitData:
        """The same unit restricted to some series (copies; used to ship a chunk to a worker)."""
        rows = np.asarray(rows, dtype=np.int64)
        attrs = self.attributes.iloc[rows] if len(self.attributes) else self.attributes
        return UnitData(
            self.unit,
            self.values[rows].copy(),
            self.observed[rows].copy(),
            self.available_at[rows].copy(),
            self.series_ids[rows].copy(),
            self.periods,
            self.freq,
            self.season_length,
            self.weight[rows].copy(),
            attrs.copy(),
        )


def _published(data: UnitData, upto: int, when: pd.Timestamp) -> BoolArray:
    """Cells of columns ``[0, upto)`` that are observed and published by ``when``."""  # [series, upto]
    stamp = pd.Timestamp(when).to_datetime64().astype("datetime64[ns]")
    return data.observed[:, :upto] & (data.available_at[:, :upto] <= stamp)


@njit(cache=True)
def _window_kernel(
    values,
    observed,
    available_ns,
    rows,
    since,
    stamp,  # pragma: no cover
    out_values,
    out_pub,
    out_avail,
):
    """Fill the output arrays with columns ``[0, upto)`` of ``rows``, masked to the cells observed and
    published by ``stamp`` in columns ``>= since[i]``: one pass (a plain loop compiled by numba; NaT never
    counts as published, as in numpy's datetime comparison)."""
    nat = np.iinfo(np.int64).min
    n, upto = out_values.shape
    for i in range(n):
        r = rows[i]
        for t in range(upto):
            a = available_ns[r, t]
            p = t >= since[i] and observed[r, t] and a != nat and a <= stamp
            out_pub[i, t] = p
            out_values[i, t] = values[r, t] if p else np.nan
            out_avail[i, t] = a if p else nat


def published_window(
    data: UnitData, rows: IntArray, upto: int, when: pd.Timestamp, *, current_run: bool = False
) -> tuple[FloatArray, BoolArray, np.ndarray]:
    """Values, published mask and ``available_at`` of columns ``[0, upto)`` of ``rows``, masked to the
    cells observed and published by ``when`` (``NaN``/``NaT`` elsewhere): fresh numpy-owned arrays, no
    views of the unit's data. With ``current_run`` only each row's current run (:func:`run_start`) is
    kept: the history of a row at an origin (identical for rows without a re-entry)."""
    rows = np.asarray(rows, dtype=np.int64)
    shape = (len(rows), int(upto))
    values, pub = np.empty(shape), np.empty(shape, dtype=bool)
    avail = np.empty(shape, dtype="datetime64[ns]")
    stamp = pd.Timestamp(when).to_datetime64().astype("datetime64[ns]").astype(np.int64)
    since = run_start(data.observed[rows], int(upto)) if current_run else np.zeros(len(rows), dtype=np.int64)
    _window_kernel(
        data.values,
        data.observed,
        data.available_at.view(np.int64),
        rows,
        since,
        int(stamp),
        values,
        pub,
        avail.view(np.int64),
    )
    return values, pub, avail


def _history(data: UnitData, rows: IntArray, upto: int, when: pd.Timestamp, *, current_run: bool = False) -> History:
    values, pub, avail = published_window(data, rows, upto, when, current_run=current_run)  # rows handed out only
    ids = data.series_ids[rows]  # fancy indexing: a copy
    for array in (values, pub, avail, ids):
        array.flags.writeable = False
    return History(
        values=values,
        observed=pub,
        series_ids=ids,
        periods=_periods_upto(data, upto),
        as_of=pd.Timestamp(when),
        available_at=avail,
        freq=data.freq,
        season_length=data.season_length,
        attributes=_attribute_rows(data, rows, ids),  # type: ignore[arg-type]  # built on first read (_LazyFrame)
    )


def _periods_upto(data: UnitData, upto: int) -> pd.DatetimeIndex:
    """``data.periods[:upto]`` as its own copy (a view would reach later periods through ``.base``),
    built once per ``upto`` and shared: a DatetimeIndex is immutable."""
    cache = data.__dict__.setdefault("_periods_upto", {})
    if upto not in cache:
        cache[upto] = pd.DatetimeIndex(data.periods[:upto].to_numpy(copy=True))
    return cache[upto]


def _attribute_rows(data: UnitData, rows: IntArray, ids: np.ndarray) -> Callable[[], pd.DataFrame]:
    """The history's attribute frame, built (a copy of ``rows``) only when a model reads it."""
    attributes = data.attributes
    if len(attributes.columns):
        rows = rows.copy()
        return lambda: attributes.take(rows)  # take(): a copy without the label-based .iloc machinery
    return lambda: pd.DataFrame(index=pd.Index(ids, name="series_id"))


def predict_history(data: UnitData, rows: IntArray, *, index: int, origin: pd.Timestamp) -> History:
    """History of ``rows`` at an origin: the current run's cells of columns ``[0, index)`` published by
    ``origin``, ``as_of=origin``."""
    return _history(data, np.asarray(rows, dtype=np.int64), index, origin, current_run=True)


def fit_history(data: UnitData, *, fit_end: int, fit_time: pd.Timestamp) -> History:
    """Training history: columns ``[0, fit_end)`` published by ``fit_time``, series with any such cell."""
    rows = np.flatnonzero(_published(data, fit_end, fit_time).any(axis=1))  # [series, fit_end] -> rows
    return _history(data, rows, fit_end, fit_time, current_run=False)


@njit(cache=True)
def _eligibility_kernel(
    observed, available_ns, index, stamp, horizon, min_obs, eligible, n_obs, reason
):  # pragma: no cover
    """One pass per series (a plain loop compiled by numba) of :func:`eligibility`'s rules: the current
    run (:func:`run_start`), its published cells (NaT never published, as in numpy's comparison), then
    the first reason that applies, in the order of :data:`ABSTENTION_REASONS` (``reason`` -1: eligible)."""
    nat = np.iinfo(np.int64).min
    n_series, n_time = observed.shape
    for i in range(n_series):
        since = 0
        if observed[i, index - 1]:  # the run ends at the origin: it starts after the last gap before it
            for t in range(index - 2, -1, -1):
                if not observed[i, t]:
                    since = t + 1
                    break
        count = 0
        unpublished = False
        last_published = False
        for t in range(since, index):
            published = False
            if observed[i, t]:
                a = available_ns[i, t]
                published = a != nat and a <= stamp
                if published:
                    count += 1
                else:
                    unpublished = True
            last_published = published
        n_obs[i] = count
        target = False
        for t in range(index, min(index + horizon, n_time)):
            if observed[i, t]:
                target = True
                break
        if count < min_obs:
            reason[i] = 0
        elif unpublished:
            reason[i] = 1
        elif not last_published:
            reason[i] = 2
        elif not target:
            reason[i] = 3
        else:
            reason[i] = -1
        eligible[i] = reason[i] == -1


def eligibility(
    data: UnitData, *, index: int, origin: pd.Timestamp, horizon: int, min_history: int
) -> tuple[BoolArray, dict[str, int], IntArray]:
    """Which series are forecast at an origin, abstention counts by reason, and published history length.

    A series abstains, for the first of these reasons (:data:`ABSTENTION_REASONS`): its current run
    (:func:`run_start`) has fewer than ``max(min_history, 1)`` cells published by ``origin``
    (``too_short``); a cell of that run before ``index`` is observed but not yet published
    (``unpublished``); the cell just before the origin is not published (``not_observed_at_origin``); no
    target in ``[index, index + horizon)`` is observed (``no_target``).

    Returns
    -------
    eligible : ndarray of bool, shape (S,)
    abstained : dict
        Count per reason in :data:`ABSTENTION_REASONS` (each abstained series counted once).
    n_obs : ndarray of int, shape (S,)
        Published observations of the current run in ``[0, index)`` (the length a model's own
        ``min_history`` is checked on).
    """
    if index < 1:
        raise ValueError(f"an origin needs at least one period before it, got index {index}")
    n = data.n_series
    eligible = np.empty(n, dtype=bool)
    n_obs = np.empty(n, dtype=np.int64)
    reason = np.empty(n, dtype=np.int8)
    stamp = pd.Timestamp(origin).to_datetime64().astype("datetime64[ns]").astype(np.int64)
    _eligibility_kernel(
        np.asarray(data.observed, dtype=bool),
        data.available_at.view(np.int64),
        int(index),
        int(stamp),
        int(horizon),
        max(int(min_history), 1),
        eligible,
        n_obs,
        reason,
    )
    tally = np.bincount(reason[reason >= 0], minlength=len(ABSTENTION_REASONS))
    counts = {name: int(tally[k]) for k, name in enumerate(ABSTENTION_REASONS)}
    return eligible, counts, n_obs
