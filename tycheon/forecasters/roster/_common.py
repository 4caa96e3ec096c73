"""Small helpers shared by the roster modules: parameter checks, flat forecasts, period indexes, and
the relay of a wrapped library's warnings."""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from tycheon._typing import FloatArray
from tycheon.forecasters.base import Availability

__all__ = [
    "NumericalWarning",
    "check_positive_int",
    "check_unit_interval",
    "flat",
    "period_index",
    "relay_library_warnings",
]

# A wrapped library's notices about its own API and conventions (e.g. sktime's "the default of config
# remember_data will change"): they say nothing about this fit, and would repeat for every series.
_API_NOTICES: tuple[type[Warning], ...] = (FutureWarning, DeprecationWarning, PendingDeprecationWarning)


class NumericalWarning(RuntimeWarning):
    """A numerical problem inside a wrapped library's fit (division by zero, invalid value, failed
    convergence), relayed with the forecaster id and the library file that raised it."""


def package_availability(module: str, *, install_hint: str) -> Availability:
    """Available when ``module`` can be imported; otherwise the reason names the package and the fix."""
    if importlib.util.find_spec(module) is None:
        return Availability(ok=False, reason=f"package '{module}' is not installed ({install_hint})")
    return Availability(ok=True)


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


def _is_numerical(category: type[Warning]) -> bool:
    # statsmodels' and scikit-learn's ConvergenceWarning derive from UserWarning, not RuntimeWarning
    return issubclass(category, RuntimeWarning) or category.__name__ == "ConvergenceWarning"


@contextmanager
def relay_library_warnings(source: str) -> Iterator[None]:
    """Run a wrapped library's fit, dropping its API notices and relaying the rest once each.

    Inside the block every warning is recorded. On exit, ``FutureWarning``, ``DeprecationWarning`` and
    ``PendingDeprecationWarning`` are dropped; numerical ones (``RuntimeWarning``, ``ConvergenceWarning``)
    are re-issued as :class:`NumericalWarning` and any other keeps its category, each distinct message
    once, prefixed with ``source`` (the forecaster id) and suffixed with the library file that raised it.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    relayed: set[tuple[type[Warning], str]] = set()
    for item in caught:
        if issubclass(item.category, _API_NOTICES):
            continue
        category = NumericalWarning if _is_numerical(item.category) else item.category
        where = "/".join(Path(item.filename).parts[-2:])
        text = f"{source}: {item.message} ({item.category.__name__} in {where})"
        if (category, text) not in relayed:
            relayed.add((category, text))
            warnings.warn(text, category, stacklevel=3)
