"""Across datasets: one overall reading of several leaderboards (issue 16, issue 35; evaluation-choices
paper, section 8).

- **Eligible cells**: the (dataset, unit, demand class) leaderboard tables of the metric that reach the
  minimum cell (WP26 section 6, :mod:`tycheon.analysis.cell`; ``tests.cell_ok`` as the table recorded it,
  a table written before the rule counting as published) and score the random walk (a row with a mean):
  the relative error and the verdicts are against it. A cell that is not eligible counts for no model;
  ``n_cells_below_min`` and ``n_cells_without_random_walk`` say how many there were.
- **Ranked models: one common support** (:data:`MISSING_CELLS`). A model is ranked iff it is scored (has a
  row with a mean) in every eligible cell; the ranked models are then compared on exactly the same cells.
  A model missing from any eligible cell is listed after them without a rank, with its coverage (``n_cells``
  of ``n_eligible``) and the reason; its figures over its own cells are kept but are not comparable. Cells
  are never dropped to let a model in, and no missing score is filled in.
- **Win rate**: the share of the eligible cells a model is scored in where it wins or ties under the test:
  its Friedman mean rank is within the Nemenyi critical difference of the best mean rank of the cell (both
  read from the leaderboard table's ``mean_rank`` and ``tests.nemenyi_cd``, all the table's models
  included; where a cell has no CD, only the rank-1 models win it). For a ranked model those cells are all
  the eligible ones; ranks follow the number of cells won or tied (ties share the lower rank).
- **Cells beating the random walk**: the number of those cells whose leaderboard row says
  ``verdict_vs_rw == "beats"`` (ADR-0006 decision 6, read from the tables, never recomputed).
- **Geometric-mean relative error** against the random walk (a skill score), per dataset from the block
  metrics of the series unit, on the blocks where both are positive and finite:

  .. math:: \\mathrm{GMRE}_m = \\exp\\Big(\\frac{1}{|B|}\\sum_{b \\in B}\\log\\frac{M_{mb}}{M_{\\mathrm{rw},b}}\\Big)

  with a paired series-level bootstrap CI of the mean log ratio
  (:func:`tycheon.stats.bootstrap.paired_means_bootstrap`), exponentiated. That interval **assumes
  series independent** (it resamples series; with shocks shared across series it is too narrow);
  the overall value is the
  geometric mean of the per-dataset values (each dataset weighs the same; no CI across datasets). A
  (dataset, model) with fewer than ``min_cell`` such blocks (the minimum cell, counted in the same scored
  blocks) gives no value (``cell_ok`` false, with its reason) and is left out of the overall value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tycheon.analysis.cell import cell_check
from tycheon.analysis.prepared import PreparedScores, prepared, require_models, wide
from tycheon.errors import InputError
from tycheon.stats.bootstrap import paired_means_bootstrap

__all__ = ["MISSING_CELLS", "AcrossDatasets", "ModelAcross", "RelativeError", "across_datasets", "relative_error"]

MISSING_CELLS = (
    "A model is ranked only if it has a score in every cell that passes the minimum cell and scores the "
    "random walk, so every rank, win rate and count of ranked models is over the same cells. A model without "
    "a score in one of them (it did not run, was skipped or failed on that dataset, or scored no block of "
    "that unit and demand class) is not ranked: it is listed apart with its coverage and the reason, and its "
    "figures over its own cells are not comparable with the ranked ones. fev-bench can instead fill such a "
    "gap with the seasonal-naive baseline's score and rank every model; here no score is made up, and no cell "
    "is dropped to let a model in. A cell below the minimum cell or without the random walk counts for no model."
)
"""How the across-datasets table treats a missing cell: the ranking rule, as pages state it."""

_SERIES = "series"  # the unit whose absence the reason of an unranked model names


@dataclass(frozen=True)
class RelativeError:
    dataset: str
    model: str
    gmre: float  # NaN below the minimum cell
    low: float
    high: float
    n_blocks: int  # paired blocks with both metrics positive and finite: what the minimum cell counts
    n_excluded: int  # blocks with a zero or missing metric on either side
    cell_ok: bool
    cell_reason: str | None


@dataclass(frozen=True)
class ModelAcross:
    model: str
    n_cells: int  # eligible cells in which the model is scored: all of them for a ranked model
    wins: int
    win_rate: float | None  # wins / n_cells; None without any such cell
    beats_random_walk_cells: int
    verdict_cells: int  # of those cells, the ones with a verdict (not null)
    gmre_overall: float | None
    gmre: list[RelativeError]
    n_cells_below_min: int  # cells in which the model is scored that are below the minimum cell
    ranked: bool  # scored in every eligible cell, so its figures are over the common support
    rank: int | None  # among the ranked models by cells won or tied (ties share the lower rank); None unranked
    n_eligible: int  # eligible cells: the model's coverage is n_cells of n_eligible
    reason: str | None  # why the model is not ranked; None when it is


@dataclass(frozen=True)
class AcrossDatasets:
    metric: str
    random_walk: str
    n_cells: int  # eligible cells of ``metric``: they pass the minimum cell and score the random walk
    datasets: list[str]
    models: list[ModelAcross]  # the ranked ones by rank, then the others by coverage
    n_cells_below_min: int  # cells of ``metric`` left out: below the minimum cell
    min_cell: int | None  # the minimum cell the leaderboard tables recorded (None: tables without the rule)
    cell_counts: str | None  # what it counts, as the tables recorded it
    n_cells_without_random_walk: int  # cells reaching the minimum cell left out: the random walk has no score
    n_ranked_models: int
    support: str  # the cells the ranking is over and the models it ranks, as one sentence
    missing_cells: str = MISSING_CELLS


def relative_error(
    table: pd.DataFrame | PreparedScores,
    *,
    dataset: str,
    metric: str,
    random_walk: str,
    min_cell: int,
    unit: str = "series",
    n_resamples: int = 2000,
    seed: int = 0,
) -> list[RelativeError]:
    """Geometric-mean relative error of every model against the random walk on one dataset (see the
    module docstring), with a series-level paired bootstrap CI; a model with fewer than ``min_cell``
    paired blocks (the config's minimum cell) gets no value, only the reason."""
    scores = prepared(table)[unit]
    require_models(scores, [random_walk])
    w = wide(scores.blocks((metric,)), metric)  # [(series, origin), model]
    rw = w[random_walk]
    ok = (w > 0) & np.isfinite(w) & ((rw > 0) & np.isfinite(rw)).to_numpy()[:, None]
    logs = pd.DataFrame(np.log(w.where(ok))).sub(np.log(rw.where(rw > 0)), axis=0)  # NaN where excluded
    keep = logs[random_walk].notna()
    logs = logs[keep]
    if logs.empty:
        return []
    boot = paired_means_bootstrap(
        logs,
        blocks=logs.index.get_level_values("series_id").to_numpy(),
        reference=random_walk,
        n_resamples=n_resamples,
        seed=seed,
    )
    out = []
    for j, m in enumerate(boot.columns):
        if m == random_walk or not np.isfinite(boot.mean[j]):
            continue
        scored = int(w[m].notna().sum())
        check = cell_check(int(boot.n_obs[j]), min_cell=min_cell)
        values = (boot.mean[j], boot.mean_low[j], boot.mean_high[j])
        gmre, low, high = (float(np.exp(v)) if check.ok else float("nan") for v in values)
        out.append(
            RelativeError(
                dataset,
                m,
                gmre,
                low,
                high,
                int(boot.n_obs[j]),
                scored - int(boot.n_obs[j]),
                check.ok,
                check.reason,
            )
        )
    return out


@dataclass(frozen=True)
class _Cell:
    """One leaderboard table of the metric, as the ranking reads it."""

    dataset: str
    unit: str | None
    eligible: bool
    below_min: bool
    scored: frozenset[str]  # models with a mean in the table
    winners: frozenset[str]  # empty unless eligible
    verdicts: Mapping[str, str | None]  # model -> verdict_vs_rw


def _has_score(row: Mapping) -> bool:
    mean = row.get("mean")
    return mean is not None and not (isinstance(mean, float) and np.isnan(mean))


def _read_cell(entry: Mapping, tests: Mapping, *, random_walk: str) -> _Cell:
    below = tests.get("cell_ok") is False  # a table without the field was written before the rule
    scored = frozenset(r["model"] for r in entry["rows"] if _has_score(r))
    eligible = not below and random_walk in scored
    return _Cell(
        entry["dataset"],
        entry.get("unit"),
        eligible,
        below,
        scored,
        frozenset(_cell_winners(entry)) if eligible else frozenset(),
        {r["model"]: r.get("verdict_vs_rw") for r in entry["rows"]},
    )


@dataclass(frozen=True)
class _Tally:
    """One model's counts over the eligible cells it is scored in."""

    cells: int
    wins: int
    beats: int  # cells whose verdict against the random walk is "beats"
    verdicts: int  # cells with a verdict
    below_min: int  # cells below the minimum cell in which it is scored

    @classmethod
    def of(cls, model: str, cells: Sequence[_Cell]) -> _Tally:
        own = [c for c in cells if c.eligible and model in c.scored]
        return cls(
            len(own),
            sum(model in c.winners for c in own),
            sum(c.verdicts.get(model) == "beats" for c in own),
            sum(c.verdicts.get(model) is not None for c in own),
            sum(model in c.scored for c in cells if c.below_min),
        )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _unranked_reason(model: str, eligible: Sequence[_Cell]) -> str:
    """Why ``model`` is not ranked: its coverage of the eligible cells and where it is missing."""
    if not eligible:
        return "no cell passes the minimum cell and scores the random walk, so no model is ranked"
    own = [c for c in eligible if model in c.scored]
    gaps = []
    if any(c.unit == _SERIES for c in eligible) and not any(c.unit == _SERIES for c in own):
        gaps.append(f"none at the {_SERIES} unit")
    for d in sorted({c.dataset for c in eligible}):
        total = sum(c.dataset == d for c in eligible)
        have = sum(c.dataset == d for c in own)
        if have == 0:
            gaps.append(f"none on {d}")
        elif have < total:
            gaps.append(f"{total - have} of {total} missing on {d}")
    return (
        f"scored in {len(own)} of the {_plural(len(eligible), 'cell')} that pass the minimum cell and score "
        f"the random walk ({'; '.join(gaps)})"
    )


def _support(*, metric: str, n_total: int, n_eligible: int, below: int, no_rw: int, ranked: int, models: int) -> str:
    """The ranking's support as one sentence: the cells it is over and the models it ranks."""
    left_out = f"{below} below the minimum cell, {no_rw} without a random-walk score"
    if n_eligible == 0:
        return f"No model is ranked: none of the {_plural(n_total, 'cell')} of {metric} is eligible ({left_out})."
    cells = f"{_plural(n_eligible, 'cell')} of {metric} that pass the minimum cell and score the random walk"
    if ranked == models:
        return f"All {_plural(models, 'model')} are ranked, each scored in all {cells} (of {n_total}: {left_out})."
    return (
        f"{ranked} of the {_plural(models, 'model')} are ranked: those scored in all {cells} (of {n_total}: "
        f"{left_out}); the other {models - ranked} miss at least one of these cells and are listed apart, "
        "without a rank."
    )


def _cell_winners(entry: Mapping) -> set[str]:
    rows = entry["rows"]
    cd = (entry.get("tests") or {}).get("nemenyi_cd")
    ranked = [r for r in rows if r.get("mean_rank") is not None]
    if cd is None or not ranked:
        return {r["model"] for r in rows if r["rank"] == 1}
    best = min(r["mean_rank"] for r in ranked)
    return {r["model"] for r in ranked if r["mean_rank"] - best <= cd}


def across_datasets(
    leaderboards: Sequence[Mapping],
    *,
    metric: str,
    random_walk: str,
    relative: Sequence[RelativeError] = (),
) -> AcrossDatasets:
    """Win rate, cells beating the random walk and geometric-mean relative error over datasets, with the
    models ranked on their common support: the eligible cells, every one of which a ranked model is scored
    in (module docstring; a missing cell: :data:`MISSING_CELLS`).

    Parameters
    ----------
    leaderboards : sequence of mapping
        Leaderboard tables as :func:`tycheon.analysis.leaderboard.leaderboard_tables` returns them, each
        with a ``dataset`` key added; the cells of ``metric`` are read, those whose ``tests.cell_ok`` is
        false or without a mean of ``random_walk`` left out. A model is scored in a cell where its row has a
        mean.
    metric : str
        The leaderboard metric whose cells are counted.
    random_walk : str
    relative : sequence of RelativeError
        From :func:`relative_error`, per dataset.

    Returns
    -------
    AcrossDatasets
        The ranked models first (``ranked``, by ``rank``), then the models missing from some eligible cell
        (``ranked`` false, by coverage, with the ``reason``).

    References
    ----------
    Evaluation-choices paper, section 8; Demšar (2006), section 3.2.2 (Nemenyi CD); Hyndman & Koehler
    (2006), section 3.3 (relative errors, geometric mean); WP26 section 6 (minimum cell); Shchur et al.
    (2025), fev-bench, for the imputation this function does not do.
    """
    entries = [e for e in leaderboards if e.get("metric") == metric]
    if not entries:
        raise InputError(f"no leaderboard table for metric {metric!r}")
    missing = [i for i, e in enumerate(entries) if "dataset" not in e]
    if missing:
        raise InputError(f"leaderboard tables {missing[:5]} lack their 'dataset' key")
    tests = [e.get("tests") or {} for e in entries]
    rules = {t["min_cell"] for t in tests if t.get("min_cell") is not None}
    if len(rules) > 1:
        raise InputError(f"the leaderboard tables record different minimum cells {sorted(rules)}: one rule is needed")
    counted = {t["cell_counts"] for t in tests if t.get("cell_counts") is not None}
    cells = [_read_cell(e, t, random_walk=random_walk) for e, t in zip(entries, tests, strict=True)]
    eligible = [c for c in cells if c.eligible]
    by_model: dict[str, list[RelativeError]] = {}
    for rel in relative:
        by_model.setdefault(rel.model, []).append(rel)
    names = sorted({r["model"] for e in entries for r in e["rows"]})
    tallies = {m: _Tally.of(m, cells) for m in names}
    ranked = {m for m, t in tallies.items() if eligible and t.cells == len(eligible)}
    models = []
    for m in names:
        t, rels = tallies[m], by_model.get(m, [])
        kept = [r.gmre for r in rels if r.cell_ok and np.isfinite(r.gmre)]
        is_ranked = m in ranked
        models.append(
            ModelAcross(
                model=m,
                n_cells=t.cells,
                wins=t.wins,
                win_rate=t.wins / t.cells if t.cells else None,
                beats_random_walk_cells=t.beats,
                verdict_cells=t.verdicts,
                gmre_overall=float(np.exp(np.mean(np.log(kept)))) if kept else None,
                gmre=rels,
                n_cells_below_min=t.below_min,
                ranked=is_ranked,
                rank=1 + sum(tallies[o].wins > t.wins for o in ranked) if is_ranked else None,
                n_eligible=len(eligible),
                reason=None if is_ranked else _unranked_reason(m, eligible),
            )
        )
    models.sort(key=lambda x: (not x.ranked, x.rank or 0, -x.n_cells, -(x.win_rate or 0.0), x.model))
    n_below = sum(c.below_min for c in cells)
    n_no_rw = len(cells) - len(eligible) - n_below
    return AcrossDatasets(
        metric=metric,
        random_walk=random_walk,
        n_cells=len(eligible),
        datasets=sorted({c.dataset for c in cells}),
        models=models,
        n_cells_below_min=n_below,
        min_cell=rules.pop() if rules else None,
        cell_counts="; ".join(sorted(counted)) if counted else None,
        n_cells_without_random_walk=n_no_rw,
        n_ranked_models=len(ranked),
        support=_support(
            metric=metric,
            n_total=len(cells),
            n_eligible=len(eligible),
            below=n_below,
            no_rw=n_no_rw,
            ranked=len(ranked),
            models=len(names),
        ),
    )
