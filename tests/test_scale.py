"""Seasonal-naive scales against a plain loop, including the lag-1 fallback and ragged windows."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tycheon.metrics.scale import seasonal_naive_scales


def _plain(y: list[float], m: int) -> tuple[float, float, int]:
    lag = m if len(y) > m else 1
    diffs = [y[t] - y[t - lag] for t in range(lag, len(y))]
    if not diffs:
        return math.nan, math.nan, lag
    mae = sum(abs(d) for d in diffs) / len(diffs)
    rmse = math.sqrt(sum(d * d for d in diffs) / len(diffs))
    return mae, rmse, lag


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(
        st.lists(st.floats(min_value=-1e3, max_value=1e3, allow_nan=False), min_size=1, max_size=20),
        min_size=1,
        max_size=5,
    ),
    m=st.integers(min_value=1, max_value=6),
)
def test_scales_equal_the_plain_loop(rows, m):
    width = max(len(r) for r in rows)
    values = np.full((len(rows), width), np.nan)
    for i, r in enumerate(rows):
        values[i, width - len(r) :] = r
    mae, rmse, lag = seasonal_naive_scales(values, np.isfinite(values), m)
    for i, r in enumerate(rows):
        want = _plain(r, m)
        np.testing.assert_allclose([mae[i], rmse[i]], want[:2], rtol=1e-9, atol=1e-9, equal_nan=True)
        assert lag[i] == want[2]


def test_short_window_falls_back_to_the_naive_lag():
    # 3 observations, season 4: lag 1, differences 2 and -1 -> MAE 1.5, RMSE sqrt(2.5)
    mae, rmse, lag = seasonal_naive_scales(np.array([[1.0, 3.0, 2.0]]), np.ones((1, 3), bool), 4)
    assert (mae[0], lag[0]) == (1.5, 1)
    assert rmse[0] == math.sqrt(2.5)
