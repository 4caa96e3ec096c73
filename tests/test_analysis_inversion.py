"""Unit-of-analysis inversion (paper Table 1) on constructed score sets whose winners are known."""

from __future__ import annotations

import numpy as np
import pytest

from tests._analysis_support import score_table, spec
from tycheon.analysis.inversion import unit_inversion
from tycheon.errors import InputError

MODELS = ["base", "rw", "a", "b"]


def _wins_only_at_the_total(unit, model, rng, shape):
    sd = {
        "total": {"base": 1.0, "rw": 4.0, "a": 3.0, "b": 3.5},
        "series": {"base": 6.0, "rw": 2.5, "a": 1.0, "b": 1.5},
    }[unit][model]
    return rng.normal(0.0, sd, size=shape)


def test_a_baseline_constructed_to_win_only_at_the_total_shows_the_inversion():
    table = score_table({"total": 1, "series": 40}, MODELS, _wins_only_at_the_total)
    inv = unit_inversion(table, spec=spec())
    total, series = inv.columns
    assert (total.unit, series.unit) == ("total", "series")
    assert total.baseline_rank == {"mase": 1, "rmsse": 1, "wape": 1}
    assert series.baseline_rank == {"mase": 4, "rmsse": 4, "wape": 4}
    assert series.random_walk_rank["rmsse"] == 3 and total.random_walk_rank["rmsse"] == 4
    assert inv.inverted is True
    assert (total.n_series, total.n_origins, total.n_blocks, total.n_models) == (1, 8, 8, 4)
    assert (series.n_series, series.n_blocks) == (40, 320)
    assert series.n_better == 3 and series.n_worse == 0  # every challenger beats it per series
    assert total.n_better == 0  # nothing beats it at the total
    assert series.n_pooled_losses == 40 * 8 * 3 and total.n_pooled_losses == 8 * 3
    # robustness rows: same roster and origins everywhere here, and equal weights: the same ranks
    assert series.shared_baseline_rank == series.baseline_rank and series.weighted_baseline_rank == series.baseline_rank
    assert series.cross_sectional_better == 3 and series.n_periods == 8 * 3 - 0


def test_when_no_unit_inverts_then_inverted_is_false_and_without_series_it_is_none():
    table = score_table(
        {"total": 1, "series": 20}, MODELS, lambda u, m, rng, shape: rng.normal(0, 1.0 + (m == "base"), shape)
    )
    assert unit_inversion(table, spec=spec()).inverted is False
    only_total = table[table["unit"] == "total"]
    assert unit_inversion(only_total, spec=spec()).inverted is None


def test_volume_weighting_moves_the_rank_when_the_baseline_fails_only_on_small_series():
    # base is bad on the 30 small series and best on the 10 large ones: equal weights rank it last,
    # weighting by size (series 30..39 weigh 1000x) ranks it first
    def err(unit, model, rng, shape):
        sd = np.where(np.arange(shape[0]) < 30, 5.0 if model == "base" else 1.0, 0.5 if model == "base" else 2.0)
        return rng.normal(0.0, 1.0, shape) * sd[:, None, None]

    table = score_table({"series": 40}, MODELS, err, weight=lambda s: 1000.0 if s >= 30 else 1.0)
    col = unit_inversion(table, spec=spec()).columns[0]
    assert col.baseline_rank["mase"] == 4 and col.weighted_baseline_rank["mase"] == 1


def test_the_cross_sectional_dm_counts_a_shock_shared_by_all_series_once_per_period():
    # the challenger's error is the baseline's times exp(c_t), one c_t per target period shared by every
    # series (E[exp(c) - 1] = 0.08): pooled over series as if they were independent the small mean is
    # "significant"; on the 24 period averages (sd of exp(c) - 1 about 0.6) it is not
    def err(unit, model, rng, shape):
        base = np.random.default_rng(1).normal(0.0, 1.0, shape)  # the same draw for every model
        if model != "a":
            return base
        shared = rng.normal(np.log(1.08) - 0.125, 0.5, (1, shape[1], shape[2]))  # [1, origin, step]
        return base * np.exp(shared)

    table = score_table({"series": 600}, ["base", "rw", "a"], err, seed=5)
    col = unit_inversion(table, spec=spec(), metrics=("mase",)).columns[0]
    assert col.n_worse == 1  # pooled: "a" significantly worse than the baseline
    assert col.cross_sectional_worse == 0 and col.cross_sectional_tested == 2


def test_bad_input_names_what_is_missing():
    table = score_table({"series": 5}, ["rw", "a"], lambda u, m, rng, shape: rng.normal(0, 1, shape))
    with pytest.raises(InputError, match="base"):
        unit_inversion(table, spec=spec())
    with pytest.raises(InputError, match="score-set table"):
        unit_inversion(table.drop(columns="point"), spec=spec())
