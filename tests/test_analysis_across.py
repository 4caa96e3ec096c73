"""Across datasets: win rate under the Nemenyi test, verdict cells read from the tables, and the
geometric-mean relative error against the random walk."""

from __future__ import annotations

import numpy as np
import pytest

from tests._analysis_support import score_table
from tycheon.analysis.across import MISSING_CELLS, across_datasets, relative_error
from tycheon.errors import InputError


def _cell(dataset, unit, rows, cd, *, ok=True, demand_class="all"):
    cell = {"cell_ok": ok, "cell_count": 40 if ok else 6, "cell_counts": "scored blocks (series x origin)"}
    return {
        "dataset": dataset,
        "unit": unit,
        "demand_class": demand_class,
        "metric": "rmsse",
        "rows": [{"model": m, "rank": r, "mean_rank": mr, "verdict_vs_rw": v} for m, r, mr, v in rows],
        "tests": {"nemenyi_cd": cd, "min_cell": 30, **cell},
    }


def test_win_rate_counts_wins_and_ties_within_the_critical_difference_and_verdicts_come_from_the_rows():
    cells = [
        _cell("d1", "series", [("a", 1, 1.2, "beats"), ("b", 2, 1.5, "beats"), ("rw", 3, 3.3, None)], cd=0.4),
        _cell(
            "d1", "total", [("b", 1, 1.0, "indistinguishable"), ("a", 2, 2.0, "worse"), ("rw", 3, 3.0, None)], cd=0.5
        ),
        _cell("d2", "series", [("a", 1, None, "beats"), ("b", 2, None, None), ("rw", 3, None, None)], cd=None),
        {**_cell("d2", "series", [("b", 1, 1.0, "beats")], cd=0.1), "metric": "mase"},  # another metric: ignored
    ]
    res = across_datasets(cells, metric="rmsse", random_walk="rw")
    by = {m.model: m for m in res.models}
    assert res.n_cells == 3 and res.datasets == ["d1", "d2"]
    assert (by["a"].wins, by["a"].n_cells) == (2, 3) and by["a"].win_rate == pytest.approx(2 / 3)
    assert (by["b"].wins, by["b"].win_rate) == (2, pytest.approx(2 / 3))  # ties a in d1/series (1.5 - 1.2 <= 0.4)
    assert by["rw"].wins == 0
    assert (by["a"].beats_random_walk_cells, by["a"].verdict_cells) == (2, 3)
    assert (by["b"].beats_random_walk_cells, by["b"].verdict_cells) == (1, 2)
    with pytest.raises(InputError, match="crps"):
        across_datasets(cells, metric="crps", random_walk="rw")


def test_relative_error_is_the_geometric_mean_of_block_ratios_with_a_ci_around_it():
    def err(unit, model, rng, shape):
        return rng.normal(0.0, {"rw": 2.0, "a": 1.0, "b": 2.0}[model], shape)

    table = score_table({"series": 50}, ["rw", "a", "b"], err)
    found = relative_error(table, dataset="d", metric="mase", random_walk="rw", min_cell=30, n_resamples=500)
    rel = {r.model: r for r in found}
    ae = table.assign(ae=(table["point"] - table["actual"]).abs())
    blocks = ae.groupby(["model", "series_id", "origin"])["ae"].mean()
    expected = float(np.exp(np.mean(np.log(blocks["a"].to_numpy() / blocks["rw"].to_numpy()))))
    assert rel["a"].gmre == pytest.approx(expected)
    assert rel["a"].low < rel["a"].gmre < rel["a"].high < 1.0  # a is about half the random walk's error
    assert rel["b"].low < 1.0 < rel["b"].high
    assert rel["a"].n_blocks == 400 and rel["a"].n_excluded == 0
    assert rel["a"].cell_ok and rel["a"].cell_reason is None
    res = across_datasets(
        [_cell("d", "series", [("a", 1, 1.0, "beats"), ("rw", 2, 2.0, None)], 0.1)],
        metric="rmsse",
        random_walk="rw",
        relative=list(rel.values()),
    )
    assert next(m for m in res.models if m.model == "a").gmre_overall == pytest.approx(rel["a"].gmre)


def test_cells_below_the_minimum_cell_count_for_no_model_and_missing_cells_for_neither_side():
    """d1/total/all (6 blocks) names b the winner in its table's rows, but it is below the minimum cell:
    it is left out for every model, so a's and b's win rates come from the passing cells only; c runs on
    d2 only, and its missing d1 cells count neither for nor against it."""
    cells = [
        _cell("d1", "series", [("a", 1, 1.1, "beats"), ("b", 2, 1.9, "indistinguishable"), ("rw", 3, 3.0, None)], 0.3),
        _cell("d1", "total", [("b", 1, 1.0, None), ("a", 2, 2.0, None), ("rw", 3, 3.0, None)], 0.5, ok=False),
        _cell("d1", "series", [("b", 1, 1.0, "beats"), ("a", 2, 2.0, "beats"), ("rw", 3, 3.0, None)], 0.1,
              ok=False, demand_class="erratic"),
        _cell("d2", "series", [("c", 1, 1.0, "beats"), ("a", 2, 2.5, "beats"), ("b", 3, 2.6, None),
                               ("rw", 4, 3.9, None)], 0.2),
    ]  # fmt: skip
    res = across_datasets(cells, metric="rmsse", random_walk="rw")
    by = {m.model: m for m in res.models}
    assert (res.n_cells, res.n_cells_below_min, res.min_cell) == (2, 2, 30)
    assert res.cell_counts == "scored blocks (series x origin)" and res.missing_cells == MISSING_CELLS
    assert (by["a"].wins, by["a"].n_cells, by["a"].n_cells_below_min) == (1, 2, 2)
    assert (by["b"].wins, by["b"].n_cells, by["b"].win_rate) == (0, 2, 0.0)  # its two "wins" were below the cell
    assert (by["c"].wins, by["c"].n_cells, by["c"].win_rate, by["c"].n_cells_below_min) == (1, 1, 1.0, 0)
    assert (by["b"].beats_random_walk_cells, by["b"].verdict_cells) == (0, 1)  # "beats" in the erratic cell: left out
    assert [m.model for m in res.models] == ["c", "a", "b", "rw"]
    # the same cells all passing: b wins the total and the erratic cell
    passing = [{**e, "tests": {**e["tests"], "cell_ok": True}} for e in cells]
    assert {m.model: m.wins for m in across_datasets(passing, metric="rmsse", random_walk="rw").models}["b"] == 2
    # a model scored only in failing cells is listed without a win rate
    only = across_datasets([cells[0], {**cells[1], "rows": [*cells[1]["rows"], {"model": "z", "rank": 4}]}],
                           metric="rmsse", random_walk="rw")  # fmt: skip
    z = next(m for m in only.models if m.model == "z")
    assert (z.n_cells, z.win_rate, z.n_cells_below_min) == (0, None, 1) and only.models[-1].model == "z"
    with pytest.raises(InputError, match="different minimum cells"):
        across_datasets([cells[0], {**cells[3], "tests": {**cells[3]["tests"], "min_cell": 40}}], metric="rmsse",
                        random_walk="rw")  # fmt: skip


def test_a_relative_error_below_the_minimum_cell_gives_no_value_and_is_left_out_of_the_overall():
    from benchmarks.analyses import across_table
    from benchmarks.results_model import Leaderboard

    def err(unit, model, rng, shape):
        return rng.normal(0.0, {"rw": 2.0, "a": 1.0}[model], shape)

    small = relative_error(score_table({"series": 3}, ["rw", "a"], err), dataset="d1", metric="mase",
                           random_walk="rw", min_cell=30, n_resamples=200)  # fmt: skip
    (a1,) = small
    assert a1.n_blocks == 24 and not a1.cell_ok and np.isnan(a1.gmre) and np.isnan(a1.low)
    assert "24 scored blocks" in a1.cell_reason
    big = relative_error(score_table({"series": 10}, ["rw", "a"], err), dataset="d2", metric="mase",
                         random_walk="rw", min_cell=30, n_resamples=200)  # fmt: skip
    res = across_datasets([_cell("d2", "series", [("a", 1, 1.0, "beats"), ("rw", 2, 2.0, None)], 0.1)],
                          metric="rmsse", random_walk="rw", relative=[*small, *big])  # fmt: skip
    a = next(m for m in res.models if m.model == "a")
    assert a.gmre_overall == pytest.approx(big[0].gmre)  # d1's entry (below the cell) is not in it
    # the results document's model takes the table: null values, the reason and the rule
    board = Leaderboard.model_validate({
        "dataset": "d2", "protocol": "rolling_origin", "unit": "series", "demand_class": "all", "metric": "rmsse",
        "baseline": "a", "random_walk": "rw", "n_blocks_total": 80, "winner": "a",
        "rows": [], "tests": {"friedman_statistic": None, "friedman_p": None, "nemenyi_cd": None,
                              "conservative_cd": None, "n_blocks": 80, "dropped_blocks": 0, "n_models": 2,
                              "alpha": 0.05, "cell_ok": True, "cell_count": 80, "min_cell": 30,
                              "cell_counts": "scored blocks (series x origin)", "cell_reason": None},
    })  # fmt: skip
    table = across_table([board], [*small, *big], metric="rmsse", random_walk="rw")
    assert table is not None and table.n_cells == 1 and table.min_cell == 30 and table.n_cells_below_min == 0
    assert table.missing_cells == MISSING_CELLS
