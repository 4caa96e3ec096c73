"""Results files: canonical JSON, append-only versions, atomic writes, score sets as shared parts, validation.

Layout: ``benchmarks/results/<name>/<version>.json`` with ``<version>`` = ``v0001``, ``v0002``, ... (the
next free number in that folder). The per-record scores are stored as **content-addressed parts**
(:mod:`benchmarks.score_parts`) under ``<name>/parts/<sha256>.parquet``, listed by the JSON's ``scores``
block: a version whose scores did not change writes no new part, one that adds a model adds that model's
parts. Versions written before schema 1.6.0 record a ``sidecar`` block (the sha256 of one parquet file,
``sidecars/<sha256>.parquet`` or ``vNNNN-<sha256>.parquet``); a migrated sidecar is read from the parts its
manifest ``sidecars/<sha256>.parts.json`` lists, which rebuild the file bit for bit
(:mod:`benchmarks.score_source`).

Guarantees:

- **append-only**: an existing version is never overwritten (:class:`ResultsExistError` names the path);
  the final JSON is placed with ``os.link`` from a temp file, which fails if the target exists, so even
  two concurrent writers cannot clobber one another;
- **atomic**: parts and JSON are written to temp files in the same folder and linked into place only when
  complete; temp files are removed in ``finally``, so Ctrl-C leaves no partial version behind (a part
  without a version is inert: nothing references it, and another version may share it);
- **no overwrite of a part either**: a part whose hash is already stored is not written again; the stored
  file is hashed and must match (else :class:`ResultsValidationError` names it);
- **canonical**: ``json.dumps(sort_keys=True)`` with NaN/inf written as ``null``, so equal results give
  equal bytes; wall-clock facts live only under keys named ``timings`` (see :func:`strip_volatile`);
- **history**: every version is stamped with the statistics version that computed it, the hash of its
  tables and the sha256 of every earlier version's file (:mod:`benchmarks.history`), so that a version
  older statistics computed stays verifiable by hash once today's statistics give other tables.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import os
import re
import tempfile
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import ValidationError

from benchmarks.results_model import SCHEMA_VERSION, ResultsBody, ResultsDocument, ScoreParts, document_problems
from benchmarks.schema import SCHEMA_PATH

__all__ = [
    "RESULTS_DIR",
    "SCHEMA_PATH",
    "SCHEMA_VERSION",
    "ResultsExistError",
    "ResultsValidationError",
    "canonical_json",
    "file_sha256",
    "find_sidecar",
    "next_version",
    "read_results",
    "read_score_frame",
    "schema",
    "SIDECAR_DIR",
    "sidecar_file",
    "stored_sidecar_name",
    "to_json_value",
    "strip_volatile",
    "validate_document",
    "validate_results_file",
    "write_results",
]

BENCHMARKS_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCHMARKS_DIR / "results"
VOLATILE_KEYS = frozenset({"timings", "cache", "isolation"})
SIDECAR_DIR = "sidecars"
_VERSION = re.compile(r"^v(\d{4})\.json$")
_SHA = re.compile(r"^[0-9a-f]{64}$")
_LEGACY_SIDECAR = re.compile(r"^v\d{4}-([0-9a-f]{64})\.parquet$")


class ResultsExistError(FileExistsError):
    """The results version already exists; versions are append-only."""


class ResultsValidationError(ValueError):
    """A results document or file that does not satisfy the schema or its sidecar hash."""


def to_json_value(value: Any) -> Any:
    """Plain JSON values: numpy scalars as numbers, NaN/inf as None, timestamps as ISO strings."""
    if isinstance(value, dict):
        return {str(k): to_json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json_value(v) for v in value]
    if isinstance(value, np.ndarray):
        return [to_json_value(v) for v in value.tolist()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        f = float(value)
        return f if math.isfinite(f) else None
    if isinstance(value, (pd.Timestamp, np.datetime64)):
        return None if pd.isna(value) else pd.Timestamp(value).isoformat()
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"cannot write {type(value).__name__} {value!r} to results JSON")


def canonical_json(doc: dict[str, Any] | ResultsBody) -> str:
    """Sorted keys, NaN/inf as ``null``, numpy scalars as plain numbers, trailing newline.

    A model is written with the fields that were set (a field version 1 made optional and the producer
    left out stays out), so a document read and written again keeps its bytes."""
    if isinstance(doc, ResultsBody):
        doc = doc.model_dump(mode="python", exclude_unset=True)
    return json.dumps(to_json_value(doc), sort_keys=True, indent=1, allow_nan=False, ensure_ascii=False) + "\n"


def strip_volatile(doc: Any) -> Any:
    """The document without wall-clock and machine facts (every key named ``timings``, ``cache`` or
    ``isolation``), for comparing two runs; a results document also without ``provenance.history`` (the
    hashes of the versions before it: where it sits in its folder, as its version number says)."""
    out = _strip(doc)
    if isinstance(out, dict) and isinstance(out.get("provenance"), dict) and "history" in out["provenance"]:
        out["provenance"] = {k: v for k, v in out["provenance"].items() if k != "history"}
    return out


def _strip(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: _strip(v) for k, v in doc.items() if k not in VOLATILE_KEYS}
    if isinstance(doc, list):
        return [_strip(v) for v in doc]
    return doc


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    """The published JSON Schema (draft 2020-12) of results version 1, as committed (generated from
    :mod:`benchmarks.results_model` by ``python -m benchmarks.schema``)."""
    return json.loads(SCHEMA_PATH.read_text())


def validate_document(doc: Any) -> list[str]:
    """Problems of a decoded results document against :class:`ResultsDocument`, each as
    ``<json path>: <message>`` (empty when valid)."""
    try:
        ResultsDocument.model_validate(doc)
    except ValidationError as err:
        return document_problems(err)
    return []


def read_results(path: str | Path) -> ResultsDocument:
    """A results file read through the model (raises :class:`ResultsValidationError` naming the file and
    every problem; the sidecar is not checked here, see :func:`validate_results_file`)."""
    path = Path(path)
    try:
        return ResultsDocument.model_validate_json(path.read_text(encoding="utf-8"))
    except ValidationError as err:
        raise ResultsValidationError(f"{path}: " + "; ".join(document_problems(err)[:10])) from err


def next_version(folder: str | Path) -> str:
    """The next free version in a results folder: ``v0001`` when empty, else the highest + 1."""
    folder = Path(folder)
    numbers = [int(m.group(1)) for p in folder.glob("v*.json") if (m := _VERSION.match(p.name))]
    return f"v{max(numbers, default=0) + 1:04d}"


def stored_sidecar_name(sha256: str) -> str:
    """The recorded path of a sidecar with this hash, relative to its results folder:
    ``sidecars/<sha256>.parquet``."""
    return f"{SIDECAR_DIR}/{sha256}.parquet"


def find_sidecar(json_path: str | Path, *, sha256: str, recorded: str | None = None) -> Path | None:
    """The sidecar of a results file, found by its hash, or None when neither layout has it.

    Looks first in the content-addressed store (``<folder>/sidecars/<sha256>.parquet``), then at the
    recorded path when it is the pre-store layout (``<folder>/vNNNN-<sha256>.parquet`` beside the JSON,
    with the same hash in its name). The file's content is not hashed here (see
    :func:`validate_results_file`)."""
    folder = Path(json_path).parent
    if not _SHA.match(sha256):
        return None
    stored = folder / stored_sidecar_name(sha256)
    if stored.is_file():
        return stored
    if recorded:
        legacy = _LEGACY_SIDECAR.match(recorded)
        if legacy and legacy.group(1) == sha256 and (folder / recorded).is_file():
            return folder / recorded
    return None


def sidecar_file(json_path: str | Path, sidecar: Any) -> Path:
    """The sidecar file of a results file, by the hash its ``sidecar`` block records.

    Parameters
    ----------
    json_path : path
        The results JSON.
    sidecar : Sidecar or dict
        Its ``sidecar`` block (``sha256`` and ``path``).

    Raises
    ------
    ResultsValidationError
        No file with that hash in either layout (the message names where it was looked for).
    """
    block = sidecar if isinstance(sidecar, dict) else sidecar.model_dump()
    sha, recorded = str(block.get("sha256", "")), block.get("path")
    found = find_sidecar(json_path, sha256=sha, recorded=recorded)
    if found is None:
        folder = Path(json_path).parent
        where = [str(folder / stored_sidecar_name(sha))]
        if recorded and recorded != stored_sidecar_name(sha):
            where.append(str(folder / recorded))
        raise ResultsValidationError(f"{json_path}: sidecar {' or '.join(where)} is missing (sha256 {sha})")
    return found


def _link_no_clobber(tmp: str, final: Path) -> None:
    """Place ``tmp`` at ``final`` atomically; :class:`FileExistsError` if ``final`` exists."""
    try:
        os.link(tmp, final)
    except FileExistsError:
        raise
    except OSError as err:  # a filesystem without hard links: check, then rename atomically
        if err.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
            raise
        if final.exists():
            raise FileExistsError(errno.EEXIST, "exists", str(final)) from err
        os.replace(tmp, final)


def _place_no_clobber(tmp: str, final: Path) -> None:
    try:
        _link_no_clobber(tmp, final)  # atomic and refuses an existing target
    except FileExistsError as err:
        raise ResultsExistError(
            f"results version {final} already exists; versions are append-only, so it is never "
            "overwritten (run again to write the next version)"
        ) from err


def write_results(
    doc: ResultsBody | dict[str, Any],
    scores: pd.DataFrame | ScoreParts,
    *,
    results_dir: str | Path = RESULTS_DIR,
    version: str | None = None,
    statistics_version: int | None = None,
) -> Path:
    """Validate and write a results document and its score parts; return the JSON path.

    Parameters
    ----------
    doc : ResultsBody or dict
        The results document without ``version`` and ``scores`` (they are filled in here); a dict is
        read through :class:`ResultsBody` (only the fields it has are written).
    scores : DataFrame or ScoreParts
        Per-record scores, stored as parts (a part already stored is not written again); or the parts
        manifest of a score set already stored in this folder (a restatement,
        :mod:`benchmarks.restat`): every part must be there with its sha256 (or have a URL), and nothing
        is written but the JSON.
    results_dir : path
        Parent of the ``<name>/`` folder.
    version : str, optional
        Explicit version (``vNNNN``); default: the next free one.
    statistics_version : int, optional
        The statistics version that computed the tables; default: the running code's
        (:data:`tycheon._version.STATISTICS_VERSION`). Recorded with the tables' hash and the sha256 of every
        earlier version of the folder (``provenance.statistics_version``, ``tables_sha256``, ``history``).

    Raises
    ------
    ResultsExistError
        The version exists already (the message names the path).
    ResultsValidationError
        The finished document does not satisfy the schema, or a listed part is missing or modified
        (nothing is written).
    """
    from benchmarks import history

    body = doc.model_dump(mode="python", exclude_unset=True) if isinstance(doc, ResultsBody) else dict(doc)
    folder = Path(results_dir) / body["name"]
    folder.mkdir(parents=True, exist_ok=True)
    version = version or next_version(folder)
    if not re.fullmatch(r"v\d{4}", version):
        raise ValueError(f"version must look like v0001, got {version!r}")
    final = folder / f"{version}.json"
    if final.exists():
        raise ResultsExistError(
            f"results version {final} already exists; versions are append-only, so it is never overwritten"
        )
    from benchmarks.score_parts import PARTS_DIR, PRIVATE_DIR, mark_private, prepare_parts, store_parts

    blobs: dict[str, bytes] = {}
    closed = not_redistributable(body)
    if isinstance(scores, ScoreParts):
        _check_stored_parts(folder, scores, final)
        manifest = scores
        leaked = sorted({p.dataset for p in manifest.parts if p.dataset in closed and not p.private})
        if leaked:
            raise ResultsValidationError(
                f"refusing to write {final}: it lists public score parts of {', '.join(leaked)}, which "
                "is not redistributable (its parts must be private, kept out of parts/)"
            )
        private: set[str] = set()
    else:
        manifest, blobs = prepare_parts(scores)
        private = mark_private(manifest, closed)
    provenance = dict(body["provenance"])
    provenance["statistics_version"] = (
        history.current_statistics_version() if statistics_version is None else int(statistics_version)
    )
    provenance["history"] = history.history_entries(folder, before=version)
    provenance.pop("tables_sha256", None)
    full = {
        **body,
        "provenance": provenance,
        "version": version,
        "schema_version": SCHEMA_VERSION,
        "scores": manifest.to_json(),
    }
    decoded = json.loads(canonical_json(full))  # the tables as a reader decodes them, for their hash
    decoded["provenance"]["tables_sha256"] = history.tables_sha256(decoded)
    text = canonical_json(decoded)
    problems = validate_document(decoded)  # what ``text`` decodes to
    if problems:
        raise ResultsValidationError(
            f"refusing to write {final}: the document does not satisfy the results model: " + "; ".join(problems[:10])
        )
    tmp = None
    created: list[Path] = []
    try:
        # parts already stored (same bytes) are not written again; a private part goes to private-parts/
        created = store_parts(blobs, folder, private=private)
        fd, tmp = tempfile.mkstemp(prefix=f".{version}-", suffix=".json.tmp", dir=folder)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        _place_no_clobber(tmp, final)
    except BaseException:
        # never leave a part this write created that no version lists (one stored before stays)
        if not final.exists():
            listed = _listed_parts(folder)
            for path in created:
                if path.stem not in listed:
                    path.unlink(missing_ok=True)
            for store in (PARTS_DIR, PRIVATE_DIR):  # the parts folders too, if this write made them empty
                with contextlib.suppress(OSError):
                    (folder / store).rmdir()
        raise
    finally:
        if tmp and os.path.exists(tmp):
            os.unlink(tmp)
    return final


def validate_results_file(path: str | Path) -> list[str]:
    """Every reason a results file is not valid: JSON syntax, schema, sidecar presence (found by its
    hash, :func:`find_sidecar`), name, hash and row count. Empty when the file is valid."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return [f"{path}: no such file"]
    except json.JSONDecodeError as err:
        return [f"{path}: not valid JSON: {err}"]
    problems = [f"{path}: schema: {p}" for p in validate_document(doc)]
    if problems:
        return problems
    if doc.get("scores"):
        return [f"{path}: {p}" for p in _source_problems(path, doc)]
    side = doc.get("sidecar") if isinstance(doc, dict) else None
    if not isinstance(side, dict) or "path" not in side or "sha256" not in side:
        return problems
    recorded, sha = str(side["path"]), str(side["sha256"])
    if recorded != stored_sidecar_name(sha) and not _LEGACY_SIDECAR.match(recorded):
        problems.append(
            f"{path}: sidecar path {recorded!r} must be {stored_sidecar_name(sha)!r} (or, written before the "
            "sidecar store, vNNNN-<sha256>.parquet beside the JSON)"
        )
        return problems
    if sha not in recorded:
        problems.append(f"{path}: sidecar name {recorded} does not contain its sha256 {sha}")
        return problems
    sidecar = find_sidecar(path, sha256=sha, recorded=recorded)
    if sidecar is None and _migrated(path, sha):
        return [f"{path}: {p}" for p in _source_problems(path, doc)]
    if sidecar is None:
        where = path.parent / stored_sidecar_name(sha)
        legacy = f" (nor {path.parent / recorded})" if recorded != stored_sidecar_name(sha) else ""
        problems.append(f"{path}: sidecar {where} is missing{legacy}")
        return problems
    actual = file_sha256(sidecar)
    if actual != sha:
        problems.append(
            f"{path}: sidecar {sidecar} has sha256 {actual}, but the results record "
            f"{sha}: the sidecar was modified or replaced"
        )
    try:
        import pyarrow.parquet as pq

        n_rows = pq.ParquetFile(sidecar).metadata.num_rows
    except Exception as err:  # noqa: BLE001 - any unreadable sidecar is reported, not raised
        problems.append(f"{path}: sidecar {sidecar} is not readable parquet: {err}")
    else:
        if n_rows != side.get("n_rows"):
            problems.append(f"{path}: sidecar has {n_rows} rows, the results record {side.get('n_rows')}")
    return problems


def not_redistributable(doc: Any) -> set[str]:
    """The datasets of a results document (a dict or its body) flagged not redistributable: their score
    parts are private (:data:`benchmarks.score_parts.PRIVATE_DIR`)."""
    datasets = doc.get("datasets") if isinstance(doc, dict) else None
    return {
        str(d.get("name"))
        for d in (datasets or [])
        if isinstance(d, dict) and d.get("redistributable") is False and d.get("name") is not None
    }


def _check_stored_parts(folder: Path, manifest: ScoreParts, final: Path) -> None:
    """Refuse to list parts that are not stored in ``folder`` with their sha256 (a part with a URL may be
    absent: it is fetched when read)."""
    from benchmarks.score_parts import stored_path

    for part in manifest.parts:
        path = stored_path(folder, part)
        if not path.is_file():
            if part.url:
                continue
            raise ResultsValidationError(f"refusing to write {final}: it lists the part {path}, which is missing")
        if file_sha256(path) != part.sha256:
            raise ResultsValidationError(
                f"refusing to write {final}: the stored part {path} does not have the sha256 its name says"
            )


def _listed_parts(folder: Path) -> set[str]:
    """The sha256 of every part a version or a migration manifest in ``folder`` lists."""
    listed: set[str] = set()
    files = [*existing_versions(folder), *(folder / SIDECAR_DIR).glob("*.parts.json")]
    for path in files:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        block = doc.get("scores") if isinstance(doc, dict) else None
        if isinstance(block, dict):
            listed |= {str(p.get("sha256")) for p in block.get("parts", []) if isinstance(p, dict)}
    return listed


def _migrated(path: Path, sha256: str) -> bool:
    from benchmarks.score_source import migration_manifest_path

    return migration_manifest_path(path.parent, sha256).is_file()


def _source_problems(path: Path, doc: dict[str, Any]) -> list[str]:
    """The problems of a version's stored parts (:meth:`benchmarks.score_source.ScoreSource.problems`), and
    any part of a dataset that is not redistributable which is not private or sits in ``parts/``, where it
    would be committed and published."""
    from benchmarks.score_parts import PARTS_DIR
    from benchmarks.score_source import score_source

    try:
        source = score_source(path, doc)
        problems = source.problems()
    except (ValueError, KeyError) as err:
        return [f"its score parts cannot be read: {err}"]
    closed = not_redistributable(doc)
    for part in source.manifest.parts if source.manifest is not None else []:
        public = source.folder / PARTS_DIR / f"{part.sha256}.parquet"
        if part.dataset in closed and not part.private:
            problems.append(
                f"score part {part.sha256[:12]} ({part.kind}) of {part.dataset}, which is not redistributable, "
                "is listed as public: its series ids and values would be published (it must be private)"
            )
        elif part.private and public.exists():
            problems.append(
                f"private score part {public} of {part.dataset} (not redistributable) sits in {PARTS_DIR}/, "
                "where it would be committed and published: move it to private-parts/"
            )
    return problems


def read_score_frame(path: str | Path, columns: list[str] | None = None) -> pd.DataFrame:
    """The score set of a results version as one frame, from wherever it is stored (parts, a migrated
    sidecar's parts or the sidecar file), rows in their written order."""
    from benchmarks.score_source import score_source

    path = Path(path)
    return score_source(path, json.loads(path.read_text(encoding="utf-8"))).frame(columns)


def existing_versions(folder: str | Path) -> Iterable[Path]:
    """Results JSON files in a folder, oldest version first."""
    return sorted(p for p in Path(folder).glob("v*.json") if _VERSION.match(p.name))
