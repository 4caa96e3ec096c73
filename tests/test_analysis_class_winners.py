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
    res = class_winners(table, baseline="base", metric="rmsse", min_cell=30)
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
        assert r.cell_ok and r.cell_count == 20 * 7 and r.cell_reason is None
        assert r.top[0].value < r.top[1].value < r.top[2].value < r.baseline_value
    smooth = table[(table["demand_class"] == "smooth") & (table["model"] == "a")]
    by_block = smooth.assign(se=(smooth["point"] - smooth["actual"]) ** 2).groupby(["series_id", "origin"])["se"].mean()
    assert res.rows[0].top[0].value == pytest.approx(float((by_block**0.5).mean()))  # mean block RMSSE, scale 1
    assert res.class_counts == {"smooth": 140, "erratic": 140, "intermittent": 140, "lumpy": 140, "undefined": 80}
    assert (res.adi_cutoff, res.cv2_cutoff) == (1.32, 0.49)
    assert (res.cell_ok, res.cell_count, res.min_cell, res.cell_reason) == (True, 640, 30, None)
    assert res.cell_counts == "scored blocks (series x origin)"


def test_a_class_below_the_minimum_cell_names_no_leader_and_is_not_counted_among_the_classes_led():
    """The same score set with the erratic class on 4 series x 7 origins = 28 blocks: below 30, so its row
    keeps its counts but names no top three and no baseline rank, says why, and the pooled winner "a"
    (which leads it) is counted as leading 1 of the 3 classes that pass."""

    def klass(s, o):
        if o >= 7:
            return "undefined"
        c = CLASS_OF[s % 4]
        return "smooth" if c == "erratic" and s >= 16 else c  # erratic: series 1, 5, 9, 13 only

    table = score_table({"series": 80}, ["base", "a", "b", "c", "rw"], _err, demand_class=klass)
    res = class_winners(table, baseline="base", metric="rmsse", min_cell=30)
    rows = {r.demand_class: r for r in res.rows}
    erratic = rows["erratic"]
    assert (erratic.cell_ok, erratic.cell_count, erratic.n_blocks) == (False, 28, 28)
    assert erratic.top == [] and erratic.baseline_rank is None
    assert erratic.baseline_value is not None and erratic.n_models == 5  # values kept, no ranking named
    assert "28 scored blocks" in erratic.cell_reason and "minimum cell of 30" in erratic.cell_reason
    assert all(r.cell_ok and r.top for c, r in rows.items() if c != "erratic")
    assert res.pooled_winner == "a" and res.n_classes == 3 and res.pooled_winner_leads == 1
    assert res.distinct_winners == 3  # a (smooth), b (intermittent), c (lumpy)
    # with a minimum cell of 28 the erratic class names its leader again, and "a" leads two classes
    again = class_winners(table, baseline="base", metric="rmsse", min_cell=28)
    assert [t.model for t in next(r for r in again.rows if r.demand_class == "erratic").top][0] == "a"
    assert (again.n_classes, again.pooled_winner_leads) == (4, 2)


def test_a_pooled_cell_below_the_minimum_names_no_pooled_winner_and_its_table_validates():
    from benchmarks.analyses import _plain
    from benchmarks.results_model import ClassWinnersTable

    table = score_table({"series": 4}, ["base", "a", "rw"], _err, n_origins=5)  # 20 blocks, all smooth
    res = class_winners(table, baseline="base", metric="rmsse", min_cell=30)
    assert res.pooled_winner is None and res.pooled_value is None and not res.cell_ok
    assert res.cell_count == 20 and "minimum cell of 30" in res.cell_reason
    assert (res.n_classes, res.pooled_winner_leads, res.distinct_winners) == (0, 0, 0)
    assert [(r.demand_class, r.cell_ok, r.top) for r in res.rows] == [("smooth", False, [])]
    rec = ClassWinnersTable.model_validate({"dataset": "d", "protocol": "rolling_origin", **_plain(res)})
    assert rec.pooled_winner is None and rec.rows[0].cell_reason == res.rows[0].cell_reason
    assert (rec.min_cell, rec.cell_counts) == (30, "scored blocks (series x origin)")
    with pytest.raises(InputError, match="min_cell"):
        class_winners(table, baseline="base", metric="rmsse", min_cell=1)


def test_an_absent_unit_or_baseline_is_named():
    table = score_table({"series": 8}, ["base", "a"], _err)
    with pytest.raises(InputError, match="unit 'total'"):
        class_winners(table, baseline="base", metric="rmsse", min_cell=30, unit="total")
    with pytest.raises(InputError, match="prod"):
        class_winners(table, baseline="prod", metric="rmsse", min_cell=30)
