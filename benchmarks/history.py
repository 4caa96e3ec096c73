"""Results history: which statistics computed a version, and the hash chain that keeps older versions verifiable.

A results version is a function of its score set *and* of the statistics that turned the scores into tables
(:data:`tycheon._version.STATISTICS_VERSION`). When the statistics change, today's code no longer gives back
the tables of a version that older statistics computed, so such a version cannot be verified by recomputing
it. It is verified by hash instead:

- every version records the statistics version that computed it (``provenance.statistics_version``; a file
  written before that field existed was computed by version 1), the sha256 of its own published tables
  (``provenance.tables_sha256``, :func:`tables_sha256`) and the sha256 of the file bytes of every earlier
  version of the same benchmark when it was written (``provenance.history``, :func:`history_entries`);
- :func:`check_history` (called by :func:`benchmarks.validate.verify_file`) decides: a version of the
  current statistics version is recomputed as before; a version of an older one is not: its schema and
  score parts are checked (:func:`benchmarks.results_io.validate_results_file`), its own tables hash if it
  has one, and its file bytes against the hash that every later version recorded for it. A difference is a
  problem naming the file, the later version and both hashes.

The comparison helpers (:func:`verdict_changes`, :func:`score_set_change`, :func:`statistics_reasons`) say
what changed between two versions and why; the site's version-history page
(:mod:`benchmarks.render.history`) and ``python -m benchmarks.restat`` print them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "TABLE_KEYS",
    "HistoryCheck",
    "ScoreSetChange",
    "VerdictChanges",
    "check_history",
    "current_statistics_version",
    "describe_transition",
    "history_entries",
    "score_set_change",
    "statistics_changes",
    "statistics_reasons",
    "statistics_version_of",
    "tables_sha256",
    "verdict_changes",
    "version_files",
]

TABLE_KEYS = ("leaderboards", "intervals", "competition", "analyses", "replay", "sensitivity")
"""The top-level blocks of a results document that statistics compute: what :func:`tables_sha256` hashes."""

_VERSION_FILE = re.compile(r"^v(\d{4})\.json$")


def current_statistics_version() -> int:
    """The statistics version of the running code (read at call time, so a test may patch it)."""
    from tycheon import _version

    return int(_version.STATISTICS_VERSION)


def statistics_changes() -> dict[int, str]:
    """What each statistics version changed, in plain words (:data:`tycheon._version.STATISTICS_CHANGES`)."""
    from tycheon import _version

    return dict(_version.STATISTICS_CHANGES)


def _provenance(doc: Any) -> Mapping[str, Any]:
    if isinstance(doc, Mapping):
        prov = doc.get("provenance")
        return prov if isinstance(prov, Mapping) else {}
    prov = getattr(doc, "provenance", None)
    return prov.model_dump(exclude_unset=True) if prov is not None else {}


def statistics_version_of(doc: Any) -> int:
    """The statistics version that computed a results document's tables.

    Parameters
    ----------
    doc : dict or ResultsDocument
        The decoded JSON or the typed document.

    Returns
    -------
    int
        ``provenance.statistics_version``; 1 where the field is absent (written before it existed).
    """
    value = _provenance(doc).get("statistics_version")
    return 1 if value is None else int(value)


def tables_sha256(doc: Mapping[str, Any]) -> str:
    """The content hash of a document's published tables.

    Parameters
    ----------
    doc : dict
        The decoded JSON of a results version (as read from its file, or as about to be written).

    Returns
    -------
    str
        sha256 (hex) of the canonical JSON (:func:`benchmarks.results_io.canonical_json`: sorted keys, NaN as
        null) of the blocks in :data:`TABLE_KEYS` that the document has, wall-clock keys left out
        (:func:`benchmarks.results_io.strip_volatile`), so two runs with equal tables have equal hashes.
    """
    from benchmarks.results_io import canonical_json, strip_volatile

    blocks = {k: strip_volatile(doc[k]) for k in TABLE_KEYS if k in doc}
    return hashlib.sha256(canonical_json(blocks).encode("utf-8")).hexdigest()


def _number(version: str) -> int:
    return int(version[1:])


def _version_files(folder: Path) -> list[tuple[str, Path]]:
    """``(version, path)`` of every version file in ``folder``, oldest first."""
    found = [(f"v{m.group(1)}", p) for p in Path(folder).glob("v*.json") if (m := _VERSION_FILE.match(p.name))]
    return sorted(found)


_PARSED: dict[str, dict[str, Any] | None] = {}
"""Decoded versions by the sha256 of their bytes (content-addressed, so never stale): checking every version
of a folder parses each file once."""


def _load(path: Path) -> tuple[str, dict[str, Any] | None]:
    """``(sha256 of the file's bytes, its decoded JSON or None when it is not a JSON object)``; the bytes are
    read and hashed every time, only the parsing is cached (by that hash)."""
    data = Path(path).read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    if sha not in _PARSED:
        try:
            doc = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            doc = None
        if len(_PARSED) >= 32:
            _PARSED.pop(next(iter(_PARSED)))
        _PARSED[sha] = doc if isinstance(doc, dict) else None
    return sha, _PARSED[sha]


def history_entries(folder: str | Path, *, before: str) -> list[dict[str, Any]]:
    """The ``provenance.history`` of a version about to be written: every earlier version of the folder.

    Parameters
    ----------
    folder : path
        The benchmark's results folder (``benchmarks/results/<name>``).
    before : str
        The version being written (``vNNNN``); versions numbered below it are listed.

    Returns
    -------
    list of dict
        ``{"version", "sha256", "statistics_version"}`` per earlier version, oldest first; ``sha256`` is that
        of the file's bytes, ``statistics_version`` the one it records (1 if none, or if it is not JSON).
    """
    out = []
    for version, path in _version_files(Path(folder)):
        if _number(version) >= _number(before):
            continue
        sha, doc = _load(path)
        out.append({"version": version, "sha256": sha, "statistics_version": statistics_version_of(doc) if doc else 1})
    return out


@dataclass(frozen=True)
class HistoryCheck:
    """What :func:`check_history` found for one version.

    Attributes
    ----------
    version : str
        The version checked.
    statistics_version : int
        The statistics version that computed it.
    current : int
        The running code's statistics version.
    pinned_by : tuple of str
        The later versions whose ``history`` records this version's sha256 (all matching).
    has_tables_sha256 : bool
        Whether the version records its own tables hash (checked).
    problems : tuple of str
        Every hash that does not match, each naming the file, the version that recorded it and both hashes.
    """

    version: str
    statistics_version: int
    current: int
    pinned_by: tuple[str, ...] = ()
    has_tables_sha256: bool = False
    problems: tuple[str, ...] = field(default_factory=tuple)

    @property
    def recompute(self) -> bool:
        """Whether the tables are to be recomputed: computed by the current statistics (also when a hash
        fails: the recomputation then names the first edited field of each table)."""
        return self.statistics_version == self.current

    @property
    def note(self) -> str | None:
        """How a valid version of an older statistics version was verified (None when it is recomputed)."""
        if self.statistics_version >= self.current:
            return None
        head = f"computed by statistics version {self.statistics_version}"
        if self.pinned_by:
            return f"{head}; verified by hash (recorded in {', '.join(self.pinned_by)}), not recomputed"
        own = ", score parts and its own tables hash" if self.has_tables_sha256 else " and score parts"
        return (
            f"{head}; not pinned by a later version (none records its hash yet): checked for schema{own}, "
            "not recomputed"
        )


def check_history(path: str | Path) -> HistoryCheck:
    """Check a version's statistics version, own tables hash and place in its benchmark's hash chain.

    Parameters
    ----------
    path : path
        A results version ``<folder>/vNNNN.json`` (its schema and score parts are checked elsewhere:
        :func:`benchmarks.results_io.validate_results_file`).

    Returns
    -------
    HistoryCheck
        Problems: a statistics version newer than the running code's; a ``tables_sha256`` its tables do not
        give; an earlier version its own ``history`` lists that is missing from its folder (unless none of
        them is there: a lone copy of the version); a later version (one that records
        a ``history``) that records another sha256 for it, or does not list it at all (it was added after that
        version was written). ``recompute`` says whether the caller should recompute its tables.
    """
    path = Path(path)
    folder = path.parent
    m = _VERSION_FILE.match(path.name)
    actual, doc = _load(path)
    current = current_statistics_version()
    if doc is None:
        return HistoryCheck(path.stem, 1, current, problems=(f"{path}: not valid JSON",))
    version = f"v{m.group(1)}" if m else str(doc.get("version", path.stem))
    sv = statistics_version_of(doc)
    prov = _provenance(doc)
    problems: list[str] = []
    if sv > current:
        problems.append(
            f"{path}: computed by statistics version {sv}, newer than this code's {current}: check it with the "
            "code that wrote it, or newer"
        )
    recorded = prov.get("tables_sha256")
    if recorded is not None:
        got = tables_sha256(doc)
        if got != recorded:
            problems.append(
                f"{path}: its published tables hash to sha256 {got}, but it records tables_sha256 {recorded}: a "
                "table was edited after the version was written"
            )
    recorded_history = list(prov.get("history") or [])
    # a lone copy of a version (none of the versions it lists beside it) is checked on its own; in its
    # benchmark's folder, every version it lists must still be there
    lone = not any((folder / f"{e.get('version')}.json").is_file() for e in recorded_history)
    for entry in [] if lone else recorded_history:
        earlier = folder / f"{entry.get('version')}.json"
        if not earlier.is_file():
            problems.append(
                f"{path}: its history records {entry.get('version')} (sha256 {entry.get('sha256')}), but {earlier} "
                "is missing: versions are append-only, none may be removed"
            )
    pinned: list[str] = []
    if m:
        for later, later_path in _version_files(folder):
            if _number(later) <= _number(version):
                continue
            _, later_doc = _load(later_path)
            later_prov = _provenance(later_doc) if later_doc else {}
            if "history" not in later_prov:  # written before the hash chain: it pins nothing
                continue
            entry = next((e for e in later_prov["history"] or [] if e.get("version") == version), None)
            if entry is None:
                problems.append(
                    f"{path}: {later} ({later_path}) was written after it but its history does not list {version}: "
                    f"{version} was added or renamed after {later} was written (versions are append-only)"
                )
            elif entry.get("sha256") != actual:
                problems.append(
                    f"{path}: its file bytes have sha256 {actual}, but {later} ({later_path}) recorded sha256 "
                    f"{entry.get('sha256')} for {version} when it was written: {version} was changed after {later} "
                    "pinned it"
                )
            else:
                pinned.append(later)
    return HistoryCheck(
        version=version,
        statistics_version=sv,
        current=current,
        pinned_by=tuple(pinned),
        has_tables_sha256=recorded is not None,
        problems=tuple(problems),
    )


# --- what changed between two versions, and why ---------------------------------------------------------------


VerdictKey = tuple[str, str, str, str]
"""(dataset, unit, demand class, model)."""


@dataclass(frozen=True)
class VerdictChanges:
    """The verdicts against the random walk that differ between two versions of a benchmark.

    Attributes
    ----------
    metric_old, metric_new : str
        The metric whose tables were read (the config's first metric).
    per_metric_old, per_metric_new : bool
        Whether that version's statistics gave a verdict per metric table (statistics version 1), so that the
        first metric's table was read as its verdict.
    transitions : dict
        ``(before, after) -> count`` over the keys in both versions whose verdict differs (``"none"`` where a
        row has no verdict).
    rows : list
        ``(key, before, after)`` of those keys, sorted.
    n_compared : int
        Keys present in both versions.
    """

    metric_old: str
    metric_new: str
    per_metric_old: bool
    per_metric_new: bool
    transitions: dict[tuple[str, str], int]
    rows: list[tuple[VerdictKey, str, str]]
    n_compared: int

    @property
    def n_changed(self) -> int:
        return len(self.rows)


def _verdicts(doc: Any) -> tuple[str, dict[VerdictKey, str]]:
    config = doc.config if not isinstance(doc, Mapping) else doc.get("config", {})
    boards = doc.leaderboards if not isinstance(doc, Mapping) else doc.get("leaderboards", [])
    metrics = list(config.get("metrics") or [])
    metric = metrics[0] if metrics else ""
    out: dict[VerdictKey, str] = {}
    for lb in boards:
        lb = lb if isinstance(lb, Mapping) else lb.model_dump()
        if lb["metric"] != metric:
            continue
        for row in lb["rows"]:
            out[(lb["dataset"], lb["unit"], lb["demand_class"], row["model"])] = row.get("verdict_vs_rw") or "none"
    return metric, out


def verdict_changes(old: Any, new: Any) -> VerdictChanges:
    """The verdicts against the random walk that changed from ``old`` to ``new``.

    Parameters
    ----------
    old, new : ResultsDocument or dict
        Two versions of one benchmark.

    Returns
    -------
    VerdictChanges
        Keyed by (dataset, unit, demand class, model): the ``verdict_vs_rw`` of the leaderboard rows of the
        config's first metric (statistics version 2 on gives every metric table of a (dataset, unit, demand
        class) the same verdict; version 1 gave a verdict per metric table, and the first metric's is read).
    """
    metric_old, before = _verdicts(old)
    metric_new, after = _verdicts(new)
    common = sorted(set(before) & set(after))
    rows = [(k, before[k], after[k]) for k in common if before[k] != after[k]]
    return VerdictChanges(
        metric_old=metric_old,
        metric_new=metric_new,
        per_metric_old=statistics_version_of(old) < 2,
        per_metric_new=statistics_version_of(new) < 2,
        transitions=dict(sorted(Counter((b, a) for _, b, a in rows).items(), key=lambda kv: (-kv[1], kv[0]))),
        rows=rows,
        n_compared=len(common),
    )


@dataclass(frozen=True)
class ScoreSetChange:
    """Whether two versions hold the same score set.

    Attributes
    ----------
    same : bool or None
        True: the same parts or the same sidecar file; False: different; None: stored differently and not
        comparable by hash.
    detail : str
        One sentence (which models' parts differ, or the row counts).
    """

    same: bool | None
    detail: str


def _score_identity(path: Path | None, doc: Any) -> tuple[dict[str, str | None] | None, str | None, int]:
    """``({part sha256: model or None}, sidecar sha256, rows)`` of a version: its parts, or its migrated
    sidecar's parts (the manifest beside it), and the sidecar hash where it records one."""
    d = doc if isinstance(doc, Mapping) else doc.model_dump(mode="json", exclude_unset=True)
    scores, side = d.get("scores"), d.get("sidecar") or {}
    n_rows = int((scores or side).get("n_rows", 0))
    if scores:
        return {p["sha256"]: p.get("model") for p in scores["parts"]}, None, n_rows
    sha = side.get("sha256")
    if path is not None and sha:
        from benchmarks.score_source import migration_manifest_path

        manifest = migration_manifest_path(Path(path).parent, sha)
        if manifest.is_file():
            block = json.loads(manifest.read_text(encoding="utf-8"))["scores"]
            return {p["sha256"]: p.get("model") for p in block["parts"]}, sha, n_rows
    return None, sha, n_rows


def score_set_change(old_path: str | Path | None, old: Any, new_path: str | Path | None, new: Any) -> ScoreSetChange:
    """Whether the score set changed between two versions, compared by hash.

    Parameters
    ----------
    old_path, new_path : path or None
        The versions' files (to find a migrated sidecar's parts manifest beside them).
    old, new : ResultsDocument or dict

    Returns
    -------
    ScoreSetChange
        Parts are compared as sets of sha256 (a migrated sidecar by the parts of its manifest), sidecar files by
        their sha256.
    """
    a_parts, a_side, a_rows = _score_identity(Path(old_path) if old_path else None, old)
    b_parts, b_side, b_rows = _score_identity(Path(new_path) if new_path else None, new)
    rows = f"{a_rows:,} -> {b_rows:,} scored rows" if a_rows != b_rows else f"{b_rows:,} scored rows"
    if a_side and b_side and a_side == b_side:
        return ScoreSetChange(True, f"the same score set (sidecar sha256 {b_side[:12]}, {rows})")
    if a_parts is not None and b_parts is not None:
        if set(a_parts) == set(b_parts):
            return ScoreSetChange(True, f"the same score set ({len(b_parts)} identical parts, {rows})")
        changed = sorted({str(m) for s, m in {**a_parts, **b_parts}.items() if (s in a_parts) != (s in b_parts) and m})
        which = f"; model parts differ for {', '.join(changed)}" if changed else ""
        return ScoreSetChange(False, f"the score set changed ({rows}{which})")
    if a_side and b_side:
        return ScoreSetChange(False, f"the score set changed (sidecar sha256 {a_side[:12]} -> {b_side[:12]}, {rows})")
    return ScoreSetChange(None, f"score sets stored differently, not comparable by hash ({rows})")


def statistics_reasons(old_version: int, new_version: int) -> list[tuple[int, str]]:
    """``(version, what it changed)`` for each statistics version after ``old_version`` up to ``new_version``
    (empty when they are equal; a version without a description says so)."""
    changes = statistics_changes()
    return [
        (v, changes.get(v, "(no description recorded)"))
        for v in range(min(old_version, new_version) + 1, max(old_version, new_version) + 1)
    ]


def describe_transition(changes: VerdictChanges) -> list[str]:
    """One line per verdict transition, most frequent first: ``"beats -> indistinguishable: 14"``."""
    return [f"{b} -> {a}: {n}" for (b, a), n in changes.transitions.items()]


def version_files(folder: str | Path) -> Sequence[tuple[str, Path]]:
    """``(version, path)`` of every ``vNNNN.json`` in a results folder, oldest first."""
    return _version_files(Path(folder))
