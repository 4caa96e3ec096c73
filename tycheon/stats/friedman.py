"""Friedman test with the Nemenyi critical difference, on complete blocks (paper, section 3).

Input is a ``[block, method]`` score table (lower is better), as a DataFrame (columns = methods) or a
2-D array. Blocks with any missing score are dropped and counted; ranks are averaged over ties.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
from scipy import stats

from tycheon._typing import as_generator
from tycheon._validate import label_codes
from tycheon.errors import StatisticInputError
from tycheon.stats._kernels import row_ranks

__all__ = [
    "FriedmanResult",
    "conservative_cd",
    "critical_difference",
    "friedman_nemenyi",
    "iman_davenport",
    "nemenyi_q",
]


@dataclass(frozen=True, eq=False)
class FriedmanResult:
    """Friedman statistic, Iman–Davenport F, mean ranks and the Nemenyi critical difference."""

    statistic: float  # chi-square, tie-corrected
    p_value: float
    iman_davenport: float
    iman_davenport_p: float
    mean_ranks: pd.Series  # index = method
    critical_difference: float
    n_blocks: int
    n_dropped: int
    alpha: float


@lru_cache(maxsize=256)
def nemenyi_q(k: int, alpha: float = 0.05) -> float:
    r"""Nemenyi :math:`q_\alpha` for ``k`` methods: the studentized range quantile over :math:`\sqrt2`.

    .. math:: q_\alpha = \frac{Q_{1-\alpha}(k, \infty)}{\sqrt 2}

    References
    ----------
    Demšar, J. (2006). Statistical comparisons of classifiers over multiple data sets. JMLR 7, Table 5.
    """
    if int(k) != k or k < 2:
        raise StatisticInputError(f"k must be an integer >= 2; got {k!r}")
    if not 0.0 < alpha < 1.0:
        raise StatisticInputError(f"alpha must be in (0, 1); got {alpha}")
    return float(stats.studentized_range.ppf(1.0 - alpha, int(k), np.inf) / np.sqrt(2.0))


def critical_difference(k: int, n_blocks: int, alpha: float = 0.05) -> float:
    r"""Nemenyi critical difference of mean ranks.

    .. math:: \mathrm{CD} = q_\alpha\sqrt{\frac{k(k+1)}{6N}}

    References
    ----------
    Demšar (2006), section 3.2.2.
    """
    if n_blocks < 1:
        raise StatisticInputError("the critical difference needs at least one complete block")
    return nemenyi_q(k, alpha) * float(np.sqrt(k * (k + 1) / (6.0 * n_blocks)))


def _as_table(scores: object) -> tuple[np.ndarray, list[str]]:
    if isinstance(scores, pd.DataFrame):
        names = [str(c) for c in scores.columns]
        try:
            arr = scores.to_numpy(dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise StatisticInputError("score table must be numeric") from err
    else:
        try:
            arr = np.asarray(scores, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise StatisticInputError("scores must be a numeric [block, method] array") from err
        if arr.ndim != 2:
            raise StatisticInputError(f"scores must be 2-D [block, method]; got shape {arr.shape}")
        names = [str(j) for j in range(arr.shape[1])]
    if arr.shape[1] < 2:
        raise StatisticInputError(f"need at least two methods to rank; got {arr.shape[1]}")
    if np.isinf(arr).any():
        raise StatisticInputError("scores hold infinite values; zero-scale blocks must be NaN (dropped), not inf")
    return arr, names


def _friedman_kernel(arr: np.ndarray) -> tuple[float, np.ndarray]:
    n, k = arr.shape
    ranks = row_ranks(arr)
    r_sum = ranks.sum(axis=0)
    # sum over blocks of sum_ties (t^3 - t), from the identity sum r^2 = k(k+1)(2k+1)/6 - sum(t^3-t)/12
    ties = 12.0 * (n * k * (k + 1) * (2 * k + 1) / 6.0 - np.sum(ranks * ranks))
    chi2 = 12.0 / (n * k * (k + 1)) * np.sum(r_sum**2) - 3.0 * n * (k + 1)
    c = 1.0 - ties / (n * k * (k * k - 1))
    chi2 = chi2 / c if c > 0 else 0.0
    return float(chi2), r_sum / n


def iman_davenport(chi2: float, n_blocks: int, k: int) -> tuple[float, float]:
    r"""Iman–Davenport :math:`F_F = (N-1)\chi^2_F / (N(k-1) - \chi^2_F)` and its p-value under
    :math:`F_{k-1,(k-1)(N-1)}` (Iman & Davenport 1980; Demšar 2006, section 3.2.2); ``(inf, 0)`` when
    the denominator is not positive (every block ranks the methods the same way)."""
    den = n_blocks * (k - 1) - chi2
    if den <= 0:
        return float("inf"), 0.0
    f_id = (n_blocks - 1) * chi2 / den
    return float(f_id), float(stats.f.sf(f_id, k - 1, (k - 1) * (n_blocks - 1)))


def friedman_nemenyi(scores: object, *, alpha: float = 0.05) -> FriedmanResult:
    r"""Friedman test over complete blocks, with Iman–Davenport F and the Nemenyi CD.

    With :math:`N` complete blocks, :math:`k` methods and mean ranks :math:`R_j`,

    .. math::

        \chi^2_F = \frac{12N}{k(k+1)}\Big[\sum_j R_j^2 - \frac{k(k+1)^2}{4}\Big] \Big/
            \Big(1 - \frac{\sum (t^3 - t)}{N k (k^2-1)}\Big), \qquad
        F_F = \frac{(N-1)\chi^2_F}{N(k-1) - \chi^2_F}

    with the tie correction over tie groups of size :math:`t` (as scipy), :math:`\chi^2_F \sim
    \chi^2_{k-1}`, :math:`F_F \sim F_{k-1,(k-1)(N-1)}` and :math:`\mathrm{CD} = q_\alpha\sqrt{k(k+1)/(6N)}`.

    Blocks are assumed independent; blocks of one series at several origins are not, so report
    :func:`conservative_cd` beside it (paper, section 3).

    References
    ----------
    Friedman, M. (1937). JASA 32(200); Iman, R. L. & Davenport, J. M. (1980). Comm. Stat. A 9(6);
    Demšar (2006), section 3.2.2.
    """
    arr, names = _as_table(scores)
    complete = ~np.isnan(arr).any(axis=1)
    dropped = int((~complete).sum())
    arr = arr[complete]
    n, k = arr.shape
    if n < 2:
        raise StatisticInputError(f"Friedman needs at least two complete blocks; {n} left after dropping {dropped}")
    chi2, mean_ranks = _friedman_kernel(arr)
    p = float(stats.chi2.sf(chi2, k - 1))
    f_id, p_id = iman_davenport(chi2, n, k)
    return FriedmanResult(
        chi2, p, f_id, p_id, pd.Series(mean_ranks, index=names, name="mean_rank"),
        critical_difference(k, n, alpha), n, dropped, alpha,
    )  # fmt: skip


def conservative_cd(
    scores: object,
    *,
    series: object,
    seed: int | np.random.Generator | None,
    alpha: float = 0.05,
) -> FriedmanResult:
    r"""Friedman/Nemenyi on one randomly chosen complete block per series (independent blocks).

    .. math:: \mathrm{CD}_{\text{cons}} = q_\alpha\sqrt{\frac{k(k+1)}{6 N_{\text{series}}}}

    Blocks of one series at several origins are correlated, so the CD on all blocks is too narrow;
    keeping one seeded random origin per series makes the blocks independent by construction.

    Parameters
    ----------
    scores : DataFrame or array, shape (block, method)
    series : array, shape (block,)
        Series label of each block.
    seed : int, Generator or None

    References
    ----------
    Evaluation-choices paper, section 3; Demšar (2006).
    """
    arr, names = _as_table(scores)
    s = np.asarray(series)
    if s.shape != (arr.shape[0],):
        raise StatisticInputError(f"series must label each of the {arr.shape[0]} blocks; got shape {s.shape}")
    complete = ~np.isnan(arr).any(axis=1)
    rng = as_generator(seed)
    codes, _ = label_codes(s[complete], "series")
    idx = np.flatnonzero(complete)
    key = rng.random(idx.size)  # pick per series the block with the smallest random key
    order = np.lexsort((key, codes))
    first = np.ones(order.size, dtype=bool)
    first[1:] = codes[order][1:] != codes[order][:-1]
    chosen = np.sort(idx[order[first]])
    table = pd.DataFrame(arr[chosen], columns=names)
    return dataclasses.replace(friedman_nemenyi(table, alpha=alpha), n_dropped=int((~complete).sum()))
