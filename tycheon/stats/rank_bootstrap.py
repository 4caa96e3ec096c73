r"""Bootstraps of the leaderboard order: how often each method keeps its full-sample rank when the series
(:func:`ranking_bootstrap`, a label bootstrap) or the origins in circular time blocks
(:func:`panel_ranking_bootstrap`) are resampled.

The designs, what each assumes independent and the few-groups spread are those of
:mod:`tycheon.stats.bootstrap` (module docstring); the draws come from the same weights
(:mod:`tycheon.stats._resample`), so with the same seed :func:`panel_ranking_bootstrap` draws the origins
:func:`~tycheon.stats.bootstrap.panel_means_bootstrap` draws, and :func:`ranking_bootstrap` the series
:func:`~tycheon.stats.bootstrap.paired_means_bootstrap` draws over series labels.

References
----------
Evaluation-choices paper, section 4. Efron, B. & Tibshirani, R. (1993). *An Introduction to the
Bootstrap*, ch. 6. Politis, D. N. & Romano, J. P. (1992). In *Exploring the Limits of Bootstrap*, Wiley.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from tycheon._typing import as_generator
from tycheon._validate import check_finite, label_codes
from tycheon.errors import StatisticInputError
from tycheon.stats._kernels import row_ranks
from tycheon.stats._resample import _check_n_resamples, _circular_block_weights, _seeded_weights, _time_blocks

__all__ = ["RankingBootstrap", "panel_ranking_bootstrap", "ranking_bootstrap"]


@dataclass(frozen=True, eq=False)
class RankingBootstrap:
    """How often each method keeps its full-sample place when the panel (or the series) is resampled."""

    rank: pd.Series  # full-sample rank (1 = best), index = method
    keep_fraction: pd.Series  # share of resamples with the same rank
    rank_counts: pd.DataFrame  # [method, rank] counts over resamples
    n_resamples: int
    block_length: int = 1  # origins per run (panel), 1 for the series bootstrap
    scale: float = 1.0  # few-groups spread of the resampled means (panel), 1 for the series bootstrap


def _ranking_arrays(scores: pd.DataFrame, labels: object, name: str, by: str) -> tuple[np.ndarray, np.ndarray]:
    """The scores as ``[block, method]`` (within-block ranks for ``by="mean_rank"``), checked, and the labels."""
    if not isinstance(scores, pd.DataFrame):
        raise StatisticInputError("scores must be a DataFrame with one column per method")
    arr = scores.to_numpy(dtype=np.float64)
    check_finite(arr, "scores")
    s = np.asarray(labels)
    if s.shape != (arr.shape[0],):
        raise StatisticInputError(f"{name} must label each of the {arr.shape[0]} blocks")
    if by == "mean_rank":
        arr = row_ranks(arr)
    elif by != "mean_score":
        raise StatisticInputError(f"by must be 'mean_score' or 'mean_rank'; got {by!r}")
    return arr, s


def _ranking(
    scores: pd.DataFrame, arr: np.ndarray, sums: np.ndarray, count: np.ndarray, w: np.ndarray, *, scale: float,
    block_length: int,
) -> RankingBootstrap:  # fmt: skip
    """Ranks of the resampled means ``(w @ sums) / (w @ count)``, spread about the full-sample means by
    ``scale``; ties take the lowest rank (``min``)."""
    k = arr.shape[1]
    mean = sums.sum(axis=0) / count.sum()
    full = rankdata(mean, method="min")
    means = (w @ sums) / (w @ count)[:, None]  # [resample, method]
    if scale != 1.0:
        means = mean + scale * (means - mean)
    ranks = rankdata(means, axis=1, method="min").astype(np.int64)
    names = [str(c) for c in scores.columns]
    counts = np.stack([np.bincount(ranks[:, j], minlength=k + 1)[1:] for j in range(k)])
    return RankingBootstrap(
        pd.Series(full.astype(np.int64), index=names, name="rank"),
        pd.Series(np.mean(ranks == full[None, :], axis=0), index=names, name="keep_fraction"),
        pd.DataFrame(counts, index=names, columns=range(1, k + 1)),
        len(w),
        block_length,
        scale,
    )


def ranking_bootstrap(
    scores: pd.DataFrame,
    *,
    series: object,
    n_resamples: int = 2000,
    by: str = "mean_score",
    seed: int | np.random.Generator | None,
) -> RankingBootstrap:
    r"""Series-level bootstrap of the leaderboard order (a label bootstrap: **assumes series independent**).

    Resample series with replacement (all blocks of a drawn series come along), rank the methods by mean
    score (``by="mean_score"``) or by mean within-block rank (``by="mean_rank"``, Friedman style), and
    count how often each method lands on its full-sample rank:

    .. math:: \mathrm{keep}_j = \frac1B\sum_b \mathbb 1\{r^*_{b,j} = \hat r_j\}

    Ties in the ordering get the lowest rank (``min``) so a tie never counts as a move for both. Where
    series share calendar shocks use :func:`panel_ranking_bootstrap`.

    Parameters
    ----------
    scores : DataFrame, shape (block, method)
        Block scores, lower is better, complete rows only (drop incomplete blocks first).
    series : array, shape (block,)

    References
    ----------
    Evaluation-choices paper, section 4 (buyer-level bootstrap of Table 2); Efron, B. & Tibshirani, R.
    (1993). An Introduction to the Bootstrap, ch. 6.
    """
    _check_n_resamples(n_resamples)
    arr, s = _ranking_arrays(scores, series, "series", by)
    codes, g = label_codes(s, "series")
    sums = np.zeros((g, arr.shape[1]))
    np.add.at(sums, codes, arr)  # [series, method]
    count = np.bincount(codes, minlength=g).astype(np.float64)
    w = _seeded_weights(g, int(n_resamples), seed)  # [resample, series], float64
    return _ranking(scores, arr, sums, count, w, scale=1.0, block_length=1)


def panel_ranking_bootstrap(
    scores: pd.DataFrame,
    *,
    origin: object,
    horizon: int,
    stride: int = 1,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    by: str = "mean_score",
    seed: int | np.random.Generator | None,
) -> RankingBootstrap:
    r"""Panel (time-block) bootstrap of the leaderboard order: :func:`ranking_bootstrap` with the origins
    drawn in circular blocks of :math:`\ell = \lceil h/\text{stride}\rceil` (:mod:`tycheon.stats.bootstrap`),
    each drawn origin bringing every series' block.

    The resampled means are spread about the full-sample means by the few-groups factor :math:`c` of
    ``confidence`` before they are ranked, so a rank interval and the
    :func:`~tycheon.stats.bootstrap.panel_means_bootstrap` intervals of the same draw agree:

    .. math::

        \bar x^*_{c,j} = \hat{\bar x}_j + c\,\Big(\frac{\sum_o w^*_o S_{oj}}{\sum_o w^*_o C_o}
        - \hat{\bar x}_j\Big), \qquad \mathrm{keep}_j = \frac1B\sum_b \mathbb 1\{r^*_{b,j} = \hat r_j\}

    **Assumed independent:** origins more than :math:`\lceil h/\text{stride}\rceil - 1` apart; nothing
    across series. With the same seed and origins it draws the same origins as
    :func:`~tycheon.stats.bootstrap.panel_means_bootstrap`.

    Parameters
    ----------
    scores : DataFrame, shape (block, method)
        Block scores, lower is better, complete rows only.
    origin : array, shape (block,)
        Origin of each block (sortable in time order).

    References
    ----------
    Politis & Romano (1992); Bester, Conley & Hansen (2011); evaluation-choices paper, section 4.
    """
    _check_n_resamples(n_resamples)
    arr, o = _ranking_arrays(scores, origin, "origin", by)
    design = _time_blocks(o, n_obs=len(o), horizon=horizon, stride=stride, confidence=confidence)
    sums = np.zeros((design.n_times, arr.shape[1]))
    np.add.at(sums, design.codes, arr)  # [origin, method]
    count = np.bincount(design.codes, minlength=design.n_times).astype(np.float64)
    w = _circular_block_weights(design.n_times, int(n_resamples), design.block_length, as_generator(seed))
    return _ranking(scores, arr, sums, count, w, scale=design.scale, block_length=design.block_length)
