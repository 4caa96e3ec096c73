"""Winner per demand class (paper Table 4) on a constructed score set with a different winner per class."""

from __future__ import annotations

import pytest

from tests._analysis_support import score_table
from tycheon.analysis.class_winners import class_winners
from tycheon.errors import InputError

CLASS_OF = ["smooth", "erratic", "intermittent", "lumpy"]
# error sd per class and model: "a" leads smooth and erratic, "b" intermittent, "c" lumpy
SD = {
    "smooth": {"base": 3.0, "a": 1.0, "b": 1.5, "c": 2.0, "rw": 2.5},
    "erratic": {"base": 3.0, "a": 1.0, "b": 2.0, "c": 1.5, "rw": 2.5},
    "intermittent": {"base": 3.0, "a": 2.0, "b": 1.0, "c": 2.5, "rw": 1.5},
    "lumpy": {"base": 3.0, "a": 2.0, "b": 2.5, "c": 1.0, "rw": 1.5},
}


def _err(unit, model, rng, shape):
    sd = [SD[CLASS_OF[s % 4]][model] for s in range(shape[0])]
    return rng.normal(0.0, 1.0, shape) * [[[v]] for v in sd]


def test_each_class_gets_its_own_top_three_and_the_pooled_winner_leads_two_of_four():
    table = score_table(
        {"series": 80},
        ["base", "a", "b", "c", "rw"],
        _err,
        demand_class=lambda s, o: CLASS_OF[s % 4] if o < 7 else "undefined",
    )
    res = class_winners(table, baseline="base", metric="rmsse")
    assert res.pooled_winner == "a" and res.pooled_winner_leads == 2 and res.n_classes == 4
    assert res.distinct_winners == 3
    leaders = {r.demand_class: [t.model for t in r.top] for r in res.rows}
    assert leaders == {
        "smooth": ["a", "b", "c"],
        "erratic": ["a", "c", "b"],
        "intermittent": ["b", "rw", "a"],
        "lumpy": ["c", "rw", "a"],
    }
    for r in res.rows:
        assert r.baseline_rank == 5 and r.n_models == 5 and r.n_blocks == 20 * 7
        assert r.top[0].value < r.top[1].value < r.top[2].value < r.baseline_value
    smooth = table[(table["demand_class"] == "smooth") & (table["model"] == "a")]
    by_block = smooth.assign(se=(smooth["point"] - smooth["actual"]) ** 2).groupby(["series_id", "origin"])["se"].mean()
    assert res.rows[0].top[0].value == pytest.approx(float((by_block**0.5).mean()))  # mean block RMSSE, scale 1
    assert res.class_counts == {"smooth": 140, "erratic": 140, "intermittent": 140, "lumpy": 140, "undefined": 80}
    assert (res.adi_cutoff, res.cv2_cutoff) == (1.32, 0.49)


def test_an_absent_unit_or_baseline_is_named():
    table = score_table({"series": 8}, ["base", "a"], _err)
    with pytest.raises(InputError, match="unit 'total'"):
        class_winners(table, baseline="base", metric="rmsse", unit="total")
    with pytest.raises(InputError, match="prod"):
        class_winners(table, baseline="prod", metric="rmsse")
