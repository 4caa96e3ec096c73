"""The roster on one (dataset, protocol): every model run in turn (:func:`run_models`), each one's run
record, its table parked on disk while the next models run, and the tables joined once in key order;
and what the sidecar and the ``datasets`` block take from such a run (:func:`_tagged`,
:func:`_engine_facts`)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from benchmarks.model_run import ModelOutcome, _short, run_model
from benchmarks.perf.memory import mark_stage
from benchmarks.results_io import to_json_value
from benchmarks.results_model import EngineFacts, ModelRun
from benchmarks.run_inputs import LoadedDataset, RunInputs
from benchmarks.spill import SpilledColumns, concat_parked, spillable
from tycheon._frames import drop_columns
from tycheon.analysis.prepared import READ_COLUMNS, BlockCollector
from tycheon.backtest.execution import release_workers
from tycheon.backtest.protocol import RollingOrigin
from tycheon.backtest.scoreset import SCORESET_COLUMNS, ScoreSet

__all__ = ["ProtocolRun", "run_models"]

_SIDECAR_COLUMNS = ["dataset", "protocol", *SCORESET_COLUMNS]


@dataclass(frozen=True)
class ProtocolRun:
    """Every model of the run on one (dataset, protocol): the score-set rows of the models that ran, in
    model order, concatenated once (``None`` when none ran), their run metadata, each model's run record,
    and where each model's work came from (``cache`` / ``computed``)."""

    dataset: str
    protocol: str
    table: pd.DataFrame | None
    metas: list[dict[str, Any]]
    records: dict[str, ModelRun]
    cache: dict[str, str]
    parked: SpilledColumns | None = None
    """The table's columns left on disk (:func:`run_models`' ``keep``): :meth:`SpilledColumns.restore` puts
    them back in the table, in their places."""

    @property
    def statuses(self) -> dict[str, str]:
        return {m: r.status for m, r in self.records.items()}


def run_models(
    inputs: RunInputs,
    loaded: LoadedDataset,
    protocol: RollingOrigin,
    *,
    units: list[str],
    min_history: int,
    protocol_id: str,
    dataset: str,
    skip: Mapping[str, str],
    part: str = "",
    only: Collection[str] | None = None,
    point_only: bool = False,
    blocks: BlockCollector | None = None,
    keep: Collection[str] | None = None,
) -> ProtocolRun:
    """Every model of the roster (or of ``only``) on one (dataset, protocol). ``point_only``: for an
    analysis that reads point forecasts only (the dial), no quantiles, sample paths or calibration
    origins are asked for, so its backtests fit fewer origins and its rows are narrower; the point
    forecasts, and so every point metric, are those of the full run; each model's table keeps only the
    columns prepared scores read (:data:`tycheon.analysis.prepared.READ_COLUMNS`). ``blocks``: for an
    analysis that reads block scores only (the dial), each model's table is scored into the collector
    as soon as it ran and released (the run's ``table`` is then None). ``keep``: the columns the first
    reader of the table reads; the others stay on disk (the run's ``parked``) when the table is joined."""
    ran: list[ScoreSet] = []
    parked: list[SpilledColumns] = []
    records: dict[str, ModelRun] = {}
    cache: dict[str, str] = {}
    for model in inputs.models.values():
        if only is not None and model.id not in only:  # outside the dial's and the sweep's own roster
            continue
        label = f"{dataset}/{protocol_id}/{model.id}"
        if model.id in skip:  # left out of this dataset's roster by the config, with its reason
            outcome = ModelOutcome(None, {"status": "skipped", "reason": f"left out here: {skip[model.id]}"}, "skipped")
        else:
            outcome = run_model(
                inputs,
                loaded,
                protocol,
                model,
                units=units,
                min_history=min_history,
                label=label,
                point_only=point_only,
            )
        cache[label] = outcome.source
        records[model.id] = _run_record(dataset, protocol_id, outcome.status)
        if inputs.on_model_done is not None:  # the dial's and the sweep's extra backtests say which they are
            inputs.on_model_done(f"{label} ({part})" if part else label, records[model.id], outcome.source)
        if outcome.scores is not None and outcome.status["status"] == "ran":
            if blocks is not None:  # its blocks only: the rows go with the outcome, before the next model
                blocks.add(outcome.scores.table)
                outcome = replace(outcome, scores=None)
            else:
                ran.append(outcome.scores)
                done = outcome.scores.table
                if point_only:  # only the columns the analysis reads (no bands, flags or publication dates)
                    drop_columns(done, [c for c in done.columns if c not in READ_COLUMNS])
                # its cells wait on disk while the next models run (benchmarks.spill): at M5 size the
                # finished tables otherwise held gigabytes in this process beside the workers at the last model
                parked.append(SpilledColumns(done, spillable(done, list(done.columns))))
        mark_stage(f"backtest {model.id}")
    release_workers()  # the tables below run in this process: idle workers would only hold memory
    # one table for every later step, in key order (a unit's rows are one slice: the leaderboards read
    # them without a copy), joined from the parked parts one column at a time, so the peak is the table
    # plus about two columns; the columns its first reader does not read stay on disk (``keep``)
    table, left = None, None
    if parked:
        table, left = concat_parked(parked, keep=parked[0].order if keep is None else keep)
    parked.clear()
    metas = [r.meta for r in ran]
    ran.clear()
    mark_stage("concatenate score sets")
    left = left if left is not None and left.columns else None
    return ProtocolRun(dataset, protocol_id, table, metas, records, cache, parked=left)


def _run_record(dataset: str, protocol_id: str, status: dict[str, Any]) -> ModelRun:
    ran = status["status"] == "ran"
    return ModelRun.model_validate(
        to_json_value(
            {
                "dataset": dataset,
                "protocol": protocol_id,
                "status": status["status"],
                "reason": status.get("reason") or None,
                "traceback": _short(status.get("traceback")),
                "support": int(status.get("support", 0)) if ran else 0,
                "timings": {"fit_seconds": status.get("fit_seconds"), "predict_seconds": status.get("predict_seconds")},
                **(
                    {"failed_units": {u: f["reason"] for u, f in status["failed_units"].items()}}
                    if status.get("failed_units")
                    else {}
                ),
                **({"isolation": dict(status["isolation"])} if status.get("isolation") else {}),
            }
        )
    )


def _tagged(table: pd.DataFrame | None, dataset: str, protocol_id: str) -> pd.DataFrame:
    """The sidecar rows of one (dataset, protocol): its two tags, then the score-set columns and the
    quantile columns, sharing the table's arrays (no copy of the table; the tags are the only new
    columns)."""
    if table is None or not len(table):
        return pd.DataFrame(columns=_SIDECAR_COLUMNS)
    # the quantile columns too: without them the CRPS of a model's own quantiles, and so the published
    # tables, could not be recomputed from the sidecar (benchmarks.verify)
    quantiles = [c for c in table.columns if c not in SCORESET_COLUMNS and c.startswith("q")]
    n = len(table)
    tag_codes = np.zeros(n, dtype=np.int8)  # one-category categoricals: a byte a row, dictionary-encoded on disk
    columns: dict[str, Any] = {
        "dataset": pd.Categorical.from_codes(tag_codes, categories=[dataset]),
        "protocol": pd.Categorical.from_codes(tag_codes, categories=[protocol_id]),
    }
    for c in [*SCORESET_COLUMNS, *quantiles]:
        col = table[c]
        columns[c] = col.to_numpy() if isinstance(col.dtype, np.dtype) else col.array
    return pd.DataFrame(columns, copy=False)


def _engine_facts(metas: Iterable[dict[str, Any]]) -> EngineFacts:
    """Guard checks summed over the models that ran; abstentions and overlap lag from the first of them
    (the engine derives both from the panel and protocol, not the model)."""
    facts: dict[str, Any] = {}
    for meta in metas:
        facts = facts or {
            "guard_checks": {},
            "abstained": meta.get("abstained", {}),
            "overlap_lag": meta.get("overlap_lag"),
        }
        for k, v in meta.get("guard_checks", {}).items():
            facts["guard_checks"][k] = facts["guard_checks"].get(k, 0) + v
    return EngineFacts.model_validate(to_json_value(facts))
