"""Winner per demand class (evaluation-choices paper, section 5, Table 4).

Blocks are classified at every origin from that origin's training window alone (the engine records the
class; ADI cut-off :data:`tycheon.data.demand.ADI_CUTOFF` = 1.32, CV² cut-off
:data:`~tycheon.data.demand.CV2_CUTOFF` = 0.49, Syntetos, Boylan & Croston 2005). Per class: the blocks
scored, the three best models by mean block metric with their values, and the production baseline's
rank and value; overall, the pooled winner (best mean over all blocks) and how many of the four classes
it leads ("the pooled winner leads k of 4 classes").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tycheon.analysis.prepared import PreparedScores, prepared, ranks, require_models
from tycheon.data.demand import ADI_CUTOFF, CLASSES, CV2_CUTOFF

__all__ = ["NAMED_CLASSES", "ClassLeader", "ClassRow", "ClassWinners", "class_winners"]

NAMED_CLASSES = CLASSES[:4]


@dataclass(frozen=True)
class ClassLeader:
    model: str
    value: float  # mean block metric in the class


@dataclass(frozen=True)
class ClassRow:
    demand_class: str
    n_blocks: int
    top: list[ClassLeader]  # best first, up to three
    baseline_rank: int | None
    baseline_value: float | None
    n_models: int


@dataclass(frozen=True)
class ClassWinners:
    unit: str
    metric: str
    baseline: str
    pooled_winner: str
    pooled_value: float
    pooled_winner_leads: int  # classes (of those present) the pooled winner leads
    n_classes: int  # named classes present (of 4)
    distinct_winners: int
    rows: list[ClassRow]
    class_counts: dict[str, int]  # blocks per class, including "undefined"
    adi_cutoff: float = ADI_CUTOFF
    cv2_cutoff: float = CV2_CUTOFF


def _leaders(blocks: pd.DataFrame, metric: str) -> tuple[dict[str, float], dict[str, int]]:
    means = {
        str(m): v for m, v in blocks.groupby("model", observed=True)[metric].mean().to_dict().items() if np.isfinite(v)
    }
    return means, ranks(means)


def class_winners(
    table: pd.DataFrame | PreparedScores, *, baseline: str, metric: str, unit: str = "series"
) -> ClassWinners:
    """Top three per demand class and how many classes the pooled winner leads (paper, Table 4).

    .. math:: \\bar M_{m,c} = \\frac{1}{|B_c|}\\sum_{b \\in B_c} M_{mb}

    over the blocks :math:`B_c` of class :math:`c` the model scored; ranks are competition ranks on
    :math:`\\bar M_{m,c}`, ties named by model id.

    Parameters
    ----------
    table : DataFrame
        ``ScoreSet.table`` (rows of other units are ignored).
    baseline : str
        The production baseline.
    metric : str
        Block metric (e.g. ``rmsse``).
    unit : str
        The unit read (default ``series``).

    References
    ----------
    Evaluation-choices paper, section 5, Table 4; Syntetos, Boylan & Croston (2005), JORS 56(5).
    """
    scores = prepared(table)[unit]
    require_models(scores, [baseline])
    blocks = scores.blocks((metric,))
    pooled, pooled_rank = _leaders(blocks, metric)
    winner = min(pooled, key=lambda m: (pooled_rank[m], m))
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
        order = sorted(means, key=lambda m: (rk[m], m))
        winners.add(order[0])
        leads += order[0] == winner
        out.append(
            ClassRow(
                c,
                int(sub[["series_id", "origin"]].drop_duplicates().shape[0]),
                [ClassLeader(m, float(means[m])) for m in order[:3]],
                rk.get(baseline),
                float(means[baseline]) if baseline in means else None,
                len(means),
            )
        )
    return ClassWinners(
        unit, metric, baseline, winner, float(pooled[winner]), int(leads), len(out), len(winners), out, counts
    )
