"""The aggregation dial (paper Table 3): a flat dial where splitting cannot matter, a falling one where it
is constructed to, and the end points and shares it reports."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests._analysis_support import score_table, spec
from tycheon.analysis.dial import aggregation_dial, dial_units
from tycheon.backtest.engine import run
from tycheon.backtest.factories import RegistryFactory
from tycheon.backtest.protocol import RollingOrigin
from tycheon.data.panel import Panel
from tycheon.errors import InputError

BASELINES = ("naive", "seasonal_naive", "snaive_momentum", "historic_mean", "ses", "median12")


def _copies_panel(n_series=50, n_periods=60, seed=4) -> Panel:
    """n copies of one seasonal noisy series: every aggregate of m members is m times that series."""
    rng = np.random.default_rng(seed)
    t = np.arange(n_periods)
    y = np.round(100 * (1 + 0.3 * np.sin(2 * np.pi * t / 12)) * rng.gamma(6.0, 1 / 6.0, n_periods), 2)
    periods = pd.date_range("2020-01-01", periods=n_periods, freq="MS")
    frame = pd.concat(
        [pd.DataFrame({"series_id": f"s{i:02d}", "period": periods, "value": y}) for i in range(n_series)],
        ignore_index=True,
    )
    return Panel.from_long(frame, freq="MS")


def test_when_every_series_is_the_same_then_random_groups_give_a_flat_dial():
    panel = _copies_panel()
    units = ["groups_random:5", "groups_random:25", "groups:5", "series", "total"]
    scores = run(
        panel,
        RollingOrigin(horizon=6, stride=6, n_origins=4),
        {m: RegistryFactory(m, {}) for m in BASELINES},
        units=units,
        min_history=24,
    )
    dial = aggregation_dial(
        scores.table,
        spec=spec(baseline="snaive_momentum", random_walk="naive", horizon=6, stride=6),
        n_series=panel.n_series,
    )
    random = next(c for c in dial.curves if c.kind == "random")
    assert [p.k for p in random.points] == [1, 5, 25, 50]
    for conv in ("median_wape", "mean_rmsse", "friedman"):
        ranks = {p.baseline_rank[conv] for p in random.points}
        assert len(ranks) == 1 and None not in ranks, (conv, ranks)  # scale-free metrics of multiples
        assert random.spearman_log_k[conv] is None and random.never_improves[conv]
        assert random.max_rank_change[conv] == 0
    assert all(p.smooth_share == random.points[0].smooth_share for p in random.points)
    assert [p.series_per_group for p in random.points] == [50.0, 10.0, 2.0, 1.0]


def test_a_baseline_that_worsens_with_every_split_gives_a_rising_rank_and_spearman_one():
    # the baseline's error sd grows with k, the others' stays: its rank goes 1 -> 4 as k grows
    sd_base = {"groups:1": 0.5, "groups:4": 1.6, "groups:16": 2.4, "series": 6.0}
    units = {"groups:1": 1, "groups:4": 4, "groups:16": 16, "series": 64}

    def err(unit, model, rng, shape):
        sd = sd_base[unit] if model == "base" else {"rw": 2.0, "a": 1.0, "b": 3.0}[model]
        return rng.normal(0.0, sd, shape)

    table = score_table(
        units, ["base", "rw", "a", "b"], err, demand_class=lambda s, o: "smooth" if s % 2 == 0 else "lumpy"
    )
    dial = aggregation_dial(table, spec=spec(), n_series=64)
    (size,) = dial.curves
    assert size.kind == "size" and [p.k for p in size.points] == [1, 4, 16, 64]
    assert [p.baseline_rank["mean_rmsse"] for p in size.points] == [1, 2, 3, 4]
    assert size.spearman_log_k["mean_rmsse"] == pytest.approx(1.0)
    assert size.never_improves["mean_rmsse"] and size.max_rank_change["mean_rmsse"] == 3
    assert size.points[0].smooth_share == 1.0 and size.points[-1].smooth_share == 0.5
    assert [p.n_blocks for p in size.points] == [8, 32, 128, 512]


def test_a_rank_that_improves_somewhere_is_not_never_improves():
    sd_base = {"groups:1": 0.5, "groups:4": 6.0, "series": 1.5}

    def err(unit, model, rng, shape):
        return rng.normal(0.0, sd_base[unit] if model == "base" else {"rw": 2.0, "a": 1.0}[model], shape)

    table = score_table({"groups:1": 1, "groups:4": 4, "series": 16}, ["base", "rw", "a"], err)
    (size,) = aggregation_dial(table, spec=spec(), n_series=16).curves
    assert [p.baseline_rank["mean_rmsse"] for p in size.points] == [1, 3, 2]
    assert not size.never_improves["mean_rmsse"]


def test_dial_units_are_capped_by_the_number_of_series():
    assert dial_units(2000) == [
        "groups:1",
        "groups:5",
        "groups:25",
        "groups:125",
        "groups:625",
        "groups_random:5",
        "groups_random:25",
        "groups_random:125",
        "groups_random:625",
        "series",
    ]
    assert dial_units(100) == ["groups:1", "groups:5", "groups:25", "groups_random:5", "groups_random:25", "series"]
    with pytest.raises(InputError, match="n_series"):
        aggregation_dial(
            score_table({"series": 2}, ["base", "rw"], lambda u, m, r, s: r.normal(0, 1, s)), spec=spec(), n_series=0
        )


def test_the_levels_of_a_real_hierarchy_form_their_own_curve_with_k_the_aggregates_per_level(small_panel):
    units = ["total", "level:region", "level:store", "series"]
    scores = run(
        small_panel,
        RollingOrigin(horizon=3, stride=3, n_origins=3),
        {m: RegistryFactory(m, {}) for m in ("naive", "snaive_momentum", "historic_mean")},
        units=units,
    )
    dial = aggregation_dial(
        scores.table, spec=spec(baseline="snaive_momentum", random_walk="naive"), n_series=small_panel.n_series
    )
    (hierarchy,) = dial.curves
    n_stores = small_panel.attributes["store"].nunique()
    assert hierarchy.kind == "hierarchy"
    assert [p.unit for p in hierarchy.points] == ["total", "level:region", "level:store", "series"]
    assert [p.k for p in hierarchy.points] == [1, 2, n_stores, small_panel.n_series]


def test_block_scores_collected_model_by_model_give_the_dial_of_the_whole_table(small_panel):
    """The harness scores each dial model's rows into blocks as it ran and releases them
    (:class:`~tycheon.analysis.prepared.BlockCollector`): every block, their order, and so the dial, are
    those of the table of all the models at once."""
    from tycheon.analysis.prepared import BlockCollector, PreparedScores
    from tycheon.backtest.scoreset import concat_tables

    units = ["groups:2", "groups:4", "groups_random:2", "groups_random:4", "total", "series"]
    protocol = RollingOrigin(horizon=3, stride=3, n_origins=3)
    models = ("snaive_momentum", "naive", "historic_mean")  # not in sorted order: the collector sorts them
    tables = [run(small_panel, protocol, {m: RegistryFactory(m, {})}, units=units, seed=3).table for m in models]
    whole = PreparedScores(concat_tables([t.copy() for t in tables], sort_keys=True))
    collector = BlockCollector(metrics=("wape", "rmsse"))
    for t in tables:
        collector.add(t)
    collected = collector.prepared()
    assert sorted(collected) == sorted(units)
    for u in units:
        mine, theirs = collected[u].blocks(("wape", "rmsse")), whole[u].blocks(("wape", "rmsse"))
        assert collected[u].models == whole[u].models == sorted(models)
        assert collected[u].nunique("series_id") == whole[u].nunique("series_id")
        pd.testing.assert_frame_equal(
            mine.astype({c: object for c in mine.columns if isinstance(mine[c].dtype, pd.CategoricalDtype)}),
            theirs.astype({c: object for c in theirs.columns if isinstance(theirs[c].dtype, pd.CategoricalDtype)}),
        )
    s = spec(baseline="snaive_momentum", random_walk="naive")
    n = small_panel.n_series
    assert repr(aggregation_dial(collected, spec=s, n_series=n)) == repr(aggregation_dial(whole, spec=s, n_series=n))


def test_a_collected_unit_refuses_what_needs_its_released_rows(small_panel):
    from tycheon.analysis.prepared import BlockCollector

    table = run(
        small_panel, RollingOrigin(horizon=3, stride=3, n_origins=3), {"naive": RegistryFactory("naive", {})}
    ).table
    collector = BlockCollector()
    collector.add(table)
    unit = collector.prepared()["series"]
    with pytest.raises(InputError, match="rows were released"):
        unit.step_losses()
    with pytest.raises(InputError, match="rows were released"):
        unit.rows  # noqa: B018
    with pytest.raises(InputError, match=r"block scores of \['crps'\]"):
        unit.blocks(("crps",))
    with pytest.raises(InputError, match="more than one table"):
        collector.add(table)  # the same model's rows of a unit again
