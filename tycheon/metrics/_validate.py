"""Input checks shared by the public metric and test functions (kernels never call these)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tycheon.metrics.errors import MetricInputError

__all__ = ["as_float_array", "check_finite", "same_shape"]


def as_float_array(x: Any, name: str, *, ndim: tuple[int, ...] | None = None) -> np.ndarray:
    """``x`` as a float64 array, or a :class:`MetricInputError` naming the argument."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise MetricInputError(f"{name} must be numeric array-like; got {type(x).__name__}") from err
    if ndim is not None and arr.ndim not in ndim:
        raise MetricInputError(f"{name} must have {' or '.join(map(str, ndim))} dimension(s); got shape {arr.shape}")
    return arr


def check_finite(arr: np.ndarray, name: str) -> None:
    """Refuse NaN or infinite values, saying how many and where the first one is."""
    bad = ~np.isfinite(arr)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise MetricInputError(
            f"{name} holds {int(bad.sum())} non-finite value(s) (first at index {first}); "
            "drop or impute them before scoring"
        )


def same_shape(**arrays: np.ndarray) -> None:
    """All arrays share one shape, or a :class:`MetricInputError` listing the shapes."""
    shapes = {k: v.shape for k, v in arrays.items()}
    if len(set(shapes.values())) > 1:
        raise MetricInputError(f"shapes must match; got {shapes}")
