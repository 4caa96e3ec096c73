"""The tests of a leaderboard table: Diebold-Mariano against the production baseline, the verdict against
the random walk, and Friedman/Nemenyi over the block scores.

Every test reads the cell's per-step losses on its step grid (:mod:`tycheon.analysis._stepgrid`); the
module docstring of :mod:`tycheon.analysis.leaderboard` says what each published column means.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from tycheon._typing import Alternative
from tycheon.analysis._stepgrid import _band_crps, _Losses, _pivot, _pivot_loss, _StepGrid
from tycheon.analysis.blockgrid import block_grid
from tycheon.analysis.cell import time_check
from tycheon.errors import InputError
from tycheon.metrics.aggregate import row_scales
from tycheon.stats.dm import DMResult, dm_panel, dm_pooled
from tycheon.stats.friedman import conservative_cd, friedman_nemenyi
from tycheon.stats.multiplicity import benjamini_hochberg
from tycheon.stats.verdict import family_verdicts

if TYPE_CHECKING:
    from tycheon.analysis.leaderboard import LeaderboardSpec

Inference = Literal["panel", "pooled"]
"""``panel``: :func:`tycheon.stats.dm.dm_panel` (the default, robust to shocks shared across series);
``pooled``: :func:`tycheon.stats.dm.dm_pooled` (the named variant that assumes series independent)."""

INFERENCE_TEXT = (
    "panel-robust DM: the per-step loss differential averaged over the series and steps of each origin, the "
    "origin averages tested over time (HLN, overlap lags ceil(h/stride)-1, t with ceil(T/(L+1))-1 degrees of "
    "freedom); assumes nothing independent across series, only origin averages more than L origins apart "
    "uncorrelated (Driscoll & Kraay 1998; evaluation-choices paper, section 4.1)"
)
POOLED_TEXT = (
    "series-independent pooled DM: per-step losses pooled over series, dependence allowed within a series only; "
    "assumes different series independent, which a calendar shock shared by the series contradicts"
)


def _dm(
    losses: _Losses, a: str, b: str, *, spec: LeaderboardSpec, alternative: Alternative, inference: Inference = "panel"
) -> tuple[DMResult | None, str | None]:
    """DM test of model ``a`` against ``b`` on the keys where both have a loss; or None and why (each
    test once per loss grid: the spec's horizon and stride are those of the whole table)."""
    key = (a, b, alternative, inference)
    if key not in losses.tested:
        losses.tested[key] = _dm_once(losses, a, b, spec=spec, alternative=alternative, inference=inference)
    return losses.tested[key]


def _dm_once(
    losses: _Losses, a: str, b: str, *, spec: LeaderboardSpec, alternative: Alternative, inference: Inference
) -> tuple[DMResult | None, str | None]:
    absent = [m for m in (a, b) if m not in losses.present]
    if absent:
        return None, f"no losses for {' and '.join(absent)}"
    ja, jb = losses.present[a], losses.present[b]
    la, lb = losses.values[:, ja], losses.values[:, jb]
    both = losses.finite[:, ja] & losses.finite[:, jb]  # [key], in key order
    if not both.any():
        return None, f"{a} and {b} share no scored rows"
    if not both.all():  # a pair that shares every key (the usual case) is tested on the columns themselves
        la, lb = la[both], lb[both]
    try:
        if inference == "pooled":
            return dm_pooled(
                la,
                lb,
                layout=losses.grid.layout(both),
                horizon=spec.horizon,
                stride=spec.stride,
                alternative=alternative,
            ), None
        panel, n_time = losses.grid.panel(both)
        too_few = time_check(n_time, horizon=spec.horizon, stride=spec.stride)
        if too_few:
            return None, too_few
        return dm_panel(la, lb, layout=panel, horizon=spec.horizon, stride=spec.stride, alternative=alternative), None
    except InputError as err:
        return None, str(err)


def _p_less(
    losses: _Losses, model: str, spec: LeaderboardSpec, inference: Inference
) -> tuple[float | None, str | None]:
    res, why = _dm(losses, model, spec.random_walk, spec=spec, alternative="less", inference=inference)
    return (None, why) if res is None else (res.p_value, None)


def _legs_p_less(
    losses: _Losses, models: list[str], spec: LeaderboardSpec, inference: Inference
) -> dict[str, tuple[float | None, str | None]]:
    """:func:`_p_less` on one leg's grid for every model but the random walk."""
    return {m: _p_less(losses, m, spec, inference) for m in models if m != spec.random_walk}


_VERDICT_FIELDS = (
    "verdict_vs_rw",
    "verdict_p_se",
    "verdict_p_crps",
    "verdict_p_se_adj",
    "verdict_p_crps_adj",
    "verdict_reason",
)


def _verdicts(
    point_p: dict[str, tuple[float | None, str | None]],
    crps_p: dict[str, tuple[float | None, str | None]],
    models: list[str],
    spec: LeaderboardSpec,
    *,
    suffix: str = "",
) -> dict[str, dict[str, Any]]:
    """ADR-0006 decision 6 for every model of a cell: the one-sided DM p-values of the point leg
    (``point_p``) and the CRPS leg (``crps_p``, both from :func:`_legs_p_less`), the family adjustment
    and the rule (:func:`tycheon.stats.verdict.family_verdicts`)."""
    out: dict[str, dict[str, Any]] = {m: dict.fromkeys((f + suffix for f in _VERDICT_FIELDS), None) for m in models}
    p_se: dict[str, float] = {}
    p_crps: dict[str, float] = {}
    for m in models:
        if m == spec.random_walk:
            out[m]["verdict_reason" + suffix] = "is the random walk"
            continue
        (pse, why_se), (pcr, why_cr) = point_p[m], crps_p[m]
        out[m]["verdict_p_se" + suffix], out[m]["verdict_p_crps" + suffix] = pse, pcr
        reasons = ([] if pse is not None else [f"point-loss DM: {why_se}"]) + (
            [] if pcr is not None else [f"CRPS DM: {why_cr}"]
        )
        if reasons:
            out[m]["verdict_reason" + suffix] = "; ".join(reasons)
            continue
        p_se[m], p_crps[m] = float(pse), float(pcr)  # type: ignore[arg-type]  # both checked above
    for m, v in family_verdicts(p_se, p_crps, alpha=spec.alpha, adjust=spec.verdict_adjust).items():
        out[m].update(
            {
                "verdict_vs_rw" + suffix: v.verdict,
                "verdict_p_se_adj" + suffix: v.p_se_adj,
                "verdict_p_crps_adj" + suffix: v.p_crps_adj,
            }
        )
    return out


def _dm_column(
    losses: _Losses, family: list[str], spec: LeaderboardSpec, inference: Inference = "panel"
) -> dict[str, dict[str, Any]]:
    """Two-sided DM of each family model against the production baseline, BH-adjusted."""
    runs = {m: _dm(losses, m, spec.baseline, spec=spec, alternative="two-sided", inference=inference) for m in family}
    tested = [m for m, (res, _) in runs.items() if res is not None and np.isfinite(res.p_value)]
    p_bh = dict(zip(tested, benjamini_hochberg([runs[m][0].p_value for m in tested]), strict=True))  # type: ignore[union-attr]
    out = {}
    for m, (res, why) in runs.items():
        adj = p_bh.get(m)
        direction = None if res is None else "none"  # "none": tested, not significant; None: not tested
        if adj is not None and adj < spec.alpha and res is not None:
            direction = "better" if res.statistic < 0 else "worse"
        out[m] = {
            "stat": None if res is None else res.statistic,
            "p": None if res is None else res.p_value,
            "p_bh": None if adj is None else float(adj),
            "direction": direction,
            "reason": why,
        }
    return out


def _wide(blocks: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Block scores ``[(series, origin), model]``. dropna (the default) keeps only blocks that exist;
    dropna=False would add every (series, origin) combination, counting blocks never forecast as dropped.

    The frame of ``pivot_table(index=["series_id", "origin"], columns="model", values=metric,
    aggfunc="first", observed=True)``, by one scatter where it can be (:func:`.blockgrid.block_grid`; the
    group-by was a large share of a table set's time at M5 size), else by that ``pivot_table``."""
    wide = block_grid(blocks, metric, categorical=True)
    if wide is not None:
        return wide
    return blocks.pivot_table(
        index=["series_id", "origin"], columns="model", values=metric, aggfunc="first", observed=True
    )


def _friedman(wide: pd.DataFrame, models: list[str], spec: LeaderboardSpec) -> dict[str, Any]:
    """Friedman/Nemenyi and the conservative CD over the block scores ``wide`` of ``models``."""
    wide = wide.reindex(columns=models)
    n_total = len(wide)
    out: dict[str, Any] = {
        "friedman_statistic": None,
        "friedman_p": None,
        "nemenyi_cd": None,
        "conservative_cd": None,
        "n_blocks": 0,
        "dropped_blocks": n_total,
        "n_models": len(models),
        "alpha": spec.alpha,
        "mean_ranks": {},
        "friedman_reason": None,
        "conservative_cd_reason": None,
    }
    if len(models) < 2:
        out["friedman_reason"] = out["conservative_cd_reason"] = "fewer than two models scored"
        return out
    try:
        res = friedman_nemenyi(wide, alpha=spec.alpha)
    except InputError as err:
        out["friedman_reason"] = out["conservative_cd_reason"] = str(err)
        return out
    out.update(
        friedman_statistic=res.statistic,
        friedman_p=res.p_value,
        nemenyi_cd=res.critical_difference,
        n_blocks=res.n_blocks,
        dropped_blocks=res.n_dropped,
        mean_ranks=res.mean_ranks.to_dict(),
    )
    try:
        cons = conservative_cd(
            wide, series=wide.index.get_level_values("series_id").to_numpy(), seed=spec.seed, alpha=spec.alpha
        )
        out["conservative_cd"] = cons.critical_difference
    except InputError as err:
        out["conservative_cd_reason"] = str(err)
    return out


VERDICT_POINT_LOSS = "squared error / RMSSE scale squared"
"""The verdict's point leg, one for every metric table (ADR-0006 decision 6: squared error, scaled as
RMSSE scales it so that every series weighs alike)."""


def _cell_verdicts(
    table: pd.DataFrame, grid: _StepGrid, models: list[str], spec: LeaderboardSpec, band_level: int, reason: str | None
) -> dict[str, dict[str, Any]]:
    """The one verdict of every model of a (unit, demand class) cell, with its variants.

    Legs: squared error / RMSSE scale squared and the band CRPS / MASE scale, each tested one-sided
    against the random walk with :func:`tycheon.stats.dm.dm_panel`, adjusted within the cell's family
    (``spec.verdict_adjust``). ``_pooled``: the same legs by the series-independent
    :func:`tycheon.stats.dm.dm_pooled` (a named variant, never the headline); ``_unscaled``: unscaled
    squared error and CRPS (the paper's variant), panel-robust. ``reason`` (the minimum cell's) voids all.
    The grids are built one at a time and released after their tests."""
    suffixes = ("", "_pooled", "_unscaled")
    if reason is not None:
        fields = [f"{f}{x}" for x in suffixes for f in _VERDICT_FIELDS]
        return {m: dict.fromkeys(fields) | {f"verdict_reason{x}": reason for x in suffixes} for m in models}
    band_crps = _band_crps(table, band_level).to_numpy()
    legs: dict[str, dict[str, tuple[float | None, str | None]]] = {}
    crps = _pivot(grid, band_crps)
    legs["crps_unscaled"] = _legs_p_less(crps, models, spec, "panel")
    del crps
    np.divide(band_crps, row_scales(table, columns=("scale_mae",))["scale_mae"], out=band_crps)
    crps = _pivot(grid, band_crps)
    del band_crps
    legs["crps"] = _legs_p_less(crps, models, spec, "panel")
    legs["crps_pooled"] = _legs_p_less(crps, models, spec, "pooled")
    del crps
    se = _pivot_loss(grid, table, "rmsse")
    legs["se"] = _legs_p_less(se, models, spec, "panel")
    legs["se_pooled"] = _legs_p_less(se, models, spec, "pooled")
    del se
    se = _pivot_loss(grid, table, "rmse")
    legs["se_unscaled"] = _legs_p_less(se, models, spec, "panel")
    del se
    out: dict[str, dict[str, Any]] = {m: {} for m in models}
    for x in suffixes:
        for m, v in _verdicts(legs["se" + x], legs["crps" + x], models, spec, suffix=x).items():
            out[m].update(v)
    return out
