"""Leakage guards at the three points of ADR-0006 decision 3.

1. **Predict**: the history handed to ``predict`` is known at the origin: ``history.as_of`` equals the
   origin timestamp and every observed cell has ``available_at <= origin``.
2. **Fit**: every observed cell of a training history has ``available_at <= fit time`` (its ``as_of``).
3. **Embargo**: a training history ends at least ``embargo`` periods before the first origin it serves:
   its last period is earlier than ``periods[origin - embargo]``.

The convention is ``available_at <= origin``: a value published exactly at the origin is usable (a strict
``<`` would wrongly discard the last period under the default period-end publication time). A violation
raises :class:`LookaheadError`; the engine never catches it. Every check is counted in a
:class:`GuardCounter` whose totals end up in ``ScoreSet.meta["guard_checks"]``.

The guards see only what is handed to a forecaster. A forecaster that reaches data by another route
(a module-level reference, the call stack) bypasses them; the poisoning canary
(:mod:`tycheon.testing.canary`) is the defence against that.

The engine hands one read-only history to every model of a chunk at an origin, so the cell scan of
guards 1 and 2 (a pass over ``[series, time]``) is done once per (history, time) and remembered on the
history; every hand-over still runs the check and is counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tycheon.errors import TycheonError
from tycheon.forecasters.base import Forecast, Forecaster, History

__all__ = ["GuardCounter", "GuardedForecaster", "LookaheadError", "check_embargo", "check_fit", "check_predict"]


class LookaheadError(TycheonError, RuntimeError):
    """A forecaster was about to see data not published at the time it is used."""


@dataclass
class GuardCounter:
    """How many times each guard ran (and passed)."""

    predict: int = 0
    fit: int = 0
    embargo: int = 0

    def add(self, other: GuardCounter) -> None:
        self.predict += other.predict
        self.fit += other.fit
        self.embargo += other.embargo

    def as_dict(self) -> dict[str, int]:
        return {"predict": self.predict, "fit": self.fit, "embargo": self.embargo}


def _late_cells(history: History, when: pd.Timestamp) -> tuple[int, str]:
    # NaT compares False, so unobserved (NaT) cells are never late; the example is built only on failure
    stamp = pd.Timestamp(when).to_datetime64().astype("datetime64[ns]")
    clean = history.__dict__.setdefault("_guard_clean_at", set())  # times this history passed at
    if stamp in clean:
        return 0, ""
    n_late = int(np.count_nonzero(history.observed & (history.available_at > stamp)))
    if not n_late:
        clean.add(stamp)
        return 0, ""
    avail = history.available_at[history.observed]
    late = avail > stamp
    s, t = np.nonzero(history.observed)
    k = int(np.argmax(late))
    example = (
        f"series {history.series_ids[s[k]]!r} period {history.periods[t[k]].date()} published {pd.Timestamp(avail[k])}"
    )
    return n_late, example


def check_predict(history: History, *, origin: pd.Timestamp, counter: GuardCounter, model: str = "") -> None:
    """Guard 1: ``history.as_of == origin`` and every observed ``available_at <= origin``."""
    origin = pd.Timestamp(origin)
    if pd.Timestamp(history.as_of) != origin:
        raise LookaheadError(
            f"{model}: predict history is as of {history.as_of} but the origin is {origin}; a forecast at "
            "an origin must read the history known at that origin"
        )
    n_late, example = _late_cells(history, origin)
    if n_late:
        raise LookaheadError(
            f"{model}: {n_late} cell(s) of the predict history were published after the origin {origin} "
            f"(accepted: available_at <= origin), e.g. {example}"
        )
    counter.predict += 1


def check_fit(history: History, *, fit_time: pd.Timestamp, counter: GuardCounter, model: str = "") -> None:
    """Guard 2: every observed training cell has ``available_at <= fit_time`` (and ``as_of == fit_time``)."""
    fit_time = pd.Timestamp(fit_time)
    if pd.Timestamp(history.as_of) != fit_time:
        raise LookaheadError(f"{model}: training history is as of {history.as_of} but is used to fit at {fit_time}")
    n_late, example = _late_cells(history, fit_time)
    if n_late:
        raise LookaheadError(
            f"{model}: {n_late} training cell(s) were published after the fit time {fit_time} "
            f"(accepted: available_at <= fit time), e.g. {example}"
        )
    counter.fit += 1


def check_embargo(
    history: History,
    *,
    origin_index: int,
    embargo: int,
    periods: pd.DatetimeIndex,
    counter: GuardCounter,
    model: str = "",
) -> None:
    """Guard 3: the training history's last period is before ``periods[origin_index - embargo]``.

    Equivalently its last column is ``< origin_index - embargo``: training ends at least ``embargo``
    periods before the origin it serves.
    """
    cut = origin_index - embargo
    # compared as int64 nanoseconds: indexing a DatetimeIndex boxes a Timestamp, ~100x slower
    if history.n_periods and (cut <= 0 or history.periods.asi8[-1] >= periods.asi8[cut]):
        raise LookaheadError(
            f"{model}: training history ends at {history.periods[-1].date()}, inside the embargo of "
            f"{embargo} period(s) before the origin {periods[origin_index].date()} (accepted: last "
            f"training period before {periods[max(cut, 0)].date()})"
        )
    counter.embargo += 1


class GuardedForecaster:
    """Wraps a fitted forecaster so that every ``predict`` passes guard 1 first."""

    def __init__(self, forecaster: Forecaster, *, counter: GuardCounter, model: str = "") -> None:
        self.forecaster = forecaster
        self.counter = counter
        self.model = model

    def min_history(self, season_length: int) -> int:
        return int(self.forecaster.min_history(season_length))

    def predict(
        self,
        history: History,
        *,
        origin: pd.Timestamp,
        horizon: int,
        quantile_levels: Sequence[float] = (),
        n_samples: int = 0,
        seed: int | np.random.Generator | None = None,
    ) -> Forecast:
        check_predict(history, origin=origin, counter=self.counter, model=self.model)
        return self.forecaster.predict(
            history, horizon=horizon, quantile_levels=quantile_levels, n_samples=n_samples, seed=seed
        )
