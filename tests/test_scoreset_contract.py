"""The score-set contract 2.0.0 (tycheon.contract): categorical text columns with sorted categories,
int16 ``step`` / ``season_length``, dictionary-encoded parquet, and 1.x sidecars still read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tycheon.backtest.engine import run
from tycheon.backtest.factories import instance_factory
from tycheon.backtest.protocol import RollingOrigin
from tycheon.backtest.scoreset import ScoreSet, concat_tables, conform_table, key_order, sorted_categorical
from tycheon.contract import SCORESET_COLUMNS, SCORESET_SCHEMA, SCORESET_SCHEMA_KEY, TEXT_COLUMNS
from tycheon.testing.toys import MeanForecaster, NaiveForecaster, toy_panel

ROOT = Path(__file__).resolve().parents[1]
V0005 = ROOT / "benchmarks" / "results" / "small" / "v0005.json"


def _scores(n_origins: int = 4, **kwargs) -> ScoreSet:
    panel = toy_panel(n_series=12, n_periods=40, seed=3, zero_share=0.3)
    protocol = RollingOrigin(horizon=3, stride=3, n_origins=n_origins, mode="analysis")
    factories = {"naive": instance_factory(NaiveForecaster()), "mean": instance_factory(MeanForecaster())}
    return run(panel, protocol, factories, units=("series", "total", "groups:3"), quantile_levels=(0.1, 0.9), **kwargs)


def _assert_contract(table: pd.DataFrame) -> None:
    for name, dtype in SCORESET_COLUMNS.items():
        if dtype == "category":
            col = table[name]
            assert isinstance(col.dtype, pd.CategoricalDtype), name
            cats = list(col.cat.categories)
            assert cats == sorted(set(col.astype(str))), name  # sorted, and exactly the values present
            assert not col.cat.ordered
        else:
            assert str(table[name].dtype) == dtype, name


def test_the_engine_writes_the_text_columns_as_sorted_categoricals_and_small_integers():
    scores = _scores()
    _assert_contract(scores.table)
    assert scores.table["series_id"].cat.codes.dtype.itemsize <= 2  # a few dozen series: one or two bytes


def test_backends_give_the_same_codes_and_categories():
    seq, par = _scores(backend="sequential"), _scores(backend="joblib", n_jobs=2, chunk_size=5)
    pd.testing.assert_frame_equal(seq.table, par.table, check_exact=True)
    for name in TEXT_COLUMNS:
        assert np.array_equal(seq.table[name].cat.codes, par.table[name].cat.codes)


def test_the_categorical_table_holds_the_same_values_as_its_object_form():
    table = _scores().table
    legacy = table.astype({n: object for n in TEXT_COLUMNS}).astype({"step": np.int64, "season_length": np.int64})
    back = conform_table(legacy)
    pd.testing.assert_frame_equal(back, table, check_exact=True)
    assert conform_table(table) is table  # already in form: no copy


def test_conform_drops_unused_and_sorts_unsorted_categories():
    col = pd.Categorical(["b", "a", "b"], categories=["c", "b", "a"])
    fixed = sorted_categorical(col)
    assert list(fixed.categories) == ["a", "b"] and list(fixed) == ["b", "a", "b"]
    with pytest.raises(ValueError, match="missing"):
        sorted_categorical(pd.Categorical(["a", None]))
    with pytest.raises(ValueError, match="int16"):
        conform_table(pd.DataFrame({"step": np.array([1, 70000])}))


def test_concat_keeps_categoricals_with_the_sorted_union_of_categories():
    scores = _scores()
    parts = [scores.select(model=m).table for m in ("naive", "mean")]
    joined = concat_tables(parts)
    assert isinstance(joined["model"].dtype, pd.CategoricalDtype)
    assert list(joined["model"].cat.categories) == ["mean", "naive"]
    expected = pd.concat([p.astype({n: object for n in TEXT_COLUMNS}) for p in parts], ignore_index=True)
    pd.testing.assert_frame_equal(joined.astype({n: object for n in TEXT_COLUMNS}), expected, check_exact=True)


def test_concat_in_key_order_equals_pandas_sort_values_and_releases_the_inputs():
    scores = _scores()
    parts = [scores.select(model=m).table for m in ("naive", "mean")]  # model-major, the engine's order
    expected = (
        pd.concat([p.astype({n: object for n in TEXT_COLUMNS}) for p in parts], ignore_index=True)
        .sort_values(["unit", "model", "series_id", "origin", "step"], kind="stable")
        .reset_index(drop=True)
    )
    copies = [p.copy() for p in parts]
    joined = concat_tables(copies, sort_keys=True, release=True)
    _assert_contract(joined)
    pd.testing.assert_frame_equal(joined.astype({n: object for n in TEXT_COLUMNS}), expected, check_exact=True)
    assert all(c.shape[1] == 0 for c in copies)  # every column was taken out of the inputs
    # the order of the inputs does not matter, and without release they are left as they were
    again = concat_tables(parts[::-1], sort_keys=True)
    pd.testing.assert_frame_equal(again, joined, check_exact=True)
    assert all(p.shape[1] == joined.shape[1] for p in parts)


def test_key_order_equals_a_stable_sort_of_the_labels_with_missing_keys_last():
    table = pd.DataFrame(
        {
            "unit": pd.Categorical(["series", "total", "series", "series"]),
            "model": pd.Categorical(["b", "a", "a", None], categories=["a", "b"]),
            "series_id": ["s2", "t", "s10", "s2"],
            "origin": pd.to_datetime(["2020-01-01"] * 4),
            "step": np.array([1, 1, 2, 1], dtype=np.int16),
        }
    )
    expected = table.sort_values(["unit", "model", "series_id", "origin", "step"], kind="stable", na_position="last")
    assert list(key_order(table)) == list(expected.index)


def test_parquet_round_trip_is_dictionary_encoded_and_records_the_contract(tmp_path):
    scores = _scores()
    path = tmp_path / "s.parquet"
    scores.to_parquet(path)
    schema = pq.read_schema(path)
    assert schema.metadata[SCORESET_SCHEMA_KEY] == SCORESET_SCHEMA.encode()
    for name in TEXT_COLUMNS:
        assert pa.types.is_dictionary(schema.field(name).type), name
    back = ScoreSet.from_parquet(path)
    pd.testing.assert_frame_equal(back.table, scores.table, check_exact=True)


def test_a_legacy_object_score_set_file_reads_into_the_current_form(tmp_path):
    table = _scores().table
    legacy = table.astype({n: object for n in TEXT_COLUMNS}).astype({"step": np.int64, "season_length": np.int64})
    path = tmp_path / "legacy.parquet"
    arrow = pa.Table.from_pandas(legacy, preserve_index=False)
    meta = {"quantile_levels": [0.1, 0.9], "n_samples": 0, "meta": {}}
    pq.write_table(arrow.replace_schema_metadata({b"tycheon": json.dumps(meta).encode()}), path)
    pd.testing.assert_frame_equal(ScoreSet.from_parquet(path).table, table, check_exact=True)


@pytest.mark.slow
def test_the_committed_v0005_sidecar_rewritten_in_the_new_form_still_gives_every_table(tmp_path):
    """v0005's sidecar (contract 1.x, object columns) rewritten as contract 2.0.0: every table computed
    from it is the one computed from the original file, and the values are those of the original file.
    (v0005 was computed by statistics version 1, so its published tables are history, verified by hash:
    the comparison is of today's tables from both files.)"""
    from benchmarks.results_io import file_sha256, read_results, read_score_frame
    from benchmarks.score_source import score_source
    from benchmarks.verify import _file_source, _tables

    doc = json.loads(V0005.read_text())
    old = read_score_frame(V0005)  # the sidecar as its parts rebuild it
    assert old["model"].dtype == object  # a 1.x sidecar
    frame = conform_table(old)
    for tag in ("dataset", "protocol"):
        frame[tag] = sorted_categorical(frame[tag])
    arrow = pa.Table.from_pandas(frame, preserve_index=False)
    arrow = arrow.replace_schema_metadata({**arrow.schema.metadata, SCORESET_SCHEMA_KEY: SCORESET_SCHEMA.encode()})
    tmp = tmp_path / "new.parquet"
    pq.write_table(arrow, tmp)
    sha = file_sha256(tmp)
    side = tmp_path / f"v0005-{sha}.parquet"
    shutil.move(tmp, side)
    assert pa.types.is_dictionary(pq.read_schema(side).field("series_id").type)
    doc["sidecar"].update(path=side.name, sha256=sha)
    (tmp_path / "v0005.json").write_text(json.dumps(doc))
    back = pd.read_parquet(side)
    pd.testing.assert_frame_equal(
        back.astype({n: object for n in (*TEXT_COLUMNS, "dataset", "protocol")}).astype(
            {"step": np.int64, "season_length": np.int64}
        ),
        old,
        check_exact=True,
    )
    published = read_results(V0005)
    original = score_source(V0005, published)
    rewritten = _file_source(side)
    assert _tables(published, rewritten, list(rewritten.columns)) == _tables(
        published, original, list(original.columns)
    )


def test_a_band_level_without_any_band_costs_no_memory_and_reads_as_nan(tmp_path):
    scores = _scores(n_origins=8)  # at most 7 earlier errors per cell: 80% bands, too few for any 95% band
    table = scores.table
    assert not np.isfinite(table["lo95"].to_numpy()).any() and not np.isfinite(table["hi95"].to_numpy()).any()
    for name in ("lo95", "hi95"):
        assert table[name].to_numpy().strides == (0,), name  # one NaN, broadcast
    assert table["lo80"].to_numpy().strides == (8,) and table["has_band"].any()  # the 80% band is there
    picked = scores.select(model="naive").table
    assert picked["lo95"].isna().all() and len(picked)
    scores.to_parquet(tmp_path / "s.parquet")
    pd.testing.assert_frame_equal(ScoreSet.from_parquet(tmp_path / "s.parquet").table, table, check_exact=True)


def _every_column_written(monkeypatch) -> None:
    """The writer as it was before constant columns: every column allocated and written row by row."""
    import tycheon.backtest.records as records_module

    monkeypatch.setattr(records_module, "CONSTANT_COLUMNS", ())


@pytest.mark.parametrize(
    "kwargs",
    [
        {"units": ("series",)},
        {"units": ("series",), "backend": "joblib", "n_jobs": 2, "chunk_size": 5},
        {"units": ("series", "total", "groups:3")},
        {"units": ("total", "series"), "quantile_levels": (0.1, 0.9), "n_samples": 4},
    ],
)
def test_constant_columns_are_one_value_until_another_arrives_and_equal_every_row_written(monkeypatch, kwargs):
    from tycheon.backtest.columns import CONSTANT_COLUMNS
    from tycheon.backtest.factories import forecaster_factory

    panel = toy_panel(n_series=12, n_periods=40, seed=3, zero_share=0.3)
    protocol = RollingOrigin(horizon=3, stride=3, n_origins=4, mode="analysis")
    # one model with its own quantiles and one without: has_quantiles varies where levels are asked for
    factories = {"naive": instance_factory(NaiveForecaster()), "croston": forecaster_factory("croston")}
    table = run(panel, protocol, factories, **kwargs).table
    with monkeypatch.context() as m:
        _every_column_written(m)
        expected = run(panel, protocol, factories, **kwargs).table
    pd.testing.assert_frame_equal(table, expected, check_exact=True)
    for name in CONSTANT_COLUMNS:
        values = table[name].cat.codes.to_numpy() if name == "unit" else table[name].to_numpy()
        one_value = len(pd.unique(expected[name])) == 1
        assert (values.strides == (0,)) == one_value, name  # broadcast exactly where every row holds one value
    if kwargs["units"] == ("series",):
        assert table["has_samples"].to_numpy().strides == (0,)  # no model gives sample paths
    if "quantile_levels" in kwargs:  # naive gives quantiles, croston none: written per row
        assert table["has_quantiles"].to_numpy().strides == (1,) and table["has_quantiles"].any()
    assert (table["unit"].cat.codes.to_numpy().strides == (0,)) == (len(kwargs["units"]) == 1)


def test_a_value_of_other_bits_allocates_the_column_with_the_rows_written_before():
    from tycheon.backtest.records import ScoreSetWriter

    writer = ScoreSetWriter(6)
    writer._put("weight", slice(0, 3), np.array([1.0, 1.0]), np.array([0, 1, 1]))
    writer._put("weight", slice(3, 4), np.array([1.0]), np.array([0]))
    assert "weight" not in writer.data  # one value so far: nothing allocated
    writer._put("weight", slice(4, 6), np.array([-0.0]), np.array([0, 0]))  # equal to 0.0, not 1.0's bits
    assert list(writer.data["weight"][:4]) == [1.0] * 4 and np.signbit(writer.data["weight"][4:]).all()
    writer._put("has_samples", slice(0, 6), False)
    writer._put("has_samples", slice(2, 3), True)
    assert list(writer.data["has_samples"][:4]) == [False, False, True, False]


def test_the_buffers_leave_out_only_the_columns_the_settings_make_constant():
    from tycheon.backtest.columns import ColumnBuffers, known_constant

    assert known_constant(n_units=1, quantile_levels=(), n_samples=0) == ("unit", "has_quantiles", "has_samples")
    assert known_constant(n_units=3, quantile_levels=(0.1, 0.9), n_samples=20) == ()
    assert known_constant(n_units=2, quantile_levels=(), n_samples=5) == ("has_quantiles",)
    buffers = ColumnBuffers(10, constant=known_constant(n_units=1, quantile_levels=(), n_samples=0))
    prepared = buffers.take(10)
    assert {"unit", "has_quantiles", "has_samples"}.isdisjoint(prepared)
    assert {"season_length", "weight", "model", "point"} <= set(prepared)  # may vary: prepared as before


def test_a_per_series_array_found_constant_is_not_compared_again_and_another_value_still_allocates():
    from tycheon.backtest.records import ScoreSetWriter

    writer = ScoreSetWriter(4)
    shared = np.array([2.0, 2.0])
    writer._put("weight", slice(0, 2), shared, np.array([0, 1]))
    assert writer._checked["weight"] is shared and "weight" not in writer.data
    writer._put("weight", slice(2, 3), shared, np.array([1]))  # the same array (another model's block)
    assert "weight" not in writer.data
    writer._put("weight", slice(3, 4), np.array([3.0]), np.array([0]))  # another array, another value
    assert list(writer.data["weight"]) == [2.0, 2.0, 2.0, 3.0]


# ------------------------------------------------ the key order's gather, against a sort


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_row_order_gathers_a_column_frame_by_frame_as_a_concatenation_and_a_take_would(data):
    """RowOrder.gather fills the result frame by frame (each frame's stretches of it), or concatenates
    where the frames' rows interleave: either way the column of positions[i] for every row i, with
    empty frames (never asked for) and a wider dtype in a later frame."""
    from tycheon.backtest.scoreset import RowOrder

    lengths = data.draw(st.lists(st.integers(0, 40), min_size=1, max_size=5))
    n = sum(lengths)
    if data.draw(st.booleans()):  # stretches per frame, as a join of one-model tables gives
        offsets = np.concatenate(([0], np.cumsum(lengths)))
        pieces = [np.arange(offsets[i], offsets[i + 1]) for i in range(len(lengths))]
        pieces = [p[np.random.default_rng(i).permutation(len(p))] for i, p in enumerate(pieces)]
        positions = np.concatenate(data.draw(st.permutations(pieces)) or [np.zeros(0, np.int64)]).astype(np.int64)
    else:
        positions = np.random.default_rng(data.draw(st.integers(0, 99))).permutation(n)
    wide = data.draw(st.sampled_from([-1] + [i for i, k in enumerate(lengths) if k]))
    parts = [(np.arange(k, dtype=np.float64 if i == wide else np.float32) + 1000.0 * i) for i, k in enumerate(lengths)]
    order = RowOrder(tuple(lengths), positions)
    got = order.gather(lambda i: parts[i])
    expected = np.concatenate(parts)[positions]
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    runs = order.runs
    assert sum(b - a for _, a, b in runs) == n
    assert all(lengths[f] > 0 for f, _, _ in runs)


def test_a_join_of_one_model_tables_is_gathered_by_stretches_and_equals_the_sort():
    from tycheon.backtest.scoreset import concat_in_key_order

    scores = _scores()
    parts = [scores.select(model=m).table for m in ("naive", "mean")]
    joined, order = concat_in_key_order([p.copy() for p in parts])
    assert order is not None
    assert len(order.runs) == 2 * joined["unit"].nunique()  # one stretch per (unit, model)
    plain = pd.concat([p.astype({n: object for n in TEXT_COLUMNS}) for p in parts], ignore_index=True)
    np.testing.assert_array_equal(order.positions, key_order(conform_table(plain)))
    point = order.gather(lambda i: parts[i]["point"].to_numpy())
    np.testing.assert_array_equal(point, joined["point"].to_numpy())


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(0, 9), max_size=40),
    st.permutations([f"c{i}" for i in range(10)]),
)
def test_sorted_categorical_drops_unused_categories_as_pandas_does(codes, categories):
    """The lookup renumbering against pandas' own remove_unused_categories (and a sort of the rest)."""
    values = pd.Categorical.from_codes(codes, categories=categories)
    got = sorted_categorical(values)
    expected = values.remove_unused_categories()
    expected = expected.reorder_categories(sorted(expected.categories))
    assert list(got.categories) == list(expected.categories) == sorted({categories[c] for c in codes})
    np.testing.assert_array_equal(got.codes, expected.codes)
    assert list(got) == list(values)
