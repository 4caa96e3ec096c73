"""The score set split once by unit for every analysis: the same answers as from the table, no copies of
the table, units from several tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests._analysis_support import score_table, spec
from tycheon.analysis.cell import MIN_TIME_POINTS
from tycheon.analysis.inversion import unit_inversion
from tycheon.analysis.prepared import PreparedScores, dm_family
from tycheon.errors import InputError
from tycheon.metrics.aggregate import block_scores, step_loss
from tycheon.stats.dm import dm_panel


def _table():
    return score_table(
        {"total": 1, "series": 12}, ["base", "rw", "a"], lambda u, m, rng, s: rng.normal(0, 1 + (m == "a"), s)
    )


def test_block_scores_model_by_model_equal_block_scores_of_the_whole_unit():
    table = _table()
    ps = PreparedScores(table)
    rows = table[table["unit"] == "series"]
    whole = block_scores(rows, metrics=["mase", "rmsse", "wape"]).sort_values(["model", "series_id", "origin"])
    mine = ps["series"].blocks().sort_values(["model", "series_id", "origin"])
    cols = ["model", "series_id", "origin", "mase", "rmsse", "wape", "demand_class", "weight"]
    pd.testing.assert_frame_equal(mine[cols].reset_index(drop=True), whole[cols].reset_index(drop=True))


def test_step_losses_lay_every_models_forecasts_on_one_cell_grid():
    table = _table()
    losses = PreparedScores(table)["series"].step_losses()
    rows = table[table["unit"] == "series"]
    assert losses.models == ["a", "base", "rw"] and losses.point.shape == (12 * 8 * 3, 3)
    expected = rows[rows["model"] == "a"].assign(e=lambda d: (d["point"] - d["actual"]).abs())
    expected = expected.sort_values(["series_id", "origin", "step"])["e"].to_numpy()
    assert np.allclose(np.sort(losses.loss("mae")[:, 0]), np.sort(expected))
    assert len(np.unique(losses.period)) == 8 * 3
    # one cell per (series, origin, step): the base and rw errors of a cell sit on the same row
    base = rows[rows["model"] == "base"].sort_values(["series_id", "origin", "step"])
    first = base.iloc[0]
    cell = np.flatnonzero((losses.series == 0) & (losses.origin == 0) & (losses.actual == first["actual"]))[0]
    assert losses.loss("mae")[cell, 1] == pytest.approx(abs(first["point"] - first["actual"]))
    assert losses.point[cell, 1] == first["point"]


@pytest.mark.parametrize("metric", ["mae", "mase", "rmsse", "wape", "smape"])
def test_a_metrics_per_step_loss_on_the_cells_is_the_registrys_on_the_rows(metric):
    table = _table()
    k = table["series_id"].str[1:].astype(int)
    table = table.assign(scale_mae=1.0 + k % 3, scale_rmse=np.where(k == 4, 0.0, 2.0 + k % 2))  # one zero scale
    losses = PreparedScores(table)["series"].step_losses()
    rows = table[table["unit"] == "series"].reset_index(drop=True)
    oracle = rows.assign(loss=step_loss(rows, metric))[["model", "actual", "loss"]]  # the actual names the cell
    got = pd.DataFrame(losses.loss(metric), columns=losses.models).assign(actual=losses.actual)
    got = got.melt(id_vars="actual", var_name="model", value_name="got")
    both = got.merge(oracle, on=["model", "actual"], how="outer", validate="one_to_one")
    assert len(both) == len(rows) == len(got)
    np.testing.assert_allclose(both["got"], both["loss"], equal_nan=True)
    assert both["loss"].isna().any() == (metric == "rmsse")  # the zero scale: NaN, not inf


def test_the_dm_family_runs_the_panel_test_only_on_enough_origins_and_names_its_loss():
    table = _table()  # 8 origins of horizon 3, stride 3
    losses = PreparedScores(table)["series"].step_losses()
    kw = dict(baseline="base", horizon=3, stride=3, alpha=0.05)
    fam = dm_family(losses, metric="rmsse", test="panel", **kw)
    rmsse = losses.loss("rmsse")
    ok = np.isfinite(rmsse[:, 0]) & np.isfinite(rmsse[:, 1])
    oracle = dm_panel(rmsse[ok, 0], rmsse[ok, 1], origin=losses.origin[ok], horizon=3, stride=3)
    assert (fam.test, fam.loss, fam.reason, fam.n_tested) == ("panel", "rmsse", None, 2)
    assert fam.p_value["a"] == pytest.approx(oracle.p_value)
    few = losses.where(losses.origin < MIN_TIME_POINTS - 1)
    refused = dm_family(few, metric="rmsse", test="panel", **kw)
    assert refused.n_tested == 0 and refused.p_value == {} and "scored origin(s)" in refused.reason
    pooled = dm_family(few, test="pooled", **kw)  # the pooled test on absolute errors (the inversion page's)
    assert (pooled.test, pooled.loss, pooled.reason, pooled.n_tested) == ("pooled", "mae", None, 2)
    with pytest.raises(InputError, match="test must be"):
        dm_family(losses, test="robust", **kw)


def test_analyses_give_the_same_answer_from_a_table_or_prepared_scores_and_subsets_share_work():
    table = _table()
    ps = PreparedScores(table)
    assert unit_inversion(table, spec=spec()) == unit_inversion(ps, spec=spec())
    sub = ps.subset(["series"])
    assert list(sub) == ["series"] and sub["series"] is ps["series"]


def test_units_from_two_tables_and_a_unit_in_both_is_refused():
    table = _table()
    a, b = table[table["unit"] == "total"], table[table["unit"] == "series"]
    ps = PreparedScores(a, b)
    assert sorted(ps) == ["series", "total"]
    with pytest.raises(InputError, match="more than one table"):
        PreparedScores(a, a)
    with pytest.raises(InputError, match="no rows for unit 'groups:5'"):
        ps["groups:5"]


def test_units_are_split_by_their_codes_as_by_their_labels_and_a_missing_unit_is_left_out():
    table = _table()
    cats = sorted(table["unit"].astype(str).unique()) + ["zz"]  # an unused last category
    unit = pd.Categorical(table["unit"].astype(str), categories=cats)
    by_codes = PreparedScores(table.assign(unit=unit))
    by_labels = PreparedScores(table.assign(unit=table["unit"].astype(str)))
    assert list(by_codes) == list(by_labels)
    missing = table.assign(unit=pd.Categorical(table["unit"].astype(str).where(table.index % 7 != 0), categories=cats))
    units = PreparedScores(missing)
    assert list(units) == list(by_labels)  # no "zz": the missing rows are nobody's unit
    assert sum(len(units[u].column("step")) for u in units) == int((table.index % 7 != 0).sum())


def test_a_cell_whose_models_disagree_on_the_actual_is_refused():
    table = _table()
    table.loc[table.index[(table["model"] == "rw") & (table["unit"] == "series")][5], "actual"] += 1.0
    with pytest.raises(InputError, match="1 row\\(s\\) give another actual"):
        PreparedScores(table)["series"].step_losses()
