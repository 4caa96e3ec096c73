"""A submission end to end on a temporary copy of the repository, as the pull-request workflow runs it:
commit a new config for an existing forecaster with new parameters, list the changed configs from the git
diff, check them (valid -> run on a tiny benchmark, the other models from the cache -> new results version
-> rendered site) and read the model on its leaderboard pages."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.results_io import validate_results_file
from tests._shared import leaderboard_panel

pytestmark = pytest.mark.slow  # whole-harness runs: outside the fast subset

ROOT = Path(__file__).resolve().parent.parent

TINY = """\
name = "tiny_submit"
description = "Submission test: a small synthetic panel, three origins, three baselines."
seed = 5
horizon = 3
stride = 3
n_origins = 3
min_history = 12
quantile_levels = [0.1, 0.5, 0.9]
metrics = ["mase"]
models = ["naive", "seasonal_naive", "snaive_momentum"]
random_walk = "naive"
production_baseline = "snaive_momentum"

[[datasets]]
name = "synthetic_marketplace"
options = { n_entities = 12, n_periods = 36, seed = 3 }
units = ["series"]
"""

SUBMISSION = """\
id = "moving_average_6"
display_name = "Moving average over six months"
family = "baseline"
licence = "MIT"
contributor = "a contributor"
tags = ["baseline"]

[source]
kind = "tycheon"
forecaster = "moving_average"

[params]
window = 6
"""


def _sh(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
        "NO_MKDOCS_2_WARNING": "1",
    }
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, timeout=240)


@pytest.fixture(scope="module")
def submission(tmp_path_factory):
    repo = tmp_path_factory.mktemp("repo")
    ignore = shutil.ignore_patterns("__pycache__", ".cache", "results", "*.pyc")
    for part in ("tycheon", "benchmarks", "templates"):
        shutil.copytree(ROOT / part, repo / part, ignore=ignore)
    (repo / "benchmarks" / "configs" / "tiny_submit.toml").write_text(TINY)
    py = [sys.executable, "-m"]
    base = _sh([*py, "benchmarks.run", "--config", "tiny_submit"], repo)  # the committed results, v0001
    assert base.returncode == 0, base.stderr
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "base"]):
        assert _sh(cmd, repo).returncode == 0
    (repo / "benchmarks" / "models" / "moving_average_6.toml").write_text(SUBMISSION)
    for cmd in (["git", "add", "-A"], ["git", "commit", "-qm", "submit moving_average_6"]):
        assert _sh(cmd, repo).returncode == 0
    changed = _sh([*py, "benchmarks.submit", "changed", "--base", "HEAD^1"], repo)
    files = changed.stdout.split()
    check = _sh(
        [
            *py,
            "benchmarks.submit",
            "check",
            *files,
            "--config",
            "tiny_submit",
            "--summary",
            str(repo / "step_summary.md"),
        ],
        repo,
    )
    return repo, changed, check


def test_the_diff_names_exactly_the_submitted_config(submission):
    _, changed, _ = submission
    assert changed.returncode == 0, changed.stderr
    assert changed.stdout.split() == ["benchmarks/models/moving_average_6.toml"]


def test_the_check_accepts_the_submission(submission):
    _, _, check = submission
    assert check.returncode == 0, check.stdout + check.stderr
    assert "## Submission check: accepted" in check.stdout


def test_a_new_results_version_follows_the_committed_one_and_validates(submission):
    repo, _, _ = submission
    results = repo / "build" / "submit" / "results" / "tiny_submit"
    committed = repo / "benchmarks" / "results" / "tiny_submit" / "v0001.json"
    assert (results / "v0001.json").read_bytes() == committed.read_bytes()
    assert validate_results_file(results / "v0002.json") == []
    assert not (repo / "benchmarks" / "results" / "tiny_submit" / "v0002.json").exists()


def test_only_the_submitted_model_is_computed_the_rest_comes_from_the_cache(submission):
    repo, _, _ = submission
    doc = json.loads((repo / "build" / "submit" / "results" / "tiny_submit" / "v0002.json").read_text())
    assert doc["provenance"]["cache"] == {
        "synthetic_marketplace/rolling_origin/moving_average_6": "computed",
        "synthetic_marketplace/rolling_origin/naive": "cache",
        "synthetic_marketplace/rolling_origin/seasonal_naive": "cache",
        "synthetic_marketplace/rolling_origin/snaive_momentum": "cache",
    }
    entry = next(m for m in doc["models"] if m["id"] == "moving_average_6")
    assert entry["params"] == {"window": 6} and [r["status"] for r in entry["runs"]] == ["ran"]
    assert doc["config"]["models"] == ["naive", "seasonal_naive", "snaive_momentum", "moving_average_6"]
    board = next(lb for lb in doc["leaderboards"] if lb["demand_class"] == "all")
    assert {r["model"] for r in board["rows"]} == set(doc["config"]["models"])


def test_the_rendered_leaderboard_shows_the_model_and_the_summary_gives_its_place(submission):
    repo, _, check = submission
    docs = repo / "build" / "submit" / "site" / "docs"
    page = (
        docs
        / "benchmarks"
        / "tiny_submit"
        / "synthetic_marketplace"
        / "rolling_origin"
        / "series"
        / "leaderboard-all.md"
    )
    assert "Moving average over six months" in leaderboard_panel(page, "mase")
    assert "Moving average over six months" in (docs / "models" / "moving_average_6.md").read_text()
    doc = json.loads((repo / "build" / "submit" / "results" / "tiny_submit" / "v0002.json").read_text())
    row = next(
        r
        for lb in doc["leaderboards"]
        if lb["demand_class"] == "all"
        for r in lb["rows"]
        if r["model"] == "moving_average_6"
    )
    assert f"| synthetic_marketplace | series | mase | {row['rank']} of 4 |" in check.stdout
    summary = (repo / "step_summary.md").read_text()
    assert summary == (repo / "build" / "submit" / "summary.md").read_text() + "\n"
