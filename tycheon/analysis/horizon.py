"""Horizon robustness (evaluation-choices paper, section 3: the twelve-month check): does the ranking
hold from short to long horizon steps?

Per horizon step :math:`h`, each model's mean per-step scaled error
(:func:`tycheon.metrics.aggregate.step_scores`: :math:`|e_h| / s_{\\mathrm{MAE}}` for ``mase``,
:math:`|e_h| / s_{\\mathrm{RMSE}}` for ``rmsse``; any of
:data:`tycheon.metrics.registry.SCALED_STEP_LOSSES`) ranks the models; the short half of the horizon
(steps :math:`1..\\lfloor H/2 \\rfloor`) and the long half (the rest) give two rankings on the mean over
their steps, compared by Spearman's :math:`\\rho` (:func:`tycheon.stats.ranking.spearman_test`), with the
largest move of any model between them (the paper's "no method moves more than three places").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tycheon.analysis.prepared import PreparedScores, prepared, ranks
from tycheon.errors import InputError
from tycheon.metrics.aggregate import step_scores
from tycheon.metrics.registry import SCALED_STEP_LOSSES
from tycheon.stats.ranking import spearman_test

__all__ = ["HorizonRobustness", "horizon_robustness"]


@dataclass(frozen=True)
class HorizonRobustness:
    unit: str
    metric: str
    steps: list[int]
    rank_by_step: dict[str, list[int]]  # model -> rank at each step of ``steps``
    short_steps: list[int]
    long_steps: list[int]
    rank_short: dict[str, int]
    rank_long: dict[str, int]
    spearman: float | None
    spearman_p: float | None
    max_move: int
    max_move_model: str | None


def horizon_robustness(
    table: pd.DataFrame | PreparedScores, *, metric: str = "mase", unit: str = "series"
) -> HorizonRobustness:
    """Ranks at each horizon step, and short-half vs long-half rank agreement.

    .. math:: \\bar M_{m,h} = \\frac{1}{|B_h|}\\sum_{b \\in B_h} \\frac{|e_{b,h}|}{s_b}, \\qquad
        \\bar M_{m,S} = \\frac{1}{|S|}\\sum_{h \\in S} \\bar M_{m,h}

    Parameters
    ----------
    table : DataFrame
        ``ScoreSet.table`` (rows of other units are ignored).
    metric : str
        A point loss with a per-step value and a scale column
        (:data:`tycheon.metrics.registry.SCALED_STEP_LOSSES`).
    unit : str

    References
    ----------
    Evaluation-choices paper, section 3 (horizon check: Spearman 0.98, largest move three places).
    """
    if metric not in SCALED_STEP_LOSSES:
        raise InputError(f"metric must be one of {list(SCALED_STEP_LOSSES)} (per-step scaled errors), got {metric!r}")
    # one model at a time
    parts = [step_scores(g, by=("model",), metrics=(metric,)) for _, g in prepared(table)[unit].by_model()]
    per_step = pd.concat(parts).pivot(index="model", columns="step", values=f"{metric}_mean")
    per_step = per_step.dropna()  # models with a value at every step
    steps = [int(h) for h in per_step.columns]
    if len(steps) < 2 or len(per_step) < 2:
        raise InputError(
            f"need two steps and two models scored at every step; got {len(steps)} step(s), {len(per_step)} model(s)"
        )
    by_step = {h: ranks(per_step[h].to_dict()) for h in steps}
    models = sorted(per_step.index)
    half = len(steps) // 2
    short, long = steps[:half], steps[half:]
    r_short = ranks(per_step[short].mean(axis=1).to_dict())
    r_long = ranks(per_step[long].mean(axis=1).to_dict())
    rho, p = spearman_test([r_short[m] for m in models], [r_long[m] for m in models])
    moves = {m: abs(r_short[m] - r_long[m]) for m in models}
    worst = max(models, key=lambda m: (moves[m], m)) if models else None
    return HorizonRobustness(
        unit,
        metric,
        steps,
        {m: [by_step[h][m] for h in steps] for m in models},
        short,
        long,
        r_short,
        r_long,
        None if not np.isfinite(rho) else float(rho),
        None if not np.isfinite(p) else float(p),
        int(moves[worst]) if worst else 0,
        worst if worst and moves[worst] > 0 else None,
    )
