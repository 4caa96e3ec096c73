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
  :func:`tycheon.stats.dm.overlap_lags`, :math:`t_{G-1}` on the :math:`G` (series, origin) blocks;
  :func:`tycheon.stats.dm.dm_pooled`) of per-step absolute errors against the production baseline,
  Benjamini-Hochberg adjusted within the table's family
  (:func:`tycheon.stats.multiplicity.benjamini_hochberg`); the direction is the sign of the statistic
  where the adjusted p is below ``alpha`` (paper, Table 2 caption);
- ``verdict_vs_rw`` / ``verdict_p_se`` / ``verdict_p_crps``: ADR-0006 decision 6, the rule of
  :func:`tycheon.stats.verdict.verdict_vs_random_walk` on the two one-sided pooled DM p-values against the
  random walk, on squared error and on CRPS. The CRPS is the quantile-trapezoid CRPS
  (:func:`tycheon.metrics.probabilistic.crps_quantiles`) of the models' own quantiles at
  ``spec.quantile_levels`` where both models give them, else of the engine's conformal 80% band read as
  the quantiles 0.1, 0.5, 0.9 (``lo80``, point, ``hi80``), built the same way for every model, so the two
  models of a comparison are always scored with one CRPS kind (decision 7); each leg uses the rows where
  both models have that loss;
- ``n_blocks_zero_scale`` (per table): blocks of the class that the metric cannot score because their
  in-sample scale is zero (a scaled metric of an all-zero history); they are left out of every row;
- ``support`` / ``full_support``: blocks scored, and whether that equals the most-supported model's count
  (the site marks the others with a dagger).

Metric ``crps`` ranks the approximate CRPS of each model's own quantiles at ``spec.quantile_levels``
(``crps_kind="approx_quantiles"``, one kind for every model); blocks without them are not scored.

Where a statistic cannot be computed its value is null and the reason is recorded next to it
(``dm_reason``, ``verdict_reason`` in a row; ``friedman_reason``, ``conservative_cd_reason`` in
``tests``): the error message of the test that refused, never a silent gap.

Demand class ``all`` pools every class (including ``undefined``); the four named classes are the
per-origin ADI/CV² classes recorded by the engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from tycheon.backtest.scoreset import quantile_column
from tycheon.metrics.aggregate import block_scores, row_crps, summarize
from tycheon.metrics.errors import MetricInputError
from tycheon.metrics.probabilistic import crps_quantiles
from tycheon.stats.dm import DMResult, dm_pooled, overlap_lags, pooled_layout
from tycheon.stats.friedman import conservative_cd, friedman_nemenyi
from tycheon.stats.multiplicity import benjamini_hochberg
from tycheon.stats.ranking import rank_by_mean, spearman_test
from tycheon.stats.verdict import verdict_vs_random_walk

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

    def __post_init__(self) -> None:
        if "crps" in self.metrics and len(self.quantile_levels) < 2:
            raise MetricInputError(
                "metric 'crps' ranks the models' own quantiles and needs at least two quantile levels; "
                f"got quantile_levels={self.quantile_levels!r}"
            )


def _canonical(table: pd.DataFrame) -> pd.DataFrame:
    """Rows in key order, so that sums (and so every number) do not depend on the input's row order."""
    return table.sort_values(["unit", "model", "series_id", "origin", "step"], kind="stable", ignore_index=True)


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
    """CRPS of the model's own quantiles per row (NaN where the row has none, or the spec asks for fewer
    than two levels or levels the table lacks)."""
    if len(levels) < 2 or any(quantile_column(q) not in table.columns for q in levels):
        return pd.Series(np.full(len(table), np.nan), index=table.index)
    return pd.Series(row_crps(table, quantile_levels=levels, crps_kind="approx_quantiles").values,
                     index=table.index)


def _dm(losses: pd.DataFrame, a: str, b: str, *, spec: LeaderboardSpec,
        alternative: str) -> tuple[DMResult | None, str | None]:
    """Pooled DM of model ``a`` against ``b`` on the rows where both have a loss; or None and why."""
    absent = [m for m in (a, b) if m not in losses]
    if absent:
        return None, f"no losses for {' and '.join(absent)}"
    pair = losses[[a, b]].dropna()
    if pair.empty:
        return None, f"{a} and {b} share no scored rows"
    idx = pair.index
    try:
        layout = pooled_layout(idx.get_level_values("series_id").to_numpy(),
                               idx.get_level_values("origin").to_numpy())
        return dm_pooled(pair[a].to_numpy(), pair[b].to_numpy(), layout=layout, horizon=spec.horizon,
                         stride=spec.stride, alternative=alternative), None  # type: ignore[arg-type]
    except MetricInputError as err:
        return None, str(err)


def _verdict(se: pd.DataFrame, crps: dict[str, pd.DataFrame], model: str, spec: LeaderboardSpec) -> dict[str, Any]:
    """ADR-0006 decision 6 for one model: the stats rule on two one-sided pooled DM tests, with reasons."""
    out: dict[str, Any] = {"verdict_vs_rw": None, "verdict_p_se": None, "verdict_p_crps": None,
                           "verdict_reason": None}
    if model == spec.random_walk:
        out["verdict_reason"] = "is the random walk"
        return out
    dm_se, why_se = _dm(se, model, spec.random_walk, spec=spec, alternative="less")
    dm_crps, why_crps = None, []
    for kind, losses in crps.items():  # own quantiles first, then conformal bands: one kind per comparison
        dm_crps, why = _dm(losses, model, spec.random_walk, spec=spec, alternative="less")
        if dm_crps is not None:
            break
        why_crps.append(f"{kind}: {why}")
    out["verdict_p_se"] = None if dm_se is None else dm_se.p_value
    out["verdict_p_crps"] = None if dm_crps is None else dm_crps.p_value
    reasons = ([] if dm_se is not None else [f"squared-error DM: {why_se}"]) + (
        [] if dm_crps is not None else [f"CRPS DM ({'; '.join(why_crps)})"])
    if reasons:
        out["verdict_reason"] = "; ".join(reasons)
        return out
    try:
        out["verdict_vs_rw"] = verdict_vs_random_walk(dm_se.p_value, dm_crps.p_value, alpha=spec.alpha)
    except MetricInputError as err:
        out["verdict_reason"] = str(err)
    return out


def _wide(blocks: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Block scores ``[(series, origin), model]``. dropna (the default) keeps only blocks that exist;
    dropna=False would add every (series, origin) combination, counting blocks never forecast as dropped."""
    return blocks.pivot_table(index=["series_id", "origin"], columns="model", values=metric, aggfunc="first")


def _friedman(wide: pd.DataFrame, models: list[str], spec: LeaderboardSpec) -> dict[str, Any]:
    """Friedman/Nemenyi and the conservative CD over the block scores ``wide`` of ``models``."""
    wide = wide.reindex(columns=models)
    n_total = len(wide)
    out: dict[str, Any] = {"friedman_statistic": None, "friedman_p": None, "nemenyi_cd": None,
                           "conservative_cd": None, "n_blocks": 0, "dropped_blocks": n_total,
                           "n_models": len(models), "alpha": spec.alpha, "mean_ranks": {},
                           "friedman_reason": None, "conservative_cd_reason": None}
    if len(models) < 2:
        out["friedman_reason"] = out["conservative_cd_reason"] = "fewer than two models scored"
        return out
    try:
        res = friedman_nemenyi(wide, alpha=spec.alpha)
    except MetricInputError as err:
        out["friedman_reason"] = out["conservative_cd_reason"] = str(err)
        return out
    out.update(friedman_statistic=res.statistic, friedman_p=res.p_value, nemenyi_cd=res.critical_difference,
               n_blocks=res.n_blocks, dropped_blocks=res.n_dropped, mean_ranks=res.mean_ranks.to_dict())
    try:
        cons = conservative_cd(wide, series=wide.index.get_level_values("series_id").to_numpy(),
                               seed=spec.seed, alpha=spec.alpha)
        out["conservative_cd"] = cons.critical_difference
    except MetricInputError as err:
        out["conservative_cd_reason"] = str(err)
    return out


def _one_class(table: pd.DataFrame, blocks: pd.DataFrame, spec: LeaderboardSpec, *, unit: str,
               demand_class: str, display: dict[str, str]) -> list[dict[str, Any]]:
    models = sorted(table["model"].unique())
    err = (table["point"] - table["actual"]).astype(np.float64)
    absolute, squared = _pivot(table, err.abs()), _pivot(table, err * err)
    crps = {"own quantiles": _pivot(table, _own_crps(table, spec.quantile_levels)),
            "conformal 80% bands": _pivot(table, _band_crps(table))}
    family = [m for m in models if m != spec.baseline]
    dm_runs = {m: _dm(absolute, m, spec.baseline, spec=spec, alternative="two-sided") for m in family}
    dm = {m: res for m, (res, _) in dm_runs.items()}
    dm_reason = {m: why for m, (_, why) in dm_runs.items()}
    tested = [m for m in family if dm[m] is not None and np.isfinite(dm[m].p_value)]
    p_bh = dict(zip(tested, benjamini_hochberg([dm[m].p_value for m in tested]), strict=True))
    verdicts = {m: _verdict(squared, crps, m, spec) for m in models}
    entries = []
    for metric in spec.metrics:
        scored = blocks[blocks[metric].notna()]
        support = scored.groupby("model").size().reindex(models, fill_value=0)
        n_blocks_total = int(scored[["series_id", "origin"]].drop_duplicates().shape[0])
        # blocks this metric cannot score because their scale is zero (e.g. MASE on all-zero history)
        zero = blocks[blocks[metric].isna() & blocks["zero_scale"]] if "zero_scale" in blocks else blocks[:0]
        n_blocks_zero_scale = int(zero[["series_id", "origin"]].drop_duplicates().shape[0])
        ranked_models = [m for m in models if support[m] > 0]
        if not ranked_models:
            continue
        summary = summarize(scored, metrics=[metric], by=["model"]).set_index("model")
        wide = _wide(scored, metric)  # [(series, origin), model]
        tests = _friedman(wide, ranked_models, spec)
        base = wide[spec.baseline] if spec.baseline in wide.columns else None
        means = {m: float(summary.at[m, f"{metric}_mean"]) for m in ranked_models}
        ranks = rank_by_mean(means)
        rows = []
        for m in sorted(ranked_models, key=lambda m: (ranks[m], m)):
            beats = None
            if m != spec.baseline and base is not None:
                beats = int((wide[m] < base).sum())  # blocks both have (NaN compares False)
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
                "dm_reason": "is the production baseline" if m == spec.baseline else dm_reason[m],
                **verdicts[m], "support": int(support[m]),
                "full_support": bool(support[m] == support.max()),
                "is_baseline": m == spec.baseline, "is_random_walk": m == spec.random_walk,
            })  # fmt: skip
        tests.pop("mean_ranks")
        tests.update(dm_loss="absolute error", dm_family_size=len(tested),
                     dm_overlap_lag=overlap_lags(spec.horizon, spec.stride))
        entries.append({"unit": unit, "demand_class": demand_class, "metric": metric,
                        "baseline": spec.baseline, "random_walk": spec.random_walk,
                        "n_blocks_total": n_blocks_total, "n_blocks_zero_scale": n_blocks_zero_scale,
                        "rows": rows, "tests": tests})
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
        ``random_walk``, ``n_blocks_total``, ``n_blocks_zero_scale``, ranked ``rows`` and ``tests`` (see the
        module docstring).
    """
    display = display_names or {}
    table = _canonical(table)
    units = sorted(table["unit"].unique())
    out: list[dict[str, Any]] = []
    for unit in units:
        # no copy of the whole table where no row is filtered out (memory: it is the largest object here)
        unit_rows = table if len(units) == 1 else table[table["unit"] == unit].reset_index(drop=True)
        blocks = block_scores(unit_rows, metrics=list(spec.metrics), quantile_levels=spec.quantile_levels,
                              crps_kind="approx_quantiles")
        for dc in _classes(unit_rows):
            rows = unit_rows if dc == "all" else unit_rows[unit_rows["demand_class"] == dc].reset_index(drop=True)
            bl = blocks if dc == "all" else blocks[blocks["demand_class"] == dc]
            out.extend(_one_class(rows, bl, spec, unit=unit, demand_class=dc, display=display))
    return out


def _record_coverage(rows: pd.DataFrame, level: str) -> pd.Series:
    """Per model, the share of records with a band whose actual lies in the closed band."""
    lo, hi, y = (rows[c].to_numpy(dtype=np.float64) for c in (f"lo{level}", f"hi{level}", "actual"))
    banded = np.isfinite(lo) & np.isfinite(hi)
    inside = pd.Series(((lo <= y) & (y <= hi))[banded], index=rows.index[banded])
    return inside.groupby(rows.loc[banded, "model"]).mean()


def interval_tables(table: pd.DataFrame, *, point_metric: str = "mase",
                    quantile_levels: tuple[float, ...] = ()) -> list[dict[str, Any]]:
    r"""Coverage and MSIS of the conformal bands per model, per unit × demand class.

    .. math::

        \mathrm{cov} = \frac{1}{|R|}\sum_{r \in R}\mathbb 1\{l_r \le y_r \le u_r\}, \qquad
        \mathrm{MSIS} = \frac{1}{|B|}\sum_{b\in B}\frac{\overline{\mathrm{IS}_\alpha}_b}{s_{\mathrm{MAE},b}}

    Coverage is the share of the model's scored records :math:`R` that have a band and fall inside it
    (what "80% coverage" reads as; not a mean of per-block shares, which would weight a one-step block
    like a full one); ``n_records`` counts the records with a band. MSIS is the interval score scaled by
    the in-sample seasonal-naive MAE per block (:func:`tycheon.metrics.aggregate.block_scores`, M4
    definition), averaged over blocks. ``rank_point`` / ``rank_interval`` are the models' places on mean
    ``point_metric`` and on mean MSIS (paper, Table 5) at the widest band every ranked model has
    (``interval_metric``: ``msis95``, else ``msis80``); the table carries Spearman's :math:`\rho` between
    the two rankings with its p-value (:func:`tycheon.stats.ranking.spearman_test`) and ``max_move``, the
    largest number of places any model shifts. ``quantile_levels`` is needed only when ``point_metric``
    is ``"crps"`` (approximate CRPS of the models' own quantiles).

    References
    ----------
    Gneiting & Raftery (2007), eq. (43); Makridakis, Spiliotis & Assimakopoulos (2020), eq. (3);
    evaluation-choices paper, Table 5.
    """
    metrics = [point_metric, "msis80", "msis95"]
    table = _canonical(table)
    out = []
    for unit in sorted(table["unit"].unique()):
        unit_rows = table[table["unit"] == unit]
        blocks = block_scores(unit_rows, metrics=metrics, quantile_levels=quantile_levels,
                              crps_kind="approx_quantiles")
        for dc in _classes(unit_rows):
            bl = blocks if dc == "all" else blocks[blocks["demand_class"] == dc]
            rec = unit_rows if dc == "all" else unit_rows[unit_rows["demand_class"] == dc]
            n_rec = rec[rec["has_band"]].groupby("model").size()
            cover = {level: _record_coverage(rec, level) for level in ("80", "95")}
            s = summarize(bl, metrics=metrics, by=["model"]).set_index("model")
            point_rank = rank_by_mean(s[f"{point_metric}_mean"].to_dict())
            interval_metric = "msis95" if np.isfinite(s["msis95_mean"]).all() else "msis80"
            msis_rank = rank_by_mean(s[f"{interval_metric}_mean"].to_dict())
            rows = [{"model": m, "n_records": int(n_rec.get(m, 0)),
                     "coverage80": _or_none(cover["80"].get(m)), "coverage95": _or_none(cover["95"].get(m)),
                     "msis80": s.at[m, "msis80_mean"], "msis95": s.at[m, "msis95_mean"],
                     "rank_point": point_rank[m], "rank_interval": msis_rank[m]}
                    for m in s.index]
            out.append({"unit": unit, "demand_class": dc, "band": "conformal", "rows": rows,
                        **_point_vs_interval(s, point_metric, interval_metric, point_rank, msis_rank)})
    return out


def _point_vs_interval(s: pd.DataFrame, point_metric: str, interval_metric: str,
                       point_rank: dict[str, int], msis_rank: dict[str, int]) -> dict[str, Any]:
    """Spearman between the point and interval rankings over the models that have both scores."""
    both = s.index[np.isfinite(s[f"{point_metric}_mean"]) & np.isfinite(s[f"{interval_metric}_mean"])]
    if len(both) < 3:
        return {"interval_metric": interval_metric, "point_vs_interval_spearman": None,
                "point_vs_interval_p": None, "max_move": None}
    rho, p = spearman_test([point_rank[m] for m in both], [msis_rank[m] for m in both])
    return {"interval_metric": interval_metric, "point_vs_interval_spearman": _or_none(rho),
            "point_vs_interval_p": _or_none(p),
            "max_move": int(max(abs(point_rank[m] - msis_rank[m]) for m in both))}


def _or_none(x: Any) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)
