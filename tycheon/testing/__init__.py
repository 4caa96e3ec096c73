"""Reusable test helpers: the poisoning canary, a cheating forecaster and small toy models and panels.

Nothing here is imported by the library itself; it exists so that every forecaster (built-in or a user's)
can be held to the same leakage test (ADR-0006 decision 4).
"""

from tycheon.testing.canary import CanaryFailure, assert_canary, poison_after
from tycheon.testing.cheating import CheatingForecaster
from tycheon.testing.toys import (
    ConstantForecaster,
    GlobalMeanForecaster,
    MeanForecaster,
    NaiveForecaster,
    toy_panel,
)

__all__ = [
    "CanaryFailure",
    "CheatingForecaster",
    "ConstantForecaster",
    "GlobalMeanForecaster",
    "MeanForecaster",
    "NaiveForecaster",
    "assert_canary",
    "poison_after",
    "toy_panel",
]
