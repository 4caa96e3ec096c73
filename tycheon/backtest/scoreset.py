"""The score set: the one record that crosses every boundary after the engine (ADR-0006 decision 1).

A :class:`ScoreSet` is a long table with one row per (model, unit, series, origin, step), plus the
quantile levels it carries, optional sample paths aligned to the rows, and run metadata. Metrics, tests,
analyses and the renderer all read it, so they cannot disagree about what a forecast and an outcome are.

Columns of ``ScoreSet.table`` (``SCORESET_COLUMNS``, defined in :mod:`tycheon.contract`; quantile columns follow, one
per level):

====================  ==============  =============================================================
column                dtype           meaning
====================  ==============  =============================================================
``model``             str             model id as configured (not the class id)
``unit``              str             unit of analysis: ``series``, ``total``, ``level:<attr>``,
                                      ``groups:<k>`` (size-sorted) or ``groups_random:<k>``
``series_id``         str             series (or aggregate) identifier within the unit
``origin``            datetime64[ns]  forecast origin (first target period's start stamp)
``step``              int64           horizon step h = 1..H
``target_period``     datetime64[ns]  period being forecast
``actual``            float64         realised value
``point``             float64         point forecast
``available_at``      datetime64[ns]  when the actual was published
``demand_class``      str             smooth / erratic / intermittent / lumpy / undefined, from the
                                      origin's training window only
``season_length``     int64           season length m used by the scales
``scale_mae``         float64         in-sample seasonal-naive MAE on the origin's training window
``scale_rmse``        float64         in-sample seasonal-naive RMSE on the origin's training window
``weight``            float64         series weight (size) known before the origin; 1 when none
``lo80``, ``hi80``    float64         conformal 80% band (NaN where no band could be built)
``lo95``, ``hi95``    float64         conformal 95% band (NaN where no band could be built)
``has_band``          bool            the conformal bands exist for this row
``has_quantiles``     bool            the model gave its own quantiles for this row
``has_samples``       bool            the model gave sample paths for this row
``q<level>``          float64         model quantile at that level (``quantile_column(level)``)
====================  ==============  =============================================================

Sample paths, when present, are ``samples[row, n]`` aligned with the table rows (NaN rows where a model
has none). ``meta`` holds run facts: protocol description, guard-check counts, abstention counts per
origin, overlap lag, per-model cost (fit/predict seconds) and status.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tycheon.contract import KEY_COLUMNS, SCORESET_COLUMNS, quantile_column

__all__ = ["KEY_COLUMNS", "SCORESET_COLUMNS", "ScoreSet", "quantile_column"]


@dataclass(frozen=True, eq=False)
class ScoreSet:
    """The long record of every scored forecast; see the module docstring for the columns."""

    table: pd.DataFrame
    quantile_levels: tuple[float, ...] = ()
    samples: np.ndarray | None = None  # [row, sample]
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        expected = list(SCORESET_COLUMNS) + [quantile_column(q) for q in self.quantile_levels]
        missing = [c for c in expected if c not in self.table.columns]
        if missing:
            raise ValueError(f"score set table lacks column(s) {missing}")
        if self.samples is not None and len(self.samples) != len(self.table):
            raise ValueError("samples must have one row per table row")

    @property
    def models(self) -> list[str]:
        return sorted(self.table["model"].unique())

    @property
    def units(self) -> list[str]:
        return sorted(self.table["unit"].unique())

    def select(self, **equals: Any) -> ScoreSet:
        """Rows where each named column equals the given value (e.g. ``unit="series"``)."""
        mask = np.ones(len(self.table), dtype=bool)
        for col, value in equals.items():
            mask &= (self.table[col] == value).to_numpy()
        samples = None if self.samples is None else self.samples[mask]
        return ScoreSet(self.table[mask].reset_index(drop=True), self.quantile_levels, samples, self.meta)

    def quantile_matrix(self) -> np.ndarray:
        """Model quantiles as ``[row, level]`` (NaN where a row has none)."""
        cols = [quantile_column(q) for q in self.quantile_levels]
        return self.table[cols].to_numpy(dtype=np.float64) if cols else np.empty((len(self.table), 0))

    def to_parquet(self, path: str | Path) -> None:
        """Write the table (and samples, as extra columns ``s0..``) to one parquet file with metadata."""
        frame = self.table.copy()
        if self.samples is not None:
            for j in range(self.samples.shape[1]):
                frame[f"s{j}"] = self.samples[:, j]
        meta = {
            "quantile_levels": list(self.quantile_levels),
            "n_samples": 0 if self.samples is None else int(self.samples.shape[1]),
            "meta": self.meta,
        }
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(frame, preserve_index=False)
        table = table.replace_schema_metadata(
            {**(table.schema.metadata or {}), b"tycheon": json.dumps(meta, default=str).encode()}
        )
        pq.write_table(table, str(path))

    @classmethod
    def from_parquet(cls, path: str | Path) -> ScoreSet:
        import pyarrow.parquet as pq

        table = pq.read_table(str(path))
        meta = json.loads(table.schema.metadata[b"tycheon"])
        frame = table.to_pandas()
        n = meta["n_samples"]
        samples = None
        if n:
            cols = [f"s{j}" for j in range(n)]
            samples = frame[cols].to_numpy(dtype=np.float64)
            frame = frame.drop(columns=cols)
        return cls(frame, tuple(meta["quantile_levels"]), samples, meta["meta"])
