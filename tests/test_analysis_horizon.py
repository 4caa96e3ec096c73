"""Horizon robustness: ranks per step, short vs long halves, the largest move."""

from __future__ import annotations

import numpy as np
import pytest

from tests._analysis_support import score_table
from tycheon.analysis.horizon import horizon_robustness
from tycheon.errors import InputError


def test_a_model_good_only_at_short_steps_moves_and_the_halves_disagree():
    def err(unit, model, rng, shape):
        step_sd = {"a": [0.5, 3.0, 4.0], "b": [2.0, 2.0, 2.0], "c": [2.5, 2.5, 2.5]}[model]
        return rng.normal(0.0, 1.0, shape) * np.array(step_sd)[None, None, :]

    res = horizon_robustness(score_table({"series": 60}, ["a", "b", "c"], err), metric="mase")
    assert res.steps == [1, 2, 3] and res.short_steps == [1] and res.long_steps == [2, 3]
    assert res.rank_by_step["a"] == [1, 3, 3] and res.rank_by_step["b"] == [2, 1, 1]
    assert res.rank_short == {"a": 1, "b": 2, "c": 3} and res.rank_long == {"b": 1, "c": 2, "a": 3}
    assert res.max_move == 2 and res.max_move_model == "a"
    assert res.spearman == pytest.approx(-0.5)


def test_when_the_ranking_is_the_same_at_every_step_then_nothing_moves():
    table = score_table({"series": 40}, ["a", "b"], lambda u, m, rng, s: rng.normal(0, 1 + (m == "b"), s))
    res = horizon_robustness(table, metric="rmsse")
    assert res.max_move == 0 and res.max_move_model is None and res.spearman == pytest.approx(1.0)
    with pytest.raises(InputError, match="mase"):
        horizon_robustness(score_table({"series": 4}, ["a", "b"], lambda u, m, r, s: r.normal(0, 1, s)), metric="wape")
