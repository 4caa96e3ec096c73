"""Statistical inference on score sets: DM tests and the verdict, Friedman/Nemenyi, multiplicity,
bootstraps and ranking comparison."""

from tycheon.stats.bootstrap import (
    BootstrapResult,
    paired_block_bootstrap,
    paired_means_bootstrap,
    panel_means_bootstrap,
)
from tycheon.stats.dm import (
    DMResult,
    diebold_mariano,
    dm_cross_sectional,
    dm_panel,
    dm_pooled,
    overlap_lags,
    panel_df,
    panel_layout,
    pooled_layout,
)
from tycheon.stats.friedman import FriedmanResult, conservative_cd, critical_difference, friedman_nemenyi, nemenyi_q
from tycheon.stats.multiplicity import benjamini_hochberg, holm
from tycheon.stats.rank_bootstrap import RankingBootstrap, panel_ranking_bootstrap, ranking_bootstrap
from tycheon.stats.ranking import (
    TOSTResult,
    kendall_tau_b,
    pss,
    pss_resolution,
    rank_by_mean,
    spearman,
    spearman_test,
    tost_equivalence,
    winner_swap,
)
from tycheon.stats.verdict import (
    FamilyVerdict,
    Verdict,
    family_verdicts,
    verdict_from_scores,
    verdict_vs_random_walk,
)

__all__ = [
    "BootstrapResult",
    "DMResult",
    "FamilyVerdict",
    "FriedmanResult",
    "RankingBootstrap",
    "TOSTResult",
    "Verdict",
    "benjamini_hochberg",
    "conservative_cd",
    "critical_difference",
    "diebold_mariano",
    "dm_cross_sectional",
    "dm_pooled",
    "dm_panel",
    "panel_df",
    "panel_layout",
    "family_verdicts",
    "friedman_nemenyi",
    "holm",
    "kendall_tau_b",
    "nemenyi_q",
    "overlap_lags",
    "paired_block_bootstrap",
    "paired_means_bootstrap",
    "panel_means_bootstrap",
    "panel_ranking_bootstrap",
    "pooled_layout",
    "pss",
    "pss_resolution",
    "rank_by_mean",
    "ranking_bootstrap",
    "spearman",
    "spearman_test",
    "tost_equivalence",
    "verdict_from_scores",
    "verdict_vs_random_walk",
    "winner_swap",
]
