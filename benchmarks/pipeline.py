"""The benchmark pipeline: config -> guarded engine per (dataset, model) -> tables -> results document.

Each (dataset, protocol, model) runs through :func:`tycheon.backtest.engine.run` on its own, so that its
score set can be cached and reused by a rerun; the engine derives every task seed from (seed, model,
unit, chunk) and builds each model's conformal bands from its own errors, so running models one at a
time gives the same rows as running them together. A model that raises or overruns its time budget is
recorded as failed by the engine and the run continues; a leakage error is never swallowed.

Hard limits (:mod:`tycheon.backtest.isolation`): a contributed model (:func:`contributed`: any sktime
estimator, and any tycheon forecaster with parameters of the config's choosing) runs in a separate
process with a scrubbed environment, a scratch working directory, no network, a bounded process count and
CPU-time, memory and wall-clock limits, so a hang, a crash, ``sys.exit`` or an allocation without bound
in it is a failed run with its reason and the harness's own memory stays where it was. It runs there
sequentially (the child has neither ``/dev/shm`` nor a cluster client); its rows are the same, since
every task seed derives from the chunking, which does not change. Every other model runs in process
under a wall-clock alarm. Both limits are the config's time budget plus :data:`HARD_LIMIT_GRACE_SECONDS`
(the engine's own work around the model's fit and predict).
"""

from __future__ import annotations

import functools
import hashlib
import time
import traceback
from collections.abc import Callable, Collection, Iterable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import tycheon
from benchmarks.analyses import DatasetAnalyses, across_table, dataset_analyses, dial_unit_names, sweep_table
from benchmarks.cache import (
    CacheMismatchError,
    ScoreCache,
    cache_key,
    forecast_packages,
    harness_code_sha256,
    same_scores,
)
from benchmarks.config import BenchmarkConfig, CompetitionEntry, DatasetEntry, ModelConfig, UserFile
from benchmarks.leaderboard_spec import leaderboard_spec
from benchmarks.perf.memory import mark_stage
from benchmarks.provenance import code_sha256, environment, fingerprint, git_state, library_sha256
from benchmarks.replay_audit import replay_section, sensitivity_datasets, sensitivity_section
from benchmarks.results_io import to_json_value
from benchmarks.results_model import (
    SCHEMA_VERSION,
    Analyses,
    CompetitionTable,
    DatasetInfo,
    EngineFacts,
    IntervalTable,
    Leaderboard,
    MetricGlossaryEntry,
    ModelEntry,
    ModelRun,
    Protocol,
    Provenance,
    ReplayTable,
    ResultsBody,
    RunWarning,
    SensitivityTable,
    SweepTable,
)
from benchmarks.spill import SpilledColumns, concat_parked, spillable
from tycheon._frames import drop_columns
from tycheon.analysis.competition import competition_table
from tycheon.analysis.dial import DIAL_METRICS
from tycheon.analysis.leaderboard import (
    LeaderboardSpec,
    columns_read,
    leaderboard_and_interval_tables,
)
from tycheon.analysis.prepared import READ_COLUMNS, BlockCollector, PreparedScores
from tycheon.backtest import engine
from tycheon.backtest.columns import BAND_COLUMNS
from tycheon.backtest.competition import CompetitionHoldout
from tycheon.backtest.factories import forecaster_factory
from tycheon.backtest.guards import LookaheadError
from tycheon.backtest.isolation import (
    IsolatedFailure,
    Limits,
    WallClockExceeded,
    run_isolated_with_layers,
    wall_clock_limit,
)
from tycheon.backtest.protocol import RollingOrigin
from tycheon.backtest.scoreset import SCORESET_COLUMNS, ScoreSet, concat_tables
from tycheon.contract import is_quantile_column
from tycheon.data import datasets as catalogue
from tycheon.data.caveats import Caveat, dataset_caveats
from tycheon.data.manifest import content_hash, load_verified
from tycheon.data.panel import Panel
from tycheon.data.synthetic import DEFAULT_SPIKINESS
from tycheon.data.userfile import load_user_file
from tycheon.metrics.registry import glossary as metric_glossary
from tycheon.stats.threads import single_thread_blas

__all__ = [
    "LoadedDataset",
    "RunInputs",
    "build_results",
    "contributed",
    "load_dataset",
    "rolling_protocol",
    "subsample",
]

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "benchmarks" / "datasets.toml"
_SIDECAR_COLUMNS = ["dataset", "protocol", *SCORESET_COLUMNS]
_TRACEBACK_LINES = 12
HARD_LIMIT_GRACE_SECONDS = 5.0
ISOLATED_WALL_SECONDS = 3600.0  # a contributed model's wall-clock limit when the config sets no budget
ISOLATED_MEMORY_BYTES = 8 * 1024**3


@dataclass
class RunInputs:
    """A resolved benchmark: its file, validated config and model configs, and where to cache."""

    config_path: Path
    config: BenchmarkConfig
    models: dict[str, ModelConfig]
    cache: ScoreCache = field(default_factory=lambda: ScoreCache(enabled=False))
    progress: bool = False
    manifest: Path = MANIFEST
    dask_client: Any = None  # a distributed.Client for backend = "dask" (benchmarks.cluster.dask_client)
    # called once per finished (dataset, protocol, model) with its label, run record and source
    # ("cache", "computed", "skipped"): the runner prints a progress line from it
    on_model_done: Callable[[str, ModelRun, str], None] | None = None


def subsample(panel: Panel, n: int) -> Panel:
    """The ``n`` series with the smallest sha256 of their id: deterministic and independent of order."""
    if n >= panel.n_series:
        return panel
    ids = sorted(panel.series_ids, key=lambda s: hashlib.sha256(str(s).encode()).hexdigest())[:n]
    return panel.subset(ids)


@dataclass(frozen=True)
class LoadedDataset:
    """A dataset as the run uses it: the (subsampled) panel, its facts for the ``datasets`` block and its
    caveats, each typed where it was decided."""

    panel: Panel
    info: dict[str, Any]
    caveats: list[Caveat]


def load_dataset(
    name: str,
    options: dict[str, Any],
    n: int | None,
    *,
    manifest: Path,
    file: UserFile | None = None,
    config_dir: Path | None = None,
) -> LoadedDataset:
    """Load a dataset through the manifest's hash check (subsampled if asked) and describe it for the
    results' ``datasets`` block.

    With ``file`` the dataset is a user file instead (``[datasets.file]``, its path relative to
    ``config_dir``): no manifest entry, recorded by file name and sha256 only."""
    if file is not None:
        panel = load_user_file(
            file.resolve(config_dir or Path.cwd()),
            series_col=file.id,
            period_col=file.time,
            value_col=file.target,
            level_cols=tuple(file.levels),
            freq=file.freq,
            season_length=file.season_length,
            static_universe=file.static_universe,
            nan_policy=file.nan_policy,
            edge_nan=file.edge_nan,
            redistributable=file.redistributable,
            licence=file.licence,
            name=name,
            max_rows=file.max_rows,
        )
        options = dict(panel.meta["file"])
        description = f"user file {options['name']} (sha256 {options['sha256']})"
    else:
        panel = load_verified(name, manifest_path=manifest, options=options)
        description = catalogue.spec(name).description
    total = panel.n_series
    caveats = dataset_caveats(panel)
    if n is not None and n < total:
        panel = subsample(panel, n)
        caveats.append(
            Caveat("subsample", f"subsample: {panel.n_series} of {total} series, the smallest sha256 of the series id")
        )
    d = panel.describe()
    info = {
        "content_hash": content_hash(panel),
        "description": description,
        "options": dict(options),
        "n_series": panel.n_series,
        "n_series_total": total,
        "freq": panel.freq,
        "season_length": panel.season_length,
        "start": d["start"],
        "end": d["end"],
        "synthetic": bool(d["synthetic"]),
        "redistributable": bool(d["redistributable"]),
        "warnings": [c.message for c in caveats],
    }
    return LoadedDataset(panel, info, caveats)


def _short(tb: str | None) -> str | None:
    if not tb:
        return tb or None
    lines = tb.rstrip().splitlines()
    return "\n".join(lines[-_TRACEBACK_LINES:])


@dataclass(frozen=True)
class ModelOutcome:
    """One model on one (dataset, protocol): its score set if it ran, its engine status and whether the
    work came from the cache."""

    scores: ScoreSet | None
    status: dict[str, Any]
    source: str  # "cache", "cache (verified)", "computed" or "skipped" (left out by the config)


def _run_model(
    inputs: RunInputs,
    loaded: LoadedDataset,
    protocol: RollingOrigin,
    model: ModelConfig,
    *,
    units: list[str],
    min_history: int,
    label: str,
    point_only: bool = False,
) -> ModelOutcome:
    cfg = inputs.config
    panel = loaded.panel
    quantile_levels = () if point_only else tuple(cfg.quantile_levels)
    if point_only and isinstance(protocol, RollingOrigin) and protocol.n_calibration_origins:
        protocol = replace(protocol, n_calibration_origins=0)  # calibration origins only serve the bands
    forecaster_id, params = model.factory_spec()
    key = cache_key(
        dataset=loaded.info["content_hash"],
        model=model.sha256(),
        protocol=protocol.describe(),
        units=units,
        backend=cfg.backend,
        n_jobs=cfg.n_jobs,
        min_history=min_history,
        quantiles=list(quantile_levels),
        n_samples=0 if point_only else cfg.n_samples,
        seed=cfg.seed,
        time_budget=cfg.time_budget_seconds,
        library=library_sha256(),
        harness=harness_code_sha256(),
        tycheon=tycheon.__version__,
        packages=forecast_packages(),
    )
    cached = inputs.cache.get(key)
    if cached is not None and not isinstance(cached.meta["models"].get(model.id), dict):
        cached = None  # an entry for another model under this key cannot be this model's result
    if cached is not None and not inputs.cache.should_verify(key):
        return ModelOutcome(cached, cached.meta["models"][model.id], "cache")
    chunk = engine.worker_chunk_size(panel.n_series, n_jobs=cfg.n_jobs, backend=cfg.backend)
    # an isolated (contributed) model runs its tasks inside its limited child, which has no cluster client
    # and no /dev/shm for joblib's semaphores; the chunk above is kept, so the task seeds are the same
    backend = "sequential" if contributed(model) else cfg.backend
    client = inputs.dask_client if backend == "dask" else None
    run = functools.partial(
        engine.run,
        panel,
        protocol,
        {model.id: forecaster_factory(forecaster_id, **params)},
        units=units,
        chunk_size=chunk,
        quantile_levels=quantile_levels,
        n_samples=0 if point_only else cfg.n_samples,
        min_history=min_history,
        backend=backend,
        n_jobs=cfg.n_jobs,
        dask_client=client,
        seed=cfg.seed,
        time_budget=cfg.time_budget_seconds,
        progress=inputs.progress,
    )
    try:
        scores = _execute(run, model, cfg)
    except LookaheadError:
        raise
    except IsolatedFailure as err:
        if cached is not None:
            raise CacheMismatchError(f"{label}: a sampled cache entry could not be recomputed: {err.reason}") from err
        if err.error_type == "LookaheadError":  # leakage found in the isolated process: never swallowed
            raise LookaheadError(err.reason) from err
        return ModelOutcome(
            None,
            {"status": "failed", "reason": err.reason, "traceback": err.traceback or None, "isolation": err.layers},
            "computed",
        )
    except (Exception, WallClockExceeded, SystemExit) as err:  # noqa: BLE001 - recorded, the run goes on
        if cached is not None:
            raise CacheMismatchError(f"{label}: a sampled cache entry could not be recomputed: {err}") from err
        return ModelOutcome(
            None,
            {"status": "failed", "reason": f"{type(err).__name__}: {err}", "traceback": _short(traceback.format_exc())},
            "computed",
        )
    status = scores.meta["models"][model.id]
    if cached is not None:  # one of the sampled hits: the recomputation must equal the entry bit for bit
        difference = same_scores(cached, scores) if status["status"] == "ran" else f"recomputed: {status}"
        if difference is not None:
            raise CacheMismatchError(
                f"{label}: the cached score set (key {key[:12]}...) differs from a fresh "
                f"computation: {difference}; delete the cache and rerun"
            )
        return ModelOutcome(cached, cached.meta["models"][model.id], "cache (verified)")
    if status["status"] == "ran":
        inputs.cache.put(key, scores)
    return ModelOutcome(scores, status, "computed")


def _execute(run: Callable[[], ScoreSet], model: ModelConfig, cfg: BenchmarkConfig) -> ScoreSet:
    """``run()`` under the model's hard limits: in a separate limited process for a contributed model,
    in process under a wall-clock alarm for tycheon's own (both at the budget plus the grace)."""
    budget = cfg.time_budget_seconds
    if contributed(model):
        wall = (budget if budget is not None else ISOLATED_WALL_SECONDS) + HARD_LIMIT_GRACE_SECONDS
        limits = Limits(wall_seconds=wall, cpu_seconds=wall * max(1, cfg.n_jobs), memory_bytes=ISOLATED_MEMORY_BYTES)
        ran = run_isolated_with_layers(
            run, write=ScoreSet.to_parquet, read=ScoreSet.from_parquet, limits=limits, label=model.id
        )
        ran.value.meta["models"][model.id]["isolation"] = ran.layers  # what kept it in, for the run's record
        return ran.value
    with wall_clock_limit(None if budget is None else budget + HARD_LIMIT_GRACE_SECONDS, label=model.id):
        return run()


def contributed(model: ModelConfig) -> bool:
    """A model that runs isolated: code tycheon did not write (an sktime estimator, by either route), or
    tycheon's code with parameters a config chose (``n_lags = 500000`` made the harness 5.6 GB in process).

    Project-owned means tycheon's forecaster at its constructor's defaults: a config with no ``params``
    (every committed model config but ``sktime_theta``), so the committed benchmarks start no extra
    interpreter. Whoever writes the config, its parameters are input, and the bounds a config is checked
    against (:data:`benchmarks.config.CONTRIBUTED_PARAMS`) are not relied on here.
    """
    if model.source.kind == "sktime" or getattr(model.source, "forecaster", None) == "sktime":
        return True
    return bool(model.params)


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
    """The table's columns left on disk (``_run_models``' ``keep``): :meth:`SpilledColumns.restore` puts them
    back in the table, in their places."""

    @property
    def statuses(self) -> dict[str, str]:
        return {m: r.status for m, r in self.records.items()}


def _run_models(
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
            outcome = _run_model(
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
                # finished tables were 2 GB in this process beside the workers at the last model
                parked.append(SpilledColumns(done, spillable(done, list(done.columns))))
        mark_stage(f"backtest {model.id}")
    _stop_idle_workers()  # the tables below run in this process: idle workers would only hold memory
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


def _stop_idle_workers() -> None:
    """Shut down joblib's reusable loky workers, if any are running (a later backtest starts new ones).

    They stay alive, idle, for joblib's idle timeout (300 s) after the last model, each holding its
    imports and heap while the leaderboards run in this process. ``get_reusable_executor()`` cannot be
    asked for the running executor without possibly starting (or restarting) one with other arguments,
    so the running one is read from loky's module state."""
    try:
        from joblib.externals.loky import reusable_executor
    except ImportError:  # pragma: no cover - joblib is a dependency
        return
    executor = getattr(reusable_executor, "_executor", None)
    if executor is not None:
        executor.shutdown(wait=True)


@dataclass(frozen=True)
class DatasetPart:
    """What one dataset entry or competition entry adds to the document."""

    run: ProtocolRun
    sidecar: pd.DataFrame
    dataset: DatasetInfo | None = None
    warnings: list[RunWarning] = field(default_factory=list)
    origins: list[str] = field(default_factory=list)
    leaderboards: list[Leaderboard] = field(default_factory=list)
    intervals: list[IntervalTable] = field(default_factory=list)
    competition: list[CompetitionTable] = field(default_factory=list)
    horizon: int | None = None
    analyses: DatasetAnalyses = field(default_factory=DatasetAnalyses)
    sweep: SweepTable | None = None
    replay: list[ReplayTable] = field(default_factory=list)
    sensitivity: list[SensitivityTable] = field(default_factory=list)
    analysis_seconds: dict[str, float] = field(default_factory=dict)


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


def _rolling_part(
    inputs: RunInputs, entry: DatasetEntry, rolling: RollingOrigin, spec: LeaderboardSpec, display: dict[str, str]
) -> DatasetPart:
    cfg = inputs.config
    dataset = entry.key
    loaded = load_dataset(
        entry.name,
        dict(entry.options),
        entry.subsample,
        manifest=inputs.manifest,
        file=entry.file,
        config_dir=inputs.config_path.parent,
    )
    min_history = entry.min_history or cfg.min_history
    origins = [str(o.timestamp.date()) for o in rolling.origins(loaded.panel, min_history=min_history)]
    run = _run_models(
        inputs,
        loaded,
        rolling,
        units=list(entry.units),
        min_history=min_history,
        protocol_id="rolling_origin",
        dataset=dataset,
        skip=entry.skip_models,
        keep=_read_by_leaderboards(spec, cfg.metrics[0]),  # the others wait on disk through the leaderboards
    )
    info = DatasetInfo.model_validate(
        {
            **to_json_value({"name": dataset, **loaded.info, "units": list(entry.units)}),
            "engine": _engine_facts(run.metas),
        }
    )
    tag = {"dataset": dataset, "protocol": "rolling_origin"}
    table = run.table
    leaderboards, intervals = [], []
    if table is not None:
        # the columns the tables do not read wait on disk meanwhile (benchmarks.spill), where the table was
        # joined without them; they come back in their places afterwards
        with single_thread_blas(), run.parked if run.parked is not None else nullcontext():
            # one pass over the units for both (spec.quantile_levels are the config's)
            boards, bands = leaderboard_and_interval_tables(
                table, spec=spec, display_names=display, point_metric=cfg.metrics[0]
            )
            leaderboards = [Leaderboard.from_table(to_json_value({**tag, **t})) for t in boards]
            intervals = [IntervalTable.model_validate(to_json_value({**tag, **t})) for t in bands]
            del boards, bands
        mark_stage("leaderboards and interval tables")
    # the stages below read neither the bands nor the models' quantiles: on disk meanwhile (benchmarks.spill)
    spill = nullcontext() if table is None else SpilledColumns(table, _leaderboard_only_columns(table, entry))
    with spill:
        analyses, sweep = DatasetAnalyses(), None
        if table is not None:
            # nor the publication dates and flags (prepared scores read READ_COLUMNS): on disk meanwhile too
            with SpilledColumns(table, _unread_by_analyses(table, entry)):
                analyses, sweep = _analyses(inputs, entry, loaded, rolling, spec, table, min_history=min_history)
            mark_stage("analyses")
        warnings = [RunWarning(dataset=dataset, kind=c.kind, message=c.message) for c in loaded.caveats]
        replays, sensitivity, seconds = [], [], {}
        if table is not None:
            with single_thread_blas():
                replays, seconds["replay"] = replay_section(table, cfg=cfg, dataset=dataset, protocol="rolling_origin")
            mark_stage("replay")
        if table is not None and dataset in sensitivity_datasets(cfg):
            ran = {}
            for m, status in run.statuses.items():
                if status == "ran":
                    forecaster_id, params = inputs.models[m].factory_spec()
                    ran[m] = forecaster_factory(forecaster_id, **params)
            with SpilledColumns(table, spillable(table, list(table.columns))):  # the audit reads none of it
                audit, notes, seconds["sensitivity"] = sensitivity_section(
                    loaded.panel,
                    cfg=cfg,
                    entry=entry,
                    rolling=rolling,
                    factories=ran,
                    min_history=min_history,
                    protocol="rolling_origin",
                    dask_client=inputs.dask_client,
                )
            sensitivity = [audit] if audit is not None else []
            warnings += notes
            _stop_idle_workers()  # its backtests' workers: the rest of the run (document, sidecar, render) has none
            mark_stage("sensitivity audit")
    warnings += [
        RunWarning(dataset=dataset, kind="other", message=f"analysis not computed: {n}") for n in analyses.notes
    ]
    return DatasetPart(
        run=replace(run, table=None, parked=None),  # the table goes with the sidecar only
        sidecar=_tagged(table, dataset, "rolling_origin"),
        dataset=info,
        origins=origins,
        warnings=warnings,
        leaderboards=leaderboards,
        intervals=intervals,
        analyses=analyses,
        sweep=sweep,
        replay=replays,
        sensitivity=sensitivity,
        analysis_seconds=seconds,
    )


def _read_by_leaderboards(spec: LeaderboardSpec, point_metric: str) -> set[str]:
    """The score-set columns the leaderboards and interval tables read
    (:func:`tycheon.analysis.leaderboard.columns_read`; the models' quantiles are read only where a table
    ranks CRPS, as :func:`~tycheon.analysis.leaderboard.leaderboard_and_interval_tables` decides)."""
    own = spec.quantile_levels if "crps" in (*spec.metrics, point_metric) else ()
    return set(columns_read(quantile_levels=own))


def _leaderboard_only_columns(table: pd.DataFrame, entry: DatasetEntry) -> list[str]:
    """The table's columns only the leaderboards and interval tables read: the conformal bands and the
    models' quantiles, which the analyses (point forecasts), the replay (a scaled point metric, no bands)
    and the sensitivity audit (its own backtests) do not; none where a spikiness sweep runs (its
    tables are leaderboards of the dataset's own rows)."""
    if entry.sweep:
        return []
    return spillable(table, [c for c in table.columns if c in BAND_COLUMNS or is_quantile_column(c)])


def _unread_by_analyses(table: pd.DataFrame, entry: DatasetEntry) -> list[str]:
    """The table's columns the analyses do not read: all but :data:`tycheon.analysis.prepared.READ_COLUMNS`
    (the publication dates and the support flags, once the bands and quantiles are on disk); none where a
    spikiness sweep runs (its tables are leaderboards of the dataset's own rows)."""
    if entry.sweep:
        return []
    return spillable(table, [c for c in table.columns if c not in READ_COLUMNS])


def _analyses(
    inputs: RunInputs,
    entry: DatasetEntry,
    loaded: LoadedDataset,
    rolling: RollingOrigin,
    spec: LeaderboardSpec,
    table: pd.DataFrame,
    *,
    min_history: int,
) -> tuple[DatasetAnalyses, SweepTable | None]:
    """The dataset's issue-16 analyses; the dial's and the sweep's extra backtests run here (their model
    records are not the dataset's: a model that fails there is simply absent from that analysis)."""
    dataset = entry.key
    units = dial_unit_names(entry.dial, loaded.panel.n_series, leaderboard_units=entry.units) if entry.dial else []

    def dial_table() -> PreparedScores | None:
        """The dial's own units' backtests, run when the dial is computed: each model's rows are scored
        into blocks (all the dial reads of them, :func:`tycheon.analysis.dial.aggregation_dial`) as soon
        as it ran, and released; at M5 size 7 million rows were held until the dial had run."""
        collected = BlockCollector(metrics=DIAL_METRICS)
        _run_models(
            inputs,
            loaded,
            rolling,
            units=units,
            min_history=min_history,
            protocol_id="rolling_origin",
            dataset=dataset,
            skip=entry.skip_models,
            part="aggregation dial",
            only=entry.analysis_models,
            point_only=True,  # the dial ranks point metrics only (tycheon.analysis.dial)
            blocks=collected,
        )
        scored = collected.prepared()
        return scored if len(scored) else None

    analyses = dataset_analyses(  # its statistics run with BLAS on one thread, the dial's backtests do not
        table,
        dataset=dataset,
        protocol="rolling_origin",
        spec=spec,
        n_series=loaded.panel.n_series,
        dial_table=dial_table if units else None,
        dial_models=entry.analysis_models,
        units=list(entry.units),  # the table is in key order; the tables are listed in the config's
    )
    sweep = None
    if entry.sweep:
        tables = {}
        own = float(dict(entry.options).get("spikiness", DEFAULT_SPIKINESS))
        for setting in entry.sweep:
            if float(setting) == own and {"total", "series"} <= set(entry.units):  # already scored: reuse it
                keep = table["unit"].isin(["total", "series"])
                if entry.analysis_models is not None:
                    keep &= table["model"].isin(entry.analysis_models)
                tables[own] = table[keep]
                continue
            variant = load_dataset(
                entry.name,
                {**dict(entry.options), "spikiness": float(setting)},
                entry.subsample,
                manifest=inputs.manifest,
            )
            t = _run_models(
                inputs,
                variant,
                rolling,
                units=["total", "series"],
                min_history=min_history,
                protocol_id="rolling_origin",
                dataset=dataset,
                skip=entry.skip_models,
                part=f"spikiness sweep {float(setting):g}",
                only=entry.analysis_models,
            ).table
            if t is not None:
                tables[float(setting)] = t
        with single_thread_blas():  # after the sweep's backtests
            sweep = (
                sweep_table(
                    tables,
                    dataset=dataset,
                    protocol="rolling_origin",
                    spec=spec,
                    n_entities=loaded.panel.n_series,
                    models=entry.analysis_models,
                )
                if tables
                else None
            )
    return analyses, sweep


def _competition_part(inputs: RunInputs, centry: CompetitionEntry, display: dict[str, str]) -> DatasetPart:
    loaded = load_dataset(centry.dataset, dict(centry.options), centry.subsample, manifest=inputs.manifest)
    protocol = CompetitionHoldout.from_panel(loaded.panel)
    run = _run_models(
        inputs,
        loaded,
        protocol,
        units=["series"],
        min_history=1,
        protocol_id="competition",
        dataset=centry.key,
        skip=centry.skip_models,
    )
    table = run.table if run.table is not None else pd.DataFrame(columns=list(SCORESET_COLUMNS))
    tag = {"dataset": centry.key, "protocol": "competition", "horizon": protocol.horizon}
    tables = [
        CompetitionTable.model_validate(
            to_json_value(
                {
                    **tag,
                    **competition_table(
                        table,
                        competition=centry.competition,
                        metric=metric,
                        statuses=run.statuses,
                        display_names=display,
                    ),
                }
            )
        )
        for metric in centry.metrics
    ]
    return DatasetPart(
        run=replace(run, table=None, parked=None),  # the table goes with the sidecar only
        sidecar=_tagged(run.table, centry.key, "competition"),
        competition=tables,
        horizon=protocol.horizon,
    )


def _model_warnings(models: Iterable[str], parts: list[DatasetPart]) -> list[RunWarning]:
    """One warning per model run that did not run, and per unit a model that ran failed on, by model,
    then in run order."""
    out = []
    for model_id in models:
        for part in parts:
            r = part.run.records[model_id]
            if r.status != "ran":
                out.append(
                    RunWarning(
                        dataset=r.dataset,
                        kind="model",
                        message=f"{model_id} {r.status} on {r.dataset} ({r.protocol}): {r.reason}",
                    )
                )
            out.extend(
                RunWarning(
                    dataset=r.dataset,
                    kind="model",
                    message=f"{model_id} failed on unit {unit} of {r.dataset} ({r.protocol}); its "
                    f"other units are scored: {reason}",
                )
                for unit, reason in r.failed_units.items()
            )
    return out


def rolling_protocol(cfg: BenchmarkConfig) -> RollingOrigin:
    """The rolling-origin protocol a config asks for (benchmark mode: origins never overlap)."""
    return RollingOrigin(
        horizon=cfg.horizon,
        stride=cfg.stride,
        n_origins=cfg.n_origins,
        embargo=cfg.embargo,
        mode="benchmark",
        n_calibration_origins=cfg.n_calibration_origins,
    )


def build_results(inputs: RunInputs) -> tuple[ResultsBody, pd.DataFrame]:
    """Run the benchmark and return the results document (without version/sidecar) and the sidecar frame."""
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    code_sha256()  # hash the code this run starts with now (cached for the provenance below)
    commit, dirty = git_state()
    cfg, models = inputs.config, inputs.models
    display = {m: c.display_name for m, c in models.items()}
    rolling = rolling_protocol(cfg)
    spec = leaderboard_spec(cfg)  # the one builder (benchmarks.leaderboard_spec), as verify rebuilds it
    rolling_parts = [_rolling_part(inputs, entry, rolling, spec, display) for entry in cfg.datasets]
    comp_parts = [_competition_part(inputs, centry, display) for centry in cfg.competition]
    parts = rolling_parts + comp_parts
    cache_log = {label: source for part in parts for label, source in part.run.cache.items()}
    provenance = Provenance.model_validate(
        to_json_value(
            {
                "tycheon_version": tycheon.__version__,
                "git_commit": commit,
                "git_dirty": dirty,
                **fingerprint(inputs.config_path, models, inputs.manifest),  # what --if-new compares
                "environment": environment(),
                "seeds": {"seed": cfg.seed},
                "cache": cache_log,
                "timings": {
                    "started_at": started.isoformat(timespec="seconds"),
                    "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
                    "runtime_seconds": round(time.perf_counter() - t0, 3),
                    **{
                        f"{kind}_seconds": round(sum(p.analysis_seconds.get(kind, 0.0) for p in rolling_parts), 3)
                        for kind in ("replay", "sensitivity")
                    },
                },
            }
        )
    )
    doc = ResultsBody(
        schema_version=SCHEMA_VERSION,
        name=cfg.name,
        provenance=provenance,
        config=to_json_value(cfg.model_dump(mode="json")),
        protocols=_protocols(
            cfg,
            {p.run.dataset: p.origins for p in rolling_parts},
            [(c, p.horizon) for c, p in zip(cfg.competition, comp_parts, strict=True) if p.horizon is not None],
        ),
        datasets=[p.dataset for p in rolling_parts if p.dataset is not None],
        models=[_model_entry(c, [p.run.records[m] for p in parts], cfg) for m, c in models.items()],
        warnings=[w for p in rolling_parts for w in p.warnings] + _model_warnings(models, parts),
        leaderboards=[lb for p in parts for lb in p.leaderboards],
        intervals=[t for p in parts for t in p.intervals],
        competition=[t for p in parts for t in p.competition],
        metric_glossary=[MetricGlossaryEntry.model_validate(g) for g in metric_glossary()],
        analyses=Analyses(
            inversion=[t for p in rolling_parts for t in p.analyses.inversion],
            dials=[t for p in rolling_parts for t in p.analyses.dials],
            class_winners=[t for p in rolling_parts for t in p.analyses.class_winners],
            uncertainty=[t for p in rolling_parts for t in p.analyses.uncertainty],
            horizon=[t for p in rolling_parts for t in p.analyses.horizon],
            sweeps=[p.sweep for p in rolling_parts if p.sweep is not None],
            across=across_table(
                [lb for p in rolling_parts for lb in p.leaderboards],
                [r for p in rolling_parts for r in p.analyses.relative],
                metric=cfg.metrics[0],
                random_walk=cfg.random_walk,
            ),
        ),
        replay=[t for p in parts for t in p.replay],
        sensitivity=[t for p in parts for t in p.sensitivity],
    )
    mark_stage("results document")
    frames = [p.sidecar for p in parts if len(p.sidecar)]
    if len(frames) == 1:
        sidecar = frames[0]  # one part: its frame as it is (a concatenation would copy every cell)
    else:
        sidecar = concat_tables(frames) if frames else pd.DataFrame(columns=_SIDECAR_COLUMNS)
    mark_stage("sidecar frame")
    return doc, sidecar


def _protocols(
    cfg: BenchmarkConfig, origins: dict[str, list[str]], comps: list[tuple[CompetitionEntry, int]]
) -> list[Protocol]:
    out = [
        Protocol(
            id="rolling_origin",
            kind="rolling_origin",
            horizon=cfg.horizon,
            stride=cfg.stride,
            n_origins=cfg.n_origins,
            embargo=cfg.embargo,
            min_history=cfg.min_history,
            origins=origins,
            quantile_levels=list(cfg.quantile_levels),
            n_calibration_origins=cfg.n_calibration_origins,
            description=f"{cfg.n_origins} rolling origins every {cfg.stride} periods, horizon {cfg.horizon} "
            f"(non-overlapping), embargo {cfg.embargo}, min history {cfg.min_history}; every "
            "model refitted at every origin on data published before it"
            + (
                f"; conformal bands of every model calibrated on {cfg.n_calibration_origins} unscored "
                "stride-1 origins before the first scored one plus earlier scored origins, from scaled "
                "residuals pooled per (model, unit, step) (WP26 section 3.6)"
                if cfg.n_calibration_origins
                else "; conformal bands from each series' own earlier scored origins"
            ),
        )
    ]
    if comps:
        hs = sorted({h for _, h in comps})
        names = ", ".join(f"{c.competition} ({c.key}, h={h})" for c, h in comps)
        out.append(
            Protocol(
                id="competition",
                kind="competition",
                horizon=hs[-1],
                stride=None,
                n_origins=1,
                embargo=0,
                min_history=None,
                origins={},
                quantile_levels=list(cfg.quantile_levels),
                description=f"as the competitions scored: fit on the published training part, forecast "
                f"the published horizon once, score on the test part with the competition's "
                f"own metrics: {names}",
            )
        )
    return out


def _model_entry(c: ModelConfig, runs: list[ModelRun], cfg: BenchmarkConfig) -> ModelEntry:
    roles = []
    if c.id == cfg.random_walk:
        roles.append("random_walk")
    if c.id == cfg.production_baseline:
        roles.append("production_baseline")
    if c.source.kind == "tycheon" and c.source.forecaster == "seasonal_naive":
        roles.append("scale_reference")
    raw = to_json_value(c.model_dump(mode="json"))
    return ModelEntry.model_validate({**raw, "config_sha256": c.sha256(), "roles": roles, "runs": runs})
