"""The re-verification reads the sidecar one (dataset, protocol) at a time, row group by row group, only the
columns the tables read, and sorts the rows into key order itself (``benchmarks.verify``). These tests
check that this reading gives exactly the rows a whole-file read gives, that an honest sidecar cut into
many small row groups (each mixing datasets and protocols) and shuffled still verifies, and that a
change anywhere in it (a late row group, an aggregate unit, a band, a competition row) is still caught
by the recomputation when the hash was updated to match."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchmarks import verify
from benchmarks.leaderboard_spec import leaderboard_spec
from benchmarks.results_io import file_sha256, read_score_frame, sidecar_file, to_json_value
from benchmarks.validate import main as validate_main
from tests._shared import copy_results
from tycheon.analysis import leaderboard as lb
from tycheon.backtest.scoreset import conform_table, key_order, take_rows

pytestmark = pytest.mark.slow  # one whole-harness run of the tiny benchmark

KEYS = ["unit", "model", "series_id", "origin", "step"]


@pytest.fixture(scope="module")
def honest(tiny_results) -> Path:
    """The run-wide ``--no-cache`` run of the tiny benchmark (tests/_shared.py): read here, copied to change."""
    return tiny_results / "v0001.json"


def _copy(honest: Path, tmp_path: Path) -> Path:
    return copy_results(honest.parent, tmp_path) / honest.name


def _rewrite(path: Path, frame: pd.DataFrame, *, row_group_size: int = 97) -> Path:
    """Write ``frame`` as the sidecar of ``path`` in small row groups and record its hash."""
    doc = json.loads(path.read_text())
    old = sidecar_file(path, doc["sidecar"]) if "sidecar" in doc else None
    tmp = path.parent / "tmp.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), tmp, row_group_size=row_group_size)
    digest = file_sha256(tmp)
    new = path.parent / "sidecars" / f"{digest}.parquet"
    new.parent.mkdir(exist_ok=True)
    tmp.rename(new)
    if old is not None:
        old.unlink()
    doc.pop("scores", None)  # the version now records its score set as one sidecar file, as before schema 1.6
    doc["sidecar"] = {
        "path": f"sidecars/{new.name}",
        "sha256": digest,
        "format": "parquet",
        "n_rows": len(frame),
        "columns": [str(c) for c in frame.columns],
    }
    path.write_text(json.dumps(doc))
    return new


def _shuffled(path: Path, seed: int = 5) -> pd.DataFrame:
    frame = read_score_frame(path)
    return frame.sample(frac=1.0, random_state=seed).reset_index(drop=True)


def test_the_sidecar_holds_two_chunks_so_row_groups_mix_them(honest):
    frame = read_score_frame(honest)
    assert set(zip(frame["dataset"], frame["protocol"], strict=True)) == {
        ("synthetic_marketplace", "rolling_origin"),
        ("m3_monthly", "competition"),
    }
    assert len(frame) > 10 * 97  # many row groups once rewritten


def test_a_chunk_read_row_group_by_row_group_is_the_whole_file_read_filtered_and_sorted(honest, tmp_path):
    path = _copy(honest, tmp_path)
    side = _rewrite(path, _shuffled(path))
    whole = conform_table(pd.read_parquet(side))
    assert pq.ParquetFile(side).metadata.num_row_groups > 10
    for dataset, protocol in (("synthetic_marketplace", "rolling_origin"), ("m3_monthly", "competition")):
        rows = whole[(whole["dataset"] == dataset) & (whole["protocol"] == protocol)]
        columns = lb.columns_read()
        expected = conform_table(rows[columns].sort_values(KEYS, kind="stable", ignore_index=True))
        got = verify._read_chunk(side, dataset=dataset, protocol=protocol, columns=columns, key_order=True)
        pd.testing.assert_frame_equal(got, expected, check_exact=True)
        # in key order already: the tables' key-order view of it is its own arrays, not a copy
        assert key_order(got).tolist() == list(range(len(got)))
        view = take_rows(got, key_order(got), columns)
        assert np.shares_memory(view["actual"].to_numpy(), got["actual"].to_numpy())
        unsorted = verify._read_chunk(side, dataset=dataset, protocol=protocol, columns=columns)
        pd.testing.assert_frame_equal(
            unsorted, conform_table(rows[columns].reset_index(drop=True)), check_exact=True
        )  # file order when not asked to sort
    assert len(verify._read_chunk(side, dataset="nowhere", protocol="rolling_origin", columns=["actual"])) == 0


def test_the_tables_of_a_chunk_read_are_those_of_the_whole_file(honest, tmp_path):
    path = _copy(honest, tmp_path)
    side = _rewrite(path, _shuffled(path))
    spec = leaderboard_spec(json.loads(path.read_text())["config"])  # as verify builds it
    whole = conform_table(pd.read_parquet(side))
    rows = whole[(whole["dataset"] == "synthetic_marketplace") & (whole["protocol"] == "rolling_origin")]
    table = rows.drop(columns=["dataset", "protocol"]).reset_index(drop=True)
    chunk = verify._read_chunk(
        side, dataset="synthetic_marketplace", protocol="rolling_origin", columns=lb.columns_read(), key_order=True
    )
    assert _exact(lb.leaderboard_tables(chunk, spec=spec)) == _exact(lb.leaderboard_tables(table, spec=spec))
    assert _exact(lb.interval_tables(chunk)) == _exact(lb.interval_tables(table))


def _exact(tables: list[dict]) -> str:
    """The tables as JSON: every float by its shortest repr (so equal text is equal bits), NaN as null."""
    return json.dumps(to_json_value(tables), sort_keys=True)


def test_a_band_level_without_any_band_is_read_as_one_broadcast_nan(honest, tmp_path):
    path = _copy(honest, tmp_path)
    frame = _shuffled(path)
    frame["lo95"] = np.nan
    frame["hi95"] = np.nan
    side = _rewrite(path, frame)
    got = verify._read_chunk(
        side, dataset="synthetic_marketplace", protocol="rolling_origin", columns=lb.columns_read(), key_order=True
    )
    assert got["lo95"].to_numpy().strides == (0,) and np.isnan(got["lo95"].to_numpy()).all()
    assert got["actual"].to_numpy().strides == (8,)  # a column with values is an ordinary array


def test_an_honest_sidecar_in_small_shuffled_row_groups_still_verifies(honest, tmp_path, capsys):
    path = _copy(honest, tmp_path)
    _rewrite(path, _shuffled(path))
    assert validate_main([str(path)]) == 0
    assert "(every table recomputed from its score set)" in capsys.readouterr().out


def _tamper(frame: pd.DataFrame, where: pd.Series, column: str) -> pd.DataFrame:
    """``frame`` with ``column`` changed in the last row where ``where`` holds (a late row group once
    written in small ones); ``"band"``: an 80% band given to that row (the tiny run has none)."""
    row = frame.index[where.to_numpy()][-1]
    out = frame.copy()
    if column == "band":
        out.loc[row, ["lo80", "hi80", "has_band"]] = [out.loc[row, "actual"] - 1.0, out.loc[row, "actual"] + 1.0, True]
    else:
        out.loc[row, column] = out.loc[row, column] + 3.0
    return out


@pytest.mark.parametrize(
    ("select", "column", "table"),
    [
        (lambda f: (f["protocol"] == "rolling_origin") & (f["unit"] == "series"), "point", "leaderboards"),
        (lambda f: (f["protocol"] == "rolling_origin") & (f["unit"] == "groups:2"), "point", "leaderboards"),
        (lambda f: (f["protocol"] == "rolling_origin") & (f["unit"] == "series"), "band", "intervals"),
        (lambda f: f["protocol"] == "competition", "point", "competition"),
    ],
    ids=["series-unit", "aggregate-unit", "band", "competition"],
)
def test_one_changed_cell_in_a_late_row_group_with_its_hash_updated_is_caught(
    honest, tmp_path, capsys, select, column, table
):
    path = _copy(honest, tmp_path)
    frame = _shuffled(path)
    _rewrite(path, _tamper(frame, select(frame), column))
    assert validate_main([str(path)]) == 1
    out = capsys.readouterr().out
    assert "the published numbers are not those of the sidecar" in out
    assert f"- {path}: {table}[" in out


def test_a_sidecar_the_tables_cannot_be_built_from_is_invalid_not_excused(honest, tmp_path, capsys):
    """Only an older sidecar (no quantile columns) is reported as not recomputable; a sidecar whose scales
    differ between models for the same block makes the tables refuse, and that is a failure."""
    path = _copy(honest, tmp_path)
    frame = _shuffled(path)
    where = (frame["protocol"] == "rolling_origin") & (frame["model"] == "ses") & (frame["unit"] == "series")
    frame.loc[where, "scale_mae"] = frame.loc[where, "scale_mae"] + 1.0
    _rewrite(path, frame)
    assert validate_main([str(path)]) == 1
    out = capsys.readouterr().out
    assert "the tables cannot be recomputed from the sidecar: ScaleMismatchError" in out
