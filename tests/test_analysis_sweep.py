"""The spikiness sweep over the synthetic generator's dial: one point per setting, ranks at the total and
per entity read from each setting's score set."""

from __future__ import annotations

import pytest

from tests._analysis_support import score_table, spec
from tycheon.analysis.leaderboard import LeaderboardSpec
from tycheon.analysis.sweep import spikiness_sweep
from tycheon.backtest.engine import run
from tycheon.backtest.factories import RegistryFactory
from tycheon.backtest.protocol import RollingOrigin
from tycheon.data.synthetic import generate_marketplace
from tycheon.errors import InputError

BASELINES = ("naive", "seasonal_naive", "snaive_momentum", "historic_mean", "ses", "median12", "ewma")


def test_a_constructed_sweep_finds_the_inversion_only_where_it_was_built():
    def table(inverted):
        def err(unit, model, rng, shape):
            good = (unit == "total") == inverted or model != "base"
            return rng.normal(0.0, 1.0 if good and model == "base" else 2.0 + (model == "base") * 3, shape)

        return score_table({"total": 1, "series": 30}, ["base", "rw", "a", "b"], err)

    res = spikiness_sweep({0.0: table(False), 1.0: table(True)}, spec=spec(), metric="mase")
    assert [p.spikiness for p in res.points] == [0.0, 1.0]
    assert res.inverted_at == [1.0]
    assert (res.points[1].total_rank, res.points[1].series_rank) == (1, 4)


def test_the_synthetic_dial_runs_end_to_end_at_three_settings():
    sweep_spec = LeaderboardSpec(
        metrics=("mase",), baseline="snaive_momentum", random_walk="naive", horizon=6, stride=6
    )
    tables = {}
    for k in (0.0, 1.0, 6.0):
        panel = generate_marketplace(n_entities=150, n_periods=67, spikiness=k, seed=11)
        tables[k] = run(
            panel,
            RollingOrigin(horizon=6, stride=6, n_origins=4),
            {m: RegistryFactory(m, {}) for m in BASELINES},
            units=("total", "series"),
            min_history=24,
        ).table
    res = spikiness_sweep(tables, spec=sweep_spec, metric="mase")
    assert len(res.points) == 3 and all(p.n_models == len(BASELINES) for p in res.points)
    assert all(1 <= p.total_rank <= 7 and 1 <= p.series_rank <= 7 for p in res.points)
    smooth = [p.series_smooth_share for p in res.points]
    assert smooth[0] > smooth[1] > smooth[2]  # the dial makes entities spikier
    with pytest.raises(InputError, match="'total' and 'series'"):
        spikiness_sweep({1.0: tables[1.0][tables[1.0]["unit"] == "series"]}, spec=sweep_spec, metric="mase")
