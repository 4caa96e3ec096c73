"""Leaderboard tables from a score set: one table per unit × demand class × metric, with its tests.

For every (unit, demand class) the blocks (series × origin) of the score-set table are scored once by
:func:`tycheon.metrics.aggregate.block_scores`; each metric then gives a ranked table whose columns are
those of the evaluation-choices paper, Table 2:

- ``mean`` / ``median`` of the block metric (:func:`tycheon.metrics.aggregate.summarize`);
- ``mean_rank``: Friedman mean rank over the *complete* blocks, with the Nemenyi critical difference and
  the conservative CD on one origin per series (:mod:`tycheon.stats.friedman`; paper, section 3);
- ``beats_baseline_blocks``: blocks in which the model's metric is strictly below the production
  baseline's on the same block;
- ``dm_p`` / ``dm_p_bh`` / ``dm_direction``: two-sided pooled Diebold-Mariano test (HLN, overlap lag
  ``ceil(h/stride)-1``; :func:`tycheon.stats.dm.dm_pooled`) of per-step absolute errors against the
  production baseline, Benjamini-Hochberg adjusted within the table's family
  (:func:`tycheon.stats.multiplicity.benjamini_hochberg`); the direction is the sign of the statistic
  where the adjusted p is below ``alpha`` (paper, Table 2 caption);
- ``verdict_vs_rw``: ADR-0006 decision 6, both one-sided pooled DM tests against the random walk, on
  squared error and on CRPS: "beats" if both p < alpha, "worse" if both p > 1 - alpha, otherwise
  "indistinguishable". The CRPS is the quantile-trapezoid CRPS (:func:`tycheon.metrics.probabilistic.
  crps_quantiles`) of the engine's conformal band quantiles (levels 0.025, 0.1, 0.5, 0.9, 0.975 with
  the point forecast as the median), built the same way for every model, so the two models of a
  comparison are always scored with one CRPS kind (decision 7); it uses the rows where both have bands;
- ``support`` / ``full_support``: blocks scored, and whether that equals the most-supported model's count
  (the site marks the others with a dagger).

Demand class ``all`` pools every class (including ``undefined``); the four named classes are the
per-origin ADI/CV² classes recorded by the engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from tycheon.backtest.scoreset import quantile_column
from tycheon.metrics.aggregate import block_scores, summarize
from tycheon.metrics.errors import MetricInputError
from tycheon.metrics.probabilistic import crps_quantiles
from tycheon.stats.dm import dm_pooled, pooled_layout
from tycheon.stats.friedman import conservative_cd, friedman_nemenyi
from tycheon.stats.multiplicity import benjamini_hochberg

__all__ = ["DEMAND_CLASSES", "LeaderboardSpec", "interval_tables", "leaderboard_tables"]

DEMAND_CLASSES = ("all", "smooth", "erratic", "intermittent", "lumpy")
_STEP_KEYS = ["series_id", "origin", "step"]
_BAND_LEVELS = (0.1, 0.5, 0.9)


@dataclass(frozen=True, kw_only=True)
class LeaderboardSpec:
    """What a leaderboard compares against and how its tests are set."""

    metrics: tuple[str, ...]
    baseline: str
    random_walk: str
    horizon: int
    stride: int
    alpha: float = 0.05
    seed: int = 0
    quantile_levels: tuple[float, ...] = ()


def _canonical(table: pd.DataFrame) -> pd.DataFrame:
    """Rows in key order, so that sums (and so every number) do not depend on the input's row order."""
    return table.sort_values(["unit", "model", "series_id", "origin", "step"], kind="stable").reset_index(drop=True)


def _classes(table: pd.DataFrame) -> list[str]:
    present = set(table["demand_class"].unique())
    return ["all"] + [c for c in DEMAND_CLASSES[1:] if c in present]


def _pivot(table: pd.DataFrame, values: pd.Series) -> pd.DataFrame:
    """Per-step values as ``[(series, origin, step), model]``."""
    frame = table[_STEP_KEYS + ["model"]].assign(v=values.to_numpy())
    return frame.pivot_table(index=_STEP_KEYS, columns="model", values="v", aggfunc="first")


def _band_crps(table: pd.DataFrame) -> pd.Series:
    """CRPS of the conformal 80% band read as quantiles per row (NaN where the row has no band)."""
    out = np.full(len(table), np.nan)
    banded = table["has_band"].to_numpy(dtype=bool) & table[["lo80", "hi80"]].notna().all(axis=1).to_numpy()
    if banded.any():
        rows = table.loc[banded]
        q = np.sort(rows[["lo80", "point", "hi80"]].to_numpy(dtype=np.float64), axis=1)
        out[banded] = crps_quantiles(actual=rows["actual"].to_numpy(dtype=np.float64), quantiles=q,
                                     levels=np.asarray(_BAND_LEVELS)).values
    return pd.Series(out, index=table.index)


def _own_crps(table: pd.DataFrame, levels: tuple[float, ...]) -> pd.Series:
    """CRPS of the model's own quantiles per row (NaN where the row has none)."""
    out = np.full(len(table), np.nan)
    cols = [quantile_column(q) for q in levels]
    if len(levels) < 2 or any(c not in table.columns for c in cols):
        return pd.Series(out, index=table.index)
    given = table["has_quantiles"].to_numpy(dtype=bool) & table[cols].notna().all(axis=1).to_numpy()
    if given.any():
        rows = table.loc[given]
        out[given] = crps_quantiles(actual=rows["actual"].to_numpy(dtype=np.float64),
                                    quantiles=rows[cols].to_numpy(dtype=np.float64),
                                    levels=np.asarray(levels)).values
    return pd.Series(out, index=table.index)


def _dm(losses: pd.DataFrame, a: str, b: str, *, spec: LeaderboardSpec, alternative: str) -> Any:
    """Pooled DM of model ``a`` against ``b`` on the rows where both have a loss, or None."""
    if a not in losses or b not in losses:
        return None
    pair = losses[[a, b]].dropna()
    if len(pair) < 3:
        return None
    idx = pair.index
    layout = pooled_layout(idx.get_level_values("series_id").to_numpy(),
                           idx.get_level_values("origin").to_numpy())
    try:
        return dm_pooled(pair[a].to_numpy(), pair[b].to_numpy(), layout=layout, horizon=spec.horizon,
                         stride=spec.stride, alternative=alternative)
    except MetricInputError:
        return None


def _verdict(se: pd.DataFrame, crps: tuple[pd.DataFrame, pd.DataFrame], model: str,
             spec: LeaderboardSpec) -> str | None:
    a = _dm(se, model, spec.random_walk, spec=spec, alternative="less")
    b = None
    for kind in crps:  # own quantiles first, then conformal bands: one kind per comparison
        b = _dm(kind, model, spec.random_walk, spec=spec, alternative="less")
        if b is not None:
            break
    if a is None or b is None or not (np.isfinite(a.p_value) and np.isfinite(b.p_value)):
        return None
    if a.p_value < spec.alpha and b.p_value < spec.alpha:
        return "beats"
    if a.p_value > 1 - spec.alpha and b.p_value > 1 - spec.alpha:
        return "worse"
    return "indistinguishable"


def _friedman(blocks: pd.DataFrame, metric: str, models: list[str], spec: LeaderboardSpec) -> dict[str, Any]:
    # dropna (the default) keeps only blocks that exist; dropna=False would add every (series, origin)
    # combination, counting blocks that were never forecast as "dropped"
    wide = blocks.pivot_table(index=["series_id", "origin"], columns="model", values=metric,
                              aggfunc="first").reindex(columns=models)
    n_total = len(wide)
    out: dict[str, Any] = {"friedman_statistic": None, "friedman_p": None, "nemenyi_cd": None,
                           "conservative_cd": None, "n_blocks": 0, "dropped_blocks": n_total,
                           "n_models": len(models), "alpha": spec.alpha, "mean_ranks": {}}
    if len(models) < 2:
        return out
    try:
        res = friedman_nemenyi(wide, alpha=spec.alpha)
    except MetricInputError:
        return out
    out.update(friedman_statistic=res.statistic, friedman_p=res.p_value, nemenyi_cd=res.critical_difference,
               n_blocks=res.n_blocks, dropped_blocks=res.n_dropped, mean_ranks=res.mean_ranks.to_dict())
    try:
        cons = conservative_cd(wide, series=wide.index.get_level_values("series_id").to_numpy(),
                               seed=spec.seed, alpha=spec.alpha)
        out["conservative_cd"] = cons.critical_difference
    except MetricInputError:
        pass
    return out


def _rank_by_mean(means: dict[str, float]) -> dict[str, int]:
    """Competition ranking by mean (ties share the lower rank; NaN last); ties broken by name for order."""
    ordered = sorted(means, key=lambda m: (np.isnan(means[m]), means[m], m))
    ranks: dict[str, int] = {}
    for pos, m in enumerate(ordered, 1):
        prev = ordered[pos - 2] if pos > 1 else None
        same = prev is not None and means[prev] == means[m]
        ranks[m] = ranks[prev] if same else pos
    return ranks


def _one_class(table: pd.DataFrame, blocks: pd.DataFrame, spec: LeaderboardSpec, *, unit: str,
               demand_class: str, display: dict[str, str]) -> list[dict[str, Any]]:
    models = sorted(table["model"].unique())
    err = (table["point"] - table["actual"]).astype(np.float64)
    absolute, squared = _pivot(table, err.abs()), _pivot(table, err * err)
    crps = (_pivot(table, _own_crps(table, spec.quantile_levels)), _pivot(table, _band_crps(table)))
    family = [m for m in models if m != spec.baseline]
    dm = {m: _dm(absolute, m, spec.baseline, spec=spec, alternative="two-sided") for m in family}
    tested = [m for m in family if dm[m] is not None and np.isfinite(dm[m].p_value)]
    p_bh = dict(zip(tested, benjamini_hochberg([dm[m].p_value for m in tested]), strict=True))
    verdicts = {m: _verdict(squared, crps, m, spec) for m in models if m != spec.random_walk}
    entries = []
    for metric in spec.metrics:
        scored = blocks[blocks[metric].notna()]
        support = scored.groupby("model").size().reindex(models, fill_value=0)
        n_blocks_total = int(scored[["series_id", "origin"]].drop_duplicates().shape[0])
        ranked_models = [m for m in models if support[m] > 0]
        if not ranked_models:
            continue
        summary = summarize(scored, metrics=[metric], by=["model"]).set_index("model")
        tests = _friedman(scored, metric, ranked_models, spec)
        base = scored[scored["model"] == spec.baseline].set_index(["series_id", "origin"])[metric]
        means = {m: float(summary.at[m, f"{metric}_mean"]) for m in ranked_models}
        ranks = _rank_by_mean(means)
        rows = []
        for m in sorted(ranked_models, key=lambda m: (ranks[m], m)):
            beats = None
            if m != spec.baseline and len(base):
                mine = scored[scored["model"] == m].set_index(["series_id", "origin"])[metric]
                joined = pd.concat([mine.rename("m"), base.rename("b")], axis=1, join="inner")
                beats = int((joined["m"] < joined["b"]).sum())
            res, p_adj = dm.get(m), p_bh.get(m)
            direction = None
            if m != spec.baseline:
                direction = "none"
                if p_adj is not None and p_adj < spec.alpha and res is not None:
                    direction = "better" if res.statistic < 0 else "worse"
            rows.append({
                "rank": ranks[m], "model": m, "display_name": display.get(m, m),
                "mean": means[m], "median": float(summary.at[m, f"{metric}_median"]),
                "mean_rank": tests["mean_ranks"].get(m), "beats_baseline_blocks": beats,
                "dm_stat": None if res is None else res.statistic,
                "dm_p": None if res is None else res.p_value, "dm_p_bh": p_adj, "dm_direction": direction,
                "verdict_vs_rw": verdicts.get(m), "support": int(support[m]),
                "full_support": bool(support[m] == support.max()),
                "is_baseline": m == spec.baseline, "is_random_walk": m == spec.random_walk,
            })  # fmt: skip
        tests.pop("mean_ranks")
        tests.update(dm_loss="absolute error", dm_family_size=len(tested),
                     dm_overlap_lag=-(-spec.horizon // spec.stride) - 1)
        entries.append({"unit": unit, "demand_class": demand_class, "metric": metric,
                        "baseline": spec.baseline, "random_walk": spec.random_walk,
                        "n_blocks_total": n_blocks_total, "rows": rows, "tests": tests})
    return entries


def leaderboard_tables(
    table: pd.DataFrame,
    *,
    spec: LeaderboardSpec,
    display_names: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Every (unit, demand class, metric) leaderboard of one score-set table.

    Parameters
    ----------
    table : DataFrame
        ``ScoreSet.table`` of one dataset and protocol (models that ran only).
    spec : LeaderboardSpec
        Metrics, production baseline, random walk, horizon/stride of the protocol, alpha, seed of the
        conservative CD.
    display_names : dict, optional
        Model id -> display name.

    Returns
    -------
    list of dict
        One entry per (unit, demand class, metric): ``unit``, ``demand_class``, ``metric``, ``baseline``,
        ``random_walk``, ``n_blocks_total``, ranked ``rows`` and ``tests`` (see the module docstring).
    """
    display = display_names or {}
    table = _canonical(table)
    out: list[dict[str, Any]] = []
    for unit in sorted(table["unit"].unique()):
        unit_rows = table[table["unit"] == unit]
        blocks = block_scores(unit_rows, metrics=list(spec.metrics))
        for dc in _classes(unit_rows):
            rows = unit_rows if dc == "all" else unit_rows[unit_rows["demand_class"] == dc]
            bl = blocks if dc == "all" else blocks[blocks["demand_class"] == dc]
            out.extend(_one_class(rows.reset_index(drop=True), bl, spec, unit=unit, demand_class=dc,
                                  display=display))
    return out


def interval_tables(table: pd.DataFrame, *, point_metric: str = "mase") -> list[dict[str, Any]]:
    """Coverage and MSIS of the conformal bands per model, per unit × demand class.

    Coverage is the share of scored records inside the band; MSIS is the interval score scaled by the
    in-sample seasonal-naive MAE (:func:`tycheon.metrics.aggregate.block_scores`, M4 definition),
    averaged over blocks. ``rank_point`` / ``rank_interval`` are the models' places on mean
    ``point_metric`` and on mean MSIS-95 (paper, Table 5).
    """
    metrics = [point_metric, "coverage80", "coverage95", "msis80", "msis95"]
    table = _canonical(table)
    out = []
    for unit in sorted(table["unit"].unique()):
        unit_rows = table[table["unit"] == unit]
        blocks = block_scores(unit_rows, metrics=metrics)
        for dc in _classes(unit_rows):
            bl = blocks if dc == "all" else blocks[blocks["demand_class"] == dc]
            rec = unit_rows if dc == "all" else unit_rows[unit_rows["demand_class"] == dc]
            n_rec = rec[rec["has_band"]].groupby("model").size()
            s = summarize(bl, metrics=metrics, by=["model"]).set_index("model")
            point_rank = _rank_by_mean(s[f"{point_metric}_mean"].to_dict())
            msis_rank = _rank_by_mean(s["msis95_mean"].to_dict())
            rows = [{"model": m, "n_records": int(n_rec.get(m, 0)),
                     "coverage80": s.at[m, "coverage80_mean"], "coverage95": s.at[m, "coverage95_mean"],
                     "msis80": s.at[m, "msis80_mean"], "msis95": s.at[m, "msis95_mean"],
                     "rank_point": point_rank[m], "rank_interval": msis_rank[m]}
                    for m in s.index]
            out.append({"unit": unit, "demand_class": dc, "band": "conformal", "rows": rows})
    return out

