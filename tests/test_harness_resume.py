"""A killed run continues from its cache: every finished (dataset, protocol, model) prints one progress line
and is kept, so the rerun takes it from the cache and writes the same results as an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.results_io import strip_volatile
from benchmarks.run import main as run_main

pytestmark = pytest.mark.slow  # whole-harness runs in subprocesses

REPO = Path(__file__).resolve().parent.parent
TINY = Path(__file__).parent / "fixtures" / "tiny_benchmark.toml"
SKIP_REASON = "test: left out of this block"


def _config(tmp_path: Path) -> Path:
    text = TINY.read_text().replace(
        'models = ["naive", "seasonal_naive", "snaive_momentum", "ses"]',
        'models = ["naive", "seasonal_naive", "snaive_momentum", "ses", "theta_classic", "naive2"]',
    )
    text = text.replace("subsample = 6\n", f'subsample = 6\nskip_models = {{ ses = "{SKIP_REASON}" }}\n')
    path = tmp_path / "tiny.toml"
    path.write_text(text)
    return path


def _args(tmp_path: Path, config: Path, run: str) -> list[str]:
    return ["--config", str(config), "--results-dir", str(tmp_path / run), "--cache-dir", str(tmp_path / "cache")]


def _progress(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("[benchmarks.run] ") and " done, " in line]


def _comparable(path: Path) -> dict:
    doc = strip_volatile(json.loads(path.read_text()))
    doc.pop("version")
    for key in ("git_commit", "git_dirty", "code_sha256"):
        doc["provenance"].pop(key)
    return doc


def test_when_a_run_is_killed_then_the_rerun_continues_from_the_finished_models(tmp_path, capsys):
    config = _config(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.run", *_args(tmp_path, config, "killed")],
        cwd=REPO,
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        if " done, " in line:
            seen.append(line.strip())
        if len(seen) == 2:
            proc.send_signal(signal.SIGKILL)  # no chance to clean up: what is kept is what was finished
            break
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert not list((tmp_path / "killed").rglob("v*.json"))  # a killed run writes no results version
    finished = [line.split(": ", 1)[1].split(" ")[0] for line in seen]
    assert finished == [
        "synthetic_marketplace/rolling_origin/naive",
        "synthetic_marketplace/rolling_origin/seasonal_naive",
    ]
    assert all("ran (computed," in line for line in seen)

    assert run_main(_args(tmp_path, config, "resumed")) == 0
    lines = _progress(capsys.readouterr().err)
    by_label = {line.split(": ", 1)[1].split(" ")[0]: line for line in lines}
    for label in finished:
        assert "ran (cache," in by_label[label]  # taken from the killed run's cache, not refitted
    assert "ran (computed," in by_label["synthetic_marketplace/rolling_origin/theta_classic"]
    assert f"skipped (skipped, model 0.0 s): left out here: {SKIP_REASON}" in by_label["m3_monthly/competition/ses"]
    assert len(lines) == len(by_label) == 6 * 2  # one line per (dataset, protocol, model)

    assert run_main([*_args(tmp_path, config, "fresh"), "--no-cache"]) == 0
    resumed = tmp_path / "resumed" / "tiny" / "v0001.json"
    assert _comparable(resumed) == _comparable(tmp_path / "fresh" / "tiny" / "v0001.json")
    ses = next(m for m in json.loads(resumed.read_text())["models"] if m["id"] == "ses")
    comp = next(r for r in ses["runs"] if r["protocol"] == "competition")
    assert comp["status"] == "skipped" and comp["reason"] == f"left out here: {SKIP_REASON}"
