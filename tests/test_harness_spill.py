"""Columns held on disk between the leaderboards and the sidecar (benchmarks.spill): the table comes
back with the same columns, order, dtypes and cells, so its sidecar bytes are those of a table that
never left memory."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from benchmarks.spill import SpilledColumns, Stages, spillable


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


def test_the_replay_reads_every_column_but_the_bands_and_quantiles():
    from benchmarks.dataset_part import _read_by_replay

    assert _read_by_replay(list(_table().columns)) == ["model", "origin", "point", "has_band", "available_at"]


def test_the_analyses_read_what_prepared_scores_read_and_every_column_where_a_sweep_runs():
    from types import SimpleNamespace

    from benchmarks.dataset_part import _read_by_analyses
    from tycheon.analysis.prepared import READ_COLUMNS

    assert _read_by_analyses(SimpleNamespace(sweep=[])) == READ_COLUMNS
    assert not {"lo80", "hi80", "has_band", "available_at", "q0.1"} & set(READ_COLUMNS)
    assert _read_by_analyses(SimpleNamespace(sweep=[0.5, 1.0])) is None  # its tables are leaderboards


def test_the_leaderboards_stage_keeps_what_its_tables_read_and_the_quantiles_only_for_crps():
    from benchmarks.dataset_part import _read_by_leaderboards
    from tycheon.analysis.leaderboard import LeaderboardSpec, columns_read

    point = LeaderboardSpec(metrics=("mase", "rmsse"), baseline="naive", random_walk="naive", horizon=3, stride=3,
                            quantile_levels=(0.1, 0.9))  # fmt: skip
    assert _read_by_leaderboards(point, "mase") == set(columns_read())
    assert not {"available_at", "q0.1", "q0.9"} & _read_by_leaderboards(point, "mase")
    crps = LeaderboardSpec(metrics=("mase", "crps"), baseline="naive", random_walk="naive", horizon=3, stride=3,
                           quantile_levels=(0.1, 0.9))  # fmt: skip
    assert {"q0.1", "q0.9"} <= _read_by_leaderboards(crps, "mase")
    assert {"q0.1", "q0.9"} <= _read_by_leaderboards(point, "crps")  # the interval tables rank CRPS
    assert "available_at" not in _read_by_leaderboards(crps, "mase")


def _parts() -> list[pd.DataFrame]:
    """Three score-set tables of one run (one per model, rows not in key order), and an empty one."""
    from tycheon.backtest.scoreset import SCORESET_COLUMNS

    rng = np.random.default_rng(3)
    parts = []
    for model in ("ses", "naive", "croston"):
        n = 40
        frame = {}
        for name, dtype in SCORESET_COLUMNS.items():
            if dtype == "category":
                values = {"model": [model], "unit": ["series", "total"], "demand_class": ["smooth", "lumpy"]}
                frame[name] = pd.Categorical(rng.choice(values.get(name, [f"s{i}" for i in range(7)]), n))
            elif dtype.startswith("datetime"):
                frame[name] = pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 400, n), unit="D")
            elif dtype == "bool":
                frame[name] = rng.random(n) < 0.5
            elif dtype.startswith("int"):
                frame[name] = rng.integers(1, 7, n).astype(dtype)
            else:
                frame[name] = rng.normal(size=n)
        frame["step"] = np.arange(n, dtype=np.int16)[::-1]  # row keys unique within the part
        frame["q0.5"] = rng.normal(size=n)
        parts.append(pd.DataFrame(frame))
    parts.append(parts[0].iloc[:0].copy())
    return parts


@pytest.mark.parametrize("keep", [("model", "point", "lo80", "step"), ()])
def test_parked_tables_join_as_concat_tables_does_with_the_unkept_columns_on_disk(keep):
    from benchmarks.spill import concat_parked
    from tycheon.backtest.scoreset import concat_tables

    expected = concat_tables([p.copy() for p in _parts()], sort_keys=True)
    parked = [SpilledColumns(p, spillable(p, list(p.columns))) for p in _parts()]
    table, left = concat_parked(parked, keep=keep)
    from tycheon.backtest.scoreset import SORT_KEYS

    stay = {*keep, *SORT_KEYS}  # the key columns give the order
    numeric_kept = [c for c in expected.columns if c in stay or not isinstance(expected[c].dtype, np.dtype)]
    assert list(table.columns) == [c for c in expected.columns if c in numeric_kept]
    assert set(left.columns) == set(expected.columns) - set(numeric_kept)
    assert all(p._dir is None for p in parked)  # the parts' files are gone
    left.restore()
    pd.testing.assert_frame_equal(table, expected, check_exact=True)
    assert _parquet(table) == _parquet(expected)


def test_parked_tables_with_other_columns_are_joined_whole():
    from benchmarks.spill import concat_parked
    from tycheon.backtest.scoreset import concat_tables

    parts = _parts()[:2]
    parts[1] = parts[1].drop(columns=["q0.5"])
    expected = concat_tables([p.copy() for p in parts], sort_keys=True)
    table, left = concat_parked([SpilledColumns(p, spillable(p, list(p.columns))) for p in parts], keep=("point",))
    assert left.columns == []
    pd.testing.assert_frame_equal(table, expected, check_exact=True)


def test_a_partial_restore_puts_each_column_in_its_place_among_those_present():
    table = _table()
    expected = table.copy()
    spill = SpilledColumns(table, ["origin", "lo80", "hi80", "q0.9"])
    spill.restore(keep=["lo80"])
    assert list(table.columns) == [c for c in expected.columns if c != "lo80"]
    assert spill.columns == ["lo80"] and spill._dir is not None
    spill.restore()
    pd.testing.assert_frame_equal(table, expected, check_exact=True)
    assert spill._dir is None


def test_each_stage_holds_only_the_columns_it_reads_and_the_plan_ends_with_the_table_whole():
    table = _table()
    expected = table.copy()
    with Stages(table) as plan:
        with plan.stage(reads=["origin", "point", "lo80", "hi80"]) as t:
            assert t is table  # the same frame, changed in place
            # the categorical cannot wait on disk, so every stage has it
            assert list(table.columns) == ["model", "origin", "point", "lo80", "hi80"]
            assert plan.on_disk == ["has_band", "available_at", "q0.1", "q0.9"]
        with plan.stage(reads=["point", "available_at", "q0.9"]):  # the bands leave, the dates come back
            assert list(table.columns) == ["model", "point", "available_at", "q0.9"]
        with plan.stage(reads=()):
            assert list(table.columns) == ["model"]
        with plan.stage(reads=None):  # every column, in its place
            pd.testing.assert_frame_equal(table, expected, check_exact=True)
        with plan.stage(reads=["point"]):
            folders = [group._dir for group in plan._disk]
            assert folders and all(f is not None and f.exists() for f in folders)
    assert plan.on_disk == [] and not any(f.exists() for f in folders)  # the files went with the plan
    pd.testing.assert_frame_equal(table, expected, check_exact=True)
    assert _parquet(table) == _parquet(expected)  # the sidecar bytes, so its hash, are unchanged


def test_a_plan_starts_from_the_columns_the_join_left_on_disk():
    from benchmarks.spill import concat_parked
    from tycheon.backtest.scoreset import SORT_KEYS, concat_tables

    expected = concat_tables([p.copy() for p in _parts()], sort_keys=True)
    keep = {*SORT_KEYS, "point", "actual"}
    table, left = concat_parked([SpilledColumns(p, spillable(p, list(p.columns))) for p in _parts()], keep=keep)
    away = list(left.columns)
    with Stages(table, parked=left) as plan:
        assert plan.columns == list(expected.columns) and plan.on_disk == away
        with plan.stage(reads=keep):  # what the join kept: nothing moves
            assert plan.on_disk == away
        with plan.stage(reads=[*keep, "q0.5"]):
            assert "q0.5" in table.columns and "q0.5" not in plan.on_disk
    pd.testing.assert_frame_equal(table, expected, check_exact=True)
    assert _parquet(table) == _parquet(expected)


def test_a_stage_that_fails_leaves_the_table_whole_when_the_plan_ends():
    table = _table()
    expected = table.copy()
    with pytest.raises(RuntimeError, match="boom"), Stages(table) as plan:
        with plan.stage(reads=["point"]):
            pass
        with plan.stage(reads=["origin", "lo80"]):
            raise RuntimeError("boom")
    pd.testing.assert_frame_equal(table, expected, check_exact=True)
    assert plan.on_disk == []
