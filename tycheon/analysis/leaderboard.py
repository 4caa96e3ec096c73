"""Leaderboard tables from a score set: one table per unit × demand class × metric, with its tests.

For every (unit, demand class) the blocks (series × origin) of the score-set table are scored once by
:func:`tycheon.metrics.aggregate.block_scores`; each metric then gives a ranked table whose columns are
those of the evaluation-choices paper, Table 2:

- ``mean`` / ``median`` of the block metric (:func:`tycheon.metrics.aggregate.summarize`);
- ``mean_rank``: Friedman mean rank over the *complete* blocks, with the Nemenyi critical difference and
  the conservative CD on one origin per series (:mod:`tycheon.stats.friedman`; paper, section 3);
- ``beats_baseline_blocks``: blocks in which the model's metric is strictly below the production
  baseline's on the same block;
- ``dm_p`` / ``dm_p_bh`` / ``dm_direction``: two-sided **panel-robust** Diebold-Mariano test
  (:func:`tycheon.stats.dm.dm_panel`: the per-step loss differential averaged over the series and steps of
  each origin, the origin averages tested over time with HLN, overlap lag
  :func:`tycheon.contract.overlap_lags` and :math:`t_{\\lceil T/(L+1)\\rceil-1}`; nothing is assumed
  independent across series, so a calendar shock shared by the series counts once per origin; Driscoll &
  Kraay 1998, evaluation-choices paper section 4.1) against the production baseline on **the loss the
  table ranks**: the per-step loss of the table's metric from the metric registry
  (:func:`tycheon.metrics.aggregate.step_loss`: on a MASE table absolute errors divided by each block's
  MASE scale, on an RMSSE table squared errors divided by the RMSSE scale squared), Benjamini-Hochberg
  adjusted within the table's family (:func:`tycheon.stats.multiplicity.benjamini_hochberg`); the
  direction is the sign of the statistic where the adjusted p is below ``alpha`` (paper, Table 2 caption).
  ``dm_pooled_*`` is the series-independent variant (:func:`tycheon.stats.dm.dm_pooled`, labelled with
  that assumption, never a headline); ``dm_unscaled_*`` the paper's variant on unscaled per-step
  absolute errors (panel-robust);
- ``verdict_vs_rw`` / ``verdict_p_se`` / ``verdict_p_crps`` (+ ``_adj``): ADR-0006 decision 6 through
  :func:`tycheon.stats.verdict.family_verdicts`, **one verdict per (unit, demand class, model)**, the same on
  every metric's table: two one-sided panel-robust DM tests against the random walk, on the squared error
  divided by the RMSSE scale squared (every series weighs alike, as RMSSE weighs them) and on the CRPS
  divided by the MASE scale, their p-values adjusted within the cell's family (BH by default, Holm by
  ``spec.verdict_adjust``). The CRPS is of **one kind for every model of the cell** (decision 7): each
  model's conformal band read as quantiles on one shared level grid (``lo95, lo80, point, hi80, hi95``
  at 0.025, 0.1, 0.5, 0.9, 0.975, or the 80% grid where no row of the cell has a 95% band); the kind
  and grid are recorded in ``tests.verdict_crps_kind``/``verdict_crps_levels``. ``verdict_*_pooled`` is
  the rule on series-independent pooled tests; ``verdict_*_unscaled`` on unscaled squared error and CRPS
  (the paper's variant);
- **minimum cell** (WP26 section 6; :func:`tycheon.analysis.cell.cell_check`): a table with fewer than
  ``spec.min_cell`` scored blocks (series x origin, for every unit: an aggregate unit's blocks are its
  origins) names no winner and gives no DM; the verdict needs the whole cell's blocks
  (``tests.verdict_cell_count``). Tests over time need at least
  :data:`tycheon.analysis.cell.MIN_TIME_POINTS` scored origins (``tests.n_time_points``,
  ``tests.time_reason``); ``tests.cell_ok``/``cell_count``/``cell_reason`` say why a table is silent;
- ``support`` / ``full_support``: blocks scored, and whether that equals the most-supported model's count
  (the site marks the others with a dagger).

Metric ``crps`` ranks the approximate CRPS of each model's own quantiles at ``spec.quantile_levels``
(``crps_kind="approx_quantiles"``, one kind for every model), a probabilistic leaderboard of its own,
labelled apart from the verdict's band CRPS; blocks without own quantiles are not scored.

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

from tycheon.analysis._stepgrid import (
    DEMAND_CLASSES,
    _band_grid,
    _own_crps,
    _pivot_loss,
    _step_grid,
    _unit_class_tables,
)
from tycheon.analysis.cell import MIN_TIME_POINTS, cell_check, time_check
from tycheon.analysis.intervals import _CLASS_COLUMNS, _one_interval_table
from tycheon.analysis.relative import RELATIVE_TEXT
from tycheon.analysis.table_rows import (
    _NOT_TESTED,
    RANKING_TEXT,
    ZERO_FORECAST_TEXT,
    _by_model,
    _headline_values,
    _pooled_ratio,
    _ranking,
    _relative,
    _runner_up,
    _skill_reason,
    _trimmed,
    _zero_flag,
    _zero_forecast_share,
)
from tycheon.analysis.table_tests import (
    INFERENCE_TEXT,
    POOLED_TEXT,
    VERDICT_POINT_LOSS,
    _cell_verdicts,
    _dm_column,
    _friedman,
    _wide,
)
from tycheon.backtest.scoreset import take_rows
from tycheon.contract import overlap_lags, quantile_column
from tycheon.errors import MetricInputError
from tycheon.metrics.aggregate import BAND_GRIDS, summarize
from tycheon.metrics.registry import get_metric
from tycheon.stats.ranking import rank_by_mean
from tycheon.stats.verdict import Adjustment

__all__ = [
    "DEMAND_CLASSES",
    "LeaderboardSpec",
    "columns_read",
    "interval_tables",
    "leaderboard_and_interval_tables",
    "leaderboard_tables",
]

BAND_CRPS_KIND = "band_quantiles"


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
    verdict_adjust: Adjustment = "bh"
    min_cell: int = 30
    service_level: float = 0.9
    lead_time: int = 0
    review_period: int = 1
    lost_sales: bool = True

    def __post_init__(self) -> None:
        if "crps" in self.metrics and len(self.quantile_levels) < 2:
            raise MetricInputError(
                "metric 'crps' ranks the models' own quantiles and needs at least two quantile levels; "
                f"got quantile_levels={self.quantile_levels!r}"
            )
        if self.verdict_adjust not in ("bh", "holm", "none"):
            raise MetricInputError(f"verdict_adjust must be 'bh', 'holm' or 'none'; got {self.verdict_adjust!r}")
        if int(self.min_cell) != self.min_cell or self.min_cell < 2:
            raise MetricInputError(f"min_cell must be an integer of at least 2; got {self.min_cell!r}")


_USED = (
    "model",
    "unit",
    "series_id",
    "origin",
    "step",
    "actual",
    "point",
    "demand_class",
    "scale_mae",
    "scale_rmse",
    "lo80",
    "hi80",
    "lo95",
    "hi95",
    "has_band",
    "target_period",
)


def columns_read(*, quantile_levels: tuple[float, ...] = ()) -> list[str]:
    """The score-set columns :func:`leaderboard_tables` and :func:`interval_tables` read, and the models'
    own quantile columns of ``quantile_levels`` after them (pass the levels only where a table ranks
    CRPS), so that a reader of a large score-set file can load only these."""
    return [*_USED, *(quantile_column(q) for q in quantile_levels)]


def _read_columns(table: pd.DataFrame, quantile_levels: tuple[float, ...] = ()) -> list[str]:
    """The columns the tables read, whatever else the score set carries; ``quantile_levels``: the models'
    own quantile columns to read too (only a table that ranks CRPS reads them)."""
    return [c for c in columns_read(quantile_levels=quantile_levels) if c in table.columns]


_SCORED_KEYS = ("model", "series_id", "origin")
"""The block columns a leaderboard cell reads beside its metric (counts, the wide grid, the summary)."""


def _one_class(
    table: pd.DataFrame,
    blocks: pd.DataFrame,
    spec: LeaderboardSpec,
    *,
    unit: str,
    demand_class: str,
    display: dict[str, str],
) -> list[dict[str, Any]]:
    models = sorted(table["model"].unique())
    family = [m for m in models if m != spec.baseline]
    band_level = _band_grid(table)
    grid = _step_grid(table)  # first: its key temporaries are freed before any per-row array is made
    # one verdict per (unit, demand class, model), the same on every metric's table (ADR-0006 decision 6)
    whole = cell_check(grid.n_blocks(), min_cell=spec.min_cell)
    n_time = grid.n_origins_present()
    time_reason = time_check(n_time, horizon=spec.horizon, stride=spec.stride)
    verdicts = _cell_verdicts(table, grid, models, spec, band_level, whole.reason)
    dm_unscaled: dict[str, dict[str, Any]] = {}
    if whole.ok:  # the paper's unscaled per-step absolute error
        dm_unscaled = _dm_column(_pivot_loss(grid, table, "mae"), family, spec)
    zero_share = _zero_forecast_share(table)  # per model, once per cell: the same beside every metric
    entries = []
    for metric in spec.metrics:
        spec_m = get_metric(metric)
        # the blocks with this metric, of only the columns read below (a copy of every block column
        # stayed alive beside the cell's loss grids)
        keep = [c for c in (*_SCORED_KEYS, "zero_scale", metric) if c in blocks.columns]
        scored = take_rows(blocks, np.flatnonzero(blocks[metric].notna().to_numpy()), keep)
        support = scored.groupby("model", observed=True).size().reindex(models, fill_value=0)
        n_blocks_total = int(scored[["series_id", "origin"]].drop_duplicates().shape[0])
        ranked_models = [m for m in models if support[m] > 0]
        if not ranked_models:
            continue
        cell = cell_check(n_blocks_total, min_cell=spec.min_cell)
        loss = None
        if cell.ok and spec_m.tested:
            own = None if metric != "crps" else _own_crps(table, spec.quantile_levels)
            loss = _pivot_loss(grid, table, metric, crps=None if own is None else own.to_numpy())
            dm = _dm_column(loss, family, spec)
            dm_pooled_col = _dm_column(loss, family, spec, "pooled")
        else:
            why = cell.reason if not cell.ok else _NOT_TESTED
            skip = {"stat": None, "p": None, "p_bh": None, "direction": None, "reason": why}
            dm = {m: skip for m in family}
            dm_pooled_col = {m: skip for m in family}
        summary = summarize(scored, metrics=[metric], by=["model"]).set_index("model")
        wide = _wide(scored, metric)  # [(series, origin), model]
        size = wide.abs() if spec_m.rank_by == "abs_mean" else wide  # what the ranks compare
        tests = _friedman(size, ranked_models, spec)
        base = size[spec.baseline] if spec.baseline in size.columns else None
        means: dict[str, float] = _by_model(summary[f"{metric}_mean"])
        medians: dict[str, float] = _by_model(summary[f"{metric}_median"])
        pooled = _pooled_ratio(table, ranked_models) if spec_m.rank_by == "pooled" else {}
        relative = _relative(wide, spec, interval=cell.ok)  # no interval below the minimum cell
        ranking = _ranking(spec_m.rank_by, relative)
        headline = _headline_values(ranking, means, pooled, relative, ranked_models)
        ranks = rank_by_mean(headline)
        rank_mean = rank_by_mean({m: abs(v) for m, v in means.items()} if spec_m.rank_by == "abs_mean" else means)
        zero_scale = (
            blocks.loc[blocks["zero_scale"], ["series_id", "origin"]].drop_duplicates().shape[0]
            if "zero_scale" in blocks.columns and spec_m.scale_column
            else 0
        )
        rows = []
        for m in sorted(ranked_models, key=lambda m: (ranks[m], m)):
            beats = None
            if m != spec.baseline and base is not None:
                beats = int((size[m] < base).sum())  # blocks both have (NaN compares False)
            d, u, q = dm.get(m), dm_unscaled.get(m), dm_pooled_col.get(m)
            rel = relative.get(m)
            rows.append({
                "rank": ranks[m], "model": m, "display_name": display.get(m, m),
                "mean": means[m], "median": medians[m], "rank_mean": rank_mean[m],
                "pooled": pooled.get(m),
                "gmean_rel_rw": None if rel is None else rel.gmean,
                "skill_rw": None if rel is None else rel.skill,
                "skill_rw_low": None if rel is None else rel.skill_low,
                "skill_rw_high": None if rel is None else rel.skill_high,
                "skill_rw_reason": _skill_reason(rel, cell.reason),
                "skill_rw_blocks": None if rel is None else rel.n_blocks,
                "skill_rw_clipped": None if rel is None else rel.n_clipped,
                "zero_forecast_share": zero_share.get(m),
                "zero_forecast_flag": _zero_flag(zero_share.get(m)),
                "mean_rank": tests["mean_ranks"].get(m), "beats_baseline_blocks": beats,
                "dm_stat": None if d is None else d["stat"], "dm_p": None if d is None else d["p"],
                "dm_p_bh": None if d is None else d["p_bh"], "dm_direction": None if d is None else d["direction"],
                "dm_reason": "is the production baseline" if d is None else d["reason"],
                "dm_unscaled_p": None if u is None else u["p"], "dm_unscaled_p_bh": None if u is None else u["p_bh"],
                "dm_unscaled_direction": None if u is None else u["direction"],
                "dm_pooled_p": None if q is None else q["p"], "dm_pooled_p_bh": None if q is None else q["p_bh"],
                "dm_pooled_direction": None if q is None else q["direction"],
                **verdicts[m], "support": int(support[m]),
                "full_support": bool(support[m] == support.max()),
                "is_baseline": m == spec.baseline, "is_random_walk": m == spec.random_walk,
            })  # fmt: skip
        tests.pop("mean_ranks")
        winner = rows[0]["model"] if cell.ok and spec_m.ranked else None
        tests.update(
            dm_loss=spec_m.dm_loss_label,
            dm_unscaled_loss="absolute error (unscaled)",
            dm_family_size=sum(1 for m in family if dm.get(m, {}).get("p_bh") is not None),
            dm_overlap_lag=overlap_lags(spec.horizon, spec.stride),
            inference=INFERENCE_TEXT,
            inference_pooled=POOLED_TEXT,
            n_time_points=int(n_time),
            min_time_points=MIN_TIME_POINTS,
            time_reason=time_reason,
            verdict_point_loss=VERDICT_POINT_LOSS,
            verdict_adjust=spec.verdict_adjust,
            verdict_cell_count=int(whole.count),
            crps_kind=BAND_CRPS_KIND if metric != "crps" else "approx_quantiles",
            crps_levels=list(BAND_GRIDS[band_level][0]) if metric != "crps" else list(spec.quantile_levels),
            verdict_crps_kind=BAND_CRPS_KIND,
            verdict_crps_levels=list(BAND_GRIDS[band_level][0]),
            verdict_crps_scale="scale_mae",
            n_zero_scale_blocks=int(zero_scale),
            ranking=ranking,
            ranking_text=RANKING_TEXT[ranking],
            relative_text=RELATIVE_TEXT,
            elicits=spec_m.elicits,
            zero_forecast_text=ZERO_FORECAST_TEXT,
            **_runner_up(rows, loss, spec, winner),
            **_trimmed(table, wide, size, ranking, ranked_models, spec, winner),
            **cell.as_tests(),
        )
        del loss
        entries.append(
            {
                "unit": unit,
                "demand_class": demand_class,
                "metric": metric,
                "baseline": spec.baseline,
                "random_walk": spec.random_walk,
                "n_blocks_total": n_blocks_total,
                "winner": winner,
                "rows": rows,
                "tests": tests,
            }
        )
        del wide, size, scored
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
    # the models' own quantile columns only where a table ranks their CRPS
    own_levels = spec.quantile_levels if "crps" in spec.metrics else ()
    tables = _unit_class_tables(
        table,
        _read_columns(table, own_levels),
        metrics=list(spec.metrics),
        quantile_levels=own_levels,
        crps_kind="approx_quantiles",
    )
    out: list[dict[str, Any]] = []
    for unit, dc, rows, bl in tables:
        out.extend(_one_class(rows, bl, spec, unit=unit, demand_class=dc, display=display))
        del rows, bl  # before the next class's rows are gathered
    return out


def leaderboard_and_interval_tables(
    table: pd.DataFrame,
    *,
    spec: LeaderboardSpec,
    display_names: dict[str, str] | None = None,
    point_metric: str | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """:func:`leaderboard_tables` and :func:`interval_tables` of one table from one pass over its units.

    Both walk the same units and demand classes and score the same blocks; here each (unit, class) is
    gathered and its blocks scored once, with the metrics of both (a block's metrics are computed
    independently of each other, so each table's numbers are those of its own function; pinned in the
    tests): the second pass repeated every gather and block score. ``point_metric`` (default
    ``spec.metrics[0]``) and ``spec.quantile_levels`` are :func:`interval_tables`' arguments.

    Returns
    -------
    tuple of list
        ``(leaderboards, intervals)``, each as its own function returns it.
    """
    display = display_names or {}
    point = spec.metrics[0] if point_metric is None else point_metric
    interval_metrics = [point, "msis80", "msis95"]
    # the models' own quantile columns where either table ranks their CRPS (the same levels for both)
    own_levels = spec.quantile_levels if "crps" in (*spec.metrics, point) else ()
    tables = _unit_class_tables(
        table,
        _read_columns(table, own_levels),
        metrics=list(dict.fromkeys([*spec.metrics, *interval_metrics])),
        quantile_levels=own_levels,
        crps_kind="approx_quantiles",
    )
    leaderboards: list[dict[str, Any]] = []
    intervals: list[dict[str, Any]] = []
    for unit, dc, rows, bl in tables:
        leaderboards.extend(_one_class(rows, bl, spec, unit=unit, demand_class=dc, display=display))
        intervals.append(
            _one_interval_table(
                rows, bl, unit=unit, demand_class=dc, point_metric=point, min_cell=spec.min_cell, spec=spec
            )
        )
        del rows, bl  # before the next class's rows are gathered
    return leaderboards, intervals


def interval_tables(
    table: pd.DataFrame,
    *,
    point_metric: str = "mase",
    quantile_levels: tuple[float, ...] = (),
    min_cell: int = 30,
    spec: LeaderboardSpec | None = None,
) -> list[dict[str, Any]]:
    r"""Coverage and MSIS of the conformal bands per model, per unit × demand class, and the cell's inventory
    simulation where ``spec`` is given (its random walk, service level, lead time, review period and policy;
    :func:`tycheon.analysis.inventory.inventory_table`; else ``inventory`` is null with the reason).

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
    is ``"crps"`` (approximate CRPS of the models' own quantiles). A cell with fewer than ``min_cell``
    scored blocks names no ranking (:func:`tycheon.analysis.cell.cell_check`; ``cell_*`` fields).

    References
    ----------
    Gneiting & Raftery (2007), eq. (43); Makridakis, Spiliotis & Assimakopoulos (2020), eq. (3);
    evaluation-choices paper, Table 5.
    """
    metrics = [point_metric, "msis80", "msis95"]
    own_levels = quantile_levels if point_metric == "crps" else ()  # own quantiles only for a CRPS ranking
    tables = _unit_class_tables(
        table,
        _read_columns(table, own_levels),
        [c for c in _CLASS_COLUMNS if c in table.columns],  # what a class's coverage and inventory read
        metrics=metrics,
        quantile_levels=own_levels,
        crps_kind="approx_quantiles",
    )
    out = []
    for unit, dc, rec, bl in tables:
        out.append(
            _one_interval_table(
                rec, bl, unit=unit, demand_class=dc, point_metric=point_metric, min_cell=min_cell, spec=spec
            )
        )
        del rec, bl  # before the next class's rows are gathered
    return out
