"""The one builder of the score set (ADR-0006 decision 1): forecast blocks in, a :class:`ScoreSet` out.

The engine collects one :class:`Block` per (model, unit, origin) holding ``[series, horizon]`` arrays;
:func:`build_scoreset` flattens them with numpy concatenation (no per-row Python), keeps the rows whose
target was observed, attaches the split-conformal bands (:mod:`tycheon.backtest.conformal`) and returns the
long record documented in :mod:`tycheon.backtest.scoreset`. Anything that wants to make a score set from
forecasts (a harness, a test, a combination of methods) uses this function, so every reader of a score set
sees the same columns with the same meaning.

Band columns: ``lo80/hi80`` and ``lo95/hi95``; ``has_band`` is True where the 80% band exists (it needs
the fewest calibration errors); the 95% band can still be NaN on such a row, and the counts per level are
in ``meta["conformal"]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from tycheon._typing import BoolArray, FloatArray, IntArray
from tycheon.backtest.conformal import BAND_LEVELS, conformal_radius
from tycheon.backtest.scoreset import SCORESET_COLUMNS, ScoreSet, quantile_column

__all__ = ["Block", "build_scoreset"]


@dataclass(frozen=True, eq=False)
class Block:
    """Forecasts of one model for the eligible series of one unit at one origin.

    Attributes
    ----------
    model, unit : str
    unit_key : int
        Index of the (unit, model) pair in the run; with ``series_rows`` it identifies a calibration
        group without string hashing.
    n_unit_series : int
        Number of series in the unit (for the calibration key).
    origin : Timestamp
    series_rows : ndarray of int, shape (n,)
        Row of each forecast series in the unit.
    series_ids : ndarray of str, shape (n,)
    target_periods : DatetimeIndex, length h
    actual : ndarray, shape (n, h)
        NaN where the target is unobserved (such rows are dropped).
    available_at : ndarray of datetime64[ns], shape (n, h)
    point : ndarray, shape (n, h)
    quantiles : ndarray, shape (n, h, Q), optional
    samples : ndarray, shape (n, h, N), optional
    demand_class : ndarray of str, shape (n,)
    season_length : ndarray of int, shape (n,)
    scale_mae, scale_rmse, weight : ndarray, shape (n,)
    """

    model: str
    unit: str
    unit_key: int
    n_unit_series: int
    origin: pd.Timestamp
    series_rows: IntArray  # [series]
    series_ids: np.ndarray  # [series]
    target_periods: pd.DatetimeIndex  # [horizon]
    actual: FloatArray  # [series, horizon]
    available_at: np.ndarray  # [series, horizon]
    point: FloatArray  # [series, horizon]
    quantiles: FloatArray | None  # [series, horizon, level]
    samples: FloatArray | None  # [series, horizon, sample]
    demand_class: np.ndarray  # [series]
    season_length: IntArray  # [series]
    scale_mae: FloatArray  # [series]
    scale_rmse: FloatArray  # [series]
    weight: FloatArray  # [series]

    @property
    def kept(self) -> BoolArray:
        return np.isfinite(self.actual)  # [series, horizon]


def _per_row(block: Block, values: np.ndarray) -> np.ndarray:
    """Broadcast a per-series array to the kept ``[series, horizon]`` cells."""
    h = block.point.shape[1]
    return np.repeat(values, h)[block.kept.ravel()]


def build_scoreset(
    blocks: Sequence[Block],
    *,
    quantile_levels: Sequence[float] = (),
    n_samples: int = 0,
    band_min_origins: int = 0,
    meta: dict[str, Any] | None = None,
) -> ScoreSet:
    """Flatten forecast blocks into the score-set record and attach conformal bands.

    Rows come out in block order, then series, then step, so the same blocks always give the same table.
    """
    levels = tuple(float(q) for q in quantile_levels)
    meta = dict(meta or {})
    cols: dict[str, list[np.ndarray]] = {name: [] for name in SCORESET_COLUMNS}
    qcols: list[np.ndarray] = []
    scols: list[np.ndarray] = []
    keys: list[np.ndarray] = []
    key_offset: dict[int, int] = {}
    next_offset = 0
    for b in blocks:
        n, h = b.point.shape
        kept = b.kept.ravel()
        m = int(kept.sum())
        if b.unit_key not in key_offset:
            key_offset[b.unit_key] = next_offset
            next_offset += b.n_unit_series * h
        step = np.tile(np.arange(1, h + 1, dtype=np.int64), n)[kept]
        cols["model"].append(np.full(m, b.model, dtype=object))
        cols["unit"].append(np.full(m, b.unit, dtype=object))
        cols["series_id"].append(_per_row(b, np.asarray(b.series_ids, dtype=object)))
        cols["origin"].append(np.full(m, b.origin.to_datetime64(), dtype="datetime64[ns]"))
        cols["step"].append(step)
        cols["target_period"].append(np.tile(b.target_periods.to_numpy(dtype="datetime64[ns]"), n)[kept])
        cols["actual"].append(b.actual.ravel()[kept])
        cols["point"].append(b.point.ravel()[kept])
        cols["available_at"].append(b.available_at.ravel()[kept].astype("datetime64[ns]"))
        cols["demand_class"].append(_per_row(b, np.asarray(b.demand_class, dtype=object)))
        cols["season_length"].append(_per_row(b, np.asarray(b.season_length, dtype=np.int64)))
        cols["scale_mae"].append(_per_row(b, b.scale_mae))
        cols["scale_rmse"].append(_per_row(b, b.scale_rmse))
        cols["weight"].append(_per_row(b, b.weight))
        cols["has_quantiles"].append(np.full(m, b.quantiles is not None))
        cols["has_samples"].append(np.full(m, b.samples is not None))
        keys.append(key_offset[b.unit_key] + _per_row(b, b.series_rows.astype(np.int64)) * h + step - 1)
        if levels:
            q = (np.full((m, len(levels)), np.nan) if b.quantiles is None
                 else b.quantiles.reshape(n * h, len(levels))[kept])
            qcols.append(q)
        if n_samples:
            s = (np.full((m, n_samples), np.nan) if b.samples is None
                 else b.samples.reshape(n * h, -1)[kept][:, :n_samples])
            scols.append(s)

    data: dict[str, np.ndarray] = {}
    for name, dtype in SCORESET_COLUMNS.items():
        if name in ("lo80", "hi80", "lo95", "hi95", "has_band"):
            continue
        parts = cols[name]
        data[name] = np.concatenate(parts).astype(dtype) if parts else np.empty(0, dtype=dtype)
    key = np.concatenate(keys) if keys else np.empty(0, dtype=np.int64)
    abs_error = np.abs(data["actual"] - data["point"])
    conformal: dict[str, Any] = {"rows_with_band": {}, "rows_without_band": {},
                                 "min_origins": int(band_min_origins)}
    for level in BAND_LEVELS:
        radius, _ = conformal_radius(keys=key, origin=data["origin"], available_at=data["available_at"],
                                     abs_error=abs_error, level_percent=level, min_origins=band_min_origins)
        data[f"lo{level}"] = data["point"] - radius
        data[f"hi{level}"] = data["point"] + radius
        conformal["rows_with_band"][str(level)] = int(np.isfinite(radius).sum())
        conformal["rows_without_band"][str(level)] = int((~np.isfinite(radius)).sum())
    data["has_band"] = np.isfinite(data["lo80"])
    table = pd.DataFrame({name: data[name] for name in SCORESET_COLUMNS})
    if levels:
        qmat = np.concatenate(qcols) if qcols else np.empty((0, len(levels)))
        for j, level in enumerate(levels):
            table[quantile_column(level)] = qmat[:, j]
    samples = None
    if n_samples:
        samples = np.concatenate(scols) if scols else np.empty((0, n_samples))
    meta["conformal"] = conformal
    return ScoreSet(table=table, quantile_levels=levels, samples=samples, meta=meta)
