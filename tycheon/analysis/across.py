"""Across datasets: one overall reading of several leaderboards (issue 16; evaluation-choices paper,
section 8).

- **Win rate**: the share of the (dataset, unit, demand class) cells a model is scored in where it wins or
  ties under the test: its Friedman mean rank is within the Nemenyi critical difference of the best mean
  rank of the cell (both read from the leaderboard table's ``mean_rank`` and ``tests.nemenyi_cd``; where a
  cell has no CD, only the rank-1 models win it).
- **Cells beating the random walk**: the number of cells whose leaderboard row says
  ``verdict_vs_rw == "beats"`` (ADR-0006 decision 6, read from the tables, never recomputed).
- **Geometric-mean relative error** against the random walk (a skill score), per dataset from the block
  metrics of the series unit, on the blocks where both are positive and finite:

  .. math:: \\mathrm{GMRE}_m = \\exp\\Big(\\frac{1}{|B|}\\sum_{b \\in B}\\log\\frac{M_{mb}}{M_{\\mathrm{rw},b}}\\Big)

  with a paired series-level bootstrap CI of the mean log ratio
  (:func:`tycheon.stats.bootstrap.paired_means_bootstrap`), exponentiated; the overall value is the
  geometric mean of the per-dataset values (each dataset weighs the same; no CI across datasets).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tycheon.analysis.prepared import PreparedScores, prepared, require_models, wide
from tycheon.errors import InputError
from tycheon.stats.bootstrap import paired_means_bootstrap

__all__ = ["AcrossDatasets", "ModelAcross", "RelativeError", "across_datasets", "relative_error"]


@dataclass(frozen=True)
class RelativeError:
    dataset: str
    model: str
    gmre: float
    low: float
    high: float
    n_blocks: int
    n_excluded: int  # blocks with a zero or missing metric on either side


@dataclass(frozen=True)
class ModelAcross:
    model: str
    n_cells: int
    wins: int
    win_rate: float
    beats_random_walk_cells: int
    verdict_cells: int  # cells with a verdict (not null)
    gmre_overall: float | None
    gmre: list[RelativeError]


@dataclass(frozen=True)
class AcrossDatasets:
    metric: str
    random_walk: str
    n_cells: int
    datasets: list[str]
    models: list[ModelAcross]


def relative_error(
    table: pd.DataFrame | PreparedScores,
    *,
    dataset: str,
    metric: str,
    random_walk: str,
    unit: str = "series",
    n_resamples: int = 2000,
    seed: int = 0,
) -> list[RelativeError]:
    """Geometric-mean relative error of every model against the random walk on one dataset (see the
    module docstring), with a series-level paired bootstrap CI."""
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
        out.append(
            RelativeError(
                dataset,
                m,
                float(np.exp(boot.mean[j])),
                float(np.exp(boot.mean_low[j])),
                float(np.exp(boot.mean_high[j])),
                int(boot.n_obs[j]),
                scored - int(boot.n_obs[j]),
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
    """Win rate, cells beating the random walk and geometric-mean relative error over datasets.

    Parameters
    ----------
    leaderboards : sequence of mapping
        Leaderboard tables as :func:`tycheon.analysis.leaderboard.leaderboard_tables` returns them, each
        with a ``dataset`` key added; the cells of ``metric`` are read.
    metric : str
        The leaderboard metric whose cells are counted.
    random_walk : str
    relative : sequence of RelativeError
        From :func:`relative_error`, per dataset.

    References
    ----------
    Evaluation-choices paper, section 8; Demšar (2006), section 3.2.2 (Nemenyi CD); Hyndman & Koehler
    (2006), section 3.3 (relative errors, geometric mean).
    """
    cells = [e for e in leaderboards if e.get("metric") == metric]
    if not cells:
        raise InputError(f"no leaderboard table for metric {metric!r}")
    missing = [i for i, e in enumerate(cells) if "dataset" not in e]
    if missing:
        raise InputError(f"leaderboard tables {missing[:5]} lack their 'dataset' key")
    per: dict[str, dict[str, int]] = {}
    for e in cells:
        winners = _cell_winners(e)
        for r in e["rows"]:
            s = per.setdefault(r["model"], {"cells": 0, "wins": 0, "beats": 0, "verdicts": 0})
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
        overall = float(np.exp(np.mean(np.log([r.gmre for r in rels])))) if rels else None
        models.append(
            ModelAcross(m, s["cells"], s["wins"], s["wins"] / s["cells"], s["beats"], s["verdicts"], overall, rels)
        )
    models.sort(key=lambda x: (-x.win_rate, x.model))
    return AcrossDatasets(metric, random_walk, len(cells), sorted({e["dataset"] for e in cells}), models)
