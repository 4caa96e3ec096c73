"""The contracts that several layers read: the score-set columns and the protocol's overlap lag.

Neutral: imports nothing from tycheon, so the metrics (which read score-set columns), the engine (which
writes them), the protocols and the Diebold-Mariano test (which both need the overlap lag) share one
definition without importing one another.
"""

from __future__ import annotations

import math

from tycheon.errors import InputError

__all__ = [
    "KEY_COLUMNS",
    "SCORESET_COLUMNS",
    "SCORESET_SCHEMA",
    "SCORESET_SCHEMA_KEY",
    "TEXT_COLUMNS",
    "is_quantile_column",
    "overlap_lags",
    "quantile_column",
]

SCORESET_SCHEMA = "2.0.0"
"""Version of the score-set contract below. 2.0.0: the text columns are categoricals with sorted
categories (parquet: dictionary-encoded) and ``step`` / ``season_length`` are int16; 1.x (no version
recorded in the file) had object text columns and int64 integers. Readers accept both
(:func:`tycheon.backtest.scoreset.conform_table`)."""

SCORESET_SCHEMA_KEY = b"tycheon_scoreset_schema"
"""Parquet schema-metadata key under which a score-set file (engine cache or results sidecar) records
:data:`SCORESET_SCHEMA`."""

TEXT_COLUMNS = ("model", "unit", "series_id", "demand_class")
"""The text columns: ``category`` dtype whose categories are the sorted distinct values present, so the
same rows give the same codes and a ``sort=True`` group-by orders groups as it orders strings."""

SCORESET_COLUMNS: dict[str, str] = {
    "model": "category",
    "unit": "category",
    "series_id": "category",
    "origin": "datetime64[ns]",
    "step": "int16",
    "target_period": "datetime64[ns]",
    "actual": "float64",
    "point": "float64",
    "available_at": "datetime64[ns]",
    "demand_class": "category",
    "season_length": "int16",
    "scale_mae": "float64",
    "scale_rmse": "float64",
    "weight": "float64",
    "lo80": "float64",
    "hi80": "float64",
    "lo95": "float64",
    "hi95": "float64",
    "has_band": "bool",
    "has_quantiles": "bool",
    "has_samples": "bool",
}
"""Score-set column -> dtype, in order; quantile columns (:func:`quantile_column`) follow. The meaning of
each column is documented in :mod:`tycheon.backtest.scoreset`."""

KEY_COLUMNS = ("model", "unit", "series_id", "origin", "step")
"""The columns that identify one score-set row."""


def quantile_column(level: float) -> str:
    """Column name for a quantile level, e.g. ``q0.1`` or ``q0.975``."""
    return f"q{float(level):.6g}"


def is_quantile_column(name: str) -> bool:
    """Whether ``name`` is a quantile column (:func:`quantile_column`: ``q`` then the level)."""
    return name.startswith("q") and name[1:2].isdigit()


def overlap_lags(horizon: int, stride: int = 1) -> int:
    r"""Number of lags whose targets overlap, the DM truncation lag.

    .. math:: L = \lceil h/\text{stride}\rceil - 1

    References
    ----------
    ADR-0006 decision 5.
    """
    if int(horizon) != horizon or horizon < 1:
        raise InputError(f"horizon must be a positive integer; got {horizon!r}")
    if int(stride) != stride or stride < 1:
        raise InputError(f"stride must be a positive integer; got {stride!r}")
    return math.ceil(horizon / stride) - 1
