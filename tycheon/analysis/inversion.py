"""Unit-of-analysis inversion (evaluation-choices paper, section 4, Table 1): the same score set read at
every unit of analysis, side by side.

For each unit (``total``, ``level:<attr>``, ``groups:<k>``, ``series``) on the same origins:

- series, origins, models and (series, origin) blocks scored;
- the production baseline's and the random walk's rank among the models by mean block metric, for each
  metric asked (competition ranks, :func:`tycheon.stats.ranking.rank_by_mean`);
- methods significantly better / worse than the baseline: two-sided pooled Diebold-Mariano tests on the
  per-step absolute errors (HLN, :func:`tycheon.stats.dm.dm_pooled`), Benjamini-Hochberg adjusted within
  the unit's family, direction from the sign of the statistic (as the leaderboard tables), and the number
  of per-step losses pooled. This count **assumes series independent** (the paper's); the cross-sectional
  count beside it does not;

and three robustness rows (section 4): the baseline's rank on the **shared roster and shared origins**
(models and origins scored at every unit), a **volume-weighted** re-ranking (block metrics weighted by
the series weight the engine records, its size before the first origin),

.. math:: \\bar M^{w}_m = \\frac{\\sum_b w_b M_{mb}}{\\sum_b w_b},

and the **cross-sectional DM** (section 4.1): the same family tested on period-averaged differentials
(:func:`tycheon.stats.dm.dm_cross_sectional`), so a shock shared by all series counts once per period.

The inversion holds when the baseline is in the top two at the most aggregated unit and in the bottom
three per series (issue 16's reading of Table 1), on the first metric.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from tycheon.analysis.leaderboard import LeaderboardSpec
from tycheon.analysis.prepared import (
    PreparedScores,
    UnitScores,
    dm_family,
    prepared,
    ranks,
    require_models,
)

__all__ = ["Inversion", "InversionColumn", "unit_column", "unit_inversion"]


@dataclass(frozen=True)
class InversionColumn:
    """One unit of analysis read the way Table 1 reads a column (ranks are 1 = best)."""

    unit: str
    n_series: int
    n_origins: int
    n_models: int
    n_blocks: int
    baseline_rank: dict[str, int | None]  # metric -> rank
    random_walk_rank: dict[str, int | None]
    n_better: int
    n_worse: int
    n_tested: int
    n_pooled_losses: int
    shared_baseline_rank: dict[str, int | None]
    shared_n_models: int
    shared_n_origins: int
    weighted_baseline_rank: dict[str, int | None]
    cross_sectional_better: int
    cross_sectional_worse: int
    cross_sectional_tested: int
    n_periods: int


@dataclass(frozen=True)
class Inversion:
    baseline: str
    random_walk: str
    metrics: tuple[str, ...]
    columns: list[InversionColumn]  # most aggregated unit first, ``series`` last
    inverted: bool | None  # None without both an aggregate and the series unit


def _rank_of(means: Mapping[Any, Any], model: str) -> int | None:
    return ranks(means).get(model)


def _weighted_means(blocks: pd.DataFrame, metric: str) -> dict[Any, Any]:
    ok = blocks[np.isfinite(blocks[metric]) & (blocks["weight"] > 0)]
    w = ok["weight"].to_numpy(dtype=np.float64)
    num = pd.Series(w * ok[metric].to_numpy(), index=ok.index).groupby(ok["model"], observed=True).sum()
    den = pd.Series(w, index=ok.index).groupby(ok["model"], observed=True).sum()
    return (num / den).to_dict()


def unit_column(
    unit: UnitScores,
    *,
    spec: LeaderboardSpec,
    metrics: Sequence[str],
    shared_models: Sequence[str] | None = None,
    shared_origins: Sequence[pd.Timestamp] | None = None,
) -> InversionColumn:
    """Table 1's column for one unit (see the module docstring)."""
    require_models(unit, [spec.baseline])
    metrics = tuple(metrics)
    blocks = unit.blocks(metrics)
    means = {m: blocks.groupby("model", observed=True)[m].mean().to_dict() for m in metrics}
    losses = unit.step_losses()
    fam, cross = (  # the paper's pooled count (assumes series independent) and the cross-sectional one
        dm_family(losses, baseline=spec.baseline, horizon=spec.horizon, stride=spec.stride, alpha=spec.alpha, test=t)
        for t in ("pooled", "cross_sectional")
    )
    models = shared_models if shared_models is not None else sorted(blocks["model"].unique())
    origins = shared_origins if shared_origins is not None else sorted(blocks["origin"].unique())
    shared = blocks[blocks["model"].isin(models) & blocks["origin"].isin(origins)]
    shared_means = {m: shared.groupby("model", observed=True)[m].mean().to_dict() for m in metrics}
    weighted = {m: _weighted_means(blocks, m) if "weight" in blocks else {} for m in metrics}
    return InversionColumn(
        unit=unit.unit, n_series=unit.nunique("series_id"), n_origins=unit.nunique("origin"),
        n_models=len(unit.models),
        n_blocks=int(blocks[["series_id", "origin"]].drop_duplicates().shape[0]),
        baseline_rank={m: _rank_of(means[m], spec.baseline) for m in metrics},
        random_walk_rank={m: _rank_of(means[m], spec.random_walk) for m in metrics},
        n_better=fam.n_better, n_worse=fam.n_worse, n_tested=fam.n_tested, n_pooled_losses=fam.n_pooled,
        shared_baseline_rank={m: _rank_of(shared_means[m], spec.baseline) for m in metrics},
        shared_n_models=len(models), shared_n_origins=len(origins),
        weighted_baseline_rank={m: _rank_of(weighted[m], spec.baseline) for m in metrics},
        cross_sectional_better=cross.n_better, cross_sectional_worse=cross.n_worse,
        cross_sectional_tested=cross.n_tested, n_periods=unit.nunique("target_period"),
    )  # fmt: skip


def unit_inversion(
    table: pd.DataFrame | PreparedScores,
    *,
    spec: LeaderboardSpec,
    metrics: Sequence[str] | None = None,
) -> Inversion:
    """Every unit of a score-set table side by side, with the robustness rows (paper, Table 1).

    Parameters
    ----------
    table : DataFrame or PreparedScores
        ``ScoreSet.table`` of one dataset (several units, the same origins), or the same split by unit
        (:class:`PreparedScores`, to share block scores between analyses).
    spec : LeaderboardSpec
        Baseline, random walk, horizon/stride of the protocol (the DM overlap lag) and alpha.
    metrics : sequence of str, optional
        Block metrics to rank on (default: ``spec.metrics`` and ``wape``, the paper's metric at the total).

    Returns
    -------
    Inversion
        Columns from the most aggregated unit (fewest series) to ``series``; ``inverted`` on the first metric.

    References
    ----------
    Evaluation-choices paper, sections 4 and 4.1, Table 1; Diebold & Mariano (1995); Harvey, Leybourne &
    Newbold (1997); Benjamini & Hochberg (1995).
    """
    scores = prepared(table)
    metrics = tuple(metrics) if metrics is not None else tuple(dict.fromkeys((*spec.metrics, "wape")))
    units = list(scores)
    model_sets = [set(scores[u].models) for u in units]
    origin_sets = [set(pd.unique(scores[u].column("origin"))) for u in units]
    shared_models = sorted(set.intersection(*model_sets))
    shared_origins = sorted(set.intersection(*origin_sets))
    columns = [
        unit_column(scores[u], spec=spec, metrics=metrics, shared_models=shared_models, shared_origins=shared_origins)
        for u in units
    ]
    columns.sort(key=lambda c: (c.unit == "series", c.n_series, c.unit))
    inverted = None
    series = next((c for c in columns if c.unit == "series"), None)
    top = columns[0] if columns and columns[0].unit != "series" else None
    if series is not None and top is not None:
        first = metrics[0]
        r_top, r_series = top.baseline_rank[first], series.baseline_rank[first]
        inverted = bool(r_top is not None and r_series is not None and r_top <= 2 and r_series >= series.n_models - 2)
    return Inversion(spec.baseline, spec.random_walk, metrics, columns, inverted)
