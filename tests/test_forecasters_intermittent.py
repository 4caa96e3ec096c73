"""Intermittent-demand roster members against statsforecast (pinned values and a live comparison)."""

from __future__ import annotations

import numpy as np
import pytest
from statsforecast.models import ADIDA, IMAPA, TSB, CrostonClassic, CrostonSBA

from tests._forecasters_support import make_history, ragged_panel
from tycheon.forecasters import create

SERIES = {
    "a": [0, 0, 3, 0, 0, 0, 5, 0, 2, 0, 0, 0, 0, 7, 0, 0, 1, 0, 0, 4, 0, 0, 0, 6],
    "b": [1, 0, 0, 0, 0, 0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0],
    "c": [4, 5, 0, 6, 3, 0, 0, 8, 2, 1, 0, 0, 5, 7],
}

# Pinned from statsforecast 2.1.1: Model().forecast(np.array(SERIES[k], float), 1)["mean"][0]
# with CrostonClassic(), CrostonSBA(), TSB(alpha_d=0.2, alpha_p=0.2), ADIDA(), IMAPA().
PINNED = {
    "croston": {"a": 1.1027553076509642, "b": 0.8847969782813975, "c": 3.1946816029533456},
    "croston_sba": {"a": 1.047617542268416, "b": 0.8405571293673275, "c": 3.034947522805678},
    "tsb": {"a": 1.4215303844973461, "b": 0.607362207802273, "c": 3.100403687470652},
    "adida": {"a": 1.1331779000004174, "b": 0.9865714285719339, "c": 3.2908428571052006},
    "imapa": {"a": 1.2399140210179829, "b": 0.6628300355723459, "c": 3.266548983718317},
}
STATSFORECAST = {
    "croston": CrostonClassic,
    "croston_sba": CrostonSBA,
    "tsb": lambda: TSB(alpha_d=0.2, alpha_p=0.2),
    "adida": ADIDA,
    "imapa": IMAPA,
}
IDS = sorted(PINNED)


def _ragged(series: dict[str, list[float]]) -> np.ndarray:
    t = max(len(v) for v in series.values())
    out = np.full((len(series), t), np.nan)
    for i, v in enumerate(series.values()):
        out[i, t - len(v) :] = v
    return out


@pytest.mark.parametrize("model_id", IDS)
def test_intermittent_point_matches_pinned_statsforecast_values(model_id):
    forecast = create(model_id).predict(make_history(_ragged(SERIES), season=12), horizon=3)
    expected = np.array([PINNED[model_id][k] for k in SERIES])
    np.testing.assert_allclose(forecast.point, np.repeat(expected[:, None], 3, axis=1), rtol=0, atol=1e-9)


@pytest.mark.parametrize("model_id", IDS)
def test_intermittent_point_matches_live_statsforecast_on_ragged_panel(model_id):
    rng = np.random.default_rng(7)
    y = ragged_panel(rng, n_series=40, n_periods=36, min_len=6, intermittent=True)
    y[0, -10:] = 0.0  # a series ending in a long run of zeros
    forecast = create(model_id).predict(make_history(y), horizon=2)
    ref = STATSFORECAST[model_id]()
    expected = np.array([ref.forecast(row[np.isfinite(row)], 2)["mean"] for row in y])
    np.testing.assert_allclose(forecast.point, expected, rtol=0, atol=1e-9)


@pytest.mark.parametrize("model_id", IDS)
def test_when_series_has_no_demand_then_forecast_is_zero(model_id):
    y = np.array([[np.nan, 0, 0, 0, 0, 0, 0], [1, 0, 2, 0, 0, 3, 1]], dtype=float)
    forecast = create(model_id).predict(make_history(y), horizon=4)
    np.testing.assert_array_equal(forecast.point[0], np.zeros(4))
    assert (forecast.point[1] > 0).all()


@pytest.mark.parametrize("model_id", IDS)
def test_ragged_start_uses_only_the_observed_part(model_id):
    y = np.array(SERIES["c"], dtype=float)
    padded = np.concatenate([[np.nan] * 9, y])
    both = np.vstack([padded, np.concatenate([np.zeros(9), y])])
    point = create(model_id).predict(make_history(both), horizon=1).point
    alone = create(model_id).predict(make_history(y[None, :]), horizon=1).point
    np.testing.assert_array_equal(point[0], alone[0])
    assert point[1, 0] != point[0, 0]  # the leading zeros would change the estimate if they were read


def test_sba_is_croston_times_095():
    y = _ragged(SERIES)
    croston = create("croston").predict(make_history(y), horizon=1).point
    sba = create("croston_sba").predict(make_history(y), horizon=1).point
    np.testing.assert_allclose(sba, 0.95 * croston, rtol=1e-15)


def test_tsb_weights_change_the_forecast_and_are_validated():
    y = _ragged(SERIES)
    base = create("tsb").predict(make_history(y), horizon=1).point
    other = create("tsb", alpha_d=0.5, alpha_p=0.05).predict(make_history(y), horizon=1).point
    expected = [TSB(alpha_d=0.5, alpha_p=0.05).forecast(np.array(v, float), 1)["mean"][0] for v in SERIES.values()]
    np.testing.assert_allclose(other[:, 0], expected, rtol=0, atol=1e-9)
    assert not np.allclose(base, other)
    with pytest.raises(ValueError, match="alpha_p must be a number in"):
        create("tsb", alpha_p=0.0)


def _two_pass_croston(y: np.ndarray) -> float:
    """Croston as first written: the size and interval arrays, then SES(0.1) of each (plain Python)."""
    from tycheon.forecasters.kernels.smoothing import _demand_and_intervals, ses_one

    demand, intervals = _demand_and_intervals(y)
    if demand.size == 0:
        return float(y[-1])
    size, gap = ses_one(demand, 0.1), ses_one(intervals, 0.1)
    return float(size / gap if gap != 0.0 else size)


def _two_pass_tsb(y: np.ndarray, alpha_d: float, alpha_p: float) -> float:
    from tycheon.forecasters.kernels.smoothing import _demand_and_intervals, ses_one

    demand, _ = _demand_and_intervals(y)
    if demand.size == 0:
        return 0.0
    return float(ses_one((y != 0).astype(np.float64), alpha_p) * ses_one(demand, alpha_d))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_pass_croston_and_tsb_kernels_equal_the_two_pass_definition_bit_for_bit(seed):
    """The kernels smooth as they scan (no size, interval or occurrence arrays); each SES step is the
    array version's, so the levels are identical, on series with one demand, negative values, a single
    observation and long zero runs."""
    from tycheon.forecasters.kernels.smoothing import croston_level, tsb_level

    rng = np.random.default_rng(seed)
    n, t = 300, 40
    values = np.where(rng.random((n, t)) < 0.6, 0.0, rng.gamma(2.0, 3.0, (n, t)))
    values[rng.random((n, t)) < 0.05] *= -1.0  # returns: non-zero but not a positive size
    starts = rng.integers(0, t, n)
    starts[:3] = t - 1  # one observation
    values[3, :] = 0.0
    values[3, -5] = 4.0  # a single demand
    for i, s in enumerate(starts):
        values[i, :s] = np.nan
    got_c = croston_level(values, starts)
    got_t = tsb_level(values, starts, 0.2, 0.35)
    for i, s in enumerate(starts):
        y = np.ascontiguousarray(values[i, s:])
        assert got_c[i] == _two_pass_croston(y) or (np.isnan(got_c[i]) and np.isnan(_two_pass_croston(y)))
        assert got_t[i] == _two_pass_tsb(y, 0.2, 0.35)
