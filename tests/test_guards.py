"""The three leakage guards (ADR-0006 decision 3), alone and inside the engine."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from tests._forecasters_support import NoEmbargoProtocol
from tycheon.backtest import slices, tasks
from tycheon.backtest.engine import run
from tycheon.backtest.factories import instance_factory
from tycheon.backtest.guards import GuardCounter, LookaheadError, check_embargo, check_fit, check_predict
from tycheon.backtest.protocol import RollingOrigin
from tycheon.backtest.units import build_unit
from tycheon.forecasters.base import Forecast, Forecaster, History
from tycheon.testing.toys import GlobalMeanForecaster, NaiveForecaster, toy_panel

PANEL = toy_panel(n_series=5, n_periods=30, seed=3, ragged=False)
UNIT = build_unit(PANEL, "series", first_fit_end=20)
PERIODS = PANEL.periods


def _history(upto: int, as_of: pd.Timestamp) -> History:
    """Columns [0, upto) of the toy panel, unmasked, stamped as known at ``as_of``."""
    h = slices._history(UNIT, np.arange(UNIT.n_series), upto, PERIODS[-1])
    return dataclasses.replace(h, as_of=as_of)


def test_when_the_last_cell_is_published_exactly_at_the_origin_then_predict_is_allowed():
    history = _history(20, PERIODS[20])
    assert (history.available_at[:, -1] == np.datetime64(PERIODS[20])).all()  # available_at == origin
    counter = GuardCounter()
    check_predict(history, origin=PERIODS[20], counter=counter)
    assert counter.predict == 1


def test_when_a_predict_history_holds_a_cell_published_after_the_origin_then_it_raises():
    with pytest.raises(LookaheadError, match=r"5 cell\(s\) of the predict history were published after"):
        check_predict(_history(21, PERIODS[20]), origin=PERIODS[20], counter=GuardCounter(), model="m")


def test_when_the_predict_history_is_as_of_another_time_then_it_raises():
    with pytest.raises(LookaheadError, match="predict history is as of"):
        check_predict(_history(19, PERIODS[19]), origin=PERIODS[20], counter=GuardCounter())


def test_when_a_training_cell_is_published_after_the_fit_time_then_it_raises():
    counter = GuardCounter()
    check_fit(_history(18, PERIODS[18]), fit_time=PERIODS[18], counter=counter)  # equality allowed
    assert counter.fit == 1
    with pytest.raises(LookaheadError, match=r"training cell\(s\) were published after the fit time"):
        check_fit(_history(19, PERIODS[18]), fit_time=PERIODS[18], counter=counter)


def test_when_training_reaches_into_the_embargo_then_it_raises():
    counter = GuardCounter()
    check_embargo(_history(18, PERIODS[18]), origin_index=20, embargo=2, periods=PERIODS, counter=counter)
    assert counter.embargo == 1  # last training column 17 < 20 - 2
    with pytest.raises(LookaheadError, match="inside the embargo of 2 period"):
        check_embargo(_history(19, PERIODS[19]), origin_index=20, embargo=2, periods=PERIODS, counter=counter)
    with pytest.raises(LookaheadError, match="inside the embargo of 0 period"):
        check_embargo(_history(21, PERIODS[21]), origin_index=20, embargo=0, periods=PERIODS, counter=counter)


def _run(protocol=None, model=None, **kwargs):
    protocol = protocol or RollingOrigin(horizon=3, stride=3, n_origins=2)
    return run(PANEL, protocol, {"m": instance_factory(model or NaiveForecaster())}, **kwargs)


def test_when_the_engine_would_hand_predict_a_later_column_then_lookahead_error_propagates(monkeypatch):
    def leaky(data, rows, *, index, origin):
        h = slices._history(data, np.asarray(rows), index + 1, PERIODS[-1])
        return dataclasses.replace(h, as_of=origin)

    monkeypatch.setattr(tasks, "predict_history", leaky)
    with pytest.raises(LookaheadError, match="published after the origin"):
        _run()


def test_when_the_engine_would_train_on_unpublished_cells_then_lookahead_error_propagates(monkeypatch):
    def leaky(data, *, fit_end, fit_time):
        h = slices._history(data, np.arange(data.n_series), fit_end + 1, PERIODS[-1])
        return dataclasses.replace(h, as_of=fit_time)

    monkeypatch.setattr(tasks, "fit_history", leaky)
    with pytest.raises(LookaheadError, match="published after the fit time"):
        _run(model=GlobalMeanForecaster())


def test_when_a_protocol_trains_inside_its_embargo_then_lookahead_error_propagates():
    with pytest.raises(LookaheadError, match="inside the embargo of 2"):
        _run(NoEmbargoProtocol(horizon=3, stride=3, n_origins=2, embargo=2), model=GlobalMeanForecaster())


def test_when_guards_pass_then_checks_are_counted_per_fit_and_predict():
    scores = _run(RollingOrigin(horizon=3, stride=3, n_origins=3, embargo=1), units=("series", "total"))
    # one task per unit (5 series < chunk size), three origins each
    assert scores.meta["guard_checks"] == {"predict": 6, "fit": 6, "embargo": 6}


def test_when_a_forecaster_raises_lookahead_error_itself_then_the_run_stops():
    class Tattletale(Forecaster):
        def _predict(self, history, **kwargs):
            raise LookaheadError("I peeked")

    with pytest.raises(LookaheadError, match="I peeked"):
        _run(model=Tattletale())


class _Recorder(Forecaster):
    """Keeps every history it is handed (class-level list: clones share it)."""

    seen: list = []

    def _fit(self, history):
        self.seen.append(("fit", history))

    def _predict(self, history, *, horizon, **kwargs):
        self.seen.append(("predict", history))
        return Forecast(point=np.zeros((history.n_series, horizon)))


def test_histories_are_past_only_copies_that_share_no_memory_with_the_panel():
    _Recorder.seen = []
    _run(RollingOrigin(horizon=3, stride=3, n_origins=2, embargo=1), model=_Recorder())
    dense = PANEL.dense()
    origins = [PERIODS[24], PERIODS[27]]
    kinds = [k for k, _ in _Recorder.seen]
    assert kinds == ["fit", "predict", "fit", "predict"]
    for (kind, h), origin in zip(_Recorder.seen, [origins[0], origins[0], origins[1], origins[1]], strict=False):
        for arr in (h.values, h.observed, h.available_at):
            assert not np.shares_memory(arr, dense.values) and not np.shares_memory(arr, dense.available_at)
            assert arr.base is None or arr.base.size == arr.size
        assert h.periods[-1] < origin
        if kind == "fit":
            assert h.periods[-1] < PERIODS[PERIODS.get_loc(origin) - 1]  # embargo of one period
            assert h.as_of == PERIODS[PERIODS.get_loc(origin) - 1]
        else:
            assert h.as_of == origin
            assert (h.available_at[h.observed] <= np.datetime64(origin)).all()


def test_when_one_history_is_handed_over_twice_then_both_are_counted_and_a_new_history_is_scanned_again():
    # the cell scan is remembered on the history object per time; each hand-over still runs the check
    # and counts, and a new history over the same arrays is scanned afresh
    h = _history(20, PERIODS[20])
    counter = GuardCounter()
    check_predict(h, origin=PERIODS[20], counter=counter)
    check_predict(h, origin=PERIODS[20], counter=counter)
    assert counter.predict == 2
    early = dataclasses.replace(h, as_of=PERIODS[5])  # the same arrays, now as of an earlier time
    with pytest.raises(LookaheadError, match="published after the origin"):
        check_predict(early, origin=PERIODS[5], counter=counter)
    assert counter.predict == 2


def test_published_window_equals_the_numpy_masking_it_replaces():
    # the one-pass kernel against the plain numpy expression, with late and NaT publication times
    rng = np.random.default_rng(4)
    n, t = 9, 14
    values = rng.normal(size=(n, t))
    observed = rng.random((n, t)) < 0.8
    base = np.datetime64("2020-01-01", "ns")
    avail = base + rng.integers(0, 40, size=(n, t)) * np.timedelta64(1, "D")
    avail[rng.random((n, t)) < 0.1] = np.datetime64("NaT")  # observed cells with no publication time
    data = dataclasses.replace(
        UNIT,
        values=values,
        observed=observed,
        available_at=avail,
        series_ids=np.array([f"s{i}" for i in range(n)], dtype=object),
        periods=pd.date_range("2019-01-01", periods=t, freq="MS"),
        weight=np.ones(n),
    )
    rows, upto, when = np.array([7, 0, 3, 3]), 11, pd.Timestamp("2020-01-20")
    got_values, got_pub, got_avail = slices.published_window(data, rows, upto, when)
    pub = observed[rows, :upto] & (avail[rows, :upto] <= np.datetime64(when))
    assert np.array_equal(got_pub, pub) and pub.any() and (~pub & observed[rows, :upto]).any()
    assert np.array_equal(got_values, np.where(pub, values[rows, :upto], np.nan), equal_nan=True)
    assert np.array_equal(got_avail, np.where(pub, avail[rows, :upto], np.datetime64("NaT", "ns")), equal_nan=True)
    assert all(a.base is None for a in (got_values, got_pub, got_avail))  # fresh, owned, no views
