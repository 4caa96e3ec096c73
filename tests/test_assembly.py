"""Rows planned before the tasks run and written as results arrive (tycheon.backtest.assembly).

The streaming route must give exactly the table the after-the-run assembly gives, and fall back to it
whenever the plan does not hold. Most tests stream with the in-process backend (monkeypatched into
``STREAMING_BACKENDS``) so they run in milliseconds; one runs the real joblib route.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import tycheon.backtest.engine as engine
from tests._forecasters_support import assert_same_scores
from tycheon.backtest.assembly import StreamingAssembly, plan_rows
from tycheon.backtest.engine import run
from tycheon.backtest.factories import forecaster_factory, instance_factory
from tycheon.backtest.protocol import RollingOrigin, StaticSplit
from tycheon.forecasters.base import Forecast, Forecaster
from tycheon.testing.toys import GlobalMeanForecaster, MeanForecaster, NaiveForecaster, toy_panel

PANEL = toy_panel(n_series=30, n_periods=44, seed=3, zero_share=0.3)
PROTOCOL = RollingOrigin(horizon=3, stride=2, n_origins=6, mode="analysis")
KW = dict(
    units=("series", "total", "groups:3"),
    quantile_levels=(0.1, 0.9),
    n_samples=3,
    min_history=3,
    chunk_size=7,
    band_min_origins=1,
    seed=2,
)


def _factories(**extra):
    return {
        "naive": instance_factory(NaiveForecaster()),
        "mean": instance_factory(MeanForecaster()),
        "gmean": instance_factory(GlobalMeanForecaster()),
        "snaive": forecaster_factory("seasonal_naive"),
        "ses": forecaster_factory("ses", alpha=0.3),
        **extra,
    }


@pytest.fixture
def streamed(monkeypatch):
    """Stream in process too, and record whether each run's streamed table was used (and why not)."""
    outcomes = []
    finish = StreamingAssembly.finish

    def recording_finish(self, meta):
        scores = finish(self, meta)
        outcomes.append((scores is not None, self.broken))
        return scores

    monkeypatch.setattr(engine, "STREAMING_BACKENDS", ("sequential", "joblib", "dask"))
    monkeypatch.setattr(StreamingAssembly, "finish", recording_finish)
    return outcomes


def _after_the_run(factories, protocol=PROTOCOL, **kwargs):
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "STREAMING_BACKENDS", ())
        return run(PANEL, protocol, factories, **{**KW, **kwargs})


def _assert_same(a, b):
    assert_same_scores(a, b, meta=("conformal", "models"))


@pytest.mark.parametrize("protocol", [PROTOCOL, StaticSplit(horizon=3, boundary=30, stride=3, embargo=1)])
def test_streamed_rows_equal_the_after_the_run_assembly(streamed, protocol):
    scores = run(PANEL, protocol, _factories(), **KW)
    assert streamed == [(True, "")]  # the streamed table was the one returned
    _assert_same(scores, _after_the_run(_factories(), protocol))
    assert scores.table["has_quantiles"].any()
    assert scores.table["has_band"].any() == isinstance(protocol, RollingOrigin)  # 3 static origins: no band


def test_the_plan_counts_exactly_the_rows_each_model_forecasts_per_unit_and_origin(streamed):
    captured = {}
    real = engine._streaming

    def keep(*args, **kwargs):
        captured["stream"] = real(*args, **kwargs)
        return captured["stream"]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "_streaming", keep)
        scores = run(PANEL, PROTOCOL, _factories(), **KW)
    plan = captured["stream"].plan
    origins = sorted(scores.table["origin"].unique())
    units = list(dict.fromkeys(scores.table["unit"]))
    counts = scores.table.groupby(["unit", "model", "origin"], sort=False, observed=True).size()
    planned = {}
    for (u, model, j, _), (_, size) in plan.rows.items():
        planned[(units[u], model, origins[j])] = planned.get((units[u], model, origins[j]), 0) + size
    assert {k: v for k, v in planned.items() if v} == counts.to_dict()
    assert plan.total == len(scores.table)
    assert counts[("series", "snaive")].sum() < counts[("series", "naive")].sum()  # needs 13 observations


class _Exploding(Forecaster):
    def _predict(self, history, *, horizon, **kwargs):
        if history.n_series and history.series_ids[0] >= "s010":  # fails in a later chunk only
            raise FloatingPointError("diverged")
        return Forecast(point=np.zeros((history.n_series, horizon)))


class _Grows(MeanForecaster):
    """Says it needs 1 observation until fitted, then 20: the plan (made unfitted) cannot hold."""

    def _fit(self, history):
        self.fitted_ = True

    def min_history(self, season_length):
        return 20 if getattr(self, "fitted_", False) else 1


class _QuantilesInFirstChunkOnly(Forecaster):
    def _predict(self, history, *, horizon, quantile_levels, **kwargs):
        point = np.ones((history.n_series, horizon))
        if history.series_ids[0] == "s000" and quantile_levels:
            q = np.repeat(point[:, :, None], len(quantile_levels), axis=2)
            return Forecast(point=point, quantile_levels=quantile_levels, quantiles=q)
        return Forecast(point=point)


def test_when_a_model_fails_then_the_stream_is_not_used_and_the_blocks_are_assembled_after_the_run(streamed):
    extra = {"boom": instance_factory(_Exploding())}
    scores = run(PANEL, PROTOCOL, _factories(**extra), **KW)
    assert streamed == []  # a failed model: the engine does not even finish the stream
    # it fails on ids from "s010" on: the series unit (in a later chunk) and "total"; each failed unit loses
    # all its rows, the groups ("g1".."g3") keep theirs
    assert set(scores.meta["models"]["boom"]["failed_units"]) == {"series", "total"}
    assert set(scores.table.loc[scores.table["model"] == "boom", "unit"]) == {"groups:3"}
    _assert_same(scores, _after_the_run(_factories(**extra)))


def test_when_fitting_changes_the_rows_a_model_forecasts_then_the_plan_is_refused_and_assembled_after(streamed):
    extra = {"grows": instance_factory(_Grows())}
    scores = run(PANEL, PROTOCOL, _factories(**extra), **KW)
    assert len(streamed) == 1
    used, reason = streamed[0]
    assert not used and "planned" in reason and reason.startswith("grows/")
    _assert_same(scores, _after_the_run(_factories(**extra)))


def test_when_only_some_chunks_give_quantiles_then_that_origin_has_none_as_after_the_run(streamed):
    factories = _factories(partial=instance_factory(_QuantilesInFirstChunkOnly()))
    scores = run(PANEL, PROTOCOL, factories, **KW)
    assert streamed == [(True, "")]
    rows = scores.table[scores.table["model"] == "partial"]
    assert len(rows) and not rows["has_quantiles"].any() and rows["q0.1"].isna().all()
    _assert_same(scores, _after_the_run(factories))


def test_an_opaque_factory_is_not_planned_and_the_run_assembles_after():
    def opaque(history, fit_time):
        return MeanForecaster().fit(history)

    states_seen = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(engine, "STREAMING_BACKENDS", ("sequential",))
        real = engine._streaming
        mp.setattr(engine, "_streaming", lambda *a, **k: states_seen.append(real(*a, **k)) or states_seen[-1])
        scores = run(PANEL, PROTOCOL, {"naive": instance_factory(NaiveForecaster()), "opaque": opaque}, **KW)
    assert states_seen == [None] and (scores.table["model"] == "opaque").any()


def test_the_joblib_route_streams_and_equals_the_in_process_run():
    seen = []
    finish = StreamingAssembly.finish
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(StreamingAssembly, "finish", lambda self, meta: seen.append(1) or finish(self, meta))
        scores = run(PANEL, PROTOCOL, _factories(), backend="joblib", n_jobs=2, **KW)
    assert seen == [1]
    _assert_same(scores, _after_the_run(_factories()))


def test_plan_rows_of_an_empty_unit_is_empty():
    from tycheon.backtest.assembly import PlannedModel
    from tycheon.backtest.slices import UnitData

    empty = UnitData(
        "series",
        np.zeros((0, 5)),
        np.zeros((0, 5), bool),
        np.zeros((0, 5), "datetime64[ns]"),
        np.array([], dtype=object),
        pd.date_range("2020", periods=5, freq="MS"),
        "MS",
        12,
        np.zeros(0),
    )
    plan = plan_rows(
        [(empty, np.zeros((0, 1), bool), np.zeros((0, 1), np.int64))],
        [PlannedModel("m", lambda m: 1, lambda n: 4)],
        PROTOCOL.origins(PANEL, min_history=3)[:1],
    )
    assert plan.total == 0 and plan.rows == {}


def test_streamed_tasks_let_go_of_their_forecasts_and_a_later_failure_runs_them_again(streamed, monkeypatch):
    from tests.test_units_reentry import _FailsOnAggregates
    from tycheon.backtest import assembly

    released = []
    on_result = StreamingAssembly.on_result

    def recording(self, index, task_results):
        on_result(self, index, task_results)
        released.append((index, [len(o.point) for r in task_results for o in r.outputs]))

    monkeypatch.setattr(StreamingAssembly, "on_result", recording)
    plain = run(PANEL, PROTOCOL, _factories(), **KW)
    assert streamed[-1] == (True, "") and released
    assert all(size == 0 for _, sizes in released for size in sizes)  # no forecast arrays held after writing
    # the picky model fails on the aggregates, after the series tasks were written and let go: the run
    # falls back to assembling after the run, running the released tasks again, and equals it
    from tycheon.backtest.tasks import ChunkTask

    calls = []
    call = ChunkTask.__call__
    monkeypatch.setattr(ChunkTask, "__call__", lambda self: calls.append(self.data.unit) or call(self))
    factories = _factories(picky=instance_factory(_FailsOnAggregates()))
    released.clear()
    scores = run(PANEL, PROTOCOL, factories, **KW)
    n_tasks = len(released)  # every task's result reached the stream once
    assert len(calls) > n_tasks and set(calls[n_tasks:]) == {"series"}  # the released series tasks ran again
    assert assembly._NO_FORECAST.size == 0
    _assert_same(scores, _after_the_run(factories))
    assert set(scores.table["model"].unique()) == set(plain.table["model"].unique()) | {"picky"}
