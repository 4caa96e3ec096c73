r"""How much better than the random walk: the geometric mean of per-series relative errors, its skill and interval.

For a table's block scores :math:`M_{mso}` (model :math:`m`, series :math:`s`, origin :math:`o`) and the
random walk's :math:`M_{\mathrm{rw},so}`, over the origins :math:`O_{ms}` at which both scored series
:math:`s`,

.. math::

    r_{ms} = \operatorname{clip}\!\Big(\frac{\sum_{o\in O_{ms}} M_{mso}}{\sum_{o\in O_{ms}} M_{\mathrm{rw},so}},
    \ 10^{-2},\ 10^{2}\Big),\qquad
    \mathrm{GMRE}_m = \exp\Big(\frac{1}{|S_m|}\sum_{s\in S_m}\log r_{ms}\Big),\qquad
    \mathrm{skill}_m = 1 - \mathrm{GMRE}_m

the AvgRel form of Davydenko & Fildes (2013): a ratio per **series** over its whole evaluation window,
then the geometric mean over series (each series weighs the same). The skill is "% better than the random
walk", as fev-bench reports a skill score (1 - geometric mean relative error). A geometric mean of ratios
cannot be decided by one huge block, where a mean of scaled errors is decided by its largest blocks (issue
35: on fpp3_pbs / lumpy one block gave AutoETS a mean MASE of 32.8 with a median of 0.30).

**Why per series, not per block.** On intermittent demand many blocks have only zero actuals: a method
that forecasts zero has a zero error there, and a per-block ratio against the random walk's positive error
is 0, a win without bound; the geometric mean over blocks is then decided by the zero blocks, and crowned
a zero forecaster even on RMSSE, where its mean is worse (measured on the small benchmark's fpp3 tourism
intermittent series: median-of-12 first with a per-block GMRE of 0.78 while eighth by mean RMSSE). Over a
series' whole window a zero error is rare.

**Zero errors.** A series whose errors sum to 0 for both is a tie (:math:`r = 1`); a zero sum against a
positive one gives :math:`r` at the clip, :math:`10^{-2}` or :math:`10^{2}` (``n_clipped`` counts them).
Blocks where either score is missing (NaN) are left out.

**Interval.** The 95% interval of :math:`\log\mathrm{GMRE}_m` comes from a circular block bootstrap over
the origins (blocks of :math:`L+1 = \lceil h/\text{stride}\rceil` origins, every series of a drawn origin
along, so nothing is assumed independent across series; origin groups more than :math:`L` apart are
assumed independent), each draw recomputing every series' ratio from the drawn origins, the draws spread
about the estimate by the few-groups factor (:func:`tycheon.stats.bootstrap.few_groups_factor`, the
panel bootstraps' rule); :math:`1-\exp` of its bounds is the skill's interval. Below the time floor
(:func:`tycheon.analysis.cell.time_check`) there is no interval, and the reason says so.

References
----------
Davydenko, A. & Fildes, R. (2013). Measuring forecasting accuracy: the case of judgmental adjustments to
SKU-level demand forecasts. IJF 29(3), 510-522 (AvgRelMAE). Hyndman & Koehler (2006), section 3.3.
Shchur et al. (2025), fev-bench (skill score = 1 - geometric mean relative error). Politis & Romano (1992);
Bester, Conley & Hansen (2011).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tycheon.analysis.cell import time_check
from tycheon.contract import overlap_lags
from tycheon.errors import InputError
from tycheon.stats.bootstrap import _circular_block_weights, few_groups_factor

__all__ = ["CLIP", "N_RESAMPLES", "RELATIVE_TEXT", "Relative", "relative_to_reference"]

CLIP = (1e-2, 1e2)
"""Bounds of a series' relative error (a zero error is a hundredfold win or loss, not an infinite one)."""

N_RESAMPLES = 1000
"""Bootstrap draws of the skill's interval."""

RELATIVE_TEXT = (
    "geometric mean over series of the model's error relative to the random walk's (per series, the sum of its "
    "block errors over the origins both scored divided by the random walk's; clipped to [0.01, 100], both zero "
    "a tie), as Davydenko & Fildes's AvgRel; skill = 1 - that mean, '% better than the random walk', with a 95% "
    "interval from a circular block bootstrap over origins (every series of a drawn origin along: nothing "
    "assumed independent across series)"
)
"""How the relative error, the skill and its interval are computed, as pages state it."""


@dataclass(frozen=True)
class Relative:
    """One model's geometric-mean relative error against the reference, its skill and the skill's interval."""

    gmean: float | None
    skill: float | None
    skill_low: float | None
    skill_high: float | None
    n_blocks: int
    n_clipped: int
    reason: str | None


def _log_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """Elementwise clipped log of ``num / den`` (sums of non-negative errors); both zero: 0 (a tie)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where((num == 0) & (den == 0), 1.0, num / den)
    return np.log(np.clip(r, *CLIP))


def relative_to_reference(
    wide: pd.DataFrame,
    *,
    reference: str,
    horizon: int,
    stride: int,
    level: float = 0.95,
    interval: bool = True,
    seed: int = 0,
) -> dict[str, Relative]:
    """:class:`Relative` of every column of ``wide`` (block scores ``[(series_id, origin), model]``) against
    ``reference`` (see the module docstring); absolute values are compared, so a signed score (bias) is
    compared on its size. The reference's own entry is a GMRE of 1 and a skill of 0, without an interval;
    ``interval=False`` skips every interval (a re-ranking needs only the estimates)."""
    if reference not in wide.columns:
        raise InputError(f"no block scores of the reference model {reference!r}; models: {list(wide.columns)}")
    s_codes, series = pd.factorize(wide.index.get_level_values("series_id"), sort=True)
    o_codes, origins = pd.factorize(wide.index.get_level_values("origin"), sort=True)
    n_s, n_o = len(series), len(origins)

    def grid(col: object) -> np.ndarray:
        g = np.full((n_s, n_o), np.nan)
        g[s_codes, o_codes] = np.abs(wide[col].to_numpy(dtype=np.float64))
        return g

    ref = grid(reference)
    lags = overlap_lags(horizon, stride)
    weights = None
    out: dict[str, Relative] = {}
    for m in wide.columns:
        name = str(m)
        if name == reference:
            out[name] = Relative(1.0, 0.0, None, None, int(np.isfinite(ref).sum()), 0, "is the reference")
            continue
        a = grid(m)
        both = np.isfinite(a) & np.isfinite(ref)
        a0, r0 = np.where(both, a, 0.0), np.where(both, ref, 0.0)
        has = both.any(axis=1)
        if not has.any():
            out[name] = Relative(None, None, None, None, 0, 0, f"no block scored by both {name} and {reference}")
            continue
        num, den = a0[has].sum(axis=1), r0[has].sum(axis=1)
        logs = _log_ratio(num, den)
        clipped = int(np.count_nonzero((num == 0) != (den == 0)))
        est = float(logs.mean())
        gm = float(np.exp(est))
        present = both.any(axis=0)
        why = time_check(int(present.sum()), horizon=horizon, stride=stride)
        low = high = None
        if why is None and interval:
            times = np.flatnonzero(present)  # origins with a pair, in time order; absent ones skipped
            if weights is None or weights.shape[1] != times.size:
                rng = np.random.default_rng(seed)
                weights = _circular_block_weights(times.size, N_RESAMPLES, lags + 1, rng)  # [draw, time]
            # every series' sums under each draw: [series, draw]
            num_b = a0[has][:, times] @ weights.T
            den_b = r0[has][:, times] @ weights.T
            valid = (num_b > 0) | (den_b > 0) | (num == 0)[:, None]
            boot = np.where(valid, _log_ratio(num_b, den_b), np.nan)
            draws = np.nanmean(boot, axis=0)
            c = few_groups_factor(-(-times.size // (lags + 1)), level)
            tail = (1.0 - level) / 2.0
            lo_q, hi_q = np.nanquantile(draws, [tail, 1.0 - tail])
            lo_l, hi_l = est + c * (lo_q - est), est + c * (hi_q - est)
            low, high = 1.0 - float(np.exp(hi_l)), 1.0 - float(np.exp(lo_l))
        out[name] = Relative(gm, 1.0 - gm, low, high, int(both.sum()), clipped, why)
    return out
