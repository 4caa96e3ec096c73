"""The replay and sensitivity sections of a results document: what the pipeline calls for each rolling
dataset (the statistics live in :mod:`tycheon.analysis.replay` and :mod:`tycheon.analysis.sensitivity`)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import pandas as pd

from benchmarks.config import BenchmarkConfig, DatasetEntry
from benchmarks.results_io import to_json_value
from benchmarks.results_model import ReplayTable, RunWarning, SensitivityTable
from tycheon.analysis.replay import ReplaySpec, replay_tables, replay_units
from tycheon.analysis.sensitivity import (
    TargetPairingError,
    fitted_state,
    sensitivity_protocols,
    sensitivity_record,
    sensitivity_report,
    sensitivity_runs,
)
from tycheon.backtest.factories import Factory
from tycheon.backtest.protocol import ProtocolError, RollingOrigin, StaticSplit
from tycheon.data import datasets as catalogue
from tycheon.data.panel import Panel
from tycheon.stats.threads import single_thread_blas

__all__ = ["audit_protocols", "replay_section", "sensitivity_datasets", "sensitivity_section"]


def _synthetic(entry: DatasetEntry) -> bool:
    """Whether a config's dataset is generated; a user's own file is real data."""
    return entry.file is None and bool(catalogue.spec(entry.name).synthetic)


def sensitivity_datasets(cfg: BenchmarkConfig) -> list[str]:
    """Dataset keys that get a sensitivity audit: the config's list, or by default the first synthetic
    dataset and the first real one."""
    if cfg.sensitivity.datasets is not None:
        return list(cfg.sensitivity.datasets)
    chosen: list[str] = []
    for want in (True, False):
        entry = next((d for d in cfg.datasets if _synthetic(d) is want), None)
        if entry is not None:
            chosen.append(entry.key)
    return chosen


def audit_protocols(
    cfg: BenchmarkConfig, rolling: RollingOrigin, panel: Panel, *, min_history: int
) -> dict[str, RollingOrigin | StaticSplit]:
    """The protocols the config's sensitivity audit runs on ``panel``
    (:func:`tycheon.analysis.sensitivity.sensitivity_protocols` with the config's gap and shifts, which
    raises where they cannot all score the same targets), for the audit and for the shipped-config check."""
    sens = cfg.sensitivity
    return sensitivity_protocols(
        rolling,
        panel,
        static_gap=sens.static_gap,
        boundary_shifts=sens.boundary_shifts,
        refit_shift=sens.refit_shift,
        refit_every=sens.refit_every,
        min_history=min_history,
    )


def replay_section(
    table: pd.DataFrame, *, cfg: BenchmarkConfig, dataset: str, protocol: str
) -> tuple[list[ReplayTable], float]:
    """The replay of every unit with more than one series (the floor: the production baseline), and the
    seconds it took; nothing when the replay is off or the baseline did not run."""
    rule = cfg.replay
    if not rule.enabled or cfg.production_baseline not in set(table["model"].unique()):
        return [], 0.0
    if not (table.groupby("unit", observed=True)["series_id"].nunique() > 1).any():
        return [], 0.0  # one series per unit (a single-series file, or units total only): nothing to select among
    t0 = time.perf_counter()
    spec = ReplaySpec(
        baseline=cfg.production_baseline,
        metric=rule.metric,
        min_fold_share=rule.min_fold_share,
        bias_threshold=rule.bias_threshold,
        top_k=rule.top_k,
        min_folds=rule.min_folds,
        oracle=rule.oracle,
        min_cell=cfg.min_cell,  # the one minimum cell of every table (WP26 section 6)
    )
    result = replay_units(table, spec=spec)
    tables = [
        ReplayTable.model_validate(to_json_value({"dataset": dataset, "protocol": protocol, **t}))
        for t in replay_tables(result)
    ]
    return tables, time.perf_counter() - t0


def sensitivity_section(
    panel: Panel,
    *,
    cfg: BenchmarkConfig,
    entry: DatasetEntry,
    rolling: RollingOrigin,
    factories: Mapping[str, Factory],
    min_history: int,
    protocol: str,
    dask_client: Any = None,
) -> tuple[SensitivityTable | None, list[RunWarning], float]:
    """The protocol-sensitivity audit of one dataset's per-series unit with the models that ran, or a
    warning saying why there is none (a pairing failure, e.g. a model that failed in one run only)."""
    sens = cfg.sensitivity
    models = {m: f for m, f in factories.items() if sens.models is None or m in sens.models}
    t0 = time.perf_counter()
    if len(models) < 2:
        return (
            None,
            [
                RunWarning(
                    dataset=entry.key,
                    kind="other",
                    message=(f"no sensitivity audit: {len(models)} model(s) ran, two are needed"),
                )
            ],
            0.0,
        )
    try:
        protocols = audit_protocols(cfg, rolling, panel, min_history=min_history)
        runs = sensitivity_runs(
            panel,
            rolling,
            models,
            metric=sens.metric,
            static_gap=sens.static_gap,
            boundary_shifts=sens.boundary_shifts,
            refit_shift=sens.refit_shift,
            refit_every=sens.refit_every,
            min_history=min_history,
            quantile_levels=(),
            backend=cfg.backend,
            n_jobs=cfg.n_jobs,
            dask_client=dask_client,
            seed=cfg.seed,
            time_budget=cfg.time_budget_seconds,
        )
        with single_thread_blas():  # the statistics, after the audit's backtests
            report = sensitivity_report(runs, seed=cfg.seed, n_resamples=sens.n_resamples)
    except (TargetPairingError, ProtocolError) as err:  # pairs differ, or a reference protocol does not fit
        return (
            None,
            [RunWarning(dataset=entry.key, kind="other", message=f"no sensitivity audit: {err}")],
            time.perf_counter() - t0,
        )
    record = sensitivity_record(
        report, runs={n: _describe(n, p) for n, p in protocols.items()}, fitted=fitted_state(models)
    )
    table = SensitivityTable.model_validate(
        to_json_value({"dataset": entry.key, "protocol": protocol, "unit": "series", **record})
    )
    return table, [], time.perf_counter() - t0


def _describe(name: str, protocol: RollingOrigin | StaticSplit) -> str:
    """The run in words (the names come from :func:`tycheon.analysis.sensitivity.sensitivity_protocols`)."""
    if isinstance(protocol, StaticSplit):
        return (
            f"static split: every model fitted once, {protocol.embargo} period(s) before the first origin, and "
            "updated after (parameters kept, state advanced with the data published by each origin)"
        )
    if protocol.refit_every > 1:
        return (
            f"rolling origin refitting at every {protocol.refit_every}th origin: in between, each model keeps "
            "the parameters of its last refit and updates its state with the data published by the origin"
        )
    if protocol.embargo:
        return f"rolling origin with an embargo of {protocol.embargo} period(s)"
    return "rolling origin: every model refitted at every origin on all data published by it (the reference)"
