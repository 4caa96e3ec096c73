"""Across the run's rolling-origin datasets (:mod:`tycheon.analysis.across`): win rate, verdict cells and
the relative error against the random walk, which each dataset's series unit gives."""

from __future__ import annotations

from collections.abc import Sequence

from benchmarks.results_model.analyses import AcrossTable
from benchmarks.results_model.tables import Leaderboard
from benchmarks.sections import DatasetContext, RunContext, Section, plain
from tycheon.analysis.across import RelativeError, across_datasets, relative_error


def across_table(
    leaderboards: Sequence[Leaderboard], relative: Sequence[RelativeError], *, metric: str, random_walk: str
) -> AcrossTable | None:
    """Across the run's rolling-origin datasets, ranking only the models scored in every eligible cell
    (:func:`tycheon.analysis.across.across_datasets`; the others are listed unranked, with their coverage and
    reason); None when no leaderboard has ``metric``."""
    cells = [
        lb.model_dump(mode="json") for lb in leaderboards if lb.protocol == "rolling_origin" and lb.metric == metric
    ]
    if not cells:
        return None
    res = across_datasets(cells, metric=metric, random_walk=random_walk, relative=list(relative))
    return AcrossTable.model_validate(plain(res))


def relative(ctx: DatasetContext) -> list[RelativeError]:
    """The dataset's relative errors against the random walk (the series unit's)."""
    if "series" not in ctx.units:
        return []
    spec = ctx.spec
    rel = ctx.attempt(
        "relative error",
        lambda: relative_error(
            ctx.scores,
            dataset=ctx.dataset,
            metric=spec.metrics[0],
            random_walk=spec.random_walk,
            min_cell=spec.min_cell,
            n_resamples=ctx.n_resamples,
            seed=spec.seed,
        ),
    )
    return list(rel or [])


def combine(parts: list[RelativeError], run: RunContext) -> AcrossTable | None:
    return across_table(run.leaderboards, parts, metric=run.metric, random_walk=run.random_walk)


SECTION = Section(
    key="across",
    table=AcrossTable,
    position=70,
    description="Across datasets: win rate, verdict cells and relative error against the random walk.",
    recompute="scores",
    compute=relative,
    combine=combine,
    note="relative error",
)
