r"""The inventory table of one (unit, demand class) cell: what stock each model's bands make a planner hold,
and what service that stock gives.

Each model's calibrated conformal band sets the order-up-to level of a periodic-review :math:`(R, S)`
policy (:func:`tycheon.metrics.inventory.simulate_order_up_to`), run on every series of the cell:

- **the level** of a review in period :math:`t` is the :math:`\tau`-quantile (:math:`\tau` = ``target``) of
  demand over the protection interval of :math:`P = L + R` periods, read from the band of the forecast that
  plans period :math:`t` (the row of smallest step: the latest origin covering it) and clipped at 0,
  :func:`tycheon.metrics.inventory.order_up_to_from_band`. For :math:`P > 1` the quantiles of periods
  :math:`t..t+P-1` from that same origin are summed,

  .. math:: S_t = \sum_{j=0}^{P-1} \hat q_{o_t,\, t+j}(\tau),

  the quantile of the sum when the steps are comonotone, and an upper bound on it for positively dependent
  steps (an assumption; :math:`P = 1` needs none). A review whose origin does not reach :math:`t+P-1` has no level;
- **the support** is common: only the (series, period) pairs where every model of the cell has a level
  and the actual is known are simulated, so all models serve the same demand;
- **per model**, means over series with positive demand of the fill rate, the lost share and the average
  stock :math:`\bar I_s / \bar D_s` (mean end-of-period stock on hand in periods of the series' mean
  demand), the mean cycle service level over all series, and the **stock needed**: the average stock at the
  smallest uniform shift :math:`k` of every level by :math:`k` times the series' mean demand,

  .. math:: S'_t = \max(0,\; S_t + k \bar D_s),

  at which the mean fill rate reaches ``target`` (found by bisection on :math:`k \in [-10, 50]`; the fill
  rate rises with :math:`k`). :math:`\bar D_s` is measured over the simulated periods, so the shift is a
  diagnostic on realised demand (what it would have taken), not a forecast.

Models are ranked by stock needed (less is better) when the cell has at least ``min_cell`` scored blocks
(:func:`tycheon.analysis.cell.cell_check`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from tycheon._typing import BoolArray, FloatArray, IntArray
from tycheon.analysis.cell import cell_check
from tycheon.analysis.prepared import ranks
from tycheon.errors import InputError
from tycheon.metrics.inventory import BAND_COLUMNS, order_up_to_from_band, simulate_order_up_to

__all__ = ["BISECTION_STEPS", "COLUMNS", "DECIMALS", "SHIFT_BRACKET", "inventory_table", "policy_text"]

COLUMNS = ("model", "series_id", "origin", "step", "target_period", "actual", *BAND_COLUMNS)
"""The score-set columns the table reads."""

SHIFT_BRACKET = (-10.0, 50.0)
"""The shifts :math:`k` (in mean demands) searched for the stock needed."""

BISECTION_STEPS = 40
"""Halvings of the bracket: :math:`60 / 2^{40} \\approx 5 \\cdot 10^{-11}` mean demands."""

DECIMALS = 9
"""Stock needed and its shift are reported (and ranked) to :math:`10^{-9}` mean demands, well above the
bisection's precision: models equal within it tie rather than being ordered by bisection noise."""


@dataclass(frozen=True, eq=False)
class _Plan:
    """The cell on its common support: ``valid [series, period]`` marks the simulated pairs."""

    models: list[str]
    demand: FloatArray  # [series, period], 0 outside the support
    level: FloatArray  # [model, series, period], the unshifted order-up-to levels
    valid: BoolArray  # [series, period]
    origin: IntArray  # [model, series, period] planning origin code, -1 where none
    n_periods: int


def _sorted_codes(values: pd.Series, name: str) -> tuple[IntArray, list[str]]:
    """Codes of a label column in the order of the labels' names."""
    codes, uniques = pd.factorize(values)
    if (codes < 0).any():
        raise InputError(f"column {name!r} has missing values")
    names = np.array([str(u) for u in uniques])
    perm = np.argsort(names, kind="stable")
    rank = np.empty(len(perm), dtype=np.int64)
    rank[perm] = np.arange(len(perm))
    return rank[codes], [str(x) for x in names[perm]]


def _time_codes(values: pd.Series, name: str) -> tuple[IntArray, int]:
    codes, uniques = pd.factorize(values.to_numpy(), sort=True)
    if (codes < 0).any():
        raise InputError(f"column {name!r} has missing values")
    return codes.astype(np.int64), len(uniques)


def _plan(rows: pd.DataFrame, *, tau: float, protection: int) -> _Plan:
    m, models = _sorted_codes(rows["model"], "model")
    s, _ = _sorted_codes(rows["series_id"], "series_id")
    o, n_o = _time_codes(rows["origin"], "origin")
    t, n_t = _time_codes(rows["target_period"], "target_period")
    step = rows["step"].to_numpy(dtype=np.int64)
    if (step < 1).any():
        raise InputError("column 'step' must hold horizon steps >= 1")
    n_m, n_s = len(models), int(s.max()) + 1
    q = order_up_to_from_band(rows[list(BAND_COLUMNS)].to_numpy(dtype=np.float64), tau=tau)  # [row]

    # every row's (model, series, origin, step) key; the protection interval is found by key arithmetic
    span = int(step.max()) + protection + 1
    key = ((m * n_s + s) * n_o + o) * span + step
    by_key = np.argsort(key, kind="stable")
    sorted_key = key[by_key]
    if (np.diff(sorted_key) == 0).any():
        raise InputError("rows must be unique per (model, series_id, origin, step); found duplicates")

    # the planning row of each (model, series, period): smallest step, i.e. the latest origin covering it
    cell = (m * n_s + s) * n_t + t
    order = np.lexsort((step, cell))
    first = order[np.r_[True, cell[order][1:] != cell[order][:-1]]]
    level = np.zeros(len(first))
    for j in range(protection):
        want = key[first] + j
        pos = np.minimum(np.searchsorted(sorted_key, want), len(sorted_key) - 1)
        hit = sorted_key[pos] == want
        level += np.where(hit, q[by_key[pos]], np.nan)
    dense = np.full((n_m, n_s, n_t), np.nan)
    dense[m[first], s[first], t[first]] = level
    origin = np.full((n_m, n_s, n_t), -1, dtype=np.int64)
    origin[m[first], s[first], t[first]] = o[first]

    actual = rows["actual"].to_numpy(dtype=np.float64)
    demand = np.full((n_s, n_t), np.nan)
    known = np.isfinite(actual)
    demand[s[known], t[known]] = actual[known]
    valid = np.isfinite(demand) & np.isfinite(dense).all(axis=0)
    if (demand[valid] < 0).any():
        raise InputError("actual demand must be non-negative on the simulated periods")
    keep_s = valid.any(axis=1)
    keep_t = valid.any(axis=0)
    valid = valid[keep_s][:, keep_t]
    return _Plan(
        models=models,
        demand=np.where(valid, demand[keep_s][:, keep_t], 0.0),
        level=dense[:, keep_s][:, :, keep_t],
        valid=valid,
        origin=origin[:, keep_s][:, :, keep_t],
        n_periods=int(keep_t.sum()),
    )


def _n_blocks(plan: _Plan) -> int:
    """Scored blocks (series x planning origin) on the support; the fewest over models, should they differ."""
    if not plan.valid.any():
        return 0
    series = np.broadcast_to(np.arange(plan.valid.shape[0])[:, None], plan.valid.shape)[plan.valid]
    return min(int(np.unique(series * (o.max() + 1) + o[plan.valid]).size) for o in plan.origin)


@dataclass(frozen=True)
class _Outcome:
    """Per-model means over series (each ``[model]``)."""

    fill_rate: FloatArray
    cycle_service_level: FloatArray
    avg_stock: FloatArray
    lost_share: FloatArray


def _nanmean_rows(a: FloatArray, keep: BoolArray) -> FloatArray:
    if not keep.any():
        return np.full(a.shape[0], np.nan)
    return np.asarray(a[:, keep].mean(axis=1), dtype=np.float64)


class _Simulator:
    """Every model of a plan simulated at once (models stacked along the series axis) for shifts ``k [model]``.

    The kernel skips invalid periods, so each series' simulated periods are moved to the front once here
    (outcomes unchanged) and the arrays are held period-major: every call of the bisection then finds them
    in the layout the kernel's time loop reads, with nothing to reorder or copy.
    """

    def __init__(self, plan: _Plan, *, lead_time: int, review_period: int, lost_sales: bool) -> None:
        n_m, n_s = len(plan.models), plan.valid.shape[0]
        self.n_m = n_m
        self.kw: dict[str, Any] = {"lead_time": lead_time, "review_period": review_period, "lost_sales": lost_sales}
        n = plan.valid.sum(axis=1)
        total = plan.demand.sum(axis=1)
        self.mean_demand = np.divide(total, n, out=np.zeros_like(total), where=n > 0)  # [series]
        self.positive = total > 0  # [series]
        self.simulated = n > 0  # [series]
        order = np.argsort(~plan.valid, axis=1, kind="stable")  # [series, period]
        valid = np.take_along_axis(plan.valid, order, axis=1)
        demand = np.take_along_axis(plan.demand, order, axis=1)
        level = np.take_along_axis(np.where(plan.valid[None], plan.level, 0.0), order[None], axis=2)
        self.level = np.ascontiguousarray(level.transpose(2, 0, 1))  # [period, model, series]
        self.demand = np.tile(demand.T, (1, n_m)).T  # [model * series, period], period-major in memory
        self.valid = np.tile(valid.T, (1, n_m)).T
        self.shape = (n_m * n_s, plan.valid.shape[1])

    def __call__(self, k: FloatArray) -> _Outcome:
        shifted = k[:, None] * self.mean_demand[None, :]  # [model, series]
        shifted = np.maximum(self.level + shifted[None], 0.0)  # [period, model, series]
        level = shifted.reshape(self.shape[::-1]).T  # [model * series, period]
        out = simulate_order_up_to(self.demand, level, valid=self.valid, **self.kw)
        shape = (self.n_m, -1)
        pos = self.positive
        with np.errstate(invalid="ignore", divide="ignore"):
            stock = out.mean_on_hand.reshape(shape) / self.mean_demand[None]
            lost = out.short.reshape(shape) / out.demand.reshape(shape)
        return _Outcome(
            fill_rate=_nanmean_rows(out.fill_rate.reshape(shape), pos),
            cycle_service_level=_nanmean_rows(out.cycle_service_level.reshape(shape), self.simulated),
            avg_stock=_nanmean_rows(stock, pos),
            lost_share=_nanmean_rows(lost, pos),
        )


def _stock_needed(sim: _Simulator, target: float) -> tuple[FloatArray, FloatArray, list[str | None]]:
    """Bisection, per model, for the smallest shift ``k`` at which the mean fill rate reaches ``target``."""
    lo_k, hi_k = SHIFT_BRACKET
    lo = np.full(sim.n_m, lo_k)
    hi = np.full(sim.n_m, hi_k)
    at_hi = sim(hi)
    at_lo = sim(lo)
    stock = np.where(at_lo.fill_rate >= target, at_lo.avg_stock, at_hi.avg_stock)
    reached = at_hi.fill_rate >= target
    done = at_lo.fill_rate >= target
    hi = np.where(done, lo, hi)
    if (reached & ~done).any():
        for _ in range(BISECTION_STEPS):
            mid = 0.5 * (lo + hi)
            now = sim(mid)
            up = now.fill_rate >= target
            hi = np.where(up, mid, hi)
            lo = np.where(up, lo, mid)
            stock = np.where(up & ~done, now.avg_stock, stock)
    reasons: list[str | None] = []
    for fill in at_hi.fill_rate:
        if np.isnan(fill):
            reasons.append("no series with positive demand on the common support")
        elif fill < target:
            reasons.append(
                f"the mean fill rate stays below {target:g} even with every level raised by {hi_k:g} mean demands "
                f"({fill:.3f} there)"
            )
        else:
            reasons.append(None)
    k = np.round(np.where(reached | done, hi, np.nan), DECIMALS).astype(np.float64)
    needed = np.round(np.where(reached | done, stock, np.nan), DECIMALS).astype(np.float64)
    return k, needed, reasons


def policy_text(*, target: float, lead_time: int, review_period: int, lost_sales: bool) -> str:
    """The policy and its assumptions in words, for the page beside the table."""
    protection = lead_time + review_period
    unmet = "lost" if lost_sales else "backordered and served first when stock arrives"
    sums = (
        f" For a protection interval of {protection} periods the {target:g}-quantiles of its periods, all from the "
        "origin that plans the review, are summed: the quantile of the sum if the steps are comonotone, an upper "
        "bound on it if they are positively dependent (an assumption); a review whose forecast does not reach the "
        "end of the interval has no level, and the period is left out."
        if protection > 1
        else ""
    )
    return (
        f"Each model's forecasts drive a periodic-review order-up-to policy on every series: every "
        f"{review_period} period(s) the inventory position (on hand + on order - backorders) is raised to the "
        f"level S, the order arrives at the start of the period {lead_time} period(s) later (0: at once, before "
        f"that period's demand), and demand is served from stock on hand; demand not met in its period is {unmet}. "
        "The review is instantaneous; the first review starts with S on hand and nothing on order. "
        f"S is the {target:g}-quantile of demand read from the model's calibrated conformal band (lo95, lo80, "
        "point, hi80, hi95 as the 2.5, 10, 50, 90 and 97.5% quantiles, linear in between), clipped at 0 because "
        "demand is non-negative; each period is planned by the latest origin that covers it." + sums + " "
        "Models are compared on a common support: only the (series, period) pairs where every model has a level "
        "and the actual is known are simulated. Fill rate, lost share and average stock (mean end-of-period "
        "stock on hand, in periods of the series' mean demand) are means over series with positive demand "
        "(series without demand are left out); the cycle service level is a mean over all series. Stock needed "
        "is the average stock when every level is shifted by the same multiple k of its series' mean demand "
        f"(measured on the same periods), at the smallest k at which the mean fill rate reaches {target:g}."
    )


def _num(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def inventory_table(
    rows: pd.DataFrame,
    *,
    random_walk: str,
    target: float = 0.9,
    lead_time: int = 0,
    review_period: int = 1,
    lost_sales: bool = True,
    min_cell: int = 30,
) -> dict[str, Any]:
    r"""The inventory outcome of every model of one (unit, demand class) cell, JSON-ready.

    The policy, the levels, the common support and the stock needed are as in the module docstring:
    :math:`S_t` the sum over the protection interval :math:`P = L + R` of the band's
    :math:`\tau`-quantiles (:math:`\tau` = ``target``) from the origin planning period :math:`t`, clipped at 0,
    simulated by :func:`tycheon.metrics.inventory.simulate_order_up_to` on the pairs every model covers.
    Per model, over series :math:`s` with positive demand,

    .. math::

        \text{fill\_rate} = \overline{\beta_s}, \qquad
        \text{lost\_share} = \overline{\text{short}_s / D_s}, \qquad
        \text{avg\_stock} = \overline{\bar I_s / \bar D_s},

    ``cycle_service_level`` the mean of :math:`\alpha_s` over all series, and ``stock_needed`` the
    ``avg_stock`` at the smallest :math:`k \in [-10, 50]` with mean fill rate :math:`\ge` ``target`` when
    :math:`S'_t = \max(0, S_t + k\bar D_s)`, found by :data:`BISECTION_STEPS` halvings (``k_needed``; None
    with ``stock_needed_reason`` when not reached at :math:`k = 50`).

    Parameters
    ----------
    rows : DataFrame
        Score-set rows of one cell with the columns :data:`COLUMNS`.
    random_walk : str
        The random walk's model name (it must have rows); its row is also given on its own.
    target : float
        Service target: the quantile level :math:`\tau` of the levels and the fill rate the stock needed
        reaches; within the band, in [0.025, 0.975].
    lead_time, review_period : int
        :math:`L \ge 0` and :math:`R \ge 1`, in periods.
    lost_sales : bool
        Lost sales (True) or backorders (False).
    min_cell : int
        Fewest scored blocks (series x origin on the support) for a rank and a winner
        (:func:`tycheon.analysis.cell.cell_check`); below it the rows are given without them.

    Returns
    -------
    dict
        ``rows`` (per model, by rank then name: ``model, fill_rate, cycle_service_level, avg_stock,
        lost_share, stock_needed, k_needed, stock_needed_reason, rank``), ``random_walk``, ``random_walk_row``,
        ``winner``, ``target``, ``lead_time``, ``review_period``, ``protection_periods``, ``policy``,
        ``policy_text``, ``n_models``, ``n_series``, ``n_periods`` (distinct periods simulated),
        ``n_series_periods``, ``n_blocks``, ``shift_bracket`` and the minimum-cell fields ``cell_ok``,
        ``cell_count``, ``cell_counts``, ``min_cell``, ``cell_reason``. Floats are Python floats, NaN is None.

    References
    ----------
    Silver, Pyke & Thomopoulos (2017), *Inventory and Production Management in Supply Chains*, 4th ed.,
    ch. 6-7 (the :math:`(R, S)` system over the protection interval :math:`R + L`); Axsäter (2015),
    *Inventory Control*, 3rd ed., ch. 5; WP26 section 6 (the minimum cell).
    """
    missing = [c for c in COLUMNS if c not in rows.columns]
    if missing:
        raise InputError(f"rows lack the column(s) {missing}; an inventory table reads {list(COLUMNS)}")
    if rows.empty:
        raise InputError("rows is empty: an inventory table needs the score-set rows of one cell")
    for col in ("unit", "demand_class"):
        if col in rows.columns and rows[col].nunique(dropna=False) > 1:
            raise InputError(f"rows must be one cell; column {col!r} holds {sorted(map(str, rows[col].unique()))}")
    for name, value, least in (("lead_time", lead_time, 0), ("review_period", review_period, 1)):
        if isinstance(value, bool) or int(value) != value or value < least:
            raise InputError(f"{name} must be an integer >= {least}; got {value!r}")
    if not 0.025 <= target <= 0.975:
        raise InputError(f"target must be within the band's quantile levels, [0.025, 0.975]; got {target!r}")
    protection = int(lead_time) + int(review_period)
    plan = _plan(rows, tau=float(target), protection=protection)
    if random_walk not in plan.models:
        raise InputError(f"random_walk {random_walk!r} has no rows in this cell (models present: {plan.models})")

    sim = _Simulator(plan, lead_time=int(lead_time), review_period=int(review_period), lost_sales=lost_sales)
    base = sim(np.zeros(len(plan.models)))
    k_needed, stock_needed, reasons = _stock_needed(sim, float(target))
    n_blocks = _n_blocks(plan)
    check = cell_check(n_blocks, min_cell=min_cell)
    rank = ranks(dict(zip(plan.models, stock_needed, strict=True))) if check.ok else {}
    table = [
        {
            "model": model,
            "fill_rate": _num(base.fill_rate[i]),
            "cycle_service_level": _num(base.cycle_service_level[i]),
            "avg_stock": _num(base.avg_stock[i]),
            "lost_share": _num(base.lost_share[i]),
            "stock_needed": _num(stock_needed[i]),
            "k_needed": _num(k_needed[i]),
            "stock_needed_reason": reasons[i],
            "rank": rank.get(model),
        }
        for i, model in enumerate(plan.models)
    ]
    table.sort(key=lambda r: (r["rank"] is None, r["rank"] or 0, r["model"]))
    winner = table[0]["model"] if check.ok and table and table[0]["rank"] == 1 else None
    return {
        "rows": table,
        "random_walk": random_walk,
        "random_walk_row": next(r for r in table if r["model"] == random_walk),
        "winner": winner,
        "target": float(target),
        "lead_time": int(lead_time),
        "review_period": int(review_period),
        "protection_periods": protection,
        "policy": "lost sales" if lost_sales else "backorders",
        "policy_text": policy_text(
            target=float(target), lead_time=int(lead_time), review_period=int(review_period), lost_sales=lost_sales
        ),
        "n_models": len(plan.models),
        "n_series": int(plan.valid.shape[0]),
        "n_periods": plan.n_periods,
        "n_series_periods": int(plan.valid.sum()),
        "n_blocks": n_blocks,
        "shift_bracket": [float(x) for x in SHIFT_BRACKET],
        **check.as_tests(),
    }
