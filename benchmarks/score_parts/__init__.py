"""Score sets on disk as normalised, content-addressed parts that versions share.

A results version's score set (one row per scored ``(dataset, protocol, model, unit, series, origin,
step)``) repeats most of its bytes: the scales, demand class and weight of a (series, origin) on every
model's row, the actual of a (series, target period) once per model, a conformal band that is a cell's
factor times the row's scale, seven quantiles that are the point plus a multiple of one spread. This module
stores it without those repeats, and reads back the same table bit for bit:

=========  ===================================  ========================================================
part kind  one row per                          columns
=========  ===================================  ========================================================
facts      (unit, series, origin)               ``demand_class``, ``season_length``, ``scale_mae``,
                                                ``scale_rmse``, ``weight``
actuals    (unit, series, target period)        ``actual``, ``available_at``
bands      (unit, step, origin)                 ``f<level>``: the band factor (``lo = point - f * scale_mae``,
                                                ``hi = point + f * scale_mae``, as
                                                :func:`tycheon.backtest.calibration.pooled_bands` forms it)
model      scored row of one model              keys, ``target_period``, ``point``, flags, ``spread``
                                                (``q_p = point + spread * z_p``) and *exceptions*
=========  ===================================  ========================================================

Facts and actuals are per (dataset, protocol); bands and model parts per (dataset, protocol, model). Every
derived value is checked when the parts are written: a column that is not a function of its key stays on
the model rows, and a cell that the formula does not give to the last bit (a band that is not pooled, a
quantile that is not ``point + spread * z``) is stored as it is in an exception column (null where the
formula holds), so reading back never approximates.

Parts are parquet (zstd; byte-stream-split for the float columns that it shrinks, see
``benchmarks/perf/parts.py``), written without pandas metadata, and named by the sha256 of their bytes:
``<results>/<name>/parts/<sha256>.parquet``. Writing a part whose bytes are stored already writes
nothing, so a version whose model scores did not change adds no file. A part may also carry a ``url``
(a large study's parts kept outside git); :func:`resolve_part` fetches a missing one into a local cache
and checks its hash.

A part of a dataset that is not redistributable (a user's file, ``redistributable = false``) is *private*:
the version lists it (sha256, size, rows, ``private = true``) but it is stored under
``<results>/<name>/private-parts/``, which git ignores and the results workflow refuses to commit, never
under ``parts/``. Its bytes hold the series ids, the actuals and every forecast (a random walk's forecast
is the last actual), so hashing the ids alone would not keep the values private; the published tables are
aggregates. Where the private parts are present (the machine that ran it) the version is verified as any
other; on a clone without them its other datasets' tables are recomputed and the private ones are
verified by the tables' hash only (:func:`private_missing`).

The package: :mod:`~benchmarks.score_parts.layout` (the part kinds' keys and columns, and the band and
quantile formulas), :mod:`~benchmarks.score_parts.encode` (a frame to parts),
:mod:`~benchmarks.score_parts.store` (their bytes, names and places) and
:mod:`~benchmarks.score_parts.decode` (parts back to the frame).
"""

from __future__ import annotations

from benchmarks.results_model import ScorePart as Part
from benchmarks.results_model import ScoreParts
from benchmarks.score_parts.decode import read_chunk, read_part_table, read_scores
from benchmarks.score_parts.encode import best_candidate, encode_scores, iter_encoded, z_candidates
from benchmarks.score_parts.layout import PART_FORMAT, band_values, quantile_values

# the private _ZSTD_LEVEL, _float_columns and _missing_message are re-exported (noqa) for perf/parts.py
# and score_source.py, which read them here
from benchmarks.score_parts.store import (  # noqa: F401
    _ZSTD_LEVEL,
    PARTS_DIR,
    PRIVATE_DIR,
    PartsMissingError,
    _float_columns,
    _missing_message,
    cache_dir,
    mark_private,
    missing_parts,
    missing_parts_with_fetch,
    part_bytes,
    prepare_parts,
    private_missing,
    resolve_part,
    store_parts,
    stored_path,
    write_parts,
)

__all__ = [
    "PARTS_DIR",
    "PART_FORMAT",
    "PRIVATE_DIR",
    "Part",
    "PartsMissingError",
    "ScoreParts",
    "band_values",
    "best_candidate",
    "cache_dir",
    "encode_scores",
    "iter_encoded",
    "mark_private",
    "missing_parts",
    "missing_parts_with_fetch",
    "part_bytes",
    "prepare_parts",
    "private_missing",
    "quantile_values",
    "read_chunk",
    "read_part_table",
    "read_scores",
    "resolve_part",
    "store_parts",
    "stored_path",
    "write_parts",
    "z_candidates",
]
