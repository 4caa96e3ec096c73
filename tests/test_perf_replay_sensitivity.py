"""The replay + sensitivity perf mode runs end to end on a small panel and prints its report lines."""

from __future__ import annotations

import pytest

from benchmarks.perf.replay_sensitivity import main


@pytest.mark.slow
def test_quick_mode_prints_timings_replay_and_sensitivity(capsys):
    assert main(["--quick", "--n-series", "120", "--n-jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "replay+sensitivity analysis:" in out and "K=10 runs" in out
    assert "gap closed" in out and "between PSS" in out
