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
    # prison: 61 smooth, 2 erratic, 1 intermittent of 64 (ADI/CV² on the full series). Self-pinned
    # regression value: our own demand_classes output when this test was written, no independent source
    # (tests/test_demand.py checks the classifier itself).
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
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
        timeout=120,
    )
    assert done.returncode == 2 and "unknown dataset 'm5'" in done.stderr


def _one_entry_manifest(
    tmp_path: Path, *, name: str, frequency: str, season_length: int, synthetic: bool, sha: str, options: str
) -> Path:
    path = tmp_path / "datasets.toml"
    path.write_text(
        f"[datasets.{name}]\n"
        f'source = "test"\nlicence = "MIT"\nfrequency = "{frequency}"\nseason_length = {season_length}\n'
        f'synthetic = {str(synthetic).lower()}\nredistributable = true\nsha256 = "{sha}"\n'
        f"options = {options}\n"
    )
    return path


@pytest.mark.parametrize("action", [["list"], ["describe", "synthetic_marketplace"], ["hash", "synthetic_marketplace"]])
def test_when_manifest_options_are_refused_by_the_generator_then_exit_code_is_2(action, tmp_path, capsys):
    path = _one_entry_manifest(
        tmp_path,
        name="synthetic_marketplace",
        frequency="MS",
        season_length=12,
        synthetic=True,
        sha="0" * 64,
        options="{ n_entities = -3 }",
    )
    assert main(["datasets", *action, "--manifest", str(path)]) == 2
    assert "tycheon: error: n_entities must be a positive integer, got -3" in capsys.readouterr().err


def test_when_manifest_asks_fpp3_for_a_value_column_it_lacks_then_exit_code_is_2(tmp_path, capsys):
    path = _one_entry_manifest(
        tmp_path,
        name="fpp3_prison",
        frequency="QS",
        season_length=4,
        synthetic=False,
        sha="0" * 64,
        options='{ value = "cost" }',
    )
    assert main(["datasets", "describe", "fpp3_prison", "--manifest", str(path)]) == 2
    assert "fpp3 'prison' has no value column 'cost'; accepted: ['count']" in capsys.readouterr().err


def test_when_a_competition_loader_refuses_its_subset_then_exit_code_is_2(monkeypatch, tmp_path, capsys):
    # No catalogue name reaches an unknown subset today (names fix competition and subset); the loader's
    # own error is still bad input if a catalogue entry ever names one.
    from tycheon.data.competitions import load_competition

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("tycheon.cli.load", lambda name, **options: load_competition("m3", "weekly"))
    assert main(["datasets", "hash", "m3_monthly"]) == 2
    assert "M3 has no subset 'weekly'; accepted:" in capsys.readouterr().err


def test_when_one_entry_disagrees_with_its_frequency_then_list_marks_that_row_and_goes_on(tmp_path, capsys):
    sha = content_hash(load("synthetic_marketplace", n_entities=40, n_periods=24, spikiness=1.0, seed=3))
    path = _manifest(tmp_path, sha)
    text = path.read_text().replace('frequency = "MS"', 'frequency = "QS"', 1)  # the synthetic entry
    path.write_text(text)
    code = main(["datasets", "list", "--manifest", str(path)])
    captured = capsys.readouterr()
    out = captured.out.splitlines()
    assert code == 1 and len(out) == 2
    assert re.match(r"synthetic_marketplace\s+40 series.*\s+INVALID\s", out[0])
    assert re.match(r"fpp3_prison\s+64 series.*sha256 ok", out[1])
    assert "frequency is 'QS' in the manifest but 'MS' in the data" in captured.err
