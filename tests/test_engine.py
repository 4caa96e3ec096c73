"""The engine end to end: what is scored, abstention, support, failures, static vs rolling, bad input."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from tycheon.backtest.engine import run
from tycheon.backtest.factories import instance_factory
from tycheon.backtest.protocol import ProtocolError, RollingOrigin, StaticSplit
from tycheon.backtest.scoreset import ScoreSet
from tycheon.data.demand import demand_classes
from tycheon.data.panel import Panel
from tycheon.forecasters.base import Availability, Forecast, Forecaster
from tycheon.metrics.scale import seasonal_naive_scales
from tycheon.testing import poison_after
from tycheon.testing.toys import GlobalMeanForecaster, MeanForecaster, NaiveForecaster

PROTOCOL = RollingOrigin(horizon=3, stride=3, n_origins=3)


def _factories():
    return {"naive": instance_factory(NaiveForecaster()), "mean": instance_factory(MeanForecaster())}


def test_when_a_run_is_repeated_then_the_score_set_is_bit_identical(small_panel):
    a = run(small_panel, PROTOCOL, _factories(), units=("series", "total", "groups_random:3"), n_samples=6)
    b = run(small_panel, PROTOCOL, _factories(), units=("series", "total", "groups_random:3"), n_samples=6)
    pd.testing.assert_frame_equal(a.table, b.table, check_exact=True)
    assert np.array_equal(a.samples, b.samples, equal_nan=True)
    assert np.isfinite(a.samples[(a.table["model"] == "naive").to_numpy()]).all()
    assert np.isnan(a.samples[(a.table["model"] == "mean").to_numpy()]).all()
    c = run(small_panel, PROTOCOL, _factories(), units=("series",), n_samples=6, seed=1)
    assert not np.array_equal(a.select(unit="series").samples, c.samples)  # the seed does reach the paths


def test_rows_hold_the_panel_actuals_and_the_naive_forecast_is_the_last_value_at_the_origin(small_panel):
    scores = run(small_panel, PROTOCOL, _factories())
    dense = small_panel.dense()
    sid = pd.Index(dense.series_ids)
    for row in scores.select(model="naive").table.itertuples():  # plain loop oracle
        s = sid.get_loc(row.series_id)
        o = dense.periods.get_loc(row.origin)
        t = dense.periods.get_loc(row.target_period)
        assert t == o + row.step - 1
        assert row.actual == dense.values[s, t]
        assert row.available_at == dense.available_at[s, t]
        last = np.flatnonzero(dense.observed[s, :o])[-1]
        assert last == o - 1 and row.point == dense.values[s, last]
    assert scores.table["has_quantiles"].groupby(scores.table["model"], observed=True).all().to_dict() == {
        "mean": False,
        "naive": True,
    }
    assert scores.select(model="mean").table["q0.5"].isna().all()


def test_when_series_are_short_then_they_are_abstained_and_counted_per_origin():
    frame = pd.DataFrame(
        {
            "series_id": ["long"] * 24 + ["late"] * 8 + ["gone"] * 10,
            "period": list(pd.date_range("2020-01-01", periods=24, freq="MS"))
            + list(pd.date_range("2021-05-01", periods=8, freq="MS"))
            + list(pd.date_range("2020-01-01", periods=10, freq="MS")),
            "value": np.arange(42, dtype=float) + 1,
        }
    )
    panel = Panel.from_long(frame, freq="MS")
    protocol = RollingOrigin(horizon=3, stride=3, first_origin=18, n_origins=2)  # origins at 18 and 21
    scores = run(panel, protocol, {"naive": instance_factory(NaiveForecaster())}, min_history=3)
    ab = scores.meta["abstained"]["series"]
    # 'late' starts at column 16: 2 observations before origin 18, 5 before 21; 'gone' ends at column 9
    assert ab["2021-07-01"] == {"too_short": 1, "unpublished": 0, "not_observed_at_origin": 1, "no_target": 0}
    assert ab["2021-10-01"] == {"too_short": 0, "unpublished": 0, "not_observed_at_origin": 1, "no_target": 0}
    per_origin = scores.table.groupby("origin")["series_id"].unique().map(sorted).to_dict()
    assert per_origin == {pd.Timestamp("2021-07-01"): ["long"], pd.Timestamp("2021-10-01"): ["late", "long"]}


def test_when_a_model_needs_more_history_then_only_its_support_shrinks(small_panel):
    protocol = RollingOrigin(horizon=3, stride=3, n_origins=3)
    counts = small_panel.dense().n_observed
    origins = [o.index for o in protocol.origins(small_panel)]
    need = 28
    expected_blocks = sum(int((counts(i) >= need).sum()) for i in origins)
    scores = run(
        small_panel,
        protocol,
        {"picky": instance_factory(NaiveForecaster(min_obs=need)), "naive": instance_factory(NaiveForecaster())},
    )
    picky, naive = scores.meta["models"]["picky"], scores.meta["models"]["naive"]
    assert picky["support"] == expected_blocks < naive["support"] == 36
    assert picky["below_model_min_history"] == 36 - expected_blocks


def test_demand_class_and_scales_come_from_the_origin_window_only(small_panel):
    protocol = RollingOrigin(horizon=3, stride=3, n_origins=3)
    clean = run(small_panel, protocol, _factories())
    last = protocol.origins(small_panel)[-1].index
    poisoned = run(poison_after(small_panel, last), protocol, _factories())
    for col in ("demand_class", "scale_mae", "scale_rmse", "season_length", "weight"):
        assert clean.table[col].equals(poisoned.table[col]), col
    dense = small_panel.dense()
    for o in protocol.origins(small_panel):
        window = dense.values[:, : o.index]
        classes = demand_classes(window, dense.observed[:, : o.index])
        mae, rmse, lag = seasonal_naive_scales(window, dense.observed[:, : o.index], small_panel.season_length)
        rows = clean.select(model="naive", origin=o.timestamp, step=1).table
        idx = pd.Index(dense.series_ids).get_indexer(rows["series_id"])
        assert list(rows["demand_class"]) == list(classes[idx])
        assert np.allclose(rows["scale_mae"], mae[idx]) and np.allclose(rows["scale_rmse"], rmse[idx])
        assert list(rows["season_length"]) == list(lag[idx])
    assert set(clean.table["demand_class"]) > {"smooth"}  # the toy panel has zeros: more than one class


class _Broken(Forecaster):
    def _predict(self, history, **kwargs):
        raise FloatingPointError("the optimiser diverged")


class _Slow(Forecaster):
    def _predict(self, history, *, horizon, **kwargs):
        time.sleep(0.05)
        return MeanForecaster()._predict(history, horizon=horizon, quantile_levels=(), n_samples=0, rng=None)


class _Missing(MeanForecaster):
    @classmethod
    def availability(cls):
        return Availability(ok=False, reason="needs the package 'nonexistent'")


def test_when_models_fail_overrun_or_are_unavailable_then_the_others_still_run(small_panel):
    scores = run(
        small_panel,
        PROTOCOL,
        {
            "broken": instance_factory(_Broken()),
            "slow": instance_factory(_Slow()),
            "missing": instance_factory(_Missing()),
            **_factories(),
        },
        time_budget=0.1,
    )
    models = scores.meta["models"]
    assert models["broken"]["status"] == "failed"
    assert models["broken"]["reason"] == "FloatingPointError: the optimiser diverged"
    assert "FloatingPointError" in models["broken"]["traceback"]
    assert models["slow"]["status"] == "failed" and "time budget of 0.1 s" in models["slow"]["reason"]
    assert models["missing"] == {"status": "skipped", "reason": "needs the package 'nonexistent'"}
    assert models["naive"]["status"] == "ran" and models["naive"]["support"] == 36
    assert scores.models == ["mean", "naive"]  # failed models contribute no rows


class _CountingFactory:
    """Records the training history's last period and as_of for every call."""

    def __init__(self):
        self.calls = []

    def __call__(self, history, fit_time):
        self.calls.append((history.periods[-1], history.as_of, fit_time))
        return GlobalMeanForecaster().fit(history)


def test_when_a_global_model_rolls_then_it_is_refit_at_every_origin_on_data_strictly_before_it(small_panel):
    factory = _CountingFactory()
    protocol = RollingOrigin(horizon=3, stride=3, n_origins=3, embargo=1)
    run(small_panel, protocol, {"g": factory})
    origins = protocol.origins(small_panel)
    assert len(factory.calls) == 3
    for (last, as_of, fit_time), o in zip(factory.calls, origins, strict=False):
        assert last == small_panel.periods[o.index - 2] and as_of == fit_time == o.fit_time < o.timestamp


def test_when_the_split_is_static_then_globals_fit_once_and_local_forecasts_match_rolling(small_panel):
    factory = _CountingFactory()
    static = StaticSplit(horizon=3, boundary=27, stride=3, embargo=1)
    rolling = RollingOrigin(horizon=3, stride=3, first_origin=27, embargo=1)
    s = run(small_panel, static, {"g": factory, "naive": instance_factory(NaiveForecaster())})
    assert len(factory.calls) == 1 and factory.calls[0][0] == small_panel.periods[25]
    # every model is fitted once at the boundary; the embargo is re-checked for each origin it serves
    assert s.meta["guard_checks"] == {"fit": 2, "embargo": 3 + 3, "predict": 3 + 3}
    r = run(small_panel, rolling, {"naive": instance_factory(NaiveForecaster())})
    pd.testing.assert_frame_equal(s.select(model="naive").table, r.table, check_exact=True)
    g = s.select(model="g").table
    assert g["origin"].nunique() == 3


def test_when_a_cell_is_published_late_then_its_series_abstains_as_unpublished():
    periods = pd.date_range("2020-01-01", periods=20, freq="MS")
    frame = pd.DataFrame(
        {"series_id": ["a"] * 20 + ["b"] * 20, "period": list(periods) * 2, "value": np.arange(40, dtype=float)}
    )
    frame["available_at"] = frame["period"] + pd.offsets.MonthBegin(1)
    late = (frame["series_id"] == "b") & (frame["period"] == periods[14])
    frame.loc[late, "available_at"] = periods[17]  # revised late: unknown at the origin at column 15
    panel = Panel.from_long(frame, available_at_col="available_at", freq="MS")
    scores = run(
        panel,
        RollingOrigin(horizon=2, stride=2, first_origin=15, n_origins=2),
        {"naive": instance_factory(NaiveForecaster())},
    )
    assert scores.meta["abstained"]["series"]["2021-04-01"]["unpublished"] == 1
    assert scores.meta["abstained"]["series"]["2021-06-01"]["unpublished"] == 0
    assert set(scores.select(origin=pd.Timestamp("2021-04-01")).table["series_id"]) == {"a"}


def test_when_inputs_are_bad_then_each_gets_a_clear_error(small_panel):
    with pytest.raises(ValueError, match=r"unknown unit 'customers'; accepted forms are series, total"):
        run(small_panel, PROTOCOL, _factories(), units=("customers",))
    with pytest.raises(ValueError, match="'brand' is not a hierarchy level"):
        run(small_panel, PROTOCOL, _factories(), units=("level:brand",))
    with pytest.raises(ProtocolError, match="horizon must be a positive integer"):
        run(small_panel, RollingOrigin(horizon=0, stride=1), _factories())
    with pytest.raises(ProtocolError, match="embargo must be an integer >= 0"):
        run(small_panel, RollingOrigin(horizon=3, stride=3, embargo=-1), _factories())
    with pytest.raises(ProtocolError, match="too little history for any origin"):
        run(small_panel, RollingOrigin(horizon=3, stride=3), _factories(), min_history=40)
    with pytest.raises(ValueError, match="unknown backend 'spark'"):
        run(small_panel, PROTOCOL, _factories(), backend="spark")
    with pytest.raises(ValueError, match="quantile_levels must be strictly increasing"):
        run(small_panel, PROTOCOL, _factories(), quantile_levels=(0.9, 0.1))
    with pytest.raises(ValueError, match="factories must be a non-empty mapping"):
        run(small_panel, PROTOCOL, {})


def test_when_the_score_set_is_written_to_parquet_then_it_reads_back_equal(small_panel, tmp_path):
    scores = run(small_panel, PROTOCOL, _factories(), n_samples=3, units=("series", "total"))
    path = tmp_path / "scores.parquet"
    scores.to_parquet(path)
    back = ScoreSet.from_parquet(path)
    pd.testing.assert_frame_equal(back.table, scores.table, check_exact=True)
    assert np.array_equal(back.samples, scores.samples, equal_nan=True)
    assert back.meta["guard_checks"] == scores.meta["guard_checks"]


class _FailsAtSecondOrigin(Forecaster):
    """Forecasts zeros at the first origin it sees, raises at any later one."""

    capabilities = MeanForecaster.capabilities
    first: list = []

    def _predict(self, history, *, horizon, **kwargs):
        if self.first and history.as_of != self.first[0]:
            raise ArithmeticError("diverged at a later origin")
        self.first[:1] = [history.as_of]
        return Forecast(point=np.zeros((history.n_series, horizon)))


class _Vandal(Forecaster):
    """Tries to overwrite the history it is handed (the one the next model of its chunk receives)."""

    capabilities = MeanForecaster.capabilities

    def _predict(self, history, *, horizon, **kwargs):
        history.values[:] = 0.0
        return Forecast(point=np.zeros((history.n_series, horizon)))


@pytest.mark.parametrize("intruder", [_FailsAtSecondOrigin, _Vandal])
def test_when_one_model_of_a_shared_chunk_fails_then_the_others_rows_are_those_of_a_run_without_it(
    small_panel, intruder
):
    # the local models of a chunk share one task and one history per origin; a failure stays the
    # model's own (a vandal cannot write into the shared history: it is read-only, and it fails)
    _FailsAtSecondOrigin.first = []
    alone = run(small_panel, PROTOCOL, _factories(), units=("series", "total"), chunk_size=5, n_samples=3)
    shared = run(
        small_panel,
        PROTOCOL,
        {"bad": instance_factory(intruder()), **_factories()},
        units=("series", "total"),
        chunk_size=5,
        n_samples=3,
    )
    assert shared.meta["models"]["bad"]["status"] == "failed"
    assert "bad" not in shared.models
    pd.testing.assert_frame_equal(shared.table, alone.table, check_exact=True)
    assert np.array_equal(shared.samples, alone.samples, equal_nan=True)
    for name in ("naive", "mean"):
        for key in ("support", "support_by_unit", "below_model_min_history"):
            assert shared.meta["models"][name][key] == alone.meta["models"][name][key]


class _Keeper(Forecaster):
    """Keeps every predict history it is handed (class-level list: clones share it)."""

    capabilities = MeanForecaster.capabilities
    seen: list = []

    def _predict(self, history, *, horizon, **kwargs):
        self.seen.append(history)
        return Forecast(point=np.zeros((history.n_series, horizon)))


def test_models_of_a_chunk_share_one_read_only_history_per_origin_and_each_hand_over_is_guarded(small_panel):
    _Keeper.seen = []
    scores = run(small_panel, PROTOCOL, {"a": instance_factory(_Keeper()), "b": instance_factory(_Keeper())})
    seen = _Keeper.seen
    assert len(seen) == 2 * 3  # two models, three origins, one chunk
    for first, second in zip(seen[::2], seen[1::2], strict=False):
        assert second is first  # built once, handed to both
        assert not any(a.flags.writeable for a in (first.values, first.observed, first.available_at))
    # guard counts are per hand-over: one fit, embargo and predict check per (model, chunk, origin)
    assert scores.meta["guard_checks"] == {"predict": 6, "fit": 6, "embargo": 6}


class _NeedsLongHistory(MeanForecaster):
    def min_history(self, season_length):
        return 24


def test_when_tasks_compute_demand_class_and_scales_per_chunk_then_they_equal_the_whole_unit_kernels(small_panel):
    protocol = RollingOrigin(horizon=3, stride=3, n_origins=3)
    factories = {**_factories(), "long": instance_factory(_NeedsLongHistory())}  # a subset of the series
    one = run(small_panel, protocol, factories, min_history=2)
    chunked = run(small_panel, protocol, factories, min_history=2, chunk_size=5)
    pd.testing.assert_frame_equal(one.table, chunked.table, check_exact=True)
    dense = small_panel.dense()
    table = chunked.table
    assert 0 < (table["model"] == "long").sum() < (table["model"] == "naive").sum()
    for o in protocol.origins(small_panel, min_history=2):
        pub = dense.observed[:, : o.index]
        window = np.where(pub, dense.values[:, : o.index], np.nan)
        classes = demand_classes(window, pub)
        mae, rmse, lag = seasonal_naive_scales(window, pub, small_panel.season_length)
        rows = table[table["origin"] == o.timestamp]
        idx = pd.Index(dense.series_ids).get_indexer(rows["series_id"])
        assert list(rows["demand_class"]) == list(classes[idx])
        assert np.array_equal(rows["scale_mae"].to_numpy(), mae[idx], equal_nan=True)
        assert np.array_equal(rows["scale_rmse"].to_numpy(), rmse[idx], equal_nan=True)
        assert np.array_equal(rows["season_length"].to_numpy(), lag[idx])


def test_when_a_band_level_is_empty_in_an_output_then_the_task_ships_none_and_the_table_has_nan(
    small_panel, monkeypatch
):
    # with few origins the 95% band never exists (it needs 19 earlier errors): the workers send None for
    # that level instead of a grid of NaN, and the table still has NaN lo95/hi95 with the 80% band intact
    import tycheon.backtest.engine as engine

    shipped = []

    def capture(tasks, on_result=None, **kwargs):
        def keep(i, task_results):  # what the task shipped, before the streaming writer lets it go
            shipped.extend(o for r in task_results for o in r.outputs)
            if on_result is not None:
                on_result(i, task_results)

        return run_tasks(tasks, on_result=keep, **kwargs)

    run_tasks = engine.run_tasks
    monkeypatch.setattr(engine, "run_tasks", capture)
    protocol = RollingOrigin(horizon=3, stride=2, n_origins=8, mode="analysis")
    scores = run(small_panel, protocol, _factories(), chunk_size=4)
    assert shipped and all(o.radii is not None and len(o.radii) == 2 for o in shipped)
    assert all(o.radii[1] is None for o in shipped)  # no 95% band anywhere
    with_80 = [o for o in shipped if o.radii[0] is not None]
    assert with_80 and all(len(o.radii[0]) == np.isfinite(o.actual).sum() for o in with_80)
    t = scores.table
    assert t["lo95"].isna().all() and t["hi95"].isna().all()
    assert t["has_band"].any() and not t["has_band"].all()
    assert scores.meta["conformal"]["rows_with_band"]["95"] == 0
    assert scores.meta["conformal"]["rows_with_band"]["80"] == int(t["has_band"].sum())


def test_default_chunks_are_equal_and_at_most_the_default_size():
    from tycheon.backtest.engine import DEFAULT_CHUNK_SIZE, default_chunk_size

    for n in (1, 7, 4096, 4097, 8192, 8193, 30490, 100_000):
        size = default_chunk_size(n)
        chunks = -(-n // size)
        assert size <= DEFAULT_CHUNK_SIZE and chunks == -(-n // DEFAULT_CHUNK_SIZE)  # as few chunks as before
        assert n - (chunks - 1) * size > size - chunks  # the last chunk is short by less than one per chunk
    assert default_chunk_size(30490) == 3812 and default_chunk_size(4096) == 4096
