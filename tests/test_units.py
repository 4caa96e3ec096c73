"""Units of analysis (paper section 4): aggregates, size-sorted and random groups, shared origins."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tycheon.backtest.engine import run
from tycheon.backtest.factories import instance_factory
from tycheon.backtest.protocol import RollingOrigin
from tycheon.backtest.units import build_unit, parse_unit
from tycheon.testing import poison_after
from tycheon.testing.toys import NaiveForecaster

PROTOCOL = RollingOrigin(horizon=3, stride=3, n_origins=3)
UNITS = ("series", "total", "level:region", "level:store", "groups:4", "groups_random:3")


def test_every_unit_is_scored_over_the_same_origins(small_panel):
    scores = run(small_panel, PROTOCOL, {"naive": instance_factory(NaiveForecaster())}, units=UNITS)
    origins = scores.table.groupby("unit", observed=True)["origin"].apply(lambda s: tuple(sorted(s.unique())))
    assert origins.nunique() == 1 and len(origins) == len(UNITS)
    assert set(scores.meta["abstained"]) == set(UNITS)


def test_aggregate_actuals_are_the_sums_of_their_members(small_panel):
    scores = run(small_panel, PROTOCOL, {"naive": instance_factory(NaiveForecaster())}, units=UNITS[:3])
    data = small_panel.data.merge(small_panel.attributes, left_on="series_id", right_index=True)
    total = data.groupby("period")["value"].sum()
    rows = scores.select(unit="total").table
    assert np.allclose(rows["actual"], total.loc[rows["target_period"]].to_numpy())
    region = data.groupby(["region", "period"])["value"].sum()
    rows = scores.select(unit="level:region").table
    keys = list(zip(rows["series_id"].str.removeprefix("region="), rows["target_period"], strict=False))
    assert np.allclose(rows["actual"], region.loc[keys].to_numpy())
    assert set(rows["series_id"]) == {"region=r0", "region=r1"}


def test_size_groups_use_only_data_before_the_first_training_cut(small_panel):
    cut = PROTOCOL.origins(small_panel)[0].fit_end
    clean = build_unit(small_panel, "groups:4", first_fit_end=cut)
    poisoned = build_unit(poison_after(small_panel, cut), "groups:4", first_fit_end=cut)
    assert np.array_equal(clean.values[:, :cut], poisoned.values[:, :cut], equal_nan=True)
    assert np.array_equal(clean.weight, poisoned.weight)
    # oracle: sort by volume before the cut (largest first), split into 4 contiguous groups of 3
    dense = small_panel.dense()
    volume = np.where(dense.observed[:, :cut], dense.values[:, :cut], 0.0).sum(axis=1)
    order = sorted(range(small_panel.n_series), key=lambda s: (-volume[s], dense.series_ids[s]))
    for g in range(4):
        members = order[3 * g : 3 * g + 3]
        expected = np.where(dense.observed[members], dense.values[members], 0.0).sum(axis=0)
        observed = dense.observed[members].any(axis=0)
        assert np.allclose(clean.values[g][observed], expected[observed])
    assert list(clean.series_ids) == ["g1", "g2", "g3", "g4"]
    assert clean.weight[0] > clean.weight[-1]  # group 1 holds the largest series


def test_random_groups_are_seeded(small_panel):
    a = build_unit(small_panel, "groups_random:3", first_fit_end=20, seed=5)
    b = build_unit(small_panel, "groups_random:3", first_fit_end=20, seed=5)
    c = build_unit(small_panel, "groups_random:3", first_fit_end=20, seed=6)
    assert np.array_equal(a.values, b.values, equal_nan=True)
    assert not np.array_equal(a.values, c.values, equal_nan=True)
    assert np.allclose(np.nansum(a.values, axis=0), np.nansum(c.values, axis=0))  # same total either way


def test_weight_attribute_is_used_when_present_and_summed_for_aggregates(small_panel):
    attrs = small_panel.attributes.assign(weight=np.arange(1.0, small_panel.n_series + 1))
    panel = small_panel.__class__.from_long(
        small_panel.data, available_at_col="available_at", freq="MS", attributes=attrs, levels=small_panel.levels
    )
    series = build_unit(panel, "series", first_fit_end=20)
    total = build_unit(panel, "total", first_fit_end=20)
    assert np.array_equal(series.weight, attrs["weight"].to_numpy())
    assert total.weight[0] == attrs["weight"].sum()
    # without the attribute: mean observed value before the cut (0 when none)
    plain = build_unit(small_panel, "series", first_fit_end=20)
    dense = small_panel.dense()
    with np.errstate(invalid="ignore"):
        expected = np.nan_to_num(np.nanmean(dense.values[:, :20], axis=1))
    assert np.allclose(plain.weight, expected)


@pytest.mark.parametrize(
    ("unit", "message"),
    [
        ("customers", r"unknown unit 'customers'; accepted forms are series, total, level:<attr>"),
        ("level:brand", r"'brand' is not a hierarchy level .*levels: \['region', 'store'\]"),
        ("groups:0", "k must be between 1 and the 12 series"),
        ("groups_random:13", "k must be between 1 and the 12 series"),
        ("groups:x", "unknown unit 'groups:x'"),
    ],
)
def test_when_a_unit_is_unknown_then_the_error_lists_the_accepted_forms(small_panel, unit, message):
    with pytest.raises(ValueError, match=message):
        parse_unit(unit, small_panel)


def test_aggregate_is_published_when_its_last_member_is():
    periods = pd.date_range("2020-01-01", periods=6, freq="MS")
    frame = pd.DataFrame({"series_id": ["a"] * 6 + ["b"] * 6, "period": list(periods) * 2, "value": 1.0})
    frame["available_at"] = frame["period"] + pd.offsets.MonthBegin(1)
    frame.loc[(frame["series_id"] == "b") & (frame["period"] == periods[3]), "available_at"] = periods[5]
    from tycheon.data.panel import Panel

    panel = Panel.from_long(frame, available_at_col="available_at", freq="MS")
    total = build_unit(panel, "total", first_fit_end=2)
    assert total.available_at[0, 3] == np.datetime64(periods[5])
    assert total.available_at[0, 2] == np.datetime64(periods[3])


@pytest.mark.parametrize("unit", ["series", "total", "groups:3", "groups_random:3"])
def test_a_cached_unit_is_the_built_one_read_only_and_built_once_per_arguments(small_panel, unit):
    from dataclasses import fields

    from tycheon.backtest.units import cached_unit

    first = cached_unit(small_panel, unit, first_fit_end=20, seed=1)
    built = build_unit(small_panel, unit, first_fit_end=20, seed=1)
    for f in fields(built):
        got, want = getattr(first, f.name), getattr(built, f.name)
        if isinstance(want, np.ndarray):
            np.testing.assert_array_equal(got, want)
        elif isinstance(want, (pd.DataFrame, pd.Index)):
            assert got.equals(want)
        else:
            assert got == want
    assert cached_unit(small_panel, unit, first_fit_end=20, seed=1) is first
    assert cached_unit(small_panel, unit, first_fit_end=21, seed=1) is not first  # another cut, another unit
    random_seed_matters = unit.startswith("groups_random")
    assert (cached_unit(small_panel, unit, first_fit_end=20, seed=2) is first) is not random_seed_matters
    with pytest.raises(ValueError):
        first.values[0, 0] = 1.0  # shared across runs: never written to
