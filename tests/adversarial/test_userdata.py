"""A user's own file through ``tycheon evaluate FILE`` and :func:`load_user_file` (issue 38, second round):
common inputs that crashed with a traceback, ids and periods that pandas' type guessing misread, a file too
large to load, and paths that are not files. A bad input is one line on stderr with exit code 2, naming the
file or column and what is accepted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tycheon.cli import main
from tycheon.data.panel import PanelValidationError
from tycheon.data.userfile import DEFAULT_MAX_ROWS, UserFileError, load_user_file, read_user_file
from tycheon.evaluation import DataSpec, EvaluationError, EvaluationWarning, constant_columns, evaluate

REPO = Path(__file__).resolve().parents[2]
COLUMNS = {"series_col": "sku", "period_col": "month", "value_col": "qty"}


def _table(n_series: int = 4, n_periods: int = 40) -> pd.DataFrame:
    months = pd.date_range("2020-01-01", periods=n_periods, freq="MS")
    return pd.DataFrame(
        {
            "sku": np.repeat([f"p{i}" for i in range(n_series)], n_periods),
            "month": np.tile(months, n_series),
            "qty": np.arange(n_series * n_periods, dtype=float) % 7,
        }
    )


def _cli(path: Path, *extra: str, capsys) -> tuple[int, list[str]]:
    """``tycheon evaluate PATH`` with the fastest settings; the exit code and the lines of stderr."""
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
            "--models",
            "naive",
            "--no-site",
            "--jobs",
            "1",
            "--out",
            str(path.parent / "out"),
            *extra,
        ]
    )
    return code, capsys.readouterr().err.strip().splitlines()


def _error(lines: list[str]) -> str:
    errors = [line for line in lines if line.startswith("tycheon: error:")]
    assert len(errors) == 1 and lines[-1] == errors[0], lines
    return errors[0]


# probe 1: common inputs that crashed


def test_when_every_value_is_zero_then_evaluate_refuses_in_one_line_naming_the_column(tmp_path, capsys):
    path = tmp_path / "zeros.csv"
    _table().assign(qty=0.0).to_csv(path, index=False)
    code, lines = _cli(path, capsys=capsys)
    assert code == 2
    line = _error(lines)
    assert "file zeros.csv: every value of column 'qty' is zero" in line
    assert "data with non-zero values are accepted" in line
    assert not (tmp_path / "out" / "results").exists()


def test_when_the_data_hold_one_series_then_the_plan_says_the_cross_series_analyses_are_skipped():
    with pytest.warns(EvaluationWarning, match=r"1 series: the analyses across series are skipped"):
        ev = evaluate(_table(n_series=1), id_col="sku", time_col="month", target_col="qty", models="naive", n_jobs=1)
    assert ev.status["naive"]["status"] == "ran"
    assert any(w.startswith("1 series:") for w in ev.plan.warnings)


def test_when_the_file_holds_one_series_then_evaluate_runs_without_the_replay(tmp_path, capsys):
    path = tmp_path / "one.csv"
    _table(n_series=1).to_csv(path, index=False)
    code, lines = _cli(path, capsys=capsys)
    assert code == 0, lines
    assert any("1 series: the analyses across series are skipped" in line for line in lines)


def test_when_a_value_is_too_large_to_square_then_evaluate_refuses_in_one_line(tmp_path, capsys):
    frame = _table()
    frame.loc[5, "qty"] = 1e160
    path = tmp_path / "huge.csv"
    frame.to_csv(path, index=False)
    code, lines = _cli(path, capsys=capsys)
    assert code == 2
    line = _error(lines)
    assert "column 'qty' has values beyond +-1e+100" in line and "would overflow float64" in line
    assert "series_id=p0, value=1e+160 (row 5)" in line and "divide the column by a power of ten" in line


def test_when_values_are_large_but_squarable_then_they_are_accepted(tmp_path):
    frame = _table()
    frame["qty"] = frame["qty"] * 1e99
    path = tmp_path / "large.csv"
    frame.to_csv(path, index=False)
    assert load_user_file(path, **COLUMNS).data["value"].max() == pytest.approx(6e99)


@pytest.mark.parametrize(
    ("nest", "shown"),
    [(lambda s: {"code": s}, "dict values (e.g. {'code': 'p0'})"), (lambda s: [s], "list values (e.g. ['p0'])")],
    ids=["struct", "list"],
)
def test_when_a_parquet_id_column_is_nested_then_evaluate_refuses_in_one_line(tmp_path, capsys, nest, shown):
    frame = _table()
    frame["sku"] = [nest(s) for s in frame["sku"]]
    path = tmp_path / "nested.parquet"
    frame.to_parquet(path)
    code, lines = _cli(path, capsys=capsys)
    assert code == 2
    line = _error(lines)
    assert f"column 'sku' holds {shown}, not series ids; text or integer ids are accepted" in line


def test_when_an_other_parquet_column_is_nested_then_it_is_not_a_level_and_the_run_goes_on(tmp_path):
    frame = _table().assign(store="north")
    frame["meta"] = [{"a": 1}] * len(frame)
    frame["tags"] = [[1, 2]] * len(frame)
    assert constant_columns(frame, DataSpec(id_col="sku", time_col="month", target_col="qty")) == ("store",)
    path = tmp_path / "extra.parquet"
    frame.to_parquet(path)
    with pytest.raises(UserFileError, match=r"level/weight column\(s\) \['meta'\] hold nested values"):
        load_user_file(path, **COLUMNS, level_cols=["meta"])


# probe 2: ids are text as written


def test_when_csv_ids_look_like_numbers_then_they_are_read_as_written(tmp_path):
    path = tmp_path / "ids.csv"
    rows = [f"{sku},2020-{m:02d}-01,{m}" for sku in ("007", "7", "001", "NA") for m in range(1, 13)]
    path.write_text("sku,month,qty\n" + "\n".join(rows) + "\n", encoding="utf-8")
    panel = load_user_file(path, **COLUMNS)
    assert sorted(panel.series_ids) == ["001", "007", "7", "NA"]
    frame = read_user_file(path, id_col="sku")
    assert frame["sku"].tolist()[::12] == ["007", "7", "001", "NA"] and frame["qty"].dtype == np.int64


def test_when_ids_are_read_as_text_then_missing_values_keep_their_meaning(tmp_path):
    path = tmp_path / "gaps.csv"
    path.write_text(
        "sku,month,qty\n"
        + "".join(f"NA,2020-{m:02d}-01,{v}\n" for m, v in zip(range(1, 6), ["1", "", "NA", "n/a", "2"], strict=True)),
        encoding="utf-8",
    )
    panel = load_user_file(path, **COLUMNS, nan_policy="zero")
    assert panel.meta["nan_filled"] == 3 and list(panel.series_ids) == ["NA"]
    path.write_text("sku,month,qty\n,2020-01-01,1\n", encoding="utf-8")
    with pytest.raises(PanelValidationError, match=r"1 row\(s\) have no series id in column 'sku'"):
        load_user_file(path, **COLUMNS)


# probe 3: whole-number periods


@pytest.mark.parametrize(
    ("stamps", "first", "freq"),
    [(np.arange(1990, 2020), "1990-01-01", "YS-JAN"), ([202001 + i for i in range(12)], "2020-01-01", "MS")],
    ids=["years", "yyyymm"],
)
def test_when_periods_are_whole_numbers_then_they_are_read_as_years_or_months(tmp_path, stamps, first, freq):
    path = tmp_path / "years.csv"
    pd.DataFrame({"sku": "a", "month": stamps, "qty": 1.0}).to_csv(path, index=False)
    panel = load_user_file(path, **COLUMNS)
    assert str(panel.periods[0].date()) == first and panel.freq == freq


@pytest.mark.parametrize(
    ("stamps", "said"),
    [
        (1577836800 + 86400 * np.arange(30), "whole numbers from 1577836800 to 1580342400, which are not dates"),
        (np.arange(30) + 0.5, "numbers that are not dates (e.g. 0.5)"),
    ],
    ids=["epoch_seconds", "fractions"],
)
def test_when_periods_are_other_numbers_then_evaluate_refuses_in_one_line(tmp_path, capsys, stamps, said):
    path = tmp_path / "epoch.csv"
    pd.DataFrame({"sku": "a", "month": stamps, "qty": 1.0}).to_csv(path, index=False)
    code, lines = _cli(path, capsys=capsys)
    assert code == 2
    line = _error(lines)
    assert f"column 'month' holds {said}" in line
    assert "read as years (1678..2261, annual periods), YYYYMM (201901) or YYYYMMDD (20190101)" in line
    assert "epoch seconds or milliseconds are refused" in line


# probe 4: the size is checked before loading


def _refuse_loading(monkeypatch) -> None:
    def boom(*args, **kwargs):
        if kwargs.get("nrows") == 0:  # the CSV header: read to count the columns
            return real_csv(*args, **kwargs)
        raise AssertionError("the data were loaded before the size check")

    real_csv = pd.read_csv
    monkeypatch.setattr(pd, "read_parquet", boom)
    monkeypatch.setattr(pd, "read_csv", boom)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_when_a_file_has_more_rows_than_max_rows_then_it_is_refused_before_loading(tmp_path, monkeypatch, suffix):
    path = tmp_path / f"big{suffix}"
    frame = _table(n_series=5)  # 200 rows
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path)
    assert load_user_file(path, **COLUMNS, max_rows=200).n_series == 5
    _refuse_loading(monkeypatch)
    with pytest.raises(UserFileError, match=r"big\S*: 200 rows or more, over the limit of 100 rows") as info:
        load_user_file(path, **COLUMNS, max_rows=100)
    assert "--max-rows N (max_rows=N in Python)" in str(info.value)


def test_when_a_small_parquet_holds_millions_of_rows_then_evaluate_refuses_it_by_its_footer(
    tmp_path, capsys, monkeypatch
):
    n = DEFAULT_MAX_ROWS + 1
    zeros = np.zeros(n, dtype=np.int32)
    table = pa.table(
        {
            "sku": pa.DictionaryArray.from_arrays(zeros, pa.array(["a"])),
            "month": pa.DictionaryArray.from_arrays(zeros, pa.array(["2020-01-01"])),
            "qty": pa.DictionaryArray.from_arrays(zeros, pa.array([1.0])),
        }
    )
    path = tmp_path / "bomb.parquet"
    pq.write_table(table, path)
    del table, zeros
    assert path.stat().st_size < 1 << 20
    _refuse_loading(monkeypatch)
    code, lines = _cli(path, capsys=capsys)
    assert code == 2
    assert f"bomb.parquet: {n:,} rows or more, over the limit of {DEFAULT_MAX_ROWS:,} rows" in _error(lines)


# probe 5: paths that are not files, bytes that are not UTF-8


def test_when_the_path_is_a_folder_then_evaluate_says_so(tmp_path, capsys):
    folder = tmp_path / "sales.csv"
    folder.mkdir()
    code, lines = _cli(folder, capsys=capsys)
    assert code == 2
    assert f"{folder}: is a folder, not a file; give a .csv or .parquet file" in _error(lines)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")
def test_when_the_path_is_a_fifo_then_evaluate_says_so_without_blocking(tmp_path):
    fifo = tmp_path / "sales.csv"
    os.mkfifo(fifo)
    code = f"from tycheon.cli import main; raise SystemExit(main(['evaluate', {str(fifo)!r}, '--no-site']))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )  # a reader that opened the FIFO would wait for a writer forever; the timeout turns that into a failure
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"tycheon: error: {fifo}: is a FIFO (named pipe), not a regular file; save the data to a .csv or "
        ".parquet file and give that"
    ]


def test_when_a_csv_is_not_utf8_then_evaluate_says_save_it_as_utf8(tmp_path, capsys):
    path = tmp_path / "latin.csv"
    path.write_bytes("sku,month,qty\ncafé,2020-01-01,1\n".encode("latin-1"))
    code, lines = _cli(path, capsys=capsys)
    assert code == 2
    line = _error(lines)
    assert f"{path}: not UTF-8 text (byte 0xe9 at offset 17 (line 2) cannot be decoded)" in line
    assert "save it as UTF-8" in line


def test_max_rows_is_an_option_that_reaches_the_pipeline_reading_the_file_again(tmp_path, capsys):
    path = tmp_path / "sales.csv"
    _table().to_csv(path, index=False)  # 160 rows
    code, lines = _cli(path, "--max-rows", "100", capsys=capsys)
    assert code == 2 and len(lines) == 1
    assert "sales.csv: 160 rows or more, over the limit of 100 rows" in lines[0] and "--max-rows N" in lines[0]
    code, lines = _cli(path, "--max-rows", "0", capsys=capsys)
    assert code == 2 and "--max-rows" in lines[-1] and "accepted: rows >= 1" in lines[-1]
    code, lines = _cli(path, "--max-rows", "160", capsys=capsys)
    assert code == 0, lines
    # the config the pipeline reads holds the raised limit, so the file is not refused a second time
    (config,) = (tmp_path / "out" / "config").glob("*.toml")
    assert "max_rows = 160" in config.read_text()


def test_the_python_api_checks_the_time_budget_and_level_units_before_running():
    frame = _table()
    with pytest.raises(EvaluationError, match=r"time_budget 1e-09 is not a usable budget.*>= 1"):
        evaluate(frame, id_col="sku", time_col="month", target_col="qty", models="naive", time_budget=1e-9)
    with pytest.raises(EvaluationError, match=r"units 'level:region': 'region' is not a level of the data"):
        evaluate(frame, id_col="sku", time_col="month", target_col="qty", models="naive", units=["level:region"])
