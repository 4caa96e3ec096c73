"""The spikiness sweep of a synthetic dataset whose config lists ``sweep`` settings
(:mod:`tycheon.analysis.sweep`): each setting other than the dataset's own is a backtest of its own."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from benchmarks.results_model.analyses import SweepTable
from benchmarks.sections import Carried, DatasetContext, Section, plain
from tycheon.analysis.leaderboard import LeaderboardSpec
from tycheon.analysis.sweep import spikiness_sweep
from tycheon.data.synthetic import DEFAULT_SPIKINESS
from tycheon.stats.threads import single_thread_blas

_UNITS = ["total", "series"]


def sweep_table(
    tables: dict[float, pd.DataFrame],
    *,
    dataset: str,
    protocol: str,
    spec: LeaderboardSpec,
    n_entities: int,
    models: Sequence[str] | None = None,
) -> SweepTable:
    """The spikiness sweep of a synthetic dataset from its per-setting score sets (``models``: the ones
    they hold when the config restricts the sweep, recorded in the table; None: not restricted)."""
    res = spikiness_sweep(tables, spec=spec, metric=spec.metrics[0])
    covered = {} if models is None else {"models": list(models)}
    return SweepTable.model_validate(
        {"dataset": dataset, "protocol": protocol, "n_entities": n_entities, **plain(res), **covered}
    )


def compute(ctx: DatasetContext) -> list[SweepTable] | Carried:
    entry = ctx.entry
    if entry is None or not entry.sweep:
        return []
    own = float(dict(entry.options).get("spikiness", DEFAULT_SPIKINESS))
    scored = set(_UNITS) <= set(entry.units)  # the dataset's own setting is then already scored: reused
    if ctx.rerun is None and not (scored and all(float(s) == own for s in entry.sweep)):
        old = ctx.previous_tables("sweeps")
        reason = (
            f"the spikiness sweep of {ctx.dataset}: its other settings were scored by backtests that the score "
            "set does not hold"
        )
        return Carried(old, reason if old else None)
    tables = {}
    for setting in entry.sweep:
        if float(setting) == own and scored:
            keep = ctx.table["unit"].isin(_UNITS)
            if entry.analysis_models is not None:
                keep &= ctx.table["model"].isin(entry.analysis_models)
            tables[own] = ctx.table[keep]
            continue
        assert ctx.rerun is not None  # checked above: every other setting needs a backtest
        t = ctx.rerun({"spikiness": float(setting)}, units=_UNITS, part=f"spikiness sweep {float(setting):g}")
        if t is not None:
            tables[float(setting)] = t
    if not tables:
        return []
    with single_thread_blas():  # after the sweep's backtests
        return [
            sweep_table(
                tables,
                dataset=ctx.dataset,
                protocol=ctx.protocol,
                spec=ctx.spec,
                n_entities=ctx.n_series,
                models=entry.analysis_models,
            )
        ]


SECTION = Section(
    key="sweeps",
    table=SweepTable,
    position=60,
    description="The spikiness sweep: the baseline's rank at the total and per entity as the synthetic "
    "marketplace's spikiness dial turns.",
    recompute="own_backtests",
    compute=compute,
    compute_position=100,  # its backtests after every statistic of the score set
    template="sections/sweeps.md.j2",
    page_position=30,
)
