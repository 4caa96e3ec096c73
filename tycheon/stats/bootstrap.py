r"""Bootstraps of mean losses and of the leaderboard order (WP26 section 4.1; evaluation-choices paper, section 4).

Two designs, which differ in what they assume independent.

**Panel (time-block) bootstraps**, the default wherever series are pooled
(:func:`panel_means_bootstrap`, :func:`panel_means_bootstraps`, :func:`panel_ranking_bootstrap`): a
**circular block bootstrap over the origins** (Politis & Romano 1992) in time order, with block length
:math:`\ell = L + 1 = \lceil h/\text{stride}\rceil`; each drawn origin brings every series' block at
that origin. With :math:`T` origins a resample concatenates :math:`\lceil T/\ell\rceil` runs of
:math:`\ell` consecutive origins (wrapping past the last to the first), starts uniform, cut to :math:`T`;
:math:`w^*_o` is the number of times origin :math:`o` is drawn, and a statistic is a ratio of
:math:`w^*`-weighted per-origin sums. *Assumed independent:* origins more than :math:`L` apart (their
targets do not overlap). *Not assumed:* anything across series; a calendar shock shared by every series
at one origin is resampled whole, once per origin, as in :func:`tycheon.stats.dm.dm_panel` (Driscoll &
Kraay 1998; paper, section 4.1). The series are held fixed: the intervals are about this panel's mean at
other times, not about a population of series. The weights are ``[resample, origin]``: a few thousand
numbers, whatever the number of series.

With few origins the percentile interval is too narrow (a bootstrap of :math:`G` independent groups
estimates the variance with divisor :math:`G`, and its quantiles are normal ones where the studentised
mean is :math:`t_{G-1}`). The resampled statistics are therefore spread about the estimate by the
few-clusters factor of Bester, Conley & Hansen (2011) and Cameron & Miller (2015, section VI.C), with
:math:`G = \lceil T/\ell\rceil` the non-overlapping origin groups (:func:`tycheon.stats.dm.panel_df`
:math:`+ 1`):

.. math::

    \theta^{*}_{c} = \hat\theta + c\,(\theta^{*} - \hat\theta), \qquad
    c = \sqrt{\frac{G}{G-1}}\;\frac{t_{G-1,\,1-a/2}}{z_{1-a/2}}, \qquad a = 1 - \text{confidence}

and the percentile intervals, p-values and ranks are read from :math:`\theta^{*}_{c}`. For a mean of
:math:`G` independent Gaussian groups this is the :math:`t` interval. Coverage under a null that breaks
series independence (a calendar shock common to every series, :math:`\rho = 0.3`, 300 series, 400
panels; ``tests/test_stats_panel_bootstrap.py``): the test asserts that the 95% interval of a mean
difference covers the true 0 in at least 92% of panels (90% with overlapping origins) where the
series-only bootstrap covers it in under 40%. With overlapping origins (:math:`L \ge 1`) a block of
:math:`L + 1` origins weighs the overlap covariances with a Bartlett-like taper, so the interval can fall
a little short.

**Label bootstraps** (:func:`paired_block_bootstrap`, :func:`paired_means_bootstrap`,
:func:`paired_means_bootstraps`, :func:`ranking_bootstrap`): blocks named by a label (a series, a
(series, origin) block, a group x period) drawn independently with replacement. *Assumed independent:*
the labelled blocks. Resampling series alone assumes series independent: with series that share calendar
shocks the intervals are far too narrow (the same test shows it). They remain for the callers that choose
their own blocks (the across-datasets summary, the protocol-sensitivity audit) and as labelled variants of
the leaderboard's uncertainty.

This module holds the bootstraps of means (paired and panel). The ranking bootstraps live in
:mod:`tycheon.stats.rank_bootstrap`, the draws (block weights, circular time blocks, the few-groups
factor, :func:`shared_weights`) in ``tycheon.stats._resample``; both are re-exported here.

References
----------
Politis, D. N. & Romano, J. P. (1992). A circular block-resampling procedure for stationary data. In
*Exploring the Limits of Bootstrap*, Wiley, 263-270. Künsch, H. R. (1989). The jackknife and the bootstrap
for general stationary observations. Ann. Stat. 17(3). Lahiri, S. N. (2003). *Resampling Methods for
Dependent Data*, Springer, ch. 2-3. Driscoll, J. C. & Kraay, A. C. (1998). Rev. Econ. Stat. 80(4).
Bester, C. A., Conley, T. G. & Hansen, C. B. (2011). Inference with dependent data using cluster covariance
estimators. J. Econometrics 165(2). Cameron, A. C. & Miller, D. L. (2015). A practitioner's guide to
cluster-robust inference. J. Human Resources 50(2). Efron, B. & Tibshirani, R. (1993). *An Introduction to
the Bootstrap*, ch. 6 and 13.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tycheon._typing import as_generator
from tycheon._validate import as_float_array, check_finite, label_codes, same_shape
from tycheon.errors import StatisticInputError
from tycheon.stats._resample import (
    _check_confidence,
    _check_n_resamples,
    _circular_block_weights,
    _seeded_weights,
    _time_blocks,
    _weight_chunks,
    few_groups_factor,
    shared_weights,
)
from tycheon.stats.rank_bootstrap import RankingBootstrap, panel_ranking_bootstrap, ranking_bootstrap

__all__ = [
    "BootstrapResult",
    "PairedMeans",
    "RankingBootstrap",
    "few_groups_factor",
    "paired_block_bootstrap",
    "paired_means",
    "paired_means_bootstrap",
    "paired_means_bootstraps",
    "panel_means_bootstrap",
    "panel_means_bootstraps",
    "panel_ranking_bootstrap",
    "ranking_bootstrap",
    "shared_weights",
]


@dataclass(frozen=True, eq=False)
class BootstrapResult:
    """Paired block-bootstrap of :math:`\\Delta = \\bar L^b - \\bar L^a`."""

    delta: float
    ci_low: float
    ci_high: float
    p_value: float
    se: float
    n_resamples: int
    n_blocks: int
    confidence: float


def paired_block_bootstrap(
    loss_a: object,
    loss_b: object,
    *,
    blocks: object,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | np.random.Generator | None,
) -> BootstrapResult:
    r"""Block bootstrap of the difference of mean losses, both arms resampled with one block draw
    (a label bootstrap: **assumes the labelled blocks independent**).

    .. math::

        \hat\Delta = \bar L^b - \bar L^a, \qquad
        p = \max\Big\{\frac{1}{B+1},\ \frac1B\sum_{b=1}^{B}\mathbb 1\{|\Delta^*_b - \hat\Delta| \ge
            |\hat\Delta|\}\Big\}

    The CI is the percentile interval of :math:`\Delta^*`; the SE is its standard deviation. Blocks are
    e.g. series, or group × period; a resample draws as many blocks as there are, with replacement, and
    averages all losses of the drawn blocks (so blocks of unequal size keep their weight).

    References
    ----------
    WP26 section 4.1; Künsch, H. R. (1989). The jackknife and the bootstrap for general stationary
    observations. Ann. Stat. 17(3); Lahiri, S. N. (2003). Resampling Methods for Dependent Data.
    """
    _check_n_resamples(n_resamples)
    _check_confidence(confidence)
    a = as_float_array(loss_a, "loss_a", ndim=(1,))
    b = as_float_array(loss_b, "loss_b", ndim=(1,))
    same_shape(loss_a=a, loss_b=b)
    check_finite(a, "loss_a")
    check_finite(b, "loss_b")
    labels = np.asarray(blocks)
    if labels.shape != a.shape:
        raise StatisticInputError(f"blocks must label every loss; got shape {labels.shape} for {a.shape}")
    codes, g = label_codes(labels, "block")
    diff_sum = np.bincount(codes, weights=b - a, minlength=g)  # [block]
    count = np.bincount(codes, minlength=g).astype(np.float64)
    delta = float(diff_sum.sum() / count.sum())
    w = _seeded_weights(g, int(n_resamples), seed)  # [resample, block], float64
    boot = (w @ diff_sum) / (w @ count)
    tail = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(boot, [tail, 1.0 - tail])
    p = max(1.0 / (n_resamples + 1), float(np.mean(np.abs(boot - delta) >= abs(delta))))
    return BootstrapResult(delta, float(lo), float(hi), p, float(np.std(boot, ddof=1)) if n_resamples > 1 else 0.0,
                           int(n_resamples), g, confidence)  # fmt: skip


@dataclass(frozen=True, eq=False)
class PairedMeans:
    """Paired bootstrap of several columns' means and of their differences to a reference column.

    Arrays are ``[column]``; ``delta*`` and ``p_value`` are NaN for the reference column itself and for a
    column that shares no block with it. ``n_blocks`` counts the units drawn (labelled blocks, or the
    origins of a panel bootstrap); ``block_length`` and ``scale`` are the panel bootstrap's run length and
    few-groups spread (1 and 1 for a label bootstrap).
    """

    columns: list[str]
    reference: str
    mean: np.ndarray
    mean_low: np.ndarray
    mean_high: np.ndarray
    delta: np.ndarray
    delta_low: np.ndarray
    delta_high: np.ndarray
    delta_se: np.ndarray
    p_value: np.ndarray
    n_obs: np.ndarray  # values present per column
    n_blocks: int
    n_resamples: int
    confidence: float
    block_length: int = 1
    scale: float = 1.0


def paired_means_bootstrap(
    values: pd.DataFrame,
    *,
    blocks: object,
    reference: str,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | np.random.Generator | None,
) -> PairedMeans:
    r"""One label bootstrap for every column: CIs of each mean and of each difference to ``reference``.

    **Assumes the labelled blocks independent** (series labels: series independent; where series share
    calendar shocks use :func:`panel_means_bootstrap`). Every column is resampled with the same block
    draw (paired). With :math:`w^*_b` the number of times block :math:`b` is drawn, :math:`S_{bj}` /
    :math:`C_{bj}` the sum / count of column :math:`j`'s present values in block :math:`b`, and
    :math:`D_{bj}` / :math:`E_{bj}` the sum / count of :math:`x_j - x_r` over the observations where both
    :math:`j` and the reference :math:`r` are present,

    .. math::

        \bar x^*_j = \frac{\sum_b w^*_b S_{bj}}{\sum_b w^*_b C_{bj}}, \qquad
        \Delta^*_j = \frac{\sum_b w^*_b D_{bj}}{\sum_b w^*_b E_{bj}}, \qquad
        p_j = \max\Big\{\frac{1}{B+1},\ \frac1B\sum_{b=1}^{B}\mathbb 1\{|\Delta^*_{j,b} - \hat\Delta_j| \ge
            |\hat\Delta_j|\}\Big\}

    with percentile CIs, as :func:`paired_block_bootstrap` (which this equals, draw for draw, for two
    complete columns). The draws are made in chunks of resamples so that many blocks fit in memory.

    Parameters
    ----------
    values : DataFrame, shape (obs, column)
        Losses (e.g. one block metric per row); NaN where a column has no value.
    blocks : array, shape (obs,)
        Resampling block of each row (e.g. the series, or the (series, origin) block).
    reference : str
        The column the differences are taken against (e.g. the production baseline).

    References
    ----------
    WP26 section 4.1; Künsch (1989); Lahiri (2003); evaluation-choices paper, section 4.
    """
    return paired_means_bootstraps(
        [values], blocks=blocks, reference=reference, n_resamples=n_resamples, confidence=confidence, seed=seed
    )[0]


def _tables(
    values: Sequence[pd.DataFrame], labels: np.ndarray, reference: str, name: str = "blocks"
) -> list[np.ndarray]:
    """The tables as ``[obs, column]`` float arrays, checked: a reference column, finite or NaN values,
    one label per row."""
    arrays = []
    for v in values:
        if not isinstance(v, pd.DataFrame) or reference not in v.columns:
            raise StatisticInputError(f"values must be a DataFrame with a column {reference!r} (the reference)")
        x = v.to_numpy(dtype=np.float64)  # [obs, column]
        if np.isinf(x).any():
            raise StatisticInputError("values must be finite or NaN (missing)")
        if labels.shape != (x.shape[0],):
            raise StatisticInputError(f"{name} must label each of the {x.shape[0]} rows; got shape {labels.shape}")
        arrays.append(x)
    return arrays


def _group_sums(
    v: pd.DataFrame, x: np.ndarray, codes: np.ndarray, g: int, reference: str
) -> tuple[np.ndarray, np.ndarray, int]:
    """Per group (block or origin): the sums :math:`S, C, D, E` of :func:`paired_means_bootstrap`,
    ``[group, 4 * column]``, with the ``[obs, column]`` presence mask and the reference's column."""
    present = np.isfinite(x)
    r = list(v.columns).index(reference)
    both = present & present[:, [r]]
    diff = np.where(both, x - np.where(present[:, [r]], x[:, [r]], 0.0), 0.0)
    stacked = np.concatenate([np.where(present, x, 0.0), present, diff, both], axis=1)  # [obs, 4 * column]
    sums = np.zeros((g, stacked.shape[1]))
    np.add.at(sums, codes, stacked)  # [group, 4 * column]
    return sums, present, r


def paired_means_bootstraps(
    values: Sequence[pd.DataFrame],
    *,
    blocks: object,
    reference: str,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | np.random.Generator | None,
) -> list[PairedMeans]:
    """:func:`paired_means_bootstrap` of several tables whose rows share the block labels ``blocks``
    (e.g. one leaderboard's blocks scored by two metrics), from one block draw: each result equals that
    table's own call with the same seed, draw for draw and bit for bit (the same chunks of
    ``[resample, block]`` weights times the same block sums), but the weights are drawn once for all."""
    _check_n_resamples(n_resamples)
    _check_confidence(confidence)
    labels = np.asarray(blocks)
    arrays = _tables(values, labels, reference)
    if not arrays:
        return []
    codes, g = label_codes(labels, "block")
    parts = [_group_sums(v, x, codes, g, reference) for v, x in zip(values, arrays, strict=True)]
    boots: list[list[np.ndarray]] = [[] for _ in parts]
    for w in _weight_chunks(g, int(n_resamples), as_generator(seed)):
        for out, (sums, _, _) in zip(boots, parts, strict=True):
            out.append(w @ sums)
    return [
        _paired_means(v, np.concatenate(b), sums, present, r, reference=reference, g=g,
                      n_resamples=int(n_resamples), confidence=confidence)
        for v, b, (sums, present, r) in zip(values, boots, parts, strict=True)
    ]  # fmt: skip


def paired_means(values: pd.DataFrame, *, reference: str) -> PairedMeans:
    """The estimates of :func:`paired_means_bootstrap` without resampling: each column's mean and its
    difference to ``reference`` on the rows both have; every interval, SE and p-value NaN,
    ``n_resamples = 0`` (for a table on which no interval is given)."""
    x = _tables([values], np.zeros(len(values)), reference)[0]
    sums, present, r = _group_sums(values, x, np.zeros(len(x), dtype=np.int64), 1, reference)
    return _paired_means(values, None, sums, present, r, reference=reference, g=1, n_resamples=0, confidence=np.nan)


def _paired_means(
    values: pd.DataFrame,
    boot: np.ndarray | None,
    sums: np.ndarray,
    present: np.ndarray,
    r: int,
    *,
    reference: str,
    g: int,
    n_resamples: int,
    confidence: float,
    scale: float = 1.0,
    block_length: int = 1,
) -> PairedMeans:
    """The means, differences, percentile CIs and p-values of one table from its resampled sums (none:
    the estimates alone), the resamples spread about the estimates by ``scale``."""
    k = present.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        full = sums.sum(axis=0)
        mean = full[:k] / full[k : 2 * k]
        delta = full[2 * k : 3 * k] / full[3 * k :]
    delta[r] = np.nan
    if boot is None:
        nan = np.full(k, np.nan)
        return PairedMeans([str(c) for c in values.columns], str(reference), mean, nan, nan, delta, nan, nan, nan,
                           nan, present.sum(axis=0), g, n_resamples, confidence, block_length, scale)  # fmt: skip
    with np.errstate(invalid="ignore", divide="ignore"):
        means = boot[:, :k] / boot[:, k : 2 * k]  # [resample, column]
        deltas = boot[:, 2 * k : 3 * k] / boot[:, 3 * k :]
    if scale != 1.0:  # the label bootstraps (scale 1) keep their draws bit for bit
        means = mean + scale * (means - mean)
        deltas = np.where(np.isfinite(delta), delta + scale * (deltas - delta), deltas)
    tail = (1.0 - confidence) / 2.0
    m_lo, m_hi = _nan_quantiles(means, tail)
    d_lo, d_hi = _nan_quantiles(deltas, tail)
    d_lo[r] = d_hi[r] = np.nan
    with np.errstate(invalid="ignore"):
        p = np.maximum(1.0 / (n_resamples + 1), np.mean(np.abs(deltas - delta) >= np.abs(delta), axis=0))
        se = np.nanstd(deltas, axis=0, ddof=1) if n_resamples > 1 else np.zeros(k)
    p = np.where(np.isfinite(delta), p, np.nan)
    se = np.where(np.isfinite(delta), se, np.nan)
    return PairedMeans([str(c) for c in values.columns], str(reference), mean, m_lo, m_hi, delta, d_lo, d_hi, se, p,
                       present.sum(axis=0), g, n_resamples, confidence, block_length, scale)  # fmt: skip


def _nan_quantiles(boot: np.ndarray, tail: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bounds per column, NaN for a column with no finite resample."""
    ok = np.isfinite(boot).any(axis=0)
    lo, hi = np.full(boot.shape[1], np.nan), np.full(boot.shape[1], np.nan)
    if ok.any():
        with np.errstate(invalid="ignore"):
            lo[ok], hi[ok] = np.nanquantile(boot[:, ok], [tail, 1.0 - tail], axis=0)
    return lo, hi


def panel_means_bootstrap(
    values: pd.DataFrame,
    *,
    origin: object,
    horizon: int,
    stride: int = 1,
    reference: str,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | np.random.Generator | None,
) -> PairedMeans:
    r"""Panel (time-block) bootstrap of every column's mean and of its difference to ``reference``.

    The circular block bootstrap over origins of the module docstring: with :math:`w^*_o` the draws of
    origin :math:`o` and :math:`S_{oj}, C_{oj}, D_{oj}, E_{oj}` the sums and counts of column :math:`j`
    and of :math:`x_j - x_r` over the rows at origin :math:`o` (every series),

    .. math::

        \bar x^*_j = \frac{\sum_o w^*_o S_{oj}}{\sum_o w^*_o C_{oj}}, \qquad
        \Delta^*_j = \frac{\sum_o w^*_o D_{oj}}{\sum_o w^*_o E_{oj}}, \qquad
        \Delta^*_{c,j} = \hat\Delta_j + c\,(\Delta^*_j - \hat\Delta_j)

        \text{CI} = \big[q_{a/2}(\Delta^*_{c}),\ q_{1-a/2}(\Delta^*_{c})\big], \qquad
        p_j = \max\Big\{\frac{1}{B+1},\ \frac1B\sum_{b}\mathbb 1\{|\Delta^*_{c,j,b} - \hat\Delta_j| \ge
            |\hat\Delta_j|\}\Big\}

    with :math:`c` = :func:`few_groups_factor` of :math:`G = \lceil T/\ell\rceil`, :math:`\ell =
    \lceil h/\text{stride}\rceil`; the same for the means. Every column is resampled with the same draw.

    **Assumed independent:** origins more than :math:`L = \ell - 1` apart. Nothing across series (a shock
    shared by all series at one origin is drawn whole). Coverage under a common shock: module docstring.

    Parameters
    ----------
    values : DataFrame, shape (obs, column)
        Losses, one row per (series, origin) block; NaN where a column has no value.
    origin : array, shape (obs,)
        Origin of each row (sortable in time order). Origins with no row are absent; their neighbours
        count as consecutive.
    horizon, stride : int
        Longest step scored and origin spacing: the block length :math:`\lceil h/\text{stride}\rceil`.
    reference : str
        The column the differences are taken against (e.g. the production baseline).

    Returns
    -------
    PairedMeans
        ``n_blocks`` the :math:`T` origins, ``block_length`` :math:`\ell`, ``scale`` :math:`c`.

    References
    ----------
    Politis & Romano (1992); Lahiri (2003), ch. 2-3; Bester, Conley & Hansen (2011); Cameron & Miller
    (2015), section VI.C; evaluation-choices paper, section 4.1.
    """
    return panel_means_bootstraps(
        [values], origin=origin, horizon=horizon, stride=stride, reference=reference, n_resamples=n_resamples,
        confidence=confidence, seed=seed,
    )[0]  # fmt: skip


def panel_means_bootstraps(
    values: Sequence[pd.DataFrame],
    *,
    origin: object,
    horizon: int,
    stride: int = 1,
    reference: str,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | np.random.Generator | None,
) -> list[PairedMeans]:
    """:func:`panel_means_bootstrap` of several tables whose rows share ``origin`` (one leaderboard's
    blocks scored by several metrics), from one draw of origins: each equals its own call with the seed."""
    _check_n_resamples(n_resamples)
    _check_confidence(confidence)
    labels = np.asarray(origin)
    arrays = _tables(values, labels, reference, "origin")
    if not arrays:
        return []
    design = _time_blocks(labels, n_obs=len(labels), horizon=horizon, stride=stride, confidence=confidence)
    w = _circular_block_weights(design.n_times, int(n_resamples), design.block_length, as_generator(seed))
    out = []
    for v, x in zip(values, arrays, strict=True):
        sums, present, r = _group_sums(v, x, design.codes, design.n_times, reference)  # [origin, 4 * column]
        out.append(_paired_means(v, w @ sums, sums, present, r, reference=reference, g=design.n_times,
                                 n_resamples=int(n_resamples), confidence=confidence, scale=design.scale,
                                 block_length=design.block_length))  # fmt: skip
    return out
