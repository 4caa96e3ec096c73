"""Leaderboard tables against independent oracles: scipy's Friedman test, statsmodels' BH adjustment,
plain loops for the counts and for the panel-robust DM test (loss differential averaged over series per
origin by hand, then a DM over the origins with scipy's t on ceil(T/(L+1))-1 degrees of freedom), and
constructed cases for the random-walk verdict, the minimum cell, the time-point floor and support flags."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from tycheon.analysis.cell import MIN_TIME_POINTS, time_check
from tycheon.analysis.leaderboard import LeaderboardSpec, interval_tables, leaderboard_tables
from tycheon.errors import InputError
from tycheon.metrics.aggregate import block_scores

MODELS = ("naive", "snaive_momentum", "ses", "croston_sba")
CLASSES = ("smooth", "erratic", "intermittent", "lumpy")
N_SERIES, N_ORIGINS = 24, 8  # 8 origins: above the fewest a test over time runs on (cell.MIN_TIME_POINTS = 6)
SPEC = LeaderboardSpec(
    metrics=("mase", "rmsse"), baseline="snaive_momentum", random_walk="naive", horizon=4, stride=4, alpha=0.05, seed=0
)
BAND = ["lo95", "lo80", "point", "hi80", "hi95"]
BAND_LEVELS = np.array([0.025, 0.1, 0.5, 0.9, 0.975])


@lru_cache(maxsize=16)
def _built(seed: int, n_series: int, n_origins: int, h: int, noise: tuple[tuple[str, float], ...], unit: str):
    rng = np.random.default_rng(seed)
    origins = pd.date_range("2022-01-01", periods=n_origins, freq="4MS")
    cols: dict[str, list] = {k: [] for k in ("model", "series_id", "origin", "step", "target_period", "actual")}
    cols.update(point=[], available_at=[], demand_class=[], sd=[], scale_mae=[], scale_rmse=[])
    target = {(o, k): o + pd.DateOffset(months=k) for o in origins for k in range(h + 1)}
    for s in range(n_series):
        level = rng.uniform(10, 50)
        for o in origins:
            actual = level + rng.normal(0, 2, h)
            for m, sd in noise:
                point = actual + rng.normal(0, sd, h)
                for k in range(h):
                    cols["model"].append(m)
                    cols["series_id"].append("total" if unit == "total" else f"S{s:03d}")
                    cols["origin"].append(o)
                    cols["step"].append(k + 1)
                    cols["target_period"].append(target[(o, k)])
                    cols["available_at"].append(target[(o, k + 1)])
                    cols["actual"].append(actual[k])
                    cols["point"].append(point[k])
                    cols["demand_class"].append(CLASSES[s % 4])
                    cols["sd"].append(sd)
                    # scales differ by series, and the two differently: a test on the wrong scale is seen
                    cols["scale_mae"].append(1.0 + 0.5 * (s % 5))
                    cols["scale_rmse"].append(1.5 + 0.75 * (s % 3))
    t = pd.DataFrame(cols)
    sd = t.pop("sd")
    t.insert(1, "unit", unit)
    t = t.assign(season_length=12, weight=1.0)
    t = t.assign(
        lo80=t["point"] - 2.5 * sd, hi80=t["point"] + 2.5 * sd, lo95=t["point"] - 4 * sd, hi95=t["point"] + 4 * sd
    )
    return t.assign(has_band=True, has_quantiles=False, has_samples=False)


def _table(
    seed: int = 0,
    n_series: int = N_SERIES,
    n_origins: int = N_ORIGINS,
    h: int = 4,
    noise: dict[str, float] | None = None,
    unit: str = "series",
) -> pd.DataFrame:
    """A score-set table with known structure: model m's point is the truth plus N(0, noise[m]); bands of
    +-2.5 sd (80%) and +-4 sd (95%); MASE and RMSSE scales that vary by series, each its own way.
    ``unit="total"`` makes one aggregate series named ``total`` (use ``n_series=1``). Built once per
    argument set; each call gets its own copy."""
    noise = noise or {"naive": 2.0, "snaive_momentum": 1.5, "ses": 1.0, "croston_sba": 3.0}
    return _built(seed, n_series, n_origins, h, tuple(noise.items()), unit).copy()


def _board(boards, *, dc="all", metric="mase", unit="series"):
    return next(b for b in boards if b["unit"] == unit and b["demand_class"] == dc and b["metric"] == metric)


def _panel_dm(table, loss, a, b, *, horizon, stride, alternative):
    """dm_panel by hand: the per-step differential ``loss[a] - loss[b]`` on the (series, origin, step) cells
    both models have, averaged over the cells of each origin with a plain loop, the origin averages in time
    order tested by ``diebold_mariano`` (its HLN statistic) and referred to scipy's t with
    ceil(T/(L+1)) - 1 degrees of freedom. Returns (statistic, p-value)."""
    from tycheon.stats.dm import diebold_mariano

    wide = table.assign(v=np.asarray(loss)).pivot_table(
        index=["series_id", "origin", "step"], columns="model", values="v"
    )
    pair = wide[[a, b]].dropna()
    sums: dict = {}
    counts: dict = {}
    for (_, o, _), (la, lb) in zip(pair.index, pair.to_numpy(), strict=True):
        sums[o] = sums.get(o, 0.0) + (la - lb)
        counts[o] = counts.get(o, 0) + 1
    avg = np.array([sums[o] / counts[o] for o in sorted(sums)])
    stat = diebold_mariano(avg, np.zeros_like(avg), horizon=horizon, stride=stride, alternative=alternative).statistic
    lags = math.ceil(horizon / stride) - 1
    df = math.ceil(len(avg) / (lags + 1)) - 1
    p = {"less": stats.t.cdf(stat, df), "greater": stats.t.sf(stat, df), "two-sided": 2 * stats.t.sf(abs(stat), df)}
    return stat, float(p[alternative])


def _pooled_dm(table, loss, a, b, *, horizon, stride, alternative):
    """dm_pooled on the (series, origin, step) cells both models have (the series-independent variant)."""
    from tycheon.stats import dm_pooled

    wide = table.assign(v=np.asarray(loss)).pivot_table(
        index=["series_id", "origin", "step"], columns="model", values="v"
    )
    pair = wide[[a, b]].dropna()
    return dm_pooled(
        pair[a].to_numpy(),
        pair[b].to_numpy(),
        series=pair.index.get_level_values(0),
        origin=pair.index.get_level_values(1),
        horizon=horizon,
        stride=stride,
        alternative=alternative,
    )


def _band_crps(table) -> np.ndarray:
    """CRPS of each row's conformal bands read as quantiles at 0.025, 0.1, 0.5, 0.9, 0.975 (the verdict's kind)."""
    from tycheon.metrics import crps_quantiles

    q = np.sort(table[BAND].to_numpy(), axis=1)
    return crps_quantiles(actual=table["actual"].to_numpy(), quantiles=q, levels=BAND_LEVELS).values


def _verdict_legs(table):
    """The verdict's two per-step losses, computed here: squared error / RMSSE scale squared, and the band
    CRPS / MASE scale."""
    err = table["point"] - table["actual"]
    return (err * err / table["scale_rmse"] ** 2).to_numpy(), _band_crps(table) / table["scale_mae"].to_numpy()


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
    assert len(wide) == N_SERIES * N_ORIGINS  # every (series, origin) is a block of every model
    assert board["tests"]["n_blocks"] == len(wide) and board["tests"]["dropped_blocks"] == 0


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


@pytest.mark.parametrize("metric", ["mase", "rmsse"])
def test_dm_column_is_the_panel_test_on_the_tables_loss_against_a_plain_loop(boards, metric):
    """Two-sided, against the production baseline, on the loss the table ranks: |e| / MASE scale on a MASE
    table, e^2 / RMSSE scale^2 on an RMSSE table; the unscaled variant on |e|; the pooled variant by
    dm_pooled. Each p-value is BH-adjusted within its family (statsmodels)."""
    table = _table()
    err = (table["point"] - table["actual"]).to_numpy()
    scale = table["scale_mae"] if metric == "mase" else table["scale_rmse"] ** 2
    loss = (np.abs(err) if metric == "mase" else err * err) / scale.to_numpy()
    board = _board(boards, metric=metric)
    rows = [r for r in board["rows"] if not r["is_baseline"]]
    kw = {"horizon": 4, "stride": 4, "alternative": "two-sided"}
    for r in rows:
        stat, p = _panel_dm(table, loss, r["model"], "snaive_momentum", **kw)
        assert r["dm_stat"] == pytest.approx(stat, rel=1e-9) and r["dm_p"] == pytest.approx(p, rel=1e-9, abs=1e-300)
        _, p_unscaled = _panel_dm(table, np.abs(err), r["model"], "snaive_momentum", **kw)
        assert r["dm_unscaled_p"] == pytest.approx(p_unscaled, rel=1e-9, abs=1e-300)
        pooled = _pooled_dm(table, loss, r["model"], "snaive_momentum", **kw)
        assert r["dm_pooled_p"] == pytest.approx(pooled.p_value, rel=1e-9, abs=1e-300)
        assert r["dm_reason"] is None
    for col in ("dm_p", "dm_unscaled_p", "dm_pooled_p"):
        expected = multipletests([r[col] for r in rows], method="fdr_bh")[1]
        np.testing.assert_allclose([r[f"{col}_bh"] for r in rows], expected, rtol=1e-12)
    for r in rows:
        want = "none" if r["dm_p_bh"] >= SPEC.alpha else ("better" if r["dm_stat"] < 0 else "worse")
        assert r["dm_direction"] == want
    # ses is built with less error than the baseline, croston_sba with more: both directions are seen
    direction = {r["model"]: r["dm_direction"] for r in rows}
    assert direction["ses"] == "better" and direction["croston_sba"] == "worse"
    assert board["tests"]["n_time_points"] == N_ORIGINS and board["tests"]["time_reason"] is None
    assert board["tests"]["min_time_points"] == MIN_TIME_POINTS == 6


def test_when_origins_overlap_then_the_dm_column_refers_to_t_on_non_overlapping_origin_groups():
    """stride 2 < horizon 4: L = 1 overlap lag, T = 9 origins, so df = ceil(9/2) - 1 = 4, not T - 1 = 8."""
    from tycheon.stats.dm import diebold_mariano

    spec = LeaderboardSpec(**{**SPEC.__dict__, "stride": 2})
    table = _table(n_series=8, n_origins=9)
    board = _board(leaderboard_tables(table, spec=spec))
    loss = np.abs(table["point"] - table["actual"]).to_numpy() / table["scale_mae"].to_numpy()
    for r in board["rows"]:
        if r["is_baseline"]:
            continue
        stat, p = _panel_dm(table, loss, r["model"], "snaive_momentum", horizon=4, stride=2, alternative="two-sided")
        assert r["dm_stat"] == pytest.approx(stat, rel=1e-9) and r["dm_p"] == pytest.approx(p, rel=1e-9, abs=1e-300)
    # the df rule matters here: t_{T-1} (diebold_mariano's own p on the origin averages) is another number
    ses = next(r for r in board["rows"] if r["model"] == "ses")
    wide = table.assign(v=loss).pivot_table(index="origin", columns="model", values="v")
    naive_t = diebold_mariano(wide["ses"], wide["snaive_momentum"], horizon=4, stride=2).p_value
    assert ses["dm_p"] != pytest.approx(naive_t, rel=1e-3)
    assert board["tests"]["dm_overlap_lag"] == 1


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
    parts = [_board(boards, dc=c)["n_blocks_total"] for c in CLASSES]
    assert sum(parts) == total == N_SERIES * N_ORIGINS


def test_when_a_model_misses_blocks_then_it_is_flagged_and_friedman_drops_them():
    table = _table()
    gone = (table["model"] == "croston_sba") & (table["series_id"].isin(["S000", "S001"]))
    board = _board(leaderboard_tables(table[~gone], spec=SPEC))
    kept = table[~gone]
    blocks = {m: len(kept[kept["model"] == m][["series_id", "origin"]].drop_duplicates()) for m in MODELS}
    lost = len(table[gone][["series_id", "origin"]].drop_duplicates())  # plain counts of the rows kept / dropped
    support = {r["model"]: (r["support"], r["full_support"]) for r in board["rows"]}
    assert support["croston_sba"] == (blocks["croston_sba"], False) and support["ses"] == (blocks["ses"], True)
    assert blocks["croston_sba"] == blocks["ses"] - lost and lost == 2 * N_ORIGINS
    assert board["tests"]["n_blocks"] == blocks["croston_sba"] and board["tests"]["dropped_blocks"] == lost


def test_leaderboard_is_invariant_to_row_order():
    table = _table()
    shuffled = table.sample(frac=1.0, random_state=1).reset_index(drop=True)
    a = leaderboard_tables(table, spec=SPEC)
    b = leaderboard_tables(shuffled, spec=SPEC)
    assert a == b
    assert _board(a)["rows"][0]["dm_p"] is not None  # the tests ran: the equality is not of empty columns


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
    expected = len(table[~late][["series_id", "origin"]].drop_duplicates())
    assert expected == N_SERIES * N_ORIGINS - 1
    assert board["n_blocks_total"] == expected
    assert board["tests"]["n_blocks"] == expected and board["tests"]["dropped_blocks"] == 0


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
    # the CRPS leg is the band CRPS scaled by the MASE scale, computed here by hand, panel-robust test
    _, crps = _verdict_legs(table)
    _, p = _panel_dm(table, crps, "ses", "naive", horizon=4, stride=4, alternative="less")
    assert rows["ses"]["verdict_p_crps"] == pytest.approx(p, rel=1e-9, abs=1e-300)
    pooled = _pooled_dm(table, crps, "ses", "naive", horizon=4, stride=4, alternative="less")
    assert rows["ses"]["verdict_p_crps_pooled"] == pytest.approx(pooled.p_value, rel=1e-9, abs=1e-300)


def test_when_no_row_has_a_band_then_the_verdict_names_the_missing_crps():
    table = _table()
    table[["lo80", "hi80", "lo95", "hi95"]] = np.nan
    table["has_band"] = False
    rows = {r["model"]: r for r in _board(leaderboard_tables(table, spec=SPEC))["rows"]}
    assert rows["ses"]["verdict_vs_rw"] is None and "CRPS DM" in rows["ses"]["verdict_reason"]
    assert "point-loss DM" not in rows["ses"]["verdict_reason"]  # the point leg itself was computed
    assert rows["ses"]["verdict_p_se"] is not None


def test_verdict_p_values_are_the_two_one_sided_panel_dm_tests_and_the_rule_is_the_stats_one(boards):
    from tycheon.stats.verdict import family_verdicts

    table = _table()
    se, crps = _verdict_legs(table)  # squared error / RMSSE scale^2 and band CRPS / MASE scale
    rows = [r for r in _board(boards, metric="mase")["rows"] if r["model"] != "naive"]
    for row in rows:
        _, p_se = _panel_dm(table, se, row["model"], "naive", horizon=4, stride=4, alternative="less")
        _, p_crps = _panel_dm(table, crps, row["model"], "naive", horizon=4, stride=4, alternative="less")
        assert row["verdict_p_se"] == pytest.approx(p_se, rel=1e-9, abs=1e-300)
        assert row["verdict_p_crps"] == pytest.approx(p_crps, rel=1e-9, abs=1e-300)
    family = family_verdicts(
        {r["model"]: r["verdict_p_se"] for r in rows},
        {r["model"]: r["verdict_p_crps"] for r in rows},
        alpha=0.05,
        adjust="bh",
    )
    assert {r["model"]: r["verdict_vs_rw"] for r in rows} == {m: v.verdict for m, v in family.items()}
    for leg in ("se", "crps"):
        expected = multipletests([r[f"verdict_p_{leg}"] for r in rows], method="fdr_bh")[1]
        np.testing.assert_allclose([r[f"verdict_p_{leg}_adj"] for r in rows], expected, rtol=1e-12)


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
    table = _table(n_series=1, n_origins=2)  # 2 blocks at 2 origins: too few for any DM test or a conservative CD
    spec = LeaderboardSpec(**{**SPEC.__dict__, "min_cell": 2})
    board = _board(leaderboard_tables(table, spec=spec))
    rows = {r["model"]: r for r in board["rows"]}
    reason = time_check(2, horizon=4, stride=4)
    assert reason is not None and "2 scored origin(s)" in reason
    assert board["tests"]["cell_ok"] is True  # the minimum cell is met: the time points are what is missing
    assert rows["ses"]["dm_p"] is None and rows["ses"]["dm_reason"] == reason
    assert rows["snaive_momentum"]["dm_reason"] == "is the production baseline"
    assert rows["ses"]["verdict_vs_rw"] is None
    assert rows["ses"]["verdict_reason"] == f"point-loss DM: {reason}; CRPS DM: {reason}"
    # the pooled variant has no time floor but refuses 2 blocks itself; its reason is recorded too
    assert rows["ses"]["verdict_vs_rw_pooled"] is None and rows["ses"]["dm_pooled_p"] is None
    assert "too few independent blocks" in rows["ses"]["verdict_reason_pooled"]
    assert board["tests"]["conservative_cd"] is None and board["tests"]["conservative_cd_reason"]


def test_when_a_cell_is_below_the_minimum_then_no_winner_no_dm_and_no_verdict_are_named():
    table = _table(n_series=3, n_origins=N_ORIGINS)  # 24 blocks: below 30, with enough origins for the tests
    n_blocks = len(table[["series_id", "origin"]].drop_duplicates())
    board = _board(leaderboard_tables(table, spec=SPEC))
    tests = board["tests"]
    assert tests["cell_ok"] is False and tests["cell_count"] == n_blocks == 3 * N_ORIGINS
    assert tests["cell_counts"].startswith("scored blocks") and tests["min_cell"] == 30
    assert tests["verdict_cell_count"] == n_blocks and tests["time_reason"] is None
    assert board["winner"] is None and "minimum cell of 30" in tests["cell_reason"]
    for r in board["rows"]:
        assert r["verdict_vs_rw"] is None and r["dm_p"] is None and r["dm_pooled_p"] is None
        assert r["verdict_vs_rw_pooled"] is None and r["verdict_vs_rw_unscaled"] is None
        if r["model"] != "snaive_momentum":
            assert r["dm_reason"] == tests["cell_reason"]
        assert r["verdict_reason"] == tests["cell_reason"]
    assert [r["rank"] for r in board["rows"]] == sorted(r["rank"] for r in board["rows"])  # still ranked, greyed


def test_the_library_verdict_of_one_pair_gives_the_leaderboard_p_values_on_every_metric_table(boards):
    """One verdict per (unit, class): point leg squared error / RMSSE scale^2 whatever the table's metric."""
    from tycheon.stats import verdict_from_scores

    table = _table()
    kw = {"challenger": "ses", "baseline": "naive", "horizon": 4, "stride": 4, "crps_kind": "band_quantiles"}
    v = verdict_from_scores(table, **kw, metric="rmsse", inference="panel")
    v_mase = verdict_from_scores(table, **kw, metric="mase", inference="panel")
    for metric in ("mase", "rmsse"):
        board = _board(boards, metric=metric)
        row = next(r for r in board["rows"] if r["model"] == "ses")
        assert v.squared_error.p_value == pytest.approx(row["verdict_p_se"], rel=1e-12)
        assert v.crps.p_value == pytest.approx(row["verdict_p_crps"], rel=1e-12)
        assert board["tests"]["verdict_point_loss"] == "squared error / RMSSE scale squared"
    # the MASE table's verdict is not a test of |e| / MASE scale
    assert v_mase.squared_error.p_value != pytest.approx(v.squared_error.p_value, rel=1e-6)


def test_a_models_verdict_is_the_same_on_every_metric_table_of_its_cell(boards):
    for dc in ("all", *CLASSES):
        tables = [_board(boards, dc=dc, metric=m) for m in SPEC.metrics]
        fields = [
            {r["model"]: {k: v for k, v in r.items() if k.startswith("verdict_")} for r in t["rows"]} for t in tables
        ]
        assert all(f == fields[0] for f in fields[1:])
        assert fields[0]["ses"]["verdict_vs_rw"] is not None  # the verdicts compared were given
        assert {k for k in fields[0]["ses"] if k.startswith("verdict_vs_rw")} == {
            "verdict_vs_rw",
            "verdict_vs_rw_pooled",
            "verdict_vs_rw_unscaled",
        }
        cell_blocks = N_SERIES * N_ORIGINS if dc == "all" else (N_SERIES // 4) * N_ORIGINS
        assert all(t["tests"]["verdict_cell_count"] == cell_blocks for t in tables)


def test_the_pooled_and_unscaled_verdicts_are_the_library_verdicts_of_those_variants(boards):
    from tycheon.stats import verdict_from_scores
    from tycheon.stats.verdict import family_verdicts

    table = _table()
    kw = {"baseline": "naive", "horizon": 4, "stride": 4, "crps_kind": "band_quantiles"}
    rows = [r for r in _board(boards, metric="rmsse")["rows"] if r["model"] != "naive"]
    for r in rows:
        pooled = verdict_from_scores(table, challenger=r["model"], **kw, metric="rmsse", inference="pooled")
        assert r["verdict_p_se_pooled"] == pytest.approx(pooled.squared_error.p_value, rel=1e-12)
        assert r["verdict_p_crps_pooled"] == pytest.approx(pooled.crps.p_value, rel=1e-12)
        unscaled = verdict_from_scores(table, challenger=r["model"], **kw, metric=None, inference="panel")
        assert r["verdict_p_se_unscaled"] == pytest.approx(unscaled.squared_error.p_value, rel=1e-12)
        assert r["verdict_p_crps_unscaled"] == pytest.approx(unscaled.crps.p_value, rel=1e-12)
        headline = verdict_from_scores(table, challenger=r["model"], **kw, metric="rmsse", inference="panel")
        assert r["verdict_p_se_pooled"] != pytest.approx(headline.squared_error.p_value, rel=1e-6)  # another test
    for x in ("_pooled", "_unscaled"):
        family = family_verdicts(
            {r["model"]: r[f"verdict_p_se{x}"] for r in rows}, {r["model"]: r[f"verdict_p_crps{x}"] for r in rows}
        )
        assert {r["model"]: r[f"verdict_vs_rw{x}"] for r in rows} == {m: f.verdict for m, f in family.items()}
        assert {r["model"]: r[f"verdict_p_se_adj{x}"] for r in rows} == pytest.approx(
            {m: f.p_se_adj for m, f in family.items()}, rel=1e-12
        )
    tests = _board(boards)["tests"]
    assert tests["inference"].startswith("panel-robust") and tests["inference_pooled"].startswith("series-independent")


def test_with_too_few_origins_the_verdict_and_dm_are_null_but_the_winner_is_named():
    table = _table(n_origins=4)  # 24 series x 4 origins = 96 blocks: the cell is met, the time points are not
    boards = leaderboard_tables(table, spec=SPEC)
    reason = time_check(4, horizon=4, stride=4)
    assert reason is not None and "4 scored origin(s)" in reason
    for metric in SPEC.metrics:
        board = _board(boards, metric=metric)
        tests = board["tests"]
        assert tests["cell_ok"] is True and tests["cell_count"] == N_SERIES * 4
        assert tests["n_time_points"] == 4 and tests["time_reason"] == reason
        assert board["winner"] is not None and board["winner"] == board["rows"][0]["model"]
        assert tests["friedman_p"] is not None  # the ranking rests on blocks, not on time points
        for r in board["rows"]:
            assert r["verdict_vs_rw"] is None and r["verdict_p_se"] is None and r["verdict_p_crps"] is None
            assert r["verdict_vs_rw_unscaled"] is None
            if r["model"] == "naive":
                assert r["verdict_reason"] == "is the random walk"
            else:
                assert r["verdict_reason"] == f"point-loss DM: {reason}; CRPS DM: {reason}"
            assert r["dm_p"] is None and r["dm_p_bh"] is None and r["dm_stat"] is None
            assert r["dm_unscaled_p"] is None
            if r["model"] != "snaive_momentum":
                assert r["dm_reason"] == reason


def test_the_minimum_cell_counts_blocks_for_an_aggregate_unit_too():
    """An aggregate unit is one series: its blocks are its origins, not its per-step losses."""
    below = _table(n_series=1, n_origins=29, unit="total")  # 29 blocks, 116 per-step losses
    at = _table(n_series=1, n_origins=30, unit="total")  # 30 blocks
    for table, ok in ((below, False), (at, True)):
        n_blocks = len(table[["unit", "series_id", "origin"]].drop_duplicates())
        assert len(table) // len(MODELS) >= 30  # the per-step losses would pass the minimum either way
        board = _board(leaderboard_tables(table, spec=SPEC), unit="total")
        tests = board["tests"]
        assert tests["cell_ok"] is ok and tests["cell_count"] == n_blocks and tests["verdict_cell_count"] == n_blocks
        ses = next(r for r in board["rows"] if r["model"] == "ses")
        if ok:
            assert board["winner"] == board["rows"][0]["model"] and ses["verdict_vs_rw"] is not None
            assert ses["dm_p"] is not None
        else:
            assert board["winner"] is None and ses["verdict_vs_rw"] is None and ses["dm_p"] is None
            assert "minimum cell of 30" in tests["cell_reason"] and ses["verdict_reason"] == tests["cell_reason"]


def test_on_a_mase_table_the_dm_uses_scaled_losses_and_can_disagree_with_the_unscaled_variant():
    """The lumpy/MASE case of issue 14: many small series where the challenger is clearly better in MASE,
    one huge series where it is a little worse in absolute terms. Scaled: it beats the random walk;
    unscaled, the huge series dominates each origin's average and the verdict is not "beats"."""
    rng = np.random.default_rng(7)
    rows = []
    origins = pd.date_range("2020-01-01", periods=N_ORIGINS, freq="6MS")
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
    assert r["verdict_vs_rw_unscaled"] is not None and r["verdict_vs_rw_unscaled"] != "beats"
    assert r["dm_direction"] == "better"
    assert r["dm_unscaled_p"] is not None and r["dm_unscaled_direction"] != "better"


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
    assert t["interval_metric"] == "msis95" and t["cell_ok"] is True
    assert t["point_vs_interval_spearman"] == pytest.approx(ref.statistic)
    assert t["point_vs_interval_p"] == pytest.approx(ref.pvalue)
    assert t["max_move"] == max(abs(a - b) for a, b in zip(point, interval, strict=True))


def test_when_no_model_has_a_95_band_then_the_interval_ranking_uses_the_80_band():
    table = _table()
    table[["lo95", "hi95"]] = np.nan
    t = interval_tables(table)[0]
    assert t["interval_metric"] == "msis80"
    assert all(r["rank_interval"] is not None for r in t["rows"])


def test_interval_tables_below_the_minimum_cell_name_no_ranking():
    table = _table(n_series=3)  # 3 series x 8 origins = 24 blocks < 30
    n_blocks = len(table[["series_id", "origin"]].drop_duplicates())
    for t in interval_tables(table):
        assert t["cell_ok"] is False and "minimum cell of 30" in t["cell_reason"]
        assert all(r["rank_point"] is None and r["rank_interval"] is None for r in t["rows"])
        assert t["point_vs_interval_spearman"] is None and t["point_vs_interval_p"] is None and t["max_move"] is None
        assert t["interval_metric"] == "msis95"
    t = interval_tables(table)[0]
    assert t["demand_class"] == "all" and t["cell_count"] == n_blocks
    rows = {r["model"]: r for r in t["rows"]}
    for m in MODELS:  # coverage is still shown
        part = table[table["model"] == m]
        assert rows[m]["coverage95"] == pytest.approx(
            ((part["actual"] >= part["lo95"]) & (part["actual"] <= part["hi95"])).mean()
        )
    # the same cell at a minimum it meets ranks the models
    met = interval_tables(table, min_cell=n_blocks)[0]
    assert met["cell_ok"] is True and all(r["rank_point"] is not None for r in met["rows"])
    assert met["point_vs_interval_spearman"] is not None
