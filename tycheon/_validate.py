"""Input checks shared by the public metric, test and analysis functions (kernels never call these).

Neutral: it imports only :mod:`tycheon.errors`, so every layer may use it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tycheon.errors import InputError, ZeroScaleError

__all__ = ["as_float_array", "as_output", "check_finite", "check_scale", "label_codes", "same_shape"]


def as_float_array(x: Any, name: str, *, ndim: tuple[int, ...] | None = None) -> np.ndarray:
    """``x`` as a float64 array, or a :class:`~tycheon.errors.InputError` naming the argument."""
    try:
        arr = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise InputError(f"{name} must be numeric array-like; got {type(x).__name__}") from err
    if ndim is not None and arr.ndim not in ndim:
        raise InputError(f"{name} must have {' or '.join(map(str, ndim))} dimension(s); got shape {arr.shape}")
    return arr


def check_finite(arr: np.ndarray, name: str) -> None:
    """Refuse NaN or infinite values, saying how many and where the first one is."""
    bad = ~np.isfinite(arr)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise InputError(
            f"{name} holds {int(bad.sum())} non-finite value(s) (first at index {first}); "
            "drop or impute them before scoring"
        )


def same_shape(**arrays: np.ndarray) -> None:
    """All arrays share one shape, or a :class:`~tycheon.errors.InputError` listing the shapes."""
    shapes = {k: v.shape for k, v in arrays.items()}
    if len(set(shapes.values())) > 1:
        raise InputError(f"shapes must match; got {shapes}")


def as_output(x: np.ndarray) -> float | np.ndarray:
    """A reduced metric as a float for one block, else the ``[block]`` array."""
    return float(x) if x.ndim == 0 else x


def check_scale(scale: Any, lead_shape: tuple[int, ...], zero_scale: str) -> np.ndarray:
    """Per-block scales broadcast to ``lead_shape``, NaN where zero/missing under ``zero_scale="exclude"``.

    ``zero_scale`` is checked first, so a misspelt option is refused whether or not a scale is bad.
    """
    if zero_scale not in ("raise", "exclude"):
        raise InputError(f"zero_scale must be 'raise' or 'exclude'; got {zero_scale!r}")
    s = as_float_array(scale, "scale")
    try:
        s = np.broadcast_to(s, lead_shape)
    except ValueError as err:
        raise InputError(f"scale of shape {s.shape} does not match the blocks {lead_shape}") from err
    if np.any(s < 0):
        raise InputError("scale must be non-negative (it is an in-sample mean absolute/RMS error)")
    bad = ~(s > 0)  # zero or NaN
    if bad.any() and zero_scale == "raise":
        raise ZeroScaleError(
            f"{int(bad.sum())} block(s) have a zero or missing in-sample scale (constant or too short "
            "training window); pass zero_scale='exclude' to drop them from scaled metrics"
        )
    return np.where(bad, np.nan, s)


def label_codes(labels: np.ndarray, name: str) -> tuple[np.ndarray, int]:
    """Dense int64 codes of ``labels`` in sorted label order and how many distinct labels there are; a
    :class:`~tycheon.errors.InputError` naming ``name`` when a label is missing (None/NaN)."""
    import pandas as pd

    codes, uniques = pd.factorize(np.asarray(labels), sort=True)
    if (codes < 0).any():
        raise InputError(f"{name} labels must not be missing ({int((codes < 0).sum())} are)")
    return codes.astype(np.int64), len(uniques)
