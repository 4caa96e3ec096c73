"""Published values beside a run's own: every competition category of a run, each with the published
numbers held against it (or none, said so), our value from the run's competition table, the difference and
whether ours equals the published number at its printed precision.

Ours is read from the results document's competition tables (the mean over series of the competition's
metric, :mod:`tycheon.analysis.competition`); a value published for several categories pooled (the whole
competition) is held against the mean of those categories' means weighted as the value's ``pooling``
says: by series (the mean over all their series) or by series times horizon (the mean over every series
and forecast step, the M3 paper's "all data" average). Nothing else is computed here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from benchmarks.published.catalogue import PublishedCatalogue, PublishedSource, PublishedValue
from benchmarks.results_model import CompetitionTable

__all__ = ["NO_TABLE", "SEARCHED", "CategoryComparison", "ValueComparison", "compare", "searched"]

NO_TABLE = "no published table found in the sources available to us"
# What was searched, per competition and metric, where no printed table was found (said on the page).
SEARCHED = {
    ("M1", "mape"): "searched: the Mcomp R package (Hyndman, on CRAN: data, R documentation, vignettes), the "
    "public repositories indexed by our search tools (text and file search for the accuracy tables of Makridakis "
    "et al. (1982) or a copy of the paper) and the web pages they index (where long documents, such as Armstrong "
    "& Lusk's 1983 commentary, show only their opening); no copy of the 1982 tables was found",
    ("M1", "mase"): "the M1 paper (Makridakis et al. 1982) predates the MASE; no later source printing M1 MASE "
    "tables for the methods we reproduce was found in the Mcomp R package or the repositories and pages indexed "
    "by our search tools",
    ("M3", "mase"): "the M3 paper (Makridakis & Hibon 2000) reports symmetric MAPE, average ranking, median "
    "symmetric APE, percentage better and median RAE, not MASE; the Mcomp vignette's MASE column is recomputed "
    "from the submissions over all 3,003 series, not printed per category",
}


def searched(competition: str, metric: str) -> str | None:
    """What was searched for a category of ``competition`` under ``metric`` without a printed table."""
    return SEARCHED.get((competition, metric))


@dataclass(frozen=True)
class ValueComparison:
    """One published value and ours. ``matches``: ours printed at the published precision is the same
    number; None when there is no value of ours. ``note`` says why ours is missing."""

    published: PublishedValue
    source: PublishedSource
    display_name: str
    ours: float | None
    difference: float | None  # ours - published
    relative: float | None  # difference / published
    matches: bool | None
    note: str | None
    in_run: bool  # the model is in one of the run's competition tables (it has a model page)


@dataclass(frozen=True)
class CategoryComparison:
    """A competition category (one dataset, or several pooled) under one metric, and its comparisons;
    no comparisons means no published table was found for it."""

    competition: str
    label: str
    datasets: tuple[str, ...]
    metric: str
    horizon: int | None
    n_series: int | None
    rows: tuple[ValueComparison, ...]
    searched: str | None = None  # what was searched, shown when no printed table was found


def _ours(
    value: PublishedValue, tables: dict[tuple[str, str], CompetitionTable]
) -> tuple[float | None, str | None, str, int | None]:
    """(ours, note when missing, display name, series) for ``value`` from the run's tables."""
    total, weight, n_series, name = 0.0, 0, 0, value.model
    for dataset in value.datasets:
        table = tables.get((dataset, value.metric))
        if table is None:
            return None, f"this run has no {value.metric} table for {dataset}", name, None
        row = next((r for r in table.rows if r.model == value.model), None)
        if row is None:
            return None, f"{value.model} is not in this run's roster for {dataset}", name, None
        name = row.display_name
        if row.status != "ran" or row.value is None or not math.isfinite(row.value):
            return None, f"{value.model} {row.status} on {dataset}", name, None
        steps = table.horizon if value.pooling == "series_horizon" else 1
        total += row.value * row.n_series * steps
        weight += row.n_series * steps
        n_series += row.n_series
    return (total / weight if weight else None), None, name, n_series


def _compare(
    value: PublishedValue, catalogue: PublishedCatalogue, tables, subsampled: Mapping[str, int]
) -> ValueComparison:
    ours, note, name, _ = _ours(value, tables)
    published = float(value.value)
    cut = [f"{d} ({subsampled[d]} series)" for d in value.datasets if d in subsampled]
    # a published value covers every series: ours on a subsample is another number, shown but not compared
    on_subsample = ours is not None and bool(cut)
    compared = None if on_subsample else ours
    difference = None if compared is None else compared - published
    return ValueComparison(
        published=value,
        source=catalogue.source(value.source),
        display_name=name,
        ours=ours,
        difference=difference,
        relative=None if difference is None or published == 0 else difference / published,
        matches=None if compared is None else f"{compared:.{value.precision}f}" == value.printed(),
        note=f"not comparable: this run scored a subsample of {', '.join(cut)}" if on_subsample else note,
        in_run=any(r.model == value.model for t in tables.values() for r in t.rows),
    )


def compare(
    competition: Sequence[CompetitionTable],
    catalogue: PublishedCatalogue,
    *,
    subsampled: Mapping[str, int] | None = None,
) -> list[CategoryComparison]:
    """Every competition category of a run, in the run's order, then each pooled category a published
    value names (the whole of a competition), each with its published values held against ours.

    ``subsampled`` maps a category the run scored on a subsample to its size: a published value there is
    shown beside ours but not compared (it covers every series)."""
    subsampled = dict(subsampled or {})
    tables = {(t.dataset, t.metric): t for t in competition}
    out = []
    for t in competition:
        values = [v for v in catalogue.values if v.datasets == [t.dataset] and v.metric == t.metric]
        n = max((r.n_series for r in t.rows), default=None)
        out.append(
            CategoryComparison(
                competition=t.competition,
                label=t.dataset,
                datasets=(t.dataset,),
                metric=t.metric,
                horizon=t.horizon,
                n_series=n,
                rows=tuple(_compare(v, catalogue, tables, subsampled) for v in values),
                searched=searched(t.competition, t.metric),
            )
        )
    pooled: dict[tuple[str, tuple[str, ...], str], list[PublishedValue]] = {}
    for v in catalogue.values:
        if len(v.datasets) > 1:
            pooled.setdefault((v.competition, tuple(v.datasets), v.metric), []).append(v)
    run_datasets = {t.dataset for t in competition}
    for (comp, datasets, metric), values in pooled.items():
        if not run_datasets & set(datasets):
            continue  # the run scores none of this competition
        rows = tuple(_compare(v, catalogue, tables, subsampled) for v in values)
        out.append(
            CategoryComparison(
                competition=comp,
                label=f"{comp}, all categories ({', '.join(datasets)})",
                datasets=datasets,
                metric=metric,
                horizon=None,
                n_series=_ours(values[0], tables)[3],
                rows=rows,
            )
        )
    return out
