"""Columns held on disk between the leaderboards and the sidecar (benchmarks.spill): the table comes
back with the same columns, order, dtypes and cells, so its sidecar bytes are those of a table that
never left memory."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from benchmarks.spill import SpilledColumns


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 50
    lo = rng.normal(size=n)
    lo[::4] = np.nan
    return pd.DataFrame(
        {
            "model": pd.Categorical(rng.choice(["naive", "ses"], n)),
            "origin": pd.date_range("2020-01-01", periods=n, freq="MS"),
            "point": rng.normal(size=n),
            "lo80": lo,
            "hi80": lo + 1.0,
            "has_band": ~np.isnan(lo),
            "available_at": pd.date_range("2020-02-01", periods=n, freq="MS"),
            "q0.1": rng.normal(size=n),
            "q0.9": rng.normal(size=n),
        }
    )


def _parquet(frame: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    return buf.getvalue()


def test_spilled_columns_leave_the_frame_and_come_back_in_their_places_bit_for_bit():
    table = _table()
    expected = table.copy()
    spill = SpilledColumns(table, ["q0.9", "lo80", "available_at", "hi80", "q0.1"])
    assert spill.columns == ["lo80", "hi80", "available_at", "q0.1", "q0.9"]  # the table's order
    assert list(table.columns) == ["model", "origin", "point", "has_band"]
    folder = spill._dir
    assert folder is not None and len(list(folder.iterdir())) == 5
    spill.restore()
    pd.testing.assert_frame_equal(table, expected, check_exact=True)
    assert _parquet(table) == _parquet(expected)  # the sidecar bytes, so its hash, are unchanged
    assert not folder.exists() and spill.columns == []


def test_leaving_the_block_restores_the_columns_even_on_an_error():
    table = _table()
    expected = table.copy()
    with pytest.raises(RuntimeError, match="boom"), SpilledColumns(table, ["lo80", "hi80"]):
        assert "lo80" not in table.columns
        raise RuntimeError("boom")
    pd.testing.assert_frame_equal(table, expected, check_exact=True)


def test_nothing_to_spill_leaves_the_table_alone():
    table = _table()
    with SpilledColumns(table, ["not_a_column"]) as spill:
        assert spill.columns == [] and spill._dir is None
    pd.testing.assert_frame_equal(table, _table(), check_exact=True)


def test_a_categorical_column_is_refused_and_the_table_kept_whole():
    table = _table()
    with pytest.raises(TypeError, match="'model' has dtype category"):
        SpilledColumns(table, ["model", "lo80"])
    assert list(table.columns) == list(_table().columns)


def test_only_the_bands_and_quantiles_are_spilled_and_none_where_a_sweep_ranks_the_rows_again():
    from types import SimpleNamespace

    from benchmarks.pipeline import _leaderboard_only_columns

    table = _table()
    assert _leaderboard_only_columns(table, SimpleNamespace(sweep=[])) == ["lo80", "hi80", "q0.1", "q0.9"]
    assert _leaderboard_only_columns(table, SimpleNamespace(sweep=[0.5, 1.0])) == []


def test_the_leaderboards_stage_spills_what_its_tables_do_not_read_and_keeps_quantiles_for_crps():
    from benchmarks.pipeline import _unread_by_leaderboards
    from tycheon.analysis.leaderboard import LeaderboardSpec, columns_read

    table = _table()
    table["note"] = "free text"  # an object column is never spilled
    point = LeaderboardSpec(metrics=("mase", "rmsse"), baseline="naive", random_walk="naive", horizon=3, stride=3,
                            quantile_levels=(0.1, 0.9))  # fmt: skip
    unread = _unread_by_leaderboards(table, point, "mase")
    assert unread == ["available_at", "q0.1", "q0.9"]
    assert not set(unread) & set(columns_read())
    crps = LeaderboardSpec(metrics=("mase", "crps"), baseline="naive", random_walk="naive", horizon=3, stride=3,
                           quantile_levels=(0.1, 0.9))  # fmt: skip
    assert _unread_by_leaderboards(table, crps, "mase") == ["available_at"]
    assert _unread_by_leaderboards(table, point, "crps") == ["available_at"]  # the interval tables rank CRPS
