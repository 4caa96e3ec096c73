"""The default headline metrics per demand class: what the home page and ``tycheon evaluate`` answer with.

A planner orders the sum of forecasts over a lead time, and holds stock against a quantile of demand, so
the headline of every class is a **mean-consistent point metric** (RMSSE: squared error elicits the mean)
beside a **service-level metric** (the scaled pinball loss at 0.9, which elicits the 0.9 quantile an
order-up-to level at a 90% service target is set to). The absolute-error metrics (MAE, MASE, WAPE) elicit
the median, and the median of an intermittent series is usually 0: they crown methods that forecast zero
and leave the planner under-stocked (Kolassa 2016; the M5 competition ranked on RMSSE for this reason,
Makridakis, Spiliotis & Assimakopoulos 2022). MASE stays a table, with the zero-forecast flag beside its
winner. Where a benchmark does not rank a headline metric, its first configured metric stands in and the
page says so.

References
----------
Kolassa, S. (2016). Evaluating predictive count data distributions in retail sales forecasting. IJF 32(3),
788-803. Gneiting, T. (2011). Making and evaluating point forecasts. JASA 106(494), 746-762.
Makridakis, S., Spiliotis, E. & Assimakopoulos, V. (2022). M5 accuracy competition. IJF 38(4).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["HEADLINE_POINT", "HEADLINE_REASONS", "HEADLINE_SERVICE", "headline_metrics"]

HEADLINE_POINT = {
    "all": "rmsse",
    "smooth": "rmsse",
    "erratic": "rmsse",
    "intermittent": "rmsse",
    "lumpy": "rmsse",
    "undefined": "rmsse",
}
"""Demand class -> the point metric its headline ranks on."""

HEADLINE_SERVICE = "spl90"
"""The service-level metric beside every class's point headline (scaled pinball loss at 0.9)."""

HEADLINE_REASONS = {
    "all": (
        "RMSSE, because the pooled cell holds intermittent series too, where an absolute-error metric rewards "
        "forecasting zero; squared error elicits the mean, which a planner's orders add up"
    ),
    "smooth": (
        "RMSSE: on smooth demand the mean and the median nearly coincide, so RMSSE and MASE ask for the same "
        "forecast; RMSSE keeps one point metric across classes"
    ),
    "erratic": (
        "RMSSE: erratic demand is skewed, its median below its mean; squared error elicits the mean, absolute "
        "error the median, which under-forecasts what is ordered"
    ),
    "intermittent": (
        "RMSSE and SPL 0.9, not MASE: the median of an intermittent series is usually 0, so absolute-error "
        "metrics crown zero forecasts (Kolassa 2016; M5 ranked on RMSSE)"
    ),
    "lumpy": (
        "RMSSE and SPL 0.9, not MASE: lumpy demand is mostly zero with large orders; absolute error rewards "
        "forecasting zero, squared error and the 0.9 quantile price the orders a planner must cover"
    ),
    "undefined": "RMSSE, as for the pooled cell",
}
"""Why each class's headline is what it is, as the page states it."""


def headline_metrics(demand_class: str, ranked: Sequence[str]) -> tuple[str, str | None, bool]:
    """``(point metric, service metric or None, stands_in)`` of a class's headline among the metrics a
    benchmark ranks (``ranked``, in config order): the defaults above where ranked, else the first ranked
    metric with ``stands_in`` true."""
    if not ranked:
        raise ValueError("no ranked metric")
    point = HEADLINE_POINT.get(demand_class, HEADLINE_POINT["all"])
    service = HEADLINE_SERVICE if HEADLINE_SERVICE in ranked else None
    if point in ranked:
        return point, service, False
    return ranked[0], service, True
