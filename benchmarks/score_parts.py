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
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from benchmarks.results_model import ScorePart as Part
from benchmarks.results_model import ScoreParts

__all__ = [
    "PARTS_DIR",
    "PRIVATE_DIR",
    "Part",
    "PartsMissingError",
    "ScoreParts",
    "encode_scores",
    "read_part_table",
    "mark_private",
    "private_missing",
    "resolve_part",
    "write_parts",
]

PARTS_DIR = "parts"
PRIVATE_DIR = "private-parts"
"""Where the parts of a dataset that is not redistributable are kept: beside ``parts/``, never committed."""
PART_FORMAT: Literal["tycheon-parts/1"] = "tycheon-parts/1"
"""Version of the layout above, recorded in every manifest (:class:`~benchmarks.results_model.ScoreParts`)."""

TAG_COLUMNS = ("dataset", "protocol")
ROW_KEYS = ("unit", "series_id", "origin", "step")
FACT_KEYS = ("unit", "series_id", "origin")
FACT_COLUMNS = ("demand_class", "season_length", "scale_mae", "scale_rmse", "weight")
ACTUAL_KEYS = ("unit", "series_id", "target_period")
ACTUAL_COLUMNS = ("actual", "available_at")
BAND_KEYS = ("unit", "step", "origin")
BAND_LEVELS = (80, 95)
_ZSTD_LEVEL = 9


class PartsMissingError(FileNotFoundError):
    """Parts of a score set are neither stored nor in the local cache (the message says which and how to
    get them)."""


# --------------------------------------------------------------------------------------------- encoding


def _bits(values: np.ndarray) -> np.ndarray:
    """The bit pattern of each value (floats as int64, so NaN equals NaN and -0 differs from +0)."""
    values = np.ascontiguousarray(values)
    if values.dtype.kind == "f":
        return np.asarray(values, dtype=np.float64).view(np.int64)
    if values.dtype.kind == "M":
        return values.view(np.int64)
    return values


def _column_codes(col: pd.Series | np.ndarray) -> np.ndarray:
    """Dense int64 codes of a column's values (equal values, equal codes; floats by bit pattern)."""
    if isinstance(col, pd.Series) and isinstance(col.dtype, pd.CategoricalDtype):
        return col.cat.codes.to_numpy().astype(np.int64)
    values = col.to_numpy() if isinstance(col, pd.Series) else np.asarray(col)
    if values.dtype.kind in "fM":
        values = _bits(values)
    return pd.factorize(values)[0].astype(np.int64)


def _codes(frame: pd.DataFrame, keys: Sequence[str]) -> np.ndarray:
    """One dense int64 group code per row for the tuple of ``keys`` (equal tuples, equal codes), built
    from each column's integer codes (mixed radix, re-densified after each column), never from tuples."""
    acc: np.ndarray | None = None
    for k in keys:
        codes = _column_codes(frame[k])
        if acc is None:
            acc = pd.factorize(codes)[0].astype(np.int64)
            continue
        radix = int(codes.max()) + 1 if len(codes) else 1
        acc = pd.factorize(acc * radix + codes)[0].astype(np.int64)
    return acc if acc is not None else np.zeros(len(frame), dtype=np.int64)


def _plain(col: pd.Series) -> np.ndarray:
    """A column's values as numpy (categoricals as their strings, so codes of other tables never leak)."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        return np.asarray(col.astype(object))
    return col.to_numpy()


def _first_rows(group: np.ndarray) -> np.ndarray:
    """Each group's first row."""
    n_groups = int(group.max()) + 1 if len(group) else 0
    first = np.full(n_groups, -1, dtype=np.int64)
    rows = np.arange(len(group))
    first[group[::-1]] = rows[::-1]  # the last write wins: each group's first row
    return first


def _is_function_of(group: np.ndarray, first: np.ndarray, col: pd.Series) -> bool:
    """Whether ``col`` is constant (bit for bit; categoricals by value) within each group."""
    values = (
        _column_codes(col)
        if isinstance(col.dtype, pd.CategoricalDtype) or col.dtype == object
        else _bits(col.to_numpy())
    )
    return bool((values == values[first[group]]).all())


def _key_table(
    frame: pd.DataFrame, keys: Sequence[str], columns: Sequence[str], *, sort: bool = True
) -> tuple[pd.DataFrame, list[str]]:
    """One row per distinct key (sorted by the keys' values, unless ``sort`` is off) with the ``columns``
    that are functions of the key; also the columns that are not (they stay on the model rows)."""
    group = _codes(frame, keys)
    first = _first_rows(group)
    kept = [c for c in columns if _is_function_of(group, first, frame[c])]
    table = pd.DataFrame({c: _plain(frame[c].iloc[first]) for c in [*keys, *kept]})
    if sort:
        table = table.sort_values(list(keys), kind="stable").reset_index(drop=True)
    return table, [c for c in columns if c not in kept]


def _mode_per_group(group: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """The most frequent value (bit for bit) of each group among the finite ``values``; NaN where a group
    has none. Ties go to the smallest bit pattern, so the choice is deterministic."""
    out = np.full(n_groups, np.nan)
    ok = np.isfinite(values)
    if not ok.any():
        return out
    g, bits = group[ok], _bits(values[ok])
    order = np.lexsort((bits, g))
    g, bits = g[order], bits[order]
    start = np.r_[True, (g[1:] != g[:-1]) | (bits[1:] != bits[:-1])]
    starts = np.flatnonzero(start)
    lengths = np.diff(np.r_[starts, len(g)])
    run_g, run_bits = g[starts], bits[starts]
    # per group the longest run; lexsort by (-length) within group keeps the smallest bits on ties
    best = np.lexsort((run_bits, -lengths, run_g))
    run_g, run_bits = run_g[best], run_bits[best]
    firsts = np.r_[True, run_g[1:] != run_g[:-1]]
    out[run_g[firsts]] = run_bits[firsts].view(np.float64)
    return out


def _group_factor(
    group: np.ndarray, n_groups: int, point: np.ndarray, scale: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> np.ndarray:
    """Per group the factor that rebuilds the most of its rows' bands: the most frequent implied factor
    ``(hi - point) / scale`` and its neighbouring floats are tried (the division rounds, so the factor the
    bands were made with may be one of those neighbours)."""
    implied = (hi - point) / scale
    mode = _mode_per_group(group, implied, n_groups)
    # the row whose band is widest against its point loses the fewest bits in hi - point
    conditioning = np.where(np.isfinite(implied), np.abs(hi - point) / np.maximum(np.abs(point), 1e-300), -1.0)
    order = np.lexsort((-conditioning, group))
    firsts = order[np.r_[True, group[order][1:] != group[order][:-1]]] if len(order) else order
    sharpest = np.full(n_groups, np.nan)
    sharpest[group[firsts]] = implied[firsts]
    best, best_hits = mode, np.full(n_groups, -1)
    want_lo, want_hi = _bits(lo), _bits(hi)
    from_lo = _mode_per_group(group, (point - lo) / scale, n_groups)
    for cand in (c for base in (mode, from_lo, sharpest) for c in _ulp_neighbours(base, 4)):
        got_lo, got_hi = band_values(point, cand[group], scale)
        ok = (_bits(got_lo) == want_lo) & (_bits(got_hi) == want_hi)
        hits = np.bincount(group, weights=ok, minlength=n_groups)
        better = hits > best_hits
        best = np.where(better, cand, best)
        best_hits = np.where(better, hits, best_hits)
    return best


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


def z_candidates(levels: Sequence[float]) -> list[np.ndarray]:
    """See :func:`_z_candidates` (cached per tuple of levels; the arrays are read-only)."""
    return list(_z_candidates(tuple(float(v) for v in levels)))


@functools.lru_cache(maxsize=64)
def _z_candidates(levels: tuple[float, ...]) -> tuple[np.ndarray, ...]:
    """Standard-normal quantiles of ``levels`` as a forecaster may have formed them: ``Phi^{-1}(p)``
    directly (tycheon's baselines), or ``-Phi^{-1}(1 - p)`` below the median, as an interval's lower end
    ``mean - z * sigma`` gives (statsforecast). The two differ in the last bit."""
    from scipy.stats import norm

    p = np.asarray(levels, dtype=np.float64)
    direct = np.asarray(norm.ppf(p), dtype=np.float64)
    mirrored = np.where(p < 0.5, -np.asarray(norm.ppf(1.0 - p), dtype=np.float64), direct)
    for values in (direct, mirrored):
        values.setflags(write=False)
    return (direct,) if np.array_equal(_bits(direct), _bits(mirrored)) else (direct, mirrored)


def _ulp_neighbours(values: np.ndarray, reach: int = 2) -> Iterator[np.ndarray]:
    """``values`` and the floats up to ``reach`` steps above and below each."""
    yield values
    up = down = values
    for _ in range(reach):
        up, down = np.nextafter(up, np.inf), np.nextafter(down, -np.inf)
        yield up
        yield down


def best_candidate(
    candidates: Sequence[np.ndarray], rebuild: Any, wants: Sequence[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Per row the candidate value (tried with its neighbouring floats) whose ``rebuild(value, rows)``
    matches the most of ``wants`` bit for bit; ``(value, hits)``, first candidate on ties. A row whose
    every want is matched is not tried again (``rebuild`` gets the positions of the rows still open)."""
    n = len(wants[0]) if wants else 0
    best = np.full(n, np.nan)
    best_hits = np.full(n, -1)
    want_bits = [_bits(w) for w in wants]
    open_rows = np.arange(n)
    for base in candidates:
        for cand in _ulp_neighbours(base):
            if not len(open_rows):
                return best, best_hits
            c = cand[open_rows]
            hits = sum(
                (_bits(r) == w[open_rows]).astype(np.int64)
                for r, w in zip(rebuild(c, open_rows), want_bits, strict=True)
            )
            better = hits > best_hits[open_rows]
            rows = open_rows[better]
            best[rows] = c[better]
            best_hits[rows] = hits[better]
            open_rows = open_rows[best_hits[open_rows] < len(wants)]
    return best, best_hits


def _spread(point: np.ndarray, quantiles: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Per row a spread ``s`` with ``point + s * z_p`` equal to as many of the row's quantiles as the
    candidates reach (each quantile's implied spread and its neighbouring floats are tried)."""
    if not len(point) or not len(z):
        return np.full(len(point), np.nan)
    with np.errstate(all="ignore"):
        candidates = [(quantiles[:, j] - point) / z[j] for j in np.argsort(-np.abs(z), kind="stable") if z[j] != 0]
    wants = [quantiles[:, j] for j in range(len(z))]
    spread, _ = best_candidate(candidates, lambda s, rows: [quantile_values(point[rows], s, zj) for zj in z], wants)
    return spread


_BLOCK = 1 << 18
"""Rows per block when the quantiles are encoded: the candidates' working arrays are a block's, not a run's."""
_PROBE = 1 << 16
"""Rows on which the two forms of the normal quantiles are compared to choose one per part."""


def _quantile_block(
    point: np.ndarray, qcols: list[np.ndarray], z: np.ndarray, rows: slice
) -> tuple[np.ndarray, list[np.ndarray]]:
    """The spreads of ``rows`` and, per quantile column, the rows ``point + spread * z`` does not give
    bit for bit."""
    qb = np.column_stack([q[rows] for q in qcols])
    p = point[rows]
    spread = _spread(p, qb, z)
    return spread, [_bits(qb[:, j]) != _bits(quantile_values(p, spread, z[j])) for j in range(len(qcols))]


def _quantile_encoding(
    point: np.ndarray, qcols: list[np.ndarray], levels: list[float]
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """``(z, spread, differs)``: the normal quantiles the part uses (of :func:`z_candidates`, the one
    with fewer cells the formula misses on the first :data:`_PROBE` rows; the first on ties), each row's
    spread, and per quantile column the rows ``point + spread * z`` does not give bit for bit. Worked in
    blocks of :data:`_BLOCK` rows."""
    n = len(point)
    candidates = z_candidates(levels)
    z = candidates[0]
    if len(candidates) > 1 and n:
        probe = slice(0, min(n, _PROBE))
        counts = [sum(int(d.sum()) for d in _quantile_block(point, qcols, zv, probe)[1]) for zv in candidates]
        z = candidates[int(np.argmin(counts))]
    spread = np.full(n, np.nan)
    differs = [np.zeros(n, dtype=bool) for _ in qcols]
    for a in range(0, n, _BLOCK):
        rows = slice(a, min(n, a + _BLOCK))
        spread[rows], block_differs = _quantile_block(point, qcols, z, rows)
        for j, d in enumerate(block_differs):
            differs[j][rows] = d
    return z, spread, differs


def _exceptions(expected: np.ndarray, derived: np.ndarray) -> np.ndarray | None:
    """The rows where ``derived`` differs from ``expected`` bit for bit (None when there are none)."""
    differ = _bits(expected) != _bits(derived)
    return differ if differ.any() else None


@dataclass
class _Encoded:
    """One part before it is written: its kind, tags and arrow table."""

    kind: str
    dataset: str
    protocol: str
    model: str | None
    table: Any  # pyarrow.Table


def _text_column(values: Any) -> Any:
    """Text as a dictionary array whose dictionary is the sorted distinct values present, so a part's
    bytes depend on its own rows only (not on the categories of the table it came from)."""
    import pyarrow as pa

    if isinstance(values, pd.Series):
        values = values.array
    if isinstance(values, pd.Categorical) and values.categories.is_monotonic_increasing:
        codes = values.codes.astype(np.int64)
        present = np.bincount(codes, minlength=len(values.categories)) > 0
        remap = np.cumsum(present) - 1
        indices, dictionary = remap[codes], np.asarray(values.categories[present], dtype=object)
    else:
        idx, uniques = pd.factorize(np.asarray(values, dtype=object), sort=True)
        indices, dictionary = idx, np.asarray(uniques, dtype=object)
    return pa.DictionaryArray.from_arrays(
        pa.array(indices.astype(np.int32)), pa.array(dictionary.tolist(), type=pa.string())
    )


def _arrow_column(values: Any, mask: np.ndarray | None = None) -> Any:
    import pyarrow as pa

    if isinstance(values, pd.Series) and isinstance(values.dtype, pd.CategoricalDtype):
        return _text_column(values)
    if isinstance(values, pd.Series):
        values = values.to_numpy()
    values = np.asarray(values)
    if values.dtype == object:
        return _text_column(values)
    if mask is not None:
        return pa.array(values, mask=~mask, from_pandas=False)
    return pa.array(values, from_pandas=False)


def _arrow_table(columns: dict[str, Any], metadata: dict[str, Any] | None = None) -> Any:
    import pyarrow as pa

    table = pa.table(columns)
    if metadata:
        table = table.replace_schema_metadata({"tycheon_part": json.dumps(metadata, sort_keys=True)})
    return table


def encode_scores(frame: pd.DataFrame) -> tuple[ScoreParts, list[_Encoded]]:
    """The parts of a score-set frame (tagged with ``dataset`` and ``protocol``), not yet written (all at
    once: :func:`prepare_parts` takes them one at a time instead)."""
    manifest, parts = iter_encoded(frame)
    with np.errstate(all="ignore"):  # infinities and NaN in the scores are stored as they are
        return manifest, list(parts)


def iter_encoded(frame: pd.DataFrame) -> tuple[ScoreParts, Iterator[_Encoded]]:
    """The manifest skeleton of a score-set frame and its parts, encoded one at a time as they are taken.

    Rows of one (dataset, protocol) must stand together (as the harness writes them); each run of one
    model's rows becomes a model part, so any row order reads back as it was."""
    from tycheon.contract import is_quantile_column

    missing = [c for c in (*TAG_COLUMNS, "model", *ROW_KEYS) if c not in frame.columns]
    if missing:
        raise ValueError(f"a score set needs the columns {missing} to be stored as parts")
    columns = [str(c) for c in frame.columns]
    dtypes = {
        c: ("category" if isinstance(frame[c].dtype, pd.CategoricalDtype) else str(frame[c].dtype)) for c in columns
    }
    quantiles = [c for c in columns if is_quantile_column(c)]
    bands = [lv for lv in BAND_LEVELS if f"lo{lv}" in columns and f"hi{lv}" in columns]
    derived = {*TAG_COLUMNS, "model", *ROW_KEYS, *FACT_COLUMNS, *ACTUAL_COLUMNS, *quantiles, "has_band"}
    derived |= {f"{s}{lv}" for lv in bands for s in ("lo", "hi")}
    row_extra = [c for c in columns if c not in derived]  # kept on the model rows as they are
    manifest = ScoreParts(format=PART_FORMAT, columns=columns, dtypes=dtypes, n_rows=len(frame), parts=[])
    return manifest, _iter_chunks(frame, quantiles=quantiles, bands=bands, row_extra=row_extra)


def _iter_chunks(
    frame: pd.DataFrame, *, quantiles: list[str], bands: list[int], row_extra: list[str]
) -> Iterator[_Encoded]:
    starts = _run_starts(frame, TAG_COLUMNS)
    seen: set[tuple[str, str]] = set()
    for i, start in enumerate(starts):
        stop = starts[i + 1] if i + 1 < len(starts) else len(frame)
        key = (str(frame["dataset"].iloc[start]), str(frame["protocol"].iloc[start]))
        if key in seen:
            raise ValueError("the rows of one (dataset, protocol) must stand together to be stored as parts")
        seen.add(key)
        yield from _encode_chunk(frame.iloc[start:stop], quantiles=quantiles, bands=bands, row_extra=row_extra)


def _run_starts(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """Where a run of rows with the same values of ``columns`` starts (the first row always does); read
    from the columns' own codes, without a per-row key."""
    if not len(frame):
        return np.zeros(0, dtype=np.int64)
    change = np.zeros(len(frame), dtype=bool)
    change[0] = True
    for c in columns:
        col = frame[c]
        codes = col.cat.codes.to_numpy() if isinstance(col.dtype, pd.CategoricalDtype) else _column_codes(col)
        change[1:] |= codes[1:] != codes[:-1]
    return np.flatnonzero(change)


def _union_key_tables(
    tables: Iterable[pd.DataFrame], keys: Sequence[str], columns: Sequence[str]
) -> tuple[pd.DataFrame, list[str]]:
    """The per-run key tables joined: one row per key, sorted by the keys, with the ``columns`` that agree
    (bit for bit) wherever runs share a key; the others are returned to stay on the model rows."""
    union: pd.DataFrame | None = None
    kept = list(columns)
    for table in tables:
        both = table if union is None else pd.concat([union, table], ignore_index=True)
        group = _codes(both, keys)
        first = _first_rows(group)
        kept = [c for c in kept if c in both.columns and _is_function_of(group, first, both[c])]
        union = both.iloc[np.sort(first)][[*keys, *kept]].reset_index(drop=True)
        del both, group, first
    assert union is not None
    union = union.sort_values(list(keys), kind="stable").reset_index(drop=True)
    return union, [c for c in columns if c not in kept]


def _encode_chunk(
    chunk: pd.DataFrame, *, quantiles: list[str], bands: list[int], row_extra: list[str]
) -> Iterator[_Encoded]:
    """One (dataset, protocol): its facts and actuals (built run by run, so the working memory is one
    model's rows, not the chunk's), then each model run's bands and rows."""
    dataset, protocol = str(chunk["dataset"].iloc[0]), str(chunk["protocol"].iloc[0])
    starts = _run_starts(chunk, ("model",))
    runs = [(int(a), int(starts[i + 1]) if i + 1 < len(starts) else len(chunk)) for i, a in enumerate(starts)]
    rows_too: list[str] = []
    for keys, names, kind in ((FACT_KEYS, FACT_COLUMNS, "facts"), (ACTUAL_KEYS, ACTUAL_COLUMNS, "actuals")):
        present = [c for c in names if c in chunk.columns]
        rest: set[str] = set()

        def per_run(
            keys: Sequence[str] = keys, present: list[str] = present, rest: set[str] = rest
        ) -> Iterator[pd.DataFrame]:
            for a, b in runs:  # one run's key table at a time, joined into the union as it comes
                table, not_keyed = _key_table(chunk.iloc[a:b], keys, present, sort=False)
                rest.update(not_keyed)
                yield table

        table, not_agreed = _union_key_tables(per_run(), keys, present)
        rows_too += [c for c in present if c in rest or c in not_agreed]
        encoded = _arrow_table({c: _arrow_column(table[c]) for c in table if c not in rest})
        del table
        yield _Encoded(kind, dataset, protocol, None, encoded)
    for a, b in runs:
        yield from _encode_model(
            chunk.iloc[a:b], dataset, protocol, quantiles=quantiles, bands=bands, row_extra=[*rows_too, *row_extra]
        )


def _encode_model(
    rows: pd.DataFrame, dataset: str, protocol: str, *, quantiles: list[str], bands: list[int], row_extra: list[str]
) -> list[_Encoded]:
    model = str(rows["model"].iloc[0])
    cols: dict[str, Any] = {k: _arrow_column(rows[k]) for k in ROW_KEYS}
    cols["target_period"] = _arrow_column(rows["target_period"])
    point = rows["point"].to_numpy(dtype=np.float64)
    cols["point"] = _arrow_column(point)
    for c in row_extra:
        if c in rows.columns and c not in cols:
            cols[c] = _arrow_column(rows[c])
    meta: dict[str, Any] = {}
    out: list[_Encoded] = []
    # bands: one factor per (unit, step, origin) and level, the mode of the rows' implied factors; a row
    # the factor does not give gets its own radius (point -/+ r), and a side neither gives is stored as is
    if bands:
        scale = rows["scale_mae"].to_numpy(dtype=np.float64)
        group = _codes(rows, BAND_KEYS)
        n_groups = int(group.max()) + 1 if len(group) else 0
        band_cols: dict[str, Any] = {}
        keys_first = _first_rows(group)
        for k in BAND_KEYS:
            band_cols[k] = _arrow_column(rows[k].iloc[keys_first])
        for lv in bands:
            lo, hi = (rows[f"{s}{lv}"].to_numpy(dtype=np.float64) for s in ("lo", "hi"))
            with np.errstate(all="ignore"):
                factor = _group_factor(group, n_groups, point, scale, lo, hi)
            band_cols[f"f{lv}"] = _arrow_column(factor)
            got_lo, got_hi = band_values(point, factor[group], scale)
            wrong = (_bits(got_lo) != _bits(lo)) | (_bits(got_hi) != _bits(hi))
            if wrong.any():
                p, w_lo, w_hi = point[wrong], lo[wrong], hi[wrong]
                radius, hits = best_candidate(
                    [w_hi - p, p - w_lo], lambda r, rows, p=p: [p[rows] - r, p[rows] + r], [w_lo, w_hi]
                )
                use = np.zeros(len(point), dtype=bool)
                use[np.flatnonzero(wrong)[hits == 2]] = True
                if use.any():
                    r_full = np.zeros(len(point))
                    r_full[wrong] = radius
                    cols[f"x_r{lv}"] = _arrow_column(r_full, mask=use)
                    got_lo[use], got_hi[use] = point[use] - r_full[use], point[use] + r_full[use]
            for side, want, got in (("lo", lo, got_lo), ("hi", hi, got_hi)):
                differ = _exceptions(want, got)
                if differ is not None:
                    cols[f"x_{side}{lv}"] = _arrow_column(want, mask=differ)
        out.append(_Encoded("bands", dataset, protocol, model, _arrow_table(band_cols)))
        if "has_band" in rows.columns:
            has = rows["has_band"].to_numpy()
            if not np.array_equal(has, np.isfinite(rows[f"lo{bands[0]}"].to_numpy(dtype=np.float64))):
                cols["has_band"] = _arrow_column(has)
    elif "has_band" in rows.columns:
        cols["has_band"] = _arrow_column(rows["has_band"].to_numpy())
    if quantiles:
        qcols = [rows[c].to_numpy(dtype=np.float64) for c in quantiles]
        z, spread, differs = _quantile_encoding(point, qcols, [float(c[1:]) for c in quantiles])
        meta["z"] = [float(v).hex() for v in z]
        cols["spread"] = _arrow_column(spread)
        for j, c in enumerate(quantiles):
            if differs[j].any():
                cols[f"x_{c}"] = _arrow_column(qcols[j], mask=differs[j])
    out.append(_Encoded("model", dataset, protocol, model, _arrow_table(cols, meta)))
    return out


# ---------------------------------------------------------------------------------------------- writing


def _float_columns(table: Any) -> list[str]:
    import pyarrow as pa

    return [f.name for f in table.schema if pa.types.is_floating(f.type)]


def part_bytes(table: Any) -> bytes:
    """The parquet bytes of one part: zstd, float columns byte-stream-split and not dictionary-encoded
    (their values rarely repeat; splitting their bytes into streams lets zstd find the shared exponents),
    every other column dictionary-encoded; one row group, no page index. Same table, same bytes (with
    the same pyarrow)."""
    import pyarrow.parquet as pq

    floats = _float_columns(table)
    others = [n for n in table.column_names if n not in floats]
    buf = io.BytesIO()
    pq.write_table(
        table,
        buf,
        compression="zstd",
        compression_level=_ZSTD_LEVEL,
        use_dictionary=others or False,
        use_byte_stream_split=floats or False,
        row_group_size=max(len(table), 1),
        write_page_index=False,
        store_schema=True,
    )
    return buf.getvalue()


def prepare_parts(frame: pd.DataFrame) -> tuple[ScoreParts, dict[str, bytes]]:
    """The manifest of a score set's parts and their bytes by sha256, in memory (nothing written)."""
    manifest, encoded = iter_encoded(frame)
    blobs: dict[str, bytes] = {}
    with np.errstate(all="ignore"):  # infinities and NaN in the scores are stored as they are
        for enc in encoded:  # one part's arrow table at a time: only the compressed bytes are kept
            data = part_bytes(enc.table)
            sha = hashlib.sha256(data).hexdigest()
            blobs.setdefault(sha, data)
            manifest.parts.append(
                Part(
                    sha256=sha,
                    bytes=len(data),
                    rows=enc.table.num_rows,
                    kind=enc.kind,
                    dataset=enc.dataset,
                    protocol=enc.protocol,
                    model=enc.model,
                )
            )
            del enc
    return manifest, blobs


def mark_private(manifest: ScoreParts, datasets: Iterable[str]) -> set[str]:
    """Mark every part of ``datasets`` (those not redistributable) ``private`` in ``manifest``; the sha256 of
    the parts marked. A part whose bytes are shared with a public dataset's part stays public: both hold
    the same bytes, which the public dataset publishes anyway."""
    closed = set(datasets)
    public = {p.sha256 for p in manifest.parts if p.dataset not in closed}
    marked = set()
    for i, part in enumerate(manifest.parts):
        if part.dataset in closed and part.sha256 not in public:
            manifest.parts[i] = part.model_copy(update={"private": True})
            marked.add(part.sha256)
    return marked


def store_parts(blobs: dict[str, bytes], folder: str | Path, *, private: Iterable[str] = ()) -> list[Path]:
    """Place parts under ``folder/parts/`` (those in ``private`` under ``folder/private-parts/``); the paths
    newly created (a part already stored is hashed and must match, and is not written again). Each new part
    goes to a temp file and is linked into place, so a crash leaves no partial part and two writers of the
    same part do not clobber each other."""
    from benchmarks.results_io import ResultsValidationError, _link_no_clobber, file_sha256

    closed = set(private)
    created: list[Path] = []
    for sha, data in blobs.items():
        store = Path(folder) / (PRIVATE_DIR if sha in closed else PARTS_DIR)
        store.mkdir(parents=True, exist_ok=True)
        final = store / f"{sha}.parquet"
        if final.exists():
            if file_sha256(final) != sha:
                raise ResultsValidationError(
                    f"refusing to write: the stored part {final} does not have the sha256 its name says "
                    "(it was modified; it is not overwritten: restore it from version control)"
                )
            continue
        fd, tmp = tempfile.mkstemp(prefix=".", suffix=".parquet.tmp", dir=store)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            try:
                _link_no_clobber(tmp, final)
                created.append(final)
            except FileExistsError:
                pass  # another writer placed the same bytes meanwhile
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return created


def write_parts(frame: pd.DataFrame, folder: str | Path) -> tuple[ScoreParts, int]:
    """Store a score set as parts under ``folder/parts/``; ``(manifest, bytes newly written)``."""
    manifest, blobs = prepare_parts(frame)
    created = store_parts(blobs, folder)
    return manifest, sum(p.stat().st_size for p in created)


# ---------------------------------------------------------------------------------------------- reading


def cache_dir() -> Path:
    """Where fetched parts are kept: ``$TYCHEON_PARTS_CACHE``, else ``$XDG_CACHE_HOME/tycheon/parts``
    (``~/.cache/tycheon/parts``)."""
    env = os.environ.get("TYCHEON_PARTS_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tycheon" / "parts"


def stored_path(folder: str | Path, part: Part) -> Path:
    """Where ``part`` is stored beside its version: ``parts/`` or, for a private part, ``private-parts/``."""
    return Path(folder) / (PRIVATE_DIR if part.private else PARTS_DIR) / f"{part.sha256}.parquet"


def _local_part(folder: str | Path, part: Part) -> Path | None:
    """The part's file stored beside its version (:func:`stored_path`), else in the local cache (public parts
    only: a private part is never copied into a shared cache), else None."""
    cached = () if part.private else (cache_dir() / f"{part.sha256}.parquet",)
    for path in (stored_path(folder, part), *cached):
        if path.is_file():
            return path
    return None


def resolve_part(folder: str | Path, part: Part, *, fetch: bool = True) -> Path:
    """The file of a part: the stored one under ``folder/parts/``, else the cached one, else (when the
    part has a ``url`` and ``fetch``) downloaded into the cache and checked. Raises
    :class:`PartsMissingError` when it cannot be had."""
    local = _local_part(folder, part)
    if local is not None:
        return local
    if part.url and fetch:
        from benchmarks.part_fetch import fetch_part

        return fetch_part(part.url, part.sha256, cache_dir(), size=part.bytes)
    raise PartsMissingError(_missing_message(folder, [part]))


def _missing_message(folder: str | Path, parts: Sequence[Part]) -> str:
    if parts and all(p.private for p in parts):
        return (
            f"{len(parts)} private score part(s) missing under {Path(folder) / PRIVATE_DIR}: they belong to a "
            "dataset that is not redistributable, so they exist only on the machine that ran it"
        )
    shown = ", ".join(p.sha256[:12] for p in parts[:5]) + (f" and {len(parts) - 5} more" if len(parts) > 5 else "")
    urls = [p for p in parts if p.url]
    how = (
        f"fetch them with network access (python -m benchmarks.validate fetches {len(urls)} of them from their "
        f"recorded URL into {cache_dir()})"
        if urls
        else "restore them from version control (git checkout -- benchmarks/results)"
    )
    return f"{len(parts)} score part(s) missing under {Path(folder) / PARTS_DIR}: {shown}; {how}"


def private_missing(folder: str | Path, manifest: ScoreParts) -> set[str]:
    """The datasets with a private part that is not here (a clone of the published results): their tables
    cannot be recomputed on this machine."""
    return {p.dataset for p in manifest.parts if p.private and _local_part(folder, p) is None}


def missing_parts(folder: str | Path, manifest: ScoreParts) -> list[Part]:
    """The parts neither stored under ``folder/parts/`` nor cached."""
    return [p for p in manifest.parts if _local_part(folder, p) is None]


def read_part_table(path: str | Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """A part's columns as numpy arrays (text as categoricals; a nullable exception column as
    ``(values, present)``) and its metadata."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(str(path))
    meta = json.loads((table.schema.metadata or {}).get(b"tycheon_part", b"{}"))
    out: dict[str, Any] = {}
    for name in table.column_names:
        col = table.column(name).combine_chunks() if table.num_rows else table.column(name)
        if pa.types.is_dictionary(col.type):
            if not table.num_rows:
                out[name] = pd.Categorical([])
                continue
            dictionary = pd.Index(col.dictionary.to_numpy(zero_copy_only=False), dtype=object)
            out[name] = pd.Categorical.from_codes(col.indices.to_numpy(zero_copy_only=False), categories=dictionary)
        elif name.startswith("x_"):
            present = np.asarray(pc.is_valid(col))
            values = np.asarray(col.fill_null(0.0))
            out[name] = (values, present)
        else:
            out[name] = col.to_numpy(zero_copy_only=False)
    return out, meta


def _key_ints(left: Any, right: Any) -> tuple[np.ndarray, np.ndarray, int]:
    """Integer codes of one key column on both sides in one code space (the right side's), -1 on the left
    where the value is not on the right; and the number of codes."""
    if isinstance(left, pd.Categorical) and isinstance(right, pd.Categorical):
        translate = pd.Index(right.categories).get_indexer(left.categories)
        codes = left.codes.astype(np.int64)
        return np.where(codes >= 0, translate[codes], -1), right.codes.astype(np.int64), len(right.categories)
    r_codes, uniques = pd.factorize(_bits(np.asarray(right)))
    l_codes = pd.Index(uniques).get_indexer(_bits(np.asarray(left)))
    return l_codes.astype(np.int64), r_codes.astype(np.int64), len(uniques)


def _lookup(left: dict[str, Any], right: dict[str, Any], keys: Sequence[str]) -> np.ndarray:
    """For each left row the position of the right row with the same keys (every key must be found),
    through one int64 key per row (mixed radix over the right side's codes)."""
    l_key = r_key = None
    missing = None
    for k in keys:
        lc, rc, radix = _key_ints(left[k], right[k])
        miss = lc < 0
        missing = miss if missing is None else missing | miss
        l_key = lc if l_key is None else l_key * radix + lc
        r_key = rc if r_key is None else r_key * radix + rc
    assert l_key is not None and r_key is not None and missing is not None
    pos = pd.Index(r_key).get_indexer(l_key)
    pos[missing] = -1
    if len(pos) and (pos < 0).any():
        raise ValueError(f"score parts do not match: {int((pos < 0).sum())} rows have no {'/'.join(keys)} entry")
    return pos


def _concat(arrays: list[Any]) -> Any:
    """Pieces of one column joined (categoricals over the union of their categories, sorted)."""
    if not arrays:
        return np.zeros(0)
    if all(isinstance(a, pd.Categorical) for a in arrays):
        from pandas.api.types import union_categoricals

        return arrays[0] if len(arrays) == 1 else union_categoricals(arrays, sort_categories=True)
    return np.concatenate([np.asarray(a, dtype=object) if isinstance(a, pd.Categorical) else a for a in arrays])


def _decode_chunk(folder: Path, manifest: ScoreParts, parts: list[Part], wanted: Sequence[str]) -> dict[str, Any]:
    """The columns ``wanted`` of one (dataset, protocol) as arrays (text as categoricals)."""
    facts = actuals = None
    pieces: list[dict[str, Any]] = []
    bands: dict[str, Any] | None = None
    for part in parts:
        data, meta = read_part_table(resolve_part(folder, part))
        if part.kind == "facts":
            facts = data
        elif part.kind == "actuals":
            actuals = data
        elif part.kind == "bands":
            bands = data
        elif part.kind == "model":
            with np.errstate(all="ignore"):
                pieces.append(_decode_model(part, data, meta, facts, actuals, bands, manifest, wanted))
            bands = None
        else:
            raise ValueError(f"unknown score part kind {part.kind!r}")
    return {c: _concat([p[c] for p in pieces]) for c in wanted}


def _decode_model(
    part: Part,
    data: dict[str, Any],
    meta: dict[str, Any],
    facts: dict[str, Any] | None,
    actuals: dict[str, Any] | None,
    bands: dict[str, Any] | None,
    manifest: ScoreParts,
    wanted: Sequence[str],
) -> dict[str, Any]:
    from tycheon.contract import is_quantile_column

    n = part.rows
    tag = np.zeros(n, dtype=np.int8)
    out: dict[str, Any] = {
        "dataset": pd.Categorical.from_codes(tag, categories=[part.dataset]),
        "protocol": pd.Categorical.from_codes(tag, categories=[part.protocol]),
        "model": pd.Categorical.from_codes(tag, categories=[part.model]),
    }
    for name, values in data.items():
        if not name.startswith("x_") and name != "spread":
            out[name] = values
    need = set(wanted)
    if facts is not None and need & set(facts) - set(out):
        pos = _lookup(data, facts, FACT_KEYS)
        for c in facts:
            if c not in FACT_KEYS and c not in out:
                out[c] = facts[c][pos]
    if actuals is not None and need & set(actuals) - set(out):
        pos = _lookup(data, actuals, ACTUAL_KEYS)
        for c in actuals:
            if c not in ACTUAL_KEYS and c not in out:
                out[c] = actuals[c][pos]
    point = data["point"]
    band_names = [c for c in manifest.columns if c[:2] in ("lo", "hi") and c[2:].isdigit()]
    if bands is not None and (need & set(band_names) or "has_band" in need):
        scale = out["scale_mae"] if "scale_mae" in out else _fact(data, facts, "scale_mae")
        pos = _lookup(data, bands, BAND_KEYS)
        for lv in BAND_LEVELS:
            if f"f{lv}" not in bands:
                continue
            lo, hi = band_values(point, bands[f"f{lv}"][pos], scale)
            r = data.get(f"x_r{lv}")
            if r is not None:
                lo[r[1]], hi[r[1]] = point[r[1]] - r[0][r[1]], point[r[1]] + r[0][r[1]]
            for side, values in (("lo", lo), ("hi", hi)):
                x = data.get(f"x_{side}{lv}")
                if x is not None:
                    values[x[1]] = x[0][x[1]]
                out[f"{side}{lv}"] = values
        if "has_band" not in out and "lo80" in out:
            out["has_band"] = np.isfinite(out["lo80"])
    quantiles = [c for c in manifest.columns if is_quantile_column(c)]
    if quantiles and need & set(quantiles):
        z = [float.fromhex(v) for v in meta["z"]]
        spread = data["spread"]
        for j, c in enumerate(quantiles):
            if c not in need:
                continue
            values = quantile_values(point, spread, z[j])
            x = data.get(f"x_{c}")
            if x is not None:
                values[x[1]] = x[0][x[1]]
            out[c] = values
    return {c: out[c] for c in wanted}


def _fact(data: dict[str, Any], facts: dict[str, Any] | None, name: str) -> np.ndarray:
    if facts is None or name not in facts:
        raise ValueError(f"score parts hold no {name!r} for the bands")
    return facts[name][_lookup(data, facts, FACT_KEYS)]


def _as_frame(manifest: ScoreParts, arrays: dict[str, Any], wanted: Sequence[str]) -> pd.DataFrame:
    from tycheon.backtest.scoreset import sorted_categorical

    columns: dict[str, Any] = {}
    for c in wanted:
        values = arrays[c]
        kind = manifest.dtypes.get(c, "")
        if kind == "category":
            columns[c] = sorted_categorical(values)
        elif kind == "object":
            columns[c] = np.asarray(values, dtype=object)
        elif isinstance(values, pd.Categorical):
            columns[c] = np.asarray(values)
        else:
            columns[c] = np.asarray(values).astype(kind, copy=False) if kind else values
    return pd.DataFrame(columns, copy=False)


def read_chunk(
    folder: str | Path, manifest: ScoreParts, *, dataset: str, protocol: str, columns: Sequence[str]
) -> pd.DataFrame:
    """The ``columns`` of one (dataset, protocol)'s rows, as a sidecar read of those rows gives them
    (text columns categorical with the chunk's sorted values)."""
    parts = [p for p in manifest.parts if p.dataset == dataset and p.protocol == protocol]
    if not parts:
        return pd.DataFrame({c: [] for c in columns})
    arrays = _decode_chunk(Path(folder), manifest, parts, columns)
    return _as_frame(manifest, arrays, columns)


def read_scores(folder: str | Path, manifest: ScoreParts, *, columns: Sequence[str] | None = None) -> pd.DataFrame:
    """The whole score set (or its ``columns``), rows in the order they were written, dtypes as recorded."""
    wanted = list(columns or manifest.columns)
    missing = missing_parts_with_fetch(folder, manifest)
    if missing:
        raise PartsMissingError(_missing_message(folder, missing))
    pieces = [
        _decode_chunk(Path(folder), manifest, [p for p in manifest.parts if (p.dataset, p.protocol) == key], wanted)
        for key in manifest.chunks()
    ]
    arrays = {c: _concat([p[c] for p in pieces]) for c in wanted}
    return _as_frame(manifest, arrays, wanted)


def missing_parts_with_fetch(folder: str | Path, manifest: ScoreParts) -> list[Part]:
    """The parts that cannot be had: not stored, not cached, and either without a URL or failing to fetch
    (fetching the others into the cache on the way)."""
    out = []
    for p in missing_parts(folder, manifest):
        try:
            resolve_part(folder, p)
        except (PartsMissingError, OSError, ValueError):
            out.append(p)
    return out
