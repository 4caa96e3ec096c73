"""The synthetic marketplace: the default benchmark panel (seeded, offline, vectorised).

A marketplace of ``N`` buying entities observed over ``T`` periods. Each entity has

- a **lifetime** ``[start, end]``: about 30% enter after the first period and about 12% exit before the
  last one, so short histories and ragged starts occur (every lifetime holds at least 3 periods);
- a **latent size** drawn from a Pareto law with tail index 1.3 (minimum 1): a few very large accounts
  carry a large share of the total;
- a mean path shared with everyone: growth, yearly seasonality (one cycle per ``season_length``
  periods), and common shocks (an AR(1) on the log scale plus rare larger jumps), modulated by an
  entity-specific seasonal amplitude, phase and trend.

Spikiness dial
--------------
Demand in period ``t`` is a purchase indicator times an order size,

.. math::

    y_{it} = B_{it}\\, \\frac{\\mu_{it}}{p_i}\\, \\exp\\!\\left(\\sigma_i Z_{it} - \\tfrac{\\sigma_i^2}{2}\\right),
    \\qquad B_{it} \\sim \\mathrm{Bernoulli}(p_i),\\; Z_{it} \\sim N(0, 1),

so that :math:`E[y_{it}] = \\mu_{it}` whatever the dial. With the dial :math:`\\kappa` (``spikiness``),
the entity propensities :math:`E_i \\sim \\mathrm{Exp}(0.45)`, :math:`V_i \\sim \\mathrm{Exp}(0.7)` and the
size damping :math:`r_i = \\mathrm{size}_i^{-1/2}` (large accounts buy more regularly),

.. math::

    p_i = \\max\\bigl(0.02,\\; e^{-\\kappa r_i E_i}\\bigr), \\qquad \\sigma_i = 0.12 + \\kappa\\, r_i V_i .

Far above the default the purchases and order sizes of all entities become synchronised (common
procurement cycles): :math:`B_{it} = 1[\\Phi(G_{it}) < p_i]` and the size shocks use
:math:`G_{it}, Z_{it} = \\sqrt{\\rho}\\, c_t + \\sqrt{1-\\rho}\\, e_{it}` with common factors :math:`c_t`, a
Gaussian copula that keeps every entity's marginal law, and
:math:`\\rho(\\kappa) = \\min(0.95,\\, 1 - e^{-(\\kappa/4)^4})` (0.004 at the default, 0.63 at 4, 0.95 at 6).

- ``spikiness = 0``: every entity buys every period with small noise: entities are Smooth.
- ``spikiness = 1`` (default): small entities become intermittent (ADI = 1/p above 1.32) and/or erratic
  (order-size CV² = e^{σ²} - 1 above 0.49), so all four ADI/CV² classes appear, while the large accounts
  stay regular and the total stays smooth (its CV² below that of the median entity).
- ``spikiness`` far above 1 (e.g. 6): synchronised, heavy-tailed orders make the total itself spiky
  (its CV² above the 0.49 cut-off).

Measured at 2,000 × 67, seed 0 (class shares of entities over their full history; CV² as in
:mod:`tycheon.data.demand`):

=========  ======  =======  ============  =====  =========  ==========  ===================
spikiness  smooth  erratic  intermittent  lumpy  undefined  total CV²   median entity CV²
=========  ======  =======  ============  =====  =========  ==========  ===================
0          100%    0%       0%            0%     0%         0.066       0.055
1          40.1%   21.6%    23.8%         14.2%  0.2%       0.065       0.264
6          3.6%    8.4%     23.2%         39.6%  25.1%      0.722       1.300
=========  ======  =======  ============  =====  =========  ==========  ===================

Values are rounded to cents (two decimals). Besides reading like money, this makes the content hash
robust to last-ulp differences of vectorised ``exp``/``sin`` between CPUs: a one-ulp change flips a
rounding only when a value lies within one ulp of a half-cent boundary.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tycheon._typing import FloatArray, IntArray, as_generator
from tycheon.data.panel import DEFAULT_SEASON_LENGTH, Panel
from tycheon.errors import InputError

__all__ = ["DEFAULT_SPIKINESS", "generate_marketplace", "SyntheticConfigError"]

DEFAULT_SPIKINESS = 1.0
_LATE_ENTRY = 0.30
_EARLY_EXIT = 0.12
_MIN_LIFETIME = 3
_PARETO_TAIL = 1.3
_BASE_LEVEL = 50.0
_SMOOTH_NOISE = 0.12
_INTERMITTENCY_SCALE = 0.45
_VOLATILITY_SCALE = 0.7
_MIN_BUY_PROBABILITY = 0.02
_SYNC_SCALE = 4.0
_MAX_SYNC = 0.95
_REGIONS = np.array(["north", "south", "east", "west"], dtype=object)
_REGION_P = np.array([0.35, 0.25, 0.25, 0.15])


class SyntheticConfigError(InputError):
    """Raised for generator arguments outside their accepted range."""


def generate_marketplace(
    *,
    n_entities: int = 2000,
    n_periods: int = 67,
    spikiness: float = DEFAULT_SPIKINESS,
    seed: int | np.random.Generator | None = 0,
    start: str = "2021-01-01",
    freq: str = "MS",
) -> Panel:
    """Generate the synthetic marketplace panel (see the module docstring for the model and the dial).

    Parameters
    ----------
    n_entities : int
        Number of buying entities (series), >= 1.
    n_periods : int
        Length of the period grid, >= 3.
    spikiness : float
        The dial :math:`\\kappa >= 0`; 0 is smooth, 1 (default) mixes all demand classes with a smooth
        total, values far above 1 make the total spiky.
    seed : int, Generator or None
        Same seed, bit-identical panel.
    start : str
        First period stamp (on the ``freq`` grid).
    freq : str
        Pandas offset alias of period starts (``"MS"``, ``"QS"``, ``"W"``...).

    Returns
    -------
    Panel
        Non-negative values; attributes ``size`` (latent scale), ``weight`` (size share, sums to 1),
        ``segment`` (``enterprise`` top 2% by size, ``mid_market`` next 18%, ``smb``) and ``region``; the
        hierarchy levels are ``("segment", "region")``.
    """
    if int(n_entities) != n_entities or n_entities < 1:
        raise SyntheticConfigError(f"n_entities must be a positive integer, got {n_entities!r}")
    if int(n_periods) != n_periods or n_periods < _MIN_LIFETIME:
        raise SyntheticConfigError(f"n_periods must be an integer >= {_MIN_LIFETIME}, got {n_periods!r}")
    if not np.isfinite(spikiness) or spikiness < 0:
        raise SyntheticConfigError(f"spikiness must be a finite number >= 0, got {spikiness!r}")
    try:
        periods = pd.date_range(start, periods=int(n_periods), freq=freq)
    except ValueError as err:
        raise SyntheticConfigError(f"cannot build a {freq!r} grid from start {start!r}") from err
    if periods[0] != pd.Timestamp(start):
        raise SyntheticConfigError(f"start {start!r} is not on the {freq!r} grid (first stamp {periods[0]})")
    season = DEFAULT_SEASON_LENGTH.get(freq.split("-")[0], 1)

    rng = as_generator(seed)
    values, first, last, size = _simulate(
        rng, n_entities=int(n_entities), n_periods=int(n_periods), spikiness=float(spikiness), season=season
    )
    attrs = _attributes(rng, size)

    t = np.arange(n_periods)
    active = (t >= first[:, None]) & (t <= last[:, None])  # [series, time]
    s_idx, t_idx = np.nonzero(active)
    frame = pd.DataFrame(
        {
            "series_id": attrs.index.to_numpy()[s_idx],
            "period": periods[t_idx],
            "value": values[s_idx, t_idx],
        }
    )
    meta = {
        "synthetic": True,
        "redistributable": True,
        "source": "tycheon.data.synthetic.generate_marketplace",
        "licence": "MIT (generated by tycheon)",
        "generator": {
            "n_entities": int(n_entities),
            "n_periods": int(n_periods),
            "spikiness": float(spikiness),
            "seed": seed if isinstance(seed, (int, np.integer)) else None,
            "start": str(periods[0].date()),
            "freq": freq,
        },
    }
    return Panel.from_long(
        frame,
        freq=freq,
        season_length=season,
        attributes=attrs,
        levels=("segment", "region"),
        name="synthetic_marketplace",
        meta=meta,
    )


def _simulate(
    rng: np.random.Generator, *, n_entities: int, n_periods: int, spikiness: float, season: int
) -> tuple[FloatArray, IntArray, IntArray, FloatArray]:
    """Draw the ``[entity, period]`` demand matrix, lifetimes and latent sizes (draw order is fixed)."""
    n, big_t = n_entities, n_periods
    t = np.arange(big_t, dtype=np.float64)

    late = rng.random(n) < _LATE_ENTRY
    first = np.where(late, rng.integers(1, big_t - _MIN_LIFETIME + 1, size=n), 0)
    exits = rng.random(n) < _EARLY_EXIT
    room = big_t - first - (_MIN_LIFETIME - 1)  # admissible last positions: first+2 .. T-1
    exit_at = first + (_MIN_LIFETIME - 1) + np.floor(rng.random(n) * room).astype(np.int64)
    last = np.where(exits, exit_at, big_t - 1)

    size = 1.0 + rng.pareto(_PARETO_TAIL, size=n)

    log_common = np.zeros(big_t)
    innov = rng.normal(0.0, 0.05, size=big_t)
    for j in range(1, big_t):  # AR(1) over time only: a T-step loop, vectorised over entities elsewhere
        log_common[j] = 0.6 * log_common[j - 1] + innov[j]
    jumps = (rng.random(big_t) < 0.04) * rng.normal(0.0, 0.2, size=big_t)
    growth = 0.003 * t

    amp = 0.25 * np.exp(rng.normal(0.0, 0.3, size=n))
    phase = rng.normal(0.0, 0.3, size=n)
    trend = rng.normal(0.0, 0.004, size=n)
    if season > 1:
        seasonal = 1.0 + amp[:, None] * np.sin(2.0 * np.pi * t[None, :] / season + phase[:, None])
    else:
        seasonal = np.ones((n, big_t))
    mu = (  # [series, time]
        _BASE_LEVEL
        * size[:, None]
        * seasonal
        * np.exp(growth + log_common + jumps)[None, :]
        * np.exp(trend[:, None] * t[None, :])
    )

    damp = size**-0.5
    propensity_gap = rng.exponential(_INTERMITTENCY_SCALE, size=n)
    propensity_vol = rng.exponential(_VOLATILITY_SCALE, size=n)
    p_buy = np.maximum(_MIN_BUY_PROBABILITY, np.exp(-spikiness * damp * propensity_gap))
    sigma = _SMOOTH_NOISE + spikiness * damp * propensity_vol

    # purchases and order sizes share a common factor whose weight rho grows with the dial (Gaussian copula)
    rho = _synchronisation(spikiness)
    common_buy = rng.standard_normal(big_t)
    common_size = rng.standard_normal(big_t)
    latent = np.sqrt(rho) * common_buy[None, :] + np.sqrt(1.0 - rho) * rng.standard_normal((n, big_t))
    from scipy.special import ndtr  # here, not at import (a cold start need not load scipy)

    buys = ndtr(latent) < p_buy[:, None]  # [series, time]; marginally Bernoulli(p_i) for any rho
    z = np.sqrt(rho) * common_size[None, :] + np.sqrt(1.0 - rho) * rng.standard_normal((n, big_t))
    orders = mu / p_buy[:, None] * np.exp(sigma[:, None] * z - 0.5 * sigma[:, None] ** 2)
    values = np.round(np.where(buys, orders, 0.0), 2)  # [series, time]
    return values.astype(np.float64), first.astype(np.int64), last.astype(np.int64), size


def _synchronisation(spikiness: float) -> float:
    """Weight of the common factor: ~0 up to the default dial, approaching ``_MAX_SYNC`` far above it."""
    return float(min(_MAX_SYNC, 1.0 - np.exp(-((spikiness / _SYNC_SCALE) ** 4))))


def _attributes(rng: np.random.Generator, size: FloatArray) -> pd.DataFrame:
    n = len(size)
    width = max(5, len(str(n)))
    ids = np.array([f"E{i:0{width}d}" for i in range(n)], dtype=object)
    rank = np.argsort(np.argsort(-size, kind="stable"), kind="stable") / n  # 0 = largest
    segment = np.where(rank < 0.02, "enterprise", np.where(rank < 0.20, "mid_market", "smb")).astype(object)
    region = _REGIONS[rng.choice(len(_REGIONS), size=n, p=_REGION_P)]
    return pd.DataFrame(
        {"size": size, "weight": size / size.sum(), "segment": segment, "region": region},
        index=pd.Index(ids, name="series_id"),
    )
