"""Results are a function of their sidecar: recompute every table of a results document and compare.

:func:`recompute_problems` reads the sidecar (the scored rows), rebuilds the leaderboards, interval tables
and competition tables with the same library calls the pipeline made (:mod:`tycheon.analysis`), with the
config, display names and run statuses recorded in the document, and compares them with the published
tables field by field. Strings, integers, booleans and nulls must be equal; floats must agree to a
relative tolerance of :data:`REL_TOL` (absolute :data:`ABS_TOL` near zero), stated here because
"reproducible" means: bit-identical on one machine, equal to this tolerance across machines, with every
rank and verdict identical. The first difference of each table is named (table, row, field, both values).

A sidecar written before the quantile columns were kept (results v0001-v0004 of ``small``) cannot give
back the CRPS of a model's own quantiles; such a document is reported as *not recomputable* by
:func:`legacy_reason` rather than as wrong, and the sidecar hash remains its only link.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.results_model import ResultsDocument
from tycheon.backtest.scoreset import SCORESET_COLUMNS, conform_table, quantile_column

__all__ = ["ABS_TOL", "REL_TOL", "first_difference", "legacy_reason", "recompute_problems"]

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


def legacy_reason(doc: ResultsDocument, sidecar_columns: list[str]) -> str | None:
    """Why this document's tables cannot be recomputed from its sidecar, or None when they can."""
    levels = doc.config.get("quantile_levels", []) if isinstance(doc.config, dict) else []
    missing = [quantile_column(q) for q in levels if quantile_column(q) not in sidecar_columns]
    if missing:
        return (
            f"its sidecar has no quantile columns ({', '.join(missing[:3])}...; written before they were "
            "kept), so the CRPS of the models' own quantiles cannot be recomputed"
        )
    return None


def _tables(doc: ResultsDocument, frame: pd.DataFrame) -> tuple[list[dict], list[dict], list[dict]]:
    from tycheon.analysis.competition import competition_table
    from tycheon.analysis.leaderboard import LeaderboardSpec, interval_tables, leaderboard_tables

    cfg = doc.config
    spec = LeaderboardSpec(
        metrics=tuple(cfg["metrics"]),
        baseline=cfg["production_baseline"],
        random_walk=cfg["random_walk"],
        horizon=cfg["horizon"],
        stride=cfg["stride"],
        alpha=cfg["alpha"],
        seed=cfg["seed"],
        quantile_levels=tuple(cfg["quantile_levels"]),
    )
    display = {m.id: m.display_name for m in doc.models}
    columns = [c for c in frame.columns if c not in ("dataset", "protocol")]
    leaderboards, intervals, competition = [], [], []
    for entry in cfg["datasets"]:
        key = entry.get("label") or entry["name"]
        rows = frame[(frame["dataset"] == key) & (frame["protocol"] == "rolling_origin")]
        if not len(rows):
            continue
        table = rows[columns].reset_index(drop=True)
        tag = {"dataset": key, "protocol": "rolling_origin"}
        leaderboards += [{**tag, **t} for t in leaderboard_tables(table, spec=spec, display_names=display)]
        intervals += [
            {**tag, **t}
            for t in interval_tables(
                table, point_metric=cfg["metrics"][0], quantile_levels=tuple(cfg["quantile_levels"])
            )
        ]
    horizons = {t.dataset: t.horizon for t in doc.competition}
    for centry in cfg.get("competition", []):
        key = centry.get("label") or centry["dataset"]
        rows = frame[(frame["dataset"] == key) & (frame["protocol"] == "competition")]
        table = rows[columns].reset_index(drop=True) if len(rows) else pd.DataFrame(columns=list(SCORESET_COLUMNS))
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
    return leaderboards, intervals, competition


def recompute_problems(doc: ResultsDocument, sidecar: Path) -> list[str]:
    """Every published table that its sidecar does not give back (empty when all agree).

    Raises
    ------
    ValueError
        The document cannot be recomputed (:func:`legacy_reason`).
    """
    from benchmarks.results_io import to_json_value
    from benchmarks.results_model import CompetitionTable, IntervalTable, Leaderboard

    # a 1.x sidecar (object text columns, int64 integers) is read into the current score-set form
    frame = conform_table(pd.read_parquet(sidecar))
    reason = legacy_reason(doc, list(frame.columns))
    if reason:
        raise ValueError(reason)
    leaderboards, intervals, competition = _tables(doc, frame)
    problems = []
    for name, published, recomputed, model in (
        ("leaderboards", doc.leaderboards, leaderboards, Leaderboard),
        ("intervals", doc.intervals, intervals, IntervalTable),
        ("competition", doc.competition, competition, CompetitionTable),
    ):
        pub = [t.model_dump(mode="json") for t in published]
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
