"""The study's stage breakdown from the pipeline's stage marks (benchmarks.perf.study.stage_breakdown)."""

from __future__ import annotations

import pytest

from benchmarks.perf.study import stage_at, stage_breakdown, stage_name


def _mark(stage: str, t: float, gib: float) -> dict[str, object]:
    return {"stage": stage, "t": t, "hwm_kb": int(gib * 2**20), "rss_kb": 0}


def test_each_stage_lasts_from_the_previous_mark_and_backtests_of_every_model_count_as_one():
    marks = [
        _mark("backtest naive", 103.0, 0.5),
        _mark("backtest drift", 110.0, 0.7),
        _mark("leaderboards", 130.0, 1.5),
        _mark("backtest naive", 131.0, 0.6),  # the dial's extra backtest
        _mark("analyses", 171.5, 2.0),
    ]
    out = stage_breakdown(marks, start=100.0)
    assert list(out) == ["backtest", "leaderboards", "analyses"]
    assert out["backtest"]["seconds"] == pytest.approx(3.0 + 7.0 + 1.0)
    assert out["leaderboards"]["seconds"] == pytest.approx(20.0)
    assert out["analyses"] == {"seconds": pytest.approx(40.5), "peak_gib": pytest.approx(2.0)}
    assert out["backtest"]["peak_gib"] == pytest.approx(0.7)  # the largest of its marks, not the sum


def test_without_marks_there_is_no_stage():
    assert stage_breakdown([], start=0.0) == {}


def test_the_tree_peak_is_placed_in_the_stage_whose_span_holds_its_moment():
    timeline = [("start-up", 10.0), ("backtest", 20.0), ("leaderboards", 30.0), ("render", 40.0)]
    assert stage_at(timeline, 5.0) == "start-up"
    assert stage_at(timeline, 20.0) == "backtest"  # a stage's end belongs to it
    assert stage_at(timeline, 20.5) == "leaderboards"
    assert stage_at(timeline, 39.9) == "render"
    assert stage_at(timeline, 41.0) is None  # after the last mark: not placed
    assert stage_at(timeline, None) is None


def test_every_model_backtest_mark_is_named_backtest():
    assert stage_name("backtest naive") == "backtest"
    assert stage_name("backtesting") == "backtesting"
    assert stage_name("analyses") == "analyses"


def test_each_stage_process_is_timed_and_sampled_and_a_failure_names_its_error():
    import sys

    from benchmarks.perf.study import _sampled

    run = _sampled(
        [sys.executable, "-c", "import time; x = b'x' * 50_000_000; time.sleep(0.5); print('{}')"], timeout=60
    )
    assert run["stdout"].strip() == "{}"
    assert run["wall_s"] >= 0.5 and run["end"] >= (run["peak_at"] or 0.0)
    if sys.platform.startswith("linux"):
        assert run["peak_gib"] > 0.04  # the 50 MB it held, seen by the sampler
    with pytest.raises(RuntimeError, match="no such thing"):
        _sampled([sys.executable, "-c", "raise SystemExit('no such thing')"], timeout=60)
