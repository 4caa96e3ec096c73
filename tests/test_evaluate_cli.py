"""``tycheon evaluate FILE``: every bad input a user meets is one line on stderr with exit code 2 (``--debug``
shows the traceback), and a real panel goes end to end into a validated results file and a strictly built
site with no absolute path in any output file."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tycheon.cli import main
from tycheon.data.datasets import load

REPO = Path(__file__).resolve().parents[1]
CLASSES = ("all", "smooth", "erratic", "intermittent", "lumpy")


def _table(n_series: int = 4, n_periods: int = 40) -> pd.DataFrame:
    months = pd.date_range("2020-01-01", periods=n_periods, freq="MS")
    return pd.DataFrame(
        {
            "sku": np.repeat([f"p{i}" for i in range(n_series)], n_periods),
            "month": np.tile(months, n_series),
            "qty": np.arange(n_series * n_periods, dtype=float) % 7,
        }
    )


def _run(tmp_path: Path, frame: pd.DataFrame, *extra: str, capsys) -> tuple[int, str]:
    path = tmp_path / "sales.csv"
    frame.to_csv(path, index=False)
    code = main(
        [
            "evaluate",
            str(path),
            "--id",
            "sku",
            "--time",
            "month",
            "--target",
            "qty",
            "--no-site",
            "--jobs",
            "1",
            "--out",
            str(tmp_path / "out"),
            *extra,
        ]
    )
    return code, capsys.readouterr().err


def _edit(frame: pd.DataFrame, fn) -> pd.DataFrame:
    frame = frame.copy()
    fn(frame)
    return frame


def _bool_target(f: pd.DataFrame) -> None:
    f["qty"] = f["qty"] > 2


def _mixed_zones(f: pd.DataFrame) -> None:
    stamps = f["month"].dt.strftime("%Y-%m-%dT00:00:00+00:00").astype(object)
    stamps.iloc[3] = "2020-04-01T00:00:00+02:00"
    f["month"] = stamps


def _weekly_series(f: pd.DataFrame) -> None:
    f.loc[f["sku"] == "p3", "month"] = pd.date_range("2020-01-06", periods=40, freq="W-MON")


BAD_INPUT = [
    (
        "nan_under_raise",
        lambda f: f.__setitem__("qty", f["qty"].where(f.index != 5)),
        (),
        r"NaN value\(s\) under nan_policy='raise', the first in series 'p0' at period 2020-06-01",
    ),
    (
        "bad_column",
        None,
        ("--target", "amount"),
        r"missing column\(s\) \['amount'\]; the file has \['sku', 'month', 'qty'\]",
    ),
    (
        "unparseable_date",
        lambda f: f.__setitem__("month", f["month"].astype(str).where(f.index != 7, "someday")),
        (),
        r"has a value that is not a date: 'someday' \(row 7\)",
    ),
    ("mixed_frequency", _weekly_series, (), r"mixed frequency across series"),
    (
        "duplicate_rows",
        lambda f: f.__setitem__("month", f["month"].where(f.index != 1, f["month"][0])),
        (),
        r"duplicate \(series, period\) rows.*series_id=p0, period=2020-01-01",
    ),
    (
        "missing_series_id",
        lambda f: f.__setitem__("sku", f["sku"].where(f.index != 2)),
        (),
        r"1 row\(s\) have no series id in column 'sku' \(rows \[2\]\)",
    ),
    ("mixed_time_zones", _mixed_zones, (), r"column 'month' mixes time zones"),
    ("boolean_target", _bool_target, (), r"column 'qty' holds booleans"),
    ("too_few_origins", None, ("--origins", "9"), r"too few origins: 9 asked, the data leave room for 2"),
    ("unknown_model", None, ("--models", "prophet"), r"unknown model id\(s\) \['prophet'\]"),
    ("bad_nan_policy", None, ("--nan-policy", "mean"), r"argument --nan-policy: invalid choice: 'mean'"),
]


@pytest.mark.parametrize(("case", "edit", "extra", "message"), BAD_INPUT, ids=[c[0] for c in BAD_INPUT])
def test_bad_input_is_one_line_with_exit_code_2(case, edit, extra, message, tmp_path, capsys):
    frame = _table() if edit is None else _edit(_table(), edit)
    code, err = _run(tmp_path, frame, *extra, capsys=capsys)
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 or lines[0].startswith("usage:"), err  # argparse adds its usage line
    assert re.search(message, lines[-1]), lines[-1]
    assert not (tmp_path / "out" / "results").exists()  # nothing was run or written


def test_with_debug_the_traceback_is_shown_instead(tmp_path):
    path = tmp_path / "sales.csv"
    _edit(_table(), _bool_target).to_csv(path, index=False)
    with pytest.raises(Exception, match="holds booleans") as info:
        main(["--debug", "evaluate", str(path), "--id", "sku", "--time", "month", "--target", "qty"])
    assert type(info.value).__name__ == "PanelValidationError"
    with pytest.raises(Exception, match="holds booleans"):  # after the subcommand too
        main(["evaluate", str(path), "--id", "sku", "--time", "month", "--target", "qty", "--debug"])


def test_an_out_folder_inside_the_published_results_is_refused(tmp_path, capsys):
    code, err = _run(
        tmp_path, _table(n_periods=60), "--out", str(REPO / "benchmarks" / "results" / "mine"), capsys=capsys
    )
    assert code == 2 and "would write into (or over) the repository's published results" in err
    assert not (REPO / "benchmarks" / "results" / "mine").exists()


def test_a_config_naming_an_unknown_dataset_is_one_line_with_exit_code_2(tmp_path, capsys):
    from benchmarks.run import main as run_main

    text = (REPO / "benchmarks" / "configs" / "small.toml").read_text()
    config = tmp_path / "mine.toml"
    config.write_text(text.replace('name = "m3_monthly"', 'name = "mydata"', 1))
    assert run_main(["--config", str(config), "--results-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "unknown dataset 'mydata'; catalogue datasets:" in err


def test_python_m_benchmarks_help_prints_help_and_runs_nothing():
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--help"],
        cwd=REPO,
        capture_output=True,
        check=False,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout.startswith("usage: python -m benchmarks")
    assert "[tycheon]" not in done.stdout


@pytest.mark.slow
def test_a_real_panel_goes_end_to_end_into_valid_results_and_a_strict_site_without_paths(tmp_path):
    pbs = load("fpp3_pbs")
    frame = pbs.data[["series_id", "period", "value"]].merge(pbs.attributes, left_on="series_id", right_index=True)
    frame = frame.rename(columns={"series_id": "item", "period": "month_start", "value": "scripts"})
    work = tmp_path / "work"
    work.mkdir()
    frame.to_csv(work / "pbs_scripts.csv", index=False)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tycheon.cli",
            "evaluate",
            "pbs_scripts.csv",
            "--id",
            "item",
            "--time",
            "month_start",
            "--target",
            "scripts",
            "--jobs",
            "2",
            "--origins",
            "6",
            "--units",
            "series,level:atc1",
        ],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "note: freq 'MS' inferred from the data" in done.stderr  # said before running
    out = work / "tycheon-results"
    results = sorted((out / "results" / "pbs_scripts").glob("v*.json"))
    assert [p.name for p in results] == ["v0001.json"]
    from benchmarks.results_io import validate_results_file

    assert validate_results_file(results[0]) == []
    assert (out / "site" / "site" / "index.html").is_file()  # mkdocs build --strict passed
    summary = [line.strip() for line in done.stdout.splitlines() if line.startswith("  ")]
    classes = [line.split(" ")[0] for line in summary]
    assert classes[0] == "all" and set(classes) <= set(CLASSES) and len(classes) >= 3
    assert all("mase winner" in line and "rmsse winner" in line for line in summary)
    leaks = [str(tmp_path).encode(), str(REPO).encode(), str(Path.home()).encode()]
    for path in out.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not [leak for leak in leaks if leak in data], path
    doc = results[0].read_text()
    assert "pbs_scripts.csv" in doc and "not redistributable" in doc and "inferred" in doc
