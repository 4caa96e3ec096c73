"""The audits of a results document: the selection-rule replay and the protocol-sensitivity audit."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from benchmarks.results_model.base import DemandClass, Num, Prob, Slug, _Model

ReplayVariant = Literal["all_folds", "non_overlapping"]


class ReplayRule(_Model):
    """The selection rule as replayed (evaluation-choices paper, section 7)."""

    metric: str = Field(description="Ranking metric of the rule and of every column of its rows.")
    baseline: Slug = Field(description="The floor: the production baseline, served when nothing survives.")
    min_fold_share: float = Field(gt=0, le=1, description="Support a candidate needs on the available folds.")
    bias_threshold: float = Field(ge=0, description="Largest |mean scaled bias| over the folds.")
    top_k: int = Field(ge=1, description="Survivors averaged and served.")
    min_folds: int = Field(ge=1, description="Earlier published folds a block needs before the rule chooses.")
    oracle: Literal["block", "series"] = Field(description="Ceiling: best single method per block or per series.")
    served_name: str


class ReplayRow(_Model):
    variant: ReplayVariant = Field(
        description=("all_folds, or non_overlapping: origins thinned so no two share a target (production spacing).")
    )
    demand_class: DemandClass
    n_blocks: int = Field(ge=0, description="Replayed (series, origin) blocks with a finite floor, served and oracle.")
    floor: Num = Field(description="Mean metric of always serving the production baseline.")
    served: Num = Field(description="Mean metric of the rule's served combination (scored with the same scales).")
    oracle: Num = Field(description="Mean metric of the best single method with hindsight.")
    gain: Num = Field(description="(floor - served) / floor.")
    wins: int = Field(ge=0, description="Blocks where served < floor.")
    win_share: Prob
    gap_closed: Num = Field(description="(floor - served) / (floor - oracle).")
    champion: str | None = Field(
        description="The one method that, served everywhere (floor where it has no forecast), does best; "
        "null below the minimum cell."
    )
    champion_mean: Num
    champion_gap_closed: Num
    champion_full: str | None = Field(
        description="The best method scored on every block of the row; null below the minimum cell."
    )
    champion_full_gap_closed: Num
    n_fallback: int = Field(ge=0, description="Blocks where no candidate survived and the floor was served.")
    n_zero_scale: int = Field(ge=0, description="Replayable blocks left out for a zero scale.")
    cell_ok: bool | None = Field(
        default=None,
        description="Whether n_blocks reaches the minimum cell (WP26 section 6); if not, no champion is named.",
    )
    cell_reason: str | None = Field(default=None, description="Why no champion is named; null if it is.")


class ReplayChoice(_Model):
    variant: ReplayVariant
    model: str
    share: Prob = Field(description="Share of the variant's blocks where this model was among the served ones.")


class ReplayTable(_Model):
    """The selection-rule replay of one (dataset, protocol, unit): floor, served, oracle per class."""

    dataset: str
    protocol: Slug
    unit: str
    rule: ReplayRule
    rows: list[ReplayRow]
    chosen_share: list[ReplayChoice] = Field(
        description="Per variant whose all-class row reaches the minimum cell: the served models' shares."
    )
    min_cell: int | None = Field(default=None, ge=0, description="The minimum cell (WP26 section 6).")
    cell_counts: str | None = Field(default=None, description="What the minimum cell counts (the counting unit).")


class SensitivityRun(_Model):
    name: str = Field(
        description="rolling, static, static_boundary<+s>, rolling_embargo<e>, rolling_refit_every<k> "
        "(rolling_refit<-s>, before issue 36: an embargo of s periods)."
    )
    description: str


class SensitivityTost(_Model):
    """TOST of mean between-protocol PSS within +-resolution (audit, section 4.6)."""

    mean: Num
    low: float
    high: float
    p_value: Prob
    equivalent: bool


class SensitivityComparison(_Model):
    kind: Literal["between", "within"]
    protocol: Literal["both", "static", "rolling"]
    reference: str
    run: str
    n_series: int = Field(ge=0, description="Series with a defined PSS.")
    pss_mean: Num = Field(description="Mean per-series PSS (mean over steps of 1 - Kendall tau-b).")
    pss_ci_low: Num
    pss_ci_high: Num
    swap_share: Prob = Field(description="Share of series whose winner changes on most steps.")
    swap_ci_low: Prob
    swap_ci_high: Prob
    panel_pss: Num = Field(description="PSS of the panel-level coordinates (mean loss per step over every series).")
    panel_swap: bool
    n_coords_dropped: int = Field(ge=0, description="(series, step) coordinates where a run tied every candidate.")


class SensitivityAttribution(_Model):
    protocol: Literal["static", "rolling"]
    n_references: int = Field(ge=0)
    n_series: int = Field(ge=0)
    between_mean: Num
    within_mean: Num
    diff_mean: Num = Field(default=None, description="Mean paired difference B_u - N_u,p.")
    diff_ci_low: Num = None
    diff_ci_high: Num = None
    diff_p: Prob = None
    ratio: Num = None
    tost_p: Prob = Field(default=None, description="TOST of the paired difference within +-resolution.")
    tost_equivalent: bool | None = None


class SensitivityStep(_Model):
    """The between contrast at one step (audit, section 5.3: how discrepancy varies with horizon)."""

    step: int = Field(ge=1)
    n_series: int = Field(ge=0, description="Series whose Kendall tau-b is defined at this step.")
    pss_mean: Num = Field(description="Mean over series of 1 - tau-b between the rolling and static references.")
    pss_ci_low: Num
    pss_ci_high: Num
    swap_share: Prob = Field(description="Share of series whose winner differs at this step.")
    swap_ci_low: Prob
    swap_ci_high: Prob
    within_pss_mean: Num = Field(description="Mean 1 - tau-b of the intraprotocol references at this step.")


class SensitivityAggregation(_Model):
    """Hard-reversal prevalence after Borda aggregation of K runs of one arm (audit, section 5.5)."""

    curve: Literal["static_arm", "rolling_arm"]
    reference: Literal["rolling", "static"] = Field(description="The opposite protocol's reference run.")
    k: int = Field(ge=1, description="Runs aggregated.")
    n_subsets: int = Field(ge=1)
    exhaustive: bool = Field(description="Every subset of K runs was used (else n_subsets seeded draws).")
    prevalence_mean: Prob = Field(description="Mean over subsets of the share of series with a hard reversal.")
    prevalence_min: Prob
    prevalence_max: Prob


class SensitivityRank(_Model):
    model: Slug
    ranks: dict[str, int] = Field(description="Run name -> rank by mean per-step loss (1 = best).")
    mean_rank: float = Field(description="Borda: mean rank over the K runs.")
    borda_rank: int = Field(ge=1)
    reference_rank: int = Field(ge=1, description="Rank under the rolling reference.")
    rank_min: int = Field(ge=1)
    rank_max: int = Field(ge=1)
    keep_share: Prob = Field(description="Share of the K runs that keep the reference rank.")


class SensitivityTable(_Model):
    """The protocol-sensitivity audit of one (dataset, unit): how stable the order is (audit, sections 4-6)."""

    dataset: str
    protocol: Slug = Field(description="The rolling protocol the audit perturbs.")
    unit: str
    metric: str
    n_models: int = Field(ge=0)
    horizon: int = Field(ge=1)
    resolution: float = Field(description="4 / [M (M - 1) H]: the PSS grid step and the TOST margin.")
    runs: list[SensitivityRun]
    tost: SensitivityTost
    comparisons: list[SensitivityComparison]
    attribution: list[SensitivityAttribution]
    ranks: list[SensitivityRank]
    fitted_state: dict[str, bool] = Field(
        default_factory=dict,
        description=(
            "Model -> whether it learns when fitted; a roster of models that do not has PSS 0 by construction."
        ),
    )
    by_horizon: list[SensitivityStep] = Field(
        default_factory=list, description="The between contrast step by step (empty before issue 36)."
    )
    aggregation: list[SensitivityAggregation] = Field(
        default_factory=list,
        description="Hard-reversal prevalence after Borda aggregation of K-run subsets (empty before issue 36).",
    )
