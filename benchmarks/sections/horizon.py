"""Ranks per horizon step of the series unit, short against long (:mod:`tycheon.analysis.horizon`)."""

from __future__ import annotations

from benchmarks.results_model.analyses import HorizonTable
from benchmarks.sections import DatasetContext, Section, plain
from tycheon.analysis.horizon import horizon_robustness
from tycheon.metrics.registry import SCALED_STEP_LOSSES


def compute(ctx: DatasetContext) -> list[HorizonTable]:
    if "series" not in ctx.units:
        return []
    # the first of the registry's scaled per-step losses that the config ranks (mase before rmsse)
    step_metric = next((m for m in SCALED_STEP_LOSSES if m in ctx.spec.metrics), "rmsse")
    hr = ctx.attempt("horizon", lambda: horizon_robustness(ctx.scores, metric=step_metric))
    return [] if hr is None else [HorizonTable.model_validate({**ctx.tag, **plain(hr)})]


SECTION = Section(
    key="horizon",
    table=HorizonTable,
    position=50,
    description="Ranks by mean per-step scaled error at each horizon step, and the short half against the long.",
    recompute="scores",
    compute=compute,
    note="horizon",
    template="sections/horizon.md.j2",
    page_position=60,
    topic="horizon",
)
