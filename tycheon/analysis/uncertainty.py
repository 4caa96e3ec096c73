r"""Uncertainty on a leaderboard (WP26 section 4.1; evaluation-choices paper, section 4).

For one unit, one demand class and one block metric:

- **paired bootstrap CIs** of each model's mean metric and of its difference to the production
  baseline, with the bootstrap p-value of the difference (one draw for every model). By default
  (``resample="origin"``) the draw is the **panel (time-block) bootstrap**
  (:func:`tycheon.stats.bootstrap.panel_means_bootstraps`): origins drawn in circular blocks of
  :math:`\ell = \lceil h/\text{stride}\rceil` consecutive origins, each drawn origin bringing every
  series' block, the resamples spread about the estimate by the few-groups factor
  :math:`c = \sqrt{G/(G-1)}\,t_{G-1}/z` with :math:`G = \lceil T/\ell\rceil`. *Assumed independent:*
  origins more than :math:`\ell - 1` apart; nothing across series, so a calendar shock shared by every
  series counts once per origin (``tests/test_stats_panel_bootstrap.py`` measures the coverage under a
  common shock). With fewer origins than :func:`tycheon.analysis.cell.time_check` asks for (at least
  :data:`~tycheon.analysis.cell.MIN_TIME_POINTS`) there is no interval, p-value or rank interval, and
  ``interval_reason`` says why; the means and differences are still given.
  ``resample="series"`` (whole series) and ``"block"`` ((series, origin) blocks) are label bootstraps
  (:func:`tycheon.stats.bootstrap.paired_means_bootstraps`) kept as named variants: they **assume series
  independent** and are far too narrow when series share calendar shocks;
- a **ranking bootstrap** on the complete blocks (of the same draw design: panel,
  :func:`tycheon.stats.bootstrap.panel_ranking_bootstrap`, or series,
  :func:`~tycheon.stats.bootstrap.ranking_bootstrap`): how often each model keeps its full-sample place,
  and its rank interval (the :math:`(1-\text{confidence})/2` and :math:`(1+\text{confidence})/2`
  quantiles of its resampled rank);
- **Holm beside BH** on the panel-robust DM p-values against the baseline
  (:func:`tycheon.analysis.prepared.dm_family` with ``test="panel"``, :func:`tycheon.stats.dm.dm_panel`:
  the differential averaged over every (series, step) of an origin, tested over the origins; nothing
  assumed independent across series), on **the table metric's per-step loss** from the metric registry
  (:meth:`tycheon.analysis.prepared.StepLosses.loss`, :func:`tycheon.metrics.aggregate.step_loss`: on a
  MASE table :math:`|e|/s_{\mathrm{MAE}}`, on an RMSSE table :math:`e^2/s^2_{\mathrm{RMSE}}`, on a WAPE
  table :math:`|e|`, on a CRPS table the CRPS of the model's own quantiles), as the leaderboard's DM
  column; no test below ``MIN_TIME_POINTS`` origins (``dm_reason``);
- the **model confidence set** (Hansen, Lunde & Nason 2011) at 10%: the models not distinguishable from
  the best, with each model's MCS p-value, by ``arch.bootstrap.MCS`` (range statistic, stationary
  bootstrap with mean block length = the horizon), on the same per-step loss averaged per target period
  over the (series, step) cells every model scored:

  .. math:: \bar L_{m,t} = \frac{1}{|C_t|}\sum_{(s,k)\in C_t} L_m(s, t, k)

  so a shock shared by all series counts once per period (section 4.1). *Assumed:* the period averages
  are stationary and weakly dependent over time (nothing across series). Not run below
  ``MIN_TIME_POINTS`` origins or on fewer than :math:`2h` periods (``mcs_reason``).

``loss`` records the registry metric whose per-step loss the DM family and the MCS compare.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from tycheon.analysis.cell import time_check
from tycheon.analysis.leaderboard import LeaderboardSpec
from tycheon.analysis.prepared import (
    DMFamily,
    PreparedScores,
    dm_family,
    prepared,
    ranks,
    require_models,
    wide,
)
from tycheon.contract import overlap_lags
from tycheon.errors import InputError
from tycheon.stats.bootstrap import (
    PairedMeans,
    RankingBootstrap,
    paired_means,
    paired_means_bootstraps,
    panel_means_bootstraps,
    panel_ranking_bootstrap,
    ranking_bootstrap,
)
from tycheon.stats.multiplicity import holm

__all__ = ["ModelUncertainty", "Resample", "Uncertainty", "leaderboard_uncertainties", "leaderboard_uncertainty"]

MCS_SIZE = 0.10

Resample = Literal["origin", "series", "block"]
"""The draw of the CIs and the ranking: ``origin`` (panel time blocks, the default), or the label
variants ``series`` and ``block``, which assume series independent."""


@dataclass(frozen=True)
class ModelUncertainty:
    model: str
    mean: float
    mean_low: float | None
    mean_high: float | None
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
    loss: str  # the registry metric whose per-step loss the DM family and the MCS compare
    n_origins: int  # origins with a scored block
    block_length: int  # consecutive origins per resampled run (origin); 1 for the label variants
    interval_reason: str | None  # why there is no interval, p-value or rank interval, else None
    dm_test: str  # the DM family's test (DMTest): "panel"
    dm_reason: str | None  # why no DM test was run, else None
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
    loss: np.ndarray,
    period: np.ndarray,
    models: list[str],
    *,
    horizon: int,
    n_resamples: int,
    seed: int,
) -> tuple[dict[str, float], list[str], int, str | None]:
    """The MCS on the ``[cell, model]`` per-step losses averaged per target period (module docstring)."""
    from arch.bootstrap import (
        MCS,  # a well-kept implementation (Sheppard, arch), not a hand-written one
    )

    ok = np.isfinite(loss).all(axis=1)  # cells every model scored (a zero scale makes a scaled loss NaN)
    if loss.shape[1] < 2 or not ok.any():
        return {}, [], 0, "fewer than two models share a scored cell"
    codes, at = np.unique(period[ok], return_inverse=True)
    count = np.bincount(at, minlength=len(codes)).astype(np.float64)
    series = np.stack(
        [np.bincount(at, weights=loss[ok, j], minlength=len(codes)) / count for j in range(loss.shape[1])], axis=1
    )  # [period, model], periods in time order
    if len(series) < 2 * horizon:
        return {}, [], len(series), f"{len(series)} target periods; the MCS needs at least {2 * horizon}"
    # models with identical period losses (e.g. two methods that coincide on an aggregate) cannot be told
    # apart and make the MCS's variances zero: it runs on one of each, and the others share its outcome
    frame = pd.DataFrame(series, columns=models)
    first_of = {m: next(k for k in models if np.array_equal(frame[k].to_numpy(), frame[m].to_numpy())) for m in models}
    distinct = [m for m in models if first_of[m] == m]
    if len(distinct) < 2:
        return {m: 1.0 for m in models}, list(models), len(series), None
    mcs = MCS(frame[distinct], size=MCS_SIZE, reps=int(n_resamples), block_size=int(horizon), method="R", seed=seed)
    mcs.compute()
    p = {str(k): float(v) for k, v in mcs.pvalues["Pvalue"].items()}
    included = {str(m) for m in mcs.included}
    return {m: p[first_of[m]] for m in models}, [m for m in models if first_of[m] in included], len(series), None


def leaderboard_uncertainty(
    table: pd.DataFrame | PreparedScores,
    *,
    spec: LeaderboardSpec,
    metric: str,
    unit: str = "series",
    n_resamples: int = 2000,
    confidence: float = 0.95,
    resample: Resample = "origin",
    mcs: bool = True,
    demand_class: str = "all",
) -> Uncertainty:
    """Bootstrap CIs, ranking stability, Holm beside BH and the model confidence set for one leaderboard.

    Parameters
    ----------
    table : DataFrame
        ``ScoreSet.table`` (rows of other units are ignored).
    spec : LeaderboardSpec
        Baseline, horizon/stride (the block length and the overlap lags), alpha, the own-quantile
        levels of a ``crps`` table, and the seed of every resampling.
    metric : str
        Block metric of the leaderboard (e.g. ``rmsse``); its per-step loss is the DM family's and the
        MCS's.
    unit : str
        Unit of analysis read.
    n_resamples : int
        Bootstrap resamples :math:`B` (2000 in WP26 4.1), for the CIs, the ranking and the MCS.
    confidence : float
        Level of the CIs and rank intervals (and of the few-groups factor of the panel bootstrap).
    resample : {"origin", "series", "block"}
        ``origin``: the panel bootstrap, circular blocks of :math:`\\lceil h/\\text{stride}\\rceil`
        origins with every series (module docstring). ``series`` / ``block``: whole series, or
        (series, origin) blocks, drawn independently: label variants that assume series independent.
    demand_class : str
        ``all``, or one demand class: the blocks (and per-step losses) classified so at their origin.
    mcs : bool
        Compute the model confidence set.

    References
    ----------
    WP26 section 4.1; evaluation-choices paper, section 4; Politis, D. N. & Romano, J. P. (1992), the
    circular block bootstrap; Bester, Conley & Hansen (2011); Driscoll & Kraay (1998); Hansen, P. R.,
    Lunde, A. & Nason, J. M. (2011). The model confidence set. Econometrica 79(2), 453-497; Holm (1979);
    Benjamini & Hochberg (1995).
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
    resample: Resample = "origin",
    mcs: bool = True,
    demand_class: str = "all",
) -> list[Uncertainty]:
    """:func:`leaderboard_uncertainty` of one (unit, demand class) for each of ``metrics``, in order.

    Each result equals its own :func:`leaderboard_uncertainty` call, value for value: the metrics'
    leaderboards share their blocks, so every metric's bootstrap draws the same origins (or, for the
    label variants, is made from one block draw, :func:`tycheon.stats.bootstrap.paired_means_bootstraps`),
    and the per-step forecasts are laid out once.
    """
    if resample not in ("origin", "series", "block"):
        raise InputError(f"resample must be 'origin', 'series' or 'block', got {resample!r}")
    scores = prepared(table)[unit]
    require_models(scores, [spec.baseline])
    if not metrics:
        return []
    levels = tuple(spec.quantile_levels) if "crps" in metrics else ()
    blocks = scores.blocks(tuple(metrics), quantile_levels=levels)  # every metric's column of the same blocks
    losses = scores.step_losses(quantile_levels=levels)
    if demand_class != "all":  # the class's blocks and per-step losses, selected once for every metric
        blocks = blocks[blocks["demand_class"] == demand_class]
        if blocks.empty:
            raise InputError(f"no blocks of demand class {demand_class!r} in unit {unit!r}")
        losses = losses.where(losses.demand_class == demand_class)
    wides = [wide(blocks, metric) for metric in metrics]  # [(series, origin), model]; one row per block
    origin = wides[0].index.get_level_values("origin").to_numpy()  # the same blocks for every metric
    n_origins = int(pd.unique(origin).size)
    reason = time_check(n_origins, horizon=spec.horizon, stride=spec.stride) if resample == "origin" else None
    boots = _bootstraps(wides, origin, spec=spec, resample=resample, n_resamples=n_resamples,
                        confidence=confidence, refused=reason is not None)  # fmt: skip
    out = []
    for w, boot, metric in zip(wides, boots, metrics, strict=True):
        loss = losses.loss(metric)  # [cell, model], the table's per-step loss
        fam = dm_family(losses, baseline=spec.baseline, horizon=spec.horizon, stride=spec.stride, alpha=spec.alpha,
                        metric=metric, test="panel", loss=loss)  # fmt: skip
        mcs_out: tuple[dict[str, float], list[str], int, str | None] = ({}, [], 0, "not asked")
        if mcs:
            mcs_out = ({}, [], 0, time_check(n_origins, horizon=spec.horizon, stride=spec.stride))
            if mcs_out[3] is None:
                try:
                    mcs_out = _mcs(loss, losses.period, losses.models, horizon=spec.horizon,
                                   n_resamples=n_resamples, seed=spec.seed)  # fmt: skip
                except (ValueError, IndexError, np.linalg.LinAlgError) as err:  # arch refuses degenerate losses
                    mcs_out = ({}, [], 0, f"{type(err).__name__}: {err}")
        del loss
        ranking, rank_reason = _ranking(w, spec=spec, resample=resample, n_resamples=n_resamples,
                                        confidence=confidence, refused=reason)  # fmt: skip
        out.append(
            _uncertainty(
                w, boot, fam, mcs_out, ranking, spec=spec, metric=metric, unit=unit, demand_class=demand_class,
                resample=resample, n_resamples=n_resamples, confidence=confidence, n_origins=n_origins,
                interval_reason=reason or rank_reason,
            )
        )  # fmt: skip
    return out


def _bootstraps(
    wides: list[pd.DataFrame],
    origin: np.ndarray,
    *,
    spec: LeaderboardSpec,
    resample: str,
    n_resamples: int,
    confidence: float,
    refused: bool,
) -> list[PairedMeans]:
    """Every metric's paired means: the panel bootstrap (one draw of origins for all), the estimates alone
    where it is refused, or a label variant (one block draw for all)."""
    base = spec.baseline
    if resample == "origin":
        if refused:
            return [paired_means(w, reference=base) for w in wides]
        return panel_means_bootstraps(wides, origin=origin, horizon=spec.horizon, stride=spec.stride, reference=base,
                                      n_resamples=n_resamples, confidence=confidence, seed=spec.seed)  # fmt: skip
    w = wides[0]
    labels = w.index.get_level_values("series_id").to_numpy() if resample == "series" else np.arange(len(w))
    return paired_means_bootstraps(
        wides, blocks=labels, reference=base, n_resamples=n_resamples, confidence=confidence, seed=spec.seed
    )


def _ranking(
    w: pd.DataFrame, *, spec: LeaderboardSpec, resample: str, n_resamples: int, confidence: float, refused: str | None
) -> tuple[RankingBootstrap | dict[str, int] | None, str | None]:
    """The ranking bootstrap on the complete blocks; the full-sample ranks alone where the panel bootstrap
    is refused (with the reason when only the complete blocks have too few origins); None without two
    models on two complete blocks."""
    complete = w.dropna()
    if len(complete) < 2 or complete.shape[1] < 2:
        return None, None
    if resample != "origin":
        series = complete.index.get_level_values("series_id").to_numpy()
        return ranking_bootstrap(complete, series=series, n_resamples=n_resamples, seed=spec.seed), None
    origin = complete.index.get_level_values("origin").to_numpy()
    why = refused or time_check(int(pd.unique(origin).size), horizon=spec.horizon, stride=spec.stride)
    if why is not None:
        return ranks(complete.mean().to_dict()), None if refused else f"complete blocks: {why}"
    rb = panel_ranking_bootstrap(complete, origin=origin, horizon=spec.horizon, stride=spec.stride,
                                 n_resamples=n_resamples, confidence=confidence, seed=spec.seed)  # fmt: skip
    return rb, None


def _uncertainty(
    w: pd.DataFrame,
    boot: PairedMeans,
    fam: DMFamily,
    mcs_out: tuple[dict[str, float], list[str], int, str | None],
    ranking: RankingBootstrap | dict[str, int] | None,
    *,
    spec: LeaderboardSpec,
    metric: str,
    unit: str,
    demand_class: str,
    resample: str,
    n_resamples: int,
    confidence: float,
    n_origins: int,
    interval_reason: str | None,
) -> Uncertainty:
    """One metric's table from its block scores ``w``, its bootstrap, DM family, MCS and ranking."""
    rank: dict[str, int] = {}
    keep = interval = None
    if isinstance(ranking, RankingBootstrap):
        rank = {str(m): int(r) for m, r in ranking.rank.items()}
        keep, interval = ranking.keep_fraction, _rank_interval(ranking.rank_counts, confidence)
    elif ranking is not None:
        rank = ranking
    tested = list(fam.p_value)
    p_holm = dict(zip(tested, holm([fam.p_value[m] for m in tested]), strict=True)) if tested else {}
    mcs_p, included, n_periods, mcs_reason = mcs_out
    out = []
    for j, m in enumerate(boot.columns):
        base = m == spec.baseline
        out.append(ModelUncertainty(
            model=m, mean=float(boot.mean[j]), mean_low=_none(boot.mean_low[j]), mean_high=_none(boot.mean_high[j]),
            delta=None if base else _none(boot.delta[j]), delta_low=None if base else _none(boot.delta_low[j]),
            delta_high=None if base else _none(boot.delta_high[j]), delta_p=None if base else _none(boot.p_value[j]),
            rank=rank.get(m), keep_fraction=None if keep is None else float(keep[m]),
            rank_low=None if interval is None else interval[m][0],
            rank_high=None if interval is None else interval[m][1],
            dm_p=fam.p_value.get(m), dm_p_bh=fam.p_bh.get(m), dm_p_holm=_none(p_holm[m]) if m in p_holm else None,
            mcs_p=mcs_p.get(m), in_mcs=(m in included) if mcs_p else None,
        ))  # fmt: skip
    out.sort(key=lambda r: (r.mean, r.model))
    return Uncertainty(
        unit=unit,
        demand_class=demand_class,
        metric=metric,
        baseline=spec.baseline,
        resample=resample,
        n_resamples=int(n_resamples),
        confidence=confidence,
        n_blocks=len(w),
        n_complete_blocks=int(w.notna().all(axis=1).sum()),
        mcs_size=MCS_SIZE,
        mcs_n_periods=n_periods,
        mcs_reason=mcs_reason,
        loss=metric,
        n_origins=n_origins,
        block_length=overlap_lags(spec.horizon, spec.stride) + 1 if resample == "origin" else 1,
        interval_reason=interval_reason,
        dm_test=fam.test,
        dm_reason=fam.reason,
        rows=out,
    )
