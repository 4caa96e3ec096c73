"""Reading parts back (:mod:`benchmarks.score_parts`): a part's columns, one (dataset, protocol)'s rows or
the whole score set, with the derived columns rebuilt by the layout's formulas and the stored exceptions
put back, so the frame is the one that was written, bit for bit."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchmarks.results_model import ScorePart as Part
from benchmarks.results_model import ScoreParts
from benchmarks.score_parts.layout import (
    ACTUAL_KEYS,
    BAND_KEYS,
    BAND_LEVELS,
    FACT_KEYS,
    _bits,
    band_values,
    quantile_values,
)
from benchmarks.score_parts.store import PartsMissingError, _missing_message, missing_parts_with_fetch, resolve_part

__all__ = ["read_chunk", "read_part_table", "read_scores"]


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
