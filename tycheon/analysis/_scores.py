"""Shared glue of the analyses: a unit's block scores, wide tables, and the pooled DM family against the
baseline. No statistic lives here; each is called from :mod:`tycheon.metrics` / :mod:`tycheon.stats`."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tycheon.metrics.aggregate import block_scores
from tycheon.metrics.errors import MetricInputError
from tycheon.stats.dm import dm_cross_sectional, dm_pooled, pooled_layout
from tycheon.stats.multiplicity import benjamini_hochberg
from tycheon.stats.ranking import rank_by_mean

_GROUPS = re.compile(r"^(groups|groups_random):(\d+)$")
STEP_KEYS = ["series_id", "origin", "step"]


def check_table(table: pd.DataFrame, *, models: Sequence[str] = ()) -> None:
    """Refuse what is not a score-set table, or one that lacks a model the analysis compares against."""
    need = {"model", "unit", "series_id", "origin", "step", "actual", "point"}
    if not isinstance(table, pd.DataFrame) or not need <= set(table.columns):
        got = list(table.columns) if isinstance(table, pd.DataFrame) else type(table).__name__
        raise MetricInputError(f"expected a score-set table with columns {sorted(need)}; got {got}")
    present = set(table["model"].unique())
    absent = [m for m in models if m not in present]
    if absent:
        raise MetricInputError(f"model(s) {absent} have no rows in the table (models present: {sorted(present)})")


def group_kind(unit: str) -> tuple[str, int | None]:
    """``("size", k)`` for ``groups:k``, ``("random", k)`` for ``groups_random:k``, else ``(unit, None)``."""
    match = _GROUPS.match(unit)
    if not match:
        return unit, None
    return ("size" if match.group(1) == "groups" else "random"), int(match.group(2))


def blocks_of(table: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """Block scores of one unit's rows (:func:`tycheon.metrics.aggregate.block_scores`)."""
    return block_scores(table, metrics=list(metrics))


def wide(blocks: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Block scores ``[(series, origin), model]`` (NaN where a model has no score for a block)."""
    return blocks.set_index(["series_id", "origin", "model"])[metric].unstack("model")


def ranks(values: dict[str, float]) -> dict[str, int]:
    """Competition ranks of models by a value, lower is better (:func:`tycheon.stats.ranking.rank_by_mean`)."""
    return rank_by_mean({m: float(v) for m, v in values.items()})


@dataclass(frozen=True)
class DMFamily:
    """Pooled DM of every challenger against the baseline on per-step absolute errors, BH adjusted."""

    n_better: int
    n_worse: int
    n_tested: int
    n_pooled: int  # per-step losses of the baseline pooled by the tests
    p_value: dict[str, float]
    p_bh: dict[str, float]
    statistic: dict[str, float]


def step_losses(table: pd.DataFrame) -> pd.DataFrame:
    """Per-step absolute errors ``[(series, origin, step), model]`` with the target period kept."""
    frame = table[STEP_KEYS + ["model"]].assign(loss=(table["point"] - table["actual"]).abs().to_numpy())
    out = frame.set_index(STEP_KEYS + ["model"])["loss"].unstack("model")
    periods = table.drop_duplicates(STEP_KEYS).set_index(STEP_KEYS)["target_period"]
    return out.assign(_period=periods.reindex(out.index).to_numpy())


def dm_family(losses: pd.DataFrame, *, baseline: str, horizon: int, stride: int, alpha: float,
              cross_sectional: bool = False) -> DMFamily:
    """DM of each model against ``baseline`` on the rows both have, pooled over (series, origin) blocks
    (:func:`tycheon.stats.dm.dm_pooled`) or on period averages (:func:`~tycheon.stats.dm.dm_cross_sectional`);
    a model the test refuses (too few blocks or periods) is left out of the family."""
    models = [m for m in losses.columns if m not in (baseline, "_period")]
    results = {}
    for m in models:
        pair = losses[[m, baseline, "_period"]].dropna(subset=[m, baseline])
        if pair.empty:
            continue
        try:
            if cross_sectional:
                res = dm_cross_sectional(pair[m].to_numpy(), pair[baseline].to_numpy(),
                                         period=pair["_period"].to_numpy(), horizon=horizon, stride=1)
            else:
                idx = pair.index
                layout = pooled_layout(idx.get_level_values("series_id").to_numpy(),
                                       idx.get_level_values("origin").to_numpy())
                res = dm_pooled(pair[m].to_numpy(), pair[baseline].to_numpy(), layout=layout, horizon=horizon,
                                stride=stride)
        except MetricInputError:
            continue
        if np.isfinite(res.p_value):
            results[m] = res
    tested = list(results)
    p_bh = dict(zip(tested, benjamini_hochberg([results[m].p_value for m in tested]), strict=True)) if tested else {}
    better = sum(1 for m in tested if p_bh[m] < alpha and results[m].statistic < 0)
    worse = sum(1 for m in tested if p_bh[m] < alpha and results[m].statistic > 0)
    n_pooled = int(losses[baseline].notna().sum()) if baseline in losses else 0
    return DMFamily(better, worse, len(tested), n_pooled, {m: results[m].p_value for m in tested},
                    {m: float(p_bh[m]) for m in tested}, {m: results[m].statistic for m in tested})
