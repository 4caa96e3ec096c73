"""Aggregates sum their members in series order, bit for bit as ``np.add.at`` does (the plain oracle).

The aggregation in :mod:`tycheon.backtest.units` reduces each aggregate's members as one run of rows; a
float sum depends on the order of its terms, so every aggregate kind (one total, a few levels, many small
size-sorted and random groups, groups with empty members) is checked against a direct ``np.add.at`` /
``np.maximum.at`` of the same panel, exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

from tycheon.backtest.units import _aggregate, build_unit
from tycheon.data.synthetic import generate_marketplace


def _oracle(panel, codes, n_agg):  # type: ignore[no-untyped-def]
    view = panel.dense()
    values = np.zeros((n_agg, view.shape[1]))
    np.add.at(values, codes, np.where(view.observed, view.values, 0.0))
    counts = np.zeros((n_agg, view.shape[1]), dtype=np.int64)
    np.add.at(counts, codes, view.observed.astype(np.int64))
    lowest = np.iinfo(np.int64).min
    avail = np.full((n_agg, view.shape[1]), lowest, dtype=np.int64)
    np.maximum.at(avail, codes, np.where(view.observed, view.available_at.astype(np.int64), lowest))
    observed = counts > 0
    return np.where(observed, values, np.nan), observed, np.where(observed, avail, lowest).astype("datetime64[ns]")


@pytest.fixture(scope="module")
def panel():  # type: ignore[no-untyped-def]
    return generate_marketplace(n_entities=700, n_periods=40, seed=5)


@pytest.mark.parametrize("n_agg", [1, 3, 40, 300, 699])  # one run per aggregate, or the k-th members at once
def test_aggregates_equal_the_add_at_oracle_bit_for_bit(panel, n_agg):  # type: ignore[no-untyped-def]
    codes = np.random.default_rng(n_agg).integers(0, n_agg, size=panel.n_series)
    got = _aggregate(panel, "groups", codes, np.array([f"a{i}" for i in range(n_agg)]), 20)
    values, observed, avail = _oracle(panel, codes, n_agg)
    np.testing.assert_array_equal(got.values, values)
    np.testing.assert_array_equal(got.observed, observed)
    np.testing.assert_array_equal(got.available_at, avail)


@pytest.mark.parametrize("unit", ["total", "level:segment", "groups:7", "groups:300", "groups_random:40"])
def test_every_aggregate_unit_sums_its_members(panel, unit):  # type: ignore[no-untyped-def]
    data = build_unit(panel, unit, first_fit_end=20, seed=2)
    view = panel.dense()
    total = np.where(view.observed, view.values, 0.0).sum(axis=0)
    np.testing.assert_allclose(np.nansum(data.values, axis=0), total, rtol=1e-12)


def test_aggregates_without_members_are_unobserved(panel):  # type: ignore[no-untyped-def]
    codes = np.where(np.arange(panel.n_series) % 2 == 0, 0, 3)  # aggregates 1 and 2 get no member
    got = _aggregate(panel, "groups:4", codes, np.array(["a", "b", "c", "d"]), 20)
    values, observed, avail = _oracle(panel, codes, 4)
    assert not got.observed[1:3].any()
    np.testing.assert_array_equal(got.values, values)
    np.testing.assert_array_equal(got.available_at, avail)
