"""The lean paths of the leaderboard and interval tables give exactly what the plain pandas forms give:
the key-order copy, the per-model block scores, the record coverage and the sidecar frame (same cells,
bit for bit; the memory they save is measured by ``python -m benchmarks.perf.evaluate_cli``)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tycheon.analysis import _stepgrid, intervals, table_tests
from tycheon.analysis import leaderboard as lb
from tycheon.analysis.blockgrid import block_grid
from tycheon.analysis.prepared import wide as prepared_wide
from tycheon.backtest.scoreset import key_order, take_rows
from tycheon.errors import ScaleMismatchError
from tycheon.metrics import aggregate
from tycheon.metrics.aggregate import block_scores, block_scores_by_model, step_loss
from tycheon.metrics.registry import METRICS

KEYS = ["unit", "model", "series_id", "origin", "step"]


def _canonical(table: pd.DataFrame, levels: tuple[float, ...] = ()) -> pd.DataFrame:
    """The tables' key-order copy of the columns they read."""
    return take_rows(table, key_order(table), lb._read_columns(table, levels))


def _table(*, categorical: bool = False, seed: int = 3) -> pd.DataFrame:
    """A shuffled score-set table with two units, four models, own quantiles and some missing bands
    Eight origins: enough for a test over time (tycheon.analysis.cell.MIN_TIME_POINTS)."""
    rng = np.random.default_rng(seed)
    rows = []
    for unit in ("total", "series"):
        for m in ("ses", "naive", "croston", "tsb"):
            for s in range(7 if unit == "series" else 1):
                for o in pd.date_range("2022-01-01", periods=8, freq="3MS"):
                    for k in range(1, 4):
                        actual = float(rng.integers(0, 5))
                        point = actual + rng.normal()
                        rows.append({
                            "model": m, "unit": unit, "series_id": f"S{s}" if unit == "series" else "total",
                            "origin": o, "step": k, "actual": actual, "point": point,
                            "demand_class": ("smooth", "lumpy", "intermittent")[s % 3],
                            "scale_mae": 1.0 + s, "scale_rmse": 1.5 + s, "weight": 1.0,
                            "lo80": point - 1, "hi80": point + 1,
                            "lo95": np.nan if s == 2 else point - 2, "hi95": np.nan if s == 2 else point + 2,
                            "has_band": True, "q0.1": point - 1, "q0.5": point, "q0.9": point + 1,
                        })  # fmt: skip
    table = pd.DataFrame(rows).sample(frac=1.0, random_state=seed).reset_index(drop=True)
    if categorical:  # text columns as categoricals (the score-set contract may move there)
        for c in ("model", "unit", "series_id", "demand_class"):
            table[c] = pd.Categorical(table[c], categories=sorted(table[c].unique()))
    return table


@pytest.mark.parametrize("categorical", [False, True])
def test_the_key_order_copy_equals_pandas_stable_sort_of_the_read_columns(categorical):
    table = _table(categorical=categorical)
    got = _canonical(table, (0.1, 0.5, 0.9))
    cols = [c for c in (*lb._USED, "q0.1", "q0.5", "q0.9") if c in table.columns]
    expected = table[cols].sort_values(KEYS, kind="stable", ignore_index=True)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert not np.shares_memory(got["actual"].to_numpy(), table["actual"].to_numpy())  # a copy: safe to reorder


def test_the_key_order_copy_leaves_the_quantile_columns_out_unless_asked():
    table = _table()
    assert not any(c.startswith("q") for c in _canonical(table).columns)
    assert {"q0.1", "q0.5", "q0.9"} <= set(_canonical(table, (0.1, 0.5, 0.9)).columns)


def test_the_sort_order_puts_a_missing_key_last_as_sort_values_does():
    table = pd.DataFrame({k: [1, 1, 1] for k in KEYS})
    table["series_id"] = ["b", None, "a"]
    assert key_order(table).tolist() == table.sort_values(KEYS, kind="stable").index.tolist() == [2, 0, 1]


def test_per_model_block_scores_equal_one_call_on_every_model():
    unit_rows = _canonical(_table(), (0.1, 0.5, 0.9))
    unit_rows = unit_rows[unit_rows["unit"] == "series"].reset_index(drop=True)
    kwargs = {"metrics": ["mase", "rmsse", "crps", "msis80"], "quantile_levels": (0.1, 0.5, 0.9)}
    pd.testing.assert_frame_equal(
        block_scores_by_model(unit_rows, **kwargs), block_scores(unit_rows, **kwargs), check_exact=True
    )


def test_per_model_block_scores_of_rows_in_any_order_are_one_calls_blocks():
    """A table not in key order (the replay's input need not be): each model's rows are gathered, the
    blocks and every value are one call's; only the blocks' order may differ."""
    shuffled = _table(seed=11)  # rows shuffled: no model is one run
    kwargs = {"metrics": ["mase", "rmsse", "scaled_bias"]}
    keys = ["model", "unit", "series_id", "origin"]
    got = block_scores_by_model(shuffled, **kwargs).sort_values(keys, ignore_index=True)
    expected = block_scores(shuffled, **kwargs).sort_values(keys, ignore_index=True)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_per_model_block_scores_still_refuse_scales_that_differ_between_models():
    unit_rows = _canonical(_table())
    unit_rows = unit_rows[unit_rows["unit"] == "series"].reset_index(drop=True)
    unit_rows.loc[unit_rows["model"] == "tsb", "scale_mae"] += 1.0  # consistent within the model, not across
    with pytest.raises(ScaleMismatchError):
        block_scores_by_model(unit_rows, metrics=["mase"])


def test_record_coverage_equals_the_groupby_mean_of_the_banded_records():
    rows = _table()
    rows.loc[rows.index[:5], "lo95"] = np.nan
    for level in ("80", "95"):
        lo, hi, y = rows[f"lo{level}"], rows[f"hi{level}"], rows["actual"]
        banded = lo.notna() & hi.notna()
        expected = ((lo <= y) & (y <= hi))[banded].groupby(rows.loc[banded, "model"]).mean()
        got = intervals._record_coverage(rows, level)
        assert got.index.tolist() == expected.index.tolist()
        assert got.to_numpy().tolist() == expected.to_numpy().tolist()  # exact


@pytest.mark.parametrize("categorical", [False, True])
def test_each_unit_and_class_is_its_rows_in_key_order_with_its_blocks(categorical):
    table = _table(categorical=categorical)
    cols = lb._read_columns(table)
    got = list(_stepgrid._unit_class_tables(table, cols, ["model", "actual"], metrics=["mase"]))
    ordered = table.sort_values(KEYS, kind="stable", ignore_index=True)
    expected = []
    for unit in ("series", "total"):
        rows = ordered[ordered["unit"] == unit].reset_index(drop=True)
        blocks = block_scores(rows[cols], metrics=["mase"], categorical_keys=True)  # as the leaderboards read them
        expected.append((unit, "all", rows[cols], blocks))
        for dc in ("smooth", "intermittent", "lumpy"):  # DEMAND_CLASSES order, those present
            if (rows["demand_class"] == dc).any():
                sub = rows.loc[rows["demand_class"] == dc, ["model", "actual"]].reset_index(drop=True)
                expected.append((unit, dc, sub, blocks[blocks["demand_class"] == dc]))
    assert [(u, dc) for u, dc, _, _ in got] == [(u, dc) for u, dc, _, _ in expected]
    for (_, _, rows, bl), (_, _, rows_x, bl_x) in zip(got, expected, strict=True):
        pd.testing.assert_frame_equal(rows, rows_x, check_exact=True)
        pd.testing.assert_frame_equal(bl, bl_x, check_exact=True)


def test_the_tables_do_not_depend_on_the_text_columns_being_categorical():
    spec = lb.LeaderboardSpec(
        metrics=("mase", "crps"), baseline="naive", random_walk="naive", horizon=3, stride=3,
        quantile_levels=(0.1, 0.5, 0.9), min_cell=2,
    )  # fmt: skip
    plain, cats = _table(), _table(categorical=True)
    assert lb.leaderboard_tables(plain, spec=spec) == lb.leaderboard_tables(cats, spec=spec)
    assert lb.interval_tables(plain) == lb.interval_tables(cats)


@pytest.mark.parametrize("categorical", [False, True])
@pytest.mark.parametrize(("metrics", "point"), [(("mase", "rmsse"), None), (("mase", "crps"), "crps")])
def test_one_pass_gives_each_function_its_own_tables(categorical, metrics, point):
    """The combined pass against its oracles, the two functions called apart (the pipeline's tables)."""
    spec = lb.LeaderboardSpec(
        metrics=metrics, baseline="naive", random_walk="naive", horizon=3, stride=3,
        quantile_levels=(0.1, 0.5, 0.9), min_cell=2,
    )  # fmt: skip
    table = _table(categorical=categorical)
    boards, bands = lb.leaderboard_and_interval_tables(table, spec=spec, point_metric=point)
    assert boards == lb.leaderboard_tables(table, spec=spec)
    expected = lb.interval_tables(
        table,
        point_metric=point or metrics[0],
        quantile_levels=spec.quantile_levels,
        min_cell=spec.min_cell,
        spec=spec,
    )
    assert bands == expected
    assert len(bands) and len(boards)


@pytest.mark.parametrize("seed", range(6))
def test_wide_block_grid_is_the_pivot_table_it_replaces(seed):
    """The scattered [(series, origin), model] frame equals pandas' pivot_table exactly, including a
    series and a model category no block has, and falls back to it where a block has two rows."""
    rng = np.random.default_rng(seed)
    n = 40
    cats, models = [f"s{i}" for i in range(6)], ["m0", "m1", "m2"]
    blocks = pd.DataFrame(
        {
            "series_id": pd.Categorical(rng.choice(cats, n), categories=[*cats, "zz"]),
            "origin": pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 4, n) * 31, "D"),
            "model": pd.Categorical(rng.choice(models, n), categories=[*models, "m9"]),
            "mase": rng.random(n),
        }
    )
    unique = blocks.drop_duplicates(["series_id", "origin", "model"], ignore_index=True)
    for frame in (unique, blocks):  # blocks may hold two rows of one block: pivot_table's own path
        expected = frame.pivot_table(
            index=["series_id", "origin"], columns="model", values="mase", aggfunc="first", observed=True
        )
        pd.testing.assert_frame_equal(table_tests._wide(frame, "mase"), expected, check_exact=True)
    assert block_grid(unique, "mase", categorical=True) is not None  # the scatter, not the fallback, ran
    unique.loc[unique.index[::5], "mase"] = np.nan  # NaN scores: the unstack of the labels keeps them
    labels = unique.assign(series_id=unique["series_id"].astype(object), model=unique["model"].astype(object))
    expected = labels.set_index(["series_id", "origin", "model"])["mase"].unstack("model")
    for frame in (unique, labels):  # categorical keys by the scatter, object ones by the reshape
        pd.testing.assert_frame_equal(prepared_wide(frame, "mase"), expected, check_exact=True)
    assert block_grid(unique, "mase", categorical=False) is not None


@pytest.mark.parametrize("metric", [m for m, spec in METRICS.items() if spec.step_loss is not None])
def test_step_loss_a_block_of_rows_at_a_time_is_the_whole_tables_bit_for_bit(metric, monkeypatch):
    table = _table()
    table.loc[table.index[::5], ["scale_mae", "scale_rmse"]] = 0.0  # zero scales: NaN losses, in and across blocks
    table.loc[table.index[::7], ["lo80", "hi80"]] = np.nan
    crps = np.random.default_rng(0).random(len(table)) if "crps" in METRICS[metric].terms else None
    whole = step_loss(table, metric, crps=crps)
    monkeypatch.setattr(aggregate, "STEP_LOSS_CHUNK", 7)  # blocks that end inside models and series
    blocks = step_loss(table, metric, crps=crps)
    assert whole.dtype == blocks.dtype == np.float64
    np.testing.assert_array_equal(blocks, whole)  # equal bits (NaN where NaN)
    assert np.isfinite(whole).any()
    if METRICS[metric].scale_column is not None:
        assert np.isnan(whole).any()  # the zero-scale rows


@pytest.mark.parametrize("metrics", [("mase", "rmsse"), ("rmsse", "mase"), ("rmsse",), ("mase", "crps")])
def test_the_tables_do_not_depend_on_the_step_loss_block_size(metrics, monkeypatch):
    """Losses placed on the step grid a block of rows at a time (and the absolute-error grid released
    once no metric left reads it) give the same tables as whole-table losses."""
    spec = lb.LeaderboardSpec(
        metrics=metrics, baseline="naive", random_walk="naive", horizon=3, stride=3,
        quantile_levels=(0.1, 0.5, 0.9), min_cell=2,
    )  # fmt: skip
    table = _table(categorical=True)
    expected = lb.leaderboard_tables(table, spec=spec)
    for chunk in (1, 5, 64):
        monkeypatch.setattr(aggregate, "STEP_LOSS_CHUNK", chunk)
        monkeypatch.setattr(_stepgrid, "STEP_LOSS_CHUNK", chunk)
        assert lb.leaderboard_tables(table, spec=spec) == expected
    assert any(row["dm_p"] is not None for board in expected for row in board["rows"])  # tests ran


@pytest.mark.parametrize("shuffle", [False, True])
def test_per_model_block_scores_split_the_sample_paths_with_the_rows(shuffle):
    table = _table(seed=5) if shuffle else _canonical(_table(seed=5))
    samples = np.random.default_rng(1).normal(size=(len(table), 16)) + table["point"].to_numpy()[:, None]
    kwargs = {"metrics": ["mase", "crps"], "samples": samples, "crps_kind": "exact_samples"}
    keys = ["model", "unit", "series_id", "origin"]
    got = block_scores_by_model(table, **dict(kwargs)).sort_values(keys, ignore_index=True)
    expected = block_scores(table, **kwargs).sort_values(keys, ignore_index=True)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert got["crps"].notna().all()
