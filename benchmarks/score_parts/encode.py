"""Encoding a score-set frame into parts (:mod:`benchmarks.score_parts`): per (dataset, protocol) its facts
and actuals tables, then per model run its bands and its rows, each an arrow table not yet written. Every
value a part derives (a fact or actual from its key, a band from a factor, a quantile from a spread) is
checked bit for bit, and a cell the formula does not give is stored as an exception, so the parts read
back the frame exactly (:mod:`~benchmarks.score_parts.decode`)."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from benchmarks.results_model import ScoreParts
from benchmarks.score_parts.layout import (
    ACTUAL_COLUMNS,
    ACTUAL_KEYS,
    BAND_KEYS,
    BAND_LEVELS,
    FACT_COLUMNS,
    FACT_KEYS,
    PART_FORMAT,
    ROW_KEYS,
    TAG_COLUMNS,
    _bits,
    band_values,
    quantile_values,
)

__all__ = ["best_candidate", "encode_scores", "iter_encoded", "z_candidates"]


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
    once: :func:`~benchmarks.score_parts.store.prepare_parts` takes them one at a time instead)."""
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
