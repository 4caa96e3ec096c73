"""Aggregates that exit and re-enter (issue 16): a group follows a series' entry / exit / abstention rules,
and a model that fails on one unit keeps its other units' scores."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pandas as pd
import pytest

from tycheon.backtest.engine import run
from tycheon.backtest.factories import RegistryFactory, instance_factory
from tycheon.backtest.protocol import RollingOrigin
from tycheon.backtest.scoreset import conform_table
from tycheon.backtest.slices import ABSTENTION_REASONS, run_start
from tycheon.backtest.units import build_unit
from tycheon.data.panel import Panel
from tycheon.data.synthetic import generate_marketplace
from tycheon.forecasters.base import Capabilities, Forecast, Forecaster, History
from tycheon.forecasters.registry import ids
from tycheon.testing.toys import NaiveForecaster

BASELINES = ids(trait="baseline")


def _two_lives_panel() -> Panel:
    """Series a lives in months [0, 20), series b in [30, 60): their sum has a gap [20, 30)."""
    periods = pd.date_range("2020-01-01", periods=60, freq="MS")
    rows = [("a", periods[t], 10.0 + t) for t in range(20)] + [("b", periods[t], 100.0 + t) for t in range(30, 60)]
    df = pd.DataFrame(rows, columns=["series_id", "period", "value"])
    return Panel.from_long(df, freq="MS")


class _SeenHistories(Forecaster):
    """The naive forecast, remembering the observed mask of every history it is asked to forecast."""

    capabilities: ClassVar[Capabilities] = Capabilities(vectorised=True)
    seen: ClassVar[list[np.ndarray]] = []

    def _predict(
        self,
        history: History,
        *,
        horizon: int,
        quantile_levels: tuple[float, ...],
        n_samples: int,
        rng: np.random.Generator,
    ) -> Forecast:
        type(self).seen.append(history.observed.copy())
        return Forecast(point=np.repeat(history.values[:, -1:], horizon, axis=1))


class _FailsOnAggregates(Forecaster):
    """The last value, but it raises when asked to forecast an aggregate (a series id that is no entity)."""

    capabilities: ClassVar[Capabilities] = Capabilities(vectorised=True)

    def _predict(
        self,
        history: History,
        *,
        horizon: int,
        quantile_levels: tuple[float, ...],
        n_samples: int,
        rng: np.random.Generator,
    ) -> Forecast:
        if any(str(s) == "total" or str(s).startswith("g") for s in history.series_ids):
            raise RuntimeError("cannot forecast aggregates")
        return Forecast(point=np.repeat(history.values[:, -1:], horizon, axis=1))


def test_run_start_is_the_column_after_the_last_gap_and_zero_for_an_exited_row():
    observed = np.array(
        [
            [1, 1, 0, 0, 1, 1],  # re-entered at 4
            [0, 0, 1, 1, 1, 1],  # late entry: starts at 2
            [1, 1, 1, 1, 1, 0],  # exited: nothing cut
            [1, 1, 1, 1, 1, 1],
        ],
        dtype=bool,
    )
    assert run_start(observed, 6).tolist() == [4, 2, 0, 0]
    assert run_start(observed, 2).tolist() == [0, 0, 0, 0]
    assert run_start(observed, 3).tolist() == [0, 2, 0, 0]


def test_when_a_group_is_unobserved_at_an_origin_it_abstains_and_a_reentry_starts_a_new_history():
    panel = _two_lives_panel()
    protocol = RollingOrigin(horizon=2, stride=4, n_origins=10)  # origins at months 24, 28, ..., 58? (last fits)
    _SeenHistories.seen = []
    scores = run(panel, protocol, {"seen": instance_factory(_SeenHistories())}, units=("total",), min_history=4)
    origins = protocol.origins(panel, min_history=4)
    by_origin = scores.meta["abstained"]["total"]
    forecast = set(scores.table["origin"].dt.strftime("%Y-%m-%d"))
    for o in origins:
        counts = by_origin[str(o.timestamp.date())]
        assert sum(counts.values()) + (str(o.timestamp.date()) in forecast) == 1  # one group: forecast or counted
        if 20 < o.index <= 30:
            assert counts["not_observed_at_origin"] == 1  # inside the gap: exited
        elif 30 < o.index < 34:
            assert counts["too_short"] == 1  # re-entered with fewer than 4 observations in its new run
        elif o.index >= 34:
            assert sum(counts.values()) == 0
    assert forecast  # the group is forecast after its re-entry
    for mask in _SeenHistories.seen:  # every history handed over is one contiguous run up to the origin
        cols = np.flatnonzero(mask[0])
        assert cols[-1] == mask.shape[1] - 1 and np.array_equal(cols, np.arange(cols[0], mask.shape[1]))
        assert cols[0] >= 30 or cols[-1] < 20


def test_series_histories_are_unchanged_by_the_current_run_rule(small_panel):
    # a series is contiguous from entry: its current run is its whole history (bit-identical scores)
    protocol = RollingOrigin(horizon=3, stride=3, n_origins=3)
    data = build_unit(small_panel, "series", first_fit_end=protocol.origins(small_panel)[0].fit_end)
    dense = small_panel.dense()
    first = np.argmax(dense.observed, axis=1)
    for upto in (10, 20, 36):
        start = run_start(data.observed, upto)
        at_last = data.observed[:, upto - 1]
        assert np.array_equal(start[at_last], np.where(first[at_last] > 0, first[at_last], 0))


def _abstention_accounting(scores, units, protocol, panel, min_history):
    """At every origin, each of a unit's k groups is either forecast (by naive, whose own minimum is below
    the engine's) or counted once under one abstention reason."""
    naive = scores.table[scores.table["model"] == "naive"]
    forecast = naive.groupby(["unit", "origin"], observed=True)["series_id"].nunique()
    for unit in units:
        k = int(unit.split(":")[1])
        for o in protocol.origins(panel, min_history=min_history):
            counts = scores.meta["abstained"][unit][str(o.timestamp.date())]
            assert set(counts) == set(ABSTENTION_REASONS)
            assert int(forecast.get((unit, o.timestamp), 0)) + sum(counts.values()) == k, (unit, o.timestamp)


def test_every_group_count_runs_for_every_baseline_on_a_small_synthetic_panel():
    panel = generate_marketplace(n_entities=40, n_periods=67, seed=11)
    protocol = RollingOrigin(horizon=6, stride=6, n_origins=2)
    units = tuple(f"groups:{k}" for k in range(1, panel.n_series + 1))
    factories = {m: RegistryFactory(m, {}) for m in BASELINES}
    scores = run(panel, protocol, factories, units=units + ("groups_random:40",), min_history=24)
    for m in BASELINES:
        meta = scores.meta["models"][m]
        assert meta["status"] == "ran" and "failed_units" not in meta, (m, meta.get("failed_units"))
    assert set(scores.table["unit"]) == set(units) | {"groups_random:40"}
    _abstention_accounting(scores, units, protocol, panel, 24)


def test_size_and_random_groups_run_for_every_baseline_on_the_2000_series_panel():
    panel = generate_marketplace(n_entities=2000, n_periods=67, seed=11)
    protocol = RollingOrigin(horizon=6, stride=6, n_origins=2)
    units = tuple(f"groups:{k}" for k in (1, 2, 5, 25, 125, 400, 625, 1000, 1999, 2000)) + ("groups_random:625",)
    factories = {m: RegistryFactory(m, {}) for m in BASELINES}
    scores = run(panel, protocol, factories, units=units, min_history=24)
    for m in BASELINES:
        meta = scores.meta["models"][m]
        assert meta["status"] == "ran" and "failed_units" not in meta, (m, meta.get("failed_units"))
        assert set(meta["support_by_unit"]) == set(units)
    assert set(scores.table["unit"]) == set(units)
    _abstention_accounting(scores, units[:-1], protocol, panel, 24)
    # small groups exit and re-enter: the 625-group unit abstains somewhere, and still scores most groups
    abstained = scores.meta["abstained"]["groups:625"]
    assert 0 < max(sum(c.values()) for c in abstained.values()) < 625


@pytest.mark.slow
def test_every_group_count_up_to_the_number_of_series_runs_on_the_2000_series_panel():
    panel = generate_marketplace(n_entities=2000, n_periods=67, seed=11)
    protocol = RollingOrigin(horizon=6, stride=6, n_origins=1)
    factories = {m: RegistryFactory(m, {}) for m in BASELINES}
    for lo in range(1, panel.n_series + 1, 100):  # in batches, so a batch's score set stays small
        units = tuple(f"groups:{k}" for k in range(lo, min(lo + 100, panel.n_series + 1)))
        scores = run(panel, protocol, factories, units=units, min_history=24)
        for m in BASELINES:
            meta = scores.meta["models"][m]
            assert meta["status"] == "ran" and "failed_units" not in meta, (m, meta.get("failed_units"))
        _abstention_accounting(scores, units, protocol, panel, 24)
        del scores


def test_a_unit_that_fails_leaves_the_models_other_units_scored(small_panel):
    protocol = RollingOrigin(horizon=3, stride=3, n_origins=3)
    factories = {"picky": instance_factory(_FailsOnAggregates()), "naive": instance_factory(NaiveForecaster())}
    scores = run(small_panel, protocol, factories, units=("series", "total", "groups:4"))
    picky = scores.meta["models"]["picky"]
    assert picky["status"] == "ran"
    assert set(picky["failed_units"]) == {"total", "groups:4"}
    assert "cannot forecast aggregates" in picky["failed_units"]["total"]["reason"]
    assert set(picky["support_by_unit"]) == {"series"} and picky["support"] > 0
    mine = scores.table[scores.table["model"] == "picky"]
    assert set(mine["unit"]) == {"series"}
    # its series rows equal those of the same model in a run on the series unit alone
    alone = run(small_panel, protocol, {"picky": instance_factory(_FailsOnAggregates())}, units=("series",))
    cols = ["series_id", "origin", "step", "actual", "point"]
    pd.testing.assert_frame_equal(
        conform_table(mine[cols].reset_index(drop=True)), alone.table[cols].reset_index(drop=True)
    )
    assert set(scores.table.loc[scores.table["model"] == "naive", "unit"]) == {"series", "total", "groups:4"}


def test_a_model_failing_on_every_unit_is_failed_with_the_first_reason(small_panel):
    protocol = RollingOrigin(horizon=3, stride=3, n_origins=3)
    scores = run(small_panel, protocol, {"picky": instance_factory(_FailsOnAggregates())}, units=("total", "groups:4"))
    meta = scores.meta["models"]["picky"]
    assert meta["status"] == "failed" and "cannot forecast aggregates" in meta["reason"]
    assert len(scores.table) == 0
