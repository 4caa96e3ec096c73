"""Forecast accuracy metrics: point, probabilistic, interval, and per-block aggregation of a score set."""

from tycheon.errors import CRPSKindMismatchError, MetricInputError, ScaleMismatchError, ZeroScaleError
from tycheon.metrics.aggregate import (
    block_scores,
    check_scale_consistency,
    row_crps,
    scale_column,
    step_loss,
    step_scores,
    summarize,
)
from tycheon.metrics.intervals import coverage, interval_score, interval_width, msis
from tycheon.metrics.point import bias, mae, mape, mase, rmse, rmsse, scaled_bias, smape, wape
from tycheon.metrics.probabilistic import (
    CRPSResult,
    crps_difference,
    crps_ensemble,
    crps_quantiles,
    mean_crps,
    pinball_loss,
    pit_from_quantiles,
    pit_from_samples,
    quantile_reliability,
)
from tycheon.metrics.registry import METRICS, MetricSpec, get_metric, glossary, metric_names
from tycheon.metrics.scale import seasonal_naive_scales

__all__ = [
    "METRICS", "MetricSpec", "get_metric", "glossary", "metric_names", "row_crps", "step_loss",
    "CRPSKindMismatchError", "CRPSResult", "MetricInputError", "ScaleMismatchError", "ZeroScaleError",
    "bias", "block_scores", "check_scale_consistency", "coverage", "crps_difference", "crps_ensemble",
    "crps_quantiles", "interval_score", "interval_width", "mae", "mape", "mase", "mean_crps", "msis",
    "pinball_loss", "pit_from_quantiles", "pit_from_samples", "quantile_reliability", "rmse", "rmsse",
    "scale_column", "scaled_bias", "seasonal_naive_scales", "smape", "step_scores", "summarize", "wape",
]  # fmt: skip
