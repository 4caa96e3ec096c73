"""Checks and parsing of the long table that :meth:`~tycheon.data.panel.Panel.from_long` turns into a panel.

Each function reads one input column (series ids, period stamps, values) or one input rule (the NaN policy,
the frequency, the attribute table) and refuses bad input with a :class:`PanelValidationError` that names
the series and rows at fault and says what is accepted. The rules themselves are documented in
:mod:`tycheon.data.panel`; this module knows nothing of :class:`~tycheon.data.panel.Panel`, which imports it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from pandas.tseries.offsets import BaseOffset

from tycheon.errors import InputError

__all__ = [
    "EDGE_NAN",
    "MAX_ABS_VALUE",
    "MAX_EXAMPLES",
    "NAN_POLICIES",
    "PanelValidationError",
    "apply_nan_policy",
    "parse_periods",
    "parse_values",
    "resolve_freq",
    "row_examples",
    "series_codes",
    "validate_attributes",
]

NAN_POLICIES: tuple[str, ...] = ("raise", "zero", "drop_series")
EDGE_NAN: tuple[str, ...] = ("policy", "unlisted")

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

#: Rows (or series) a message shows before "and N more".
MAX_EXAMPLES = 5
#: Largest magnitude of a value: errors of forecasts (at most a few orders above the data) are squared and
#: summed over up to billions of terms, which stays below float64's largest number (1.8e308) from here.
MAX_ABS_VALUE = 1e100


class PanelValidationError(InputError):
    """Raised when a long table cannot become a panel; the message names the series and rows at fault."""


def row_examples(frame: pd.DataFrame, columns: list[str]) -> str:
    """Up to :data:`MAX_EXAMPLES` rows of ``frame`` as ``"col=value, ... (row idx)"`` text, for a message."""
    head = frame[columns].head(MAX_EXAMPLES)
    rows = "; ".join(", ".join(f"{c}={row[c]!s}" for c in columns) + f" (row {idx})" for idx, row in head.iterrows())
    more = f" and {len(frame) - MAX_EXAMPLES} more" if len(frame) > MAX_EXAMPLES else ""
    return rows + more


def series_codes(raw: pd.Series, column: str, name: str) -> tuple[np.ndarray, np.ndarray]:
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
        rows = list(raw.index[missing][:MAX_EXAMPLES])
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


def parse_periods(raw: pd.Series, column: str, name: str) -> pd.Series:
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
        rows = list(raw.index[missing][:MAX_EXAMPLES])
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


def parse_values(raw: pd.Series, rows: Callable[[], pd.DataFrame], column: str, name: str) -> pd.Series:
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
            + row_examples(
                pd.DataFrame({"series_id": rows()["series_id"], "value": raw})[is_bool], ["series_id", "value"]
            )
        )
    numeric = pd.to_numeric(raw, errors="coerce")
    bad = numeric.isna() & raw.notna()
    if bad.any():
        raise PanelValidationError(
            f"panel {name!r}: column {column!r} has non-numeric values; numbers (or NaN) are accepted: "
            + row_examples(pd.DataFrame({"series_id": rows()["series_id"], "value": raw})[bad], ["series_id", "value"])
        )
    values = numeric.astype(np.float64)
    inf = np.isinf(values.to_numpy())
    if inf.any():
        raise PanelValidationError(
            f"panel {name!r}: infinite values are not accepted: " + row_examples(rows()[inf], ["series_id", "period"])
        )
    huge = np.abs(values.to_numpy()) > MAX_ABS_VALUE  # NaN compares False
    if huge.any():
        raise PanelValidationError(
            f"panel {name!r}: column {column!r} has values beyond +-{MAX_ABS_VALUE:g}, whose squared errors and "
            "their sums would overflow float64 (largest 1.8e308); values within that are accepted: divide the "
            "column by a power of ten (scaled metrics such as MASE and RMSSE do not change): "
            + row_examples(pd.DataFrame({"series_id": rows()["series_id"], "value": raw})[huge], ["series_id", "value"])
        )
    return values


def apply_nan_policy(
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
                + row_examples(nan_rows, ["series_id", "period"])
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


def resolve_freq(df: pd.DataFrame, freq: str | None, name: str) -> tuple[BaseOffset, str]:
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
        stamps = stamps_all[off_grid][:MAX_EXAMPLES]
        raise PanelValidationError(
            f"panel {name!r}: periods not on the {freq!r} grid (mixed frequency or wrong period stamps), "
            f"e.g. {[str(s) for s in stamps]}; period stamps must be the start of each period"
        )
    return offset, freq


def validate_attributes(
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
            dups = list(attrs.index[attrs.index.duplicated()][:MAX_EXAMPLES])
            raise PanelValidationError(f"panel {name!r}: attributes repeat series {dups}")
        absent = ids.difference(attrs.index)
        if len(absent):
            raise PanelValidationError(
                f"panel {name!r}: attributes lack {len(absent)} series of the table, e.g. {list(absent[:MAX_EXAMPLES])}"
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
