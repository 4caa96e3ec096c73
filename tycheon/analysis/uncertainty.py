"""Uncertainty on a leaderboard (WP26 section 4.1; evaluation-choices paper, section 4).

For one unit and one block metric:

- **paired block-bootstrap CIs** of each model's mean metric and of its difference to the production
  baseline (one draw of blocks for every model, :func:`tycheon.stats.bootstrap.paired_means_bootstrap`;
  blocks are the (series, origin) blocks, or whole series with ``resample="series"``), with the bootstrap
  p-value of the difference;
- a **series-level ranking bootstrap** (:func:`tycheon.stats.bootstrap.ranking_bootstrap`, on the complete
  blocks): how often each model keeps its full-sample place, and its 95% rank interval (the 2.5% and
  97.5% quantiles of its resampled rank);
- **Holm beside BH** on the pooled DM p-values against the baseline (per-step absolute errors, as the
  leaderboard; :func:`tycheon.stats.multiplicity.holm`, :func:`~tycheon.stats.multiplicity.benjamini_hochberg`);
- the **model confidence set** (Hansen, Lunde & Nason 2011) at 10%: the models not distinguishable from
  the best, with each model's MCS p-value, by ``arch.bootstrap.MCS`` (range statistic, stationary
  bootstrap with mean block length = the horizon). Its losses are a time series: per target period, the
  mean per-step scaled loss over the (series, step) cells every model scored, so a shock shared by all
  series counts once per period (section 4.1): :math:`e^2_{s,t} / s^2_{\\mathrm{RMSE},s}` (the loss RMSSE
  is built from) for ``rmsse``, :math:`|e_{s,t}| / s_{\\mathrm{MAE},s}` for any other metric.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from tycheon.analysis.leaderboard import LeaderboardSpec
from tycheon.analysis.prepared import (
    DMFamily,
    PreparedScores,
    StepLosses,
    dm_family,
    prepared,
    require_models,
    wide,
)
from tycheon.errors import InputError
from tycheon.stats.bootstrap import PairedMeans, paired_means_bootstraps, ranking_bootstrap
from tycheon.stats.multiplicity import holm

__all__ = ["ModelUncertainty", "Uncertainty", "leaderboard_uncertainties", "leaderboard_uncertainty"]

MCS_SIZE = 0.10


@dataclass(frozen=True)
class ModelUncertainty:
    model: str
    mean: float
    mean_low: float
    mean_high: float
    delta: float | None  # mean(model - baseline) on the blocks both scored; None for the baseline
    delta_low: float | None
    delta_high: float | None
    delta_p: float | None
    rank: int | None  # full-sample rank on the complete blocks
    keep_fraction: float | None
    rank_low: int | None
    rank_high: int | None
    dm_p: float | None
    dm_p_bh: float | None
    dm_p_holm: float | None
    mcs_p: float | None
    in_mcs: bool | None


@dataclass(frozen=True)
class Uncertainty:
    unit: str
    demand_class: str
    metric: str
    baseline: str
    resample: str
    n_resamples: int
    confidence: float
    n_blocks: int
    n_complete_blocks: int
    mcs_size: float
    mcs_n_periods: int
    mcs_reason: str | None  # why there is no MCS, else None
    rows: list[ModelUncertainty]


def _none(x: float) -> float | None:
    return float(x) if x is not None and np.isfinite(x) else None


def _rank_interval(counts: pd.DataFrame, confidence: float) -> dict[str, tuple[int, int]]:
    """Per model, the lower and upper ``(1 - confidence) / 2`` quantiles of its resampled rank."""
    tail = (1.0 - confidence) / 2.0
    out = {}
    for m, row in counts.iterrows():
        cum = row.cumsum().to_numpy() / row.sum()
        ks = row.index.to_numpy(dtype=np.int64)
        lo = int(np.searchsorted(cum, tail, side="right"))
        hi = min(int(np.searchsorted(cum, 1.0 - tail, side="left")), len(ks) - 1)
        out[str(m)] = (int(ks[lo]), int(ks[hi]))
    return out


def _mcs(
    losses: StepLosses, *, metric: str, horizon: int, n_resamples: int, seed: int
) -> tuple[dict[str, float], list[str], int, str | None]:
    from arch.bootstrap import (
        MCS,  # a well-kept implementation (Sheppard, arch), not a hand-written one
    )

    squared = metric == "rmsse"
    scale = losses.scale_rmse if squared else losses.scale_mae  # [cell]
    ok = (scale > 0) & np.isfinite(losses.loss).all(axis=1)  # cells every model scored
    if losses.loss.shape[1] < 2 or not ok.any():
        return {}, [], 0, "fewer than two models share a scored cell"
    err = losses.loss[ok] / scale[ok, None]  # [cell, model]
    loss = err * err if squared else err
    codes, period = np.unique(losses.period[ok], return_inverse=True)
    count = np.bincount(period, minlength=len(codes)).astype(np.float64)
    series = np.stack(
        [np.bincount(period, weights=loss[:, j], minlength=len(codes)) / count for j in range(loss.shape[1])], axis=1
    )  # [period, model], periods in time order
    if len(series) < 2 * horizon:
        return {}, [], len(series), f"{len(series)} target periods; the MCS needs at least {2 * horizon}"
    # models with identical period losses (e.g. two methods that coincide on an aggregate) cannot be told
    # apart and make the MCS's variances zero: it runs on one of each, and the others share its outcome
    frame = pd.DataFrame(series, columns=losses.models)
    first_of = {
        m: next(k for k in losses.models if np.array_equal(frame[k].to_numpy(), frame[m].to_numpy()))
        for m in losses.models
    }
    distinct = [m for m in losses.models if first_of[m] == m]
    if len(distinct) < 2:
        return {m: 1.0 for m in losses.models}, list(losses.models), len(series), None
    mcs = MCS(frame[distinct], size=MCS_SIZE, reps=int(n_resamples), block_size=int(horizon), method="R", seed=seed)
    mcs.compute()
    p = {str(k): float(v) for k, v in mcs.pvalues["Pvalue"].items()}
    included = {str(m) for m in mcs.included}
    return (
        {m: p[first_of[m]] for m in losses.models},
        [m for m in losses.models if first_of[m] in included],
        len(series),
        None,
    )


def leaderboard_uncertainty(
    table: pd.DataFrame | PreparedScores,
    *,
    spec: LeaderboardSpec,
    metric: str,
    unit: str = "series",
    n_resamples: int = 2000,
    confidence: float = 0.95,
    resample: Literal["block", "series", "origin"] = "block",
    mcs: bool = True,
    demand_class: str = "all",
) -> Uncertainty:
    """Bootstrap CIs, ranking stability, Holm beside BH and the model confidence set for one leaderboard.

    Parameters
    ----------
    table : DataFrame
        ``ScoreSet.table`` (rows of other units are ignored).
    spec : LeaderboardSpec
        Baseline, horizon/stride, alpha and the seed of every resampling.
    metric : str
        Block metric of the leaderboard (e.g. ``rmsse``).
    unit : str
        Unit of analysis read.
    n_resamples : int
        Bootstrap resamples :math:`B` (2000 in WP26 4.1), for the CIs, the ranking and the MCS.
    resample : {"block", "series", "origin"}
        Resampling block of the CIs: (series, origin) blocks, whole series with all their origins, or
        calendar blocks (every series at one origin, so a shock shared by all series is resampled whole).
    demand_class : str
        ``all``, or one demand class: the blocks (and per-step losses) classified so at their origin.
    mcs : bool
        Compute the model confidence set.

    References
    ----------
    WP26 section 4.1; evaluation-choices paper, section 4; Hansen, P. R., Lunde, A. & Nason, J. M. (2011).
    The model confidence set. Econometrica 79(2), 453-497; Holm (1979); Benjamini & Hochberg (1995).
    """
    return leaderboard_uncertainties(
        table,
        spec=spec,
        metrics=(metric,),
        unit=unit,
        n_resamples=n_resamples,
        confidence=confidence,
        resample=resample,
        mcs=mcs,
        demand_class=demand_class,
    )[0]


def leaderboard_uncertainties(
    table: pd.DataFrame | PreparedScores,
    *,
    spec: LeaderboardSpec,
    metrics: Sequence[str],
    unit: str = "series",
    n_resamples: int = 2000,
    confidence: float = 0.95,
    resample: Literal["block", "series", "origin"] = "block",
    mcs: bool = True,
    demand_class: str = "all",
) -> list[Uncertainty]:
    """:func:`leaderboard_uncertainty` of one (unit, demand class) for each of ``metrics``, in order.

    Each result equals its own :func:`leaderboard_uncertainty` call, value for value: the metrics'
    leaderboards share their blocks, so the paired bootstrap of every metric whose resampling labels are
    the same is made from one block draw (:func:`tycheon.stats.bootstrap.paired_means_bootstraps`, the
    draws a call of its own would make), and the DM family, which does not depend on the metric, is
    computed once.
    """
    if resample not in ("block", "series", "origin"):
        raise InputError(f"resample must be 'block', 'series' or 'origin', got {resample!r}")
    scores = prepared(table)[unit]
    require_models(scores, [spec.baseline])
    if not metrics:
        return []
    blocks = scores.blocks(tuple(metrics))  # every metric's column of the same (cached) blocks
    losses = scores.step_losses()
    if demand_class != "all":  # the class's blocks and per-step losses, selected once for every metric
        blocks = blocks[blocks["demand_class"] == demand_class]
        if blocks.empty:
            raise InputError(f"no blocks of demand class {demand_class!r} in unit {unit!r}")
        losses = losses.where(losses.demand_class == demand_class)
    wides, labels = [], []
    for metric in metrics:
        w = wide(blocks, metric)  # [(series, origin), model]; each row is one (series, origin) block
        wides.append(w)
        if resample == "series":
            labels.append(w.index.get_level_values("series_id").to_numpy())
        elif resample == "origin":
            labels.append(w.index.get_level_values("origin").to_numpy())
        else:
            labels.append(np.arange(len(w)))
    boots: dict[int, PairedMeans] = {}
    for i in range(len(wides)):
        if i in boots:
            continue
        same = [j for j in range(i, len(wides)) if j not in boots and np.array_equal(labels[j], labels[i])]
        shared = paired_means_bootstraps(
            [wides[j] for j in same],
            blocks=labels[i],
            reference=spec.baseline,
            n_resamples=n_resamples,
            confidence=confidence,
            seed=spec.seed,
        )
        boots.update(zip(same, shared, strict=True))
    fam = dm_family(losses, baseline=spec.baseline, horizon=spec.horizon, stride=spec.stride, alpha=spec.alpha)
    return [
        _uncertainty(
            wides[i],
            boots[i],
            fam,
            losses,
            spec=spec,
            metric=metric,
            unit=unit,
            demand_class=demand_class,
            resample=resample,
            n_resamples=n_resamples,
            confidence=confidence,
            mcs=mcs,
        )
        for i, metric in enumerate(metrics)
    ]


def _uncertainty(
    w: pd.DataFrame,
    boot: PairedMeans,
    fam: DMFamily,
    losses: StepLosses,
    *,
    spec: LeaderboardSpec,
    metric: str,
    unit: str,
    demand_class: str,
    resample: str,
    n_resamples: int,
    confidence: float,
    mcs: bool,
) -> Uncertainty:
    """One metric's uncertainty from its block scores ``w``, its bootstrap and the DM family."""
    complete = w.dropna()
    rank = keep = interval = None
    if len(complete) >= 2 and complete.shape[1] >= 2:
        rb = ranking_bootstrap(
            complete,
            series=complete.index.get_level_values("series_id").to_numpy(),
            n_resamples=n_resamples,
            seed=spec.seed,
        )
        rank, keep, interval = rb.rank, rb.keep_fraction, _rank_interval(rb.rank_counts, confidence)
    tested = list(fam.p_value)
    p_holm = dict(zip(tested, holm([fam.p_value[m] for m in tested]), strict=True)) if tested else {}
    mcs_p: dict[str, float] = {}
    included: list[str] = []
    n_periods = 0
    reason: str | None = "not asked"
    if mcs:
        try:
            mcs_p, included, n_periods, reason = _mcs(
                losses, metric=metric, horizon=spec.horizon, n_resamples=n_resamples, seed=spec.seed
            )
        except (ValueError, IndexError, np.linalg.LinAlgError) as err:  # arch refuses degenerate losses
            reason = f"{type(err).__name__}: {err}"
    out = []
    for j, m in enumerate(boot.columns):
        base = m == spec.baseline
        out.append(ModelUncertainty(
            model=m, mean=float(boot.mean[j]), mean_low=float(boot.mean_low[j]), mean_high=float(boot.mean_high[j]),
            delta=None if base else _none(boot.delta[j]), delta_low=None if base else _none(boot.delta_low[j]),
            delta_high=None if base else _none(boot.delta_high[j]), delta_p=None if base else _none(boot.p_value[j]),
            rank=None if rank is None else int(rank[m]), keep_fraction=None if keep is None else float(keep[m]),
            rank_low=None if interval is None else interval[m][0],
            rank_high=None if interval is None else interval[m][1],
            dm_p=fam.p_value.get(m), dm_p_bh=fam.p_bh.get(m), dm_p_holm=_none(p_holm[m]) if m in p_holm else None,
            mcs_p=mcs_p.get(m), in_mcs=(m in included) if mcs_p else None,
        ))  # fmt: skip
    out.sort(key=lambda r: (r.mean, r.model))
    return Uncertainty(
        unit,
        demand_class,
        metric,
        spec.baseline,
        resample,
        int(n_resamples),
        confidence,
        len(w),
        len(complete),
        MCS_SIZE,
        n_periods,
        reason,
        out,
    )
