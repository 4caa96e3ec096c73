"""Across datasets: win rate under the Nemenyi test, verdict cells read from the tables, and the
geometric-mean relative error against the random walk."""

from __future__ import annotations

import numpy as np
import pytest

from tests._analysis_support import score_table
from tycheon.analysis.across import across_datasets, relative_error
from tycheon.errors import InputError


def _cell(dataset, unit, rows, cd):
    return {
        "dataset": dataset,
        "unit": unit,
        "demand_class": "all",
        "metric": "rmsse",
        "rows": [{"model": m, "rank": r, "mean_rank": mr, "verdict_vs_rw": v} for m, r, mr, v in rows],
        "tests": {"nemenyi_cd": cd},
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
    rel = {r.model: r for r in relative_error(table, dataset="d", metric="mase", random_walk="rw", n_resamples=500)}
    ae = table.assign(ae=(table["point"] - table["actual"]).abs())
    blocks = ae.groupby(["model", "series_id", "origin"])["ae"].mean()
    expected = float(np.exp(np.mean(np.log(blocks["a"].to_numpy() / blocks["rw"].to_numpy()))))
    assert rel["a"].gmre == pytest.approx(expected)
    assert rel["a"].low < rel["a"].gmre < rel["a"].high < 1.0  # a is about half the random walk's error
    assert rel["b"].low < 1.0 < rel["b"].high
    assert rel["a"].n_blocks == 400 and rel["a"].n_excluded == 0
    res = across_datasets(
        [_cell("d", "series", [("a", 1, 1.0, "beats"), ("rw", 2, 2.0, None)], 0.1)],
        metric="rmsse",
        random_walk="rw",
        relative=list(rel.values()),
    )
    assert next(m for m in res.models if m.model == "a").gmre_overall == pytest.approx(rel["a"].gmre)
