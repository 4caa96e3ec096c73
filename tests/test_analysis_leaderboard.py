"""Leaderboard tables against independent oracles: scipy's Friedman test, statsmodels' BH adjustment,
plain loops for the counts, and constructed cases for the random-walk verdict and support flags."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from tycheon.analysis.leaderboard import LeaderboardSpec, interval_tables, leaderboard_tables
from tycheon.errors import InputError
from tycheon.metrics.aggregate import block_scores

MODELS = ("naive", "snaive_momentum", "ses", "croston_sba")
SPEC = LeaderboardSpec(
    metrics=("mase", "rmsse"), baseline="snaive_momentum", random_walk="naive", horizon=4, stride=4, alpha=0.05, seed=0
)


def _table(
    seed: int = 0, n_series: int = 24, n_origins: int = 3, h: int = 4, noise: dict[str, float] | None = None
) -> pd.DataFrame:
    """A score-set table with known structure: model m's point is the truth plus N(0, noise[m])."""
    rng = np.random.default_rng(seed)
    noise = noise or {"naive": 2.0, "snaive_momentum": 1.5, "ses": 1.0, "croston_sba": 3.0}
    origins = pd.date_range("2022-01-01", periods=n_origins, freq="4MS")
    rows = []
    classes = ("smooth", "erratic", "intermittent", "lumpy")
    for s in range(n_series):
        level = rng.uniform(10, 50)
        for o in origins:
            actual = level + rng.normal(0, 2, h)
            for m, sd in noise.items():
                point = actual + rng.normal(0, sd, h)
                for k in range(h):
                    rows.append({
                        "model": m, "unit": "series", "series_id": f"S{s:03d}", "origin": o, "step": k + 1,
                        "target_period": o + pd.DateOffset(months=k), "actual": actual[k], "point": point[k],
                        "available_at": o + pd.DateOffset(months=k + 1), "demand_class": classes[s % 4],
                        "season_length": 12, "scale_mae": 2.0, "scale_rmse": 2.5, "weight": 1.0,
                        "lo80": point[k] - 2.5 * sd, "hi80": point[k] + 2.5 * sd,
                        "lo95": point[k] - 4 * sd, "hi95": point[k] + 4 * sd,
                        "has_band": True, "has_quantiles": False, "has_samples": False,
                    })  # fmt: skip
    return pd.DataFrame(rows)


def _board(boards, *, dc="all", metric="mase"):
    return next(b for b in boards if b["demand_class"] == dc and b["metric"] == metric)


@pytest.fixture(scope="module")
def boards():
    return leaderboard_tables(_table(), spec=SPEC)


def test_friedman_statistic_and_mean_ranks_match_scipy(boards):
    board = _board(boards)
    blocks = block_scores(_table(), metrics=["mase"])
    wide = blocks.pivot_table(index=["series_id", "origin"], columns="model", values="mase")[sorted(MODELS)]
    expected = stats.friedmanchisquare(*[wide[m].to_numpy() for m in wide.columns])
    assert board["tests"]["friedman_statistic"] == pytest.approx(expected.statistic, rel=1e-10)
    assert board["tests"]["friedman_p"] == pytest.approx(expected.pvalue, rel=1e-8)
    ranks = wide.rank(axis=1).mean()
    for row in board["rows"]:
        assert row["mean_rank"] == pytest.approx(ranks[row["model"]])
    assert board["tests"]["n_blocks"] == 72 and board["tests"]["dropped_blocks"] == 0


def test_rows_are_ranked_by_mean_and_beats_counts_match_a_plain_loop(boards):
    board = _board(boards, metric="rmsse")
    means = [r["mean"] for r in board["rows"]]
    assert means == sorted(means) and [r["rank"] for r in board["rows"]] == [1, 2, 3, 4]
    blocks = block_scores(_table(), metrics=["rmsse"]).set_index(["model", "series_id", "origin"])["rmsse"]
    for row in board["rows"]:
        if row["model"] == "snaive_momentum":
            assert row["beats_baseline_blocks"] is None
            continue
        count = 0
        for (model, s, o), v in blocks.items():
            if model == row["model"] and v < blocks[("snaive_momentum", s, o)]:
                count += 1
        assert row["beats_baseline_blocks"] == count


def test_dm_p_values_are_bh_adjusted_within_the_table_family(boards):
    rows = [r for r in _board(boards)["rows"] if not r["is_baseline"]]
    expected = multipletests([r["dm_p"] for r in rows], method="fdr_bh")[1]
    np.testing.assert_allclose([r["dm_p_bh"] for r in rows], expected, rtol=1e-12)
    # ses is built with less error than the baseline, croston_sba with more: both directions are seen
    direction = {r["model"]: r["dm_direction"] for r in rows}
    assert direction["ses"] == "better" and direction["croston_sba"] == "worse"


def test_random_walk_verdict_follows_adr_decision_6(boards):
    verdict = {r["model"]: r["verdict_vs_rw"] for r in _board(boards)["rows"]}
    assert verdict["naive"] is None  # the random walk itself
    assert verdict["ses"] == "beats" and verdict["croston_sba"] == "worse"


def test_when_models_are_equally_good_then_the_verdict_is_indistinguishable():
    same = {"naive": 1.0, "snaive_momentum": 1.0, "ses": 1.0, "croston_sba": 1.0}
    boards = leaderboard_tables(_table(seed=3, noise=same), spec=SPEC)
    verdicts = {r["verdict_vs_rw"] for r in _board(boards)["rows"] if r["model"] != "naive"}
    assert verdicts == {"indistinguishable"}  # equality: all-None (nothing computed) must fail here


def test_demand_class_tables_partition_the_pooled_blocks(boards):
    total = _board(boards)["n_blocks_total"]
    parts = [_board(boards, dc=c)["n_blocks_total"] for c in ("smooth", "erratic", "intermittent", "lumpy")]
    assert sum(parts) == total == 72


def test_when_a_model_misses_blocks_then_it_is_flagged_and_friedman_drops_them():
    table = _table()
    gone = (table["model"] == "croston_sba") & (table["series_id"].isin(["S000", "S001"]))
    board = _board(leaderboard_tables(table[~gone], spec=SPEC))
    support = {r["model"]: (r["support"], r["full_support"]) for r in board["rows"]}
    assert support["croston_sba"] == (66, False) and support["ses"] == (72, True)
    assert board["tests"]["n_blocks"] == 66 and board["tests"]["dropped_blocks"] == 6


def test_leaderboard_is_invariant_to_row_order():
    table = _table()
    shuffled = table.sample(frac=1.0, random_state=1).reset_index(drop=True)
    a = leaderboard_tables(table, spec=SPEC)
    b = leaderboard_tables(shuffled, spec=SPEC)
    assert a == b


def test_interval_table_coverage_matches_a_direct_count():
    table = _table()
    rows = {r["model"]: r for r in interval_tables(table)[0]["rows"]}
    for m in MODELS:
        part = table[table["model"] == m]
        inside = ((part["actual"] >= part["lo95"]) & (part["actual"] <= part["hi95"])).mean()
        assert rows[m]["coverage95"] == pytest.approx(inside)
        assert rows[m]["n_records"] == len(part)


def test_when_series_have_different_origins_then_friedman_drops_no_block_that_was_never_forecast():
    table = _table()
    late = (table["series_id"] == "S000") & (table["origin"] == table["origin"].min())
    board = _board(leaderboard_tables(table[~late], spec=SPEC))
    assert board["n_blocks_total"] == 71
    assert board["tests"]["n_blocks"] == 71 and board["tests"]["dropped_blocks"] == 0


def test_verdict_crps_is_the_band_kind_for_every_model_even_when_some_give_own_quantiles():
    from tycheon.backtest.scoreset import quantile_column

    table = _table(noise={"naive": 3.0, "snaive_momentum": 1.5, "ses": 0.5, "croston_sba": 1.0})
    levels = (0.1, 0.5, 0.9)
    own = table["model"].isin(["naive", "ses"])
    for q, z in zip(levels, (-1.2816, 0.0, 1.2816), strict=True):
        # own quantiles built to make ses look terrible: if they leaked into the verdict, ses could not beat
        table[quantile_column(q)] = np.where(own, table["point"] + z * 50.0 + 40.0, np.nan)
    table["has_quantiles"] = own
    spec = LeaderboardSpec(**{**SPEC.__dict__, "quantile_levels": levels})
    board = _board(leaderboard_tables(table, spec=spec))
    rows = {r["model"]: r for r in board["rows"]}
    assert board["tests"]["verdict_crps_kind"] == "band_quantiles"
    assert board["tests"]["verdict_crps_levels"] == [0.025, 0.1, 0.5, 0.9, 0.975]
    assert rows["ses"]["verdict_vs_rw"] == "beats"
    # the CRPS leg is the band CRPS scaled by the MASE scale, computed here by hand
    from tycheon.metrics import crps_quantiles
    from tycheon.stats import dm_pooled

    q = np.sort(table[["lo95", "lo80", "point", "hi80", "hi95"]].to_numpy(), axis=1)
    crps = (
        crps_quantiles(
            actual=table["actual"].to_numpy(), quantiles=q, levels=np.array([0.025, 0.1, 0.5, 0.9, 0.975])
        ).values
        / table["scale_mae"].to_numpy()
    )
    wide = table.assign(c=crps).pivot_table(index=["series_id", "origin", "step"], columns="model", values="c")
    ref = dm_pooled(
        wide["ses"].to_numpy(),
        wide["naive"].to_numpy(),
        series=wide.index.get_level_values(0),
        origin=wide.index.get_level_values(1),
        horizon=4,
        stride=4,
        alternative="less",
    )
    assert rows["ses"]["verdict_p_crps"] == pytest.approx(ref.p_value, rel=1e-12)


def test_when_no_row_has_a_band_then_the_verdict_names_the_missing_crps():
    table = _table()
    table[["lo80", "hi80", "lo95", "hi95"]] = np.nan
    table["has_band"] = False
    rows = {r["model"]: r for r in _board(leaderboard_tables(table, spec=SPEC))["rows"]}
    assert rows["ses"]["verdict_vs_rw"] is None and "CRPS DM" in rows["ses"]["verdict_reason"]


def test_verdict_p_values_are_the_two_one_sided_pooled_dm_tests_and_the_rule_is_the_stats_one(boards):
    from tycheon.stats import dm_pooled
    from tycheon.stats.verdict import family_verdicts

    table = _table()
    err = table["point"] - table["actual"]
    # the RMSSE table's point leg: squared error over the RMSSE scale squared
    loss = table.assign(v=err * err / table["scale_rmse"] ** 2)
    se = loss.pivot_table(index=["series_id", "origin", "step"], columns="model", values="v")
    rows = [r for r in _board(boards, metric="rmsse")["rows"] if r["model"] != "naive"]
    for row in rows:
        idx = se.index
        ref = dm_pooled(
            se[row["model"]].to_numpy(),
            se["naive"].to_numpy(),
            series=idx.get_level_values(0),
            origin=idx.get_level_values(1),
            horizon=4,
            stride=4,
            alternative="less",
        )
        assert row["verdict_p_se"] == pytest.approx(ref.p_value, rel=1e-12)
    family = family_verdicts(
        {r["model"]: r["verdict_p_se"] for r in rows},
        {r["model"]: r["verdict_p_crps"] for r in rows},
        alpha=0.05,
        adjust="bh",
    )
    assert {r["model"]: r["verdict_vs_rw"] for r in rows} == {m: v.verdict for m, v in family.items()}
    expected = multipletests([r["verdict_p_se"] for r in rows], method="fdr_bh")[1]
    np.testing.assert_allclose([r["verdict_p_se_adj"] for r in rows], expected, rtol=1e-12)


def test_when_crps_is_a_leaderboard_metric_then_it_ranks_the_models_own_quantiles():
    from tycheon.backtest.scoreset import quantile_column

    table = _table()
    levels = (0.1, 0.5, 0.9)
    for q, z in zip(levels, (-1.2816, 0.0, 1.2816), strict=True):
        table[quantile_column(q)] = table["point"] + z * 2.0
    table["has_quantiles"] = True
    spec = LeaderboardSpec(**{**SPEC.__dict__, "metrics": ("mase", "crps"), "quantile_levels": levels})
    board = _board(leaderboard_tables(table, spec=spec), metric="crps")
    blocks = block_scores(table, metrics=["crps"], quantile_levels=levels, crps_kind="approx_quantiles")
    expected = blocks.groupby("model")["crps"].mean()
    assert {r["model"]: r["mean"] for r in board["rows"]} == pytest.approx(expected.to_dict(), rel=1e-12)
    with pytest.raises(InputError, match="quantile levels"):
        LeaderboardSpec(**{**SPEC.__dict__, "metrics": ("crps",)})


def test_when_a_test_cannot_be_computed_then_its_value_is_null_and_the_reason_is_recorded():
    table = _table(n_series=1, n_origins=2)  # 2 blocks: too few for a DM test or a conservative CD
    spec = LeaderboardSpec(**{**SPEC.__dict__, "min_cell": 2})
    board = _board(leaderboard_tables(table, spec=spec))
    rows = {r["model"]: r for r in board["rows"]}
    assert rows["ses"]["dm_p"] is None and "too few independent blocks" in rows["ses"]["dm_reason"]
    assert rows["snaive_momentum"]["dm_reason"] == "is the production baseline"
    assert rows["ses"]["verdict_vs_rw"] is None and "too few" in rows["ses"]["verdict_reason"]
    assert board["tests"]["conservative_cd"] is None and board["tests"]["conservative_cd_reason"]


def test_when_a_cell_is_below_the_minimum_then_no_winner_no_dm_and_no_verdict_are_named():
    table = _table(n_series=4, n_origins=2)  # 8 blocks, 32 per-step losses: a series cell below 30 blocks
    board = _board(leaderboard_tables(table, spec=SPEC))
    tests = board["tests"]
    assert tests["cell_ok"] is False and tests["cell_count"] == 8 and tests["cell_counts"] == "scored blocks"
    assert board["winner"] is None and "minimum cell of 30" in tests["cell_reason"]
    assert all(r["verdict_vs_rw"] is None and r["dm_p"] is None for r in board["rows"])
    assert [r["rank"] for r in board["rows"]] == sorted(r["rank"] for r in board["rows"])  # still ranked, greyed
    total = table.assign(unit="total")  # an aggregate unit counts per-step losses: 32 >= 30
    tboard = _board(leaderboard_tables(total, spec=SPEC))
    assert tboard["tests"]["cell_ok"] is True and tboard["tests"]["cell_count"] == 32
    assert tboard["winner"] == tboard["rows"][0]["model"]


def test_on_a_mase_table_the_dm_uses_scaled_losses_and_can_disagree_with_the_unscaled_variant():
    """The lumpy/MASE case of issue 14: many small series where the challenger is clearly better in MASE,
    one huge series where it is a little worse in absolute terms. Scaled: it beats the random walk;
    unscaled, the huge series dominates the pooled test and the verdict is not "beats"."""
    rng = np.random.default_rng(7)
    rows = []
    origins = pd.date_range("2020-01-01", periods=6, freq="6MS")
    for s in range(40):
        big = s == 0
        level, scale = (10_000.0, 2_000.0) if big else (10.0, 2.0)
        for o in origins:
            actual = level + rng.normal(0, scale, 6)
            for m in ("naive", "snaive_momentum", "median12"):
                if m == "median12":
                    sd = scale * (1.3 if big else 0.3)
                else:
                    sd = scale
                point = actual + rng.normal(0, sd, 6)
                for k in range(6):
                    rows.append(
                        {
                            "model": m,
                            "unit": "series",
                            "series_id": f"S{s:02d}",
                            "origin": o,
                            "step": k + 1,
                            "target_period": o + pd.DateOffset(months=k),
                            "actual": actual[k],
                            "point": point[k],
                            "available_at": o + pd.DateOffset(months=k + 1),
                            "demand_class": "lumpy",
                            "season_length": 12,
                            "scale_mae": scale,
                            "scale_rmse": scale * 1.2,
                            "weight": 1.0,
                            "lo80": point[k] - 1.3 * sd,
                            "hi80": point[k] + 1.3 * sd,
                            "lo95": point[k] - 2 * sd,
                            "hi95": point[k] + 2 * sd,
                            "has_band": True,
                            "has_quantiles": False,
                            "has_samples": False,
                        }
                    )
    table = pd.DataFrame(rows)
    spec = LeaderboardSpec(metrics=("mase",), baseline="snaive_momentum", random_walk="naive", horizon=6, stride=6)
    board = _board(leaderboard_tables(table, spec=spec), dc="lumpy")
    r = {x["model"]: x for x in board["rows"]}["median12"]
    assert board["rows"][0]["model"] == "median12"
    assert r["verdict_vs_rw"] == "beats"
    assert r["verdict_vs_rw_unscaled"] != "beats"
    assert r["dm_direction"] == "better" and r["dm_unscaled_direction"] != "better"


def test_interval_coverage_is_the_share_of_records_inside_the_band_when_blocks_are_ragged():
    table = _table()
    short = (table["model"] == "ses") & (table["series_id"] < "S012") & (table["step"] > 1)
    table = table[~short]  # half of ses's blocks keep one step: block means and record shares differ
    rows = {r["model"]: r for r in interval_tables(table)[0]["rows"]}
    part = table[table["model"] == "ses"]
    inside = ((part["actual"] >= part["lo80"]) & (part["actual"] <= part["hi80"])).to_numpy()
    assert rows["ses"]["coverage80"] == pytest.approx(inside.mean())
    assert rows["ses"]["n_records"] == len(part)


def test_interval_table_reports_the_point_vs_interval_rank_correlation():
    table = _table()
    t = interval_tables(table)[0]
    rows = {r["model"]: r for r in t["rows"]}
    point = [rows[m]["rank_point"] for m in MODELS]
    interval = [rows[m]["rank_interval"] for m in MODELS]
    ref = stats.spearmanr(point, interval)  # oracle: scipy on the two rank vectors
    assert t["interval_metric"] == "msis95"
    assert t["point_vs_interval_spearman"] == pytest.approx(ref.statistic)
    assert t["point_vs_interval_p"] == pytest.approx(ref.pvalue)
    assert t["max_move"] == max(abs(a - b) for a, b in zip(point, interval, strict=True))


def test_when_no_model_has_a_95_band_then_the_interval_ranking_uses_the_80_band():
    table = _table()
    table[["lo95", "hi95"]] = np.nan
    t = interval_tables(table)[0]
    assert t["interval_metric"] == "msis80"
    assert all(r["rank_interval"] is not None for r in t["rows"])


def test_the_library_verdict_of_one_pair_gives_the_leaderboard_p_values(boards):
    from tycheon.stats import verdict_from_scores

    table = _table()
    for metric in ("mase", "rmsse"):
        row = next(r for r in _board(boards, metric=metric)["rows"] if r["model"] == "ses")
        v = verdict_from_scores(
            table, challenger="ses", baseline="naive", horizon=4, stride=4, metric=metric, crps_kind="band_quantiles"
        )
        assert v.squared_error.p_value == pytest.approx(row["verdict_p_se"], rel=1e-12)
        assert v.crps.p_value == pytest.approx(row["verdict_p_crps"], rel=1e-12)
