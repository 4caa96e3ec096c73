"""The contracts that several layers read: the score-set columns and the protocol's overlap lag.

Neutral: imports nothing from tycheon, so the metrics (which read score-set columns), the engine (which
writes them), the protocols and the Diebold-Mariano test (which both need the overlap lag) share one
definition without importing one another.
"""

from __future__ import annotations

import math

from tycheon.errors import InputError

__all__ = ["KEY_COLUMNS", "SCORESET_COLUMNS", "overlap_lags", "quantile_column"]

SCORESET_COLUMNS: dict[str, str] = {
    "model": "object",
    "unit": "object",
    "series_id": "object",
    "origin": "datetime64[ns]",
    "step": "int64",
    "target_period": "datetime64[ns]",
    "actual": "float64",
    "point": "float64",
    "available_at": "datetime64[ns]",
    "demand_class": "object",
    "season_length": "int64",
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
