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

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from pandas.tseries.offsets import BaseOffset

from tycheon._typing import BoolArray, EdgeNan, FloatArray, IntArray, NanPolicy
from tycheon.errors import InputError

__all__ = [
    "DEFAULT_SEASON_LENGTH",
    "EDGE_NAN",
    "MAX_ABS_VALUE",
    "NAN_POLICIES",
    "DenseView",
    "Panel",
    "PanelValidationError",
]

NAN_POLICIES: tuple[str, ...] = ("raise", "zero", "drop_series")
EDGE_NAN: tuple[str, ...] = ("policy", "unlisted")

LONG_COLUMNS = ("series_id", "period", "value", "available_at")

DEFAULT_SEASON_LENGTH: dict[str, int] = {
    "h": 24,
    "D": 7,
    "W": 52,
    "MS": 12,
    "QS": 4,
    "YS": 1,
}

# Period stamps are period *starts*: the default publication time is ``period + freq``, which for an
# end-anchored alias would land a whole period late. These aliases are refused with the start-anchored
# alternative named.
_END_ANCHORED = {
    "M": "MS",
    "ME": "MS",
    "BM": "MS",
    "BME": "MS",
    "Q": "QS",
    "QE": "QS",
    "BQ": "QS",
    "BQE": "QS",
    "A": "YS",
    "Y": "YS",
    "YE": "YS",
    "BA": "YS",
    "BY": "YS",
    "BYE": "YS",
}

_MAX_EXAMPLES = 5
#: Largest magnitude of a value: errors of forecasts (at most a few orders above the data) are squared and
#: summed over up to billions of terms, which stays below float64's largest number (1.8e308) from here.
MAX_ABS_VALUE = 1e100


class PanelValidationError(InputError):
    """Raised when a long table cannot become a panel; the message names the series and rows at fault."""


def _examples(frame: pd.DataFrame, columns: list[str]) -> str:
    head = frame[columns].head(_MAX_EXAMPLES)
    rows = "; ".join(", ".join(f"{c}={row[c]!s}" for c in columns) + f" (row {idx})" for idx, row in head.iterrows())
    more = f" and {len(frame) - _MAX_EXAMPLES} more" if len(frame) > _MAX_EXAMPLES else ""
    return rows + more


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
        codes, id_values = _series_codes(frame[series_col], series_col, name)
        periods = _periods(frame[period_col], period_col, name)
        period_ns = periods.to_numpy().astype("datetime64[ns]").view(np.int64)

        def rows() -> pd.DataFrame:  # the input rows' ids and periods, only built for an error message
            return pd.DataFrame(
                {"series_id": id_values[codes], "period": period_ns.view("datetime64[ns]")}, index=frame.index
            )

        values = _values(frame[value_col], rows, value_col, name)
        meta = dict(meta or {})
        meta.setdefault("warnings", [])

        order = np.lexsort((period_ns, codes))  # by series (sorted ids), then period
        same = (codes[order][1:] == codes[order][:-1]) & (period_ns[order][1:] == period_ns[order][:-1])
        if same.any():
            dup = np.zeros(len(codes), dtype=bool)
            dup[order[1:][same]] = dup[order[:-1][same]] = True
            raise PanelValidationError(
                f"panel {name!r}: duplicate (series, period) rows; each series may have one value per period: "
                + _examples(rows()[dup].sort_values(["series_id", "period"]), ["series_id", "period"])
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
            df = _apply_nan_policy(df, nan_policy=nan_policy, edge_nan=edge_nan, name=name, meta=meta)
            offset, freq = _resolve_freq(df, freq, name)
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
            offset, freq = _resolve_freq(pd.DataFrame({"period": stamp_index}), freq, name)
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
                    + _examples(shown_rows[avail.isna().to_numpy()], ["series_id", "period"])
                )
            available = avail.to_numpy().astype("datetime64[ns]")
            period_end = (stamp_index + offset).to_numpy()[at_stamp]
            early = available < period_end
            if early.any():
                shown = shown_rows[early].assign(available_at=available[early], period_end=period_end[early])
                raise PanelValidationError(
                    f"panel {name!r}: available_at is before the end of the period it describes "
                    "(a value cannot be published before its period is over; accepted: available_at >= "
                    "period end): " + _examples(shown, ["series_id", "period", "available_at", "period_end"])
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
                f"nan_policy='zero'): {list(bad_ids[:_MAX_EXAMPLES])}"
            )

        # the four fresh arrays become the columns as they are (copy=False: no consolidating copy of the
        # two datetime columns into one block, no second frame for the column order; 0.4 s of 0.9 s at
        # 1.9M rows)
        df = pd.DataFrame(
            {"series_id": id_values[sid], "period": period_col_values, "value": value, "available_at": available},
            copy=False,
        )
        attrs = _validate_attributes(attributes, pd.Index(uniques), tuple(levels), name)
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
        as its dense view is: the min and max of a 2M-row period column took 18 ms each time, and a run
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
                f"{list(unknown[:_MAX_EXAMPLES])}"
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


def _series_codes(raw: pd.Series, column: str, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Series ids as strings: ``(codes, ids)`` with ``ids`` the sorted distinct ids (object array) and
    ``ids[codes]`` the id of each row. A missing id is refused (``astype(str)`` would name it "nan").
    Distinct raw values that read as the same string (``1`` and ``"1"``) are one series."""
    try:
        raw_codes, raw_uniques = pd.factorize(raw)  # a missing id gets code -1 (one hash pass, no isna pass)
    except TypeError as err:  # a struct, list or map column (parquet) holds dicts and arrays
        raise PanelValidationError(
            f"panel {name!r}: column {column!r} holds {_nested_example(raw)}, not series ids; text or integer "
            "ids are accepted (flatten a struct or list column into one text column)"
        ) from err
    missing = raw_codes < 0
    if missing.any():
        rows = list(raw.index[missing][:_MAX_EXAMPLES])
        raise PanelValidationError(
            f"panel {name!r}: {int(missing.sum())} row(s) have no series id in column {column!r} "
            f"(rows {rows}); every row needs the id of its series"
        )
    text = pd.Index(raw_uniques).astype(str).to_numpy(dtype=object)
    text_codes, ids = pd.factorize(text, sort=True)
    return text_codes[raw_codes].astype(np.int64), np.asarray(ids, dtype=object)


def _nested_example(raw: pd.Series) -> str:
    """``"dict values (e.g. {'a': 1})"``: the type and first value that cannot be an id (for a message)."""
    for value in raw:
        try:
            hash(value)
        except TypeError:
            text = repr(value.tolist() if isinstance(value, np.ndarray) else value)
            kind = "list" if isinstance(value, np.ndarray) else type(value).__name__
            return f"{kind} values (e.g. {text[:60]})"
    return "values that cannot be compared"


def _periods(raw: pd.Series, column: str, name: str) -> pd.Series:
    """Period stamps as naive datetimes (UTC wall time for zone-aware input, which must be one zone).

    Whole numbers are read by the rule of :func:`_numeric_periods` (years, YYYYMM or YYYYMMDD), never as
    nanoseconds since 1970 (pandas' reading)."""
    if isinstance(raw.dtype, pd.DatetimeTZDtype):
        return raw.dt.tz_convert(None)
    if pd.api.types.is_datetime64_dtype(raw.dtype):
        out = raw
    elif pd.api.types.is_numeric_dtype(raw.dtype) and not pd.api.types.is_bool_dtype(raw.dtype):
        out = _numeric_periods(raw, column, name)
    else:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # pandas warns before refusing mixed offsets
                out = pd.to_datetime(raw)
        except (ValueError, TypeError) as err:
            if "zone" in str(err).lower() or "tz-" in str(err).lower():
                raise _mixed_zones(column, name) from err
            bad = _first_unparseable(raw)
            raise PanelValidationError(
                f"panel {name!r}: column {column!r} has a value that is not a date: {bad}; dates such as "
                "2024-01-01 (or timestamps) are accepted"
            ) from err
        if not (pd.api.types.is_datetime64_dtype(out.dtype) or isinstance(out.dtype, pd.DatetimeTZDtype)):
            raise _mixed_zones(column, name)  # pandas keeps mixed offsets as objects
        if isinstance(out.dtype, pd.DatetimeTZDtype):
            out = out.dt.tz_convert(None)
    missing = out.isna().to_numpy()
    if missing.any():
        rows = list(raw.index[missing][:_MAX_EXAMPLES])
        raise PanelValidationError(
            f"panel {name!r}: {int(missing.sum())} row(s) have no date in column {column!r} (rows {rows})"
        )
    return out


# Whole-number period stamps: (rule, smallest, largest), tried in order; the range of each is the span of
# pandas' nanosecond timestamps (1677-09-21 .. 2262-04-11) in whole years
_NUMERIC_PERIODS = (("%Y", 1678, 2261), ("%Y%m", 167801, 226112), ("%Y%m%d", 16780101, 22611231))
_NUMERIC_RULE = (
    "whole numbers are read as years (1678..2261, annual periods), YYYYMM (201901) or YYYYMMDD (20190101); "
    "epoch seconds or milliseconds are refused, their unit cannot be told from the numbers: convert them "
    "(pandas.to_datetime(x, unit='s')) or give dates such as 2024-01-01"
)


def _numeric_periods(raw: pd.Series, column: str, name: str) -> pd.Series:
    """Numeric period stamps read by one rule for the whole column (:data:`_NUMERIC_RULE`): all values in the
    year range are years (the start of each year), else all in the YYYYMM range with months 1..12, else all
    valid YYYYMMDD dates; anything else is refused. Missing numbers become missing dates."""
    values = raw.to_numpy(dtype=np.float64, na_value=np.nan)
    present = values[~np.isnan(values)]
    whole = present[np.isfinite(present) & (present == np.floor(present))]
    if len(whole) < len(present):
        bad = float(present[~np.isin(present, whole)][0])
        raise PanelValidationError(
            f"panel {name!r}: column {column!r} holds numbers that are not dates (e.g. {bad!r}); {_NUMERIC_RULE}"
        )
    codes, uniques = pd.factorize(values)  # the few distinct stamps; a missing one gets code -1
    stamps = None
    for fmt, low, high in _NUMERIC_PERIODS:
        if len(uniques) and (uniques.min() < low or uniques.max() > high):
            continue
        text = pd.Index(uniques.astype(np.int64)).astype(str)
        parsed = pd.to_datetime(text, format=fmt, errors="coerce")
        if not parsed.isna().any():
            stamps = parsed
            break
    if stamps is None:
        raise PanelValidationError(
            f"panel {name!r}: column {column!r} holds whole numbers from {int(uniques.min())} to "
            f"{int(uniques.max())}, which are not dates; {_NUMERIC_RULE}"
        )
    out = np.full(len(values), np.datetime64("NaT"), dtype="datetime64[ns]")
    out[codes >= 0] = stamps.to_numpy(dtype="datetime64[ns]")[codes[codes >= 0]]
    return pd.Series(out, index=raw.index, name=raw.name)


def _mixed_zones(column: str, name: str) -> PanelValidationError:
    return PanelValidationError(
        f"panel {name!r}: column {column!r} mixes time zones (or zone-aware and naive stamps); give every "
        "period in one zone, or without a zone"
    )


def _first_unparseable(raw: pd.Series) -> str:
    for idx, value in raw.items():
        if pd.isna(value):
            continue
        try:
            pd.Timestamp(value)
        except (ValueError, TypeError):
            return f"{value!r} (row {idx})"
    return "(a value pandas cannot read as a date)"


def _values(raw: pd.Series, rows: Callable[[], pd.DataFrame], column: str, name: str) -> pd.Series:
    """Numeric float64 values (NaN kept for the NaN policy); booleans, text and infinities refused
    (``rows()``: the rows' ``series_id`` and ``period``, for the message)."""
    is_bool = (
        raw.map(lambda v: isinstance(v, (bool, np.bool_))).to_numpy(dtype=bool)
        if raw.dtype == object
        else np.full(len(raw), pd.api.types.is_bool_dtype(raw.dtype))
    )
    if is_bool.any():
        raise PanelValidationError(
            f"panel {name!r}: column {column!r} holds booleans (True/False), not quantities; convert them "
            "to numbers if they are 0/1 demand: "
            + _examples(pd.DataFrame({"series_id": rows()["series_id"], "value": raw})[is_bool], ["series_id", "value"])
        )
    numeric = pd.to_numeric(raw, errors="coerce")
    bad = numeric.isna() & raw.notna()
    if bad.any():
        raise PanelValidationError(
            f"panel {name!r}: column {column!r} has non-numeric values; numbers (or NaN) are accepted: "
            + _examples(pd.DataFrame({"series_id": rows()["series_id"], "value": raw})[bad], ["series_id", "value"])
        )
    values = numeric.astype(np.float64)
    inf = np.isinf(values.to_numpy())
    if inf.any():
        raise PanelValidationError(
            f"panel {name!r}: infinite values are not accepted: " + _examples(rows()[inf], ["series_id", "period"])
        )
    huge = np.abs(values.to_numpy()) > MAX_ABS_VALUE  # NaN compares False
    if huge.any():
        raise PanelValidationError(
            f"panel {name!r}: column {column!r} has values beyond +-{MAX_ABS_VALUE:g}, whose squared errors and "
            "their sums would overflow float64 (largest 1.8e308); values within that are accepted: divide the "
            "column by a power of ten (scaled metrics such as MASE and RMSSE do not change): "
            + _examples(pd.DataFrame({"series_id": rows()["series_id"], "value": raw})[huge], ["series_id", "value"])
        )
    return values


def _apply_nan_policy(
    df: pd.DataFrame, *, nan_policy: str, edge_nan: str, name: str, meta: dict[str, Any]
) -> pd.DataFrame:
    """Apply the edge rule, then the NaN policy, to the sorted long table; record what was done in meta."""
    dropped: list[str] = []
    nan = df["value"].isna()
    if edge_nan == "unlisted" and nan.any():
        codes = pd.factorize(df["series_id"])[0]
        seen = (~nan).groupby(codes, observed=True)
        started = seen.cumsum().gt(0)
        not_ended = (~nan)[::-1].groupby(codes[::-1], observed=True).cumsum()[::-1].gt(0)
        keep = (started & not_ended).to_numpy()
        empty = sorted(set(df["series_id"]) - set(df["series_id"][keep]))
        dropped.extend(empty)
        meta["unlisted_periods"] = int((~keep).sum())
        df = df[keep]
        nan = df["value"].isna()
    nan_rows = df[nan.to_numpy()]
    if len(nan_rows):
        if nan_policy == "raise":
            first = nan_rows.iloc[0]
            raise PanelValidationError(
                f"panel {name!r}: {len(nan_rows)} NaN value(s) under nan_policy='raise', the first in series "
                f"{first['series_id']!r} at period {first['period'].date()} (use nan_policy='zero' to read "
                "them as zero demand, 'drop_series' to drop those series"
                + (
                    ""
                    if edge_nan == "unlisted"
                    else ", or edge_nan='unlisted' for missing periods before listing / after delisting"
                )
                + "): "
                + _examples(nan_rows, ["series_id", "period"])
            )
        if nan_policy == "drop_series":
            holding = sorted(set(nan_rows["series_id"]))
            dropped.extend(holding)
            df = df[~df["series_id"].isin(holding)]
        else:
            df = df.assign(value=df["value"].fillna(0.0))
    meta["nan_filled"] = int(len(nan_rows)) if nan_policy == "zero" else 0
    if dropped:
        dropped = sorted(set(dropped))
        meta["dropped_series"] = dropped
        shown = ", ".join(dropped)  # all of them: the warning is where results list the dropped series
        meta["warnings"] = [
            *meta.get("warnings", []),
            f"dropped series: {len(dropped)} series without usable values were dropped "
            f"(nan_policy={nan_policy!r}, edge_nan={edge_nan!r}): {shown}",
        ]
    if len(df) == 0:
        raise PanelValidationError(
            f"panel {name!r}: no rows left after the NaN policy ({nan_policy!r}, edge_nan={edge_nan!r}); "
            "every series held a NaN"
        )
    return df


def _resolve_freq(df: pd.DataFrame, freq: str | None, name: str) -> tuple[BaseOffset, str]:
    if freq is None:
        inferred: dict[str, str] = {}
        for sid, periods in df.groupby("series_id", sort=False, observed=True)["period"]:
            if len(periods) >= 3:
                f = pd.infer_freq(pd.DatetimeIndex(periods))
                if f is None:
                    raise PanelValidationError(
                        f"panel {name!r}: series {sid!r} has irregular periods; no frequency can be inferred"
                    )
                inferred[str(sid)] = f
        kinds = sorted(set(inferred.values()))
        if not kinds:
            raise PanelValidationError(f"panel {name!r}: no series has 3 periods to infer a frequency from; pass freq=")
        if len(kinds) > 1:
            by_kind = {k: [s for s, v in inferred.items() if v == k][:3] for k in kinds}
            raise PanelValidationError(
                f"panel {name!r}: mixed frequency across series {by_kind}; one panel holds one frequency"
            )
        freq = kinds[0]
    multiple = freq[: len(freq) - len(freq.lstrip("0123456789"))]  # "2ME" is as end-anchored as "ME"
    base = freq[len(multiple) :].split("-")[0]
    if base in _END_ANCHORED:
        raise PanelValidationError(
            f"panel {name!r}: frequency {freq!r} stamps periods at their end; a panel's period stamps are "
            f"period starts (use {multiple + _END_ANCHORED[base]!r} with the first day of each period)"
        )
    try:
        offset = pd.tseries.frequencies.to_offset(freq)
    except ValueError as err:
        raise PanelValidationError(f"panel {name!r}: unknown frequency {freq!r}") from err
    stamps_all = pd.DatetimeIndex(pd.unique(df["period"]))
    off_grid = ~np.fromiter((offset.is_on_offset(ts) for ts in stamps_all), dtype=bool, count=len(stamps_all))
    if off_grid.any():
        stamps = stamps_all[off_grid][:_MAX_EXAMPLES]
        raise PanelValidationError(
            f"panel {name!r}: periods not on the {freq!r} grid (mixed frequency or wrong period stamps), "
            f"e.g. {[str(s) for s in stamps]}; period stamps must be the start of each period"
        )
    return offset, freq


def _validate_attributes(
    attributes: pd.DataFrame | None, ids: pd.Index, levels: tuple[str, ...], name: str
) -> pd.DataFrame:
    if attributes is None:
        attrs = pd.DataFrame(index=ids)
    else:
        attrs = attributes.copy()
        if "series_id" in attrs.columns:
            attrs = attrs.set_index("series_id")
        attrs.index = attrs.index.astype(str)
        if attrs.index.duplicated().any():
            dups = list(attrs.index[attrs.index.duplicated()][:_MAX_EXAMPLES])
            raise PanelValidationError(f"panel {name!r}: attributes repeat series {dups}")
        absent = ids.difference(attrs.index)
        if len(absent):
            raise PanelValidationError(
                f"panel {name!r}: attributes lack {len(absent)} series of the table, e.g. "
                f"{list(absent[:_MAX_EXAMPLES])}"
            )
        attrs = attrs.loc[ids]
    attrs.index.name = "series_id"
    missing_levels = [lv for lv in levels if lv not in attrs.columns]
    if missing_levels:
        raise PanelValidationError(
            f"panel {name!r}: hierarchy level(s) {missing_levels} are not attribute columns {list(attrs.columns)}"
        )
    for lv in levels:
        if attrs[lv].isna().any():
            raise PanelValidationError(f"panel {name!r}: hierarchy level {lv!r} has missing values")
    if "weight" in attrs.columns:
        w = pd.to_numeric(attrs["weight"], errors="coerce")
        if w.isna().any() or (w < 0).any() or np.isinf(w).any():
            raise PanelValidationError(f"panel {name!r}: weight must be finite and >= 0 for every series")
    return attrs
