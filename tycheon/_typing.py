"""Shared type aliases: option literals and named array shapes, kept in one place."""

from __future__ import annotations

from typing import Literal, TypeAlias

import numpy as np
import numpy.typing as npt

FloatArray: TypeAlias = npt.NDArray[np.float64]
BoolArray: TypeAlias = npt.NDArray[np.bool_]
IntArray: TypeAlias = npt.NDArray[np.int64]

Seed: TypeAlias = "int | np.random.Generator | None"

NanPolicy: TypeAlias = Literal["raise", "zero", "drop_series"]
"""How a panel treats NaN values: ``raise`` refuses them, ``zero`` reads them as zero demand,
``drop_series`` drops every series holding one (counted and listed)."""

EdgeNan: TypeAlias = Literal["policy", "unlisted"]
"""Leading/trailing NaN runs of a series: ``policy`` treats them like any NaN (the NaN policy decides),
``unlisted`` reads them as periods before the series was listed / after it was delisted (not observed)."""

DemandClass: TypeAlias = Literal["smooth", "erratic", "intermittent", "lumpy", "undefined"]

Backend: TypeAlias = Literal["sequential", "joblib", "dask", "auto"]

ProtocolMode: TypeAlias = Literal["benchmark", "analysis"]

Alternative: TypeAlias = Literal["two-sided", "less", "greater"]


def as_generator(seed: int | np.random.Generator | None) -> np.random.Generator:
    """Return a Generator from an int seed, an existing Generator, or ``None`` (fresh entropy)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or isinstance(seed, (int, np.integer)):
        return np.random.default_rng(seed)
    raise TypeError(f"seed must be an int, a numpy Generator or None; got {type(seed).__name__}")
