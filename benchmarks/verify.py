"""Results are a function of their sidecar: recompute every table of a results document and compare.

:func:`recompute_problems` reads the sidecar (the scored rows), rebuilds the leaderboards, interval tables
and competition tables with the same library calls the pipeline made (:mod:`tycheon.analysis`), with the
config, display names and run statuses recorded in the document, and compares them with the published
tables field by field. Strings, integers, booleans and nulls must be equal; floats must agree to a
relative tolerance of :data:`REL_TOL` (absolute :data:`ABS_TOL` near zero), stated here because
"reproducible" means: bit-identical on one machine, equal to this tolerance across machines, with every
rank and verdict identical. The first difference of each table is named (table, row, field, both values).

The validator recomputes only a version computed by the current statistics version
(:attr:`benchmarks.history.HistoryCheck.recompute`): an older one, such as ``small`` v0001-v0004 whose
sidecar predates the quantile columns, is verified by the hashes that later versions recorded for it.

Memory: the sidecar is never materialised whole. Each (dataset, protocol) is read on its own with a row
filter, only the columns its tables read (:func:`tycheon.analysis.leaderboard.columns_read`; a
competition table reads every score-set column), text columns as categoricals; a band or quantile
column without any value is one broadcast NaN, as the engine writes it; and the rows are put in the
tables' key order (unit, model, series, origin, step) column by column, so the library's key-order view
of them is their own arrays and not a second copy. The tables do not depend on the order or the
columns left out (they sort the rows themselves and read only those columns): the same library calls
on the same rows give the same numbers, which the tests check against the whole-file reading.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchmarks.results_model import ResultsDocument
from benchmarks.score_source import ScoreSource
from tycheon.backtest.scoreset import SCORESET_COLUMNS, conform_table, sorted_categorical
from tycheon.backtest.scoreset import key_order as rows_in_key_order
from tycheon.stats.threads import single_thread_blas

__all__ = ["ABS_TOL", "REL_TOL", "first_difference", "recompute_problems"]

REL_TOL = 1e-9
ABS_TOL = 1e-12


def first_difference(published: Any, recomputed: Any, path: str = "") -> str | None:
    """The first place two JSON values differ (floats to the stated tolerance), or None."""
    if isinstance(published, dict) and isinstance(recomputed, dict):
        for key in sorted(set(published) | set(recomputed)):
            if key not in published or key not in recomputed:
                return f"{path}.{key}: present in only one of published/recomputed"
            diff = first_difference(published[key], recomputed[key], f"{path}.{key}")
            if diff:
                return diff
        return None
    if isinstance(published, list) and isinstance(recomputed, list):
        if len(published) != len(recomputed):
            return f"{path}: {len(published)} entries published, {len(recomputed)} recomputed"
        for i, (a, b) in enumerate(zip(published, recomputed, strict=True)):
            diff = first_difference(a, b, f"{path}[{i}]")
            if diff:
                return diff
        return None
    numbers = (int, float)
    if (
        isinstance(published, numbers)
        and isinstance(recomputed, numbers)
        and not isinstance(published, bool)
        and not isinstance(recomputed, bool)
        and (isinstance(published, float) or isinstance(recomputed, float))
    ):
        if math.isclose(published, recomputed, rel_tol=REL_TOL, abs_tol=ABS_TOL) or (
            math.isnan(published) and math.isnan(recomputed)
        ):
            return None
        return f"{path}: published {published!r}, recomputed {recomputed!r}"
    if published != recomputed or type(published) is not type(recomputed):
        return f"{path}: published {published!r}, recomputed {recomputed!r}"
    return None


def _read_chunk(
    sidecar: Path, *, dataset: str, protocol: str, columns: list[str], key_order: bool = False
) -> pd.DataFrame:
    """The sidecar rows of one (dataset, protocol): ``columns`` only, in the score-set form
    (:func:`~tycheon.backtest.scoreset.conform_table`), and with ``key_order`` the rows sorted by
    :data:`~tycheon.backtest.scoreset.SORT_KEYS` (stably).

    Memory: the file is read one row group at a time (a row group holding none of the chunk's rows,
    by its two tags, is skipped), each group's cells copied into columns allocated once at the chunk's
    length; a float column without any value is one broadcast NaN (as the engine writes a band level
    without bands); the sort replaces one column at a time. So the peak is the chunk's columns plus
    one row group and one column, not the file nor two copies of the chunk. Nothing is taken from the
    file's statistics: every tag and cell is read."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    file = pq.ParquetFile(sidecar)
    groups = []  # (row group, mask of the chunk's rows or None for all, number of them)
    for i in range(file.metadata.num_row_groups):
        # the tags themselves, not the file's statistics: what a whole-file reader would see
        tags = file.read_row_group(i, columns=["dataset", "protocol"])
        mask = pc.and_(_equals(tags["dataset"], dataset), _equals(tags["protocol"], protocol))
        hits = int(pc.sum(mask).as_py() or 0)
        if hits:
            groups.append((i, None if hits == len(tags) else mask, hits))
    total = sum(h for _, _, h in groups)
    if not total:
        return pd.DataFrame({c: [] for c in columns})
    filled: dict[str, Any] = {}  # column -> array at the chunk's length, or a list of categorical parts
    nan_so_far: dict[str, np.dtype] = {}  # float columns without a value yet: nothing allocated for them
    at = 0
    for i, mask, hits in groups:
        part = file.read_row_group(i, columns=columns)
        if mask is not None:
            part = part.filter(mask)
        # text columns of a 1.x sidecar (plain strings) come back as categoricals too
        rows = part.to_pandas(split_blocks=True, self_destruct=True, strings_to_categorical=True)
        del part
        for c in columns:
            _fill(filled, nan_so_far, c, rows[c], at=at, total=total)
        at += hits
        del rows
        pa.default_memory_pool().release_unused()  # the group's arrow buffers (mimalloc would keep them)
    arrays: dict[str, Any] = {}
    for c in columns:
        if c in nan_so_far:  # no value in any row: one broadcast NaN, as the engine writes a band level without bands
            arrays[c] = np.broadcast_to(nan_so_far[c].type(np.nan), (total,))
        elif isinstance(filled[c], np.ndarray):
            arrays[c] = filled.pop(c)
        elif all(isinstance(p, pd.Categorical) for p in filled[c]):
            from pandas.api.types import union_categoricals

            arrays[c] = sorted_categorical(union_categoricals(filled.pop(c), sort_categories=True))
        else:
            arrays[c] = pd.concat([pd.Series(p) for p in filled.pop(c)], ignore_index=True).array
    frame = conform_table(pd.DataFrame(arrays, copy=False))
    return in_key_order(frame) if key_order else frame


def in_key_order(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` sorted by :data:`~tycheon.backtest.scoreset.SORT_KEYS` (stably), one column at a time, so
    the peak is the rows plus one column; the frame itself when already in that order."""
    order = rows_in_key_order(frame)
    if bool((np.diff(order) == 1).all()):
        return frame
    arrays = {c: frame[c].to_numpy() if isinstance(frame[c].dtype, np.dtype) else frame[c].array for c in frame.columns}
    del frame  # from here the arrays are the only reference to the rows
    for c in list(arrays):
        values = arrays[c]
        if isinstance(values, np.ndarray) and values.strides == (0,):
            continue  # one broadcast value: every order of it is itself
        # replaced one column at a time, so the peak is the rows plus one column
        arrays[c] = values[order] if isinstance(values, np.ndarray) else values.take(order)
        del values
    return pd.DataFrame(arrays, copy=False)


def _fill(
    filled: dict[str, Any], nan_so_far: dict[str, np.dtype], name: str, col: pd.Series, *, at: int, total: int
) -> None:
    """Put one row group's cells of column ``name`` at rows ``at:`` of the chunk's column: a numpy column
    is allocated once at the chunk's length (upcast if a later group's type is wider, as a concatenation
    would), only when a first value arrives for a float column; categoricals (and anything else) are
    kept as parts to be joined."""
    if not isinstance(col.dtype, np.dtype) or col.dtype == object:
        filled.setdefault(name, []).append(col.array)
        return
    values = col.to_numpy()
    if name not in filled and values.dtype.kind == "f" and (name in nan_so_far or at == 0):
        if bool(np.isnan(values).all()):
            nan_so_far[name] = np.result_type(nan_so_far.get(name, values.dtype), values.dtype)
            return
    if name not in filled:
        filled[name] = np.empty(total, dtype=np.result_type(nan_so_far.get(name, values.dtype), values.dtype))
        if name in nan_so_far:
            filled[name][:at] = np.nan
            del nan_so_far[name]
    elif isinstance(filled[name], np.ndarray) and np.result_type(filled[name], values) != filled[name].dtype:
        filled[name] = filled[name].astype(np.result_type(filled[name], values))
    filled[name][at : at + len(values)] = values


def _equals(column: Any, value: str) -> Any:
    """``column == value`` (an arrow boolean array; nulls false), on the dictionary's indices where the
    column is dictionary-encoded instead of comparing every row's string."""
    import pyarrow as pa
    import pyarrow.compute as pc

    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_dictionary(column.type):
        where = [j for j, v in enumerate(column.dictionary.to_pylist()) if v == value]
        if not where:
            return pa.array(np.zeros(len(column), dtype=bool))
        return pc.fill_null(pc.equal(column.indices, pa.scalar(where[0], column.indices.type)), False)
    return pc.fill_null(pc.equal(column, value), False)


def private_away(source: ScoreSource) -> set[str]:
    """The datasets whose private score parts are not on this machine (a dataset that is not redistributable,
    read from a clone of the published results): their tables cannot be recomputed here, and are verified by
    the version's tables hash only (:mod:`benchmarks.history`)."""
    from benchmarks import score_parts as sp

    return sp.private_missing(source.folder, source.manifest) if source.manifest is not None else set()


def _tables(
    doc: ResultsDocument, source: ScoreSource, names: list[str], skip: Collection[str] = ()
) -> tuple[list[dict], list[dict], list[dict]]:
    from benchmarks.leaderboard_spec import leaderboard_spec
    from tycheon.analysis.competition import competition_table
    from tycheon.analysis.leaderboard import columns_read, leaderboard_and_interval_tables

    cfg = doc.config
    # the pipeline's own builder on the recorded config: every setting (the verdict's adjustment, the minimum
    # cell, ...) as the run used it, a setting an older version does not record at the config model's default
    spec = leaderboard_spec(cfg)
    display = {m.id: m.display_name for m in doc.models}
    # pandas may store a non-default index as a column; pd.read_parquet made it the index, not a column
    every = [c for c in names if c not in ("dataset", "protocol") and not c.startswith("__index_level_")]
    # the models' own quantile columns are read only where a table ranks their CRPS (leaderboards rank
    # spec.metrics; the interval tables rank the first of them)
    own = spec.quantile_levels if "crps" in spec.metrics else ()
    reads = [c for c in columns_read(quantile_levels=own) if c in every]
    leaderboards, intervals, competition = [], [], []
    for entry in cfg["datasets"]:
        key = entry.get("label") or entry["name"]
        if key in skip:
            continue
        table = source.chunk(dataset=key, protocol="rolling_origin", columns=reads, key_order=True)
        if not len(table):
            continue
        tag = {"dataset": key, "protocol": "rolling_origin"}
        # the pipeline's one pass for both (spec.quantile_levels are the config's)
        boards, bands = leaderboard_and_interval_tables(
            table, spec=spec, display_names=display, point_metric=cfg["metrics"][0]
        )
        leaderboards += [{**tag, **t} for t in boards]
        intervals += [{**tag, **t} for t in bands]
        del table, boards, bands
    horizons = {t.dataset: t.horizon for t in doc.competition}
    for centry in cfg.get("competition", []):
        key = centry.get("label") or centry["dataset"]
        if key in skip:
            continue
        table = source.chunk(dataset=key, protocol="competition", columns=every)
        if not len(table):
            table = pd.DataFrame(columns=list(SCORESET_COLUMNS))
        statuses = {
            m.id: r.status for m in doc.models for r in m.runs if r.dataset == key and r.protocol == "competition"
        }
        tag = {"dataset": key, "protocol": "competition", "horizon": horizons.get(key)}
        competition += [
            {
                **tag,
                **competition_table(
                    table, competition=centry["competition"], metric=metric, statuses=statuses, display_names=display
                ),
            }
            for metric in centry["metrics"]
        ]
        del table
    return leaderboards, intervals, competition


def recompute_problems(doc: ResultsDocument, sidecar: Path | ScoreSource) -> list[str]:
    """Every published table that its score set does not give back (empty when all agree).

    ``sidecar`` is the version's score source (:func:`benchmarks.score_source.score_source`: parts, a
    migrated sidecar's parts or a sidecar file), or a sidecar file's path.
    """
    from benchmarks.results_io import to_json_value
    from benchmarks.results_model import CompetitionTable, IntervalTable, Leaderboard

    source = sidecar if isinstance(sidecar, ScoreSource) else _file_source(Path(sidecar))
    names = list(source.columns)
    # a 1.x sidecar (object text columns, int64 integers) is read into the current score-set form
    away = private_away(source)
    with single_thread_blas():  # as the pipeline built them (tycheon.stats.threads)
        leaderboards, intervals, competition = _tables(doc, source, names, away)
    problems = []
    for name, published, recomputed, model in (
        ("leaderboards", doc.leaderboards, leaderboards, Leaderboard),
        ("intervals", doc.intervals, intervals, IntervalTable),
        ("competition", doc.competition, competition, CompetitionTable),
    ):
        pub = [t.model_dump(mode="json") for t in published if t.dataset not in away]
        rec = [model.model_validate(to_json_value(t)).model_dump(mode="json") for t in recomputed]
        if len(pub) != len(rec):
            problems.append(f"{name}: {len(pub)} tables published, {len(rec)} recomputed from the sidecar")
            continue
        for i, (a, b) in enumerate(zip(pub, rec, strict=True)):
            diff = first_difference(a, b, f"{name}[{i}]")
            if diff:
                where = " ".join(str(a.get(k)) for k in ("dataset", "unit", "demand_class", "metric") if a.get(k))
                problems.append(f"{diff} (table {where}); the published numbers are not those of the sidecar")
    return problems


def _file_source(path: Path) -> ScoreSource:
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    return ScoreSource("sidecar", path.parent, list(meta.schema.to_arrow_schema().names), meta.num_rows, sidecar=path)
