"""The datasets command line: list, describe, hash, and exit code 2 on bad input."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tycheon.cli import main
from tycheon.data.datasets import load
from tycheon.data.manifest import content_hash

REPO = Path(__file__).resolve().parents[1]
SMALL_OPTIONS = "{ n_entities = 40, n_periods = 24, spikiness = 1.0, seed = 3 }"


def _manifest(tmp_path: Path, sha: str) -> Path:
    path = tmp_path / "datasets.toml"
    path.write_text(
        "[datasets.synthetic_marketplace]\n"
        'source = "test"\nlicence = "MIT"\nfrequency = "MS"\nseason_length = 12\n'
        f'synthetic = true\nredistributable = true\nsha256 = "{sha}"\noptions = {SMALL_OPTIONS}\n'
        "[datasets.fpp3_prison]\n"
        'source = "test"\nlicence = "MIT"\nfrequency = "QS"\nseason_length = 4\n'
        f'synthetic = false\nredistributable = true\nsha256 = "{content_hash(load("fpp3_prison"))}"\n'
    )
    return path


def test_list_prints_one_verified_line_per_manifest_dataset(tmp_path, capsys):
    sha = content_hash(load("synthetic_marketplace", n_entities=40, n_periods=24, spikiness=1.0, seed=3))
    code = main(["datasets", "list", "--manifest", str(_manifest(tmp_path, sha))])
    out = capsys.readouterr().out.splitlines()
    assert code == 0 and len(out) == 2
    assert re.match(r"synthetic_marketplace\s+40 series\s+length\s+\d+-24\s+MS\s+m=12\s+sha256 ok\s+smooth", out[0])
    assert re.match(r"fpp3_prison\s+64 series\s+length\s+48-48\s+QS\s+m=4\s+sha256 ok", out[1])
    # prison: 61 smooth, 2 erratic, 1 intermittent of 64 (ADI/CV² on the full series)
    assert "smooth  95.3% erratic   3.1% intermit   1.6% lumpy   0.0%" in out[1]


def test_list_reports_a_hash_mismatch_on_stderr_with_exit_code_1(tmp_path, capsys):
    code = main(["datasets", "list", "--manifest", str(_manifest(tmp_path, "f" * 64))])
    captured = capsys.readouterr()
    assert code == 1
    assert "f" * 64 in captured.err and "MISMATCH" in captured.out


def test_describe_prints_counts_levels_and_horizons(capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    assert main(["datasets", "describe", "m3_quarterly"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^series\s+756$", out, re.M)
    assert re.search(r"^frequency\s+QS \(season length 4\)$", out, re.M)
    assert re.search(r"^level category\s+5 values$", out, re.M)  # M3 quarterly has no "other" series
    assert "horizon         [8] (published)" in out
    assert "LGPL-3.0-or-later" in out


def test_hash_prints_the_content_hash(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no manifest here: catalogue defaults
    assert main(["datasets", "hash", "fpp3_prison"]) == 0
    assert capsys.readouterr().out == f"{content_hash(load('fpp3_prison'))}  fpp3_prison\n"


@pytest.mark.parametrize(
    "argv",
    [["datasets", "describe", "m5"], ["datasets", "hash", "nope"], ["datasets", "frobnicate"], []],
)
def test_bad_input_exits_with_code_2_and_a_message_on_stderr(argv, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.strip()
    if argv[:2] == ["datasets", "describe"]:
        assert "unknown dataset 'm5'; known datasets:" in err and "m3_monthly" in err


def test_a_missing_explicit_manifest_exits_with_code_2(tmp_path, capsys):
    assert main(["datasets", "list", "--manifest", str(tmp_path / "absent.toml")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_the_module_runs_as_a_script(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "tycheon.cli", "datasets", "describe", "m5"],
        capture_output=True, text=True, cwd=tmp_path, check=False, timeout=120,
    )
    assert done.returncode == 2 and "unknown dataset 'm5'" in done.stderr
