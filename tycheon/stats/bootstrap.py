"""Block bootstraps: paired differences of mean losses (WP26 section 4.1) and ranking stability."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from tycheon._typing import as_generator
from tycheon._validate import as_float_array, check_finite, label_codes, same_shape
from tycheon.errors import StatisticInputError
from tycheon.stats._kernels import row_ranks

__all__ = [
    "BootstrapResult",
    "PairedMeans",
    "RankingBootstrap",
    "paired_block_bootstrap",
    "paired_means_bootstrap",
    "paired_means_bootstraps",
    "ranking_bootstrap",
    "shared_weights",
]

_WEIGHT_CELLS = 1 << 24  # draws per chunk of resamples: bounds the [resample, block] weights at ~128 MiB
_DRAW_CELLS = 1 << 21  # integer draws made at once inside one weight matrix (16 MiB)


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


def _block_weights(n_blocks: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``[resample, block]`` counts (as float64) of each block in a draw of ``n_blocks`` blocks with replacement.

    The draws are made :data:`_DRAW_CELLS` at a time (whole resamples), not as one ``[resample, block]``
    integer matrix: the generator gives the same stream either way (pinned in the tests), and at M5 size
    the whole matrix was 488 MB beside the 488 MB of weights."""
    out = np.empty((n_resamples, n_blocks), dtype=np.float64)
    rows = max(1, _DRAW_CELLS // max(n_blocks, 1))
    for start in range(0, n_resamples, rows):
        draws = rng.integers(0, n_blocks, size=(min(rows, n_resamples - start), n_blocks))
        for i in range(len(draws)):  # row by row: a bincount over one row stays in cache (3-4x faster than
            out[start + i] = np.bincount(draws[i], minlength=n_blocks)  # one over the whole matrix's rows)
        del draws
    return out


_SHARED: ContextVar[dict[tuple[int, int, int], np.ndarray] | None] = ContextVar("tycheon_shared_weights", default=None)


@contextmanager
def shared_weights() -> Iterator[None]:
    """Inside the block, whole ``[resample, block]`` weight matrices drawn from an integer seed are drawn
    once per ``(n_blocks, n_resamples, seed)`` and reused (read-only), then released when it ends.

    An integer seed starts a fresh generator, so every call with the same three numbers draws the same
    matrix: sharing it changes no value. The protocol-sensitivity audit bootstraps 15 means over the same
    30,490 series with one seed, each drawing (and paging in) the same 488 MB of weights; inside this
    block they are drawn once. A generator or None as the seed is never shared (its draws depend on
    what was drawn before)."""
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)


def _seeded_weights(n_blocks: int, n_resamples: int, seed: int | np.random.Generator | None) -> np.ndarray:
    """:func:`_block_weights` of a fresh generator of ``seed``; shared inside :func:`shared_weights` when
    ``seed`` is an integer (never written to: the callers only multiply by it)."""
    shared = _SHARED.get()
    if shared is None or not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
        return _block_weights(n_blocks, n_resamples, as_generator(seed))
    key = (int(n_blocks), int(n_resamples), int(seed))
    if key not in shared:
        w = _block_weights(n_blocks, n_resamples, as_generator(seed))
        w.setflags(write=False)
        shared[key] = w
    return shared[key]


def _weight_chunks(n_blocks: int, n_resamples: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """:func:`_block_weights` in chunks of resamples (one chunk, the same draws, when they fit in
    ``_WEIGHT_CELLS``), so that a panel of many blocks never holds all ``[resample, block]`` counts."""
    step = max(1, min(n_resamples, _WEIGHT_CELLS // max(n_blocks, 1)))
    for start in range(0, n_resamples, step):
        yield _block_weights(n_blocks, min(step, n_resamples - start), rng)


def _check_n_resamples(n_resamples: int) -> None:
    if int(n_resamples) != n_resamples or n_resamples < 1:
        raise StatisticInputError(f"n_resamples must be a positive integer; got {n_resamples!r}")


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise StatisticInputError(f"confidence must be in (0, 1); got {confidence}")


def paired_block_bootstrap(
    loss_a: object,
    loss_b: object,
    *,
    blocks: object,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | np.random.Generator | None,
) -> BootstrapResult:
    r"""Block bootstrap of the difference of mean losses, both arms resampled with one block draw.

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
    """Paired block-bootstrap of several columns' means and of their differences to a reference column.

    Arrays are ``[column]``; ``delta*`` and ``p_value`` are NaN for the reference column itself and for a
    column that shares no block with it.
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


def paired_means_bootstrap(
    values: pd.DataFrame,
    *,
    blocks: object,
    reference: str,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int | np.random.Generator | None,
) -> PairedMeans:
    r"""One block bootstrap for every column: CIs of each mean and of each difference to ``reference``.

    Every column is resampled with the same block draw (paired). With :math:`w^*_b` the number of times
    block :math:`b` is drawn, :math:`S_{bj}` / :math:`C_{bj}` the sum / count of column :math:`j`'s
    present values in block :math:`b`, and :math:`D_{bj}` / :math:`E_{bj}` the sum / count of
    :math:`x_j - x_r` over the observations where both :math:`j` and the reference :math:`r` are present,

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
    arrays = []
    labels = np.asarray(blocks)
    for v in values:
        if not isinstance(v, pd.DataFrame) or reference not in v.columns:
            raise StatisticInputError(f"values must be a DataFrame with a column {reference!r} (the reference)")
        x = v.to_numpy(dtype=np.float64)  # [obs, column]
        if np.isinf(x).any():
            raise StatisticInputError("values must be finite or NaN (missing)")
        if labels.shape != (x.shape[0],):
            raise StatisticInputError(f"blocks must label each of the {x.shape[0]} rows; got shape {labels.shape}")
        arrays.append(x)
    if not arrays:
        return []
    codes, g = label_codes(labels, "block")
    parts = []
    for v, x in zip(values, arrays, strict=True):
        present = np.isfinite(x)
        r = list(v.columns).index(reference)
        both = present & present[:, [r]]
        diff = np.where(both, x - np.where(present[:, [r]], x[:, [r]], 0.0), 0.0)
        stacked = np.concatenate([np.where(present, x, 0.0), present, diff, both], axis=1)  # [obs, 4 * column]
        sums = np.zeros((g, stacked.shape[1]))
        np.add.at(sums, codes, stacked)  # [block, 4 * column]
        parts.append((sums, present, r))
    boots: list[list[np.ndarray]] = [[] for _ in parts]
    for w in _weight_chunks(g, int(n_resamples), as_generator(seed)):
        for out, (sums, _, _) in zip(boots, parts, strict=True):
            out.append(w @ sums)
    return [
        _paired_means(
            v,
            np.concatenate(b),
            sums,
            present,
            r,
            reference=reference,
            g=g,
            n_resamples=int(n_resamples),
            confidence=confidence,
        )
        for v, b, (sums, present, r) in zip(values, boots, parts, strict=True)
    ]


def _paired_means(
    values: pd.DataFrame,
    boot: np.ndarray,
    sums: np.ndarray,
    present: np.ndarray,
    r: int,
    *,
    reference: str,
    g: int,
    n_resamples: int,
    confidence: float,
) -> PairedMeans:
    """The means, differences, percentile CIs and p-values of one table from its resampled sums."""
    k = present.shape[1]
    with np.errstate(invalid="ignore", divide="ignore"):
        means = boot[:, :k] / boot[:, k : 2 * k]  # [resample, column]
        deltas = boot[:, 2 * k : 3 * k] / boot[:, 3 * k :]
        full = sums.sum(axis=0)
        mean = full[:k] / full[k : 2 * k]
        delta = full[2 * k : 3 * k] / full[3 * k :]
    delta[r] = np.nan
    tail = (1.0 - confidence) / 2.0
    m_lo, m_hi = _nan_quantiles(means, tail)
    d_lo, d_hi = _nan_quantiles(deltas, tail)
    d_lo[r] = d_hi[r] = np.nan
    with np.errstate(invalid="ignore"):
        p = np.maximum(1.0 / (n_resamples + 1), np.mean(np.abs(deltas - delta) >= np.abs(delta), axis=0))
        se = np.nanstd(deltas, axis=0, ddof=1) if n_resamples > 1 else np.zeros(k)
    p = np.where(np.isfinite(delta), p, np.nan)
    se = np.where(np.isfinite(delta), se, np.nan)
    return PairedMeans(
        [str(c) for c in values.columns],
        str(reference),
        mean,
        m_lo,
        m_hi,
        delta,
        d_lo,
        d_hi,
        se,
        p,
        present.sum(axis=0),
        g,
        n_resamples,
        confidence,
    )


def _nan_quantiles(boot: np.ndarray, tail: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile bounds per column, NaN for a column with no finite resample."""
    ok = np.isfinite(boot).any(axis=0)
    lo, hi = np.full(boot.shape[1], np.nan), np.full(boot.shape[1], np.nan)
    if ok.any():
        with np.errstate(invalid="ignore"):
            lo[ok], hi[ok] = np.nanquantile(boot[:, ok], [tail, 1.0 - tail], axis=0)
    return lo, hi


@dataclass(frozen=True, eq=False)
class RankingBootstrap:
    """How often each method keeps its full-sample place when series are resampled."""

    rank: pd.Series  # full-sample rank (1 = best), index = method
    keep_fraction: pd.Series  # share of resamples with the same rank
    rank_counts: pd.DataFrame  # [method, rank] counts over resamples
    n_resamples: int


def ranking_bootstrap(
    scores: pd.DataFrame,
    *,
    series: object,
    n_resamples: int = 2000,
    by: str = "mean_score",
    seed: int | np.random.Generator | None,
) -> RankingBootstrap:
    r"""Series-level bootstrap of the leaderboard order.

    Resample series with replacement (all blocks of a drawn series come along), rank the methods by mean
    score (``by="mean_score"``) or by mean within-block rank (``by="mean_rank"``, Friedman style), and
    count how often each method lands on its full-sample rank:

    .. math:: \mathrm{keep}_j = \frac1B\sum_b \mathbb 1\{r^*_{b,j} = \hat r_j\}

    Ties in the ordering get the lowest rank (``min``) so a tie never counts as a move for both.

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
    if not isinstance(scores, pd.DataFrame):
        raise StatisticInputError("scores must be a DataFrame with one column per method")
    arr = scores.to_numpy(dtype=np.float64)
    check_finite(arr, "scores")
    s = np.asarray(series)
    if s.shape != (arr.shape[0],):
        raise StatisticInputError(f"series must label each of the {arr.shape[0]} blocks")
    if by == "mean_rank":
        arr = row_ranks(arr)
    elif by != "mean_score":
        raise StatisticInputError(f"by must be 'mean_score' or 'mean_rank'; got {by!r}")
    codes, g = label_codes(s, "series")
    k = arr.shape[1]
    sums = np.zeros((g, k))
    np.add.at(sums, codes, arr)  # [series, method]
    count = np.bincount(codes, minlength=g).astype(np.float64)
    full = rankdata(sums.sum(axis=0) / count.sum(), method="min")
    w = _seeded_weights(g, int(n_resamples), seed)  # [resample, series], float64
    means = (w @ sums) / (w @ count)[:, None]  # [resample, method]
    ranks = rankdata(means, axis=1, method="min").astype(np.int64)
    names = [str(c) for c in scores.columns]
    counts = np.stack([np.bincount(ranks[:, j], minlength=k + 1)[1:] for j in range(k)])
    return RankingBootstrap(
        pd.Series(full.astype(np.int64), index=names, name="rank"),
        pd.Series(np.mean(ranks == full[None, :], axis=0), index=names, name="keep_fraction"),
        pd.DataFrame(counts, index=names, columns=range(1, k + 1)),
        int(n_resamples),
    )
