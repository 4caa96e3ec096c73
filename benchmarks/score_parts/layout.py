"""What a score part holds, declared once for the writer and the reader: the part format, the key and
value columns of each part kind (the table in :mod:`benchmarks.score_parts`), and the two formulas that
derive a row's bands and quantiles from what a part stores. :mod:`~benchmarks.score_parts.encode` checks
every derived cell against these formulas bit for bit; :mod:`~benchmarks.score_parts.decode` applies them."""

from __future__ import annotations

from typing import Literal

import numpy as np

PART_FORMAT: Literal["tycheon-parts/1"] = "tycheon-parts/1"
"""Version of the layout, recorded in every manifest (:class:`~benchmarks.results_model.ScoreParts`)."""

TAG_COLUMNS = ("dataset", "protocol")
ROW_KEYS = ("unit", "series_id", "origin", "step")
FACT_KEYS = ("unit", "series_id", "origin")
FACT_COLUMNS = ("demand_class", "season_length", "scale_mae", "scale_rmse", "weight")
ACTUAL_KEYS = ("unit", "series_id", "target_period")
ACTUAL_COLUMNS = ("actual", "available_at")
BAND_KEYS = ("unit", "step", "origin")
BAND_LEVELS = (80, 95)


def _bits(values: np.ndarray) -> np.ndarray:
    """The bit pattern of each value (floats as int64, so NaN equals NaN and -0 differs from +0)."""
    values = np.ascontiguousarray(values)
    if values.dtype.kind == "f":
        return np.asarray(values, dtype=np.float64).view(np.int64)
    if values.dtype.kind == "M":
        return values.view(np.int64)
    return values


def band_values(point: np.ndarray, factor: np.ndarray, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)`` of pooled bands: ``point -/+ factor * scale`` where the factor is not NaN and the
    scale is positive and finite, NaN elsewhere (:func:`tycheon.backtest.calibration.pooled_bands`)."""
    ok = ~np.isnan(factor) & (scale > 0) & np.isfinite(scale)
    lo = np.full(len(point), np.nan)
    hi = np.full(len(point), np.nan)
    width = factor[ok] * scale[ok]
    lo[ok] = point[ok] - width
    hi[ok] = point[ok] + width
    return lo, hi


def quantile_values(point: np.ndarray, spread: np.ndarray, z: float) -> np.ndarray:
    """``point + spread * z`` (NaN where the spread is NaN): a Gaussian quantile as the baselines and
    statsforecast's intervals form it."""
    return point + spread * z
