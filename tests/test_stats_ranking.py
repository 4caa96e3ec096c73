"""Ranking comparison: tau-b and Spearman vs scipy, PSS/winner swap/resolution vs the audit's
definitions and worked values, TOST vs statsmodels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.weightstats import DescrStatsW

from tycheon.errors import InputError
from tycheon.stats import kendall_tau_b, pss, pss_resolution, spearman, tost_equivalence, winner_swap


def test_when_ranks_have_ties_then_tau_b_and_spearman_match_scipy():
    rng = np.random.default_rng(0)
    for _ in range(20):
        x = rng.integers(0, 4, size=9).astype(float)
        y = rng.integers(0, 4, size=9).astype(float)
        if np.ptp(x) == 0 or np.ptp(y) == 0:
            continue
        assert kendall_tau_b(x, y) == pytest.approx(stats.kendalltau(x, y, variant="b").statistic, abs=1e-12)
        assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)


def test_when_rankings_are_identical_reversed_or_one_pair_apart_then_pss_takes_the_audit_values():
    m, h = 3, 7
    losses = np.tile([1.0, 2.0, 3.0], (h, 1))
    assert pss(losses, losses) == 0.0
    assert pss(losses, losses[:, ::-1]) == pytest.approx(2.0)
    swapped = losses.copy()
    swapped[0] = [2.0, 1.0, 3.0]  # one pair inversion at one coordinate
    assert pss(losses, swapped) == pytest.approx(pss_resolution(m, h))
    assert pss_resolution(3, 7) == pytest.approx(2 / 21)  # audit, section 4: 2/21 ~ 0.095
    assert pss_resolution(9, 7) == pytest.approx(0.0079, abs=5e-5)


def test_when_winners_differ_on_a_weighted_majority_then_winner_swap_is_true():
    p = np.array([[1.0, 2.0, 3.0]] * 3)
    q = p.copy()
    q[:2] = [3.0, 1.0, 2.0]
    assert winner_swap(p, q)
    assert not winner_swap(p, q, weights=[0.2, 0.2, 0.6])
    assert not winner_swap(p, p)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**16))
def test_property_pss_and_winner_swap_are_invariant_to_permuting_candidates(seed):
    rng = np.random.default_rng(seed)
    p, q = rng.normal(size=(5, 4)), rng.normal(size=(5, 4))
    perm = rng.permutation(4)
    assert pss(p, q) == pytest.approx(pss(p[:, perm], q[:, perm]), abs=1e-12)
    assert winner_swap(p, q) == winner_swap(p[:, perm], q[:, perm])
    assert 0.0 <= pss(p, q) <= 2.0
    x, y = rng.normal(size=6), rng.normal(size=6)
    assert kendall_tau_b(x, y) == pytest.approx(kendall_tau_b(y, x))


def test_when_tost_is_run_then_it_matches_statsmodels_ttost_mean():
    rng = np.random.default_rng(1)
    for loc in (0.02, 0.3):
        x = rng.normal(loc, 0.1, size=40)
        res = tost_equivalence(x, delta=0.1)
        p_ref, lower, upper = DescrStatsW(x).ttost_mean(-0.1, 0.1)
        assert res.p_value == pytest.approx(p_ref, rel=1e-10)
        assert res.p_lower == pytest.approx(lower[1]) and res.p_upper == pytest.approx(upper[1])
    assert tost_equivalence(rng.normal(0.0, 0.05, 60), delta=0.1).equivalent
    assert not tost_equivalence(rng.normal(0.8, 0.3, 60), delta=0.1, low=0.0).equivalent


def test_when_ranking_inputs_are_bad_then_errors_say_what():
    with pytest.raises(InputError, match="all tied"):
        pss(np.ones((2, 3)), np.arange(6.0).reshape(2, 3))
    with pytest.raises(InputError, match="weights"):
        pss(np.eye(3), np.eye(3), weights=[1.0, 1.0, 1.0])
    with pytest.raises(InputError, match="shapes"):
        kendall_tau_b([1, 2, 3], [1, 2])


def test_when_tost_values_are_constant_then_p_is_the_zero_se_limit_of_each_t_test():
    inside = tost_equivalence(np.full(5, 0.05), delta=0.1)
    assert (inside.p_lower, inside.p_upper, inside.equivalent) == (0.0, 0.0, True)
    on_bound = tost_equivalence(np.full(5, 0.1), delta=0.1)
    assert (on_bound.p_upper, on_bound.equivalent) == (0.5, False)
    # the limit: a tiny spread around the bound gives the same one-sided p
    near = tost_equivalence(0.1 + 1e-12 * np.array([-1.0, 1.0, -1.0, 1.0]), delta=0.1)
    assert near.p_upper == pytest.approx(0.5, abs=1e-6)
    outside = tost_equivalence(np.full(5, 0.3), delta=0.1)
    assert (outside.p_upper, outside.p_value, outside.equivalent) == (1.0, 1.0, False)


def test_spearman_test_matches_scipy_spearmanr():
    # oracle: scipy.stats.spearmanr (t approximation with n - 2 degrees of freedom)
    from scipy.stats import spearmanr

    from tycheon.stats.ranking import spearman_test

    x = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
    y = [2, 1, 4, 3, 7, 5, 6, 12, 9, 11, 8, 10]
    rho, p = spearman_test(x, y)
    ref = spearmanr(x, y)
    assert rho == pytest.approx(ref.statistic, rel=1e-12)
    assert p == pytest.approx(ref.pvalue, rel=1e-9)
    assert math.isnan(spearman_test([1, 2], [2, 1])[1])  # no degrees of freedom


def test_rank_by_mean_gives_competition_ranks_with_ties_and_nan_last():
    from tycheon.stats.ranking import rank_by_mean

    ranks = rank_by_mean({"b": 1.0, "a": 1.0, "c": 0.5, "d": float("nan"), "e": 2.0, "f": float("nan")})
    # scipy.stats.rankdata(method="min") on the finite means [1, 1, 0.5, 2] gives [2, 2, 1, 4]
    assert ranks == {"c": 1, "a": 2, "b": 2, "e": 4, "d": 5, "f": 5}
