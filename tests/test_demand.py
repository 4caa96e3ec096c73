"""Demand classes: ADI/CV² against a plain-loop transcription of Croston's interval decomposition."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tycheon.data.demand import adi_cv2, classify, demand_classes


def _plain_adi_cv2(y: list[float]) -> tuple[float, float]:
    # Transcription of tsintermittent's crost.decomp convention (R): intervals = diff(c(0, which(x != 0))),
    # demand sizes = x[x != 0]; ADI = mean(intervals); CV² = (sd(sizes) / mean(sizes))^2 with R's sd
    # (n - 1 denominator), 0 for a single demand.
    positions = [i + 1 for i, v in enumerate(y) if v != 0]
    if not positions:
        return float("nan"), float("nan")
    intervals = [b - a for a, b in zip([0] + positions[:-1], positions, strict=False)]
    sizes = [v for v in y if v != 0]
    adi = sum(intervals) / len(intervals)
    mean = sum(sizes) / len(sizes)
    if len(sizes) == 1:
        return adi, 0.0
    var = sum((z - mean) ** 2 for z in sizes) / (len(sizes) - 1)
    return adi, var / mean**2


def test_hand_computed_window():
    # demands at positions 2, 5, 6 -> intervals 2, 3, 1 -> ADI 2; sizes 3, 5, 6: mean 14/3, sd^2 = 7/3,
    # CV² = (7/3) / (14/3)^2 = 3/28
    adi, cv2 = adi_cv2(np.array([[0, 3, 0, 0, 5, 6, 0, 0.0]]))
    assert adi[0] == pytest.approx(2.0)
    assert cv2[0] == pytest.approx(3 / 28)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from([0.0, 0.0, 0.0, 1.0, 2.5, 7.0, 40.0]), min_size=1, max_size=30),
        min_size=1,
        max_size=6,
    )
)
def test_vectorised_adi_cv2_equals_the_plain_loop_on_ragged_windows(rows):
    width = max(len(r) for r in rows)
    values = np.full((len(rows), width), np.nan)
    for i, r in enumerate(rows):
        values[i, width - len(r) :] = r  # ragged start: NaN on the left
    adi, cv2 = adi_cv2(values, np.isfinite(values))
    for i, r in enumerate(rows):
        want_adi, want_cv2 = _plain_adi_cv2(r)
        np.testing.assert_allclose([adi[i], cv2[i]], [want_adi, want_cv2], rtol=1e-12, equal_nan=True)


def test_cut_offs_are_inclusive_on_the_upper_side():
    adi = np.array([1.31, 1.32, 1.31, 1.32, np.nan])
    cv2 = np.array([0.48, 0.48, 0.49, 0.49, 0.1])
    assert classify(adi, cv2).tolist() == ["smooth", "intermittent", "erratic", "lumpy", "undefined"]


def test_single_demand_has_zero_cv2_and_no_demand_is_undefined():
    classes = demand_classes(np.array([[0.0, 0, 0, 4, 0], [0.0, 0, 0, 0, 0]]))
    adi, cv2 = adi_cv2(np.array([[0.0, 0, 0, 4, 0]]))
    assert (adi[0], cv2[0]) == (4.0, 0.0)
    assert classes.tolist() == ["intermittent", "undefined"]


def test_trailing_zeros_after_the_last_demand_do_not_enter_adi():
    # documented convention: a lapsed buyer keeps the ADI of its demand history
    adi, _ = adi_cv2(np.array([[5.0] + [0.0] * 23]))
    assert adi[0] == 1.0
