"""Probe: a dataset marked not redistributable never reaches a file that is committed or published.

Its score parts hold the series ids, the actuals and every forecast (a random walk's forecast is the last
actual), so they are *private*: listed in the version but kept in ``private-parts/``, which git ignores, the
results workflow never commits and validation refuses to see in ``parts/``."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks.results_io import validate_results_file
from benchmarks.run import main as run_main
from benchmarks.score_parts import PARTS_DIR, PRIVATE_DIR
from benchmarks.validate import verify_file

ROOT = Path(__file__).resolve().parents[2]
IDS = ("SECRETPARTALPHA", "SECRETPARTBRAVO", "SECRETPARTCHARLIE")
HEADER = """name = "mine"
seed = 1
horizon = 3
stride = 3
n_origins = 3
min_history = 12
quantile_levels = [0.1, 0.5, 0.9]
metrics = ["mase"]
models = ["naive", "snaive_momentum", "ses"]
n_jobs = 1
backend = "sequential"

[[datasets]]
name = "synthetic_marketplace"
options = { n_entities = 6, n_periods = 40, seed = 3 }
units = ["series"]

[[datasets]]
name = "parts"
units = ["series", "total"]

[datasets.file]
path = "parts.csv"
id = "part"
time = "month"
target = "units_sold"
"""


def _write(tmp_path: Path, redistributable: bool) -> Path:
    months = pd.date_range("2021-01-01", periods=30, freq="MS")
    values = np.random.default_rng(5).poisson(40, 90) + 0.123456789
    pd.DataFrame({"part": np.repeat(IDS, 30), "month": np.tile(months, 3), "units_sold": values}).to_csv(
        tmp_path / "parts.csv", index=False
    )
    config = tmp_path / "mine.toml"
    config.write_text(HEADER + f"redistributable = {str(redistributable).lower()}\n")
    return config


def _run(tmp_path: Path, redistributable: bool) -> Path:
    config = _write(tmp_path, redistributable)
    results = tmp_path / "results"
    assert run_main(["--config", str(config), "--results-dir", str(results), "--no-cache"]) == 0
    return results / "mine"


def _published(folder: Path) -> list[Path]:
    """What the results workflow would commit: version files and parts/ (private-parts/ is not listed)."""
    return [p for p in folder.rglob("*") if p.is_file() and PRIVATE_DIR not in p.parts]


@pytest.mark.slow
def test_a_not_redistributable_dataset_keeps_its_ids_and_values_out_of_every_published_file(tmp_path):
    folder = _run(tmp_path, redistributable=False)
    doc = json.loads((folder / "v0001.json").read_text())
    mine = [p for p in doc["scores"]["parts"] if p["dataset"] == "parts"]
    theirs = [p for p in doc["scores"]["parts"] if p["dataset"] != "parts"]
    assert mine and all(p.get("private") is True for p in mine)
    assert theirs and not any(p.get("private") for p in theirs)
    for part in mine:
        assert (folder / PRIVATE_DIR / f"{part['sha256']}.parquet").is_file()
        assert not (folder / PARTS_DIR / f"{part['sha256']}.parquet").exists()
    for path in _published(folder):
        data = path.read_bytes()
        for series in IDS:
            assert series.encode() not in data, f"{series} is in {path}"
    # the machine that ran it verifies every table, its private ones too
    assert verify_file(folder / "v0001.json") == ([], None)
    # a clone has no private-parts/: still valid, the public dataset's tables recomputed
    shutil.rmtree(folder / PRIVATE_DIR)
    problems, note = verify_file(folder / "v0001.json")
    assert problems == []
    assert note is not None and note.startswith("tables of parts not recomputed here: not redistributable")


@pytest.mark.slow
def test_a_private_part_copied_into_parts_or_listed_as_public_is_refused(tmp_path):
    folder = _run(tmp_path, redistributable=False)
    version = folder / "v0001.json"
    doc = json.loads(version.read_text())
    part = next(p for p in doc["scores"]["parts"] if p.get("private"))
    shutil.copy(folder / PRIVATE_DIR / f"{part['sha256']}.parquet", folder / PARTS_DIR)
    (problem,) = validate_results_file(version)
    assert f"private score part {folder / PARTS_DIR / part['sha256']}.parquet of parts" in problem
    assert "would be committed and published" in problem
    (folder / PARTS_DIR / f"{part['sha256']}.parquet").unlink()
    del part["private"]
    version.write_text(json.dumps(doc))
    problems = validate_results_file(version)
    assert any("parts, which is not redistributable, is listed as public" in p for p in problems)


@pytest.mark.slow
def test_a_redistributable_user_file_is_published_as_before(tmp_path):
    folder = _run(tmp_path, redistributable=True)
    doc = json.loads((folder / "v0001.json").read_text())
    assert not any(p.get("private") for p in doc["scores"]["parts"])
    assert not (folder / PRIVATE_DIR).exists()


def test_git_ignores_private_parts_and_the_results_workflow_never_commits_them():
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", f"benchmarks/results/small/{PRIVATE_DIR}/{'0' * 64}.parquet"], cwd=ROOT
    )
    assert ignored.returncode == 0
    workflow = (ROOT / ".github" / "workflows" / "results.yml").read_text()
    assert f"*/{PRIVATE_DIR}/*) echo" in workflow
