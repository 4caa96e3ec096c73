"""Protocols: origin placement, embargo, overlap, static split vs rolling, and bad input."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tycheon.backtest.protocol import (
    ProtocolError,
    RollingOrigin,
    StaticSplit,
    calibration_plan,
    same_targets,
)
from tycheon.testing.toys import toy_panel

PANEL = toy_panel(n_series=4, n_periods=36, seed=1, ragged=False, levels=False)  # columns 0..35


def test_when_no_placement_is_given_then_origins_are_the_latest_with_a_full_horizon():
    origins = RollingOrigin(horizon=6, stride=6, n_origins=3).origins(PANEL)
    assert [o.index for o in origins] == [18, 24, 30]
    assert origins[-1].index + 6 == 36  # the last target is the last column
    assert all(o.timestamp == PANEL.periods[o.index] for o in origins)
    assert list(origins[0].targets) == list(range(18, 24))


def test_when_neither_count_nor_first_is_given_then_every_origin_with_history_is_used():
    origins = RollingOrigin(horizon=6, stride=6).origins(PANEL, min_history=13)
    assert [o.index for o in origins] == [18, 24, 30]  # 12 would leave only 12 periods of history


def test_when_first_origin_is_a_timestamp_or_an_index_then_origins_agree():
    by_index = RollingOrigin(horizon=3, stride=4, first_origin=20).origins(PANEL)
    by_stamp = RollingOrigin(horizon=3, stride=4, first_origin=PANEL.periods[20]).origins(PANEL)
    assert [o.index for o in by_index] == [o.index for o in by_stamp] == [20, 24, 28, 32]


def test_when_embargo_is_set_then_training_ends_that_many_periods_before_each_origin():
    rolling = RollingOrigin(horizon=3, stride=3, n_origins=2, embargo=2).origins(PANEL)
    assert [(o.index, o.fit_end) for o in rolling] == [(30, 28), (33, 31)]
    assert rolling[0].fit_time == PANEL.periods[28]
    static = StaticSplit(horizon=3, boundary=24, stride=3, embargo=2).origins(PANEL)
    assert {o.fit_end for o in static} == {22}
    assert [o.index for o in static] == [24, 27, 30, 33]


def test_when_static_split_uses_the_rolling_origins_then_the_scored_targets_are_identical():
    rolling = RollingOrigin(horizon=3, stride=3, first_origin=24)
    static = StaticSplit(horizon=3, boundary=24, stride=3)
    assert same_targets(rolling, static, PANEL)
    assert not same_targets(RollingOrigin(horizon=3, stride=4, first_origin=24), static, PANEL)
    pairs = static.scored_pairs(PANEL)
    assert (PANEL.periods[24], 1) in pairs and (PANEL.periods[26], 3) in pairs and len(pairs) == 12


def test_when_origins_overlap_then_benchmark_mode_rejects():
    with pytest.raises(ProtocolError, match=r"overlapping origins: stride=3 < horizon=6.*mode='analysis'"):
        RollingOrigin(horizon=6, stride=3)
    with pytest.raises(ProtocolError, match="overlapping origins"):
        StaticSplit(horizon=6, boundary=12, stride=2)


@pytest.mark.parametrize(("horizon", "stride"), [(6, 3), (6, 1), (6, 6), (6, 4), (1, 1), (3, 9)])
def test_when_analysis_mode_allows_overlap_then_the_lag_is_ceil_h_over_stride_minus_one(horizon, stride):
    protocol = RollingOrigin(horizon=horizon, stride=stride, mode="analysis")
    assert protocol.overlap_lag == math.ceil(horizon / stride) - 1
    assert protocol.describe()["overlap_lag"] == protocol.overlap_lag


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"horizon": 0, "stride": 1}, "horizon must be a positive integer"),
        ({"horizon": -2, "stride": 1}, "horizon must be a positive integer"),
        ({"horizon": 1, "stride": 0}, "stride must be a positive integer"),
        ({"horizon": 1, "stride": 1, "embargo": -1}, r"embargo must be an integer >= 0"),
        ({"horizon": 1, "stride": 1, "n_origins": 0}, "n_origins must be a positive integer"),
        ({"horizon": 1, "stride": 1, "mode": "casual"}, "mode must be one of"),
        ({"horizon": 1, "stride": 1, "n_calibration_origins": -1}, "n_calibration_origins must be an integer"),
        ({"horizon": 1, "stride": 1, "n_calibration_origins": 2.5}, "n_calibration_origins must be an integer"),
    ],
)
def test_when_protocol_arguments_are_invalid_then_a_protocol_error_names_them(kwargs, message):
    with pytest.raises(ProtocolError, match=message):
        RollingOrigin(**kwargs)


def test_when_the_horizon_exceeds_the_panel_then_no_origin_has_a_full_horizon():
    with pytest.raises(ProtocolError, match="no origin leaves a full horizon of 40 actuals"):
        RollingOrigin(horizon=40, stride=40).origins(PANEL)
    with pytest.raises(ProtocolError, match="leaves no full horizon"):
        RollingOrigin(horizon=6, stride=6, first_origin=33).origins(PANEL)


def test_when_no_origin_has_min_history_then_too_little_history_is_reported():
    with pytest.raises(ProtocolError, match="too little history for any origin"):
        RollingOrigin(horizon=6, stride=6).origins(PANEL, min_history=35)
    with pytest.raises(ProtocolError, match="too little history for any origin"):
        StaticSplit(horizon=3, boundary=2, stride=3, embargo=2).origins(PANEL)
    with pytest.raises(ProtocolError, match="too little history"):
        RollingOrigin(horizon=3, stride=3, first_origin=1, embargo=1).origins(PANEL)


def test_when_more_origins_are_asked_than_fit_then_the_error_says_how_many_fit():
    with pytest.raises(ProtocolError, match=r"only 2 origin\(s\).*n_origins=5"):
        RollingOrigin(horizon=6, stride=6, first_origin=24, n_origins=5).origins(PANEL)


def test_when_an_origin_is_off_the_grid_then_it_is_refused():
    with pytest.raises(ProtocolError, match="not a period start"):
        RollingOrigin(horizon=3, stride=3, first_origin=pd.Timestamp("2021-03-15")).origins(PANEL)
    with pytest.raises(ProtocolError, match="outside the panel's columns"):
        StaticSplit(horizon=3, boundary=99, stride=3).origins(PANEL)


@settings(max_examples=60, deadline=None)
@given(horizon=st.integers(1, 8), extra=st.integers(0, 6), n=st.integers(1, 6), min_history=st.integers(1, 12))
def test_origins_are_spaced_by_stride_leave_a_full_horizon_and_enough_history(horizon, extra, n, min_history):
    stride = horizon + extra
    protocol = RollingOrigin(horizon=horizon, stride=stride)
    try:
        origins = protocol.origins(PANEL, min_history=min_history)
    except ProtocolError:
        assert 36 - horizon < min_history  # only refused when truly no origin fits
        return
    idx = [o.index for o in origins]
    assert idx[-1] == 36 - horizon
    assert all(b - a == stride for a, b in zip(idx, idx[1:], strict=False))
    assert idx[0] >= min_history and idx[0] - stride < min_history
    pairs = protocol.scored_pairs(PANEL, min_history=min_history)
    assert len(pairs) == len(origins) * horizon  # a (target, step) pair names exactly one origin


# ---------------------------------------------------------------- calibration origins


def test_calibration_origins_end_their_horizon_right_before_the_first_scored_origin_at_stride_one():
    protocol = RollingOrigin(horizon=6, stride=6, n_origins=3, n_calibration_origins=4)
    assert [o.index for o in protocol.origins(PANEL)] == [18, 24, 30]  # scored origins do not move
    plan = calibration_plan(protocol, PANEL)
    assert plan.used == (9, 10, 11, 12) and plan.skipped == ()  # c_j = 18 - 6 - j
    origins = plan.protocol.origins(PANEL)
    assert [o.index for o in origins] == [9, 10, 11, 12]
    assert max(o.index + o.horizon for o in origins) == 18  # every target lies before the first scored origin
    assert plan.protocol.mode == "analysis" and plan.protocol.n_calibration_origins == 0


def test_calibration_origins_with_too_little_history_are_skipped_and_counted():
    protocol = RollingOrigin(horizon=6, stride=6, n_origins=3, n_calibration_origins=15, embargo=1)
    plan = calibration_plan(protocol, PANEL, min_history=1, calibration_min_history=5)
    assert plan.used == tuple(range(5, 13))  # 12 down to 5 have 5 periods of history
    assert plan.skipped == tuple(range(-2, 5))  # 7 skipped, two of them before the grid
    assert [o.fit_end for o in plan.protocol.origins(PANEL, min_history=5)] == [c - 1 for c in plan.used]
    none = calibration_plan(
        RollingOrigin(horizon=6, stride=6, n_origins=3, n_calibration_origins=2), PANEL, min_history=18
    )  # o_1 = 18: c = 12, 11 lack 18 periods
    assert none.protocol is None and none.skipped == (11, 12)


def test_without_calibration_origins_the_plan_is_empty_and_describe_records_the_setting():
    protocol = RollingOrigin(horizon=6, stride=6, n_origins=3)
    assert calibration_plan(protocol, PANEL).protocol is None
    assert protocol.describe()["n_calibration_origins"] == 0
    static = StaticSplit(horizon=3, boundary=24, stride=3, n_calibration_origins=5)
    assert static.describe()["n_calibration_origins"] == 5


def test_the_calibration_protocol_is_a_copy_of_the_scored_one_so_a_subclass_keeps_its_rules():
    from tests._forecasters_support import NoEmbargoProtocol

    protocol = NoEmbargoProtocol(horizon=3, stride=3, n_origins=2, embargo=2, n_calibration_origins=3)
    plan = calibration_plan(protocol, PANEL)
    assert type(plan.protocol) is NoEmbargoProtocol and plan.protocol.embargo == 2
    assert [o.fit_end for o in plan.protocol.origins(PANEL)] == [o.index for o in plan.protocol.origins(PANEL)]
