"""The unit-of-analysis inversion of a dataset scored at more than one unit (:mod:`tycheon.analysis.inversion`)."""

from __future__ import annotations

from benchmarks.results_model.analyses import InversionTable
from benchmarks.sections import DatasetContext, Section, plain
from tycheon.analysis.inversion import unit_inversion


def compute(ctx: DatasetContext) -> list[InversionTable]:
    if len(ctx.units) <= 1:
        return []
    inv = ctx.attempt("inversion", lambda: unit_inversion(ctx.scores.subset(ctx.units), spec=ctx.spec))
    return [] if inv is None else [InversionTable.model_validate({**ctx.tag, **plain(inv)})]


SECTION = Section(
    key="inversion",
    table=InversionTable,
    position=10,
    description="Does the winner survive disaggregation: the baseline's rank and the significance tests at "
    "every unit of analysis (paper, Table 1).",
    recompute="scores",
    compute=compute,
    note="inversion",
    template="sections/inversion.md.j2",
    page_position=10,
    topic="unit inversion",
)
