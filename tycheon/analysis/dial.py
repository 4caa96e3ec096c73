"""The aggregation dial (evaluation-choices paper, section 4.2, Table 3 and Figure 1): the baseline's rank
as the aggregate is split into ever more groups.

The engine forms the groups (``groups:<k>``: series sorted by volume before the first training cut and
split into ``k`` near-equal groups; ``groups_random:<k>``: a seeded random assignment, the control), scores
every group's aggregate over the same origins, and this module reads the score set. Each point of a curve
is one unit; the curve of size-sorted groups also takes ``total`` (``k = 1``) and ``series`` (``k`` = the
number of series), the random curve the same two end points; a real hierarchy (``level:<attr>`` units,
e.g. fpp3 tourism's state, region and purpose) gives a third curve with ``k`` = the level's aggregates
(paper, section 4.2: "a real hierarchy walks the same curve").

At each point, with the models scored on that unit:

- the baseline's rank by **median WAPE**, by **mean RMSSE** and by **Friedman mean rank** (of RMSSE over the
  complete (group, origin) blocks, :func:`tycheon.stats.friedman.friedman_nemenyi`), competition ranks;
- the **smooth share**: the share of (group, origin) blocks whose demand class at the origin is smooth;
- per curve and convention, Spearman's :math:`\\rho` of the baseline's rank against :math:`\\log k`
  (:func:`tycheon.stats.ranking.spearman`; NaN when the rank never changes: a flat dial), and whether the
  rank **never improves** as :math:`k` grows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd

from tycheon.analysis.leaderboard import LeaderboardSpec
from tycheon.analysis.prepared import (
    PreparedScores,
    UnitScores,
    group_kind,
    prepared,
    ranks,
    require_models,
    wide,
)
from tycheon.errors import InputError
from tycheon.stats.friedman import friedman_nemenyi
from tycheon.stats.ranking import spearman

__all__ = ["CONVENTIONS", "DIAL_METRICS", "Dial", "DialCurve", "DialPoint", "aggregation_dial", "dial_units"]

CONVENTIONS = ("median_wape", "mean_rmsse", "friedman")
DIAL_METRICS = ("wape", "rmsse")
"""The block metrics a dial point reads (a unit's block scores of these are all the dial needs of it)."""


@dataclass(frozen=True)
class DialPoint:
    unit: str
    k: int
    series_per_group: float
    n_blocks: int
    n_models: int
    baseline_rank: dict[str, int | None]  # convention -> rank (1 = best)
    smooth_share: float


@dataclass(frozen=True)
class DialCurve:
    kind: str  # "size", "random" or "hierarchy"
    points: list[DialPoint]  # by k ascending
    spearman_log_k: dict[str, float | None] = field(default_factory=dict)  # convention -> rho (None: flat)
    never_improves: dict[str, bool] = field(default_factory=dict)
    max_rank_change: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Dial:
    baseline: str
    n_series: int
    curves: list[DialCurve]


def _point(scores: UnitScores, *, k: int, n_series: int, baseline: str, alpha: float) -> DialPoint:
    require_models(scores, [baseline])
    unit = scores.unit
    blocks = scores.blocks(DIAL_METRICS)
    models = sorted(blocks["model"].unique())
    med_wape = blocks.groupby("model", observed=True)["wape"].median().to_dict()
    mean_rmsse = blocks.groupby("model", observed=True)["rmsse"].mean().to_dict()
    rank = {"median_wape": _rank(med_wape, baseline), "mean_rmsse": _rank(mean_rmsse, baseline), "friedman": None}
    try:
        fr = friedman_nemenyi(wide(blocks, "rmsse").reindex(columns=models), alpha=alpha)
        rank["friedman"] = _rank(fr.mean_ranks.to_dict(), baseline)
    except InputError:
        pass  # fewer than two complete blocks: no Friedman rank at this point
    cells = blocks.drop_duplicates(["series_id", "origin"])
    has_class = "demand_class" in cells and len(cells) > 0
    smooth = float((cells["demand_class"] == "smooth").mean()) if has_class else float("nan")
    return DialPoint(unit, k, n_series / k, len(cells), len(models), rank, smooth)


def _rank(values: Mapping[Any, Any], model: str) -> int | None:
    return ranks({str(m): v for m, v in values.items()}).get(model)


def _curve(kind: str, points: list[DialPoint]) -> DialCurve:
    points = sorted(points, key=lambda p: p.k)
    rho: dict[str, float | None] = {}
    never: dict[str, bool] = {}
    move: dict[str, int] = {}
    for conv in CONVENTIONS:
        pts = [(p.k, r) for p in points if (r := p.baseline_rank[conv]) is not None]
        rs = [r for _, r in pts]
        never[conv] = all(b >= a for a, b in pairwise(rs))
        move[conv] = int(max(rs) - min(rs)) if rs else 0
        rho[conv] = spearman(np.log([k for k, _ in pts]), rs) if len(set(rs)) > 1 else None
    return DialCurve(kind, points, rho, never, move)


def aggregation_dial(table: pd.DataFrame | PreparedScores, *, spec: LeaderboardSpec, n_series: int) -> Dial:
    """The dial's curves from a score set holding ``groups:<k>`` / ``groups_random:<k>`` units (and
    ``total`` / ``series`` as end points).

    Parameters
    ----------
    table : DataFrame or PreparedScores
        ``ScoreSet.table`` of one dataset, or several split by unit.
    spec : LeaderboardSpec
        The production baseline and alpha.
    n_series : int
        Series of the panel (``k`` of the ``series`` unit, and groups' size ``n_series / k``).

    Returns
    -------
    Dial
        A ``size`` curve (size-sorted groups), a ``random`` curve (random groups) and a ``hierarchy``
        curve (the ``level:<attr>`` units, ``k`` = aggregates at the level) where the table has such units.

    References
    ----------
    Evaluation-choices paper, section 4.2, Table 3 and Figure 1; Friedman (1937); Spearman (1904).
    """
    if n_series < 1:
        raise InputError(f"n_series must be positive, got {n_series}")
    scores = prepared(table)
    units = list(scores)
    kinds: dict[str, list[tuple[str, int]]] = {"size": [], "random": [], "hierarchy": []}
    ends: list[tuple[str, int]] = []
    for u in units:
        kind, k = group_kind(u)
        if k is not None:
            kinds[kind].append((u, k))
        elif u.startswith("level:"):  # a real hierarchy: k is the number of aggregates at the level
            kinds["hierarchy"].append((u, scores[u].nunique("series_id")))
        elif u == "total":
            ends.append((u, 1))
        elif u == "series":
            ends.append((u, n_series))
    computed: dict[str, DialPoint] = {}

    def point(u: str, k: int) -> DialPoint:
        if u not in computed:
            computed[u] = _point(scores[u], k=k, n_series=n_series, baseline=spec.baseline, alpha=spec.alpha)
        return computed[u]

    curves = []
    for kind, members in kinds.items():
        if not members:
            continue
        ks = {k for _, k in members}
        extra = [(u, k) for u, k in ends if k not in ks]  # groups:1 is the total, groups:n the series
        curves.append(_curve(kind, [point(u, k) for u, k in members + extra]))
    return Dial(spec.baseline, int(n_series), curves)


def dial_units(n_series: int, *, ks: Sequence[int] = (1, 5, 25, 125, 625), random: bool = True) -> list[str]:
    """The units a dial run asks the engine for: ``groups:k`` for each ``k`` below ``n_series`` (capped by
    it), the random control at the same ``k``, and ``series``."""
    kept = sorted({min(int(k), n_series) for k in ks if k >= 1})
    units = [f"groups:{k}" for k in kept if k < n_series]
    if random:
        units += [f"groups_random:{k}" for k in kept if 1 < k < n_series]
    return units + ["series"]
