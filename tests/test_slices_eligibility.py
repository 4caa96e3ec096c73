"""Eligibility at an origin (tycheon.backtest.slices.eligibility): the compiled one-pass kernel against the
array formulation it replaced, on ragged panels with gaps, re-entries, late and missing publication."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tycheon.backtest.slices import ABSTENTION_REASONS, UnitData, eligibility, run_start


def _array_eligibility(data: UnitData, *, index: int, origin: pd.Timestamp, horizon: int, min_history: int):
    """The rules as whole-array operations (the engine's implementation before the kernel)."""
    stamp = pd.Timestamp(origin).to_datetime64().astype("datetime64[ns]")
    since = run_start(data.observed, index)
    current = np.arange(index) >= since[:, None]
    pub = data.observed[:, :index] & (data.available_at[:, :index] <= stamp) & current
    n_obs = pub.sum(axis=1).astype(np.int64)
    too_short = n_obs < max(int(min_history), 1)
    in_run = data.observed[:, :index] & current
    unpublished = (in_run & ~pub).any(axis=1) & ~too_short
    rest = ~too_short & ~unpublished
    not_at_origin = ~pub[:, index - 1] & rest
    rest &= ~not_at_origin
    no_target = ~data.observed[:, index : index + horizon].any(axis=1) & rest
    counts = {
        "too_short": int(too_short.sum()),
        "unpublished": int(unpublished.sum()),
        "not_observed_at_origin": int(not_at_origin.sum()),
        "no_target": int(no_target.sum()),
    }
    return rest & ~no_target, counts, n_obs


def _unit(seed: int, n: int = 400, t: int = 30) -> UnitData:
    rng = np.random.default_rng(seed)
    periods = pd.date_range("2020-01-01", periods=t, freq="MS")
    entry = rng.integers(0, t, n)
    exit_ = np.minimum(t, entry + rng.integers(1, t + 1, n))
    cols = np.arange(t)
    observed = (cols >= entry[:, None]) & (cols < exit_[:, None])
    observed &= rng.random((n, t)) > 0.05  # gaps: re-entries start a new run
    lag = rng.choice([0, 0, 0, 1, 2, 40], size=(n, t))  # days after the period ends; some very late
    available = (periods + pd.offsets.MonthEnd(0)).to_numpy()[None, :] + lag.astype("timedelta64[D]")
    available = available.astype("datetime64[ns]")
    available[rng.random((n, t)) < 0.02] = np.datetime64("NaT")  # never published
    return UnitData(
        unit="series",
        values=np.where(observed, rng.gamma(2.0, 2.0, (n, t)), np.nan),
        observed=observed,
        available_at=available,
        series_ids=np.asarray([f"s{i}" for i in range(n)], dtype=object),
        periods=periods,
        freq="MS",
        season_length=12,
        weight=np.ones(n),
    )


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_the_kernel_decides_as_the_array_rules_at_every_origin(seed):
    data = _unit(seed)
    seen = dict.fromkeys(ABSTENTION_REASONS, 0)
    for index in range(1, len(data.periods)):
        origin = data.periods[index]
        for horizon, min_history in ((1, 1), (3, 4), (6, 0)):
            got = eligibility(data, index=index, origin=origin, horizon=horizon, min_history=min_history)
            want = _array_eligibility(data, index=index, origin=origin, horizon=horizon, min_history=min_history)
            assert np.array_equal(got[0], want[0]), (index, horizon, min_history)
            assert got[1] == want[1], (index, horizon, min_history)
            assert np.array_equal(got[2], want[2]) and got[2].dtype == np.int64
            assert int(got[0].sum()) + sum(got[1].values()) == data.n_series  # each series counted once
            for name, count in got[1].items():
                seen[name] += count
    assert all(seen.values()), seen  # every reason occurs, so every branch was compared


def test_an_origin_without_any_period_before_it_is_refused():
    data = _unit(0, n=5, t=6)
    with pytest.raises(ValueError, match="at least one period before it"):
        eligibility(data, index=0, origin=data.periods[0], horizon=1, min_history=1)
