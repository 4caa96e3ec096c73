"""The poisoning canary (ADR-0006 decision 4) over every registered forecaster, and against a cheater."""

from __future__ import annotations

import numpy as np
import pytest

from tycheon.backtest.engine import run
from tycheon.backtest.factories import instance_factory
from tycheon.backtest.protocol import RollingOrigin
from tycheon.forecasters import registry
from tycheon.testing import (
    CanaryFailure,
    CheatingForecaster,
    GlobalMeanForecaster,
    MeanForecaster,
    NaiveForecaster,
    assert_canary,
    poison_after,
)

ORIGIN = 42  # last compared origin (column) on the 48-month canary panel
HORIZON = 3


def _roster_params() -> list:
    # per-series statistical models (not vectorised) pay JIT compilation and per-series fits: marked slow
    return [
        pytest.param(fid, marks=() if registry.get(fid).capabilities.vectorised else pytest.mark.slow)
        for fid in registry.available()
    ]


@pytest.mark.parametrize("forecaster_id", _roster_params())
def test_when_data_after_the_origin_is_poisoned_then_roster_forecasts_are_bit_identical(forecaster_id, canary_panel):
    cls = registry.get(forecaster_id)
    avail = cls.availability()
    if not avail.ok:
        pytest.skip(f"{forecaster_id} is not available here: {avail.reason}")
    # per-series statistical fits are the slow part: a handful of series keeps the whole roster fast
    panel = canary_panel if cls.capabilities.vectorised else canary_panel.subset(canary_panel.series_ids[:4])
    report = assert_canary(
        forecaster_id,
        panel,
        origin_index=ORIGIN,
        horizon=HORIZON,
        n_origins=2,
        n_samples=4 if cls.capabilities.samples else 0,
    )
    assert report["rows"] > 0
    assert report["guard_checks"]["predict"] == 2


@pytest.mark.parametrize(
    "model", [NaiveForecaster(), MeanForecaster(), GlobalMeanForecaster()], ids=["naive", "mean", "global_mean"]
)
def test_when_honest_toy_models_are_poisoned_then_canary_passes_on_every_unit(model, canary_panel):
    report = assert_canary(
        model,
        canary_panel,
        origin_index=ORIGIN,
        horizon=HORIZON,
        n_origins=3,
        units=("series", "total", "level:region", "groups:3"),
        n_samples=3,
    )
    assert report["rows"] > 0


def test_when_a_forecaster_reads_the_future_off_the_stack_then_canary_fails(canary_panel):
    with pytest.raises(CanaryFailure, match=r"looks ahead: column 'point' differs"):
        assert_canary(CheatingForecaster(), canary_panel, origin_index=ORIGIN, horizon=HORIZON)


def test_when_the_cheater_runs_then_the_guards_do_not_see_it(canary_panel):
    # the guards only see the history handed to predict; that is why the canary exists
    protocol = RollingOrigin(horizon=HORIZON, stride=HORIZON, n_origins=2)
    scores = run(canary_panel, protocol, {"cheat": instance_factory(CheatingForecaster())})
    assert scores.meta["models"]["cheat"]["status"] == "ran"
    table = scores.table
    assert np.array_equal(table["point"].to_numpy(), table["actual"].to_numpy())  # perfect: it cheated


def test_when_poisoning_then_only_cells_unpublished_at_the_origin_change(canary_panel):
    poisoned = poison_after(canary_panel, ORIGIN)
    clean, bad = canary_panel.dense(), poisoned.dense()
    origin = canary_panel.periods[ORIGIN]
    late = clean.observed & (clean.available_at > np.datetime64(origin))
    assert np.array_equal(clean.values[~late], bad.values[~late], equal_nan=True)
    assert (clean.values[late] != bad.values[late]).all()
    assert np.array_equal(clean.available_at, bad.available_at)
    assert late[:, ORIGIN].all() and not late[:, ORIGIN - 1].any()  # available_at == origin is kept


def test_when_the_model_forecasts_nothing_then_canary_refuses_to_pass(canary_panel):
    with pytest.raises(CanaryFailure, match="vacuous"):
        assert_canary(NaiveForecaster(min_obs=1000), canary_panel, origin_index=ORIGIN, horizon=HORIZON)
