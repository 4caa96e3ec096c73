r"""The inventory outcome of a forecast: a periodic-review order-up-to :math:`(R, S)` simulation.

A forecast is worth the stock it makes a planner hold and the demand that stock serves. Here each series
is run through the textbook periodic-review policy (Silver, Pyke & Thomopoulos 2017, ch. 6-7; Axsäter
2015, ch. 5): every ``review_period`` periods the inventory position is raised to the order-up-to level
:math:`S_t` set from the forecast, the order arrives ``lead_time`` periods later, and the period's demand
is served from the stock on hand. :func:`simulate_order_up_to` validates and simulates, vectorised over
series (time is the only loop); :func:`order_up_to_from_band` reads a level from a forecast's quantile band.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tycheon._typing import BoolArray, FloatArray, IntArray
from tycheon.errors import MetricInputError
from tycheon.metrics._kernels import BAND_LEVELS_95, band_grid_quantile

__all__ = ["BAND_COLUMNS", "BAND_LEVELS", "InventoryOutcome", "order_up_to_from_band", "simulate_order_up_to"]

BAND_COLUMNS = ("lo95", "lo80", "point", "hi80", "hi95")
"""The score-set columns of a forecast's band, read as a quantile grid in this order."""

BAND_LEVELS = BAND_LEVELS_95
"""The quantile level of each of :data:`BAND_COLUMNS` (the point forecast read as the median)."""


@dataclass(frozen=True, eq=False)
class InventoryOutcome:
    """Per-series totals of an order-up-to simulation (every array is ``[series]``).

    ``served`` counts demand met in its own period from stock on hand (the fill-rate numerator), ``short``
    demand not met in its period (lost under lost sales, backordered under backorders), ``mean_on_hand`` the
    mean physical stock at the end of the simulated periods (NaN for a series with none), ``cycles`` the
    reviews and ``stockout_cycles`` the review cycles with some ``short`` demand (the last cycle may be cut
    short by the end of the data; it counts as one).
    """

    demand: FloatArray
    served: FloatArray
    short: FloatArray
    mean_on_hand: FloatArray
    cycles: IntArray
    stockout_cycles: IntArray
    periods: IntArray

    @property
    def fill_rate(self) -> FloatArray:
        r"""Fill rate (:math:`\beta` service), :math:`\sum_t \text{served}_t / \sum_t D_t`; NaN where demand is 0."""
        return _ratio(self.served, self.demand)

    @property
    def cycle_service_level(self) -> FloatArray:
        r"""Cycle service level (:math:`\alpha` service), :math:`1 - \text{stockout cycles}/\text{cycles}`;
        NaN for a series with no review."""
        return 1.0 - _ratio(self.stockout_cycles.astype(np.float64), self.cycles.astype(np.float64))

    @property
    def mean_demand(self) -> FloatArray:
        """Mean demand per simulated period; NaN for a series with none."""
        return _ratio(self.demand, self.periods.astype(np.float64))


def _ratio(num: FloatArray, den: FloatArray) -> FloatArray:
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def order_up_to_from_band(bands: FloatArray, *, tau: float) -> FloatArray:
    r"""The order-up-to level for service level ``tau`` from forecast bands ``[row, 5]`` -> ``[row]``.

    The columns are :data:`BAND_COLUMNS` (``lo95, lo80, point, hi80, hi95``), read as the quantile function
    through :data:`BAND_LEVELS` (0.025, 0.1, 0.5, 0.9, 0.975), piecewise linear between them, exact on them
    (:math:`\tau = 0.9` is ``hi80``, :math:`\tau = 0.975` is ``hi95``); a row with only the 80% band is read
    on ``lo80, point, hi80`` at 0.1, 0.5, 0.9 (NaN for :math:`\tau` above 0.9;
    :func:`tycheon.metrics._kernels.band_grid_quantile`):

    .. math:: S = \max\bigl(0,\; \hat q(\tau)\bigr),

    clipped at 0 because demand is non-negative (a band reaching below zero does not order negative stock).
    NaN for a row without the 80% band.

    References
    ----------
    Silver, Pyke & Thomopoulos (2017), section 6.7 (the order-up-to level as a quantile of demand over the
    protection interval); Chernozhukov, Fernández-Val & Galichon (2010) for the rearrangement of a crossing band.
    """
    bands = np.asarray(bands, dtype=np.float64)
    if bands.ndim != 2 or bands.shape[1] != len(BAND_COLUMNS):
        raise MetricInputError(f"bands must be [row, 5] in the order {BAND_COLUMNS}; got shape {bands.shape}")
    if not BAND_LEVELS[0] <= tau <= BAND_LEVELS[-1]:
        raise MetricInputError(f"tau must be within the band, in [0.025, 0.975]; got {tau!r}")
    q = band_grid_quantile(bands, float(tau))
    return np.where(np.isnan(q), np.nan, np.maximum(q, 0.0))


def simulate_order_up_to(
    demand: FloatArray,
    level: FloatArray,
    *,
    lead_time: int = 0,
    review_period: int = 1,
    lost_sales: bool = True,
    valid: BoolArray | None = None,
) -> InventoryOutcome:
    r"""Simulate a periodic-review order-up-to :math:`(R, S)` policy on each series.

    Per series, over its valid periods in order (an invalid period is skipped: nothing is ordered, no
    demand arrives, stock is unchanged, and it does not count towards the review or lead-time clock). With
    :math:`c` the number of valid periods before period :math:`t`:

    1. **Review** when :math:`c \bmod R = 0`: with on-hand stock :math:`I_t`, outstanding orders
       :math:`P_t` and backorders :math:`B_t`, the inventory position and the order are

       .. math:: \mathrm{IP}_t = I_t + P_t - B_t, \qquad q_t = \max(0,\; S_t - \mathrm{IP}_t).

       The review is instantaneous; :math:`q_t` arrives at the start of the valid period :math:`L`
       periods later (:math:`L = 0`: at once, before the period's demand).
    2. **Arrivals** due this period are added to :math:`I_t`.
    3. **Demand** :math:`D_t` is served from stock. Lost sales: :math:`\text{served}_t = \min(I_t, D_t)` and
       the rest is lost. Backorders: old backorders are served first, then
       :math:`\text{served}_t = \min\bigl((I_t - B_t)^+, D_t\bigr)` and the rest joins the backorders.
       In both, :math:`\text{short}_t = D_t - \text{served}_t` is the demand not met in its own period.

    The first valid period starts with :math:`I = S` at its review and an empty pipeline (a system in
    its steady state rather than one filling up). The outcome sums, per series,

    .. math::

        \beta = \frac{\sum_t \text{served}_t}{\sum_t D_t}, \qquad
        \alpha = 1 - \frac{\#\{\text{cycles with } \text{short}_t > 0\}}{\#\{\text{reviews}\}}, \qquad
        \bar I = \frac{1}{T}\sum_t I_t^{\text{end}},

    the fill rate, cycle service level and mean end-of-period stock on hand.

    Parameters
    ----------
    demand : array ``[series, period]``
        Demand, non-negative and finite at valid periods.
    level : array ``[series, period]``
        The order-up-to level :math:`S_t` of a review at the start of period :math:`t`: non-negative and
        finite at every valid review period, not read elsewhere.
    lead_time : int
        :math:`L \ge 0`, in valid periods of the series.
    review_period : int
        :math:`R \ge 1`, in valid periods of the series.
    lost_sales : bool
        True: demand not met in its period is lost; False: it is backordered and served first later.
    valid : bool array ``[series, period]``, optional
        Which periods to simulate; default: where ``demand`` and ``level`` are both finite.

    Returns
    -------
    InventoryOutcome
        Per-series demand, served, short, mean on-hand, cycles, stockout cycles and periods, with the fill
        rate and cycle service level as properties.

    References
    ----------
    Silver, E. A., Pyke, D. F. & Thomopoulos, D. J. (2017). *Inventory and Production Management in Supply
    Chains*, 4th ed., CRC Press, ch. 6-7 (the :math:`(R, S)` system, fill rate and cycle service level).
    Axsäter, S. (2015). *Inventory Control*, 3rd ed., Springer, ch. 5 (periodic review, lost sales and
    backorders).

    Examples
    --------
    >>> out = simulate_order_up_to(np.array([[3.0, 5.0, 2.0]]), np.array([[4.0, 4.0, 4.0]]))
    >>> out.served.tolist(), out.short.tolist(), out.fill_rate.round(3).tolist()
    ([9.0], [1.0], [0.9])
    """
    demand = np.asarray(demand, dtype=np.float64)
    level = np.asarray(level, dtype=np.float64)
    if demand.ndim != 2:
        raise MetricInputError(f"demand must be 2-D [series, period]; got {demand.ndim}-D shape {demand.shape}")
    if level.shape != demand.shape:
        raise MetricInputError(f"level must have demand's shape {demand.shape}; got {level.shape}")
    for name, value in (("lead_time", lead_time), ("review_period", review_period)):
        if isinstance(value, bool) or int(value) != value:
            raise MetricInputError(f"{name} must be an integer; got {value!r}")
    if lead_time < 0:
        raise MetricInputError(f"lead_time must be >= 0 periods; got {lead_time}")
    if review_period < 1:
        raise MetricInputError(f"review_period must be >= 1 period; got {review_period}")
    if valid is None:
        valid = np.isfinite(demand) & np.isfinite(level)
    else:
        valid = np.asarray(valid)
        if valid.dtype != np.bool_ or valid.shape != demand.shape:
            raise MetricInputError(
                f"valid must be a bool array of demand's shape {demand.shape}; got {valid.dtype} {valid.shape}"
            )
    packed = not (valid[:, 1:] & ~valid[:, :-1]).any()  # no valid period after an invalid one
    _check_values(demand, valid, "demand", "every valid period")
    if packed:
        review = valid & (np.arange(demand.shape[1]) % review_period == 0)[None, :]
    else:
        review = valid & ((np.cumsum(valid, axis=1) - valid) % review_period == 0)
    _check_values(level, review, "level", "every valid review period")
    return _simulate(demand, level, valid, packed, int(lead_time), int(review_period), bool(lost_sales))


def _check_values(a: FloatArray, where: BoolArray, name: str, at: str) -> None:
    bad = where & ~((a >= 0) & (a < np.inf))  # NaN compares False
    if bad.any():
        i, t = np.argwhere(bad)[0]
        raise MetricInputError(
            f"{name} must be finite and non-negative at {at}; {int(bad.sum())} value(s) are not "
            f"(first: series {i}, period {t}, value {a[i, t]!r})"
        )


def _front(a: FloatArray, valid: BoolArray, order: IntArray | None) -> FloatArray:
    """``a`` with invalid periods zeroed, valid ones moved to the front in time order, as ``[period, series]``."""
    a = np.where(valid, a, 0.0)
    if order is not None:
        a = np.take_along_axis(a, order, axis=1)
    return np.ascontiguousarray(a.T)


def _simulate(
    demand: FloatArray, level: FloatArray, valid: BoolArray, packed: bool, lead: int, review: int, lost: bool
) -> InventoryOutcome:
    """The :math:`(R, S)` recursion on validated arrays ``[series, period]``.

    Each series' valid periods are moved to the front (order kept; ``packed``: already there), so all series
    share one clock: step ``j`` is every series' ``j``-th valid period, a review when ``j % R == 0``; series
    with fewer valid periods sit out the tail with no demand (nothing they do there is counted but their
    stock, which is masked). The pipeline is a ring of ``L + 1`` slots: an order at step ``j`` goes to slot
    ``(j + L) % (L + 1)``, received at step ``j + L``.
    """
    n = demand.shape[0]
    order = None if packed else np.argsort(~valid, axis=1, kind="stable")
    dem = _front(demand, valid, order)  # [step, series]
    lev = _front(level, valid, order)  # [step, series]
    periods = valid.sum(axis=1)
    steps = int(periods.max()) if n else 0

    on_hand = lev[0].copy() if steps else np.zeros(n)  # the first review starts at its level
    back = np.zeros(n)
    pipe = np.zeros((lead + 1, n))
    in_pipe = np.zeros(n)
    served = np.zeros(n)
    short = np.zeros(n)
    stock = np.zeros(n)
    stockouts = np.zeros(n, dtype=np.int64)
    cycle_short = np.zeros(n, dtype=bool)
    got = np.empty(n)
    miss = np.empty(n)
    for j in range(steps):
        if j % review == 0:
            stockouts += cycle_short
            cycle_short[:] = False
            q = np.maximum(lev[j] - (on_hand + in_pipe - back), 0.0)
            if lead:
                pipe[(j + lead) % (lead + 1)] += q
                in_pipe += q
            else:
                on_hand += q
        if lead:
            arriving = pipe[j % (lead + 1)]
            on_hand += arriving
            in_pipe -= arriving
            arriving[:] = 0.0
        d = dem[j]
        if lost:
            np.minimum(on_hand, d, out=got)
            on_hand -= got
        else:
            old = np.minimum(on_hand, back)
            on_hand -= old
            back -= old
            np.minimum(on_hand, d, out=got)
            on_hand -= got
        np.subtract(d, got, out=miss)
        if not lost:
            back += miss
        served += got
        short += miss
        np.add(stock, on_hand, out=stock, where=j < periods)
        cycle_short |= miss > 0
    stockouts += cycle_short
    return InventoryOutcome(
        demand=dem.sum(axis=0),
        served=served,
        short=short,
        mean_on_hand=_ratio(stock, periods.astype(np.float64)),
        cycles=((periods + review - 1) // review).astype(np.int64),
        stockout_cycles=stockouts,
        periods=periods.astype(np.int64),
    )
