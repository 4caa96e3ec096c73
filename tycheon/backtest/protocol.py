"""Evaluation protocols: where the origins sit, where training ends, and which targets are scored.

Conventions (shared with :mod:`tycheon.data.panel`): the dense grid has columns ``0..T-1`` (period
starts). An origin is the column index ``i`` of its first target period and its timestamp is
``periods[i]``; the history at the origin is columns ``[0, i)``; the targets are columns ``i..i+h-1``.
With the default ``available_at`` (period end), every history cell is published by ``periods[i]``
(ADR-0006 decision 3: ``available_at <= origin``).

Two protocols are offered (ADR-0006 decisions 2-3, 5; evaluation-choices paper section 3):

- :class:`RollingOrigin` refits every model at every origin on columns ``[0, i - embargo)``, or on a
  refit calendar: ``refit_every = k`` refits at every ``k``-th origin (the first included), ``refit_at``
  at the first origin and at the first origin on or after each listed period. An origin between refits
  *updates* the last fit: the model keeps the parameters estimated at the last refit origin ``r``
  (training columns ``[0, r - embargo)``) and advances its state with the observations published by its
  own origin (:mod:`tycheon.forecasters.base`, "fit and update").
- :class:`StaticSplit` fits once at a boundary ``b`` on columns ``[0, b - embargo)`` and freezes the
  parameters; every origin still predicts from the history published by that origin. With the same
  origins it scores exactly the same (target, step) pairs as the rolling protocol
  (:func:`same_targets` proves it), so the two can be compared in a sensitivity analysis.

Overlapping origins (``stride < horizon``) make consecutive forecast errors correlated; the benchmark
rejects them so the pooled Diebold-Mariano test is valid, and ``mode="analysis"`` allows them and records
``overlap_lag = ceil(h / stride) - 1`` for the test's truncation lag (ADR-0006 decision 5).

Calibration origins (``n_calibration_origins = C``, default 0): unscored origins at stride 1 placed
immediately before the first scored origin ``o_1`` so that their whole horizon lies before it,
``c_j = o_1 - H - j`` for ``j = 0..C-1`` (they may overlap each other). The engine forecasts them like
scored origins (same guards, same embargo; a static split freezes one fit at the earliest of them) and
uses their errors only to calibrate the bands of the scored rows (:mod:`tycheon.backtest.calibration`);
they never enter the score set. Those with too little history are skipped and counted
(:func:`calibration_plan`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from tycheon._typing import ProtocolMode
from tycheon.contract import overlap_lags
from tycheon.data.panel import Panel
from tycheon.errors import InputError

__all__ = [
    "CalibrationPlan",
    "Origin",
    "ProtocolError",
    "RollingOrigin",
    "StaticSplit",
    "calibration_plan",
    "same_targets",
]

_MODES = ("benchmark", "analysis")


class ProtocolError(InputError):
    """A protocol that cannot be built or cannot be placed on a panel; the message says what is accepted."""


@dataclass(frozen=True)
class Origin:
    """One forecast origin on a panel's period grid.

    Attributes
    ----------
    index : int
        Column of the first target period; the predict history is columns ``[0, index)``.
    timestamp : Timestamp
        ``periods[index]``: the time the forecast is made (``available_at <= timestamp`` is usable).
    fit_end : int
        Exclusive column where the training history ends (``index - embargo`` at a rolling refit origin,
        the last refit origin's ``r - embargo`` between refits, ``boundary - embargo`` static). Origins
        with the same ``fit_end`` share one fit; an origin whose ``fit_end`` differs from its
        predecessor's is a refit origin.
    fit_time : Timestamp
        ``periods[fit_end]``: when the training history was known.
    horizon : int
    """

    index: int
    timestamp: pd.Timestamp
    fit_end: int
    fit_time: pd.Timestamp
    horizon: int

    @property
    def targets(self) -> range:
        """Columns of the target periods ``index .. index + horizon - 1``."""
        return range(self.index, self.index + self.horizon)


def _check_common(
    horizon: int, stride: int, embargo: int, mode: str, n_origins: int | None, n_calibration_origins: int = 0
) -> None:
    if (
        not isinstance(n_calibration_origins, (int, np.integer))
        or isinstance(n_calibration_origins, bool)
        or n_calibration_origins < 0
    ):
        raise ProtocolError(f"n_calibration_origins must be an integer >= 0, got {n_calibration_origins!r}")
    if not isinstance(horizon, (int, np.integer)) or horizon <= 0:
        raise ProtocolError(f"horizon must be a positive integer number of periods, got {horizon!r}")
    if not isinstance(stride, (int, np.integer)) or stride <= 0:
        raise ProtocolError(f"stride must be a positive integer number of periods, got {stride!r}")
    if not isinstance(embargo, (int, np.integer)) or embargo < 0:
        raise ProtocolError(f"embargo must be an integer >= 0 periods, got {embargo!r}")
    if mode not in _MODES:
        raise ProtocolError(f"mode must be one of {_MODES}, got {mode!r}")
    if n_origins is not None and (not isinstance(n_origins, (int, np.integer)) or n_origins < 1):
        raise ProtocolError(f"n_origins must be a positive integer or None, got {n_origins!r}")
    if mode == "benchmark" and stride < horizon:
        raise ProtocolError(
            f"overlapping origins: stride={stride} < horizon={horizon} makes consecutive forecast windows "
            f"share targets (overlap lag {math.ceil(horizon / stride) - 1}); the benchmark needs "
            f"stride >= horizon so the pooled Diebold-Mariano test is valid. Use mode='analysis' to allow "
            "overlap (the lag is then recorded for the test)."
        )


def _column(panel: Panel, when: int | str | pd.Timestamp, what: str) -> int:
    """Column index of an origin or boundary given as an index or a timestamp on the panel's grid."""
    periods = panel.periods
    if isinstance(when, (int, np.integer)) and not isinstance(when, bool):
        col = int(when)
        if not 0 <= col < len(periods):
            raise ProtocolError(
                f"{what}={col} is outside the panel's columns 0..{len(periods) - 1} "
                f"({periods[0].date()}..{periods[-1].date()})"
            )
        return col
    try:
        stamp = pd.Timestamp(when)
    except (ValueError, TypeError) as err:
        raise ProtocolError(f"{what} must be a column index or a timestamp, got {when!r}") from err
    loc = periods.get_indexer(pd.DatetimeIndex([stamp]))[0]
    if loc < 0:
        raise ProtocolError(
            f"{what}={stamp} is not a period start on the panel's {panel.freq!r} grid "
            f"({periods[0].date()}..{periods[-1].date()})"
        )
    return int(loc)


def _place(
    panel: Panel,
    *,
    horizon: int,
    stride: int,
    n_origins: int | None,
    first: int | None,
    lowest: int,
    what: str,
) -> list[int]:
    """Origin columns: forward from ``first`` when given, else the latest ones leaving a full horizon."""
    n_periods = len(panel.periods)
    last_possible = n_periods - horizon  # the origin's targets must all lie on the grid
    if last_possible < 0:
        raise ProtocolError(
            f"no origin leaves a full horizon of {horizon} actuals: the panel has only {n_periods} periods"
        )
    if first is not None:
        if first > last_possible:
            raise ProtocolError(
                f"{what} at column {first} leaves no full horizon of {horizon} actuals: the last origin "
                f"with a full horizon is column {last_possible} ({panel.periods[last_possible].date()})"
            )
        cols = list(range(first, last_possible + 1, stride))
        if n_origins is not None:
            if len(cols) < n_origins:
                raise ProtocolError(
                    f"only {len(cols)} origin(s) with a full horizon of {horizon} fit from column {first} "
                    f"at stride {stride}; n_origins={n_origins} was asked"
                )
            cols = cols[:n_origins]
    else:
        cols = list(range(last_possible, -1, -stride))[::-1]
        cols = [c for c in cols if c >= lowest]
        if n_origins is not None:
            if len(cols) < n_origins:
                raise ProtocolError(
                    f"only {len(cols)} origin(s) leave both a full horizon of {horizon} and at least "
                    f"{lowest} period(s) of history at stride {stride}; n_origins={n_origins} was asked"
                )
            cols = cols[-n_origins:]
    return cols


def _check_history(panel: Panel, origins: list[Origin], *, min_history: int, embargo: int) -> None:
    if not origins:
        raise ProtocolError(
            f"too little history for any origin: every origin needs at least min_history={min_history} "
            f"period(s) of history and at least one training period after an embargo of {embargo}"
        )
    counts = panel.dense().n_observed  # bound method: observations before a column
    usable = [o for o in origins if o.fit_end >= 1 and (counts(o.index) >= min_history).any()]
    if not usable:
        first = origins[0]
        raise ProtocolError(
            f"too little history for any origin: at the first origin {first.timestamp.date()} (column "
            f"{first.index}) no series has min_history={min_history} observations, or training would end "
            f"at column {first.fit_end} after an embargo of {embargo}; place origins later or lower "
            "min_history"
        )


def _scored_pairs(origins: list[Origin], panel: Panel) -> set[tuple[pd.Timestamp, int]]:
    periods = panel.periods
    return {(periods[t], h + 1) for o in origins for h, t in enumerate(o.targets)}


@dataclass(frozen=True, kw_only=True)
class RollingOrigin:
    """Rolling origins: refit on data strictly before the origin (less the embargo), at every origin or
    on a refit calendar (``refit_every``, ``refit_at``), updating the last fit in between.

    Parameters
    ----------
    horizon : int
        Steps forecast from each origin, >= 1.
    stride : int
        Periods between consecutive origins, >= 1 (>= horizon in benchmark mode).
    n_origins : int, optional
        How many origins. Without ``first_origin`` they are the latest ones that leave a full horizon of
        actuals; with it, the first ``n_origins`` from there. Neither given: every origin from the latest
        backwards at ``stride`` that has ``min_history`` periods before it.
    first_origin : int or Timestamp, optional
        Column index or period stamp of the first origin.
    embargo : int
        Training ends at least ``embargo`` periods before each origin (``fit_end = index - embargo``).
    mode : {"benchmark", "analysis"}
        ``benchmark`` rejects overlapping origins (``stride < horizon``); ``analysis`` allows them.
    n_calibration_origins : int
        Unscored calibration origins before the first scored origin (0: none, the bands come from the
        scored origins' own past errors only); see the module docstring.
    refit_every : int
        The refit calendar: refit at origins ``0, k, 2k, ...`` (in placement order) and update the last
        fit at the others; 1 (default) refits at every origin. The calibration origins (stride 1) refit
        every ``k * stride`` of them, so their parameters are as old as the scored origins'.
    refit_at : tuple of int or Timestamp
        A refit calendar as periods instead (exclusive with ``refit_every > 1``): refit at the first
        origin and at the first origin on or after each listed period (column index or period stamp).

    Examples
    --------
    >>> RollingOrigin(horizon=6, stride=6, n_origins=8).overlap_lag
    0
    """

    horizon: int
    stride: int
    n_origins: int | None = None
    first_origin: int | str | pd.Timestamp | None = None
    embargo: int = 0
    mode: ProtocolMode = "benchmark"
    n_calibration_origins: int = 0
    refit_every: int = 1
    refit_at: tuple[int | str | pd.Timestamp, ...] = ()

    kind: ClassVar[str] = "rolling"

    def __post_init__(self) -> None:
        _check_common(self.horizon, self.stride, self.embargo, self.mode, self.n_origins, self.n_calibration_origins)
        k = self.refit_every
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
            raise ProtocolError(f"refit_every must be an integer >= 1 (origins between refits), got {k!r}")
        if isinstance(self.refit_at, (str, bytes)) or not isinstance(self.refit_at, (tuple, list)):
            raise ProtocolError(
                f"refit_at must be a list of periods (column indices or period stamps), got {self.refit_at!r}"
            )
        object.__setattr__(self, "refit_at", tuple(self.refit_at))
        if self.refit_at and k != 1:
            raise ProtocolError(f"give one refit calendar: refit_every={k} or refit_at={list(self.refit_at)}, not both")

    def refits(self, panel: Panel, cols: list[int]) -> list[bool]:
        """Whether each origin column of ``cols`` (ascending) is a refit origin under the calendar."""
        if not self.refit_at:
            return [j % self.refit_every == 0 for j in range(len(cols))]
        marks = sorted({_column(panel, when, "refit_at") for when in self.refit_at})
        out = []
        for j, c in enumerate(cols):
            before = cols[j - 1] if j else None
            out.append(before is None or any(before < m <= c for m in marks))
        return out

    @property
    def overlap_lag(self) -> int:
        """``ceil(h / stride) - 1``: autocorrelation lags induced by overlapping windows (0 when none)."""
        return overlap_lags(self.horizon, self.stride)

    def origins(self, panel: Panel, *, min_history: int = 1) -> list[Origin]:
        """The origins on ``panel``; raises :class:`ProtocolError` when none is usable."""
        first = None if self.first_origin is None else _column(panel, self.first_origin, "first_origin")
        cols = _place(
            panel,
            horizon=self.horizon,
            stride=self.stride,
            n_origins=self.n_origins,
            first=first,
            lowest=max(min_history, self.embargo + 1),
            what="first_origin",
        )
        if cols and cols[0] - self.embargo < 1:
            raise ProtocolError(
                f"too little history for any origin at column {cols[0]}: an embargo of {self.embargo} "
                "leaves no training period before it; place the first origin later"
            )
        periods = panel.periods
        origins = []
        fit_end = cols[0] - self.embargo if cols else 0
        for c, refit in zip(cols, self.refits(panel, cols), strict=True):
            if refit:
                fit_end = c - self.embargo
            origins.append(
                Origin(index=c, timestamp=periods[c], fit_end=fit_end, fit_time=periods[fit_end], horizon=self.horizon)
            )
        _check_history(panel, origins, min_history=min_history, embargo=self.embargo)
        return origins

    def scored_pairs(self, panel: Panel, *, min_history: int = 1) -> set[tuple[pd.Timestamp, int]]:
        """The (target period, step) pairs this protocol scores on ``panel``."""
        return _scored_pairs(self.origins(panel, min_history=min_history), panel)

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "horizon": self.horizon,
            "stride": self.stride,
            "n_origins": self.n_origins,
            "first_origin": None if self.first_origin is None else str(self.first_origin),
            "embargo": self.embargo,
            "mode": self.mode,
            "overlap_lag": self.overlap_lag,
            "n_calibration_origins": self.n_calibration_origins,
            **self._calendar(),
        }

    def _calendar(self) -> dict[str, Any]:
        """The refit calendar where it is not the default (a refit at every origin)."""
        if self.refit_at:
            return {"refit_at": [str(w) for w in self.refit_at]}
        return {"refit_every": self.refit_every} if self.refit_every != 1 else {}


@dataclass(frozen=True, kw_only=True)
class StaticSplit:
    """Fit once at a boundary, then predict at every origin from the history published by it.

    Global models are fitted once on columns ``[0, boundary - embargo)`` and their parameters frozen;
    local models read the same predict history as under :class:`RollingOrigin`. Origins start at the
    boundary and advance by ``stride``.

    Parameters
    ----------
    horizon, stride, embargo, mode
        As for :class:`RollingOrigin`.
    boundary : int or Timestamp
        Column index or period stamp of the first origin; training ends ``embargo`` periods before it.
    n_origins : int, optional
        How many origins from the boundary (default: all that leave a full horizon).
    n_calibration_origins : int
        As for :class:`RollingOrigin`; the calibration origins share one fit, frozen at the earliest of
        them (``c_min - embargo``), so no calibration forecast uses a parameter fitted after its origin.
    """

    horizon: int
    boundary: int | str | pd.Timestamp
    stride: int
    n_origins: int | None = None
    embargo: int = 0
    mode: ProtocolMode = "benchmark"
    n_calibration_origins: int = 0

    kind: ClassVar[str] = "static"

    def __post_init__(self) -> None:
        _check_common(self.horizon, self.stride, self.embargo, self.mode, self.n_origins, self.n_calibration_origins)

    @property
    def overlap_lag(self) -> int:
        """``ceil(h / stride) - 1`` (see :attr:`RollingOrigin.overlap_lag`)."""
        return overlap_lags(self.horizon, self.stride)

    def origins(self, panel: Panel, *, min_history: int = 1) -> list[Origin]:
        b = _column(panel, self.boundary, "boundary")
        if b - self.embargo < max(min_history, 1):
            raise ProtocolError(
                f"too little history for any origin: the boundary at column {b} with an embargo of "
                f"{self.embargo} leaves {max(b - self.embargo, 0)} training period(s); "
                f"min_history={min_history} and at least one are needed"
            )
        cols = _place(
            panel,
            horizon=self.horizon,
            stride=self.stride,
            n_origins=self.n_origins,
            first=b,
            lowest=0,
            what="boundary",
        )
        periods = panel.periods
        fit_end = b - self.embargo
        origins = [
            Origin(index=c, timestamp=periods[c], fit_end=fit_end, fit_time=periods[fit_end], horizon=self.horizon)
            for c in cols
        ]
        _check_history(panel, origins, min_history=min_history, embargo=self.embargo)
        return origins

    def scored_pairs(self, panel: Panel, *, min_history: int = 1) -> set[tuple[pd.Timestamp, int]]:
        return _scored_pairs(self.origins(panel, min_history=min_history), panel)

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "horizon": self.horizon,
            "boundary": str(self.boundary),
            "stride": self.stride,
            "n_origins": self.n_origins,
            "embargo": self.embargo,
            "mode": self.mode,
            "overlap_lag": self.overlap_lag,
            "n_calibration_origins": self.n_calibration_origins,
        }


Protocol = RollingOrigin | StaticSplit


@dataclass(frozen=True)
class CalibrationPlan:
    """Where a protocol's calibration origins sit on a panel.

    Attributes
    ----------
    protocol : RollingOrigin or StaticSplit or None
        A copy of the scored protocol (same class, horizon and embargo) in ``analysis`` mode at stride 1
        over the usable calibration origins, with no calibration origins of its own; None when none is
        usable.
    used : tuple of int
        Columns of the usable calibration origins, ascending.
    skipped : tuple of int
        Columns ``c_j`` asked for but skipped for too little history (may be negative: before the grid).
    """

    protocol: RollingOrigin | StaticSplit | None
    used: tuple[int, ...]
    skipped: tuple[int, ...]


def calibration_plan(
    protocol: Protocol,
    panel: Panel,
    *,
    min_history: int = 1,
    calibration_min_history: int | None = None,
) -> CalibrationPlan:
    """The calibration origins ``c_j = o_1 - H - j`` (``j < n_calibration_origins``) of ``protocol``.

    ``o_1`` is the first scored origin with ``min_history``; a calibration origin is usable when it has
    ``calibration_min_history`` (default ``min_history``) periods of history, a training period after the
    embargo (for a static split: ``c - embargo >= calibration_min_history``, as its frozen fit starts
    there) and at least one series with that many observations. Usability is monotone in ``c``, so the
    usable origins are the latest ``len(used)`` of them, contiguous at stride 1.
    """
    wanted = int(protocol.n_calibration_origins)
    cal_min = int(min_history if calibration_min_history is None else calibration_min_history)
    if cal_min < 1:
        raise ProtocolError(f"calibration_min_history must be >= 1, got {cal_min}")
    if wanted == 0:
        return CalibrationPlan(protocol=None, used=(), skipped=())
    first = protocol.origins(panel, min_history=min_history)[0].index
    cols = [first - protocol.horizon - j for j in range(wanted)][::-1]  # ascending
    counts = panel.dense().n_observed
    static = isinstance(protocol, StaticSplit)

    def usable(c: int) -> bool:
        history = c - protocol.embargo if static else c
        return history >= cal_min and c - protocol.embargo >= 1 and bool((counts(c) >= cal_min).any())

    used = tuple(c for c in cols if usable(c))
    skipped = tuple(c for c in cols if c not in used)
    if not used:
        return CalibrationPlan(protocol=None, used=(), skipped=skipped)
    # a copy of the protocol itself (a subclass keeps its own placement and fit rules), moved to the
    # calibration origins
    place: dict[str, Any] = {"boundary": used[0]} if static else {"first_origin": used[0]}
    if isinstance(protocol, RollingOrigin) and protocol.refit_every > 1:
        # at stride 1, a refit every k * stride calibration origins keeps the parameters as old as the
        # scored origins' (refit every k origins at ``stride``)
        place["refit_every"] = protocol.refit_every * protocol.stride
    cal = dataclasses.replace(
        protocol, stride=1, n_origins=len(used), mode="analysis", n_calibration_origins=0, **place
    )
    return CalibrationPlan(protocol=cal, used=used, skipped=skipped)


def same_targets(p1: Protocol, p2: Protocol, panel: Panel, *, min_history: int = 1) -> bool:
    """Whether two protocols score identical (target period, step) pairs on ``panel``."""
    return p1.scored_pairs(panel, min_history=min_history) == p2.scored_pairs(panel, min_history=min_history)
