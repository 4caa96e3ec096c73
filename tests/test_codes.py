"""tycheon._codes against the functions it stands in for: np.unique(return_inverse) and
pd.factorize(sort=True), on generated keys of every kind the score set has (hypothesis)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tycheon._codes import DENSE_FACTOR, factorize_sorted, position_dtype, unique_inverse


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 60), max_size=80), st.integers(0, 400))
def test_unique_inverse_is_np_unique(keys, extra):
    key = np.asarray(keys, dtype=np.int64)
    size = (int(key.max()) + 1 if len(key) else 1) + extra  # dense and sparse spaces alike
    uniq, inverse = unique_inverse(key, size=size)
    u, i = np.unique(key, return_inverse=True)
    np.testing.assert_array_equal(uniq, u)
    np.testing.assert_array_equal(inverse, i.reshape(-1))
    _, narrow = unique_inverse(key, size=size, compact=True)  # the same positions in the narrowest type
    np.testing.assert_array_equal(narrow, i.reshape(-1))
    assert narrow.dtype == np.min_scalar_type(max(len(u) - 1, 0))


def test_unique_inverse_compact_widens_with_the_distinct_keys():
    key = np.arange(300, dtype=np.int64)[::-1]  # 300 distinct keys: positions up to 299 need 16 bits
    for size in (300, 10**6):  # the dense path and the sorting one
        _, inverse = unique_inverse(key, size=size, compact=True)
        assert inverse.dtype == np.uint16
        np.testing.assert_array_equal(inverse, np.arange(300)[::-1])


def test_position_dtype_holds_the_last_position_and_no_more():
    for n, dtype in [(0, np.uint8), (1, np.uint8), (256, np.uint8), (257, np.uint16), (65537, np.uint32)]:
        assert position_dtype(n) == dtype
        assert np.iinfo(position_dtype(n)).max >= n - 1


def test_unique_inverse_refuses_keys_outside_the_space():
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        unique_inverse(np.array([0, 1, 3]), size=3)
    assert 3 <= DENSE_FACTOR * 3  # the check above ran on the dense path


def _check(values):
    codes, uniques = pd.factorize(values, sort=True)
    got_codes, got_uniques = factorize_sorted(values)
    np.testing.assert_array_equal(got_codes, codes)
    assert got_codes.dtype == np.int64
    assert list(got_uniques) == list(np.asarray(uniques))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(-3, 4), max_size=40), st.lists(st.booleans(), min_size=40, max_size=40))
def test_factorize_sorted_is_pandas_sorted_factorize(ints, missing):
    n = len(ints)
    _check(np.asarray(ints, dtype=np.int16))
    floats = np.asarray(ints, dtype=np.float64) / 2
    floats[np.asarray(missing[:n], dtype=bool)] = np.nan
    _check(floats)
    stamps = (np.datetime64("2020-01-01", "ns") + np.asarray(ints, dtype="timedelta64[D]")).astype("datetime64[ns]")
    stamps[np.asarray(missing[:n], dtype=bool)] = np.datetime64("NaT")
    _check(stamps)
    labels = [f"s{abs(i)}" for i in ints]
    cats = sorted(set(labels) | {"zz"})  # a category no row has
    _check(pd.Series(pd.Categorical(labels, categories=cats)))
    _check(pd.Series(labels, dtype=object))


def test_factorize_sorted_of_an_unsorted_or_incomplete_categorical_is_pandas_too():
    unsorted = pd.Series(pd.Categorical(["b", "a", "b"], categories=["b", "a"]))
    _check(unsorted)
    with_missing = pd.Series(pd.Categorical(["b", None, "a"], categories=["a", "b"]))
    _check(with_missing)
