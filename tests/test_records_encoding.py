"""How the score-set writer encodes columns (tycheon.backtest.records): the demand-class column from the
tasks' class positions equals the column from the class names, and blocks that share a target array
write the same rows whether or not the writer copies their model-independent columns."""

from __future__ import annotations

import numpy as np
import pytest

from tycheon.backtest import records
from tycheon.data.demand import CLASSES


def test_codes_from_class_positions_give_the_same_categorical_as_codes_from_the_names():
    names = np.asarray(CLASSES, dtype=object)
    rng = np.random.default_rng(5)
    blocks = [rng.integers(0, len(CLASSES) - 1, size=n).astype(np.int8) for n in (40, 0, 17, 60)]
    by_name, by_position = records._Dictionary("demand_class", "int8"), records._Dictionary("demand_class", "int8")
    from_names = np.concatenate([by_name.encode(names[b]) if len(b) else np.empty(0, np.int64) for b in blocks])
    from_positions = np.concatenate([by_position.encode_positions(b, names) for b in blocks])
    got = by_position.categorical(from_positions.astype(np.int8))
    want = by_name.categorical(from_names.astype(np.int8))
    assert list(got.categories) == list(want.categories) == sorted({names[p] for b in blocks for p in b})
    assert (got.codes == want.codes).all() and len(got) == 117


def _blocks(*, share_inputs: bool) -> list[records.Block]:
    """Two models' blocks at one origin over the same target array (as the engine's tasks hand them out),
    with the same series and feature arrays or, unless ``share_inputs``, equal-shaped other ones."""
    import pandas as pd

    rng = np.random.default_rng(11)
    n, h = 9, 3
    periods = pd.date_range("2020-01-01", periods=h, freq="MS")
    actual = rng.normal(size=(n, h))
    actual[[1, 4], [0, 2]] = np.nan  # unobserved targets: dropped rows, so the layout gathers
    avail = (periods.asi8[None, :] + rng.integers(0, 10**15, size=(n, h))).astype("datetime64[ns]")
    ids = np.asarray([f"s{i}" for i in range(12)], dtype=object)

    def inputs() -> dict[str, object]:
        rows = np.sort(rng.choice(12, size=n, replace=False))
        codes = rng.integers(0, len(CLASSES) - 1, size=n).astype(np.int8)
        return {
            "series_rows": rows,
            "series_ids": ids[rows],
            "demand_code": codes,
            "demand_class": np.asarray(CLASSES, dtype=object)[codes],
            "season_length": np.full(n, 12, dtype=np.int64),
            "scale_mae": rng.uniform(1, 2, size=n),
            "scale_rmse": rng.uniform(1, 2, size=n),
            "weight": np.ones(n),
        }

    first = inputs()
    out = []
    for k, model in enumerate(("a", "b")):
        keep = np.isfinite(actual)
        out.append(
            records.Block(
                model=model,
                unit="series",
                unit_key=k,
                n_unit_series=12,
                origin=periods[0],
                target_periods=periods,
                actual=actual,
                available_at=avail,
                point=rng.normal(size=(n, h)),
                quantiles=None,
                samples=None,
                unit_series_ids=ids,
                radii=(np.where(rng.uniform(size=int(keep.sum())) < 0.5, np.nan, 1.0), None),
                **(first if share_inputs or k == 0 else inputs()),  # type: ignore[arg-type]
            )
        )
    return out


def test_blocks_sharing_a_target_array_write_the_rows_each_would_write_alone():
    """The writer copies the model-independent columns from the first block of a layout only when the
    inputs are the same objects; the table equals one written block by block without any sharing."""
    for share in (True, False):
        blocks = _blocks(share_inputs=share)
        shared = records.build_scoreset(blocks).table
        alone = records.ScoreSetWriter(sum(int(np.isfinite(b.actual).sum()) for b in blocks))
        start = 0
        for b in blocks:
            start += alone.write(b, start, layouts=None)  # a fresh layout per block: everything gathered
        want = alone.finish().table
        assert list(shared.columns) == list(want.columns)
        for name in shared.columns:
            assert shared[name].equals(want[name]), (share, name)
        second = shared[shared["model"] == "b"]
        assert (second["series_id"].astype(str).to_numpy() == blocks[1].series_ids[0:1]).any()
        if not share:  # other series and scales: the second block's rows are its own, not a copy
            scales = dict(zip(blocks[1].series_ids, blocks[1].scale_mae, strict=True))
            got = second["scale_mae"].to_numpy()
            assert np.array_equal(got, second["series_id"].astype(str).map(scales).to_numpy())


def test_a_first_encoding_assigns_the_codes_one_lookup_at_a_time_would():
    rng = np.random.default_rng(3)
    values = np.asarray([f"s{i}" for i in rng.integers(0, 90, size=500)], dtype=object)
    bulk, single = records._Dictionary("series_id", "int8"), records._Dictionary("series_id", "int8")
    got = bulk.encode(values)  # empty dictionary: all codes at once
    want = np.asarray([single.code(v) for v in values])
    assert np.array_equal(got, want) and bulk.codes == single.codes
    more = np.asarray(["s5", "new", "s7", "new"], dtype=object)  # later values: looked up and appended
    assert np.array_equal(bulk.encode(more), [single.code(v) for v in more])
    for words in (records._Dictionary("series_id", "int8"), bulk):  # int8 holds at most 128 values
        with pytest.raises(ValueError, match="more than 128 distinct values"):
            words.encode(np.asarray([f"x{i}" for i in range(200)], dtype=object))
