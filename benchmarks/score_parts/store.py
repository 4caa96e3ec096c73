"""Storing parts (:mod:`benchmarks.score_parts`): each part's parquet bytes, named by their sha256, placed
under ``<results>/<name>/parts/`` (a private part under ``private-parts/``) without ever overwriting one;
and finding a listed part again: stored, cached, or fetched from its ``url``."""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchmarks.results_model import ScorePart as Part
from benchmarks.results_model import ScoreParts
from benchmarks.score_parts.encode import iter_encoded

__all__ = [
    "PARTS_DIR",
    "PRIVATE_DIR",
    "PartsMissingError",
    "cache_dir",
    "mark_private",
    "missing_parts",
    "missing_parts_with_fetch",
    "part_bytes",
    "prepare_parts",
    "private_missing",
    "resolve_part",
    "store_parts",
    "stored_path",
    "write_parts",
]

PARTS_DIR = "parts"
PRIVATE_DIR = "private-parts"
"""Where the parts of a dataset that is not redistributable are kept: beside ``parts/``, never committed."""
_ZSTD_LEVEL = 9


class PartsMissingError(FileNotFoundError):
    """Parts of a score set are neither stored nor in the local cache (the message says which and how to
    get them)."""


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
