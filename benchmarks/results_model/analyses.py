"""The analyses block of a results document (issue 16): how much the answer moves, one table type per
analysis of :mod:`tycheon.analysis`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, create_model

from benchmarks.results_model.base import DemandClass, Num, Prob, Slug, _Model


class InversionColumnRow(_Model):
    """One unit read as a column of the evaluation-choices paper's Table 1 (ranks: 1 = best)."""

    unit: str
    n_series: int = Field(ge=0)
    n_origins: int = Field(ge=0)
    n_models: int = Field(ge=0)
    n_blocks: int = Field(ge=0)
    baseline_rank: dict[str, int | None] = Field(description="Metric -> the production baseline's rank by mean.")
    random_walk_rank: dict[str, int | None]
    n_better: int = Field(ge=0, description="Models significantly better than the baseline (pooled DM, BH).")
    n_worse: int = Field(ge=0)
    n_tested: int = Field(ge=0)
    n_pooled_losses: int = Field(ge=0, description="Per-step losses of the baseline pooled by the DM tests.")
    shared_baseline_rank: dict[str, int | None] = Field(description="Rank on the shared roster and origins.")
    shared_n_models: int = Field(ge=0)
    shared_n_origins: int = Field(ge=0)
    weighted_baseline_rank: dict[str, int | None] = Field(description="Rank on volume-weighted block means.")
    cross_sectional_better: int = Field(ge=0, description="Significantly better by the cross-sectional DM.")
    cross_sectional_worse: int = Field(ge=0)
    cross_sectional_tested: int = Field(ge=0)
    n_periods: int = Field(ge=0)


class InversionTable(_Model):
    """Unit-of-analysis inversion of one dataset (tycheon.analysis.inversion; paper Table 1)."""

    dataset: str
    protocol: Slug
    baseline: Slug
    random_walk: Slug
    metrics: list[str]
    inverted: bool | None = Field(
        description=("Baseline in the top two at the most aggregated unit and bottom three per series (first metric).")
    )
    columns: list[InversionColumnRow]


class DialPointRow(_Model):
    unit: str
    k: int = Field(ge=1)
    series_per_group: float
    n_blocks: int = Field(ge=0)
    n_models: int = Field(ge=0)
    baseline_rank: dict[str, int | None] = Field(description="Convention -> rank (median_wape, mean_rmsse, friedman).")
    smooth_share: Num


class DialCurveRow(_Model):
    kind: Literal["size", "random", "hierarchy"]
    points: list[DialPointRow]
    spearman_log_k: dict[str, Num] = Field(description="Convention -> Spearman of rank vs log k (null: flat).")
    never_improves: dict[str, bool]
    max_rank_change: dict[str, int]


class DialTable(_Model):
    """The aggregation dial of one dataset (tycheon.analysis.dial; paper Table 3, Figure 1)."""

    dataset: str
    protocol: Slug
    baseline: Slug
    n_series: int = Field(ge=1)
    curves: list[DialCurveRow]
    models: list[Slug] | None = Field(
        None, description="The models the dial covers where the config restricts it (analysis_models); absent: all."
    )


class ClassLeaderRow(_Model):
    model: Slug
    value: Num


class ClassWinnerRow(_Model):
    demand_class: DemandClass
    n_blocks: int = Field(ge=0)
    top: list[ClassLeaderRow]
    baseline_rank: int | None
    baseline_value: Num
    n_models: int = Field(ge=0)
    cell_ok: bool | None = Field(
        default=None,
        description="Whether the class reaches the minimum cell (WP26 section 6); if not, top is empty and no "
        "leader or baseline rank is named. Null: written before the rule.",
    )
    cell_count: int | None = Field(default=None, ge=0, description="Scored blocks of the class (what the cell counts).")
    cell_reason: str | None = Field(default=None, description="Why the class names no leader; null if it does.")


class ClassWinnersTable(_Model):
    """Winner per demand class (tycheon.analysis.class_winners; paper Table 4)."""

    dataset: str
    protocol: Slug
    unit: str
    metric: str
    baseline: Slug
    pooled_winner: Slug | None = Field(description="Best mean over every block; null below the minimum cell.")
    pooled_value: Num
    pooled_winner_leads: int = Field(ge=0, description="Classes passing the minimum cell that it leads.")
    n_classes: int = Field(
        ge=0,
        description="Named classes that pass the minimum cell and name a leader (tables without cell_ok: all present).",
    )
    distinct_winners: int = Field(ge=0)
    rows: list[ClassWinnerRow]
    class_counts: dict[str, int]
    adi_cutoff: float
    cv2_cutoff: float
    cell_ok: bool | None = Field(default=None, description="Whether the pooled cell reaches the minimum cell.")
    cell_count: int | None = Field(default=None, ge=0, description="Scored blocks of the pooled cell.")
    cell_counts: str | None = Field(default=None, description="What the minimum cell counts (the counting unit).")
    min_cell: int | None = Field(default=None, ge=0, description="The minimum cell (WP26 section 6).")
    cell_reason: str | None = Field(default=None, description="Why no pooled winner is named; null if it is.")


class UncertaintyRow(_Model):
    model: Slug
    mean: Num
    mean_low: Num
    mean_high: Num
    delta: Num = Field(description="Mean difference to the baseline on the blocks both scored; null for it.")
    delta_low: Num
    delta_high: Num
    delta_p: Prob
    rank: int | None
    keep_fraction: Prob = Field(
        description="Share of resamples (the table's resample design) in which the model keeps its place."
    )
    rank_low: int | None
    rank_high: int | None
    dm_p: Prob = Field(description="DM p-value against the baseline (the table's dm_test; absent: pooled).")
    dm_p_bh: Prob
    dm_p_holm: Prob
    mcs_p: Prob
    in_mcs: bool | None


class UncertaintyTable(_Model):
    """Bootstrap CIs, ranking stability, Holm beside BH and the model confidence set of one leaderboard
    (tycheon.analysis.uncertainty; WP26 section 4.1). Files written before ``dm_test`` was recorded used
    (series, origin) blocks drawn independently, the pooled DM on absolute errors and an MCS on scaled
    absolute (squared for rmsse) errors."""

    dataset: str
    protocol: Slug
    unit: str
    demand_class: DemandClass = "all"
    metric: str
    baseline: Slug
    resample: Literal["block", "series", "origin"] = Field(
        description="origin: circular blocks of ceil(h/stride) origins, each with every series (panel bootstrap); "
        "series / block: whole series or (series, origin) blocks drawn independently (assume series independent)."
    )
    n_resamples: int = Field(ge=1)
    confidence: float
    n_blocks: int = Field(ge=0)
    n_complete_blocks: int = Field(ge=0)
    mcs_size: float
    mcs_n_periods: int = Field(ge=0)
    mcs_reason: str | None
    loss: str | None = Field(
        default=None, description="Registry metric whose per-step loss the DM family and the MCS compare."
    )
    n_origins: int | None = Field(default=None, ge=0, description="Origins with a scored block.")
    block_length: int | None = Field(
        default=None, ge=1, description="Consecutive origins per resampled run (origin); 1 for series / block."
    )
    interval_reason: str | None = Field(
        default=None, description="Why there is no interval, bootstrap p or rank interval (too few origins)."
    )
    dm_test: Literal["panel", "pooled"] | None = Field(
        default=None, description="DM test of the family: panel (over origins; nothing assumed across series)."
    )
    dm_reason: str | None = Field(default=None, description="Why no DM test was run (too few origins).")
    rows: list[UncertaintyRow]


class HorizonTable(_Model):
    """Ranks per horizon step and short vs long agreement (tycheon.analysis.horizon)."""

    dataset: str
    protocol: Slug
    unit: str
    metric: str
    steps: list[int]
    rank_by_step: dict[str, list[int]]
    short_steps: list[int]
    long_steps: list[int]
    rank_short: dict[str, int]
    rank_long: dict[str, int]
    spearman: Num
    spearman_p: Prob
    max_move: int = Field(ge=0)
    max_move_model: Slug | None


class SweepPointRow(_Model):
    spikiness: float
    n_models: int = Field(ge=0)
    total_rank: int | None
    series_rank: int | None
    total_better: int = Field(ge=0)
    series_better: int = Field(ge=0)
    series_smooth_share: Num
    inverted: bool


class SweepTable(_Model):
    """The spikiness sweep of a synthetic dataset (tycheon.analysis.sweep)."""

    dataset: str
    protocol: Slug
    baseline: Slug
    metric: str
    n_entities: int = Field(ge=1)
    points: list[SweepPointRow]
    models: list[Slug] | None = Field(
        None, description="The models the sweep covers where the config restricts it (analysis_models); absent: all."
    )


class RelativeErrorRow(_Model):
    dataset: str
    model: Slug
    gmre: Num = Field(description="Geometric-mean relative error; null below the minimum cell.")
    low: Num
    high: Num
    n_blocks: int = Field(ge=0, description="Paired blocks with both metrics positive (what the cell counts).")
    n_excluded: int = Field(ge=0)
    cell_ok: bool | None = Field(default=None, description="Whether n_blocks reaches the minimum cell.")
    cell_reason: str | None = Field(default=None, description="Why no value is given; null if it is.")


class AcrossModelRow(_Model):
    model: Slug
    n_cells: int = Field(ge=0, description="Cells passing the minimum cell in which the model is scored.")
    wins: int = Field(ge=0)
    win_rate: Num = Field(description="wins / n_cells; null without any such cell.")
    beats_random_walk_cells: int = Field(ge=0)
    verdict_cells: int = Field(ge=0)
    gmre_overall: Num
    gmre: list[RelativeErrorRow]
    n_cells_below_min: int | None = Field(
        default=None, ge=0, description="Cells in which the model is scored that are below the minimum cell."
    )
    ranked: bool | None = Field(
        default=None,
        description="Scored in every eligible cell, so ranked on the common cells; null before the rule (issue 35).",
    )
    rank: int | None = Field(
        default=None, ge=1, description="Rank by cells won or tied among the ranked models; null when not ranked."
    )
    n_eligible: int | None = Field(
        default=None, ge=0, description="Eligible cells: the model's coverage is n_cells of n_eligible."
    )
    reason: str | None = Field(default=None, description="Why the model is not ranked; null when it is.")


class AcrossTable(_Model):
    """Across datasets (tycheon.analysis.across): win rate, verdict cells, relative error vs the random walk."""

    metric: str
    random_walk: Slug
    n_cells: int = Field(
        ge=0,
        description="Cells of the metric that pass the minimum cell (all, before the rule) and score the random walk.",
    )
    datasets: list[str]
    models: list[AcrossModelRow]
    n_cells_below_min: int | None = Field(
        default=None, ge=0, description="Cells of the metric left out: below the minimum cell (WP26 section 6)."
    )
    min_cell: int | None = Field(default=None, ge=0, description="The minimum cell the leaderboard tables recorded.")
    cell_counts: str | None = Field(default=None, description="What the minimum cell counts (the counting unit).")
    missing_cells: str | None = Field(default=None, description="How a cell where a model has no score is treated.")
    n_cells_without_random_walk: int | None = Field(
        default=None, ge=0, description="Cells passing the minimum cell left out: no random-walk score."
    )
    n_ranked_models: int | None = Field(
        default=None, ge=0, description="Models scored in every eligible cell (ranked); null before the rule."
    )
    support: str | None = Field(default=None, description="The cells the ranking is over and the models it ranks.")


def _analyses_model() -> type[_Model]:
    """``Analyses``: one field per analysis section (:mod:`benchmarks.sections`), in the sections' order."""
    from benchmarks.sections import sections  # its section modules read the table classes above

    fields: dict[str, Any] = {
        s.key: (list[s.table], Field(default_factory=list)) if s.many else (s.table | None, None) for s in sections()
    }
    return create_model(
        "Analyses",
        __base__=_Model,
        __module__=__name__,
        __doc__="""How much the answer moves (issue 16): every analysis is computed by the library from the run's
    score sets; the site only reads these values.""",
        **fields,
    )


Analyses = _analyses_model()
