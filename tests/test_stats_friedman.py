"""Friedman/Nemenyi: pinned against scipy.stats.friedmanchisquare and Demšar (2006) Table 5."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from tycheon.errors import InputError
from tycheon.stats import conservative_cd, critical_difference, friedman_nemenyi, nemenyi_q
from tycheon.stats.friedman import iman_davenport

# Demšar, J. (2006). JMLR 7, Table 5(a): two-tailed Nemenyi critical values q_alpha.
DEMSAR_Q = {
    0.05: {2: 1.960, 3: 2.343, 4: 2.569, 5: 2.728, 6: 2.850, 7: 2.949, 8: 3.031, 9: 3.102, 10: 3.164},
    0.10: {2: 1.645, 3: 2.052, 4: 2.291, 5: 2.459, 6: 2.589, 7: 2.693, 8: 2.780, 9: 2.855, 10: 2.920},
}


@pytest.mark.parametrize("alpha", [0.05, 0.10])
def test_when_q_alpha_is_computed_then_it_matches_demsar_table_5(alpha):
    for k, q in DEMSAR_Q[alpha].items():
        assert nemenyi_q(k, alpha) == pytest.approx(q, abs=1e-3)  # the table keeps 3 decimals


def test_when_scores_have_ties_then_friedman_matches_scipy():
    rng = np.random.default_rng(0)
    scores = np.round(rng.normal(size=(40, 5)) + np.arange(5) * 0.3, 1)  # rounding creates ties
    res = friedman_nemenyi(scores)
    ref = stats.friedmanchisquare(*scores.T)
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-10)
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-8)
    ranks = stats.rankdata(scores, axis=1)
    np.testing.assert_allclose(res.mean_ranks.to_numpy(), ranks.mean(axis=0))
    n, k = scores.shape
    assert res.iman_davenport == pytest.approx((n - 1) * ref.statistic / (n * (k - 1) - ref.statistic))
    assert res.iman_davenport_p == pytest.approx(stats.f.sf(res.iman_davenport, k - 1, (k - 1) * (n - 1)))
    assert res.critical_difference == pytest.approx(DEMSAR_Q[0.05][5] * np.sqrt(5 * 6 / (6 * 40)), abs=1e-3)


def test_when_demsar_example_chi2_is_given_then_iman_davenport_reproduces_it():
    # Demšar (2006), section 3.2.2 example: N = 14 data sets, k = 4, chi2_F = 9.28 -> F_F = 3.69, and
    # CD = 2.569 * sqrt(4 * 5 / (6 * 14)) = 1.25 at alpha = 0.05.
    f_f, p = iman_davenport(9.28, 14, 4)
    assert f_f == pytest.approx(3.69, abs=5e-3)
    assert p == pytest.approx(stats.f.sf(f_f, 3, 39))  # F(k-1, (k-1)(N-1)) = F(3, 39)
    assert critical_difference(4, 14) == pytest.approx(1.25, abs=5e-3)


def test_when_blocks_are_incomplete_then_they_are_dropped_and_counted():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(rng.normal(size=(30, 3)), columns=["naive", "ets", "theta"])
    frame.iloc[[2, 5, 9], 1] = np.nan
    res = friedman_nemenyi(frame)
    assert res.n_dropped == 3 and res.n_blocks == 27
    full = friedman_nemenyi(frame.dropna())
    assert res.statistic == pytest.approx(full.statistic)
    assert list(res.mean_ranks.index) == ["naive", "ets", "theta"]
    with pytest.raises(InputError, match="infinite"):
        friedman_nemenyi(frame.fillna(np.inf))
    with pytest.raises(InputError, match="two methods"):
        friedman_nemenyi(np.ones((5, 1)))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**16), perm_seed=st.integers(0, 2**16))
def test_property_friedman_is_invariant_to_permuting_methods(seed, perm_seed):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(np.round(rng.normal(size=(12, 4)), 1), columns=list("abcd"))
    perm = np.random.default_rng(perm_seed).permutation(4)
    a, b = friedman_nemenyi(frame), friedman_nemenyi(frame.iloc[:, perm])
    assert a.statistic == pytest.approx(b.statistic, rel=1e-10, abs=1e-12)
    pd.testing.assert_series_equal(a.mean_ranks, b.mean_ranks.loc[a.mean_ranks.index])


def test_when_blocks_share_series_then_conservative_cd_uses_one_seeded_origin_per_series():
    rng = np.random.default_rng(2)
    n_series, n_origins = 40, 6
    frame = pd.DataFrame(rng.normal(size=(n_series * n_origins, 4)) + [0, 0.2, 0.4, 0.6], columns=list("abcd"))
    series = np.repeat(np.arange(n_series), n_origins)
    frame.iloc[0, 0] = np.nan
    full = friedman_nemenyi(frame)
    cons = conservative_cd(frame, series=series, seed=123)
    assert cons.n_blocks == n_series and cons.n_dropped == 1
    assert cons.critical_difference == pytest.approx(full.critical_difference * np.sqrt(full.n_blocks / n_series))
    again = conservative_cd(frame, series=series, seed=123)
    assert again.statistic == cons.statistic
    other = conservative_cd(frame, series=series, seed=124)
    assert other.statistic != cons.statistic  # a different random origin per series
