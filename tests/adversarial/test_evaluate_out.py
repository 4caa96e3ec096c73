"""Probes on ``tycheon evaluate --out`` and ``python -m benchmarks.validate``: the output folder is tycheon's
own (a marker, a manifest of what it wrote, a lock), a run that cannot rank writes nothing, bad options and
OS errors are one line with exit code 2, a copied results file is no version, and no user-given text
reaches the terminal raw."""

from __future__ import annotations

import errno
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks.evaluate import MARKER, OutputFolderError
from benchmarks.owned_dir import OwnedFolder
from benchmarks.run_guard import results_lock
from benchmarks.validate import main as validate_main
from benchmarks.validate import verify_file
from tycheon.cli import main

REPO = Path(__file__).resolve().parents[2]
OSC52 = "\x1b]52;c;aGk=\x07"


def _csv(tmp_path: Path, name: str = "sales.csv") -> Path:
    months = pd.date_range("2020-01-01", periods=40, freq="MS")
    frame = pd.DataFrame(
        {"sku": np.repeat(["p0", "p1", "p2"], 40), "month": np.tile(months, 3), "qty": np.arange(120.0) % 7}
    )
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def _evaluate(tmp_path: Path, out: Path, *extra: str, site: bool = False, file: Path | None = None) -> int:
    file = file or _csv(tmp_path)
    args = ["evaluate", str(file), "--id", "sku", "--time", "month", "--target", "qty", "--jobs", "1"]
    args += ["--models", "naive,snaive_momentum", "--no-progress", "--out", str(out), *extra]
    return main(args if site else [*args, "--no-site"])


def _error_line(capsys) -> str:
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert lines and lines[-1].startswith(("tycheon: error:", "tycheon evaluate: error:")), lines
    assert not any(line.startswith("Traceback") for line in lines)
    return lines[-1]


@pytest.fixture
def backtests(monkeypatch) -> list:
    """The backtests a run starts (``tycheon.backtest.engine.run`` calls): none, where it refuses first."""
    from tycheon.backtest import engine

    started: list = []
    monkeypatch.setattr(engine, "run", lambda *args, **kwargs: started.append(args) or pytest.fail("a backtest ran"))
    return started


def _owned(out: Path) -> OwnedFolder:
    return OwnedFolder(out, marker=MARKER, writer="tycheon evaluate", option="--out", error=OutputFolderError)


def test_when_out_holds_files_tycheon_did_not_write_then_the_run_is_refused_and_they_survive(tmp_path, capsys):
    out = tmp_path / "mine"
    (out / "config").mkdir(parents=True)
    (out / "config" / "base.toml").write_text("mine = true\n")
    assert _evaluate(tmp_path, out) == 2
    line = _error_line(capsys)
    assert f"--out {out} holds files tycheon evaluate did not write" in line and "Point --out at a new" in line
    assert (out / "config" / "base.toml").read_text() == "mine = true\n"
    assert sorted(p.name for p in out.iterdir()) == ["config"]


def test_when_a_user_file_was_added_to_an_owned_site_then_the_run_refuses_before_computing(tmp_path, capsys, backtests):
    out = tmp_path / "out"
    _owned(out).claim()
    photo = out / "site" / "site" / "photos" / "cat.jpg"
    photo.parent.mkdir(parents=True)
    photo.write_bytes(b"\xff\xd8 a cat")
    (out / "config").mkdir()
    (out / "config" / "base.toml").write_text("mine = true\n")  # not a path tycheon replaces: left alone
    assert _evaluate(tmp_path, out, site=True) == 2
    assert backtests == []  # refused before any model ran (a check of the folder, not of the clock)
    line = _error_line(capsys)
    assert f"{photo} was not written by tycheon evaluate; refusing to replace or remove it" in line
    assert photo.read_bytes() == b"\xff\xd8 a cat"
    assert not (out / "results").exists() and not (out / "config" / "sales.toml").exists()


def test_when_out_is_a_file_then_one_line_with_exit_code_2(tmp_path, capsys):
    out = tmp_path / "notes.txt"
    out.write_text("keep me")
    assert _evaluate(tmp_path, out) == 2
    assert f"--out {out} is a file, not a folder" in _error_line(capsys)
    assert out.read_text() == "keep me"


def test_a_second_run_into_a_locked_out_fails_fast_naming_the_folder(tmp_path, capsys, backtests):
    out = tmp_path / "out"
    _owned(out).claim()
    with results_lock(out):
        t0 = time.monotonic()
        assert _evaluate(tmp_path, out) == 2
        assert time.monotonic() - t0 < 60  # does not wait for the lock (a wait would never end: it is ours)
    assert backtests == []  # refused before any model ran
    line = _error_line(capsys)
    assert f"another run (pid {os.getpid()}) is writing to {out}" in line
    assert not (out / "config").exists()


@pytest.mark.parametrize(
    ("option", "value", "named", "accepted"),
    [
        ("--units", "bogus", "bogus", "accepted: comma-separated series, total, level:COLUMN"),
        ("--units", "series,level:", "level:", "accepted: comma-separated series, total, level:COLUMN"),
        ("--freq", "XX", "XX", "accepted: a period-start alias such as MS"),
        ("--time-budget", "-1", "-1", "accepted: a finite number of seconds >= 1"),
        ("--time-budget", "0", "0", "accepted: a finite number of seconds >= 1"),
        ("--time-budget", "nan", "nan", "accepted: a finite number of seconds >= 1"),
        ("--time-budget", "inf", "inf", "accepted: a finite number of seconds >= 1"),
        ("--time-budget", "1e-9", "1e-9", "accepted: a finite number of seconds >= 1"),
    ],
)
def test_a_bad_option_is_named_before_anything_is_read(option, value, named, accepted, tmp_path, capsys):
    missing = tmp_path / "not-there.csv"  # never read: the option is checked first
    assert _evaluate(tmp_path, tmp_path / "out", option, value, file=missing) == 2
    line = _error_line(capsys)
    assert line.startswith(f"tycheon evaluate: error: argument {option}: {named!r}") and accepted in line
    assert not (tmp_path / "out").exists()


def test_a_level_unit_the_file_lacks_is_named_against_units(tmp_path, capsys):
    assert _evaluate(tmp_path, tmp_path / "out", "--units", "series,level:region") == 2
    line = _error_line(capsys)
    assert "--units 'level:region': 'region' is not a level of sales.csv; accepted levels: []" in line
    assert not (tmp_path / "out").exists()


def test_a_run_whose_random_walk_failed_writes_nothing_and_exits_1(tmp_path, capsys, monkeypatch):
    from tests.adversarial._models import Crash
    from tycheon.forecasters import registry

    monkeypatch.setitem(registry._REGISTRY, "naive", Crash)
    out = tmp_path / "out"
    assert _evaluate(tmp_path, out) == 1
    line = _error_line(capsys)
    assert "nothing written; this run cannot rank: the random walk 'naive' failed on sales" in line
    assert "crashed on purpose" in line
    assert not (out / "results").exists() and not (out / "config" / "sales.toml").exists()


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into read-only folders")
def test_an_out_in_a_read_only_folder_is_one_line_naming_the_path(tmp_path, capsys):
    parent = tmp_path / "ro"
    parent.mkdir()
    parent.chmod(0o500)
    try:
        assert _evaluate(tmp_path, parent / "out") == 2
    finally:
        parent.chmod(0o700)
    line = _error_line(capsys)
    assert f"cannot write {parent / 'out'}: Permission denied (EACCES)" in line


def test_a_permission_error_claiming_out_is_one_line_naming_the_path(tmp_path, capsys, monkeypatch):
    # the read-only probe for a root account (root writes into 0o500 folders): the OS refuses the mkdir
    def refuse(self, *args, **kwargs):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))

    out = tmp_path / "out"
    monkeypatch.setattr(Path, "mkdir", refuse)
    assert _evaluate(tmp_path, out) == 2
    monkeypatch.undo()
    assert f"cannot write {out}: Permission denied (EACCES); no results version was written" in _error_line(capsys)
    assert not out.exists()


def test_a_full_disk_while_writing_results_leaves_no_version_and_no_config(tmp_path, capsys, monkeypatch):
    def full(body, sidecar, *, results_dir):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(results_dir / "sales" / "v0001.json"))

    monkeypatch.setattr("benchmarks.evaluate.write_results", full)
    out = tmp_path / "out"
    assert _evaluate(tmp_path, out) == 2
    line = _error_line(capsys)
    assert f"cannot write {out / 'results' / 'sales' / 'v0001.json'}: No space left on device (ENOSPC)" in line
    assert not (out / "config" / "sales.toml").exists() and not (out / "results").exists()


def test_a_full_disk_while_rendering_leaves_no_partial_site(tmp_path, capsys, monkeypatch):
    def full(*, results_dir, out):
        out.mkdir(parents=True)
        (out / "index.md").write_text("# half a pa")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(out / "index.md"))

    monkeypatch.setattr("benchmarks.evaluate.render_site", full)
    out = tmp_path / "out"
    assert _evaluate(tmp_path, out, site=True) == 2
    line = _error_line(capsys)
    assert "No space left on device (ENOSPC)" in line and "the site was not" in line
    assert not (out / "site").exists() and not (out / ".site-staging").exists()
    assert (out / "results" / "sales" / "v0001.json").is_file()  # complete, and said so in the line


def test_a_results_file_not_named_as_a_version_is_refused_with_the_expected_name(tmp_path, capsys):
    source = next(REPO.glob("benchmarks/results/*/v0001.json"))
    copy = tmp_path / "results" / source.parent.name / "v0001 (copy).json"
    copy.parent.mkdir(parents=True)
    shutil.copy(source, copy)
    problems, _ = verify_file(copy)
    assert problems == [
        f"{copy}: 'v0001 (copy).json' is not a version name; a results version is "
        "results/<benchmark>/vNNNN.json (e.g. v0001.json)"
    ]
    assert validate_main([str(copy)]) == 1
    assert capsys.readouterr().out.startswith(f"INVALID {copy}\n")


def test_terminal_escapes_in_a_file_name_or_an_argument_are_shown_escaped(tmp_path, capsys):
    hostile = tmp_path / f"s{OSC52}.csv"
    assert _evaluate(tmp_path, tmp_path / "out", file=hostile) == 2
    line = _error_line(capsys)
    assert "\\x1b]52;c;aGk=\\x07.csv" in line and "\x1b" not in line and "\x07" not in line
    assert _evaluate(tmp_path, tmp_path / "out", "\x1b[2J") == 2  # argparse quotes this one as given
    err = capsys.readouterr().err
    assert "error: unrecognized arguments: \\x1b[2J" in err and "\x1b" not in err


def test_validate_output_shows_terminal_escapes_escaped(tmp_path, capsys):
    path = tmp_path / f"v0001{OSC52}.json"
    path.write_text("{}")
    assert validate_main([str(path)]) == 1
    out = capsys.readouterr().out
    assert "v0001\\x1b]52;c;aGk=\\x07.json" in out and "\x1b" not in out and "\x07" not in out
