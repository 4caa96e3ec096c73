"""The analyses perf script runs end to end on its quick preset (timings are not asserted: they are noisy)."""

from __future__ import annotations

import pytest

from benchmarks.perf.analyses import main


@pytest.mark.slow
def test_the_quick_preset_runs_every_analysis_and_reports_against_the_targets(capsys):
    assert main(["--quick", "--sweep-series", "60", "--n-jobs", "1"]) == 0
    out = capsys.readouterr().out
    for step in (
        "unit inversion",
        "aggregation dial",
        "class winners",
        "uncertainty",
        "horizon robustness",
        "relative error",
        "spikiness sweep",
        "peak RSS",
    ):
        assert step in out, step
    assert "analyses add" in out and "target <= 60s: met" in out
