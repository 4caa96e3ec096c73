r"""The bootstraps' draws: weights of labelled blocks drawn with replacement, circular time blocks of
origins, and the few-groups spread (the designs are in :mod:`tycheon.stats.bootstrap`'s docstring).

A draw is a ``[resample, unit]`` matrix of counts (float64) :math:`w^*`; every statistic of
:mod:`tycheon.stats.bootstrap` and :mod:`tycheon.stats.rank_bootstrap` is a ratio of
:math:`w^*`-weighted sums, so the two modules read the same draws from one seed. The order of the
generator's calls here, in their order, fix every published interval: a change of them changes the draws.

References
----------
Politis, D. N. & Romano, J. P. (1992). A circular block-resampling procedure for stationary data. In
*Exploring the Limits of Bootstrap*, Wiley, 263-270. Bester, C. A., Conley, T. G. & Hansen, C. B. (2011).
J. Econometrics 165(2). Cameron, A. C. & Miller, D. L. (2015). J. Human Resources 50(2), section VI.C.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np
from scipy import stats

from tycheon._typing import as_generator
from tycheon._validate import label_codes
from tycheon.contract import overlap_lags
from tycheon.errors import StatisticInputError
from tycheon.stats.dm import panel_df

__all__ = ["few_groups_factor", "shared_weights"]

_WEIGHT_CELLS = 1 << 24  # draws per chunk of resamples: bounds the [resample, block] weights at ~128 MiB
_DRAW_CELLS = 1 << 21  # integer draws made at once inside one weight matrix (16 MiB)


def _block_weights(n_blocks: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``[resample, block]`` counts (as float64) of each block in a draw of ``n_blocks`` blocks with replacement.

    The draws are made :data:`_DRAW_CELLS` at a time (whole resamples), not as one ``[resample, block]``
    integer matrix: the generator gives the same stream either way (pinned in the tests), and at M5 size
    the whole int64 matrix would be another 488 MB (2000 resamples x 30,490 series x 8 B) beside the
    488 MB of weights."""
    out = np.empty((n_resamples, n_blocks), dtype=np.float64)
    rows = max(1, _DRAW_CELLS // max(n_blocks, 1))
    for start in range(0, n_resamples, rows):
        draws = rng.integers(0, n_blocks, size=(min(rows, n_resamples - start), n_blocks))
        for i in range(len(draws)):  # row by row: a bincount over one row stays in cache (faster than one
            out[start + i] = np.bincount(draws[i], minlength=n_blocks)  # over the whole matrix's rows)
        del draws
    return out


_SHARED: ContextVar[dict[tuple[int, int, int], np.ndarray] | None] = ContextVar("tycheon_shared_weights", default=None)


@contextmanager
def shared_weights() -> Iterator[None]:
    """Inside the block, whole ``[resample, block]`` weight matrices drawn from an integer seed are drawn
    once per ``(n_blocks, n_resamples, seed)`` and reused (read-only), then released when it ends.

    An integer seed starts a fresh generator, so every call with the same three numbers draws the same
    matrix: sharing it changes no value. The protocol-sensitivity audit bootstraps 15 means over the same
    30,490 series with one seed, each drawing (and paging in) the same 488 MB of weights (2000 x 30,490 x
    8 B); inside this
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


def few_groups_factor(n_groups: int, confidence: float) -> float:
    r"""The few-clusters spread :math:`c = \sqrt{G/(G-1)}\,t_{G-1,1-a/2}/z_{1-a/2}`, :math:`a = 1 -`
    ``confidence``, of the panel bootstraps (:mod:`tycheon.stats.bootstrap`): the bootstrap's variance divisor :math:`G`
    made :math:`G - 1`, and its normal quantiles made those of :math:`t_{G-1}`.

    References
    ----------
    Bester, Conley & Hansen (2011): with :math:`G` fixed, the cluster-robust :math:`t` statistic (variance
    divisor :math:`G`) tends to :math:`\sqrt{G/(G-1)}\,t_{G-1}`; Cameron & Miller (2015), section VI.C.
    """
    _check_confidence(confidence)
    if int(n_groups) != n_groups or n_groups < 2:
        raise StatisticInputError(f"the few-groups factor needs at least 2 groups; got {n_groups!r}")
    q = 1.0 - (1.0 - confidence) / 2.0
    return float(np.sqrt(n_groups / (n_groups - 1.0)) * stats.t.ppf(q, n_groups - 1) / stats.norm.ppf(q))


def _circular_block_weights(n_times: int, n_resamples: int, block_length: int, rng: np.random.Generator) -> np.ndarray:
    """``[resample, time]`` counts (float64) of each time point in a circular block bootstrap draw: per
    resample ``ceil(T / l)`` starts drawn uniformly (one ``integers`` call, ``[resample, run]``), each run
    the ``l`` time points from its start on, wrapping past the last to the first, the concatenation cut
    to ``T`` (Politis & Romano 1992)."""
    runs = -(-n_times // block_length)
    starts = rng.integers(0, n_times, size=(n_resamples, runs))
    pos = (starts[:, :, None] + np.arange(block_length)) % n_times  # [resample, run, l]
    pos = pos.reshape(n_resamples, runs * block_length)[:, :n_times]
    pos += (np.arange(n_resamples) * n_times)[:, None]
    counts = np.bincount(pos.ravel(), minlength=n_resamples * n_times)
    return counts.reshape(n_resamples, n_times).astype(np.float64)


@dataclass(frozen=True, eq=False)
class _TimeBlocks:
    """The panel bootstraps' design: each row's origin (codes in time order), the block length and the
    few-groups spread."""

    codes: np.ndarray  # [obs] origin code; origins with no row are absent, their neighbours adjacent
    n_times: int
    block_length: int
    scale: float  # the few-groups factor of G = ceil(T / l) groups


def _time_blocks(origin: object, *, n_obs: int, horizon: int, stride: int, confidence: float) -> _TimeBlocks:
    r"""The origins of ``n_obs`` rows as circular-block units: runs of :math:`\ell = \lceil h/\text{stride}\rceil`
    origins, :math:`G = \lceil T/\ell\rceil \ge 2` groups of them, and their few-groups factor."""
    o = np.asarray(origin)
    if o.shape != (n_obs,):
        raise StatisticInputError(f"origin must label each of the {n_obs} rows; got shape {o.shape}")
    codes, t = label_codes(o, "origin")
    length = overlap_lags(horizon, stride) + 1
    groups = panel_df(t, length - 1) + 1  # G = ceil(T / l), the groups the DM test's df counts
    if groups < 2:
        raise StatisticInputError(
            f"{t} origin(s) make {groups} group(s) of ceil(h/stride) = {length} consecutive origins; a "
            "bootstrap over time needs at least 2"
        )
    return _TimeBlocks(codes, t, length, few_groups_factor(groups, confidence))
