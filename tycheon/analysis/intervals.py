"""The interval table of one (unit, demand class): coverage and MSIS of the conformal bands, the point
ranking against the interval ranking, and the cell's inventory simulation
(:func:`tycheon.analysis.leaderboard.interval_tables` says what each column means).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from tycheon.analysis.cell import cell_check
from tycheon.analysis.table_rows import _by_model, _model_counts
from tycheon.errors import InputError
from tycheon.metrics.aggregate import summarize
from tycheon.stats.ranking import rank_by_mean, spearman_test

if TYPE_CHECKING:
    from tycheon.analysis.leaderboard import LeaderboardSpec


def _record_coverage(rows: pd.DataFrame, level: str) -> pd.Series:
    """Per model, the share of records with a band whose actual lies in the closed band."""
    lo, hi, y = (rows[c].to_numpy(dtype=np.float64) for c in (f"lo{level}", f"hi{level}", "actual"))
    banded = np.isfinite(lo) & np.isfinite(hi)
    inside = ((lo <= y) & (y <= hi))[banded].astype(np.float64)
    hits = _model_counts(rows, banded, inside)
    return hits / _model_counts(rows, banded)  # 0/1 sums are exact: the groupby mean, bit for bit


_CLASS_COLUMNS = (
    *("model", "series_id", "origin", "step", "target_period", "has_band", "actual", "point"),
    *("lo80", "hi80", "lo95", "hi95"),
)
"""The columns a class's coverage and inventory simulation read (those a table has)."""


def _inventory(rec: pd.DataFrame, spec: LeaderboardSpec | None) -> dict[str, Any]:
    """The cell's inventory outcome (:func:`tycheon.analysis.inventory.inventory_table` at the spec's service
    level, lead time, review period and policy), or why there is none."""
    from tycheon.analysis.inventory import COLUMNS, inventory_table

    if spec is None:
        return {"inventory": None, "inventory_reason": "no leaderboard spec (random walk, service level) given"}
    lacking = [c for c in COLUMNS if c not in rec.columns]
    if lacking:
        return {"inventory": None, "inventory_reason": f"the score set lacks {lacking}"}
    banded = rec["has_band"].to_numpy(dtype=bool) if "has_band" in rec.columns else np.ones(len(rec), dtype=bool)
    if not banded.any():
        return {"inventory": None, "inventory_reason": "no model has a calibrated band in this cell"}
    try:
        table = inventory_table(
            rec[list(COLUMNS)],  # an "all" cell holds several demand classes: the simulation reads none
            random_walk=spec.random_walk,
            target=spec.service_level,
            lead_time=spec.lead_time,
            review_period=spec.review_period,
            lost_sales=spec.lost_sales,
            min_cell=spec.min_cell,
        )
    except InputError as err:
        return {"inventory": None, "inventory_reason": str(err)}
    if not table["n_series_periods"]:
        why = f"no period has an order-up-to level at {spec.service_level:g} from every model (bands too narrow a grid)"
        return {"inventory": None, "inventory_reason": why}
    return {"inventory": table, "inventory_reason": None}


def _one_interval_table(
    rec: pd.DataFrame,
    bl: pd.DataFrame,
    *,
    unit: str,
    demand_class: str,
    point_metric: str,
    min_cell: int,
    spec: LeaderboardSpec | None = None,
) -> dict[str, Any]:
    """The interval table of one (unit, demand class): its records ``rec`` (at least the model, band and
    actual columns) and its blocks ``bl`` (with ``point_metric``, ``msis80`` and ``msis95``). Below the
    minimum cell (:func:`tycheon.analysis.cell.cell_check` on the cell's blocks) the coverage and MSIS are
    shown but no ranking is named."""
    metrics = [point_metric, "msis80", "msis95"]
    cell = cell_check(int(bl[["series_id", "origin"]].drop_duplicates().shape[0]), min_cell=min_cell)
    n_rec = _model_counts(rec, rec["has_band"].to_numpy(dtype=bool))
    cover = {level: _record_coverage(rec, level) for level in ("80", "95")}
    s = summarize(bl, metrics=metrics, by=["model"]).set_index("model")
    point_rank = rank_by_mean(_by_model(s[f"{point_metric}_mean"]))
    interval_metric = "msis95" if np.isfinite(s["msis95_mean"]).all() else "msis80"
    msis_rank = rank_by_mean(_by_model(s[f"{interval_metric}_mean"]))
    rows = [
        {
            "model": m,
            "n_records": int(n_rec.get(m, 0)),
            "coverage80": _or_none(cover["80"].get(m)),
            "coverage95": _or_none(cover["95"].get(m)),
            "msis80": s.at[m, "msis80_mean"],
            "msis95": s.at[m, "msis95_mean"],
            "rank_point": point_rank[m] if cell.ok else None,
            "rank_interval": msis_rank[m] if cell.ok else None,
        }
        for m in s.index
    ]
    compared = _point_vs_interval(s, point_metric, interval_metric, point_rank, msis_rank)
    if not cell.ok:
        compared = {k: (v if k == "interval_metric" else None) for k, v in compared.items()}
    return {
        "unit": unit,
        "demand_class": demand_class,
        "band": "conformal",
        "rows": rows,
        **compared,
        **cell.as_tests(),
        **_inventory(rec, spec),
    }


def _point_vs_interval(
    s: pd.DataFrame, point_metric: str, interval_metric: str, point_rank: dict[str, int], msis_rank: dict[str, int]
) -> dict[str, Any]:
    """Spearman between the point and interval rankings over the models that have both scores."""
    both = s.index[np.isfinite(s[f"{point_metric}_mean"]) & np.isfinite(s[f"{interval_metric}_mean"])]
    if len(both) < 3:
        return {
            "interval_metric": interval_metric,
            "point_vs_interval_spearman": None,
            "point_vs_interval_p": None,
            "max_move": None,
        }
    rho, p = spearman_test([point_rank[m] for m in both], [msis_rank[m] for m in both])
    return {
        "interval_metric": interval_metric,
        "point_vs_interval_spearman": _or_none(rho),
        "point_vs_interval_p": _or_none(p),
        "max_move": int(max(abs(point_rank[m] - msis_rank[m]) for m in both)),
    }


def _or_none(x: Any) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)
