"""Fit and update (issue 36): a refit calendar in the protocol, parameters kept between refits.

Oracles are statsforecast's own calls on the raw series, made here without the engine:

* a refit at every origin (``refit_every = 1``, no embargo) equals ``Model.forecast(y[:o])``, the model
  estimated on the history published by each origin ``o``;
* between refits, origin ``o`` served by the refit origin ``r`` equals ``Model.fit(y[:r - embargo])``
  followed by ``forward(y[:o])``, statsforecast's fixed-parameter path, to 1e-9;
* a leak planted in the update path raises, and the poisoning canary holds with updates in the calendar.
"""

from __future__ import annotations

import numpy as np
import pytest

from tycheon.backtest import tasks
from tycheon.backtest.engine import run
from tycheon.backtest.factories import forecaster_factory
from tycheon.backtest.guards import LookaheadError
from tycheon.backtest.protocol import ProtocolError, RollingOrigin, StaticSplit, calibration_plan
from tycheon.data.panel import Panel
from tycheon.forecasters import registry
from tycheon.testing import assert_canary, toy_panel

HORIZON = 3
LEVELS = (0.1, 0.5, 0.9)  # q0.1 / q0.9: the ends of the 80% interval


def _statsforecast(forecaster_id: str, season_length: int):
    """A fresh statsforecast model, built exactly as the registered forecaster builds it."""
    return registry.create(forecaster_id)._model(season_length)


MODELS = ["auto_ets", "damped_ets", "auto_theta", "auto_arima", "mstl"]


@pytest.fixture(scope="module")
def panel():
    return toy_panel(n_series=3, n_periods=48, seed=7, zero_share=0.0, ragged=False)


def _oracle_out(model_id: str, y: np.ndarray, *, fit_end: int, origin: int, m: int) -> dict:
    theta = registry.get(model_id).simulated_intervals
    levels = [0.0, 80.0] if theta else [80.0]
    model = _statsforecast(model_id, m)
    if fit_end == origin:
        return model.forecast(y[:origin], HORIZON, level=levels), theta
    return model.fit(y[:fit_end]).forward(y[:origin], HORIZON, level=levels), theta


def _check_against_oracle(scores, panel, model_id: str, fit_end_of) -> int:
    """Compare every scored row with statsforecast's own forecast; returns how many origins were updates."""
    values = panel.dense().values
    table = scores.table
    updates = 0
    for (sid, origin), rows in table.groupby(["series_id", "origin"], observed=True):
        i = list(panel.series_ids).index(sid)
        o = int(panel.periods.get_loc(origin))
        fit_end = fit_end_of(o)
        updates += fit_end != o
        out, theta = _oracle_out(model_id, values[i], fit_end=fit_end, origin=o, m=panel.season_length)
        rows = rows.sort_values("step")
        np.testing.assert_allclose(rows["point"].to_numpy(), out["mean"], rtol=0, atol=1e-9)
        np.testing.assert_allclose(rows["q0.1"].to_numpy(), out["lo-80.0"], rtol=0, atol=1e-9)
        np.testing.assert_allclose(rows["q0.9"].to_numpy(), out["hi-80.0"], rtol=0, atol=1e-9)
        median = out["lo-0.0"] if theta else out["mean"]
        np.testing.assert_allclose(rows["q0.5"].to_numpy(), median, rtol=0, atol=1e-9)
    return updates


def _run(panel, protocol, model_id: str):
    scores = run(panel, protocol, {model_id: forecaster_factory(model_id)}, quantile_levels=LEVELS)
    assert scores.meta["models"][model_id]["status"] == "ran", scores.meta["models"][model_id]
    return scores


@pytest.mark.slow
@pytest.mark.parametrize("model_id", MODELS)
def test_a_refit_at_every_origin_equals_the_model_estimated_at_each_origin(panel, model_id):
    protocol = RollingOrigin(horizon=HORIZON, stride=HORIZON, n_origins=4, refit_every=1)
    scores = _run(panel, protocol, model_id)
    assert _check_against_oracle(scores, panel, model_id, fit_end_of=lambda o: o) == 0
    assert scores.meta["guard_checks"]["fit"] == 4


@pytest.mark.slow
@pytest.mark.parametrize("model_id", MODELS)
@pytest.mark.parametrize(("k", "embargo"), [(2, 0), (3, 0), (2, 2)])
def test_between_refits_the_parameters_are_those_of_the_last_refit_origin(panel, model_id, k, embargo):
    protocol = RollingOrigin(horizon=HORIZON, stride=HORIZON, n_origins=6, refit_every=k, embargo=embargo)
    origins = protocol.origins(panel)
    cols = [o.index for o in origins]
    refit_of = {c: cols[(j // k) * k] for j, c in enumerate(cols)}
    assert [o.fit_end for o in origins] == [refit_of[c] - embargo for c in cols]
    scores = _run(panel, protocol, model_id)
    updates = _check_against_oracle(scores, panel, model_id, fit_end_of=lambda o: refit_of[o] - embargo)
    assert updates > 0
    assert scores.meta["guard_checks"]["fit"] == len(range(0, 6, k))


@pytest.mark.slow
def test_the_kept_parameters_change_the_forecast_so_the_oracle_check_is_not_vacuous(panel):
    y = panel.dense().values[0]
    m = panel.season_length
    kept = _statsforecast("auto_ets", m).fit(y[:30]).forward(y[:39], HORIZON)["mean"]
    fresh = _statsforecast("auto_ets", m).forecast(y[:39], HORIZON)["mean"]
    assert np.max(np.abs(kept - fresh)) > 1e-3


@pytest.mark.slow
def test_a_static_split_fits_once_at_the_boundary_and_updates_after(panel):
    protocol = StaticSplit(horizon=HORIZON, boundary=30, stride=HORIZON, n_origins=5, embargo=1)
    scores = _run(panel, protocol, "auto_ets")
    assert _check_against_oracle(scores, panel, "auto_ets", fit_end_of=lambda o: 29) == 5 * 3
    assert scores.meta["guard_checks"]["fit"] == 1


def test_a_calendar_of_refit_periods_refits_at_the_first_origin_on_or_after_each():
    panel = toy_panel(n_series=2, n_periods=48, seed=1, ragged=False)
    protocol = RollingOrigin(horizon=3, stride=3, first_origin=24, n_origins=6, refit_at=(28, panel.periods[33]))
    origins = protocol.origins(panel)
    assert [o.index for o in origins] == [24, 27, 30, 33, 36, 39]
    assert [o.fit_end for o in origins] == [24, 24, 30, 33, 33, 33]
    assert protocol.describe()["refit_at"] == ["28", str(panel.periods[33])]
    assert "refit_every" not in RollingOrigin(horizon=3, stride=3).describe()  # the default calendar
    assert RollingOrigin(horizon=3, stride=3, refit_every=4).describe()["refit_every"] == 4


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"refit_every": 0}, "refit_every must be an integer >= 1"),
        ({"refit_every": 1.5}, "refit_every must be an integer >= 1"),
        ({"refit_every": True}, "refit_every must be an integer >= 1"),
        ({"refit_at": "2020-01-01"}, "refit_at must be a list of periods"),
        ({"refit_every": 2, "refit_at": (30,)}, "give one refit calendar"),
    ],
)
def test_a_bad_refit_calendar_is_refused_with_what_is_accepted(kwargs, message):
    with pytest.raises(ProtocolError, match=message):
        RollingOrigin(horizon=3, stride=3, **kwargs)


def test_a_refit_period_off_the_grid_is_refused():
    panel = toy_panel(n_series=2, n_periods=48, seed=1, ragged=False)
    with pytest.raises(ProtocolError, match="refit_at=2020-01-15"):
        RollingOrigin(horizon=3, stride=3, refit_at=("2020-01-15",)).origins(panel)


def test_calibration_origins_refit_every_k_times_stride_so_their_parameters_are_as_old():
    panel = toy_panel(n_series=2, n_periods=60, seed=1, ragged=False)
    protocol = RollingOrigin(horizon=3, stride=3, n_origins=4, refit_every=2, n_calibration_origins=8)
    cal = calibration_plan(protocol, panel, min_history=12).protocol
    assert cal is not None and cal.stride == 1 and cal.refit_every == 6
    fit_ends = [o.fit_end for o in cal.origins(panel, min_history=12)]
    assert fit_ends == [fit_ends[0]] * 6 + [fit_ends[0] + 6] * 2


def test_a_leak_planted_in_an_update_raises(panel, monkeypatch):
    protocol = RollingOrigin(horizon=HORIZON, stride=HORIZON, n_origins=3, refit_every=3)
    clean = _run(panel, protocol, "auto_ets")  # fitted at the first origin, updated at the other two
    assert clean.meta["guard_checks"]["fit"] == 1
    honest = tasks.predict_history
    refit_origin = protocol.origins(panel)[0].index

    def leaky(data, rows, *, index, origin):
        # the update at a later origin is handed the history published one period after that origin
        if index == refit_origin:
            return honest(data, rows, index=index, origin=origin)
        return honest(data, rows, index=index + 1, origin=data.periods[index + 1])

    monkeypatch.setattr(tasks, "predict_history", leaky)
    with pytest.raises(LookaheadError, match="predict history is as of .* but the origin is"):
        run(panel, protocol, {"m": forecaster_factory("auto_ets")}, quantile_levels=LEVELS)


@pytest.mark.slow
@pytest.mark.parametrize("model_id", ["auto_ets", "auto_theta", "auto_arima"])
def test_the_canary_holds_when_the_calendar_updates_between_refits(model_id):
    panel = toy_panel(n_series=4, n_periods=48, seed=7, zero_share=0.25, ragged=False)
    report = assert_canary(model_id, panel, origin_index=42, horizon=3, n_origins=4, refit_every=2)
    assert report["rows"] > 0
    assert report["guard_checks"]["fit"] == 2
    assert report["guard_checks"]["predict"] == 4


@pytest.mark.slow
def test_the_audit_counts_statsforecast_models_as_learners_and_their_static_forecasts_move():
    from tycheon.analysis.sensitivity import fitted_state, run_losses, sensitivity_protocols

    panel = toy_panel(n_series=6, n_periods=60, seed=5, ragged=False)
    roster = {"naive": forecaster_factory("naive"), "auto_ets": forecaster_factory("auto_ets")}
    assert fitted_state(roster) == {"naive": False, "auto_ets": True}
    protocols = sensitivity_protocols(RollingOrigin(horizon=3, stride=3, n_origins=5), panel)
    losses = {n: run_losses(run(panel, protocols[n], roster).table, label=n) for n in ("rolling", "static")}
    for name in ("rolling", "static"):
        assert set(losses[name].model_mean) == {"naive", "auto_ets"}
    # the refit-free random walk scores the same under both; the model with fitted state does not
    assert losses["rolling"].model_mean["naive"] == losses["static"].model_mean["naive"]
    assert losses["rolling"].model_mean["auto_ets"] != losses["static"].model_mean["auto_ets"]


# --- ADIDA and IMAPA: block length(s) and SES weight(s) estimated at fit, kept at updates -----------------------


def _intermittent(seed: int, n: int = 40, t: int = 48) -> np.ndarray:
    rng = np.random.default_rng(seed)
    values = (rng.random((n, t)) < 0.35) * rng.poisson(4.0, (n, t)).astype(float)
    values[0] = 0.0  # an all-zero series: nothing to estimate
    values[1, :-1] = 0.0  # a single demand at the end
    return values


def _plain_ses(x: list[float], alpha: float) -> float:
    f = x[0]
    for v in x[:-1]:
        f = alpha * v + (1 - alpha) * f
    return alpha * x[-1] + (1 - alpha) * f if len(x) > 1 else x[0]


def _plain_adida(y: np.ndarray, level: int, alpha: float) -> float:
    """ADIDA's one-step level from a block length and a weight, written as plain loops (the oracle)."""
    lost = len(y) % level
    sums = [float(sum(y[lost + c * level : lost + (c + 1) * level])) for c in range((len(y) - lost) // level)]
    return (sums[0] if len(sums) == 1 else _plain_ses(sums, alpha)) / level


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_adida_and_imapa_updated_on_their_training_series_equal_the_estimate(seed):
    from tycheon.forecasters.kernels import smoothing as k

    values = _intermittent(seed)
    starts = np.zeros(len(values), dtype=np.int64)
    starts[2] = 20  # a late entry
    length, weight = k.adida_params(values, starts)
    assert length[0] == 0 and np.isnan(weight[0])
    np.testing.assert_array_equal(k.adida_update(values, starts, length, weight), k.adida_level(values, starts))
    top, weights = k.imapa_params(values, starts)
    np.testing.assert_array_equal(k.imapa_update(values, starts, top, weights), k.imapa_level(values, starts))


@pytest.mark.parametrize("seed", [0, 1])
def test_adida_kept_on_a_longer_series_equals_the_plain_loop_with_the_training_parameters(seed):
    from tycheon.forecasters.kernels import smoothing as k

    values = _intermittent(seed)
    starts = np.zeros(len(values), dtype=np.int64)
    length, weight = k.adida_params(values[:, :30], starts)
    kept = k.adida_update(values, starts, length, weight)
    moved = 0
    for i in range(len(values)):
        if length[i] == 0:
            continue
        y = values[i]
        nz = np.flatnonzero(y[:30]) + 1
        assert length[i] == round(float(np.mean(np.diff(np.r_[0, nz]))))  # the rounded mean interval of training
        oracle = _plain_adida(y, int(length[i]), float(weight[i]))
        assert kept[i] == pytest.approx(oracle, abs=1e-12)
        moved += abs(kept[i] - k.adida_level(values[i : i + 1], starts[i : i + 1])[0]) > 1e-9
    assert moved > 0  # keeping the training parameters is not re-estimating them


@pytest.mark.parametrize("model_id", ["adida", "imapa"])
def test_adida_and_imapa_keep_their_parameters_between_refits_and_pass_the_canary(model_id):
    panel = toy_panel(n_series=30, n_periods=48, seed=7, zero_share=0.5, ragged=True)
    every = _run(panel, RollingOrigin(horizon=3, stride=3, n_origins=4), model_id)
    kept = _run(panel, RollingOrigin(horizon=3, stride=3, n_origins=4, refit_every=4), model_id)
    assert kept.meta["guard_checks"]["fit"] == 1 and every.meta["guard_checks"]["fit"] == 4
    first = every.table["origin"] == every.table["origin"].min()
    np.testing.assert_array_equal(every.table.loc[first, "point"], kept.table.loc[first, "point"])
    assert not np.array_equal(every.table.loc[~first, "point"], kept.table.loc[~first, "point"])
    report = assert_canary(model_id, panel, origin_index=42, horizon=3, n_origins=4, refit_every=2)
    assert report["guard_checks"]["fit"] == 2


@pytest.mark.slow
def test_series_too_short_at_the_fit_are_estimated_at_their_first_origin_and_kept():
    # ragged starts: some series enter after the refit origin and have too little history to fit there
    panel = toy_panel(n_series=8, n_periods=48, seed=3, ragged=True)
    protocol = RollingOrigin(horizon=HORIZON, stride=HORIZON, first_origin=9, n_origins=10, refit_every=10)
    scores = _run(panel, protocol, "auto_ets")
    first = protocol.origins(panel)[0].index
    counts = panel.dense().n_observed(first)
    late = [sid for sid, c in zip(panel.series_ids, counts, strict=True) if c < 7]
    assert late, "the panel needs a series too short to fit at the refit origin"
    table = scores.table[scores.table["series_id"].isin(late)]
    assert len(table) > 0
    values = panel.dense().values
    for (sid, origin), rows in table.groupby(["series_id", "origin"], observed=True):
        i = list(panel.series_ids).index(sid)
        start = int(np.flatnonzero(np.isfinite(values[i]))[0])
        o = int(panel.periods.get_loc(origin))
        first_o = int(panel.periods.get_loc(table.loc[table["series_id"] == sid, "origin"].min()))
        model = _statsforecast("auto_ets", panel.season_length).fit(values[i][start:first_o])
        expected = (
            model.forward(values[i][start:o], HORIZON)["mean"] if o != first_o else model.predict(HORIZON)["mean"]
        )
        np.testing.assert_allclose(rows.sort_values("step")["point"].to_numpy(), expected, rtol=0, atol=1e-9)


@pytest.mark.parametrize("model_id", ["adida", "imapa", "auto_ets"])
def test_a_training_history_with_exited_and_late_series_fits_the_series_still_forecast(model_id):
    # s000 exits for good at month 30, before the fit at month 33; s001 exits at month 39, after it; s002 enters
    # at month 20: the training history holds all three, the engine forecasts each only while it is observed
    base = toy_panel(n_series=6, n_periods=48, seed=2, zero_share=0.3, ragged=False)
    frame = base.data[["series_id", "period", "value"]].copy()
    month = frame["period"].map({p: i for i, p in enumerate(base.periods)})
    sid = frame["series_id"]
    gone = ((sid == "s000") & (month >= 30)) | ((sid == "s001") & (month >= 39)) | ((sid == "s002") & (month < 20))
    panel = Panel.from_long(frame[~gone], freq=base.freq, name="exits")
    protocol = RollingOrigin(horizon=HORIZON, stride=HORIZON, first_origin=33, n_origins=5, refit_every=5)
    scores = run(panel, protocol, {model_id: forecaster_factory(model_id)}, quantile_levels=(), min_history=7)
    status = scores.meta["models"][model_id]
    assert status["status"] == "ran" and not status.get("failed_units"), status
    table = scores.table
    assert "s000" not in set(table["series_id"])  # exited before the fit: never forecast
    assert table.loc[table["series_id"] == "s001", "origin"].nunique() == 2  # forecast until it exits
    late = table[table["series_id"] == "s002"]
    assert late["origin"].nunique() == 5
    values = panel.dense().values[list(panel.series_ids).index("s002")]
    if model_id == "auto_ets":  # estimated at the fit (month 33) on its 13 months, kept after
        model = _statsforecast("auto_ets", panel.season_length).fit(values[20:33])
        for origin, rows in late.groupby("origin", observed=True):
            o = int(panel.periods.get_loc(origin))
            expected = model.predict(HORIZON)["mean"] if o == 33 else model.forward(values[20:o], HORIZON)["mean"]
            np.testing.assert_allclose(rows.sort_values("step")["point"].to_numpy(), expected, rtol=0, atol=1e-9)
