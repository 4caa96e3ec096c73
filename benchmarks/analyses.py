"""The issue-16 analyses of one run, as results sections: the harness calls the library's analyses
(:mod:`tycheon.analysis`) on each dataset's score set and converts their typed results to the results
document's models. No statistic is computed here.

Each section is declared once, in its module of :mod:`benchmarks.sections` (what it computes, from what,
and where it is shown); :func:`dataset_analyses` runs every section of one rolling-origin dataset in turn.
Per dataset: the unit inversion (when the dataset has more than one unit), the aggregation dial (from the
dataset's level and group units, and the ``dial`` group counts its config lists, which an extra backtest
scores), the class winners and the horizon robustness of the series unit, the uncertainty of every (unit,
metric) leaderboard, and the spikiness sweep of a synthetic dataset whose config lists ``sweep`` settings.
Across datasets: win rate, verdict cells and relative error against the random walk.

The config's minimum cell (``spec.min_cell``, :mod:`tycheon.analysis.cell`) reaches every analysis that
names a winner: a class winner, a relative error and an across-datasets cell below it name nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from benchmarks.sections import N_RESAMPLES, Carried, DatasetContext, computed, plain
from benchmarks.sections.across import across_table
from benchmarks.sections.dials import dial_unit_names
from benchmarks.sections.sweeps import sweep_table
from tycheon.analysis.leaderboard import LeaderboardSpec
from tycheon.analysis.prepared import PreparedScores

__all__ = ["N_RESAMPLES", "DatasetAnalyses", "across_table", "dataset_analyses", "dial_unit_names", "sweep_table"]

_plain = plain  # the name tests import


@dataclasses.dataclass
class DatasetAnalyses:
    """One dataset's entries of every section (``tables``, by section key; the ``across`` entries are its
    relative errors), what a restatement carried over (``carried``), and the analyses that could not
    run, and why (``notes``). A section's entries read as an attribute too (``found.inversion``)."""

    tables: dict[str, list[Any]] = dataclasses.field(default_factory=dict)
    carried: dict[str, Carried] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)

    def __getattr__(self, key: str) -> list[Any]:
        if key.startswith("_") or key in ("tables", "carried", "notes"):
            raise AttributeError(key)
        return self.tables.get(key, [])

    @property
    def relative(self) -> list[Any]:
        """The dataset's relative errors against the random walk (what the across section combines)."""
        return self.tables.get("across", [])


def dataset_analyses(
    table: pd.DataFrame,
    *,
    dataset: str,
    protocol: str,
    spec: LeaderboardSpec,
    n_series: int,
    dial_table: pd.DataFrame | PreparedScores | Callable[[], pd.DataFrame | PreparedScores | None] | None = None,
    dial_models: Sequence[str] | None = None,
    n_resamples: int = N_RESAMPLES,
    units: Sequence[str] | None = None,
    entry: Any = None,
    rerun: Callable[..., pd.DataFrame | None] | None = None,
    previous: Any = None,
) -> DatasetAnalyses:
    """Every per-dataset section of one rolling-origin score set (:func:`benchmarks.sections.computed`).

    ``dial_table``: the score set of the dial's own units (a table, or prepared scores such as the block
    scores a :class:`~tycheon.analysis.prepared.BlockCollector` gathered), or a function that runs their
    backtests and returns it; a function is called first, before any analysis prepares the table's
    units, and what it returns is released once the dial is computed (no later analysis reads it). ``dial_models``:
    the models the dial covers (the config's ``analysis_models``; ``dial_table`` holds these only),
    recorded in its table; None: every model of the score set. Every statistic runs with BLAS on the
    calling thread (:func:`tycheon.stats.threads.single_thread_blas`); the dial's backtests do not.
    ``units``: the order the per-unit tables are listed in (the config's: those not in the table are
    left out, and any other unit of the table follows them in the order it first appears, which is the
    order without ``units``). ``entry``: the dataset's config entry (its ``dial`` and ``sweep``; None:
    no sweep); ``rerun``: runs the dataset's backtests with other loader options (the sweep's settings);
    ``previous``: the analyses of a version being restated, whose tables a section that needs backtests
    the score set does not hold carries over (:class:`benchmarks.sections.Carried`)."""
    # the dial's backtests first, if a function: their workers then run beside the score set only, not
    # beside the blocks and losses the analyses below prepare and keep
    own = dial_table() if callable(dial_table) else dial_table
    dial_table = None  # from here the dial's rows are referenced by the context only, released by the dial
    present = list(pd.unique(table["unit"]))
    order = [] if units is None else [u for u in units if u in present]
    ctx = DatasetContext(
        table=table,
        scores=PreparedScores(table),
        dataset=dataset,
        protocol=protocol,
        spec=spec,
        n_series=n_series,
        units=order + [u for u in present if u not in order],  # a handful of units: lists suffice
        n_resamples=n_resamples,
        dial_table=own,
        dial_models=dial_models,
        entry=entry,
        rerun=rerun,
        previous=previous,
    )
    del own
    out = DatasetAnalyses(notes=ctx.notes)
    for section in computed():
        if section.compute is None:
            continue
        found = section.compute(ctx)
        if isinstance(found, Carried):
            if section.recompute != "own_backtests":
                raise TypeError(f"analysis section {section.key!r} recomputes from scores but carried its tables")
            out.carried[section.key] = found
            out.tables[section.key] = list(found.tables)
        else:
            out.tables[section.key] = list(found)
    return out
