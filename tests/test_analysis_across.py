"""Across datasets: the models ranked on their common cells, win rate under the Nemenyi test, verdict
cells read from the tables, and the geometric-mean relative error against the random walk."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests._analysis_support import score_table
from tycheon.analysis.across import MISSING_CELLS, across_datasets, relative_error
from tycheon.errors import InputError


def _cell(dataset, unit, rows, cd, *, ok=True, demand_class="all"):
    """A leaderboard table of rmsse; a row is ``(model, rank, mean_rank, verdict)``, scored (a mean) unless
    a fifth item ``False`` says it has no mean."""
    cell = {"cell_ok": ok, "cell_count": 40 if ok else 6, "cell_counts": "scored blocks (series x origin)"}
    return {
        "dataset": dataset,
        "unit": unit,
        "demand_class": demand_class,
        "metric": "rmsse",
        "rows": [
            {"model": m, "rank": r, "mean": float(r) if scored else None, "mean_rank": mr, "verdict_vs_rw": v}
            for m, r, mr, v, *rest in rows
            for scored in [rest[0] if rest else True]
        ],
        "tests": {"nemenyi_cd": cd, "min_cell": 30, **cell},
    }


def _by_model(res):
    return {m.model: m for m in res.models}


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
    # every model is scored in every cell: all ranked, a and b tied first
    assert res.n_ranked_models == 3 and all(m.ranked and m.n_eligible == 3 and m.reason is None for m in res.models)
    assert [(m.model, m.rank) for m in res.models] == [("a", 1), ("b", 1), ("rw", 3)]
    assert res.support.startswith("All 3 models are ranked, each scored in all 3 cells of rmsse")
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


def test_a_cell_below_the_minimum_cell_is_not_eligible_for_any_model():
    """d1/total/all (6 blocks) names b the winner in its table's rows, but it is below the minimum cell: it
    is left out for every model, so a's and b's win rates come from the eligible cells only, and c, missing
    from d1/total, is not unranked for it (c is unranked for missing d1/series, an eligible cell)."""
    cells = [
        _cell("d1", "series", [("a", 1, 1.1, "beats"), ("b", 2, 1.9, "indistinguishable"), ("rw", 3, 3.0, None)], 0.3),
        _cell("d1", "total", [("b", 1, 1.0, None), ("a", 2, 2.0, None), ("rw", 3, 3.0, None)], 0.5, ok=False),
        _cell("d1", "series", [("b", 1, 1.0, "beats"), ("a", 2, 2.0, "beats"), ("rw", 3, 3.0, None),
                               ("d", 4, 4.0, None)], 0.1, ok=False, demand_class="erratic"),
        _cell("d2", "series", [("c", 1, 1.0, "beats"), ("a", 2, 2.5, "beats"), ("b", 3, 2.6, None),
                               ("rw", 4, 3.9, None), ("d", 5, 4.0, None)], 0.2),
    ]  # fmt: skip
    res = across_datasets(cells, metric="rmsse", random_walk="rw")
    by = _by_model(res)
    assert (res.n_cells, res.n_cells_below_min, res.n_cells_without_random_walk, res.min_cell) == (2, 2, 0, 30)
    assert res.cell_counts == "scored blocks (series x origin)" and res.missing_cells == MISSING_CELLS
    assert (by["a"].wins, by["a"].n_cells, by["a"].n_cells_below_min, by["a"].rank) == (1, 2, 2, 1)
    assert (by["b"].wins, by["b"].n_cells, by["b"].win_rate) == (0, 2, 0.0)  # its two "wins" were below the cell
    assert (by["b"].beats_random_walk_cells, by["b"].verdict_cells) == (0, 1)  # "beats" in the erratic cell: left out
    # c is missing an eligible cell (d1/series); d is missing it too: its erratic row is below the cell
    assert not by["c"].ranked and not by["d"].ranked and res.n_ranked_models == 3
    assert (by["c"].wins, by["c"].n_cells, by["c"].n_eligible, by["c"].win_rate) == (1, 1, 2, 1.0)
    assert (by["d"].n_cells, by["d"].n_cells_below_min) == (1, 1)
    assert [m.model for m in res.models] == ["a", "b", "rw", "c", "d"]  # c's own 100% does not top the page
    # the same cells all passing: b wins the total and the erratic cell, and d misses two eligible cells
    passing = across_datasets([{**e, "tests": {**e["tests"], "cell_ok": True}} for e in cells], metric="rmsse",
                              random_walk="rw")  # fmt: skip
    assert (_by_model(passing)["b"].wins, passing.n_cells, _by_model(passing)["d"].n_cells) == (2, 4, 2)
    # a model scored only in failing cells has no win rate and comes last
    z_row = {"model": "z", "rank": 4, "mean": 4.0}
    only = across_datasets([cells[0], {**cells[1], "rows": [*cells[1]["rows"], z_row]}], metric="rmsse",
                           random_walk="rw")  # fmt: skip
    z = _by_model(only)["z"]
    assert (z.n_cells, z.win_rate, z.n_cells_below_min, z.ranked, z.rank) == (0, None, 1, False, None)
    assert only.models[-1].model == "z" and z.reason.startswith("scored in 0 of the 1 cell that pass")
    with pytest.raises(InputError, match="different minimum cells"):
        across_datasets([cells[0], {**cells[3], "tests": {**cells[3]["tests"], "min_cell": 40}}], metric="rmsse",
                        random_walk="rw")  # fmt: skip


def test_a_model_scored_only_in_aggregate_cells_is_not_ranked_and_cannot_top_the_page():
    """The case of issue 35: a model with no series-level score wins every aggregate cell it is in; it is
    listed after every ranked model, without a rank, with its coverage and why."""
    cells = [
        _cell(d, "series", [("a", 1, 1.2, "beats"), ("b", 2, 1.6, None), ("rw", 3, 3.0, None)], 0.5)
        for d in ("d1", "d2")
    ] + [
        _cell(d, u, [("agg", 1, 1.0, "beats"), ("b", 2, 2.2, "beats"), ("a", 3, 2.4, None), ("rw", 4, 3.6, None)],
              0.3)
        for d in ("d1", "d2") for u in ("total", "level:region")
    ]  # fmt: skip
    res = across_datasets(cells, metric="rmsse", random_walk="rw")
    by = _by_model(res)
    agg = by["agg"]
    assert (agg.ranked, agg.rank, agg.n_cells, agg.n_eligible, agg.win_rate) == (False, None, 4, 6, 1.0)
    assert agg.reason == (
        "scored in 4 of the 6 cells that pass the minimum cell and score the random walk "
        "(none at the series unit; 1 of 3 missing on d1; 1 of 3 missing on d2)"
    )
    # a and b tie in the series cells (0.4 <= CD 0.5) and win no aggregate cell, where agg is best
    assert [(m.model, m.rank, m.wins, m.n_cells) for m in res.models] == [
        ("a", 1, 2, 6),
        ("b", 1, 2, 6),
        ("rw", 3, 0, 6),
        ("agg", None, 4, 4),
    ]
    assert res.n_ranked_models == 3
    assert res.support == (
        "3 of the 4 models are ranked: those scored in all 6 cells of rmsse that pass the minimum cell and score "
        "the random walk (of 6: 0 below the minimum cell, 0 without a random-walk score); the other 1 miss at "
        "least one of these cells and are listed apart, without a rank."
    )


def test_a_model_missing_one_eligible_cell_or_without_a_mean_there_is_not_ranked():
    full = [("a", 1, 1.0, "beats"), ("m", 2, 1.2, "beats"), ("rw", 3, 3.0, None)]
    cells = [_cell("d1", "series", full, 0.5), _cell("d2", "series", full, 0.5, demand_class="smooth")]
    for gap in ([("a", 1, 1.0, "beats"), ("rw", 2, 3.0, None)], [*full[:1], ("m", 2, None, None, False), full[2]]):
        res = across_datasets([*cells, _cell("d2", "series", gap, 0.5)], metric="rmsse", random_walk="rw")
        m = _by_model(res)["m"]
        assert (m.ranked, m.rank, m.n_cells, m.n_eligible) == (False, None, 2, 3)
        assert m.reason.endswith("(1 of 2 missing on d2)")
        assert [x.model for x in res.models] == ["a", "rw", "m"]
    assert _by_model(across_datasets(cells, metric="rmsse", random_walk="rw"))["m"].rank == 1  # ties a: both win


def test_win_rates_of_ranked_models_are_over_the_common_cells():
    """The ranked models' wins, win rates and verdict counts against a plain loop over the eligible cells;
    a partial model in some of them takes nothing from that denominator."""
    rng = np.random.default_rng(7)
    models = ["a", "b", "c", "rw"]
    cells = []
    for i in range(12):
        present = models if i % 3 else ["a", "b", "rw"]  # c misses every third cell
        ranks = rng.permutation(len(present)) + 1
        mean_ranks = ranks + rng.uniform(-0.4, 0.4, len(present))
        verdicts = rng.choice(["beats", "indistinguishable", "worse"], len(present))
        rows = [(m, int(r), float(mr), None if m == "rw" else str(v))
                for m, r, mr, v in zip(present, ranks, mean_ranks, verdicts, strict=True)]  # fmt: skip
        cells.append(_cell(f"d{i % 4}", "series", rows, 0.6, ok=i != 5, demand_class=f"k{i}"))
    cells[7]["rows"] = [r for r in cells[7]["rows"] if r["model"] != "rw"]  # no random walk: not eligible
    res = across_datasets(cells, metric="rmsse", random_walk="rw")
    eligible = [e for e in cells if e["tests"]["cell_ok"] and any(r["model"] == "rw" for r in e["rows"])]
    assert (res.n_cells, res.n_cells_below_min, res.n_cells_without_random_walk) == (len(eligible), 1, 1) == (10, 1, 1)
    for m in res.models:
        if not m.ranked:
            continue
        wins = beats = 0
        for e in eligible:
            best = min(r["mean_rank"] for r in e["rows"])
            row = next(r for r in e["rows"] if r["model"] == m.model)
            wins += row["mean_rank"] - best <= 0.6
            beats += row["verdict_vs_rw"] == "beats"
        assert (m.n_cells, m.wins, m.beats_random_walk_cells) == (10, wins, beats)
        assert m.win_rate == pytest.approx(wins / 10)
    assert {m.model for m in res.models if m.ranked} == {"a", "b", "rw"} and not _by_model(res)["c"].ranked


def test_a_cell_without_the_random_walk_is_not_eligible():
    """d1/total has no random-walk score (no row, or a row without a mean): it counts for no model, so b,
    which is not in it, is still ranked and a's win there is not counted."""
    series = _cell("d1", "series", [("a", 2, 2.0, "worse"), ("b", 1, 1.0, "beats"), ("rw", 3, 3.0, None)], 0.1)
    for rw_row in ([], [("rw", 2, None, None, False)]):
        total = _cell("d1", "total", [("a", 1, 1.0, "beats"), *rw_row], 0.1)
        res = across_datasets([series, total], metric="rmsse", random_walk="rw")
        by = _by_model(res)
        assert (res.n_cells, res.n_cells_without_random_walk, res.n_cells_below_min) == (1, 1, 0)
        assert by["b"].ranked and by["a"].ranked and (by["a"].wins, by["a"].n_cells) == (0, 1)
        assert [(m.model, m.rank) for m in res.models] == [("b", 1), ("a", 2), ("rw", 2)]
    # no eligible cell at all: nobody is ranked, and the page says why
    none = across_datasets([_cell("d1", "total", [("a", 1, 1.0, "beats")], 0.1)], metric="rmsse", random_walk="rw")
    assert none.n_ranked_models == 0 and not _by_model(none)["a"].ranked
    assert none.support.startswith("No model is ranked: none of the 1 cell of rmsse is eligible")


@given(st.permutations(range(5)), st.booleans())
def test_the_ranking_does_not_depend_on_the_order_of_the_cells_or_rows(order, reverse_rows):
    cells = [
        _cell("d1", "series", [("a", 1, 1.0, "beats"), ("b", 2, 1.5, None), ("rw", 3, 3.0, None)], 0.4),
        _cell("d1", "total", [("b", 1, 1.0, "beats"), ("a", 2, 2.0, None), ("rw", 3, 3.0, None)], 0.4),
        _cell("d2", "series", [("c", 1, 1.0, "beats"), ("a", 2, 1.1, "beats"), ("b", 3, 2.5, None),
                               ("rw", 4, 3.0, None)], 0.4),
        _cell("d2", "total", [("b", 1, 1.0, None), ("rw", 2, 2.0, None)], 0.4, ok=False),
        _cell("d2", "level:x", [("a", 1, 1.0, None), ("c", 2, 1.5, None)], 0.4),
    ]  # fmt: skip
    base = across_datasets(cells, metric="rmsse", random_walk="rw")
    moved = [cells[i] for i in order]
    if reverse_rows:
        moved = [{**e, "rows": e["rows"][::-1]} for e in moved]
    assert across_datasets(moved, metric="rmsse", random_walk="rw") == base


def test_a_relative_error_below_the_minimum_cell_gives_no_value_and_is_left_out_of_the_overall():
    from benchmarks.analyses import across_table
    from benchmarks.results_model import AcrossTable, Leaderboard

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

    # the results document's model takes the tables: null values, the reason and the rule; u is in one of
    # the two cells only, so it is listed unranked with its coverage
    def row(model, rank, verdict):
        return {"rank": rank, "model": model, "display_name": model, "mean": float(rank), "median": float(rank),
                "mean_rank": float(rank), "beats_baseline_blocks": None, "dm_stat": None, "dm_p": None,
                "dm_p_bh": None, "dm_direction": None, "verdict_vs_rw": verdict, "support": 80, "full_support": True,
                "is_baseline": model == "a", "is_random_walk": model == "rw"}  # fmt: skip

    def board(unit, rows):
        return Leaderboard.model_validate({
            "dataset": "d2", "protocol": "rolling_origin", "unit": unit, "demand_class": "all", "metric": "rmsse",
            "baseline": "a", "random_walk": "rw", "n_blocks_total": 80, "winner": "a",
            "rows": rows, "tests": {"friedman_statistic": None, "friedman_p": None, "nemenyi_cd": None,
                                    "conservative_cd": None, "n_blocks": 80, "dropped_blocks": 0, "n_models": 2,
                                    "alpha": 0.05, "cell_ok": True, "cell_count": 80, "min_cell": 30,
                                    "cell_counts": "scored blocks (series x origin)", "cell_reason": None},
        })  # fmt: skip

    boards = [
        board("series", [row("a", 1, "beats"), row("rw", 2, None)]),
        board("total", [row("u", 1, "beats"), row("a", 2, "beats"), row("rw", 3, None)]),
    ]
    table = across_table(boards, [*small, *big], metric="rmsse", random_walk="rw")
    assert table is not None and table.n_cells == 2 and table.min_cell == 30 and table.n_cells_below_min == 0
    assert table.missing_cells == MISSING_CELLS and table.n_ranked_models == 2
    assert table.n_cells_without_random_walk == 0 and table.support.startswith("2 of the 3 models are ranked")
    assert [(r.model, r.ranked, r.rank, r.n_cells, r.n_eligible) for r in table.models] == [
        ("a", True, 1, 2, 2),
        ("rw", True, 2, 2, 2),
        ("u", False, None, 1, 2),
    ]
    assert table.models[-1].reason.endswith("(none at the series unit; 1 of 2 missing on d2)")
    # a results version written before the rule (no ranked, rank, coverage or support) still validates
    old = table.model_dump(exclude={"n_ranked_models", "support", "n_cells_without_random_walk"})
    old["models"] = [{k: v for k, v in r.items() if k not in ("ranked", "rank", "n_eligible", "reason")}
                     for r in old["models"]]  # fmt: skip
    assert AcrossTable.model_validate(old).n_ranked_models is None
