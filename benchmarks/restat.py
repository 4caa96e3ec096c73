"""``python -m benchmarks.restat --results benchmarks/results/<name>``: restate the newest results version of
a benchmark with the current statistics, as the next version.

A statistics change is a new version, never a rewrite. This command takes the newest version of the
benchmark, reads its score set (:mod:`benchmarks.score_source`: its parts, or a migrated sidecar's parts),
recomputes every table a statistic computes with the running code, exactly as the pipeline computes them
(:func:`benchmarks.verify._tables` for the leaderboards, interval and competition tables;
:func:`benchmarks.analyses.dataset_analyses` and :func:`benchmarks.analyses.across_table` for the analyses;
:func:`benchmarks.replay_audit.replay_section` for the replay), and writes the next version through
:func:`benchmarks.results_io.write_results` (append-only, atomic): the same score parts (no part is written:
the new version lists the parts the old one is read from), the current statistics version, the hash chain
of every earlier version (:mod:`benchmarks.history`), and ``provenance.restated_from`` (the version
restated, the sha256 of its file, the code that restated it, and the tables carried over). The restatement's
wall time is ``provenance.timings.restat_seconds``; the other timings are those of the run that computed the
score set, whose provenance (config, code, environment, cache) the new version keeps.

Three kinds of table need backtests that a score set does not hold, so they cannot be recomputed from it:
the aggregation dial's own units (a dataset whose ``dial`` lists group counts the leaderboards do not
score), the spikiness sweep's other settings, and the protocol-sensitivity audit. They are copied
unchanged, listed in ``restated_from.carried_over`` and in one warning each, so that a reader knows which
statistics version computed them (the one restated).

``--tables-config benchmarks/configs/<name>.toml`` restates with that file's **table settings**
(:data:`TABLE_SETTINGS`: the metrics ranked and the inventory simulation's policy), which only change how the
same score set is tabled: every other field of the file must equal the recorded config (the score set would
differ otherwise: that is a new run, not a restatement). The new version records the file's config and its
sha256, and ``restated_from.table_settings`` lists each changed setting as ``[old, new]``.

Refused, with nothing written (exit 1): a newest version already computed by the current statistics
version (or a newer one), one that does not validate (schema, score parts, hash chain). Exit 3 when a run
holds the folder's lock, 2 for a bad argument. ``--dry-run`` recomputes and prints what would change,
writing nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.results_model import (
    Analyses,
    CompetitionTable,
    IntervalTable,
    Leaderboard,
    ReplayTable,
    ResultsBody,
    ResultsDocument,
    RunWarning,
    ScoreParts,
    SensitivityTable,
)
from tycheon.textsafe import terminal_safe_output

__all__ = ["TABLE_SETTINGS", "RestatError", "Restated", "Tables", "main", "recompute_tables", "restate"]

TABLE_SETTINGS = ("metrics", "service_level", "lead_time", "review_period", "lost_sales")
"""Config fields that only decide how a score set is tabled (``--tables-config`` may change them)."""

ANALYSIS_NOTE = "analysis not computed: "
"""How the pipeline words an analysis that could not run (a warning of its dataset)."""


class RestatError(ValueError):
    """The newest version cannot be restated (the message says why); nothing was written."""


@dataclass
class Tables:
    """Every table of a results version that statistics compute, as :func:`recompute_tables` gives them."""

    leaderboards: list[Leaderboard]
    intervals: list[IntervalTable]
    competition: list[CompetitionTable]
    analyses: Analyses
    replay: list[ReplayTable]
    sensitivity: list[SensitivityTable]
    notes: dict[str, list[str]] = field(default_factory=dict)
    """Dataset -> the analyses that could not be computed, and why (the pipeline's warnings)."""
    carried: list[tuple[str, str]] = field(default_factory=list)
    """``(dataset, what was carried over and why)`` for each table copied from the restated version."""


@dataclass(frozen=True)
class Restated:
    """What :func:`restate` did: the version written (None with ``dry_run``), the one restated, their
    statistics versions, the recomputed tables and the seconds it took."""

    path: Path | None
    source: Path
    old_statistics_version: int
    new_statistics_version: int
    tables: Tables
    seconds: float
    new_parts: int


def _config(doc: ResultsDocument) -> Any:
    from pydantic import ValidationError

    from benchmarks.config import BenchmarkConfig

    try:
        return BenchmarkConfig.model_validate(doc.config)
    except ValidationError as err:
        raise RestatError(f"the config {doc.version} records does not read as a benchmark config: {err}") from err


def _table_settings(doc: ResultsDocument, path: Path) -> tuple[dict[str, Any], dict[str, Any], str]:
    """``(config, changed, sha256)``: the recorded config with ``path``'s :data:`TABLE_SETTINGS`, the settings
    that changed as ``{field: [old, new]}``, and the file's sha256; :class:`RestatError` where the file
    differs from the recorded config in anything else, or is not a valid config."""
    from benchmarks.config import BenchmarkConfig, ConfigError, load_benchmark_config
    from benchmarks.results_io import file_sha256

    try:
        new = load_benchmark_config(path).model_dump(mode="json")
    except (ConfigError, OSError) as err:
        raise RestatError(f"--tables-config {path}: {err}") from err
    old = BenchmarkConfig.model_validate(doc.config).model_dump(mode="json")
    other = sorted(k for k in set(old) | set(new) if k not in TABLE_SETTINGS and old.get(k) != new.get(k))
    if other:
        raise RestatError(
            f"--tables-config {path} differs from the config {doc.version} records in {other}, which change the "
            f"score set: run the benchmark for a new version (a restatement may change only {list(TABLE_SETTINGS)})"
        )
    changed = {k: [old.get(k), new.get(k)] for k in TABLE_SETTINGS if old.get(k) != new.get(k)}
    config = dict(doc.config)
    config.update({k: new[k] for k in TABLE_SETTINGS})
    return config, changed, file_sha256(path)


def recompute_tables(doc: ResultsDocument, source: Any) -> Tables:
    """Every table of ``doc`` recomputed from its score set by the running code, as the pipeline computes them.

    Parameters
    ----------
    doc : ResultsDocument
        The version to restate (its config, models, datasets and tables).
    source : benchmarks.score_source.ScoreSource
        Its score set.

    Returns
    -------
    Tables
        The leaderboards, interval and competition tables (:func:`benchmarks.verify._tables`), the analyses
        (:func:`benchmarks.analyses.dataset_analyses` per rolling-origin dataset with the config's units and
        analysis models, :func:`~benchmarks.analyses.across_table`), the replay
        (:func:`benchmarks.replay_audit.replay_section`); the dial of a dataset whose ``dial`` needs its own
        backtests, a sweep with other settings and the sensitivity audits are copied from ``doc``
        (``carried``).
    """
    from benchmarks.analyses import dataset_analyses
    from benchmarks.leaderboard_spec import leaderboard_spec
    from benchmarks.replay_audit import replay_section
    from benchmarks.results_io import to_json_value
    from benchmarks.sections import RunContext, assemble, by_key
    from benchmarks.verify import _tables
    from tycheon.stats.threads import single_thread_blas

    cfg = _config(doc)
    spec = leaderboard_spec(doc.config)
    names = list(source.columns)
    with single_thread_blas():  # as the pipeline built them (tycheon.stats.threads)
        boards, bands, comps = _tables(doc, source, names)
    leaderboards = [Leaderboard.from_table(to_json_value(t)) for t in boards]
    intervals = [IntervalTable.model_validate(to_json_value(t)) for t in bands]
    competition = [CompetitionTable.model_validate(to_json_value(t)) for t in comps]
    del boards, bands, comps
    every = [c for c in names if c not in ("dataset", "protocol") and not c.startswith("__index_level_")]
    n_series = {d.name: d.n_series for d in doc.datasets}
    out = Tables(leaderboards, intervals, competition, Analyses(), [], [])
    found_parts: list[dict[str, list[Any]]] = []
    for entry in cfg.datasets:
        key = entry.key
        table = source.chunk(dataset=key, protocol="rolling_origin", columns=every, key_order=True)
        if not len(table) or key not in n_series:
            continue
        found = dataset_analyses(  # no dial table and no rerun: what needs its own backtests is carried
            table,
            dataset=key,
            protocol="rolling_origin",
            spec=spec,
            n_series=n_series[key],
            dial_table=None,
            dial_models=entry.analysis_models,
            units=list(entry.units),
            entry=entry,
            previous=doc.analyses,
        )
        notes = list(found.notes)
        for section_key, carried in found.carried.items():
            note = by_key(section_key).note
            if note is not None:  # the notes of the version restated, where it computed the section
                notes += [
                    w.message[len(ANALYSIS_NOTE) :]
                    for w in doc.warnings
                    if w.dataset == key and w.message.startswith(f"{ANALYSIS_NOTE}{note}:")
                ]
            if carried.reason is not None:
                out.carried.append((key, carried.reason))
        found_parts.append(found.tables)
        with single_thread_blas():
            replays, _ = replay_section(table, cfg=cfg, dataset=key, protocol="rolling_origin")
        out.replay.extend(replays)
        audit = [t for t in doc.sensitivity if t.dataset == key]
        if audit:
            out.sensitivity.extend(audit)
            out.carried.append(
                (
                    key,
                    f"the protocol-sensitivity audit of {key}: it reruns the models under other protocols, which "
                    "the score set does not hold",
                )
            )
        if notes:
            out.notes[key] = notes
        del table, found
    rolling = [lb for lb in leaderboards if lb.protocol == "rolling_origin"]
    out.analyses = assemble(found_parts, RunContext(rolling, metric=cfg.metrics[0], random_walk=cfg.random_walk))
    return out


def _warnings(doc: ResultsDocument, tables: Tables) -> list[RunWarning]:
    """The restated version's warnings: the old ones with each dataset's analysis notes replaced by the
    recomputed ones (where the old ones were), and one warning per table carried over."""
    old = [w for w in doc.warnings if not w.message.startswith(ANALYSIS_NOTE)]
    out = list(old)
    for dataset in dict.fromkeys([*tables.notes, *(d for d, _ in tables.carried)]):
        added = [
            RunWarning(dataset=dataset, kind="other", message=ANALYSIS_NOTE + n) for n in tables.notes.get(dataset, [])
        ]
        added += [
            RunWarning(
                dataset=dataset,
                kind="other",
                message=f"restated from {doc.version}: {what} is carried over unchanged from it (computed by the "
                "statistics of that version)",
            )
            for d, what in tables.carried
            if d == dataset
        ]
        mine = [i for i, w in enumerate(out) if w.dataset == dataset and w.kind != "model"]
        at = mine[-1] + 1 if mine else next((i for i, w in enumerate(out) if w.kind == "model"), len(out))
        out[at:at] = added
    return out


def _score_parts(path: Path, doc: ResultsDocument) -> tuple[Any, ScoreParts | None]:
    """The version's score source and the parts its new version lists (None for a sidecar file still in
    the tree: its table is then stored as parts by the writer)."""
    from benchmarks.score_source import score_source

    source = score_source(path, doc)
    return source, source.manifest if source.kind in ("parts", "migrated") else None


def restate(folder: str | Path, *, dry_run: bool = False, tables_config: str | Path | None = None) -> Restated:
    """Restate the newest version of the benchmark in ``folder`` with the current statistics.

    Parameters
    ----------
    folder : path
        ``benchmarks/results/<name>``.
    dry_run : bool
        Recompute, but write nothing (``path`` is None).
    tables_config : path, optional
        A config file whose :data:`TABLE_SETTINGS` the restatement applies (nothing else may differ).

    Returns
    -------
    Restated

    Raises
    ------
    RestatError
        Nothing to restate, or the newest version cannot be restated (see the module docstring).
    benchmarks.run_guard.ResultsLocked
        Another run holds the folder's lock.
    """
    from benchmarks import history
    from benchmarks.provenance import code_sha256, git_state
    from benchmarks.results_io import existing_versions, file_sha256, read_results, validate_results_file, write_results
    from benchmarks.run_guard import results_lock
    from tycheon.metrics.registry import glossary

    folder = Path(folder)
    if not folder.is_dir():
        raise RestatError(f"{folder}: no such results folder")
    t0 = time.perf_counter()
    started = datetime.now(UTC)
    with results_lock(folder):  # no run writes a version meanwhile
        versions = list(existing_versions(folder))
        if not versions:
            raise RestatError(f"{folder}: no results version (vNNNN.json) to restate")
        newest = versions[-1]
        current = history.current_statistics_version()
        try:
            raw = json.loads(newest.read_text(encoding="utf-8"))
        except ValueError as err:
            raise RestatError(f"{newest} is not valid JSON, so it is not restated: {err}") from err
        old_sv = history.statistics_version_of(raw)
        if old_sv >= current:
            raise RestatError(
                f"{newest} was computed by statistics version {old_sv}, "
                + ("the current one" if old_sv == current else f"newer than this code's {current}")
                + ": there is nothing to restate (a statistics change bumps tycheon._version.STATISTICS_VERSION)"
            )
        problems = validate_results_file(newest) or list(history.check_history(newest).problems)
        if problems:
            raise RestatError(f"{newest} does not validate, so it is not restated: " + "; ".join(problems[:5]))
        doc = read_results(newest)
        if doc.name != folder.name:
            raise RestatError(f"{newest} is benchmark {doc.name!r}, filed under {folder.name!r}: not restated")
        changed: dict[str, Any] = {}
        config_sha = None
        if tables_config is not None:
            config, changed, config_sha = _table_settings(doc, Path(tables_config))
            doc = doc.model_copy(update={"config": config})
        source, parts = _score_parts(newest, doc)
        tables = recompute_tables(doc, source)
        commit, dirty = git_state()
        prov = doc.provenance.model_dump(mode="python", exclude_unset=True)
        for key in ("statistics_version", "tables_sha256", "history", "restated_from"):
            prov.pop(key, None)
        seconds = round(time.perf_counter() - t0, 3)
        prov["timings"] = {
            **prov.get("timings", {}),
            "restated_at": started.isoformat(timespec="seconds"),
            "restat_seconds": seconds,
        }
        prov["restated_from"] = {
            "version": doc.version,
            "sha256": file_sha256(newest),
            "statistics_version": old_sv,
            "git_commit": commit,
            "git_dirty": dirty,
            "code_sha256": code_sha256(),
            "carried_over": [what for _, what in tables.carried],
            **({"table_settings": changed, "config_file_sha256": config_sha} if tables_config is not None else {}),
        }
        if config_sha is not None:
            prov["config_sha256"] = config_sha
        body = doc.model_dump(mode="python", exclude_unset=True)
        for key in ("version", "sidecar", "scores"):
            body.pop(key, None)
        body.update(
            provenance=prov,
            leaderboards=tables.leaderboards,
            intervals=tables.intervals,
            competition=tables.competition,
            analyses=tables.analyses,
            replay=tables.replay,
            sensitivity=tables.sensitivity,
            warnings=_warnings(doc, tables),
            metric_glossary=glossary(),  # the registry's current definitions (what each metric elicits, ...)
        )
        document = ResultsBody.model_validate(body)
        if dry_run:
            return Restated(None, newest, old_sv, current, tables, seconds, 0)
        before = _stored_parts(folder)
        scores: Any = parts if parts is not None else source.frame()
        path = write_results(document, scores, results_dir=folder.parent, statistics_version=current)
        new_parts = len(_stored_parts(folder) - before)
    return Restated(path, newest, old_sv, current, tables, seconds, new_parts)


def _stored_parts(folder: Path) -> set[str]:
    from benchmarks.score_parts import PARTS_DIR

    return {p.name for p in (folder / PARTS_DIR).glob("*.parquet")}


def _summary(done: Restated) -> list[str]:
    """What the restatement changed, in a few lines (the verdicts against the random walk, by transition)."""
    from benchmarks import history
    from benchmarks.results_io import read_results

    old = read_results(done.source)
    new_doc: Any = (
        read_results(done.path)
        if done.path is not None
        else {"config": old.config, "leaderboards": [lb.model_dump() for lb in done.tables.leaderboards]}
    )
    changes = history.verdict_changes(old, new_doc)
    lines = [
        f"statistics version {done.old_statistics_version} -> {done.new_statistics_version}; "
        f"{len(done.tables.leaderboards)} leaderboards, {len(done.tables.intervals)} interval tables, "
        f"{len(done.tables.competition)} competition tables; {done.seconds:.1f} s",
        f"verdicts against the random walk ({changes.metric_old} tables): {changes.n_changed} of "
        f"{changes.n_compared} changed" + (":" if changes.n_changed else ""),
        *(f"  {line}" for line in history.describe_transition(changes)),
    ]
    lines += [f"carried over unchanged: {what}" for _, what in done.tables.carried]
    return lines


def main(argv: list[str] | None = None) -> int:
    """The command; everything it prints goes through :func:`tycheon.textsafe.for_terminal` (no id, name or
    reason from a config can carry an escape sequence to the terminal)."""
    with terminal_safe_output():
        return _main(argv)


def _main(argv: list[str] | None = None) -> int:
    from benchmarks import memory_policy
    from benchmarks.run_guard import ResultsLocked

    memory_policy.apply()  # numpy's huge-page advice off (benchmarks.memory_policy)
    parser = argparse.ArgumentParser(prog="python -m benchmarks.restat", description=__doc__)
    parser.add_argument("--results", type=Path, required=True, help="the benchmark's folder: benchmarks/results/<name>")
    parser.add_argument("--dry-run", action="store_true", help="recompute and report, write nothing")
    parser.add_argument(
        "--tables-config",
        type=Path,
        default=None,
        help="a config file whose table settings (metrics, inventory policy) to apply; nothing else may differ",
    )
    args = parser.parse_args(argv)
    if not args.results.is_dir():
        print(f"--results: {args.results} is not a folder", file=sys.stderr)
        return 2
    try:
        done = restate(args.results, dry_run=args.dry_run, tables_config=args.tables_config)
    except ResultsLocked as err:
        print(f"[benchmarks.restat] refused: {err}", file=sys.stderr)
        return 3
    except RestatError as err:
        print(f"[benchmarks.restat] refused, nothing written: {err}", file=sys.stderr)
        return 1
    head = (
        f"[benchmarks.restat] would restate {done.source} (dry run, nothing written)"
        if done.path is None
        else f"[benchmarks.restat] wrote {done.path}, restating {done.source.name} "
        f"(same score set, {done.new_parts} new part file(s))"
    )
    print(head)
    for line in _summary(done):
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
