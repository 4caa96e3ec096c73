"""tycheon.evaluate: the plan (origins, what the data are too short for), the roster, the Evaluation API,
and the hand-over to the harness (the same tables as the published pipeline writes)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import tycheon._harness as handover
from tycheon.backtest.factories import forecaster_factory
from tycheon.backtest.guards import LookaheadError
from tycheon.backtest.isolation import IsolatedFailure
from tycheon.backtest.one_model import run_one_model
from tycheon.backtest.protocol import RollingOrigin
from tycheon.evaluation import (
    DEFAULT_MODELS,
    SLOW_MODELS,
    EvaluationError,
    EvaluationWarning,
    evaluate,
    plan_evaluation,
    probe_seconds_per_fit,
    resolve_models,
)
from tycheon.testing.toys import toy_panel

REPO = Path(__file__).resolve().parents[1]


def _user_table(n_series: int = 20, n_periods: int = 60, seed: int = 5) -> pd.DataFrame:
    """Monthly demand in the unique_id/ds/y convention plus a static 'region' column; a third of the
    series intermittent."""
    rng = np.random.default_rng(seed)
    rows = []
    months = pd.date_range("2019-01-01", periods=n_periods, freq="MS")
    for i in range(n_series):
        level = rng.uniform(5, 50)
        season = 1 + 0.3 * np.sin(2 * np.pi * np.arange(n_periods) / 12)
        y = rng.poisson(level * season).astype(float)
        if i % 3 == 0:
            y[rng.random(n_periods) < 0.6] = 0.0
        rows.append(
            pd.DataFrame({"unique_id": f"s{i:02d}", "ds": months, "y": y, "region": "north" if i % 2 else "south"})
        )
    return pd.concat(rows, ignore_index=True)


@pytest.fixture(scope="module")
def evaluation():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvaluationWarning)
        return evaluate(_user_table(), units=("series", "level:region"), n_jobs=1, n_origins=6)


def test_the_default_plan_takes_the_latest_non_overlapping_origins_that_leave_two_seasons():
    panel = toy_panel(n_series=5, n_periods=60, seed=1, ragged=False)
    plan = plan_evaluation(panel, horizon=6, n_jobs=1)
    # 60 periods, horizon 6, min history 24: origins at columns 24, 30, ..., 54 -> 6 of them
    assert plan.settings.min_history == 24 and plan.max_origins == 6
    assert len(plan.origins) == 6 and plan.origins[-1] == str(panel.periods[54].date())
    assert plan.settings.stride == plan.settings.horizon


def test_when_no_origin_fits_then_too_few_origins_says_the_span_and_what_to_change():
    panel = toy_panel(n_series=3, n_periods=20, seed=1, ragged=False)
    with pytest.raises(EvaluationError, match=r"too few origins: the data span 20 periods.*24 periods of history"):
        plan_evaluation(panel, horizon=6)


def test_when_more_origins_are_asked_than_fit_then_the_limit_is_named():
    panel = toy_panel(n_series=3, n_periods=60, seed=1, ragged=False)
    with pytest.raises(EvaluationError, match=r"too few origins: 9 asked, the data leave room for 6.*accepted: 1..6"):
        plan_evaluation(panel, horizon=6, n_origins=9)


def test_when_no_calibration_origin_fits_then_the_plan_warns_before_running_and_otherwise_says_how_many():
    # one series, first scored origin at column 16: a calibration origin needs 13 periods of history
    # (the seasonal scale) and a published horizon by the scored origin, so none fits before column 10
    short = toy_panel(n_series=1, n_periods=22, seed=1, ragged=False)
    plan = plan_evaluation(short, horizon=6, n_origins=1, min_history=16)
    assert any("too few residuals for conformal bands" in w for w in plan.warnings)
    long = toy_panel(n_series=3, n_periods=60, seed=1, ragged=False)
    plan = plan_evaluation(long, horizon=6, n_origins=4)
    assert not any("conformal bands" in w for w in plan.warnings)
    assert any("bands calibrated on 12 unscored origin(s)" in n for n in plan.notes)


def test_when_one_series_has_one_origin_then_the_plan_warns_that_there_are_no_verdicts():
    panel = toy_panel(n_series=1, n_periods=30, seed=1, ragged=False)
    plan = plan_evaluation(panel, horizon=6)
    assert any("no verdicts against the random walk and no DM p-values" in w for w in plan.warnings)


def test_many_series_at_few_origins_get_no_verdict_because_the_tests_run_over_time():
    """Series share calendar shocks: 40 series at 4 origins are 160 blocks but 4 time points."""
    panel = toy_panel(n_series=40, n_periods=60, seed=1, ragged=False)
    few = plan_evaluation(panel, horizon=6, n_origins=4)
    assert any("4 scored origin(s), fewer than the 6" in w for w in few.warnings)
    enough = plan_evaluation(panel, horizon=6, n_origins=6)
    assert not any("no verdicts against the random walk" in w for w in enough.warnings)


def test_the_roster_is_fast_by_default_and_slow_models_are_opt_in_with_their_cost_said():
    assert not set(SLOW_MODELS) & set(resolve_models("default")[0])
    assert set(SLOW_MODELS) <= set(resolve_models("all")[0])
    roster, notes = resolve_models("auto_ets,croston")
    assert roster == ("naive", "snaive_momentum", "auto_ets", "croston") and len(notes) == 2
    panel = toy_panel(n_series=4, n_periods=60, seed=1, ragged=False)
    plan = plan_evaluation(panel, horizon=6, models="auto_ets", n_jobs=2)
    cost = [line for line in plan.lines(seconds_per_fit={"auto_ets": 0.5}) if line.startswith("cost:")]
    # 4 series x 6 origins = 24 fits x 0.5 s over 2 workers = 6 s = 0.1 min
    assert cost == ["cost: auto_ets is slow: up to 24 fits, about 0.1 min on 2 worker(s) at 0.5 s per fit"]


def test_when_a_model_id_is_unknown_then_the_known_ids_are_listed():
    with pytest.raises(EvaluationError, match=r"unknown model id\(s\) \['prophet'\].*'croston'"):
        resolve_models("prophet")


def test_evaluation_gives_leaderboards_verdicts_and_a_summary_per_demand_class(evaluation):
    board = evaluation.leaderboard(unit="series", demand_class="all", metric="mase")
    assert set(board.index) == set(DEFAULT_MODELS)
    assert board["rank"].min() == 1 and board["rank"].is_monotonic_increasing
    assert board["gmean_rel_rw"].is_monotonic_increasing  # ranked on the relative error to the random walk
    assert board.attrs["n_blocks_total"] == 20 * 6
    region = evaluation.leaderboard(unit="level:region", metric="rmsse")
    assert region.attrs["n_blocks_total"] == 2 * 6
    verdicts = evaluation.verdicts()
    assert verdicts.loc["naive", "all"] is None  # the random walk is not judged against itself
    assert set(verdicts["all"].dropna()) <= {"beats", "indistinguishable", "worse"}
    classes = [t["demand_class"] for t in evaluation.tables if t["unit"] == "series" and t["metric"] == "mase"]
    every = evaluation.summary().splitlines()
    lines = [line for line in every if " inventory (" not in line]
    assert [line.split(" ")[0] for line in lines] == classes
    assert all("mase winner" in line and "rmsse winner" in line for line in lines)
    assert all("vs the random walk" in line for line in lines)
    stocked = [line for line in every if " inventory (lost sales): " in line]  # one per class with bands
    assert stocked and {line.split(" ")[0] for line in stocked} <= set(classes)
    assert evaluation.panel.levels == ("region",)  # the constant extra column became a level


def test_when_a_leaderboard_does_not_exist_then_the_existing_ones_are_listed(evaluation):
    with pytest.raises(EvaluationError, match=r"no leaderboard for unit='total'.*available"):
        evaluation.leaderboard(unit="total")


def test_the_api_warns_before_running_when_the_data_are_too_short_for_bands():
    table = _user_table(n_series=1)
    first = sorted(table["ds"].unique())[:22]
    with pytest.warns(EvaluationWarning, match="too few residuals for conformal bands"):
        evaluate(
            table[table["ds"].isin(first)],
            horizon=6,
            n_origins=1,
            min_history=16,
            n_jobs=1,
            models="naive,snaive_momentum",
        )


@pytest.mark.slow
def test_to_results_writes_the_same_tables_through_the_published_pipeline(evaluation, tmp_path):
    path = evaluation.to_results(tmp_path / "out")
    from benchmarks.results_io import validate_results_file

    assert validate_results_file(path) == []
    doc = json.loads(path.read_text())
    written = {(t["unit"], t["demand_class"], t["metric"]): t for t in doc["leaderboards"]}
    assert set(written) == {(t["unit"], t["demand_class"], t["metric"]) for t in evaluation.tables}
    for t in evaluation.tables:
        w = written[(t["unit"], t["demand_class"], t["metric"])]
        assert [(r["model"], r["rank"], r["mean"], r["verdict_vs_rw"]) for r in t["rows"]] == [
            (r["model"], r["rank"], r["mean"], r["verdict_vs_rw"]) for r in w["rows"]
        ]
    assert str(tmp_path) not in path.read_text()


def test_the_hand_over_loads_the_harness_of_this_checkout():
    module = handover.load_harness()
    assert Path(module.__file__).resolve() == REPO / "benchmarks" / "evaluate.py"


def test_without_a_checkout_the_hand_over_says_what_is_missing(monkeypatch, tmp_path):
    monkeypatch.setattr(handover, "_CHECKOUT", tmp_path)
    with pytest.raises(handover.HarnessUnavailableError, match=r"need the benchmark harness.*pip install -e"):
        handover.load_harness()


def test_blocks_left_out_for_a_zero_scale_are_counted_per_table():
    table = _user_table(n_series=6)
    zero = table["unique_id"] == "s01"
    table.loc[zero, "y"] = np.where(table.loc[zero, "ds"] >= pd.Timestamp("2023-07-01"), 3.0, 0.0)
    ev = evaluate(table, n_jobs=1, n_origins=6, models="naive,snaive_momentum,croston")
    # s01's history is all zeros at every origin (its first value is at the last origin's first target)
    for metric in ("mase", "rmsse"):
        board = ev.leaderboard(metric=metric)
        assert board.attrs["tests"]["n_zero_scale_blocks"] == 6
        assert board.attrs["n_blocks_total"] == 5 * 6
    assert ev.leaderboard(metric="mase").loc["naive", "support"] == 5 * 6


def test_the_cost_probe_times_a_few_fits_on_the_users_data():
    panel = toy_panel(n_series=6, n_periods=60, seed=1, ragged=False)
    plan = plan_evaluation(panel, horizon=6, models="ses", n_jobs=1)
    per = probe_seconds_per_fit(panel, plan, "ses", n_series=3)
    assert per is not None and 0 < per < 5


def _one_model(**kwargs):
    panel = toy_panel(n_series=4, n_periods=40, seed=1, ragged=False)
    options = dict(units=("series",), chunk_size=None, quantile_levels=(0.1, 0.5, 0.9), min_history=13)
    options.update(backend="sequential", n_jobs=1, seed=3, time_budget=None)
    protocol = RollingOrigin(horizon=6, stride=6, n_origins=2)
    return run_one_model(panel, protocol, "naive", forecaster_factory("naive"), **options, **kwargs)


def _raises(err):
    def limit(run):
        raise err

    return limit


def test_the_per_model_run_returns_the_engines_score_set_and_status():
    result = _one_model()
    assert result.error is None and result.status["status"] == "ran"
    assert result.status is result.scores.meta["models"]["naive"]
    again = _one_model(limit=lambda run: run())  # the harness's hook around the same engine call
    pd.testing.assert_frame_equal(result.scores.table, again.scores.table, check_exact=True)


def test_a_failed_per_model_run_is_recorded_with_its_reason_and_the_tail_of_its_traceback():
    err = RuntimeError("broke")
    result = _one_model(limit=_raises(err), traceback_lines=2)
    assert result.scores is None and result.error is err
    assert result.status["status"] == "failed" and result.status["reason"] == "RuntimeError: broke"
    tail = result.status["traceback"].splitlines()
    assert len(tail) == 2 and tail[-1] == "RuntimeError: broke"
    full = _one_model(limit=_raises(SystemExit(3)))
    assert full.status["reason"] == "SystemExit: 3" and len(full.status["traceback"].splitlines()) > 2


def test_an_isolated_failure_is_recorded_with_its_layers_and_an_isolated_leak_is_raised():
    layers = {"seccomp": "on"}
    result = _one_model(limit=_raises(IsolatedFailure("child died", "tb", error_type="MemoryError", layers=layers)))
    assert result.status == {"status": "failed", "reason": "child died", "traceback": "tb", "isolation": layers}
    with pytest.raises(LookaheadError, match="peeked"):
        _one_model(limit=_raises(IsolatedFailure("peeked", error_type="LookaheadError")))
    with pytest.raises(LookaheadError, match="in process"):
        _one_model(limit=_raises(LookaheadError("in process")))
