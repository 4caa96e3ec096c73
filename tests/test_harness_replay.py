"""The pipeline writes the replay and sensitivity sections: typed, validated, on the datasets the config
names, with their time recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.results_io import validate_results_file
from benchmarks.run import main as run_main

pytestmark = pytest.mark.slow  # whole-harness runs: outside the fast subset

TINY = Path(__file__).parent / "fixtures" / "tiny_benchmark.toml"


@pytest.fixture(scope="module")
def doc(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("analyses")
    text = TINY.read_text().replace("n_origins = 3", "n_origins = 5").replace("n_periods = 40", "n_periods = 48")
    text = text.replace("[[datasets]]", "[replay]\ntop_k = 2\n\n[sensitivity]\nn_resamples = 200\n\n[[datasets]]", 1)
    config = tmp / "tiny_analyses.toml"
    config.write_text(text)
    assert run_main(["--config", str(config), "--results-dir", str(tmp / "results"), "--no-cache"]) == 0
    path = tmp / "results" / "tiny" / "v0001.json"
    assert validate_results_file(path) == []
    return json.loads(path.read_text())


def test_replay_is_written_per_unit_with_the_configured_rule(doc):
    tables = {t["unit"]: t for t in doc["replay"]}
    assert set(tables) == {"series", "groups:2"}  # the total has one series: nothing to choose per series
    series = tables["series"]
    assert series["rule"]["top_k"] == 2 and series["rule"]["baseline"] == "snaive_momentum"
    overall = next(r for r in series["rows"] if r["variant"] == "all_folds" and r["demand_class"] == "all")
    assert overall["n_blocks"] > 0 and overall["oracle"] < overall["floor"]
    expect = (overall["floor"] - overall["served"]) / (overall["floor"] - overall["oracle"])
    assert overall["gap_closed"] == pytest.approx(expect)


def test_sensitivity_is_written_for_the_synthetic_dataset_with_every_run(doc):
    (table,) = doc["sensitivity"]
    assert table["dataset"] == "synthetic_marketplace" and table["unit"] == "series"
    assert [r["name"] for r in table["runs"]][:2] == ["rolling", "static"] and len(table["runs"]) == 10
    assert table["fitted_state"] == {"naive": False, "seasonal_naive": False, "snaive_momentum": False, "ses": False}
    # refit-free models: every protocol hands them the same information, so nothing moves
    assert all(c["pss_mean"] == 0.0 for c in table["comparisons"])
    assert {r["model"] for r in table["ranks"]} == {"naive", "seasonal_naive", "snaive_momentum", "ses"}
    assert "replay_seconds" in doc["provenance"]["timings"] and "sensitivity_seconds" in doc["provenance"]["timings"]
