"""Small helpers shared by the roster modules: parameter checks, flat forecasts, period indexes."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tycheon._typing import FloatArray

__all__ = ["check_positive_int", "check_unit_interval", "flat", "period_index"]


def flat(level: FloatArray, horizon: int) -> FloatArray:
    """The level ``[series]`` repeated over the horizon: ``[series, horizon]``."""
    return np.repeat(level[:, None], horizon, axis=1)  # [series, horizon]


def check_positive_int(name: str, value: int) -> None:
    """Refuse anything but a positive integer (``bool`` included) for the parameter ``name``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def check_unit_interval(name: str, value: float) -> None:
    """Refuse anything but a number in (0, 1] for the parameter ``name``."""
    if isinstance(value, bool) or not (isinstance(value, (int, float)) and 0.0 < float(value) <= 1.0):
        raise ValueError(f"{name} must be a number in (0, 1], got {value!r}")


def period_index(periods: pd.DatetimeIndex, freq: str) -> pd.Index:
    """``periods`` (period starts) as a :class:`pandas.PeriodIndex`, or a :class:`pandas.RangeIndex`
    of positions where ``freq`` has no period equivalent (e.g. ``"SMS"``, ``"2MS"``)."""
    try:
        return pd.DatetimeIndex(periods, freq=freq).to_period()
    except (ValueError, TypeError):
        return pd.RangeIndex(len(periods))
