"""The panel: one validated long table of series observations plus per-series attributes.

A :class:`Panel` is the only data object that crosses from loading into evaluation. It is validated once,
here, and nothing downstream re-validates it.

Long table columns (``Panel.data``), sorted by ``series_id`` then ``period``:

================  =====================  ===================================================================
column            dtype                  meaning
================  =====================  ===================================================================
``series_id``     str (object)           stable identifier of the series
``period``        datetime64[ns]         start stamp of the period the value describes, on the panel's grid
``value``         float64                the observation (finite)
``available_at``  datetime64[ns]         when the value was published; default: the end of the period
================  =====================  ===================================================================

``available_at`` defaults to the *end* of the period, written as the start of the next period
(``period + freq``): the conservative assumption that a period's total is known only once it is over.
An origin ``t`` may use every row with ``available_at <= t`` (ADR-0006 decision 3).

NaN policy (explicit, never silent): ``nan_policy="raise"`` (default) refuses NaN values and names the
first offending series and period; ``nan_policy="zero"`` reads NaN as zero demand and records how many
values were filled in ``Panel.meta["nan_filled"]``; ``nan_policy="drop_series"`` drops every series that
holds a NaN and lists them in ``Panel.meta["dropped_series"]`` (with a warning). With
``edge_nan="unlisted"`` the leading and trailing NaN runs of a series are first read as "not yet listed"
and "delisted" (the series starts at its first value and ends at its last), not as zeros; a series with
no value at all is dropped and listed. Missing periods *inside* a series' span are refused either way: a series is
contiguous from its first to its last observation. Ragged starts and early exits are allowed; the dense
view marks them with ``observed == False``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from pandas.tseries.offsets import BaseOffset

from tycheon._typing import BoolArray, EdgeNan, FloatArray, IntArray, NanPolicy
from tycheon.data._panel_input import (
    EDGE_NAN,
    MAX_ABS_VALUE,
    MAX_EXAMPLES,
    NAN_POLICIES,
    PanelValidationError,
    apply_nan_policy,
    parse_periods,
    parse_values,
    resolve_freq,
    row_examples,
    series_codes,
    validate_attributes,
)

__all__ = [
    "DEFAULT_SEASON_LENGTH",
    "EDGE_NAN",
    "MAX_ABS_VALUE",
    "NAN_POLICIES",
    "DenseView",
    "Panel",
    "PanelValidationError",
]

LONG_COLUMNS = ("series_id", "period", "value", "available_at")

DEFAULT_SEASON_LENGTH: dict[str, int] = {
    "h": 24,
    "D": 7,
    "W": 52,
    "MS": 12,
    "QS": 4,
    "YS": 1,
}


@dataclass(frozen=True, eq=False)
class DenseView:
    """A dense ``[series, time]`` view of a panel for vectorised kernels.

    Attributes
    ----------
    values : ndarray, shape (S, T)
        Observations; ``NaN`` where ``observed`` is False (before a series starts or after it exits).
    observed : ndarray of bool, shape (S, T)
        True where the series has an observation.
    available_at : ndarray of datetime64[ns], shape (S, T)
        Publication time of each cell; ``NaT`` where unobserved.
    series_ids : ndarray of str, shape (S,)
    periods : DatetimeIndex, length T
        The panel's full period grid.
    first, last : ndarray of int, shape (S,)
        Index of each series' first and last observation.
    """

    values: FloatArray  # [series, time]
    observed: BoolArray  # [series, time]
    available_at: np.ndarray  # [series, time] datetime64[ns]
    series_ids: np.ndarray  # [series]
    periods: pd.DatetimeIndex  # [time]
    first: IntArray  # [series]
    last: IntArray  # [series]

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.values.shape[0]), int(self.values.shape[1]))

    def n_observed(self, upto: int | None = None) -> IntArray:
        """Number of observations of each series in columns ``[0, upto)`` (all columns when None)."""
        obs = self.observed if upto is None else self.observed[:, :upto]
        return obs.sum(axis=1).astype(np.int64)


@dataclass(frozen=True, eq=False)
class Panel:
    """A validated panel of time series; build it with :meth:`Panel.from_long`.

    Attributes
    ----------
    data : DataFrame
        The long table (see module docstring), sorted by series then period.
    attributes : DataFrame
        One row per series (index ``series_id``, same order as the dense view): hierarchy level columns
        named in ``levels`` and optionally ``weight`` and other static attributes.
    freq : str
        Pandas offset alias of the period grid (``"MS"``, ``"QS"``, ``"YS"``, ``"W"``, ``"D"``...).
    season_length : int
        Periods per seasonal cycle (12 for monthly, 4 quarterly, 1 yearly...).
    levels : tuple of str
        The attribute columns that are hierarchy levels (units of analysis can aggregate by them).
    name : str
    meta : dict
        Provenance flags: ``synthetic``, ``redistributable``, ``warnings`` (list of str that travel into
        results), ``nan_filled`` and any loader-specific entries (e.g. competition horizons).
    """

    data: pd.DataFrame
    attributes: pd.DataFrame
    freq: str
    season_length: int
    levels: tuple[str, ...] = ()
    name: str = "panel"
    meta: dict[str, Any] = field(default_factory=dict)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_long(
        cls,
        frame: pd.DataFrame,
        *,
        series_col: str = "series_id",
        period_col: str = "period",
        value_col: str = "value",
        available_at_col: str | None = None,
        freq: str | None = None,
        season_length: int | None = None,
        attributes: pd.DataFrame | None = None,
        levels: tuple[str, ...] | list[str] = (),
        name: str = "panel",
        nan_policy: NanPolicy = "raise",
        edge_nan: EdgeNan = "policy",
        meta: dict[str, Any] | None = None,
    ) -> Panel:
        """Validate a long table and build a panel.

        Parameters
        ----------
        frame : DataFrame
            One row per (series, period) observation.
        series_col, period_col, value_col : str
            Column names of the series id, the period stamp and the value.
        available_at_col : str, optional
            Column holding publication times. When absent, every value is taken as published at the end of
            its period (``period + freq``).
        freq : str, optional
            Pandas offset alias. Inferred from the data when omitted; a panel whose series disagree on the
            frequency is refused.
        season_length : int, optional
            Defaults from the frequency (``DEFAULT_SEASON_LENGTH``).
        attributes : DataFrame, optional
            Static per-series attributes indexed by series id (or with a ``series_id`` column).
        levels : sequence of str
            Attribute columns that are hierarchy levels.
        nan_policy : {"raise", "zero", "drop_series"}
            See the module docstring.
        edge_nan : {"policy", "unlisted"}
            ``unlisted`` reads the leading and trailing NaN runs of each series as periods before it was
            listed / after it was delisted (dropped, counted in ``meta["unlisted_periods"]``) before the
            NaN policy sees the rest; ``policy`` leaves them to the NaN policy.

        Raises
        ------
        PanelValidationError
            For missing columns, missing series ids, unparseable or missing dates, mixed time zones,
            duplicate (series, period) rows, mixed or off-grid frequency, boolean, non-numeric or infinite
            values, NaN under ``nan_policy="raise"``, ``available_at`` before the end of the
            period it describes, interior gaps, or attributes that do not match the series.
        """
        missing = [c for c in (series_col, period_col, value_col) if c not in frame.columns]
        if available_at_col is not None and available_at_col not in frame.columns:
            missing.append(available_at_col)
        if missing:
            raise PanelValidationError(
                f"panel {name!r}: missing column(s) {missing}; the table has {list(frame.columns)}"
            )
        if nan_policy not in NAN_POLICIES:
            raise PanelValidationError(
                f"nan_policy must be one of {', '.join(map(repr, NAN_POLICIES))}, got {nan_policy!r}"
            )
        if edge_nan not in EDGE_NAN:
            raise PanelValidationError(f"edge_nan must be one of {', '.join(map(repr, EDGE_NAN))}, got {edge_nan!r}")
        if len(frame) == 0:
            raise PanelValidationError(f"panel {name!r}: the table has no rows")
        if not frame.index.is_unique:
            # label lookups below (available_at) need unique labels; rows are then named by position
            frame = frame.reset_index(drop=True)

        # series ids as sorted codes (one hash pass; the text conversion runs on the distinct ids only),
        # and every later step on integer keys: sorting, duplicates and gaps cost no string comparisons
        codes, id_values = series_codes(frame[series_col], series_col, name)
        periods = parse_periods(frame[period_col], period_col, name)
        period_ns = periods.to_numpy().astype("datetime64[ns]").view(np.int64)

        def rows() -> pd.DataFrame:  # the input rows' ids and periods, only built for an error message
            return pd.DataFrame(
                {"series_id": id_values[codes], "period": period_ns.view("datetime64[ns]")}, index=frame.index
            )

        values = parse_values(frame[value_col], rows, value_col, name)
        meta = dict(meta or {})
        meta.setdefault("warnings", [])

        order = np.lexsort((period_ns, codes))  # by series (sorted ids), then period
        same = (codes[order][1:] == codes[order][:-1]) & (period_ns[order][1:] == period_ns[order][:-1])
        if same.any():
            dup = np.zeros(len(codes), dtype=bool)
            dup[order[1:][same]] = dup[order[:-1][same]] = True
            raise PanelValidationError(
                f"panel {name!r}: duplicate (series, period) rows; each series may have one value per period: "
                + row_examples(rows()[dup].sort_values(["series_id", "period"]), ["series_id", "period"])
            )
        value = values.to_numpy()
        labels = frame.index[order]  # the input rows in panel order (for available_at)
        sid, per, value = codes[order], period_ns[order], value[order]  # sorted by series, then period
        offset: BaseOffset | None = None
        if freq is None or np.isnan(value).any():
            # the NaN policy, or the inference of the frequency per series, reads the long table
            df = pd.DataFrame(
                {"series_id": id_values[sid], "period": per.view("datetime64[ns]"), "value": value, "_code": sid},
                index=labels,
            )
            df = apply_nan_policy(df, nan_policy=nan_policy, edge_nan=edge_nan, name=name, meta=meta)
            offset, freq = resolve_freq(df, freq, name)
            sid, per, value = df["_code"].to_numpy(), df["period"].to_numpy().view(np.int64), df["value"].to_numpy()
            labels = df.index
            del df
        else:
            meta["nan_filled"] = 0  # what the NaN policy records when there is no NaN
        at_stamp, stamp_values = pd.factorize(per)  # the few distinct periods
        rank = np.argsort(stamp_values, kind="stable")
        position = np.empty_like(rank)
        position[rank] = np.arange(len(rank))
        at_stamp, stamp_index = (
            position[at_stamp],
            pd.DatetimeIndex(np.asarray(stamp_values)[rank].view("datetime64[ns]")),
        )
        if offset is None:  # the grid check reads the distinct periods only
            offset, freq = resolve_freq(pd.DataFrame({"period": stamp_index}), freq, name)
        period_col_values = per.view("datetime64[ns]")

        if available_at_col is None:
            available = (stamp_index + offset).to_numpy()[at_stamp]  # the offset once per period
        else:
            avail = pd.to_datetime(frame.loc[labels, available_at_col])
            if avail.dt.tz is not None:
                avail = avail.dt.tz_convert(None)
            shown_rows = pd.DataFrame({"series_id": id_values[sid], "period": period_col_values})
            if avail.isna().any():
                raise PanelValidationError(
                    f"panel {name!r}: column {available_at_col!r} has missing timestamps: "
                    + row_examples(shown_rows[avail.isna().to_numpy()], ["series_id", "period"])
                )
            available = avail.to_numpy().astype("datetime64[ns]")
            period_end = (stamp_index + offset).to_numpy()[at_stamp]
            early = available < period_end
            if early.any():
                shown = shown_rows[early].assign(available_at=available[early], period_end=period_end[early])
                raise PanelValidationError(
                    f"panel {name!r}: available_at is before the end of the period it describes "
                    "(a value cannot be published before its period is over; accepted: available_at >= "
                    "period end): " + row_examples(shown, ["series_id", "period", "available_at", "period_end"])
                )

        grid = pd.date_range(stamp_index[0], stamp_index[-1], freq=offset)
        pos = grid.get_indexer(stamp_index)[at_stamp]
        starts = np.flatnonzero(np.r_[True, sid[1:] != sid[:-1]])  # [series] first row (rows are sorted)
        present = sid[starts]  # codes of the series left, sorted
        uniques = id_values[present]
        lengths = np.diff(np.r_[starts, len(sid)])
        first_pos = np.repeat(pos[starts], lengths)
        rank_in_series = np.arange(len(sid)) - np.repeat(starts, lengths)
        gap = pos - first_pos != rank_in_series
        if gap.any():
            bad_ids = pd.unique(id_values[sid[gap]])
            raise PanelValidationError(
                f"panel {name!r}: {len(bad_ids)} series have missing periods between their first and last "
                f"observation (a series must be contiguous; fill the gaps with zeros or NaN + "
                f"nan_policy='zero'): {list(bad_ids[:MAX_EXAMPLES])}"
            )

        # the four fresh arrays become the columns as they are (copy=False: no consolidating copy of the
        # two datetime columns into one block, no second frame for the column order; on large tables this
        # copy took nearly half of the frame's build time)
        df = pd.DataFrame(
            {"series_id": id_values[sid], "period": period_col_values, "value": value, "available_at": available},
            copy=False,
        )
        attrs = validate_attributes(attributes, pd.Index(uniques), tuple(levels), name)
        if season_length is None:
            season_length = DEFAULT_SEASON_LENGTH.get(freq.split("-")[0], 1)
        if int(season_length) < 1:
            raise PanelValidationError(f"season_length must be >= 1, got {season_length}")
        meta.setdefault("synthetic", False)
        meta.setdefault("redistributable", True)
        return cls(
            data=df,  # built in LONG_COLUMNS order
            attributes=attrs,
            freq=freq,
            season_length=int(season_length),
            levels=tuple(levels),
            name=name,
            meta=meta,
        )

    # ------------------------------------------------------------------ properties
    @property
    def series_ids(self) -> np.ndarray:
        return self.attributes.index.to_numpy()

    @property
    def n_series(self) -> int:
        return len(self.attributes)

    @property
    def offset(self) -> BaseOffset:
        return pd.tseries.frequencies.to_offset(self.freq)

    @property
    def periods(self) -> pd.DatetimeIndex:
        """The full period grid from the earliest to the latest period of any series (built once per panel,
        as its dense view is: the min and max of a long period column cost a pass each time, and a run
        asks several times)."""
        cached = self.__dict__.get("_periods")
        if cached is None:
            cached = pd.date_range(self.data["period"].min(), self.data["period"].max(), freq=self.offset)
            self.__dict__["_periods"] = cached
        return cached

    @property
    def warnings(self) -> list[str]:
        """The loader's notes as sentences (a typed caveat in ``meta["warnings"]`` gives its message)."""
        return [str(getattr(w, "message", w)) for w in self.meta.get("warnings", [])]

    def lengths(self) -> pd.Series:
        """Number of observations per series."""
        return self.data.groupby("series_id", sort=True, observed=True).size().reindex(self.series_ids)

    # ------------------------------------------------------------------ dense view
    def dense(self) -> DenseView:
        """The ``[series, time]`` view; built once per panel and cached."""
        cached = self.__dict__.get("_dense")
        if cached is not None:
            return cached
        periods = self.periods
        s_idx = pd.Index(self.series_ids).get_indexer(self.data["series_id"])
        t_idx = periods.get_indexer(pd.DatetimeIndex(self.data["period"]))
        shape = (len(self.series_ids), len(periods))
        values = np.full(shape, np.nan)
        values[s_idx, t_idx] = self.data["value"].to_numpy(dtype=np.float64)
        observed = np.zeros(shape, dtype=bool)
        observed[s_idx, t_idx] = True
        avail = np.full(shape, np.datetime64("NaT"), dtype="datetime64[ns]")
        avail[s_idx, t_idx] = self.data["available_at"].to_numpy(dtype="datetime64[ns]")
        first = np.where(observed.any(axis=1), observed.argmax(axis=1), 0).astype(np.int64)
        last = (shape[1] - 1 - observed[:, ::-1].argmax(axis=1)).astype(np.int64)
        for arr in (values, observed, avail):
            arr.setflags(write=False)
        view = DenseView(values, observed, avail, self.series_ids, periods, first, last)
        object.__setattr__(self, "_dense", view)
        return view

    @classmethod
    def from_dense(
        cls,
        view: DenseView,
        *,
        freq: str,
        season_length: int | None = None,
        attributes: pd.DataFrame | None = None,
        levels: tuple[str, ...] = (),
        name: str = "panel",
        meta: dict[str, Any] | None = None,
    ) -> Panel:
        """Rebuild a panel from a dense view (the inverse of :meth:`dense`)."""
        s, t = np.nonzero(view.observed)
        frame = pd.DataFrame(
            {
                "series_id": view.series_ids[s],
                "period": view.periods[t],
                "value": view.values[s, t],
                "available_at": view.available_at[s, t],
            }
        )
        return cls.from_long(
            frame,
            available_at_col="available_at",
            freq=freq,
            season_length=season_length,
            attributes=attributes,
            levels=levels,
            name=name,
            meta=meta,
        )

    def subset(self, series_ids: list[str] | np.ndarray, *, name: str | None = None) -> Panel:
        """A panel restricted to some series (validation already holds, so none is repeated)."""
        ids = pd.Index(np.asarray(series_ids, dtype=object))
        unknown = ids.difference(self.attributes.index)
        if len(unknown):
            raise PanelValidationError(
                f"panel {self.name!r}: subset names {len(unknown)} series the panel does not hold, e.g. "
                f"{list(unknown[:MAX_EXAMPLES])}"
            )
        ids = ids.sort_values()
        data = self.data[self.data["series_id"].isin(ids)].reset_index(drop=True)
        return Panel(
            data=data,
            attributes=self.attributes.loc[ids],
            freq=self.freq,
            season_length=self.season_length,
            levels=self.levels,
            name=name or self.name,
            meta=dict(self.meta),
        )

    def describe(self) -> dict[str, Any]:
        """Series count, length range, frequency, season length and provenance flags."""
        lengths = self.lengths()
        return {
            "name": self.name,
            "n_series": self.n_series,
            "n_observations": int(len(self.data)),
            "length_min": int(lengths.min()),
            "length_max": int(lengths.max()),
            "freq": self.freq,
            "season_length": self.season_length,
            "levels": list(self.levels),
            "start": str(self.data["period"].min().date()),
            "end": str(self.data["period"].max().date()),
            "synthetic": bool(self.meta.get("synthetic", False)),
            "redistributable": bool(self.meta.get("redistributable", True)),
        }
