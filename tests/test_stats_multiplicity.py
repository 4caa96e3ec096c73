"""Benjamini–Hochberg and Holm pinned against statsmodels.stats.multitest.multipletests."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from statsmodels.stats.multitest import multipletests

from tycheon.errors import InputError
from tycheon.stats import benjamini_hochberg, holm


def test_when_p_values_are_adjusted_then_they_match_statsmodels():
    p = np.array([0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205, 0.212, 0.216, 0.222, 0.251, 0.269])
    np.testing.assert_allclose(benjamini_hochberg(p), multipletests(p, method="fdr_bh")[1], rtol=1e-12)
    np.testing.assert_allclose(holm(p), multipletests(p, method="holm")[1], rtol=1e-12)


@pytest.mark.slow
@settings(max_examples=15, deadline=None)  # statsmodels holm costs ~0.13 s a call
@given(p=arrays(np.float64, st.integers(1, 30), elements=st.floats(0, 1)))
def test_property_adjustments_match_statsmodels_on_any_input(p):
    np.testing.assert_allclose(benjamini_hochberg(p), multipletests(p, method="fdr_bh")[1], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(holm(p), multipletests(p, method="holm")[1], rtol=1e-12, atol=1e-15)
    perm = np.random.default_rng(p.size).permutation(p.size)
    np.testing.assert_allclose(benjamini_hochberg(p[perm]), benjamini_hochberg(p)[perm])


def test_when_p_values_are_invalid_then_errors_say_what():
    with pytest.raises(InputError, match=r"\[0, 1\]"):
        holm([0.5, 1.2])
    with pytest.raises(InputError, match="non-finite"):
        benjamini_hochberg([0.5, np.nan])
