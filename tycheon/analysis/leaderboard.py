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

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from tycheon._codes import factorize_sorted, position_dtype, sorted_codes, unique_inverse
from tycheon._frames import row_slice, row_spans
from tycheon._typing import Alternative
from tycheon.analysis.blockgrid import block_grid
from tycheon.analysis.cell import MIN_TIME_POINTS, cell_check, time_check
from tycheon.analysis.relative import RELATIVE_TEXT, Relative, relative_to_reference
from tycheon.backtest.scoreset import key_order, take_rows
from tycheon.contract import overlap_lags, quantile_column
from tycheon.errors import InputError, MetricInputError
from tycheon.metrics.aggregate import (
    BAND_GRIDS,
    STEP_LOSS_CHUNK,
    block_scores_by_model,
    row_crps,
    row_scales,
    step_loss,
    summarize,
)
from tycheon.metrics.registry import get_metric
from tycheon.stats.dm import DMResult, PanelLayout, PooledLayout, dm_panel, dm_pooled
from tycheon.stats.friedman import conservative_cd, friedman_nemenyi
from tycheon.stats.multiplicity import benjamini_hochberg
from tycheon.stats.ranking import rank_by_mean, spearman_test
from tycheon.stats.verdict import Adjustment, family_verdicts

__all__ = [
    "DEMAND_CLASSES",
    "LeaderboardSpec",
    "columns_read",
    "interval_tables",
    "leaderboard_and_interval_tables",
    "leaderboard_tables",
]

DEMAND_CLASSES = ("all", "smooth", "erratic", "intermittent", "lumpy")
_STEP_KEYS = ["series_id", "origin", "step"]
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


def _runs(sorted_values: pd.Series) -> list[tuple[Any, int, int]]:
    """``(value, start, stop)`` of each run of equal values of a sorted column (each value is one run)."""
    codes, uniques = pd.factorize(sorted_values)
    edges = np.flatnonzero(np.diff(codes)) + 1
    starts = np.concatenate([[0], edges]).astype(np.int64)
    stops = np.concatenate([edges, [len(codes)]]).astype(np.int64)
    return [(uniques[codes[a]], int(a), int(b)) for a, b in zip(starts, stops, strict=True)] if len(codes) else []


def _unit_class_tables(
    table: pd.DataFrame, columns: list[str], class_columns: list[str] | None = None, **block_kwargs: Any
) -> Iterator[tuple[Any, str, pd.DataFrame, pd.DataFrame]]:
    """``(unit, demand class, rows, blocks)`` for every unit and its classes (``all`` first), the rows of
    ``columns`` in key order (unit, model, series, origin, step), so that sums, and so every number, do
    not depend on the input's row order.

    Memory: a unit's rows are one gather of only ``columns``; its block scores are computed one model at
    a time (:func:`~tycheon.metrics.aggregate.block_scores_by_model`); each demand class's rows (of
    ``class_columns``, default ``columns``) are then one gather from ``table`` itself, after the unit's
    rows are released, so only one class's copy is alive at a time. A caller that ``del``-s its ``rows``
    at the end of each step keeps it so.
    """
    order = key_order(table)
    order = order.astype(position_dtype(len(order)), copy=False)  # int32 up to 2**31 rows
    for unit, start, stop in _runs(table["unit"].take(order)):
        positions = order[start:stop]
        rows = take_rows(table, positions, columns)
        blocks = block_scores_by_model(rows, categorical_keys=True, **block_kwargs)
        classes = _classes(rows)
        dc = rows["demand_class"]
        by_class = {c: positions[np.flatnonzero((dc == c).to_numpy())] for c in classes[1:]}
        del dc
        yield unit, "all", rows, blocks
        del rows
        for c in classes[1:]:
            rows = take_rows(table, by_class.pop(c), columns if class_columns is None else class_columns)
            yield unit, c, rows, blocks[blocks["demand_class"] == c]
            del rows


def _classes(table: pd.DataFrame) -> list[str]:
    present = set(table["demand_class"].unique())
    return ["all"] + [c for c in DEMAND_CLASSES[1:] if c in present]


@dataclass(frozen=True, eq=False)
class _StepGrid:
    """Where each score-set row sits in the ``[(series, origin, step), model]`` grid of one table.

    Built once per (unit, demand class); every per-step loss of the table is then placed with one
    scatter instead of a ``pivot_table`` per loss (same rows, same order, a fraction of the memory). The
    grid's keys are the unique (series_id, origin, step) in lexicographic order; ``series`` / ``origin``
    give each key's codes in sorted label order, from which every DM test's block layout is read
    (:meth:`layout`) instead of from the labels again.
    """

    row: np.ndarray  # [table row] -> key
    col: np.ndarray  # [table row] -> model
    models: np.ndarray  # [model], sorted
    series: np.ndarray  # [key] series code (sorted labels)
    origin: np.ndarray  # [key] origin code (sorted labels)
    n_origins: int
    layouts: dict[bytes, PooledLayout] = field(default_factory=dict)
    panels: dict[bytes, tuple[PanelLayout, int]] = field(default_factory=dict)

    @property
    def n_keys(self) -> int:
        return len(self.series)

    def n_blocks(self) -> int:
        """Distinct (series, origin) blocks among the keys: the minimum cell's count."""
        return int(np.unique(self.series * self.n_origins + self.origin).size)

    def n_origins_present(self, origin: np.ndarray | None = None) -> int:
        """Distinct origins among the codes ``origin`` (every key's by default): a test over time's points."""
        return int(np.count_nonzero(np.bincount(self.origin if origin is None else origin, minlength=self.n_origins)))

    def panel(self, keep: np.ndarray) -> tuple[PanelLayout, int]:
        """:func:`tycheon.stats.dm.panel_layout` of the keys ``keep`` (their origin codes, in time order)
        and how many distinct origins they hold, built once per distinct mask (every DM test of a table
        against one model shares it)."""
        tag = np.packbits(keep).tobytes()
        if tag not in self.panels:
            origin = np.asarray(self.origin[keep], dtype=np.int64)
            self.panels[tag] = (PanelLayout(origin, self.n_origins), self.n_origins_present(origin))
        return self.panels[tag]

    def layout(self, keep: np.ndarray) -> PooledLayout:
        """:func:`tycheon.stats.dm.pooled_layout` of the keys ``keep`` (a boolean ``[key]`` mask), built
        once per distinct mask: the (series, origin) blocks numbered in sorted order, as from the labels
        (codes of sorted labels order the blocks the same way; a block's series code differs from the
        one a factorisation of the kept labels would give, but only equality of series is read)."""
        tag = np.packbits(keep).tobytes()
        if tag not in self.layouts:
            key = self.series[keep] * self.n_origins + self.origin[keep]
            uniq, block = np.unique(key, return_inverse=True)
            self.layouts[tag] = PooledLayout(block.astype(np.int64), uniq // self.n_origins, len(uniq))
        return self.layouts[tag]


def _step_grid(table: pd.DataFrame) -> _StepGrid:
    # key = (series * n_origins + origin) * n_steps + step, built in place one code column at a time (each
    # int64 temporary is 117 MB at M5 size: the expression form held five of them at once)
    key, sizes = None, []
    for k in _STEP_KEYS:
        c, n = sorted_codes(table[k])
        if key is None:
            key = c
        else:
            key *= n
            key += c
        del c
        sizes.append(n)
    assert key is not None
    # the keys' space is series x origins x steps: at most a few times the rows, so the distinct keys are
    # marked in it rather than sorted (tycheon._codes; the same arrays as np.unique); positions in the
    # narrowest integers that hold them (at M5 size two int64 row columns were 240 MB)
    uniq, row = unique_inverse(key, size=sizes[0] * sizes[1] * sizes[2], compact=True)
    del key
    s, rest = np.divmod(uniq, sizes[1] * sizes[2])
    col, models = factorize_sorted(table["model"])
    col = col.astype(position_dtype(len(models)), copy=False)
    return _StepGrid(row=row, col=col, models=np.asarray(models), series=s, origin=rest // sizes[2], n_origins=sizes[1])


@dataclass(frozen=True, eq=False)
class _Losses:
    """Per-step values of one loss on a step grid, ``[key, model]`` (NaN where a model has no value). A
    model with no value at all counts as absent, as a ``pivot_table`` would leave its column out."""

    grid: _StepGrid
    values: np.ndarray  # [key, model], column-major: each model's losses are contiguous
    present: dict[str, int]  # model -> column of ``values``, models with at least one value
    finite: np.ndarray  # [key, model] ~isnan(values), read by every test of the model
    tested: dict[tuple[str, str, str, str], tuple[DMResult | None, str | None]] = field(default_factory=dict)
    """DM results on these losses by (model, against, alternative, inference): the CRPS grids are tested against
    the random walk once per metric of a table with the same result, so each test runs once."""

    def n_keys_with_value(self) -> int:
        return int(self.finite.any(axis=1).sum())


def _pivot(grid: _StepGrid, values: pd.Series | np.ndarray) -> _Losses:
    """Per-step values placed on the grid ``[(series, origin, step), model]``, stored column by column
    (a model's column is read whole by each of its DM tests: 1,600 of them at M5 size)."""
    arr = np.full((grid.n_keys, len(grid.models)), np.nan, order="F")
    arr[grid.row, grid.col] = np.asarray(values, dtype=np.float64)
    return _losses(grid, arr)


def _pivot_loss(grid: _StepGrid, table: pd.DataFrame, metric: str, *, crps: np.ndarray | None = None) -> _Losses:
    """``_pivot(grid, step_loss(table, metric, crps=crps))``, the loss evaluated and placed a block of
    :data:`~tycheon.metrics.aggregate.STEP_LOSS_CHUNK` rows at a time: the same grid (each key and model
    is one row), without the ``[row]`` loss array beside it (117 MB for the series unit at M5 size)."""
    arr = np.full((grid.n_keys, len(grid.models)), np.nan, order="F")
    for a, b in row_spans(len(table), STEP_LOSS_CHUNK):
        part = step_loss(row_slice(table, a, b), metric, crps=None if crps is None else crps[a:b])
        arr[grid.row[a:b], grid.col[a:b]] = part
    return _losses(grid, arr)


def _losses(grid: _StepGrid, arr: np.ndarray) -> _Losses:
    finite = ~np.isnan(arr)
    has = finite.any(axis=0)
    return _Losses(grid, arr, {str(m): j for j, m in enumerate(grid.models) if has[j]}, finite)


def _band_grid(table: pd.DataFrame) -> int:
    """The band level whose quantile grid the table's CRPS uses: 95 where any row has a 95% band, else 80."""
    return 95 if bool((table["lo95"].notna().to_numpy() & table["hi95"].notna().to_numpy()).any()) else 80


def _band_crps(table: pd.DataFrame, level: int) -> pd.Series:
    """CRPS of each row's conformal bands read as quantiles on the grid of ``level`` (NaN where a row
    lacks one of the bands of that grid): :func:`tycheon.metrics.aggregate.row_crps`, ``band_quantiles``."""
    return pd.Series(row_crps(table, crps_kind="band_quantiles", band_level=level).values, index=table.index)


def _own_crps(table: pd.DataFrame, levels: tuple[float, ...]) -> pd.Series:
    """CRPS of the model's own quantiles per row (NaN where the row has none, or the spec asks for fewer
    than two levels or levels the table lacks)."""
    if len(levels) < 2 or any(quantile_column(q) not in table.columns for q in levels):
        return pd.Series(np.full(len(table), np.nan), index=table.index)
    return pd.Series(row_crps(table, quantile_levels=levels, crps_kind="approx_quantiles").values, index=table.index)


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
    group-by took 4 s of a table set's 32 at M5 size), else by that ``pivot_table``."""
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


_SCORED_KEYS = ("model", "series_id", "origin")
"""The block columns a leaderboard cell reads beside its metric (counts, the wide grid, the summary)."""

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
        # the blocks with this metric, of only the columns read below (every block column was copied:
        # 0.4 GB for the series unit at M5 size, alive beside its loss grids)
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
            dm_loss=_loss_label(metric),
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


_NOT_TESTED = "not a mean of per-step losses (the table ranks the size of the cell's mean): no DM test"

RANKING_TEXT = {
    "gmean_rel_rw": (
        "ranked by the geometric mean of per-block errors relative to the random walk (one huge block cannot "
        "decide it, where a mean of scaled errors is decided by its largest blocks; Davydenko & Fildes 2013, "
        "fev-bench); the arithmetic mean, median and Friedman mean rank are shown beside it"
    ),
    "pooled": (
        "ranked by the cell's pooled ratio sum |e| / sum |y| over every scored step (a ratio of sums, so a "
        "block with small actuals cannot inflate it as a mean of per-block ratios does)"
    ),
    "abs_mean": "ranked by the size of the cell's mean scaled bias (0 is best; the sign says over or under)",
    "mean": (
        "ranked by the arithmetic mean over blocks (the random walk has no score in this table, so no relative "
        "error can be formed)"
    ),
}
"""Why a table ranks as it does, by its ranking rule (``tests.ranking``), as pages state it."""

ZERO_FORECAST_SHARE = 0.5
"""A model whose point forecast is exactly 0 on at least this share of the steps of series with positive
demand in the cell is flagged "mostly zero forecasts"."""

ZERO_FORECAST_TEXT = (
    "share of steps, over the series of the cell with any positive actual, whose point forecast is 0; flagged "
    "at 50% or more: a median-consistent loss (MAE, MASE, WAPE) rewards forecasting zero on intermittent "
    "demand (the median of such a series is usually 0), which leaves a planner under-stocked (Kolassa 2016)"
)


def _zero_forecast_share(table: pd.DataFrame) -> dict[str, float]:
    """Per model, the share of its steps with a zero point forecast among the series of the cell that have a
    positive actual (:data:`ZERO_FORECAST_TEXT`); models without such steps are left out."""
    series, _ = factorize_sorted(table["series_id"])
    positive = (
        np.bincount(
            series,
            weights=(table["actual"].to_numpy(dtype=np.float64) > 0),
            minlength=series.max() + 1 if len(series) else 0,
        )
        > 0
    )
    rows = positive[series] if len(series) else np.zeros(0, dtype=bool)
    zero = table["point"].to_numpy(dtype=np.float64) == 0.0
    n = _model_counts(table, rows)
    hits = _model_counts(table, rows, zero.astype(np.float64)[rows])
    return {str(m): float(hits.get(m, 0.0) / v) for m, v in n.items() if v > 0}


def _zero_flag(share: float | None) -> bool | None:
    return None if share is None else bool(share >= ZERO_FORECAST_SHARE)


def _pooled_ratio(table: pd.DataFrame, models: list[str]) -> dict[str, float]:
    """Per model, sum |e| / sum |y| over all its steps of the cell (WAPE pooled per cell); NaN where the
    actuals sum to 0."""
    y = table["actual"].to_numpy(dtype=np.float64)
    every = np.ones(len(table), dtype=bool)
    num = _model_counts(table, every, np.abs(table["point"].to_numpy(dtype=np.float64) - y))
    den = _model_counts(table, every, np.abs(y))
    out = {}
    for m in models:
        d = float(den.get(m, 0.0))
        out[m] = float(num.get(m, np.nan)) / d if d > 0 else float("nan")
    return out


def _relative(wide: pd.DataFrame, spec: LeaderboardSpec, *, interval: bool = True) -> dict[str, Relative]:
    """:func:`tycheon.analysis.relative.relative_to_reference` against the random walk; empty where the
    random walk has no block in the table."""
    if spec.random_walk not in wide.columns:
        return {}
    return relative_to_reference(
        wide, reference=spec.random_walk, horizon=spec.horizon, stride=spec.stride, interval=interval
    )


def _skill_reason(rel: Relative | None, cell_reason: str | None) -> str | None:
    """Why a row's skill has no interval: the minimum cell's reason, the relative error's, or None."""
    if rel is None:
        return "no blocks of the random walk"
    if rel.reason is None and rel.skill_low is None and cell_reason is not None:
        return cell_reason
    return rel.reason


def _ranking(rank_by: str, relative: dict[str, Relative]) -> str:
    """The rule a table ranks by: its metric's, or the mean where the relative error cannot be formed."""
    return "mean" if rank_by == "gmean_rel_rw" and not relative else rank_by


def _headline_values(
    ranking: str, means: dict[str, float], pooled: dict[str, float], relative: dict[str, Relative], models: list[str]
) -> dict[str, float]:
    """Per model, the value the table ranks on (lower is better; NaN ranks last)."""
    nan = float("nan")
    if ranking == "gmean_rel_rw":
        gmeans = {m: relative[m].gmean if m in relative else None for m in models}
        return {m: nan if g is None else float(g) for m, g in gmeans.items()}
    if ranking == "pooled":
        return {m: pooled.get(m, nan) for m in models}
    if ranking == "abs_mean":
        return {m: abs(means[m]) for m in models}
    return {m: means[m] for m in models}


def _runner_up(
    rows: list[dict[str, Any]], loss: _Losses | None, spec: LeaderboardSpec, winner: str | None
) -> dict[str, Any]:
    """The runner-up and whether the winner is tied with it: a two-sided panel-robust DM test of the two on
    the table's loss (one test, no adjustment); tied where its p is at least ``spec.alpha``, else
    ``runner_up_lower_loss`` names the one with the lower mean loss (the table ranks on the relative error,
    which can order the two the other way)."""
    out: dict[str, Any] = {
        "runner_up": None,
        "runner_up_p": None,
        "runner_up_tied": None,
        "runner_up_lower_loss": None,
        "runner_up_reason": None,
    }
    if winner is None or len(rows) < 2:
        out["runner_up_reason"] = "no winner named" if winner is None else "one model"
        return out
    out["runner_up"] = rows[1]["model"]
    if loss is None:
        out["runner_up_reason"] = _NOT_TESTED
        return out
    res, why = _dm(loss, winner, rows[1]["model"], spec=spec, alternative="two-sided")
    if res is None or not np.isfinite(res.p_value):
        out["runner_up_reason"] = why or "the test gave no p-value"
        return out
    out["runner_up_p"] = float(res.p_value)
    out["runner_up_tied"] = bool(res.p_value >= spec.alpha)
    if not out["runner_up_tied"]:  # which has the lower mean loss: the ranking rule need not agree with the mean
        out["runner_up_lower_loss"] = winner if res.statistic < 0 else rows[1]["model"]
    return out


TRIM_SHARE = 0.01
"""The share of a table's blocks (largest first) removed to check that no few blocks decide its winner."""


def _trimmed(
    table: pd.DataFrame,
    wide: pd.DataFrame,
    size: pd.DataFrame,
    ranking: str,
    models: list[str],
    spec: LeaderboardSpec,
    winner: str | None,
) -> dict[str, Any]:
    """The winner by the table's own rule after removing the top :data:`TRIM_SHARE` of blocks (at least one),
    the blocks with the largest score of any model; ``winner_trimmed_differs`` says when one block or a few
    decide the table."""
    out: dict[str, Any] = {
        "trim_share": TRIM_SHARE,
        "trimmed_blocks": None,
        "winner_trimmed": None,
        "winner_trimmed_differs": None,
    }
    if winner is None or len(size) < 2:
        return out
    k = max(1, int(np.ceil(TRIM_SHARE * len(size))))
    worst = np.nan_to_num(size.reindex(columns=models).to_numpy(dtype=np.float64), nan=-np.inf).max(axis=1)
    drop = np.argsort(-worst, kind="stable")[:k]
    keep = np.ones(len(size), dtype=bool)
    keep[drop] = False
    kept_wide = wide[keep]
    nan = float("nan")
    if ranking == "gmean_rel_rw":
        rel = _relative(kept_wide, spec, interval=False)
        values = _headline_values(ranking, {}, {}, rel, models)
    elif ranking == "pooled":
        dropped = size.index[drop]
        blocks = pd.MultiIndex.from_arrays([table["series_id"].astype(object), table["origin"]])
        rows = table[~blocks.isin(dropped)]
        values = _pooled_ratio(rows, models) if len(rows) else dict.fromkeys(models, nan)
    else:
        means = {
            m: float(np.nanmean(kept_wide[m].to_numpy(dtype=np.float64))) if m in kept_wide else nan for m in models
        }
        values = _headline_values(ranking, means, {}, {}, models)
    order = sorted(models, key=lambda m: (np.isnan(values[m]), values[m], m))
    out.update(trimmed_blocks=k, winner_trimmed=order[0], winner_trimmed_differs=order[0] != winner)
    return out


def _by_model(values: pd.Series) -> dict[str, float]:
    """A per-model Series as ``{model: float}``."""
    return {str(m): float(v) for m, v in values.items()}


def _loss_label(metric: str) -> str:
    """Plain words for the per-step loss a test on a table of ``metric`` compares."""
    spec = get_metric(metric)
    return {
        "mase": "absolute error / MASE scale",
        "rmsse": "squared error / RMSSE scale squared",
        "mae": "absolute error",
        "rmse": "squared error",
        "wape": "absolute error",
        "crps": "CRPS of the model's own quantiles",
    }.get(metric, f"per-step {spec.display_name}")


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
    tests). At M5 size the second pass was 9-10 s of gathers and block scores. ``point_metric`` (default
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


def _model_counts(rows: pd.DataFrame, mask: np.ndarray, weights: np.ndarray | None = None) -> pd.Series:
    """Per model (sorted), the number of ``rows`` where ``mask`` holds, or the sum of ``weights`` over
    them; models with no such row are left out (as a ``groupby`` of the masked rows leaves them out)."""
    codes, models = factorize_sorted(rows["model"])
    n = np.bincount(codes[mask], minlength=len(models))
    values = n if weights is None else np.bincount(codes[mask], weights=weights, minlength=len(models))
    keep = n > 0
    return pd.Series(values[keep], index=pd.Index(models[keep], name="model"))


def _record_coverage(rows: pd.DataFrame, level: str) -> pd.Series:
    """Per model, the share of records with a band whose actual lies in the closed band."""
    lo, hi, y = (rows[c].to_numpy(dtype=np.float64) for c in (f"lo{level}", f"hi{level}", "actual"))
    banded = np.isfinite(lo) & np.isfinite(hi)
    inside = ((lo <= y) & (y <= hi))[banded].astype(np.float64)
    hits = _model_counts(rows, banded, inside)
    return hits / _model_counts(rows, banded)  # 0/1 sums are exact: the groupby mean, bit for bit


_CLASS_COLUMNS = (
    *("model", "series_id", "origin", "step", "target_period", "has_band", "actual", "point"),
    *("lo80", "hi80", "lo95", "hi95"),
)
"""The columns a class's coverage and inventory simulation read (those a table has)."""


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


def _inventory(rec: pd.DataFrame, spec: LeaderboardSpec | None) -> dict[str, Any]:
    """The cell's inventory outcome (:func:`tycheon.analysis.inventory.inventory_table` at the spec's service
    level, lead time, review period and policy), or why there is none."""
    from tycheon.analysis.inventory import COLUMNS, inventory_table

    if spec is None:
        return {"inventory": None, "inventory_reason": "no leaderboard spec (random walk, service level) given"}
    lacking = [c for c in COLUMNS if c not in rec.columns]
    if lacking:
        return {"inventory": None, "inventory_reason": f"the score set lacks {lacking}"}
    banded = rec["has_band"].to_numpy(dtype=bool) if "has_band" in rec.columns else np.ones(len(rec), dtype=bool)
    if not banded.any():
        return {"inventory": None, "inventory_reason": "no model has a calibrated band in this cell"}
    try:
        table = inventory_table(
            rec[list(COLUMNS)],  # an "all" cell holds several demand classes: the simulation reads none
            random_walk=spec.random_walk,
            target=spec.service_level,
            lead_time=spec.lead_time,
            review_period=spec.review_period,
            lost_sales=spec.lost_sales,
            min_cell=spec.min_cell,
        )
    except InputError as err:
        return {"inventory": None, "inventory_reason": str(err)}
    if not table["n_series_periods"]:
        why = f"no period has an order-up-to level at {spec.service_level:g} from every model (bands too narrow a grid)"
        return {"inventory": None, "inventory_reason": why}
    return {"inventory": table, "inventory_reason": None}


def _one_interval_table(
    rec: pd.DataFrame,
    bl: pd.DataFrame,
    *,
    unit: str,
    demand_class: str,
    point_metric: str,
    min_cell: int,
    spec: LeaderboardSpec | None = None,
) -> dict[str, Any]:
    """The interval table of one (unit, demand class): its records ``rec`` (at least the model, band and
    actual columns) and its blocks ``bl`` (with ``point_metric``, ``msis80`` and ``msis95``). Below the
    minimum cell (:func:`tycheon.analysis.cell.cell_check` on the cell's blocks) the coverage and MSIS are
    shown but no ranking is named."""
    metrics = [point_metric, "msis80", "msis95"]
    cell = cell_check(int(bl[["series_id", "origin"]].drop_duplicates().shape[0]), min_cell=min_cell)
    n_rec = _model_counts(rec, rec["has_band"].to_numpy(dtype=bool))
    cover = {level: _record_coverage(rec, level) for level in ("80", "95")}
    s = summarize(bl, metrics=metrics, by=["model"]).set_index("model")
    point_rank = rank_by_mean(_by_model(s[f"{point_metric}_mean"]))
    interval_metric = "msis95" if np.isfinite(s["msis95_mean"]).all() else "msis80"
    msis_rank = rank_by_mean(_by_model(s[f"{interval_metric}_mean"]))
    rows = [
        {
            "model": m,
            "n_records": int(n_rec.get(m, 0)),
            "coverage80": _or_none(cover["80"].get(m)),
            "coverage95": _or_none(cover["95"].get(m)),
            "msis80": s.at[m, "msis80_mean"],
            "msis95": s.at[m, "msis95_mean"],
            "rank_point": point_rank[m] if cell.ok else None,
            "rank_interval": msis_rank[m] if cell.ok else None,
        }
        for m in s.index
    ]
    compared = _point_vs_interval(s, point_metric, interval_metric, point_rank, msis_rank)
    if not cell.ok:
        compared = {k: (v if k == "interval_metric" else None) for k, v in compared.items()}
    return {
        "unit": unit,
        "demand_class": demand_class,
        "band": "conformal",
        "rows": rows,
        **compared,
        **cell.as_tests(),
        **_inventory(rec, spec),
    }


def _point_vs_interval(
    s: pd.DataFrame, point_metric: str, interval_metric: str, point_rank: dict[str, int], msis_rank: dict[str, int]
) -> dict[str, Any]:
    """Spearman between the point and interval rankings over the models that have both scores."""
    both = s.index[np.isfinite(s[f"{point_metric}_mean"]) & np.isfinite(s[f"{interval_metric}_mean"])]
    if len(both) < 3:
        return {
            "interval_metric": interval_metric,
            "point_vs_interval_spearman": None,
            "point_vs_interval_p": None,
            "max_move": None,
        }
    rho, p = spearman_test([point_rank[m] for m in both], [msis_rank[m] for m in both])
    return {
        "interval_metric": interval_metric,
        "point_vs_interval_spearman": _or_none(rho),
        "point_vs_interval_p": _or_none(p),
        "max_move": int(max(abs(point_rank[m] - msis_rank[m]) for m in both)),
    }


def _or_none(x: Any) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)
