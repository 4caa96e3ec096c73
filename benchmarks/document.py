"""The results document of a benchmark run (:func:`build_results`): every dataset and competition part
run in turn, then its provenance, protocols, model entries, warnings, tables and analyses, and the
sidecar frame of every part's rows."""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import UTC, datetime

import pandas as pd

import tycheon
from benchmarks.config import BenchmarkConfig, CompetitionEntry, ModelConfig
from benchmarks.dataset_part import DatasetPart, competition_part, rolling_part
from benchmarks.leaderboard_spec import leaderboard_spec
from benchmarks.perf.memory import mark_stage
from benchmarks.provenance import code_sha256, environment, fingerprint, git_state
from benchmarks.results_io import to_json_value
from benchmarks.results_model import (
    SCHEMA_VERSION,
    MetricGlossaryEntry,
    ModelEntry,
    ModelRun,
    Protocol,
    Provenance,
    ResultsBody,
    RunWarning,
)
from benchmarks.roster_run import _SIDECAR_COLUMNS
from benchmarks.run_inputs import RunInputs, rolling_protocol
from benchmarks.sections import RunContext, assemble
from tycheon.backtest.scoreset import concat_tables
from tycheon.metrics.registry import glossary as metric_glossary

__all__ = ["build_results"]


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
    rolling_parts = [rolling_part(inputs, entry, rolling, spec, display) for entry in cfg.datasets]
    comp_parts = [competition_part(inputs, centry, display) for centry in cfg.competition]
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
        analyses=assemble(  # every section of benchmarks.sections
            [p.analyses.tables for p in rolling_parts],
            RunContext(
                leaderboards=[lb for p in rolling_parts for lb in p.leaderboards],
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
