"""The perf scripts run on a tiny panel and their checks can fail (no timings asserted: they are noisy)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchmarks.perf.backtest import agreement, long_frame, run_statsforecast, run_tycheon
from benchmarks.perf.common import HORIZON, N_ORIGINS, STRIDE, Comparison, build_cv_panel
from benchmarks.perf.stats_scale import make_inputs, run_stats

pytestmark = pytest.mark.slow  # whole-harness runs: outside the fast subset


@pytest.fixture(scope="module")
def tiny():
    panel = build_cv_panel(40)
    scores = run_tycheon(panel, backend="sequential", n_jobs=1)
    cv = run_statsforecast(long_frame(panel), n_jobs=1)
    return panel, scores, cv


def test_cv_panel_keeps_only_series_statsforecast_accepts(tiny):
    panel, _, _ = tiny
    assert panel.n_series == 40
    assert panel.lengths().min() > HORIZON + STRIDE * (N_ORIGINS - 1)


def test_when_the_roster_runs_on_both_sides_then_every_model_agrees_on_common_rows(tiny):
    _, scores, cv = tiny
    agree = agreement(scores, cv)
    assert set(agree) == {"naive", "seasonal_naive", "drift", "historic_mean", "croston", "croston_sba", "tsb", "ses"}
    for model, a in agree.items():
        assert a["common"] > 0, model
        assert a["disagree"] == 0, (model, a)


def test_when_a_forecast_is_perturbed_then_the_agreement_check_reports_it(tiny):
    _, scores, cv = tiny
    broken = cv.copy()
    broken["SES"] = broken["SES"] * (1 + 1e-7) + 1e-7
    agree = agreement(scores, broken)
    assert agree["ses"]["disagree"] == agree["ses"]["common"] > 0
    assert agree["naive"]["disagree"] == 0


def test_statsforecast_cutoffs_map_to_origins_one_period_later(tiny):
    _, scores, cv = tiny
    origins = set(scores.table["origin"].unique())
    mapped = set((pd.DatetimeIndex(cv["cutoff"]) + pd.offsets.MonthBegin(1)).unique())
    assert origins <= mapped


def test_stats_pass_runs_on_small_inputs_and_gives_valid_p_values():
    inputs = make_inputs(n_series=50, n_blocks=100, seed=1)
    assert inputs["losses"].shape == (50 * N_ORIGINS * HORIZON, 12)
    adjusted, friedman_p = run_stats(inputs)
    assert adjusted.shape == (11,)
    assert np.all((adjusted >= 0) & (adjusted <= 1)) and 0 <= friedman_p <= 1


def test_comparison_line_has_both_times_and_the_peer_over_tycheon_ratio():
    assert Comparison("x", 2.0, 10.0).line() == "x: tycheon=2.00s peer=10.00s speedup=5.0"
    assert Comparison("y", 2.0, None).line() == "y: tycheon=2.00s peer=n/a speedup=n/a"


def test_quick_run_of_the_whole_script_prints_one_line_per_comparison(capsys):
    from benchmarks.perf.__main__ import main

    code = main(["--quick", "--n-series", "60", "--skip", "memory", "--skip", "sktime"])
    out = capsys.readouterr().out
    assert code == 0, out
    lines = [line for line in out.splitlines() if "speedup=" in line]
    assert len(lines) == 5  # warm statsforecast (auto, joblib, sequential), cold, statistics
    targets = [line for line in out.splitlines() if "target" in line and line.rstrip().endswith(("PASS", "MISS"))]
    assert any(line.startswith("warm backtest") for line in targets)
    assert any(line.startswith("cold backtest") and "forecasts agree to 1e-9: True" in line for line in targets)
    assert "peak RSS of the cold backtest's process tree" in out and "peak RSS of this process" in out


def test_memory_check_reports_the_subprocess_own_peak_not_the_size_of_the_process_that_started_it():
    # Linux carries a forking parent's RSS into ru_maxrss across exec: with it, a 1 GiB parent made a
    # small run look like >= 1 GiB (how the perf suite once reported its own size as the backtest's)
    from benchmarks.perf.memory import measure, peak_gib

    ballast = np.ones(2**30 // 8)  # 1 GiB, touched
    if (peak_gib() or 0.0) < 1.0:
        pytest.skip("no /proc/<pid>/status VmHWM here")
    m = measure(n_series=60, backend="sequential", n_jobs=1)
    assert 0.05 < m["main_gib"] < 0.8, m
    assert m["worker_gib"] == 0.0 and m["rows"] > 0
    del ballast


def test_the_sktime_comparison_measures_both_sides_on_the_same_subsample():
    pytest.importorskip("sktime")
    from benchmarks.perf.backtest import run_tycheon
    from benchmarks.perf.common import build_cv_panel
    from benchmarks.perf.sktime_peer import compare_sktime

    panel = build_cv_panel(12)
    scores = run_tycheon(panel, backend="sequential", n_jobs=1)
    measured, extrapolated = compare_sktime(panel, scores, tycheon_s=1.0, n_series=2)
    assert measured.name.startswith("backtest_vs_sktime[same 2 series x 2 models, measured]")
    assert measured.ok and extrapolated.ok  # sktime's naive equals tycheon's on the subsample
    assert measured.peer_s > 0 and measured.tycheon_s > 0 and measured.peer_s != extrapolated.peer_s
    assert "extrapolated, not run" in extrapolated.notes[0]


def test_cold_runs_are_whole_processes_whose_forecasts_agree_and_whose_tree_memory_is_sampled():
    from benchmarks.perf.cold import compare_cold

    runs, agree = compare_cold(build_cv_panel(20), repeats=1, n_jobs=1, backend="sequential")
    for side in ("tycheon", "statsforecast"):
        (r,) = runs[side]
        assert r.rows > 0 and r.main_gib > 0 and r.tree_gib >= r.main_gib
        assert r.wall_s >= r.phases["process"] - 0.5  # the parent's wall time includes the child's start
        assert {"import", "read", "backtest"} <= set(r.phases)
    assert "from_long" in runs["tycheon"][0].phases
    assert all(a["common"] > 0 and a["disagree"] == 0 for a in agree.values())


def test_tree_memory_counts_the_children_of_a_process():
    import subprocess
    import sys
    import time

    from benchmarks.perf.cold import tree_rss_gib

    child = "b = b'x' * (200 * 2**20); import time; time.sleep(3)"
    code = f"import subprocess, sys; a = b'x' * (200 * 2**20); subprocess.run([sys.executable, '-c', {child!r}])"
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        time.sleep(2.0)
        assert tree_rss_gib(proc.pid) > 0.38  # both processes' 200 MiB
    finally:
        proc.wait()
