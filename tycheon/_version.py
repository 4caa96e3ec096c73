"""The single place the package version is written."""

__version__ = "0.1.0"

STATISTICS_VERSION = 3
"""Version of the statistics that turn a score set into published tables (verdicts, DM columns, bootstraps,
minimum cell, rankings). Bumped whenever any published statistic would change for the same score set; a
results version records the statistics version that computed it (results written before this field
existed were computed by version 1). Each bump is described in :data:`STATISTICS_CHANGES`."""

STATISTICS_CHANGES = {
    1: "series-independent pooled Diebold-Mariano tests; a verdict per metric table; minimum cell on blocks "
    "for per-series units and classes and on per-step losses for aggregate units",
    2: "panel-robust inference: the loss differential averaged over series per origin and tested over the "
    "origins (Driscoll-Kraay; evaluation-choices paper, section 4.1) for the verdict, the DM column, the "
    "bootstraps (time blocks) and the model confidence set; one verdict per (dataset, unit, demand class, "
    "model) on squared error / RMSSE scale squared and CRPS / MASE scale; one minimum-cell rule on scored "
    "blocks everywhere, and at least 8 scored origins for a test over time",
    3: "decision metrics: tables rank on the geometric mean of per-block errors relative to the random walk "
    "(WAPE on its pooled ratio, scaled bias on its size) with the skill '% better than the random walk' and a "
    "panel-robust interval; scaled pinball losses at 0.5/0.8/0.9/0.95 and the band CRPS as tables; the "
    "zero-forecast flag; the runner-up test; the winner without the largest 1% of blocks; an inventory "
    "simulation per cell",
}
"""What each statistics version changed, in plain words (the version-history page quotes it)."""
