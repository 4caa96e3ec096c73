"""The winner per demand class of the series unit (:mod:`tycheon.analysis.class_winners`)."""

from __future__ import annotations

from benchmarks.results_model.analyses import ClassWinnersTable
from benchmarks.sections import DatasetContext, Section, plain
from tycheon.analysis.class_winners import class_winners


def compute(ctx: DatasetContext) -> list[ClassWinnersTable]:
    if "series" not in ctx.units:
        return []
    spec = ctx.spec
    metric = spec.metrics[-1] if "rmsse" not in spec.metrics else "rmsse"
    cw = ctx.attempt(
        "class winners",
        lambda: class_winners(ctx.scores, baseline=spec.baseline, metric=metric, min_cell=spec.min_cell),
    )
    return [] if cw is None else [ClassWinnersTable.model_validate({**ctx.tag, **plain(cw)})]


SECTION = Section(
    key="class_winners",
    table=ClassWinnersTable,
    position=30,
    description="The top three per demand class and the baseline's place, by the series unit (paper, Table 4).",
    recompute="scores",
    compute=compute,
    note="class winners",
    template="sections/class_winners.md.j2",
    page_position=40,
    topic="class winners",
)
