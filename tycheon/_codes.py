"""Integer codes of keys without hashing or sorting all rows where the keys allow it.

At M5 size a leaderboard table has 11 million rows whose (series, origin, step) keys take about 1.5
million distinct values. ``np.unique(key, return_inverse=True)`` sorts all 11 million;
:func:`unique_inverse` marks the present values in a table of the key space instead (over an order of
magnitude faster: benchmarks/perf/MEASUREMENTS.md) when that space is not much larger than the rows,
with the same result. :func:`sorted_codes` is
``pd.factorize(values, sort=True)`` read off a categorical's codes when its categories are sorted (no
hashing of the labels).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["DENSE_FACTOR", "factorize_sorted", "position_dtype", "sorted_codes", "unique_inverse"]

DENSE_FACTOR = 4
""":func:`unique_inverse` marks present values in a table when the key space has at most this many
slots per row (the table then costs at most a few bytes per row); otherwise it sorts."""


def position_dtype(n: int) -> np.dtype:
    """The narrowest unsigned integer type that holds the positions ``0 .. n - 1`` (``uint8`` for none):
    row positions and codes kept in it instead of intp (at M5 size an intp array of 15 million rows is
    117 MB, a ``uint32`` one half and a ``uint8`` one an eighth of it)."""
    return np.min_scalar_type(max(int(n) - 1, 0))


def unique_inverse(key: np.ndarray, *, size: int, compact: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)`` of non-negative integer keys below ``size``.

    Parameters
    ----------
    key : ndarray of int, shape (n,)
        Keys in ``[0, size)``.
    size : int
        Size of the key space (an exclusive upper bound of the keys).
    compact : bool
        Return the inverse in :func:`position_dtype` of ``len(uniq)`` (the same values), made in that
        type rather than cast from intp (no second copy while both are alive).

    Returns
    -------
    uniq : ndarray of int64
        The distinct keys, ascending.
    inverse : ndarray of intp (or the compact type), shape (n,)
        Position of each key in ``uniq``.

    Notes
    -----
    With ``size <= DENSE_FACTOR * n`` the present keys are marked in a boolean table of the key space;
    the rank of a key among the present ones is the running count of marks before it. No comparison sort:
    O(n + size) instead of O(n log n), the same arrays as ``np.unique``.
    """
    key = np.asarray(key)
    size = int(size)
    n = len(key)
    if n == 0 or size > DENSE_FACTOR * n:
        uniq, inverse = np.unique(key, return_inverse=True)
        inverse = inverse.reshape(-1)
        if compact:
            inverse = inverse.astype(position_dtype(len(uniq)), copy=False)
        return uniq.astype(np.int64, copy=False), inverse
    if int(key.min()) < 0 or int(key.max()) >= size:
        raise ValueError(f"unique_inverse: keys must lie in [0, {size}); found {int(key.min())}..{int(key.max())}")
    present = np.zeros(size, dtype=bool)
    present[key] = True
    rank = np.cumsum(present, dtype=np.intp)
    rank -= 1
    if compact:  # the ranks (one per slot of the key space) narrowed first, so the gather is made narrow
        rank = rank.astype(position_dtype(int(rank[-1]) + 1), copy=False)
    return np.flatnonzero(present).astype(np.int64, copy=False), rank[key]


def factorize_sorted(values: pd.Series | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``pd.factorize(values, sort=True)``: int64 codes (-1 where a value is missing) and the distinct
    values in sorted order (as an ndarray).

    A categorical with sorted categories and no missing value is coded from its own codes: the codes of
    the categories present, renumbered 0.. in category order, are the sorted factorisation's (the
    labels are never hashed). Numbers and datetimes are factorised unsorted and the few distinct values
    then sorted and the codes renumbered through a lookup (pandas' ``sort=True`` re-sorts through
    ``safe_sort``, 5x the factorisation at M5 size). Anything else is factorised by pandas.
    """
    dtype = getattr(values, "dtype", None)
    if isinstance(dtype, pd.CategoricalDtype) and dtype.categories.is_monotonic_increasing:
        codes = np.asarray(values.cat.codes if isinstance(values, pd.Series) else pd.Categorical(values).codes)
        if len(codes) and int(codes.min()) >= 0:
            present = np.bincount(codes, minlength=len(dtype.categories)) > 0
            remap = np.cumsum(present, dtype=np.int64) - 1
            return remap[codes], dtype.categories.to_numpy()[present]
    if isinstance(dtype, np.dtype) and dtype.kind in "biufmM":
        codes, found = pd.factorize(np.asarray(values))
        uniques = np.asarray(found)
        order = np.argsort(uniques, kind="stable")
        rank = np.empty(len(order) + 1, dtype=np.int64)
        rank[order] = np.arange(len(order))
        rank[-1] = -1  # the missing values' code -1 reads the last slot
        return rank[codes], uniques[order]
    codes, labels = pd.factorize(values, sort=True)
    return codes.astype(np.int64, copy=False), np.asarray(labels)


def sorted_codes(values: pd.Series | np.ndarray) -> tuple[np.ndarray, int]:
    """:func:`factorize_sorted`'s codes and the number of distinct values."""
    codes, uniques = factorize_sorted(values)
    return codes, len(uniques)
