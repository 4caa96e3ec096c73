"""What one dataset entry (:func:`rolling_part`) or competition entry (:func:`competition_part`) adds to
the results document: its roster's runs, its tables, analyses, replay and sensitivity audit, and its
sidecar rows.

The rolling part's stages read the one score-set table in turn, each only some of its columns; they run
as a :class:`benchmarks.spill.Stages` plan, each naming what it reads (:func:`_read_by_leaderboards`,
:func:`_read_by_analyses`, :func:`_read_by_replay`), so the columns a stage does not read wait on disk
while it runs.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace

import pandas as pd

from benchmarks.analyses import DatasetAnalyses, dataset_analyses, dial_unit_names
from benchmarks.config import CompetitionEntry, DatasetEntry
from benchmarks.perf.memory import mark_stage
from benchmarks.replay_audit import replay_section, sensitivity_datasets, sensitivity_section
from benchmarks.results_io import to_json_value
from benchmarks.results_model import (
    CompetitionTable,
    DatasetInfo,
    IntervalTable,
    Leaderboard,
    ReplayTable,
    RunWarning,
    SensitivityTable,
)
from benchmarks.roster_run import ProtocolRun, _engine_facts, _tagged, run_models
from benchmarks.run_inputs import LoadedDataset, RunInputs, load_dataset
from benchmarks.spill import Stages
from tycheon.analysis.competition import competition_table
from tycheon.analysis.dial import DIAL_METRICS
from tycheon.analysis.leaderboard import LeaderboardSpec, columns_read, leaderboard_and_interval_tables
from tycheon.analysis.prepared import READ_COLUMNS, BlockCollector, PreparedScores
from tycheon.backtest.columns import BAND_COLUMNS
from tycheon.backtest.competition import CompetitionHoldout
from tycheon.backtest.execution import release_workers
from tycheon.backtest.factories import forecaster_factory
from tycheon.backtest.protocol import RollingOrigin
from tycheon.backtest.scoreset import SCORESET_COLUMNS
from tycheon.contract import is_quantile_column
from tycheon.stats.threads import single_thread_blas

__all__ = ["DatasetPart", "competition_part", "rolling_part"]


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
    replay: list[ReplayTable] = field(default_factory=list)
    sensitivity: list[SensitivityTable] = field(default_factory=list)
    analysis_seconds: dict[str, float] = field(default_factory=dict)


def rolling_part(
    inputs: RunInputs, entry: DatasetEntry, rolling: RollingOrigin, spec: LeaderboardSpec, display: dict[str, str]
) -> DatasetPart:
    """One dataset entry under the rolling-origin protocol: the roster's backtests, then the leaderboards
    and interval tables, the analyses, the replay and the sensitivity audit, each stage of the table
    with only the columns it reads in memory."""
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
    boards_read = _read_by_leaderboards(spec, cfg.metrics[0])
    run = run_models(
        inputs,
        loaded,
        rolling,
        units=list(entry.units),
        min_history=min_history,
        protocol_id="rolling_origin",
        dataset=dataset,
        skip=entry.skip_models,
        keep=boards_read,  # the leaderboards read the table first: the other columns are joined on disk
    )
    info = DatasetInfo.model_validate(
        {
            **to_json_value({"name": dataset, **loaded.info, "units": list(entry.units)}),
            "engine": _engine_facts(run.metas),
        }
    )
    tag = {"dataset": dataset, "protocol": "rolling_origin"}
    table = run.table
    warnings = [RunWarning(dataset=dataset, kind=c.kind, message=c.message) for c in loaded.caveats]
    leaderboards: list[Leaderboard] = []
    intervals: list[IntervalTable] = []
    analyses = DatasetAnalyses()
    replays: list[ReplayTable] = []
    sensitivity: list[SensitivityTable] = []
    seconds: dict[str, float] = {}
    if table is not None:
        with Stages(table, parked=run.parked) as plan:
            with single_thread_blas(), plan.stage(reads=boards_read):
                # one pass over the units for both (spec.quantile_levels are the config's)
                boards, bands = leaderboard_and_interval_tables(
                    table, spec=spec, display_names=display, point_metric=cfg.metrics[0]
                )
                leaderboards = [Leaderboard.from_table(to_json_value({**tag, **t})) for t in boards]
                intervals = [IntervalTable.model_validate(to_json_value({**tag, **t})) for t in bands]
                del boards, bands
            mark_stage("leaderboards and interval tables")
            with plan.stage(reads=_read_by_analyses(entry)):
                analyses = _analyses(inputs, entry, loaded, rolling, spec, table, min_history=min_history)
            mark_stage("analyses")
            with single_thread_blas(), plan.stage(reads=_read_by_replay(plan.columns)):
                replays, seconds["replay"] = replay_section(table, cfg=cfg, dataset=dataset, protocol="rolling_origin")
            mark_stage("replay")
            if dataset in sensitivity_datasets(cfg):
                ran = {}
                for m, status in run.statuses.items():
                    if status == "ran":
                        forecaster_id, params = inputs.models[m].factory_spec()
                        ran[m] = forecaster_factory(forecaster_id, **params)
                with plan.stage(reads=()):  # the audit runs its own backtests: it reads none of the table
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
                release_workers()  # its backtests' workers: the rest of the run (document, sidecar, render) has none
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


def _read_by_analyses(entry: DatasetEntry) -> Collection[str] | None:
    """The score-set columns the analyses read: those prepared scores read
    (:data:`tycheon.analysis.prepared.READ_COLUMNS`: the point forecasts, not the bands, quantiles,
    publication dates or support flags); every column (``None``) where a spikiness sweep runs (its
    tables are leaderboards of the dataset's own rows)."""
    return None if entry.sweep else READ_COLUMNS


def _read_by_replay(columns: Collection[str]) -> list[str]:
    """The table's columns the replay reads: all but the conformal bands and the models' quantiles (it
    scores a point metric of a served combination, which has neither)."""
    return [c for c in columns if c not in BAND_COLUMNS and not is_quantile_column(c)]


def _analyses(
    inputs: RunInputs,
    entry: DatasetEntry,
    loaded: LoadedDataset,
    rolling: RollingOrigin,
    spec: LeaderboardSpec,
    table: pd.DataFrame,
    *,
    min_history: int,
) -> DatasetAnalyses:
    """The dataset's issue-16 analyses (:mod:`benchmarks.sections`); the dial's and the sweep's extra
    backtests run here (their model records are not the dataset's: a model that fails there is simply
    absent from that analysis)."""
    dataset = entry.key
    units = dial_unit_names(entry.dial, loaded.panel.n_series, leaderboard_units=entry.units) if entry.dial else []

    def dial_table() -> PreparedScores | None:
        """The dial's own units' backtests, run when the dial is computed: each model's rows are scored
        into blocks (all the dial reads of them, :func:`tycheon.analysis.dial.aggregation_dial`) as soon
        as it ran, and released; at M5 size 7 million rows were held until the dial had run."""
        collected = BlockCollector(metrics=DIAL_METRICS)
        run_models(
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

    def rerun(options: dict[str, object], *, units: list[str], part: str) -> pd.DataFrame | None:
        """The dataset regenerated with other loader ``options`` (a sweep setting), backtested at ``units``."""
        variant = load_dataset(
            entry.name, {**dict(entry.options), **options}, entry.subsample, manifest=inputs.manifest
        )
        return run_models(
            inputs,
            variant,
            rolling,
            units=units,
            min_history=min_history,
            protocol_id="rolling_origin",
            dataset=dataset,
            skip=entry.skip_models,
            part=part,
            only=entry.analysis_models,
        ).table

    return dataset_analyses(  # its statistics run with BLAS on one thread, the dial's backtests do not
        table,
        dataset=dataset,
        protocol="rolling_origin",
        spec=spec,
        n_series=loaded.panel.n_series,
        dial_table=dial_table if units else None,
        dial_models=entry.analysis_models,
        units=list(entry.units),  # the table is in key order; the tables are listed in the config's
        entry=entry,
        rerun=rerun,
    )


def competition_part(inputs: RunInputs, centry: CompetitionEntry, display: dict[str, str]) -> DatasetPart:
    """One competition entry: the roster on the competition's own holdout, scored with its metrics."""
    loaded = load_dataset(centry.dataset, dict(centry.options), centry.subsample, manifest=inputs.manifest)
    protocol = CompetitionHoldout.from_panel(loaded.panel)
    run = run_models(
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
