"""The competition cost script runs on a few series and reports every model and AutoARIMA's profile (its
timings are noisy and not asserted; its structure and the profile's shares are)."""

from __future__ import annotations

import pytest

from benchmarks.perf.competition_cost import main

pytestmark = pytest.mark.slow  # fits AutoARIMA


def test_the_cost_script_reports_each_model_its_peer_and_where_arima_time_goes(capsys):
    args = ["--dataset", "m3_other", "--n-series", "4", "--models", "naive,theta_classic,auto_arima"]
    assert main([*args, "--profile-arima", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "m3_other: 4 series, horizon 8"
    rows = {line.split()[0]: line.split() for line in lines[2:5]}
    assert set(rows) == {"naive", "theta_classic", "auto_arima"}
    assert all(r[1] == "ran" for r in rows.values())
    assert rows["naive"][4] == "-" and float(rows["auto_arima"][5]) > 0  # statsforecast is the peer of auto_arima
    profile = {line.split()[1].rstrip(":"): float(line.split()[2]) for line in lines[5:]}
    assert profile["series"] == 2 and profile["candidate_fits_per_series"] >= 1
    for share in ("share_cpp_likelihood", "share_finite_difference_gradients"):
        assert 0 < profile[share] < 1
