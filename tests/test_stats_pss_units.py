"""pss_units: the vectorised PSS and winner swap over many units, against a plain loop of pss() and
winner_swap() on each unit's defined coordinates and present candidates."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tycheon.errors import StatisticInputError
from tycheon.stats.ranking import pss, pss_units, winner_swap


def _loop(p, q):
    out_pss, out_swap = [], []
    for u in range(p.shape[0]):
        keep_m = ~np.isnan(p[u]).any(axis=0)  # candidates present at every coordinate of this unit
        a, b = p[u][:, keep_m], q[u][:, keep_m]
        keep_c = (np.ptp(a, axis=1) > 0) & (np.ptp(b, axis=1) > 0)
        if keep_m.sum() < 2 or not keep_c.any():
            out_pss.append(np.nan)
            out_swap.append(False)
            continue
        out_pss.append(pss(a[keep_c], b[keep_c]))
        out_swap.append(winner_swap(a[keep_c], b[keep_c]))
    return np.array(out_pss), np.array(out_swap)


def test_matches_a_loop_of_pss_and_winner_swap_with_ties_and_absent_candidates():
    rng = np.random.default_rng(0)
    p = rng.integers(0, 4, size=(300, 5, 6)).astype(float)  # small integers: many ties
    q = rng.integers(0, 4, size=(300, 5, 6)).astype(float)
    p[:20, :, 2] = q[:20, :, 2] = np.nan  # candidate 2 absent on 20 units
    p[20:30, 1, :] = 1.0  # coordinate 1 fully tied in p on 10 units
    p[30:35] = q[30:35] = 2.0  # units with no defined coordinate
    got = pss_units(p, q, chunk=64)
    want_pss, want_swap = _loop(p, q)
    np.testing.assert_allclose(got.pss, want_pss, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(got.winner_swap, want_swap)
    assert np.isnan(got.pss[30:35]).all() and (got.n_coords[30:35] == 0).all()
    assert (got.n_coords_dropped[20:30] >= 1).all()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(2, 7), st.integers(1, 6))
def test_identical_losses_give_zero_and_reversed_give_two_on_untied_units(seed, m, h):
    rng = np.random.default_rng(seed)
    p = rng.normal(size=(10, h, m))
    same = pss_units(p, p.copy())
    np.testing.assert_allclose(same.pss, 0.0, atol=1e-12)
    assert not same.winner_swap.any()
    rev = pss_units(p, -p)
    np.testing.assert_allclose(rev.pss, 2.0, atol=1e-12)


def test_absent_candidates_must_be_absent_in_both_configurations():
    p = np.ones((2, 2, 3))
    q = p.copy()
    q[0, 0, 0] = np.nan
    with pytest.raises(StatisticInputError, match="same cells"):
        pss_units(p, q)
