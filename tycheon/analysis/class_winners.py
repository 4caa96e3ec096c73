"""Winner per demand class (evaluation-choices paper, section 5, Table 4).

Blocks are classified at every origin from that origin's training window alone (the engine records the
class; ADI cut-off :data:`tycheon.data.demand.ADI_CUTOFF` = 1.32, CV² cut-off
:data:`~tycheon.data.demand.CV2_CUTOFF` = 0.49, Syntetos, Boylan & Croston 2005). Per class: the blocks
scored, the three best models by mean block metric with their values, and the production baseline's
rank and value; overall, the pooled winner (best mean over all blocks) and how many of the classes it
leads ("the pooled winner leads k of n classes").

**Minimum cell** (WP26 section 6, :func:`tycheon.analysis.cell.cell_check`, the one rule of every table):
a class, or the pooled cell, counts its scored blocks (series x origin with a value of the metric; an
aggregate unit is one series, so its blocks are its origins). A class below ``min_cell`` names no leader:
its row keeps its counts and the baseline's mean but no top three and no baseline rank, and says why
(``cell_reason``). ``n_classes``, ``pooled_winner_leads`` and ``distinct_winners`` count only the classes
that pass; a pooled cell below the minimum names no pooled winner.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tycheon.analysis.cell import cell_check
from tycheon.analysis.prepared import PreparedScores, prepared, ranks, require_models
from tycheon.data.demand import ADI_CUTOFF, CLASSES, CV2_CUTOFF

__all__ = ["NAMED_CLASSES", "ClassLeader", "ClassRow", "ClassWinners", "class_winners"]

NAMED_CLASSES = CLASSES[:4]


@dataclass(frozen=True)
class ClassLeader:
    model: str
    value: float  # mean block metric in the class


@dataclass(frozen=True, kw_only=True)
class ClassRow:
    demand_class: str
    n_blocks: int  # (series, origin) blocks of the class, with or without a value of the metric
    top: list[ClassLeader]  # best first, up to three; empty when the class is below the minimum cell
    baseline_rank: int | None  # None below the minimum cell (no ranking is named)
    baseline_value: float | None
    n_models: int
    cell_ok: bool
    cell_count: int  # scored blocks: what the minimum cell counts
    cell_reason: str | None


@dataclass(frozen=True, kw_only=True)
class ClassWinners:
    unit: str
    metric: str
    baseline: str
    pooled_winner: str | None  # None when the pooled cell is below the minimum cell
    pooled_value: float | None
    pooled_winner_leads: int  # classes passing the minimum cell that the pooled winner leads
    n_classes: int  # named classes that pass the minimum cell and name a leader (of 4)
    distinct_winners: int  # different leaders of those classes
    rows: list[ClassRow]  # every named class present, passing or not
    class_counts: dict[str, int]  # blocks per class, including "undefined"
    cell_ok: bool  # the pooled cell (every block of the unit)
    cell_count: int
    cell_counts: str
    min_cell: int
    cell_reason: str | None
    adi_cutoff: float = ADI_CUTOFF
    cv2_cutoff: float = CV2_CUTOFF


def _leaders(blocks: pd.DataFrame, metric: str) -> tuple[dict[str, float], dict[str, int]]:
    means = {
        str(m): v for m, v in blocks.groupby("model", observed=True)[metric].mean().to_dict().items() if np.isfinite(v)
    }
    return means, ranks(means)


def _scored_blocks(blocks: pd.DataFrame, metric: str) -> int:
    """(series, origin) blocks with a finite value of ``metric`` for some model: what the minimum cell counts."""
    scored = blocks.loc[np.isfinite(blocks[metric].to_numpy(dtype=np.float64)), ["series_id", "origin"]]
    return int(scored.drop_duplicates().shape[0])


def class_winners(
    table: pd.DataFrame | PreparedScores, *, baseline: str, metric: str, min_cell: int, unit: str = "series"
) -> ClassWinners:
    """Top three per demand class and how many classes the pooled winner leads (paper, Table 4).

    .. math:: \\bar M_{m,c} = \\frac{1}{|B_c|}\\sum_{b \\in B_c} M_{mb}

    over the blocks :math:`B_c` of class :math:`c` the model scored; ranks are competition ranks on
    :math:`\\bar M_{m,c}`, ties named by model id. A class (or the pooled cell) with fewer than
    ``min_cell`` scored blocks names no leader (module docstring).

    Parameters
    ----------
    table : DataFrame
        ``ScoreSet.table`` (rows of other units are ignored).
    baseline : str
        The production baseline.
    metric : str
        Block metric (e.g. ``rmsse``).
    min_cell : int
        The minimum cell (WP26 section 6; the benchmark config's ``min_cell``).
    unit : str
        The unit read (default ``series``).

    References
    ----------
    Evaluation-choices paper, section 5, Table 4; Syntetos, Boylan & Croston (2005), JORS 56(5);
    WP26 section 6 (minimum cell).
    """
    scores = prepared(table)[unit]
    require_models(scores, [baseline])
    blocks = scores.blocks((metric,))
    pooled_cell = cell_check(_scored_blocks(blocks, metric), min_cell=min_cell)
    pooled, pooled_rank = _leaders(blocks, metric)
    winner = min(pooled, key=lambda m: (pooled_rank[m], m)) if pooled and pooled_cell.ok else None
    cells = blocks.drop_duplicates(["series_id", "origin"])
    counts = {c: int((cells["demand_class"] == c).sum()) for c in CLASSES}
    out, leads, winners = [], 0, set()
    for c in NAMED_CLASSES:
        sub = blocks[blocks["demand_class"] == c]
        if sub.empty:
            continue
        means, rk = _leaders(sub, metric)
        if not means:
            continue
        check = cell_check(_scored_blocks(sub, metric), min_cell=min_cell)
        order = sorted(means, key=lambda m: (rk[m], m)) if check.ok else []
        if order:
            winners.add(order[0])
            leads += order[0] == winner
        out.append(
            ClassRow(
                demand_class=c,
                n_blocks=int(sub[["series_id", "origin"]].drop_duplicates().shape[0]),
                top=[ClassLeader(m, float(means[m])) for m in order[:3]],
                baseline_rank=rk.get(baseline) if check.ok else None,
                baseline_value=float(means[baseline]) if baseline in means else None,
                n_models=len(means),
                cell_ok=check.ok,
                cell_count=check.count,
                cell_reason=check.reason,
            )
        )
    return ClassWinners(
        unit=unit,
        metric=metric,
        baseline=baseline,
        pooled_winner=winner,
        pooled_value=float(pooled[winner]) if winner is not None else None,
        pooled_winner_leads=int(leads),
        n_classes=sum(r.cell_ok for r in out),
        distinct_winners=len(winners),
        rows=out,
        class_counts=counts,
        cell_ok=pooled_cell.ok,
        cell_count=pooled_cell.count,
        cell_counts=pooled_cell.counts,
        min_cell=int(pooled_cell.min_cell),
        cell_reason=pooled_cell.reason,
    )
