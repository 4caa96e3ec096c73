"""The fitted-roster audit perf script runs end to end on a small panel and prints its report lines."""

from __future__ import annotations

import pytest

from benchmarks.perf.audit_fitted import main


@pytest.mark.slow
def test_quick_mode_prints_the_between_and_within_pss_and_each_runs_losses(capsys):
    assert main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("audit on synthetic_marketplace: 12 series, 4 models, K=10 runs")
    lines = out.splitlines()
    assert sum(line.startswith("between ") for line in lines) == 1
    assert sum(line.startswith("within ") for line in lines) == 8
    assert "attribution static" in out and "attribution rolling" in out
    table = out.split("rolling and static runs:\n")[1].splitlines()
    naive = next(line for line in table if line.startswith("naive"))
    assert naive.split()[-1] == "0.0000"  # a refit-free model scores the same in both runs
