"""Grouping a score set into blocks by integer codes (block scores, the scale check, the DM layouts of a
leaderboard): the same groups, order and values as grouping by the key values, whatever the key dtype."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests._analysis_support import score_table
from tycheon.analysis._stepgrid import _step_grid
from tycheon.backtest.scoreset import sorted_categorical
from tycheon.errors import ScaleMismatchError
from tycheon.metrics.aggregate import BLOCK_KEYS, block_scores, check_scale_consistency, column_values, group_codes
from tycheon.stats.dm import pooled_layout

TEXT = ("model", "unit", "series_id", "demand_class")


def _err(unit, model, rng, shape):
    return rng.normal(0.0, {"a": 1.0, "b": 2.0, "c": 3.0}[model], shape)


def _tables(seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The same shuffled rows twice: text columns as objects, and as the engine's sorted categoricals."""
    table = score_table({"series": 12, "total": 1}, ["a", "b", "c"], _err, n_origins=4, seed=seed)
    rng = np.random.default_rng(seed)
    block = table.groupby(["unit", "series_id", "origin"], sort=False).ngroup().to_numpy()
    table["scale_mae"] = rng.uniform(0.5, 2.0, block.max() + 1)[block]  # one scale per (unit, series, origin)
    table = table.iloc[rng.permutation(len(table))].reset_index(drop=True)
    categorical = table.assign(**{c: sorted_categorical(table[c]) for c in TEXT})
    return table, categorical


def _loop_blocks(table: pd.DataFrame) -> dict[tuple, tuple[float, float]]:
    """MASE and WAPE per block by a plain loop over the rows (the oracle)."""
    acc: dict[tuple, list[float]] = {}
    for r in table.itertuples(index=False):
        key = (r.model, r.unit, r.series_id, r.origin)
        a = acc.setdefault(key, [0.0, 0.0, 0.0, r.scale_mae])
        a[0] += abs(r.point - r.actual)
        a[1] += abs(r.actual)
        a[2] += 1
    return {k: (v[0] / v[2] / v[3], v[0] / v[1]) for k, v in acc.items()}


def test_when_keys_are_categorical_or_text_then_block_scores_are_the_same_frame_and_the_loop_values():
    text, cat = _tables()
    a = block_scores(text, metrics=("mase", "wape", "rmsse"))
    b = block_scores(cat, metrics=("mase", "wape", "rmsse"))
    pd.testing.assert_frame_equal(a, b, check_exact=True)  # same blocks, same order, same bits and dtypes
    oracle = _loop_blocks(text)
    assert len(a) == len(oracle)
    for r in a.itertuples(index=False):
        mase, wape = oracle[(r.model, r.unit, r.series_id, r.origin)]
        assert (r.mase, r.wape) == pytest.approx((mase, wape), rel=1e-12)
    first_seen = list(dict.fromkeys(zip(*(text[k] for k in BLOCK_KEYS), strict=True)))
    assert list(zip(*(a[k] for k in BLOCK_KEYS), strict=True)) == first_seen  # blocks in order of first row


@pytest.mark.parametrize("keys", [("model",), ("origin",), BLOCK_KEYS, ("unit", "series_id", "origin")])
def test_group_codes_number_groups_as_a_groupby_of_the_values_in_order_of_appearance(keys):
    text, cat = _tables(seed=3)
    expected = text.groupby(list(keys), sort=False).ngroup().to_numpy()
    np.testing.assert_array_equal(group_codes(text, keys), expected)
    np.testing.assert_array_equal(group_codes(cat, keys), expected)


def test_when_a_key_is_missing_then_grouping_falls_back_to_pandas_and_drops_that_row():
    text, _ = _tables()
    text.loc[5, "series_id"] = None
    assert group_codes(text, BLOCK_KEYS) is None
    blocks = block_scores(text, metrics=("mase",))
    assert blocks["n_steps"].sum() == len(text) - 1


def test_a_block_with_a_second_scale_is_refused_naming_the_first_such_block_on_either_path():
    text, cat = _tables()
    bad_row = 40
    for table in (text, cat):
        broken = table.copy()
        broken.loc[bad_row, "scale_mae"] *= 1.5
        with pytest.raises(ScaleMismatchError, match=f"1 block.*'series_id': '{table.loc[bad_row, 'series_id']}'"):
            check_scale_consistency(broken)
        broken.loc[bad_row, "scale_mae"] = np.inf  # an infinite scale: the grouped path, refused as before
        with pytest.raises(ScaleMismatchError):
            check_scale_consistency(broken)
        check_scale_consistency(table)  # the intact table passes


def test_column_values_equal_to_numpy_at_the_rows_including_missing_categories():
    _, cat = _tables()
    cat["demand_class"] = cat["demand_class"].cat.add_categories(["undefined"])
    cat.loc[7, "demand_class"] = np.nan
    rows = np.array([3, 7, 7, 0, len(cat) - 1])
    for c in (*TEXT, "origin", "actual"):
        for got, want in (
            (column_values(cat[c], rows), cat[c].to_numpy()[rows]),
            (column_values(cat[c]), cat[c].to_numpy()),
        ):
            assert got.dtype == want.dtype
            assert pd.isna(got).tolist() == pd.isna(want).tolist()
            assert [x for x in got if not pd.isna(x)] == [x for x in want if not pd.isna(x)]


def test_a_leaderboard_grid_layout_is_the_dm_layout_of_the_kept_labels():
    _, cat = _tables(seed=5)
    series = cat[cat["unit"] == "series"].reset_index(drop=True)
    grid = _step_grid(series)
    labels = series.iloc[np.unique(grid.row, return_index=True)[1]]  # one row per grid key, in key order
    rng = np.random.default_rng(0)
    for keep in (np.ones(grid.n_keys, dtype=bool), rng.random(grid.n_keys) < 0.6):
        mine = grid.layout(keep)
        ref = pooled_layout(labels["series_id"].to_numpy()[keep], labels["origin"].to_numpy()[keep])
        np.testing.assert_array_equal(mine.block, ref.block)
        assert mine.n_blocks == ref.n_blocks
        same = mine.block_series[1:] == mine.block_series[:-1]
        np.testing.assert_array_equal(same, ref.block_series[1:] == ref.block_series[:-1])
        assert grid.layout(keep) is mine  # built once per mask


def test_categorical_keys_keep_the_tables_categories_with_the_same_blocks_and_values():
    _, categorical = _tables(seed=3)
    plain = block_scores(categorical, metrics=["mase", "wape"])
    kept = block_scores(categorical, metrics=["mase", "wape"], categorical_keys=True)
    for c in (*BLOCK_KEYS, "demand_class"):
        if c in categorical.columns and isinstance(categorical[c].dtype, pd.CategoricalDtype):
            assert kept[c].dtype == categorical[c].dtype  # the table's own categories, not re-derived
    as_values = kept.assign(
        **{c: kept[c].to_numpy() for c in kept.columns if isinstance(kept[c].dtype, pd.CategoricalDtype)}
    )
    pd.testing.assert_frame_equal(as_values, plain, check_exact=True)
