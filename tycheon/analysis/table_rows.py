"""The rows of a leaderboard table: the values each model is ranked on, and the checks of the winner.

The ranking rule of a table (:data:`RANKING_TEXT`), each model's headline value, its error relative to the
random walk, its share of zero forecasts, the runner-up and whether the winner survives trimming its
largest blocks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from tycheon._codes import factorize_sorted
from tycheon.analysis._stepgrid import _Losses
from tycheon.analysis.relative import Relative, relative_to_reference
from tycheon.analysis.table_tests import _dm

if TYPE_CHECKING:
    from tycheon.analysis.leaderboard import LeaderboardSpec

_NOT_TESTED = "not a mean of per-step losses (the table ranks the size of the cell's mean): no DM test"

RANKING_TEXT = {
    "gmean_rel_rw": (
        "ranked by the geometric mean of per-block errors relative to the random walk (one huge block cannot "
        "decide it, where a mean of scaled errors is decided by its largest blocks; Davydenko & Fildes 2013, "
        "fev-bench); the arithmetic mean, median and Friedman mean rank are shown beside it"
    ),
    "pooled": (
        "ranked by the cell's pooled ratio sum |e| / sum |y| over every scored step (a ratio of sums, so a "
        "block with small actuals cannot inflate it as a mean of per-block ratios does)"
    ),
    "abs_mean": "ranked by the size of the cell's mean scaled bias (0 is best; the sign says over or under)",
    "mean": (
        "ranked by the arithmetic mean over blocks (the random walk has no score in this table, so no relative "
        "error can be formed)"
    ),
}
"""Why a table ranks as it does, by its ranking rule (``tests.ranking``), as pages state it."""

ZERO_FORECAST_SHARE = 0.5
"""A model whose point forecast is exactly 0 on at least this share of the steps of series with positive
demand in the cell is flagged "mostly zero forecasts"."""

ZERO_FORECAST_TEXT = (
    "share of steps, over the series of the cell with any positive actual, whose point forecast is 0; flagged "
    "at 50% or more: a median-consistent loss (MAE, MASE, WAPE) rewards forecasting zero on intermittent "
    "demand (the median of such a series is usually 0), which leaves a planner under-stocked (Kolassa 2016)"
)


def _zero_forecast_share(table: pd.DataFrame) -> dict[str, float]:
    """Per model, the share of its steps with a zero point forecast among the series of the cell that have a
    positive actual (:data:`ZERO_FORECAST_TEXT`); models without such steps are left out."""
    series, _ = factorize_sorted(table["series_id"])
    positive = (
        np.bincount(
            series,
            weights=(table["actual"].to_numpy(dtype=np.float64) > 0),
            minlength=series.max() + 1 if len(series) else 0,
        )
        > 0
    )
    rows = positive[series] if len(series) else np.zeros(0, dtype=bool)
    zero = table["point"].to_numpy(dtype=np.float64) == 0.0
    n = _model_counts(table, rows)
    hits = _model_counts(table, rows, zero.astype(np.float64)[rows])
    return {str(m): float(hits.get(m, 0.0) / v) for m, v in n.items() if v > 0}


def _zero_flag(share: float | None) -> bool | None:
    return None if share is None else bool(share >= ZERO_FORECAST_SHARE)


def _pooled_ratio(table: pd.DataFrame, models: list[str]) -> dict[str, float]:
    """Per model, sum |e| / sum |y| over all its steps of the cell (WAPE pooled per cell); NaN where the
    actuals sum to 0."""
    y = table["actual"].to_numpy(dtype=np.float64)
    every = np.ones(len(table), dtype=bool)
    num = _model_counts(table, every, np.abs(table["point"].to_numpy(dtype=np.float64) - y))
    den = _model_counts(table, every, np.abs(y))
    out = {}
    for m in models:
        d = float(den.get(m, 0.0))
        out[m] = float(num.get(m, np.nan)) / d if d > 0 else float("nan")
    return out


def _relative(wide: pd.DataFrame, spec: LeaderboardSpec, *, interval: bool = True) -> dict[str, Relative]:
    """:func:`tycheon.analysis.relative.relative_to_reference` against the random walk; empty where the
    random walk has no block in the table."""
    if spec.random_walk not in wide.columns:
        return {}
    return relative_to_reference(
        wide, reference=spec.random_walk, horizon=spec.horizon, stride=spec.stride, interval=interval
    )


def _skill_reason(rel: Relative | None, cell_reason: str | None) -> str | None:
    """Why a row's skill has no interval: the minimum cell's reason, the relative error's, or None."""
    if rel is None:
        return "no blocks of the random walk"
    if rel.reason is None and rel.skill_low is None and cell_reason is not None:
        return cell_reason
    return rel.reason


def _ranking(rank_by: str, relative: dict[str, Relative]) -> str:
    """The rule a table ranks by: its metric's, or the mean where the relative error cannot be formed."""
    return "mean" if rank_by == "gmean_rel_rw" and not relative else rank_by


def _headline_values(
    ranking: str, means: dict[str, float], pooled: dict[str, float], relative: dict[str, Relative], models: list[str]
) -> dict[str, float]:
    """Per model, the value the table ranks on (lower is better; NaN ranks last)."""
    nan = float("nan")
    if ranking == "gmean_rel_rw":
        gmeans = {m: relative[m].gmean if m in relative else None for m in models}
        return {m: nan if g is None else float(g) for m, g in gmeans.items()}
    if ranking == "pooled":
        return {m: pooled.get(m, nan) for m in models}
    if ranking == "abs_mean":
        return {m: abs(means[m]) for m in models}
    return {m: means[m] for m in models}


def _runner_up(
    rows: list[dict[str, Any]], loss: _Losses | None, spec: LeaderboardSpec, winner: str | None
) -> dict[str, Any]:
    """The runner-up and whether the winner is tied with it: a two-sided panel-robust DM test of the two on
    the table's loss (one test, no adjustment); tied where its p is at least ``spec.alpha``, else
    ``runner_up_lower_loss`` names the one with the lower mean loss (the table ranks on the relative error,
    which can order the two the other way)."""
    out: dict[str, Any] = {
        "runner_up": None,
        "runner_up_p": None,
        "runner_up_tied": None,
        "runner_up_lower_loss": None,
        "runner_up_reason": None,
    }
    if winner is None or len(rows) < 2:
        out["runner_up_reason"] = "no winner named" if winner is None else "one model"
        return out
    out["runner_up"] = rows[1]["model"]
    if loss is None:
        out["runner_up_reason"] = _NOT_TESTED
        return out
    res, why = _dm(loss, winner, rows[1]["model"], spec=spec, alternative="two-sided")
    if res is None or not np.isfinite(res.p_value):
        out["runner_up_reason"] = why or "the test gave no p-value"
        return out
    out["runner_up_p"] = float(res.p_value)
    out["runner_up_tied"] = bool(res.p_value >= spec.alpha)
    if not out["runner_up_tied"]:  # which has the lower mean loss: the ranking rule need not agree with the mean
        out["runner_up_lower_loss"] = winner if res.statistic < 0 else rows[1]["model"]
    return out


TRIM_SHARE = 0.01
"""The share of a table's blocks (largest first) removed to check that no few blocks decide its winner."""


def _trimmed(
    table: pd.DataFrame,
    wide: pd.DataFrame,
    size: pd.DataFrame,
    ranking: str,
    models: list[str],
    spec: LeaderboardSpec,
    winner: str | None,
) -> dict[str, Any]:
    """The winner by the table's own rule after removing the top :data:`TRIM_SHARE` of blocks (at least one),
    the blocks with the largest score of any model; ``winner_trimmed_differs`` says when one block or a few
    decide the table."""
    out: dict[str, Any] = {
        "trim_share": TRIM_SHARE,
        "trimmed_blocks": None,
        "winner_trimmed": None,
        "winner_trimmed_differs": None,
    }
    if winner is None or len(size) < 2:
        return out
    k = max(1, int(np.ceil(TRIM_SHARE * len(size))))
    worst = np.nan_to_num(size.reindex(columns=models).to_numpy(dtype=np.float64), nan=-np.inf).max(axis=1)
    drop = np.argsort(-worst, kind="stable")[:k]
    keep = np.ones(len(size), dtype=bool)
    keep[drop] = False
    kept_wide = wide[keep]
    nan = float("nan")
    if ranking == "gmean_rel_rw":
        rel = _relative(kept_wide, spec, interval=False)
        values = _headline_values(ranking, {}, {}, rel, models)
    elif ranking == "pooled":
        dropped = size.index[drop]
        blocks = pd.MultiIndex.from_arrays([table["series_id"].astype(object), table["origin"]])
        rows = table[~blocks.isin(dropped)]
        values = _pooled_ratio(rows, models) if len(rows) else dict.fromkeys(models, nan)
    else:
        means = {
            m: float(np.nanmean(kept_wide[m].to_numpy(dtype=np.float64))) if m in kept_wide else nan for m in models
        }
        values = _headline_values(ranking, means, {}, {}, models)
    order = sorted(models, key=lambda m: (np.isnan(values[m]), values[m], m))
    out.update(trimmed_blocks=k, winner_trimmed=order[0], winner_trimmed_differs=order[0] != winner)
    return out


def _by_model(values: pd.Series) -> dict[str, float]:
    """A per-model Series as ``{model: float}``."""
    return {str(m): float(v) for m, v in values.items()}


def _model_counts(rows: pd.DataFrame, mask: np.ndarray, weights: np.ndarray | None = None) -> pd.Series:
    """Per model (sorted), the number of ``rows`` where ``mask`` holds, or the sum of ``weights`` over
    them; models with no such row are left out (as a ``groupby`` of the masked rows leaves them out)."""
    codes, models = factorize_sorted(rows["model"])
    n = np.bincount(codes[mask], minlength=len(models))
    values = n if weights is None else np.bincount(codes[mask], weights=weights, minlength=len(models))
    keep = n > 0
    return pd.Series(values[keep], index=pd.Index(models[keep], name="model"))
