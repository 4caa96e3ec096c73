"""The published tables of a results document: leaderboards with their tests, interval tables with the
inventory simulation, and competition tables."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from benchmarks.results_model.base import (
    DemandClass,
    Direction,
    Num,
    Prob,
    Slug,
    Status,
    TableKey,
    Verdict,
    _Model,
    _without_nulls,
)


class LeaderboardRow(_Model):
    rank: int = Field(
        ge=1,
        description=(
            "Position by the table's ranking rule (tests.ranking; ties share the lower rank): the geometric mean "
            "relative error to the random walk from results schema 1.8.0, the mean before."
        ),
    )
    model: Slug
    display_name: str
    mean: Num
    median: Num
    mean_rank: Num = Field(description="Friedman mean rank over complete blocks (1 = best).")
    beats_baseline_blocks: int | None = Field(
        ge=0,
        description=(
            "Blocks where this model's metric is below the production baseline's; null for the baseline itself."
        ),
    )
    dm_stat: Num
    dm_p: Prob = Field(
        description=("Two-sided DM (HLN, overlap-corrected) p vs the production baseline on pooled per-step losses.")
    )
    dm_p_bh: Prob = Field(description="Benjamini-Hochberg adjusted within this table's family.")
    dm_direction: Direction | None = Field(
        description=("Sign of the DM statistic when dm_p_bh < 0.05, else none; null for the baseline.")
    )
    verdict_vs_rw: Verdict | None = Field(
        description=(
            "ADR-0006 decision 6 (both one-sided tests, squared error and CRPS, vs naive); null for the random "
            "walk itself or when not computable."
        )
    )
    dm_reason: str | None = Field(
        default=None,
        description=(
            "Why dm_stat/dm_p are null (the refusing test's message, or 'is the production baseline'); null "
            "when computed."
        ),
    )
    verdict_p_se: Prob = Field(
        default=None,
        description=(
            "One-sided pooled DM p (challenger's squared error lower than the random walk's) behind the verdict."
        ),
    )
    verdict_p_crps: Prob = Field(
        default=None,
        description=("One-sided pooled DM p on CRPS (own quantiles, else conformal 80% band) behind the verdict."),
    )
    verdict_reason: str | None = Field(
        default=None,
        description=(
            "Why verdict_vs_rw is null (e.g. no CRPS of one kind for both models, too few blocks); null when computed."
        ),
    )
    dm_unscaled_p: Prob = Field(
        default=None,
        description=("The paper's variant of dm_p: two-sided pooled DM on unscaled per-step absolute errors."),
    )
    dm_unscaled_p_bh: Prob = Field(default=None, description="dm_unscaled_p, BH-adjusted within the family.")
    dm_unscaled_direction: Direction | None = Field(default=None, description=("dm_direction of the unscaled variant."))
    verdict_p_se_adj: Prob = Field(
        default=None, description=("verdict_p_se adjusted within the table's family (tests.verdict_adjust).")
    )
    verdict_p_crps_adj: Prob = Field(
        default=None, description=("verdict_p_crps adjusted within the table's family (tests.verdict_adjust).")
    )
    verdict_vs_rw_unscaled: Verdict | None = Field(
        default=None, description=("The verdict rule on unscaled losses (the paper's variant).")
    )
    verdict_p_se_unscaled: Prob = None
    verdict_p_crps_unscaled: Prob = None
    verdict_p_se_adj_unscaled: Prob = None
    verdict_p_crps_adj_unscaled: Prob = None
    verdict_reason_unscaled: str | None = Field(
        default=None, description=("Why verdict_vs_rw_unscaled is null; null when computed.")
    )
    dm_pooled_p: Prob = Field(
        default=None,
        description="The series-independent variant of dm_p (stats.dm.dm_pooled): assumes series independent.",
    )
    dm_pooled_p_bh: Prob = Field(default=None, description="dm_pooled_p, BH-adjusted within the family.")
    dm_pooled_direction: Direction | None = Field(default=None, description="dm_direction of the pooled variant.")
    verdict_vs_rw_pooled: Verdict | None = Field(
        default=None,
        description="The verdict rule on series-independent pooled DM tests (a named variant, never the headline).",
    )
    verdict_p_se_pooled: Prob = None
    verdict_p_crps_pooled: Prob = None
    verdict_p_se_adj_pooled: Prob = None
    verdict_p_crps_adj_pooled: Prob = None
    verdict_reason_pooled: str | None = Field(
        default=None, description="Why verdict_vs_rw_pooled is null; null when computed."
    )
    support: int = Field(ge=0, description="Blocks scored by this model in this table.")
    full_support: bool = Field(
        description=("False: fewer blocks than the most-supported model (the site shows a dagger).")
    )
    is_baseline: bool
    is_random_walk: bool
    rank_mean: int | None = Field(default=None, ge=1, description="Position by the arithmetic mean over blocks.")
    pooled: Num = Field(default=None, description="WAPE pooled over the cell: sum |e| / sum |y| (WAPE tables only).")
    gmean_rel_rw: Num = Field(
        default=None, description="Geometric mean over blocks of the error relative to the random walk's (clipped)."
    )
    skill_rw: Num = Field(default=None, description="1 - gmean_rel_rw: the share better than the random walk.")
    skill_rw_low: Num = Field(default=None, description="Lower end of skill_rw's 95% panel-robust interval.")
    skill_rw_high: Num = Field(default=None, description="Upper end of skill_rw's 95% panel-robust interval.")
    skill_rw_reason: str | None = Field(default=None, description="Why skill_rw has no interval; null when it has.")
    skill_rw_blocks: int | None = Field(default=None, ge=0, description="Blocks compared with the random walk.")
    skill_rw_clipped: int | None = Field(default=None, ge=0, description="Blocks whose relative error was clipped.")
    zero_forecast_share: Num = Field(
        default=None, description="Share of steps of series with positive demand whose point forecast is 0."
    )
    zero_forecast_flag: bool | None = Field(default=None, description="Mostly zero forecasts (share >= 50%).")


class LeaderboardTests(_Model):
    friedman_statistic: Num
    friedman_p: Prob
    nemenyi_cd: Num
    conservative_cd: Num = Field(description="CD on one origin per series (independent blocks).")
    n_blocks: int = Field(ge=0, description="Complete blocks the Friedman test ran on.")
    dropped_blocks: int = Field(ge=0, description="Blocks dropped because some model did not score them.")
    n_models: int = Field(ge=0)
    alpha: float
    dm_loss: str | None = Field(default=None, description="Per-step loss pooled by the DM test (e.g. absolute error).")
    dm_family_size: int | None = Field(default=None, ge=0)
    dm_overlap_lag: int | None = Field(default=None, ge=0)
    friedman_reason: str | None = Field(
        default=None, description=("Why the Friedman/Nemenyi values are null; null when computed.")
    )
    conservative_cd_reason: str | None = Field(
        default=None, description=("Why conservative_cd is null; null when computed.")
    )
    dm_unscaled_loss: str | None = Field(default=None, description="Per-step loss of the dm_unscaled_* columns.")
    verdict_point_loss: str | None = Field(default=None, description="Per-step point loss of the verdict's DM leg.")
    verdict_adjust: Literal["bh", "holm", "none"] | None = Field(
        default=None, description=("Multiplicity adjustment of the verdict p-values within the table's family.")
    )
    crps_kind: str | None = Field(
        default=None,
        description=(
            "CRPS kind of the table (one kind for every model): conformal_band_quantiles or approx_quantiles."
        ),
    )
    crps_levels: list[float] | None = Field(default=None, description="Quantile levels of that CRPS.")
    verdict_crps_kind: str | None = Field(default=None, description="CRPS kind of the verdict's CRPS leg.")
    verdict_crps_levels: list[float] | None = Field(default=None, description="Quantile levels of that CRPS.")
    verdict_crps_scale: str | None = Field(
        default=None, description=("Score-set column that scales the verdict's CRPS (scale_mae: the MASE scale).")
    )
    n_zero_scale_blocks: int | None = Field(
        default=None, ge=0, description=("Blocks left out because their scale is zero.")
    )
    inference: str | None = Field(
        default=None, description="The test behind the verdict and the DM column, and what it assumes independent."
    )
    inference_pooled: str | None = Field(
        default=None, description="The series-independent variant's test (the *_pooled fields) and its assumption."
    )
    n_time_points: int | None = Field(
        default=None, ge=0, description="Scored origins of the (unit, demand class): the robust tests' time points."
    )
    min_time_points: int | None = Field(default=None, ge=0, description="Fewest origins a test over time is run on.")
    time_reason: str | None = Field(
        default=None, description="Why no test over time is run (too few origins); null when they are."
    )
    verdict_cell_count: int | None = Field(
        default=None, ge=0, description="Scored blocks of the (unit, demand class): the verdict's minimum cell count."
    )
    cell_ok: bool | None = Field(
        default=None,
        description=("Whether the table reaches the minimum cell (WP26 section 6); if not, no winner, DM or verdict."),
    )
    cell_count: int | None = Field(default=None, ge=0, description="What the minimum cell counts, counted.")
    cell_counts: str | None = Field(
        default=None, description=("What the minimum cell counts: scored blocks or scored per-step losses.")
    )
    min_cell: int | None = Field(default=None, ge=0, description="The minimum cell (WP26 section 6).")
    cell_reason: str | None = Field(default=None, description="Why the table is below the minimum cell; null if not.")
    ranking: str | None = Field(
        default=None, description="The ranking rule of the rank column: gmean_rel_rw, pooled, abs_mean or mean."
    )
    ranking_text: str | None = Field(default=None, description="Why the table ranks so, as the page states it.")
    relative_text: str | None = Field(
        default=None, description="How gmean_rel_rw, skill_rw and its interval are formed."
    )
    elicits: str | None = Field(default=None, description="The functional the table's metric is consistent for.")
    zero_forecast_text: str | None = Field(default=None, description="What the zero-forecast flag counts.")
    runner_up: Slug | None = Field(default=None, description="The model ranked second when a winner is named.")
    runner_up_p: Prob = Field(
        default=None, description="Two-sided panel-robust DM p of the winner against the runner-up (one test)."
    )
    runner_up_tied: bool | None = Field(default=None, description="runner_up_p >= alpha: the two are not told apart.")
    runner_up_lower_loss: Slug | None = Field(
        default=None, description="Where the two are told apart, the one of them with the lower mean loss."
    )
    runner_up_reason: str | None = Field(default=None, description="Why runner_up_p is null.")
    trim_share: float | None = Field(default=None, description="Share of largest blocks removed for winner_trimmed.")
    trimmed_blocks: int | None = Field(default=None, ge=0, description="Blocks removed for winner_trimmed.")
    winner_trimmed: Slug | None = Field(
        default=None, description="The winner by the same rule without the largest trim_share of blocks."
    )
    winner_trimmed_differs: bool | None = Field(
        default=None, description="Whether a few blocks decide the winner (winner_trimmed differs)."
    )


class Leaderboard(_Model):
    dataset: str
    protocol: Slug
    unit: str = Field(description="series, total, level:<attr>, groups:<k>, groups_random:<k>.")
    demand_class: DemandClass
    metric: str = Field(description="Ranking metric (mase, rmsse, wape, crps...), lower is better.")
    baseline: Slug = Field(description="Production baseline for the beats / DM columns.")
    random_walk: Slug
    n_blocks_total: int = Field(ge=0)
    winner: Slug | None = Field(
        default=None,
        description=("The model ranked first when the table reaches the minimum cell and its metric ranks; else null."),
    )
    rows: list[LeaderboardRow]
    tests: LeaderboardTests

    @property
    def key(self) -> TableKey:
        return TableKey(self.dataset, self.protocol, self.unit, self.demand_class, self.metric)

    @classmethod
    def from_table(cls, table: dict[str, Any]) -> Leaderboard:
        """A leaderboard from a table as :func:`tycheon.analysis.leaderboard.leaderboard_tables` gives it (JSON
        values), its rows' and tests' optional fields that are null left unset, so a version does not write
        them (the writer writes the fields that were set; a reader gives them their default, null). A table
        of ten metrics wrote mostly nulls."""
        rows = [_without_nulls(LeaderboardRow, r) for r in table.get("rows", [])]
        tests = _without_nulls(LeaderboardTests, table.get("tests", {}))
        return cls.model_validate({**table, "rows": rows, "tests": tests})


class IntervalRow(_Model):
    model: Slug
    n_records: int = Field(ge=0)
    coverage80: Prob
    coverage95: Prob
    msis80: Num
    msis95: Num
    rank_point: int | None = None
    rank_interval: int | None = None


class InventoryRow(_Model):
    model: Slug
    fill_rate: Prob = Field(description="Mean over series with demand of the share of demand met from stock.")
    cycle_service_level: Prob = Field(description="Mean over series of the share of review cycles without a stockout.")
    avg_stock: Num = Field(description="Mean over series of average on-hand stock / average demand (periods held).")
    lost_share: Num = Field(description="Mean over series of unmet units / demand.")
    stock_needed: Num = Field(description="avg_stock at the smallest level shift reaching the target fill rate.")
    k_needed: Num = Field(description="That shift, in units of each series' mean demand.")
    stock_needed_reason: str | None = Field(default=None, description="Why stock_needed is null.")
    rank: int | None = Field(default=None, ge=1, description="Position by stock_needed (1 = least stock).")


class InventoryTable(_Model):
    """The inventory outcome of one cell (tycheon.analysis.inventory.inventory_table)."""

    rows: list[InventoryRow]
    random_walk: Slug
    random_walk_row: InventoryRow
    winner: Slug | None = None
    target: float = Field(description="Target service level: the band quantile of the levels and the fill target.")
    lead_time: int = Field(ge=0)
    review_period: int = Field(ge=1)
    protection_periods: int = Field(ge=1)
    policy: Literal["lost sales", "backorders"]
    policy_text: str
    n_models: int = Field(ge=0)
    n_series: int = Field(ge=0)
    n_periods: int = Field(ge=0)
    n_series_periods: int = Field(ge=0)
    n_blocks: int = Field(ge=0)
    shift_bracket: list[float]
    cell_ok: bool | None = None
    cell_count: int | None = Field(default=None, ge=0)
    cell_counts: str | None = None
    min_cell: int | None = Field(default=None, ge=0)
    cell_reason: str | None = None


class IntervalTable(_Model):
    dataset: str
    protocol: Slug
    unit: str
    demand_class: DemandClass
    band: Literal["conformal"] = Field(
        description=("Split-conformal bands built by the engine on each model's own point errors.")
    )
    interval_metric: Literal["msis95", "msis80"] | None = Field(
        default=None, description=("The MSIS level the interval ranking uses: the widest band every ranked model has.")
    )
    point_vs_interval_spearman: Num = None
    point_vs_interval_p: Prob = None
    max_move: int | None = None
    cell_ok: bool | None = Field(
        default=None, description="Whether the cell reaches the minimum cell; if not, no ranking is named."
    )
    cell_count: int | None = Field(default=None, ge=0, description="Scored blocks of the cell.")
    cell_counts: str | None = Field(default=None, description="What the minimum cell counts.")
    min_cell: int | None = Field(default=None, ge=0, description="The minimum cell (WP26 section 6).")
    cell_reason: str | None = Field(default=None, description="Why no ranking is named; null when one is.")
    rows: list[IntervalRow]
    inventory: InventoryTable | None = Field(
        default=None, description="The cell's inventory simulation on the calibrated bands (schema 1.8.0)."
    )
    inventory_reason: str | None = Field(default=None, description="Why inventory is null.")


class CompetitionRow(_Model):
    rank: int | None = Field(ge=1)
    model: Slug
    display_name: str
    value: Num
    n_series: int = Field(ge=0)
    status: Status


class CompetitionTable(_Model):
    dataset: str
    protocol: Slug
    competition: str = Field(description="M1, M3 or Tourism.")
    horizon: int = Field(ge=1)
    metric: str = Field(description="smape (M3), mape or mase (Tourism), ...")
    metric_definition: str
    reference: str | None = Field(default=None, description="Published table this can be held against.")
    rows: list[CompetitionRow]
