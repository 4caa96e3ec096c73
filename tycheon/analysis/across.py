"""Across datasets: one overall reading of several leaderboards (issue 16; evaluation-choices paper,
section 8).

- **Win rate**: the share of the (dataset, unit, demand class) cells a model is scored in where it wins or
  ties under the test: its Friedman mean rank is within the Nemenyi critical difference of the best mean
  rank of the cell (both read from the leaderboard table's ``mean_rank`` and ``tests.nemenyi_cd``; where a
  cell has no CD, only the rank-1 models win it).
- **Cells beating the random walk**: the number of cells whose leaderboard row says
  ``verdict_vs_rw == "beats"`` (ADR-0006 decision 6, read from the tables, never recomputed).
- **Minimum cell** (WP26 section 6, :mod:`tycheon.analysis.cell`): only cells whose leaderboard table
  reaches it (``tests.cell_ok``, as the table recorded it) are counted, for every model; a cell below it
  counts for no model and is reported in ``n_cells_below_min`` (a table written before the rule, without
  ``cell_ok``, counts as published).
- **Missing cells** (:data:`MISSING_CELLS`): a model is judged on the cells it was scored in; a cell where it
  has no row (it did not run, was skipped or failed on that dataset, or scored no block of that unit and
  class) counts neither for nor against it, so its win rate is over its own cells (``n_cells``).
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
    "a model is judged on the cells it was scored in: a cell where it has no score (it did not run, was "
    "skipped or failed on that dataset, or scored no block of that unit and demand class) counts neither for "
    "nor against it; a cell below the minimum cell counts for no model"
)
"""How the across-datasets table treats a missing cell, as pages state it."""


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
    n_cells: int  # cells passing the minimum cell in which the model is scored
    wins: int
    win_rate: float | None  # None without any such cell
    beats_random_walk_cells: int
    verdict_cells: int  # cells with a verdict (not null)
    gmre_overall: float | None
    gmre: list[RelativeError]
    n_cells_below_min: int  # cells in which the model is scored that are below the minimum cell


@dataclass(frozen=True)
class AcrossDatasets:
    metric: str
    random_walk: str
    n_cells: int  # cells of ``metric`` that pass the minimum cell
    datasets: list[str]
    models: list[ModelAcross]
    n_cells_below_min: int  # cells of ``metric`` left out: below the minimum cell
    min_cell: int | None  # the minimum cell the leaderboard tables recorded (None: tables without the rule)
    cell_counts: str | None  # what it counts, as the tables recorded it
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
    """Win rate, cells beating the random walk and geometric-mean relative error over datasets, over the
    cells that reach the minimum cell (module docstring; a missing cell: :data:`MISSING_CELLS`).

    Parameters
    ----------
    leaderboards : sequence of mapping
        Leaderboard tables as :func:`tycheon.analysis.leaderboard.leaderboard_tables` returns them, each
        with a ``dataset`` key added; the cells of ``metric`` are read, those whose ``tests.cell_ok`` is
        false left out.
    metric : str
        The leaderboard metric whose cells are counted.
    random_walk : str
    relative : sequence of RelativeError
        From :func:`relative_error`, per dataset.

    References
    ----------
    Evaluation-choices paper, section 8; Demšar (2006), section 3.2.2 (Nemenyi CD); Hyndman & Koehler
    (2006), section 3.3 (relative errors, geometric mean); WP26 section 6 (minimum cell).
    """
    cells = [e for e in leaderboards if e.get("metric") == metric]
    if not cells:
        raise InputError(f"no leaderboard table for metric {metric!r}")
    missing = [i for i, e in enumerate(cells) if "dataset" not in e]
    if missing:
        raise InputError(f"leaderboard tables {missing[:5]} lack their 'dataset' key")
    tests = [e.get("tests") or {} for e in cells]
    rules = {t["min_cell"] for t in tests if t.get("min_cell") is not None}
    if len(rules) > 1:
        raise InputError(f"the leaderboard tables record different minimum cells {sorted(rules)}: one rule is needed")
    counted = {t["cell_counts"] for t in tests if t.get("cell_counts") is not None}
    per: dict[str, dict[str, int]] = {}
    n_passing = 0
    for e, t in zip(cells, tests, strict=True):
        passes = t.get("cell_ok") is not False  # a table without the field was written before the rule
        n_passing += passes
        winners = _cell_winners(e) if passes else set()
        for r in e["rows"]:
            s = per.setdefault(r["model"], {"cells": 0, "wins": 0, "beats": 0, "verdicts": 0, "below": 0})
            if not passes:
                s["below"] += 1
                continue
            s["cells"] += 1
            s["wins"] += r["model"] in winners
            s["beats"] += r.get("verdict_vs_rw") == "beats"
            s["verdicts"] += r.get("verdict_vs_rw") is not None
    by_model: dict[str, list[RelativeError]] = {}
    for rel in relative:
        by_model.setdefault(rel.model, []).append(rel)
    models = []
    for m in sorted(per):
        s, rels = per[m], by_model.get(m, [])
        kept = [r.gmre for r in rels if r.cell_ok and np.isfinite(r.gmre)]
        overall = float(np.exp(np.mean(np.log(kept)))) if kept else None
        rate = s["wins"] / s["cells"] if s["cells"] else None
        models.append(ModelAcross(m, s["cells"], s["wins"], rate, s["beats"], s["verdicts"], overall, rels, s["below"]))
    models.sort(key=lambda x: (x.win_rate is None, -(x.win_rate or 0.0), x.model))
    return AcrossDatasets(
        metric,
        random_walk,
        n_passing,
        sorted({e["dataset"] for e in cells}),
        models,
        len(cells) - n_passing,
        rules.pop() if rules else None,
        "; ".join(sorted(counted)) if counted else None,
    )
