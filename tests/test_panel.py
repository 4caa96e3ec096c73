"""Panel validation messages, the NaN policy, the dense view and the long -> dense -> long round trip."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tycheon.data.panel import Panel, PanelValidationError


def _long(ids_lengths: dict[str, int], *, start: str = "2020-01-01", freq: str = "MS") -> pd.DataFrame:
    rows = []
    for sid, n in ids_lengths.items():
        for j, p in enumerate(pd.date_range(start, periods=n, freq=freq)):
            rows.append({"series_id": sid, "period": p, "value": float(j + 1)})
    return pd.DataFrame(rows)


def test_when_a_series_repeats_a_period_then_the_error_names_series_and_period():
    frame = _long({"a": 4, "b": 4})
    frame = pd.concat([frame, frame.iloc[[5]]], ignore_index=True)
    with pytest.raises(PanelValidationError, match=r"duplicate \(series, period\).*series_id=b, period=2020-02-01"):
        Panel.from_long(frame, freq="MS")


def test_when_series_disagree_on_frequency_then_mixed_frequency_is_refused():
    frame = pd.concat([_long({"a": 6}), _long({"q": 6}, freq="QS")], ignore_index=True)
    with pytest.raises(PanelValidationError, match=r"mixed frequency across series .*'MS': \['a'\].*'QS-OCT': \['q'\]"):
        Panel.from_long(frame)


def test_when_periods_are_off_the_declared_grid_then_they_are_named():
    frame = _long({"a": 4})
    frame.loc[2, "period"] = pd.Timestamp("2020-03-15")
    with pytest.raises(PanelValidationError, match=r"not on the 'MS' grid.*2020-03-15"):
        Panel.from_long(frame, freq="MS")


def test_when_a_value_is_not_numeric_then_the_series_and_value_are_named():
    frame = _long({"a": 4}).astype({"value": object})
    frame.loc[1, "value"] = "12,5"
    with pytest.raises(
        PanelValidationError, match=r"non-numeric values; numbers \(or NaN\) are accepted: series_id=a, value=12,5"
    ):
        Panel.from_long(frame, freq="MS")


def test_when_a_value_is_infinite_then_it_is_refused_with_its_row():
    frame = _long({"a": 4, "b": 4})
    frame.loc[6, "value"] = -np.inf
    with pytest.raises(PanelValidationError, match=r"infinite values are not accepted: series_id=b, period=2020-03-01"):
        Panel.from_long(frame, freq="MS")


def test_when_available_at_precedes_the_period_end_then_it_is_refused():
    frame = _long({"a": 3})
    frame["avail"] = frame["period"] + pd.offsets.MonthBegin(1)
    frame.loc[1, "avail"] = pd.Timestamp("2020-02-20")  # the February value cannot be known mid-February
    with pytest.raises(
        PanelValidationError,
        match=r"available_at is before the end of the period.*available_at >= period end.*"
        r"series_id=a, period=2020-02-01 00:00:00, available_at=2020-02-20",
    ):
        Panel.from_long(frame, available_at_col="avail", freq="MS")


def test_when_available_at_is_later_than_the_period_end_then_it_is_kept():
    frame = _long({"a": 3})
    frame["avail"] = frame["period"] + pd.Timedelta(days=45)
    panel = Panel.from_long(frame, available_at_col="avail", freq="MS")
    assert list(panel.data["available_at"]) == list(frame["avail"])


def test_when_available_at_is_absent_then_it_defaults_to_the_period_end():
    panel = Panel.from_long(_long({"a": 3}), freq="MS")
    assert list(panel.data["available_at"]) == list(pd.to_datetime(["2020-02-01", "2020-03-01", "2020-04-01"]))


def test_when_nan_under_raise_policy_then_the_count_and_rows_are_named():
    frame = _long({"a": 4, "b": 4})
    frame.loc[[2, 7], "value"] = np.nan
    with pytest.raises(
        PanelValidationError, match=r"2 NaN value\(s\) under nan_policy='raise'.*series_id=a, period=2020-03-01"
    ):
        Panel.from_long(frame, freq="MS")


def test_when_nan_under_zero_policy_then_they_become_zero_and_are_counted():
    frame = _long({"a": 4, "b": 4})
    frame.loc[[2, 7], "value"] = np.nan
    panel = Panel.from_long(frame, freq="MS", nan_policy="zero")
    assert panel.meta["nan_filled"] == 2
    assert panel.data["value"].tolist() == [1.0, 2.0, 0.0, 4.0, 1.0, 2.0, 3.0, 0.0]


def test_when_nan_policy_is_unknown_then_it_is_refused():
    with pytest.raises(
        PanelValidationError, match=r"nan_policy must be one of 'raise', 'zero', 'drop_series', got 'drop'"
    ):
        Panel.from_long(_long({"a": 3}), freq="MS", nan_policy="drop")  # type: ignore[arg-type]


def test_when_a_series_has_an_interior_gap_then_it_is_named():
    frame = _long({"a": 5, "b": 5}).drop(index=[7]).reset_index(drop=True)
    with pytest.raises(PanelValidationError, match=r"1 series have missing periods.*contiguous.*\['b'\]"):
        Panel.from_long(frame, freq="MS")


def test_when_attributes_lack_a_series_then_it_is_named():
    attrs = pd.DataFrame({"region": ["n"]}, index=pd.Index(["a"], name="series_id"))
    with pytest.raises(PanelValidationError, match=r"attributes lack 1 series of the table, e.g. \['b'\]"):
        Panel.from_long(_long({"a": 3, "b": 3}), freq="MS", attributes=attrs, levels=("region",))


def test_when_a_level_is_not_an_attribute_column_then_it_is_named():
    attrs = pd.DataFrame({"region": ["n", "s"]}, index=["a", "b"])
    with pytest.raises(PanelValidationError, match=r"hierarchy level\(s\) \['segment'\] are not attribute columns"):
        Panel.from_long(_long({"a": 3, "b": 3}), freq="MS", attributes=attrs, levels=("segment",))


def test_when_a_column_is_missing_then_the_table_columns_are_listed():
    with pytest.raises(
        PanelValidationError, match=r"missing column\(s\) \['qty'\]; the table has \['series_id', 'period', 'value'\]"
    ):
        Panel.from_long(_long({"a": 3}), value_col="qty", freq="MS")


def test_when_the_index_repeats_labels_then_explicit_available_at_still_aligns():
    # regression: a concatenated frame (repeated index labels) crashed on the available_at lookup
    frame = _long({"a": 3, "b": 3})
    frame["avail"] = frame["period"] + pd.offsets.MonthBegin(2)
    frame.index = [0, 0, 1, 1, 2, 2]
    panel = Panel.from_long(frame, available_at_col="avail", freq="MS")
    assert (panel.data["available_at"] == panel.data["period"] + pd.offsets.MonthBegin(2)).all()


def test_dense_view_masks_ragged_starts_and_early_exits():
    frame = pd.concat([_long({"a": 5}), _long({"b": 3}, start="2020-03-01"), _long({"c": 2})], ignore_index=True)
    view = Panel.from_long(frame, freq="MS").dense()
    assert view.shape == (3, 5)
    np.testing.assert_array_equal(view.observed, [[1, 1, 1, 1, 1], [0, 0, 1, 1, 1], [1, 1, 0, 0, 0]])
    assert np.isnan(view.values[1, :2]).all() and np.isnan(view.values[2, 2:]).all()
    np.testing.assert_array_equal(view.values[1, 2:], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(view.first, [0, 2, 0])
    np.testing.assert_array_equal(view.last, [4, 4, 1])
    assert np.isnat(view.available_at[1, 0])
    assert view.available_at[1, 2] == np.datetime64("2020-04-01")
    np.testing.assert_array_equal(view.n_observed(upto=3), [3, 1, 2])


_FREQS = ["MS", "QS", "YS", "D", "W-SUN"]


@st.composite
def _panels(draw):
    freq = draw(st.sampled_from(_FREQS))
    n_series = draw(st.integers(1, 5))
    grid_len = draw(st.integers(1, 12))
    grid = pd.date_range("2001-01-07" if freq == "W-SUN" else "2001-01-01", periods=grid_len, freq=freq)
    rows, attrs = [], []
    for k in range(n_series):
        lo = draw(st.integers(0, grid_len - 1))
        hi = draw(st.integers(lo, grid_len - 1))
        for j in range(lo, hi + 1):
            value = draw(st.floats(-1e9, 1e9, allow_nan=False, allow_infinity=False))
            delay = draw(st.integers(0, 400))
            end = grid[j] + pd.tseries.frequencies.to_offset(freq)
            rows.append(
                {
                    "series_id": f"s{k}",
                    "period": grid[j],
                    "value": value,
                    "available_at": end + pd.Timedelta(hours=delay),
                }
            )
        attrs.append(
            {"series_id": f"s{k}", "region": draw(st.sampled_from(["n", "s"])), "weight": draw(st.floats(0, 10))}
        )
    frame = pd.DataFrame(rows).sample(frac=1.0, random_state=draw(st.integers(0, 10)))  # any row order
    return Panel.from_long(
        frame, available_at_col="available_at", freq=freq, attributes=pd.DataFrame(attrs), levels=("region",)
    )


@settings(max_examples=60, deadline=None)
@given(_panels())
def test_long_to_dense_to_long_round_trip_is_exact(panel):
    back = Panel.from_dense(
        panel.dense(),
        freq=panel.freq,
        season_length=panel.season_length,
        attributes=panel.attributes,
        levels=panel.levels,
    )
    pd.testing.assert_frame_equal(back.data, panel.data)
    pd.testing.assert_frame_equal(back.attributes, panel.attributes)
    assert (back.freq, back.season_length, back.levels) == (panel.freq, panel.season_length, panel.levels)
    assert back.dense().observed.sum() == len(panel.data)


def test_when_a_series_id_is_missing_then_the_rows_are_named_instead_of_a_series_called_nan():
    frame = _long({"a": 3, "b": 3})
    frame.loc[4, "series_id"] = None
    with pytest.raises(
        PanelValidationError, match=r"1 row\(s\) have no series id in column 'series_id' \(rows \[4\]\)"
    ):
        Panel.from_long(frame, freq="MS")


def test_when_periods_mix_time_zones_then_a_one_line_error_names_the_column():
    frame = _long({"a": 3})
    frame["period"] = ["2020-01-01T00:00:00+01:00", "2020-02-01T00:00:00+00:00", "2020-03-01T00:00:00+00:00"]
    with pytest.raises(PanelValidationError, match=r"column 'period' mixes time zones"):
        Panel.from_long(frame, freq="MS")


def test_when_periods_are_in_one_time_zone_then_they_are_kept_as_wall_times():
    frame = _long({"a": 3})
    frame["period"] = pd.to_datetime(frame["period"]).dt.tz_localize("UTC")
    panel = Panel.from_long(frame, freq="MS")
    assert panel.data["period"].dt.tz is None
    assert panel.data["period"].iloc[0] == pd.Timestamp("2020-01-01")


def test_when_a_date_cannot_be_parsed_then_the_value_and_row_are_named():
    frame = _long({"a": 3}).astype({"period": str})
    frame.loc[1, "period"] = "not a date"
    with pytest.raises(PanelValidationError, match=r"not a date: 'not a date' \(row 1\)"):
        Panel.from_long(frame, freq="MS")


@pytest.mark.parametrize("cast", [lambda v: v > 1, lambda v: (v > 1).astype(object)])
def test_when_the_target_holds_booleans_then_they_are_refused_not_read_as_0_1(cast):
    frame = _long({"a": 3})
    frame["value"] = cast(frame["value"])
    with pytest.raises(PanelValidationError, match=r"column 'value' holds booleans"):
        Panel.from_long(frame, freq="MS")


def test_when_nan_under_raise_policy_then_the_first_series_and_period_are_named():
    frame = _long({"b": 4, "a": 4})
    frame.loc[[2, 5], "value"] = np.nan  # b at 2020-03, a at 2020-02: a sorts first
    with pytest.raises(PanelValidationError, match=r"the first in series 'a' at period 2020-02-01"):
        Panel.from_long(frame, freq="MS")


def test_when_nan_policy_is_drop_series_then_those_series_are_dropped_counted_and_listed():
    frame = _long({"a": 4, "b": 4, "c": 4})
    frame.loc[[1, 9], "value"] = np.nan  # a and c
    panel = Panel.from_long(frame, freq="MS", nan_policy="drop_series")
    assert panel.series_ids.tolist() == ["b"]
    assert panel.meta["dropped_series"] == ["a", "c"]
    assert sum("dropped series: 2 series" in w for w in panel.warnings) == 1


def test_when_edges_are_unlisted_then_leading_and_trailing_nan_shorten_the_series_not_zero_it():
    frame = _long({"a": 5, "b": 5, "c": 5})
    frame.loc[[0, 1, 9], "value"] = np.nan  # a not yet listed for 2 periods; b delisted in its last
    frame.loc[10:14, "value"] = np.nan  # c never has a value
    panel = Panel.from_long(frame, freq="MS", edge_nan="unlisted")
    view = panel.dense()
    assert panel.series_ids.tolist() == ["a", "b"]
    assert view.observed.tolist() == [[False, False, True, True, True], [True, True, True, True, False]]
    assert panel.meta["unlisted_periods"] == 8
    assert panel.meta["dropped_series"] == ["c"]


def test_when_edges_are_unlisted_then_an_interior_nan_still_goes_by_the_nan_policy():
    frame = _long({"a": 5})
    frame.loc[[0, 2], "value"] = np.nan
    with pytest.raises(PanelValidationError, match=r"series 'a' at period 2020-03-01"):
        Panel.from_long(frame, freq="MS", edge_nan="unlisted")
    zeroed = Panel.from_long(frame, freq="MS", edge_nan="unlisted", nan_policy="zero")
    assert zeroed.data["value"].tolist() == [2.0, 0.0, 4.0, 5.0]
    assert zeroed.meta["nan_filled"] == 1
