"""Where a results version's score set is read from: its parts, a migrated sidecar's parts, or a sidecar file.

Three stores exist, and every reader (``validate``, ``verify``, ``render``, tests) goes through
:func:`score_source` instead of knowing which:

- **parts** (schema 1.6.0 on): the version's ``scores`` block lists content-addressed parts under
  ``<name>/parts/`` (:mod:`benchmarks.score_parts`);
- **a migrated sidecar**: a version written before records a ``sidecar`` block (the sha256 of one parquet
  file). :func:`migrate_sidecar` stored that file's table as parts and wrote a *migration manifest*,
  ``<name>/sidecars/<sha256>.parts.json``, with the parts and the file's arrow schema. The file itself can
  then leave the tree: :meth:`ScoreSource.problems` rebuilds it from the parts and checks that its bytes
  have the recorded sha256, so the version stays verifiable against the hash it was published with;
- **a sidecar file** still in the tree (``sidecars/<sha256>.parquet`` or the older
  ``vNNNN-<sha256>.parquet``), read as before.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks import score_parts as sp

__all__ = [
    "MANIFEST_SUFFIX",
    "ScoreSource",
    "migrate_sidecar",
    "migration_manifest_path",
    "score_source",
]

MANIFEST_SUFFIX = ".parts.json"


class _HashSink:
    """A write-only file that only hashes and counts what it is given."""

    def __init__(self) -> None:
        self.h = hashlib.sha256()
        self.n = 0
        self.closed = False

    def write(self, data: Any) -> int:
        view = memoryview(data)
        self.h.update(view)
        self.n += view.nbytes
        return view.nbytes

    def tell(self) -> int:
        return self.n

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


def migration_manifest_path(folder: str | Path, sha256: str) -> Path:
    """``<folder>/sidecars/<sha256>.parts.json``."""
    from benchmarks.results_io import SIDECAR_DIR

    return Path(folder) / SIDECAR_DIR / f"{sha256}{MANIFEST_SUFFIX}"


@dataclass
class ScoreSource:
    """A version's score set, read by (dataset, protocol) chunk or whole.

    ``kind`` is ``"parts"``, ``"migrated"`` or ``"sidecar"``; ``folder`` the results folder; ``manifest``
    the parts (None for a sidecar file); ``sidecar`` the file (for ``"sidecar"``); ``rebuilds`` the
    sha256 the parts must rebuild (for ``"migrated"``), with ``arrow_schema`` the file's schema."""

    kind: str
    folder: Path
    columns: list[str]
    n_rows: int
    manifest: sp.ScoreParts | None = None
    sidecar: Path | None = None
    rebuilds: str | None = None
    arrow_schema: Any = None
    writer: str = ""
    label: str = ""

    def chunk(self, *, dataset: str, protocol: str, columns: Sequence[str], key_order: bool = False) -> pd.DataFrame:
        """The ``columns`` of one (dataset, protocol)'s rows in the score-set form
        (:func:`tycheon.backtest.scoreset.conform_table`), sorted by key with ``key_order``."""
        from benchmarks.verify import _read_chunk, in_key_order
        from tycheon.backtest.scoreset import conform_table

        if self.sidecar is not None:
            return _read_chunk(
                self.sidecar, dataset=dataset, protocol=protocol, columns=list(columns), key_order=key_order
            )
        assert self.manifest is not None
        frame = conform_table(
            sp.read_chunk(self.folder, self.manifest, dataset=dataset, protocol=protocol, columns=list(columns))
        )
        return in_key_order(frame) if key_order else frame

    def frame(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The whole table as the sidecar file reads (``pd.read_parquet``), or its ``columns``."""
        if self.sidecar is not None:
            return pd.read_parquet(self.sidecar, columns=list(columns) if columns else None)
        assert self.manifest is not None
        return sp.read_scores(self.folder, self.manifest, columns=columns)

    def problems(self) -> list[str]:
        """Every reason the stored bytes are not what the version records: a missing part (one line saying
        which and how to get them), a part whose sha256, size or row count differs, and for a migrated
        sidecar a rebuilt file whose sha256 is not the recorded one."""
        if self.manifest is None:
            return []
        out = []
        # a private part (a dataset that is not redistributable) exists only where it was run: its absence is
        # expected in a clone, and those tables are then verified by their hash (verify.recompute_problems)
        away = sp.private_missing(self.folder, self.manifest)
        missing = [p for p in sp.missing_parts_with_fetch(self.folder, self.manifest) if p.dataset not in away]
        if missing:
            return [sp._missing_message(self.folder, missing)]
        import pyarrow.parquet as pq

        from benchmarks.results_io import file_sha256

        for part in self.manifest.parts:
            if part.dataset in away:
                continue
            path = sp.resolve_part(self.folder, part, fetch=False)
            actual = file_sha256(path)
            if actual != part.sha256:
                out.append(f"part {path} has sha256 {actual}, not the {part.sha256} recorded: it was modified")
                continue
            size, rows = path.stat().st_size, pq.ParquetFile(path).metadata.num_rows
            if size != part.bytes or rows != part.rows:
                out.append(
                    f"part {path}: {size} bytes and {rows} rows, the results record {part.bytes} and {part.rows}"
                )
        model_rows = sum(p.rows for p in self.manifest.parts if p.kind == "model")
        if model_rows != self.manifest.n_rows:
            out.append(f"the model parts hold {model_rows} rows, the results record {self.manifest.n_rows}")
        if not out and self.rebuilds:
            got = rebuilt_sidecar_sha256(self)
            if got != self.rebuilds:
                import pyarrow

                writer = f"parquet-cpp-arrow version {pyarrow.__version__}"
                same = writer == self.writer
                out.append(
                    f"the parts rebuild a sidecar with sha256 {got}, not the {self.rebuilds} this version records"
                    + (
                        ""
                        if same or not self.writer
                        else f" (the file was written by {self.writer}, this pyarrow writes as {writer}: the check "
                        "needs the same writer, see constraints.txt)"
                    )
                )
        return out


def _write_table_to(sink: Any, frame: pd.DataFrame, schema: Any) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, schema=schema, preserve_index=False)
    table = table.replace_schema_metadata(schema.metadata)
    pq.write_table(table, sink)


def rebuilt_sidecar_sha256(source: ScoreSource) -> str:
    """The sha256 of the sidecar file that a migrated version's parts rebuild: the table read back and
    written as the harness wrote it (``pq.write_table`` of ``pa.Table.from_pandas``, the recorded schema
    and its metadata). Equal to the recorded hash only if every cell comes back bit for bit (and the
    parquet writer is the one that wrote the file: its version is in the manifest)."""
    sink = _HashSink()
    _write_table_to(sink, source.frame(), source.arrow_schema)
    return sink.h.hexdigest()


def _migrated_source(folder: Path, sha: str, block: dict[str, Any], *, label: str = "") -> ScoreSource:
    """The score source of a migrated sidecar from its manifest ``block`` (parts and arrow schema)."""
    import pyarrow as pa

    manifest = sp.ScoreParts.from_json(block["scores"])
    schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(block["arrow_schema"])))
    return ScoreSource(
        "migrated",
        folder,
        manifest.columns,
        manifest.n_rows,
        manifest=manifest,
        rebuilds=sha,
        arrow_schema=schema,
        writer=str(block.get("parquet_writer", "")),
        label=label,
    )


def _load_manifest(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def score_source(json_path: str | Path, doc: Any) -> ScoreSource:
    """The score store of a results version (``doc``: its decoded JSON or :class:`ResultsDocument`).

    Raises
    ------
    ResultsValidationError
        Neither the parts, a migration manifest nor the sidecar file can be found.
    """

    from benchmarks.results_io import ResultsValidationError, find_sidecar

    json_path = Path(json_path)
    folder = json_path.parent
    if isinstance(doc, dict):  # decoded JSON: only its two score blocks are read
        scores = sp.ScoreParts.from_json(doc["scores"]) if doc.get("scores") else None
        side = doc.get("sidecar") or {}
    else:  # a ResultsDocument: its blocks as they are, without dumping the whole document
        scores, side = doc.scores, (doc.sidecar.model_dump() if doc.sidecar else {})
    if scores is not None:
        return ScoreSource("parts", folder, scores.columns, scores.n_rows, manifest=scores, label=str(json_path))
    sha = str(side.get("sha256", ""))
    found = find_sidecar(json_path, sha256=sha, recorded=side.get("path"))
    if found is not None:
        names = _parquet_names(found)
        return ScoreSource("sidecar", folder, names, int(side.get("n_rows", 0)), sidecar=found, label=str(found))
    mpath = migration_manifest_path(folder, sha)
    if mpath.is_file():
        return _migrated_source(folder, sha, _load_manifest(mpath), label=str(mpath))
    raise ResultsValidationError(
        f"{json_path}: score set not found: neither {folder / 'sidecars' / (sha + '.parquet')} nor its migration "
        f"manifest {mpath} exists (sha256 {sha})"
    )


def _parquet_names(path: Path) -> list[str]:
    import pyarrow.parquet as pq

    return list(pq.read_schema(path).names)


def migrate_sidecar(sidecar: str | Path, *, remove: bool = False) -> tuple[Path, sp.ScoreParts, int]:
    """Store a committed sidecar's table as parts beside it and write its migration manifest; with
    ``remove`` delete the file once the parts rebuild it (same sha256). ``(manifest path, parts, bytes
    newly written)``.

    Raises ``ValueError`` (nothing removed) when the parts do not rebuild the file bit for bit."""
    import pyarrow.parquet as pq

    from benchmarks.results_io import canonical_json, file_sha256

    sidecar = Path(sidecar)
    sha = file_sha256(sidecar)
    if sidecar.stem != sha:
        raise ValueError(f"{sidecar}: its name is not its sha256 ({sha}); only stored sidecars are migrated")
    folder = sidecar.parent.parent
    table = pq.read_table(sidecar)
    frame = table.to_pandas()
    schema = table.schema
    del table
    manifest, written = sp.write_parts(frame, folder)
    del frame
    block = {
        "about": "The parquet sidecar with this sha256 is stored as the parts below; reading them back and "
        "writing the table as the harness did rebuilds the file bit for bit (python -m benchmarks.validate "
        "checks this). See benchmarks/score_source.py.",
        "sidecar_sha256": sha,
        "sidecar_bytes": sidecar.stat().st_size,
        "parquet_writer": pq.ParquetFile(sidecar).metadata.created_by,
        "arrow_schema": base64.b64encode(schema.serialize().to_pybytes()).decode("ascii"),
        "scores": manifest.to_json(),
    }
    path = migration_manifest_path(folder, sha)
    source = _migrated_source(folder, sha, block)
    got = rebuilt_sidecar_sha256(source)
    if got != sha:
        raise ValueError(f"{sidecar}: the parts rebuild sha256 {got}, not {sha}; the sidecar is kept")
    fd, tmp = tempfile.mkstemp(prefix=".", suffix=".json.tmp", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(canonical_json(block))
    os.replace(tmp, path)
    if remove:
        sidecar.unlink()
    return path, manifest, written
