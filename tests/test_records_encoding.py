"""The demand-class column encoded from the tasks' class positions equals the column encoded from the
class names (tycheon.backtest.records)."""

from __future__ import annotations

import numpy as np

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
