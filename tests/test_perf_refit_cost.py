"""The refit-cost perf script runs end to end on a small panel and prints one line per (model, calendar)."""

from __future__ import annotations

import pytest

from benchmarks.perf.refit_cost import CALENDARS, main


@pytest.mark.slow
def test_quick_mode_prints_every_calendar_against_refitting_at_every_origin(capsys):
    assert main(["--quick"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("refit cost on fpp3_tourism (12 series)")
    body = lines[1:]
    assert len(body) == 2 * len(CALENDARS)
    for model in ("auto_ets", "adida"):
        mine = [line for line in body if line.startswith(model)]
        assert [line.split()[1] for line in mine] == ["every", "every", "every", "once"]
        assert "refits 6" in mine[0] and "(x1.00)" in mine[0] and "(+0.00%)" in mine[0]
        assert "refits 1" in mine[-1]
