"""The uncertainty of every leaderboard: unit x demand class x block metric
(:mod:`tycheon.analysis.uncertainty`; WP26 section 4.1)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from benchmarks.results_model.analyses import UncertaintyTable
from benchmarks.sections import DatasetContext, Section, plain
from tycheon.analysis.class_winners import NAMED_CLASSES
from tycheon.analysis.uncertainty import leaderboard_uncertainties, leaderboard_uncertainty
from tycheon.errors import InputError
from tycheon.stats.threads import single_thread_blas


def compute(ctx: DatasetContext) -> list[UncertaintyTable]:
    scores, spec, n = ctx.scores, ctx.spec, ctx.n_resamples
    out = []
    for unit in ctx.units:
        present = set(pd.unique(scores[unit].column("demand_class"))) if "demand_class" in ctx.table else set()
        metrics = [m for m in spec.metrics if m != "crps"]  # block metrics of point forecasts
        for dc in ["all", *[c for c in NAMED_CLASSES if c in present]]:
            try:  # every metric of the leaderboard from one bootstrap draw (the same values as one by one)
                with single_thread_blas():
                    found: list[Any] = leaderboard_uncertainties(
                        scores, spec=spec, metrics=metrics, unit=unit, demand_class=dc, n_resamples=n
                    )
            except InputError:  # one by one, so that each metric that cannot be computed says why
                found = [
                    ctx.attempt(
                        f"uncertainty {unit}/{dc}/{metric}",
                        lambda u=unit, c=dc, m=metric: leaderboard_uncertainty(
                            scores, spec=spec, metric=m, unit=u, demand_class=c, n_resamples=n
                        ),
                    )
                    for metric in metrics
                ]
            out += [UncertaintyTable.model_validate({**ctx.tag, **plain(unc)}) for unc in found if unc is not None]
    return out


SECTION = Section(
    key="uncertainty",
    table=UncertaintyTable,
    position=40,
    description="Bootstrap intervals, ranking stability, Holm beside BH and the model confidence set of every "
    "leaderboard (on its own pages; the robustness page links them).",
    recompute="scores",
    compute=compute,
    compute_position=90,  # over every leaderboard, after the series-unit sections (their notes come first)
    note="uncertainty",
    template="sections/uncertainty.md.j2",
    page_position=50,
)
