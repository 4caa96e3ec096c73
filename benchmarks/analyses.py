"""The issue-16 analyses of one run, as results sections: the harness calls the library's analyses
(:mod:`tycheon.analysis`) on each dataset's score set and converts their typed results to the results
document's models. No statistic is computed here.

Per rolling-origin dataset: the unit inversion (when the dataset has more than one unit), the aggregation
dial (from the dataset's level and group units, and the ``dial`` group counts its config lists, which an
extra backtest scores), the
class winners and the horizon robustness of the series unit, the uncertainty of every (unit, metric)
leaderboard, and the spikiness sweep of a synthetic dataset whose config lists ``sweep`` settings. Across
datasets: win rate, verdict cells and relative error against the random walk.

The config's minimum cell (``spec.min_cell``, :mod:`tycheon.analysis.cell`) reaches every analysis that
names a winner: a class winner, a relative error and an across-datasets cell below it name nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd

from benchmarks.results_io import to_json_value
from benchmarks.results_model import (
    AcrossTable,
    ClassWinnersTable,
    DialTable,
    HorizonTable,
    InversionTable,
    Leaderboard,
    SweepTable,
    UncertaintyTable,
)
from tycheon.analysis.across import RelativeError, across_datasets, relative_error
from tycheon.analysis.class_winners import NAMED_CLASSES, class_winners
from tycheon.analysis.dial import aggregation_dial
from tycheon.analysis.horizon import horizon_robustness
from tycheon.analysis.inversion import unit_inversion
from tycheon.analysis.leaderboard import LeaderboardSpec
from tycheon.analysis.prepared import PreparedScores
from tycheon.analysis.sweep import spikiness_sweep
from tycheon.analysis.uncertainty import leaderboard_uncertainties, leaderboard_uncertainty
from tycheon.errors import InputError
from tycheon.stats.threads import single_thread_blas

__all__ = ["N_RESAMPLES", "DatasetAnalyses", "across_table", "dataset_analyses", "dial_unit_names", "sweep_table"]

N_RESAMPLES = 2000  # WP26 section 4.1


def _plain(result: Any) -> Any:
    return to_json_value(dataclasses.asdict(result))


@dataclasses.dataclass
class DatasetAnalyses:
    inversion: list[InversionTable] = dataclasses.field(default_factory=list)
    dials: list[DialTable] = dataclasses.field(default_factory=list)
    class_winners: list[ClassWinnersTable] = dataclasses.field(default_factory=list)
    uncertainty: list[UncertaintyTable] = dataclasses.field(default_factory=list)
    horizon: list[HorizonTable] = dataclasses.field(default_factory=list)
    relative: list[RelativeError] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)  # analyses that could not run, and why


def dial_unit_names(ks: Sequence[int], n_series: int, *, leaderboard_units: Sequence[str]) -> list[str]:
    """Units of the dial's extra backtest: ``groups:k`` and ``groups_random:k`` for each configured ``k``
    below the number of series (``k = 1`` is the total: size groups only), minus units the leaderboard
    backtest already scores."""
    kept = sorted({min(int(k), n_series) for k in ks})
    units = [f"groups:{k}" for k in kept if k < n_series] + [f"groups_random:{k}" for k in kept if 1 < k < n_series]
    if 1 in kept and "total" in leaderboard_units:
        units.remove("groups:1")  # the total is the one-group aggregate
    return [u for u in units if u not in leaderboard_units]


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
) -> DatasetAnalyses:
    """Every per-dataset analysis of one rolling-origin score set (see the module docstring).

    ``dial_table``: the score set of the dial's own units (a table, or prepared scores such as the block
    scores a :class:`~tycheon.analysis.prepared.BlockCollector` gathered), or a function that runs their
    backtests and returns it; a function is called first, before any analysis prepares the table's
    units, and what it returns is released once the dial is computed (no later analysis reads it). ``dial_models``:
    the models the dial covers (the config's ``analysis_models``; ``dial_table`` holds these only),
    recorded in its table; None: every model of the score set. Every statistic runs with BLAS on the
    calling thread (:func:`tycheon.stats.threads.single_thread_blas`); the dial's backtests do not.
    ``units``: the order the per-unit tables are listed in (the config's: those not in the table are
    left out, and any other unit of the table follows them in the order it first appears, which is the
    order without ``units``)."""
    tag = {"dataset": dataset, "protocol": protocol}
    # the dial's backtests first, if a function: their workers then run beside the score set only, not
    # beside the blocks and losses the analyses below prepare and keep (0.45 GiB at M5 size)
    own = dial_table() if callable(dial_table) else dial_table
    dial_table = None  # from here the dial's rows are referenced by ``own`` only, released below
    scores = PreparedScores(table)
    present = list(pd.unique(table["unit"]))
    order = [] if units is None else [u for u in units if u in present]
    leaderboard_units = order + [u for u in present if u not in order]  # a handful of units: lists suffice
    out = DatasetAnalyses()

    def attempt(what: str, fn: Any) -> Any:
        try:
            with single_thread_blas():
                return fn()
        except InputError as err:  # e.g. the baseline did not run on this dataset: say so, go on
            out.notes.append(f"{what}: {err}")
            return None

    if len(leaderboard_units) > 1:
        inv = attempt("inversion", lambda: unit_inversion(scores.subset(leaderboard_units), spec=spec))
        if inv is not None:
            out.inversion.append(InversionTable.model_validate({**tag, **_plain(inv)}))
    aggregates = [u for u in leaderboard_units if u.startswith(("level:", "groups"))]
    extra = () if own is None or not len(own) else (own,)
    if extra or aggregates:
        if dial_models is not None:  # the leaderboard units' rows of the dial's models only
            dial_scores = PreparedScores(table[table["model"].isin(dial_models)]).extended(*extra)
        else:  # the leaderboard units as prepared above (shared), and the dial's own
            dial_scores = scores.extended(*extra)
        dial = attempt("dial", lambda: aggregation_dial(dial_scores, spec=spec, n_series=n_series))
        del dial_scores
        if dial is not None:
            covered = {} if dial_models is None else {"models": list(dial_models)}
            out.dials.append(DialTable.model_validate({**tag, **_plain(dial), **covered}))
    del own, extra
    if "series" in leaderboard_units:
        metric = spec.metrics[-1] if "rmsse" not in spec.metrics else "rmsse"
        cw = attempt(
            "class winners",
            lambda: class_winners(scores, baseline=spec.baseline, metric=metric, min_cell=spec.min_cell),
        )
        if cw is not None:
            out.class_winners.append(ClassWinnersTable.model_validate({**tag, **_plain(cw)}))
        step_metric = "mase" if "mase" in spec.metrics else "rmsse"
        hr = attempt("horizon", lambda: horizon_robustness(scores, metric=step_metric))
        if hr is not None:
            out.horizon.append(HorizonTable.model_validate({**tag, **_plain(hr)}))
        rel = attempt(
            "relative error",
            lambda: relative_error(
                scores,
                dataset=dataset,
                metric=spec.metrics[0],
                random_walk=spec.random_walk,
                min_cell=spec.min_cell,
                n_resamples=n_resamples,
                seed=spec.seed,
            ),
        )
        out.relative.extend(rel or [])
    for unit in leaderboard_units:  # every leaderboard: unit x demand class x metric
        present = set(pd.unique(scores[unit].column("demand_class"))) if "demand_class" in table else set()
        metrics = [m for m in spec.metrics if m != "crps"]  # block metrics of point forecasts
        for dc in ["all", *[c for c in NAMED_CLASSES if c in present]]:
            try:  # every metric of the leaderboard from one bootstrap draw (the same values as one by one)
                with single_thread_blas():
                    found: list[Any] = leaderboard_uncertainties(
                        scores, spec=spec, metrics=metrics, unit=unit, demand_class=dc, n_resamples=n_resamples
                    )
            except InputError:  # one by one, so that each metric that cannot be computed says why
                found = [
                    attempt(
                        f"uncertainty {unit}/{dc}/{metric}",
                        lambda u=unit, c=dc, m=metric: leaderboard_uncertainty(
                            scores, spec=spec, metric=m, unit=u, demand_class=c, n_resamples=n_resamples
                        ),
                    )
                    for metric in metrics
                ]
            for unc in found:
                if unc is not None:
                    out.uncertainty.append(UncertaintyTable.model_validate({**tag, **_plain(unc)}))
    return out


def sweep_table(
    tables: dict[float, pd.DataFrame],
    *,
    dataset: str,
    protocol: str,
    spec: LeaderboardSpec,
    n_entities: int,
    models: Sequence[str] | None = None,
) -> SweepTable:
    """The spikiness sweep of a synthetic dataset from its per-setting score sets (``models``: the ones
    they hold when the config restricts the sweep, recorded in the table; None: not restricted)."""
    res = spikiness_sweep(tables, spec=spec, metric=spec.metrics[0])
    covered = {} if models is None else {"models": list(models)}
    return SweepTable.model_validate(
        {"dataset": dataset, "protocol": protocol, "n_entities": n_entities, **_plain(res), **covered}
    )


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
    return AcrossTable.model_validate(_plain(res))
