"""Selection-rule replay (evaluation-choices paper, section 7) on small constructed score-set tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tycheon.analysis.replay import (
    ReplaySpec,
    non_overlapping_origins,
    replay,
    replay_tables,
)
from tycheon.errors import InputError, ScaleMismatchError
from tycheon.metrics.aggregate import block_scores

H = 3


def _table(points: dict[str, np.ndarray], actual: np.ndarray, *, stride: int = H, classes=None) -> pd.DataFrame:
    """Score-set rows for models' ``points[model] [series, origin, step]`` against ``actual`` (same
    shape); origins monthly ``stride`` apart, each target published at its period's end."""
    n_s, n_o, h = actual.shape
    first = pd.Timestamp("2020-01-01")
    rows = []
    for m, pt in points.items():
        for s in range(n_s):
            for j in range(n_o):
                origin = first + pd.DateOffset(months=stride * j)
                for k in range(h):
                    target = origin + pd.DateOffset(months=k)
                    rows.append(
                        {
                            "model": m,
                            "unit": "series",
                            "series_id": f"s{s:02d}",
                            "origin": origin,
                            "step": k + 1,
                            "target_period": target,
                            "actual": actual[s, j, k],
                            "point": pt[s, j, k],
                            "available_at": target + pd.DateOffset(months=1) - pd.Timedelta(days=1),
                            "demand_class": "smooth" if classes is None else classes[s],
                            "season_length": 12,
                            "scale_mae": 1.0 + s,
                            "scale_rmse": 1.5 + s,
                            "weight": 1.0,
                            "lo80": np.nan,
                            "hi80": np.nan,
                            "lo95": np.nan,
                            "hi95": np.nan,
                            "has_band": False,
                            "has_quantiles": False,
                            "has_samples": False,
                        }
                    )
    return pd.DataFrame(rows)


def _errs(rng, shape, sd):
    return rng.normal(scale=sd, size=shape)


def test_when_one_method_is_best_on_every_block_and_the_others_are_biased_then_served_equals_it():
    rng = np.random.default_rng(0)
    shape = (6, 8, H)
    y = 10 + rng.normal(size=shape)
    best = y + _errs(rng, shape, 0.1)  # best everywhere, unbiased
    pts = {
        "base": y + 3.0 + _errs(rng, shape, 1.0),
        "best": best,
        "over": y + 2.0 + _errs(rng, shape, 0.2),
        "under": y - 2.5 + _errs(rng, shape, 0.2),
    }
    # the two biased methods fail the bias filter (|mean scaled bias| > 0.5 on every series)
    res = replay(_table(pts, y), spec=ReplaySpec(baseline="base", bias_threshold=0.3))
    row = res.summary.query("variant == 'all_folds' and demand_class == 'all'").iloc[0]
    blocks = res.blocks.query("variant == 'all_folds'")
    assert (blocks["chosen"] == "best").all()
    np.testing.assert_allclose(blocks["served"], blocks["oracle"], rtol=0, atol=0)
    assert row["gap_closed"] == pytest.approx(1.0, abs=1e-12)
    assert row["win_share"] == 1.0
    assert row["champion"] == "best" and row["champion_gap_closed"] == pytest.approx(1.0)
    assert row["champion_full"] == "best"
    # 8 origins, 3 earlier published folds needed: origins 4..8 are replayed on 6 series
    assert row["n_blocks"] == 6 * 5


def test_when_top_k_is_one_then_the_best_unbiased_method_is_served_even_beside_near_rivals():
    rng = np.random.default_rng(1)
    shape = (5, 7, H)
    y = 5 + rng.normal(size=shape)
    pts = {"base": y + _errs(rng, shape, 2.0), "a": y + _errs(rng, shape, 0.05), "b": y + _errs(rng, shape, 0.5)}
    res = replay(_table(pts, y), spec=ReplaySpec(baseline="base", top_k=1, bias_threshold=10.0))
    blocks = res.blocks.query("variant == 'all_folds'")
    assert (blocks["chosen"] == "a").all()
    row = res.summary.query("variant == 'all_folds' and demand_class == 'all'").iloc[0]
    assert row["gap_closed"] == pytest.approx(1.0)


@pytest.mark.slow
def test_when_every_candidate_is_the_same_noise_then_the_gain_is_near_zero():
    rng = np.random.default_rng(2)
    shape = (400, 8, H)
    y = 20 + rng.normal(size=shape)
    pts = {m: y + _errs(rng, shape, 1.0) for m in ("base", "n1", "n2", "n3", "n4", "n5")}
    res = replay(_table(pts, y), spec=ReplaySpec(baseline="base", top_k=1, bias_threshold=10.0))
    row = res.summary.query("variant == 'all_folds' and demand_class == 'all'").iloc[0]
    # choosing on past noise is worth nothing: within a few percent of the floor, and far from the oracle
    assert abs(row["gain"]) < 0.03
    assert abs(row["gap_closed"]) < 0.08
    assert row["oracle"] < 0.7 * row["floor"]


def test_served_rows_are_scored_with_the_blocks_own_scales_and_average_the_chosen_points():
    rng = np.random.default_rng(3)
    shape = (3, 6, H)
    y = 4 + rng.normal(size=shape)
    pts = {
        "base": y + 1.0,
        "a": y + 0.1 * rng.normal(size=shape),
        "b": y - 0.1 + 0.1 * rng.normal(size=shape),
        "c": y + 0.2 * rng.normal(size=shape),
    }
    table = _table(pts, y)
    res = replay(table, spec=ReplaySpec(baseline="base", bias_threshold=10.0))
    served = res.served.query("variant == 'all_folds'")
    chosen = res.blocks.query("variant == 'all_folds'").set_index(["series_id", "origin"])["chosen"]
    by = table.set_index(["model", "series_id", "origin", "step"])["point"]
    for _, r in served.head(12).iterrows():
        names = chosen[(r["series_id"], r["origin"])].split("+")
        expect = np.mean([by[(m, r["series_id"], r["origin"], r["step"])] for m in names])
        assert r["point"] == pytest.approx(expect)
        assert r["scale_rmse"] == 1.5 + int(r["series_id"][1:])
    # served RMSSE recomputed by hand from its own rows
    one = served[(served["series_id"] == "s01")].query("origin == origin.max()")
    rmsse = np.sqrt(np.mean((one["point"] - one["actual"]) ** 2)) / 2.5
    got = res.blocks.query("variant == 'all_folds' and series_id == 's01'").sort_values("origin").iloc[-1]["served"]
    assert got == pytest.approx(rmsse)


def test_a_served_row_carrying_another_scale_is_refused():
    rng = np.random.default_rng(4)
    shape = (2, 5, H)
    y = 4 + rng.normal(size=shape)
    table = _table({"base": y + 1.0, "a": y}, y)
    res = replay(table, spec=ReplaySpec(baseline="base", bias_threshold=10.0))
    bad = res.served.drop(columns="variant").assign(scale_rmse=lambda d: d["scale_mae"])  # the paper's error
    with pytest.raises(ScaleMismatchError):
        block_scores(pd.concat([table, bad], ignore_index=True), metrics=("rmsse",))


def test_a_choice_at_an_origin_never_reads_that_origin_or_any_unpublished_outcome():
    """Overlapping origins (stride 1, horizon 3): the folds of origin j are origins <= j - 3 only, so
    rewriting the outcomes of origins j-2 .. end must leave every choice at j unchanged."""
    rng = np.random.default_rng(5)
    shape = (8, 10, H)
    y = 10 + rng.normal(size=shape)
    pts = {
        m: y + rng.normal(scale=sd, size=shape)
        for m, sd in (("base", 1.0), ("a", 0.6), ("b", 0.8), ("c", 0.7), ("d", 0.9))
    }
    spec = ReplaySpec(baseline="base", top_k=2, bias_threshold=10.0, min_folds=2)
    ref = replay(_table(pts, y, stride=1), spec=spec).blocks.query("variant == 'all_folds'")
    j = 6
    first = pd.Timestamp("2020-01-01")
    at_j = first + pd.DateOffset(months=j)
    changed = {m: p.copy() for m, p in pts.items()}
    for p in changed.values():  # scramble what was unpublished at origin j: origins j-2 .. 9
        p[:, j - 2 :, :] = y[:, j - 2 :, :] + rng.normal(scale=5.0, size=p[:, j - 2 :, :].shape)
    changed["a"][:, j - 2 :, :] = y[:, j - 2 :, :]  # "a" now perfect on those folds: a leak would pick it
    new = replay(_table(changed, y, stride=1), spec=spec).blocks.query("variant == 'all_folds'")
    a = ref[ref["origin"] == at_j].set_index("series_id")["chosen"]
    b = new[new["origin"] == at_j].set_index("series_id")["chosen"]
    assert len(a) == 8
    pd.testing.assert_series_equal(a, b)
    assert (ref.loc[ref["origin"] == at_j, "n_folds"] == j - 2).all()  # origins 0..j-3
    later = new[new["origin"] == first + pd.DateOffset(months=9)]
    assert later["chosen"].str.contains("a").all()  # ...and the rewritten folds do count once published


def test_non_overlapping_variant_keeps_origins_a_full_horizon_apart():
    rng = np.random.default_rng(6)
    shape = (4, 12, H)
    y = 10 + rng.normal(size=shape)
    table = _table({"base": y + 1.0, "a": y + 0.2 * rng.normal(size=shape)}, y, stride=1)
    kept = non_overlapping_origins(table)
    assert [k.month for k in kept] == [1, 4, 7, 10]
    res = replay(table, spec=ReplaySpec(baseline="base", bias_threshold=10.0))
    thin = res.blocks.query("variant == 'non_overlapping'")
    assert set(thin["origin"]) == {pd.Timestamp("2020-10-01")}  # the 4th kept origin has 3 folds
    assert (thin["n_folds"] == 3).all()


def test_summary_is_split_by_demand_class():
    rng = np.random.default_rng(7)
    shape = (6, 6, H)
    y = 10 + rng.normal(size=shape)
    classes = ["smooth", "smooth", "lumpy", "lumpy", "lumpy", "erratic"]
    res = replay(
        _table({"base": y + 1.0, "a": y}, y, classes=classes), spec=ReplaySpec(baseline="base", bias_threshold=10.0)
    )
    s = res.summary.query("variant == 'all_folds'").set_index("demand_class")
    assert s.loc["all", "n_blocks"] == s.loc[["smooth", "lumpy", "erratic"], "n_blocks"].sum()
    assert s.loc["lumpy", "n_blocks"] == 3 * 3


def test_bad_specs_and_inputs_are_refused_with_what_is_accepted():
    with pytest.raises(InputError, match="scaled point metric"):
        ReplaySpec(baseline="b", metric="wape")
    with pytest.raises(InputError, match="min_fold_share"):
        ReplaySpec(baseline="b", min_fold_share=0.0)
    with pytest.raises(InputError, match="top_k"):
        ReplaySpec(baseline="b", top_k=0)
    y = np.ones((2, 5, H))
    with pytest.raises(InputError, match="baseline 'nope'"):
        replay(_table({"a": y}, y), spec=ReplaySpec(baseline="nope"))
    with pytest.raises(InputError, match="no rows for unit"):
        replay(_table({"a": y}, y), spec=ReplaySpec(baseline="a"), unit="total")


def test_replay_tables_give_one_record_per_unit_with_the_rule_and_the_choice_shares():
    rng = np.random.default_rng(8)
    shape = (4, 6, H)
    y = 10 + rng.normal(size=shape)
    res = replay(
        _table({"base": y + 1.0, "a": y, "b": y + 0.5}, y),
        spec=ReplaySpec(baseline="base", top_k=1, bias_threshold=10.0, min_cell=12),  # 12 replayed blocks
    )
    (rec,) = replay_tables(res)
    assert rec["unit"] == "series" and rec["rule"]["top_k"] == 1
    assert {r["variant"] for r in rec["rows"]} == {"all_folds", "non_overlapping"}
    shares = {(r["variant"], r["model"]): r["share"] for r in rec["chosen_share"]}
    assert shares[("all_folds", "a")] == 1.0


def test_the_series_oracle_lies_between_the_block_oracle_and_the_floor():
    rng = np.random.default_rng(9)
    shape = (30, 7, H)
    y = 10 + rng.normal(size=shape)
    pts = {m: y + rng.normal(scale=sd, size=shape) for m, sd in (("base", 1.0), ("a", 0.8), ("b", 0.9), ("c", 1.1))}
    table = _table(pts, y)
    by_block = replay(table, spec=ReplaySpec(baseline="base", bias_threshold=10.0)).blocks
    by_series = replay(table, spec=ReplaySpec(baseline="base", bias_threshold=10.0, oracle="series")).blocks
    merged = by_block.merge(by_series, on=["variant", "series_id", "origin"], suffixes=("_b", "_s"))
    assert len(merged) == len(by_block) == len(by_series)
    assert (merged["oracle_b"] <= merged["oracle_s"] + 1e-12).all()
    per_series = merged.groupby("series_id")[["oracle_s", "floor_s"]].mean()
    assert (per_series["oracle_s"] <= per_series["floor_s"] + 1e-12).all()
    assert (merged["oracle_b"] < merged["oracle_s"]).any()  # per block it can do strictly better
    # the series oracle is one method for all of a series' blocks of a variant
    for (_variant, sid), g in merged.groupby(["variant", "series_id"]):
        scores = {m: [] for m in pts}
        for _, r in g.iterrows():
            for m in pts:
                sub = table[(table["model"] == m) & (table["series_id"] == sid) & (table["origin"] == r["origin"])]
                scores[m].append(np.sqrt(np.mean((sub["point"] - sub["actual"]) ** 2)) / sub["scale_rmse"].iloc[0])
        best = min(pts, key=lambda m: np.mean(scores[m]))
        np.testing.assert_allclose(g["oracle_s"].to_numpy(), scores[best], rtol=1e-12)
        break


def test_when_no_block_has_enough_earlier_folds_the_summary_is_empty_with_its_columns():
    y = np.ones((2, 3, H))
    res = replay(_table({"base": y + 1.0, "a": y}, y), spec=ReplaySpec(baseline="base"))
    assert res.summary.empty and list(res.summary.columns)[:3] == ["unit", "variant", "demand_class"]
    assert replay_tables(res) == []


def test_a_row_below_the_minimum_cell_names_no_champion_and_a_failing_variant_no_choices():
    """12 series x 6 origins, 3 replayed origins: 36 blocks in all, 30 smooth, 6 lumpy (two series). With
    the minimum cell of 30 the lumpy rows name no champion (their means still reported) and say why; with
    40 no row names one and no variant lists the models it chose."""
    from benchmarks.results_io import to_json_value
    from benchmarks.results_model import ReplayTable

    rng = np.random.default_rng(11)
    shape = (12, 6, H)
    y = 10 + rng.normal(size=shape)
    pts = {"base": y + 1.0 + rng.normal(size=shape), "a": y + rng.normal(scale=0.3, size=shape), "b": y + 0.5}
    table = _table(pts, y, classes=["lumpy" if s >= 10 else "smooth" for s in range(12)])
    res = replay(table, spec=ReplaySpec(baseline="base", bias_threshold=10.0))
    rows = {(r["variant"], r["demand_class"]): r for r in res.summary.to_dict(orient="records")}
    for variant in ("all_folds", "non_overlapping"):
        lumpy, smooth, pooled = (rows[(variant, c)] for c in ("lumpy", "smooth", "all"))
        assert (lumpy["n_blocks"], smooth["n_blocks"], pooled["n_blocks"]) == (6, 30, 36)
        assert lumpy["cell_ok"] is False and lumpy["champion"] is None and lumpy["champion_full"] is None
        assert np.isnan(lumpy["champion_mean"]) and np.isnan(lumpy["champion_gap_closed"])
        assert "6 scored blocks" in lumpy["cell_reason"] and "minimum cell of 30" in lumpy["cell_reason"]
        assert np.isfinite([lumpy["floor"], lumpy["served"], lumpy["oracle"], lumpy["gain"]]).all()
        for ok in (smooth, pooled):
            assert ok["cell_ok"] is True and ok["cell_reason"] is None
            assert ok["champion"] == "a" and ok["champion_full"] == "a"
    (rec,) = replay_tables(res)
    assert (rec["min_cell"], rec["cell_counts"]) == (30, "scored blocks (series x origin)")
    assert {c["variant"] for c in rec["chosen_share"]} == {"all_folds", "non_overlapping"}
    parsed = ReplayTable.model_validate(to_json_value({"dataset": "d", "protocol": "rolling_origin", **rec}))
    assert parsed.rows[0].cell_ok is not None and parsed.min_cell == 30

    strict = replay(table, spec=ReplaySpec(baseline="base", bias_threshold=10.0, min_cell=40))
    assert not strict.summary["cell_ok"].any() and strict.summary["champion"].isna().all()
    assert strict.summary["champion_full"].isna().all()
    (rec40,) = replay_tables(strict)
    assert rec40["chosen_share"] == [] and rec40["min_cell"] == 40
    ReplayTable.model_validate(to_json_value({"dataset": "d", "protocol": "rolling_origin", **rec40}))
    with pytest.raises(InputError, match="min_cell"):
        ReplaySpec(baseline="base", min_cell=1)
