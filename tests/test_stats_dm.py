"""Diebold–Mariano: R forecast::dm.test transcribed as a plain-loop oracle, pooled and cross-sectional
variants against loops, antisymmetry, Bartlett fallback and size by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from tycheon.errors import InputError
from tycheon.stats import diebold_mariano, dm_cross_sectional, dm_pooled, overlap_lags, pooled_layout
from tycheon.stats.dm import _dm_rows


def r_dm_test(e1, e2, h, power=2, alternative="two.sided"):
    """Line-by-line transcription of R forecast::dm.test (forecast 8.x, varestimator = "acf"):

        d <- c(abs(e1))^power - c(abs(e2))^power
        d.cov <- acf(d, na.action = na.omit, lag.max = h - 1, type = "covariance", plot = FALSE)$acf[, , 1]
        d.var <- sum(c(d.cov[1], 2 * d.cov[-1])) / length(d)
        STATISTIC <- mean(d, na.rm = TRUE) / sqrt(d.var)
        k <- ((n + 1 - 2 * h + (h / n) * (h - 1)) / n)^(1 / 2)
        STATISTIC <- STATISTIC * k
        PVAL <- 2 * pt(-abs(STATISTIC), df = n - 1)   # "less": pt(STATISTIC, n - 1)

    R's acf(type = "covariance") demeans and divides by n.
    """
    d = [abs(a) ** power - abs(b) ** power for a, b in zip(e1, e2, strict=False)]
    n = len(d)
    mean = sum(d) / n
    cov = []
    for k in range(h):
        acc = 0.0
        for t in range(k, n):
            acc += (d[t] - mean) * (d[t - k] - mean)
        cov.append(acc / n)
    var = (cov[0] + 2 * sum(cov[1:])) / n
    stat = mean / math.sqrt(var) * math.sqrt((n + 1 - 2 * h + (h / n) * (h - 1)) / n)
    if alternative == "two.sided":
        return stat, 2 * stats.t.cdf(-abs(stat), n - 1)
    return stat, stats.t.cdf(stat, n - 1)


@pytest.mark.parametrize("h", [1, 2, 3, 5])
def test_when_stride_is_one_then_dm_equals_the_r_forecast_dm_test_transcription(h):
    rng = np.random.default_rng(h)
    e1 = rng.normal(0, 1.0, 60)
    e2 = rng.normal(0, 1.3, 60)
    res = diebold_mariano(e1**2, e2**2, horizon=h)
    stat, p = r_dm_test(e1, e2, h)
    assert res.variance_method == "rectangular" and res.lag == h - 1
    assert res.statistic == pytest.approx(stat, rel=1e-10)
    assert res.p_value == pytest.approx(p, rel=1e-10)
    less = diebold_mariano(e1**2, e2**2, horizon=h, alternative="less")
    assert less.p_value == pytest.approx(r_dm_test(e1, e2, h, alternative="less")[1], rel=1e-10)
    # power = 1 (absolute error), as the paper's DM on per-step absolute errors
    res1 = diebold_mariano(np.abs(e1), np.abs(e2), horizon=h)
    assert res1.statistic == pytest.approx(r_dm_test(e1, e2, h, power=1)[0], rel=1e-10)


def test_when_stride_exceeds_one_then_lags_and_hln_use_ceil_h_over_stride():
    assert overlap_lags(6, 1) == 5 and overlap_lags(6, 3) == 1 and overlap_lags(6, 4) == 1 and overlap_lags(6, 6) == 0
    rng = np.random.default_rng(9)
    e1, e2 = rng.normal(size=40), rng.normal(size=40)
    # documented convention: with stride s the test equals R's with h' = ceil(h/s)
    res = diebold_mariano(e1**2, e2**2, horizon=6, stride=3)
    assert res.statistic == pytest.approx(r_dm_test(e1, e2, 2)[0], rel=1e-10)


def test_when_the_rectangular_variance_is_negative_then_bartlett_is_used():
    d = np.tile([1.0, -1.0], 20) + 0.1 * np.arange(40) / 40  # strong negative lag-1 autocovariance
    res = diebold_mariano(d, np.zeros_like(d), horizon=2, hln=False)
    assert res.variance_method == "bartlett"
    x = d - d.mean()
    g0, g1 = x @ x / 40, x[1:] @ x[:-1] / 40
    assert g0 + 2 * g1 <= 0
    assert res.statistic == pytest.approx(d.mean() / math.sqrt((g0 + 2 * 0.5 * g1) / 40))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**16), h=st.integers(1, 4), alt=st.sampled_from(["two-sided", "less", "greater"]))
def test_property_dm_is_antisymmetric(seed, h, alt):
    rng = np.random.default_rng(seed)
    a, b = rng.gamma(2.0, size=30), rng.gamma(2.0, size=30)
    ab = diebold_mariano(a, b, horizon=h, alternative=alt)
    flipped = {"two-sided": "two-sided", "less": "greater", "greater": "less"}[alt]
    ba = diebold_mariano(b, a, horizon=h, alternative=flipped)
    assert ab.statistic == pytest.approx(-ba.statistic, rel=1e-9, abs=1e-12)
    assert ab.p_value == pytest.approx(ba.p_value, rel=1e-9, abs=1e-12)


def _ma_differentials(rng: np.random.Generator, reps: int, n_periods: int, h: int) -> np.ndarray:
    """Null-true differentials of h-step forecasts at consecutive origins: MA(h-1), mean zero."""
    eps = rng.normal(size=(reps, n_periods + h - 1))
    return sum(eps[:, k : k + n_periods] for k in range(h))  # [rep, origin]


def _size(d: np.ndarray, lags: int) -> float:
    stat, _ = _dm_rows(d, lags, hln=True)
    return float(np.mean(2 * stats.t.sf(np.abs(stat), d.shape[1] - 1) < 0.05))


def test_when_origins_overlap_then_the_corrected_test_holds_size_and_ignoring_overlap_does_not():
    rng = np.random.default_rng(20261129)
    d = _ma_differentials(rng, 4000, 600, 6)
    # the vectorised kernel is what the public function runs
    one = diebold_mariano(d[0], np.zeros(600), horizon=6)
    assert one.statistic == pytest.approx(_dm_rows(d[:1], 5, True)[0][0])
    corrected, ignored = _size(d, overlap_lags(6, 1)), _size(d, 0)
    assert 0.04 <= corrected <= 0.06, corrected
    assert ignored > 0.15, ignored
    d3 = d[:, ::3]  # stride 3: origins three periods apart, still overlapping at h = 6
    corrected3, ignored3 = _size(d3, overlap_lags(6, 3)), _size(d3, 0)
    assert 0.04 <= corrected3 <= 0.06, corrected3
    assert ignored3 > 0.15, ignored3


def _pooled_loop_variance(d, series, origin, lags):
    """Plain double loop over pairs of losses of one series whose origins are <= lags apart."""
    mean = sum(d) / len(d)
    order = {}
    for s in sorted(set(series)):
        origins = sorted({o for ss, o in zip(series, origin, strict=False) if ss == s})
        order.update({(s, o): r for r, o in enumerate(origins)})
    v = 0.0
    for i in range(len(d)):
        for j in range(len(d)):
            if series[i] == series[j] and abs(order[series[i], origin[i]] - order[series[j], origin[j]]) <= lags:
                v += (d[i] - mean) * (d[j] - mean)
    return mean, v


def test_when_losses_are_pooled_then_the_variance_matches_a_plain_pair_loop():
    rng = np.random.default_rng(11)
    series = np.repeat(["a", "b", "c"], 12)
    origin = np.tile(np.repeat([3, 1, 7, 5], 3), 3)  # unsorted origins, 3 steps each
    a, b = rng.gamma(2.0, size=36), rng.gamma(2.0, size=36)
    res = dm_pooled(a, b, series=series, origin=origin, horizon=3, stride=2, hln=False)
    mean, v = _pooled_loop_variance(list(a - b), list(series), list(origin), lags=1)
    assert res.lag == 1 and res.n == 36
    assert res.statistic == pytest.approx(mean / math.sqrt(v / 36**2), rel=1e-10)
    # one series with one loss per origin is the plain DM test
    single = dm_pooled(a[:12], b[:12], series=np.zeros(12), origin=np.arange(12), horizon=3)
    assert single.statistic == pytest.approx(diebold_mariano(a[:12], b[:12], horizon=3).statistic, rel=1e-12)


def test_when_pooled_series_have_overlapping_origins_then_size_is_held():
    rng = np.random.default_rng(7)
    n_series, n_origins, horizon, reps = 20, 80, 3, 1000
    s = np.repeat(np.arange(n_series), n_origins * horizon)
    o = np.tile(np.repeat(np.arange(n_origins), horizon), n_series)
    step = np.tile(np.arange(1, horizon + 1), n_series * n_origins)
    layout = pooled_layout(s, o)
    independent = pooled_layout(np.arange(s.size), np.zeros(s.size))  # the error: every loss on its own
    rejections = np.zeros(2)
    for _ in range(reps):
        walk = np.cumsum(np.c_[np.zeros(n_series), rng.normal(size=(n_series, n_origins + horizon))], axis=1)
        d = (walk[s, o + step] - walk[s, o]) / np.sqrt(step)  # null-true, nested over steps, overlapping
        zero = np.zeros_like(d)
        rejections[0] += dm_pooled(d, zero, layout=layout, horizon=horizon).p_value < 0.05
        rejections[1] += dm_pooled(d, zero, layout=independent, horizon=1).p_value < 0.05
    size = rejections / reps
    assert 0.03 <= size[0] <= 0.07, size  # 1000 replications: +-2 s.e. around 5%
    assert size[1] > 0.15, size


def test_when_series_share_period_shocks_then_the_cross_sectional_average_holds_size():
    rng = np.random.default_rng(3)
    n_series, n_periods, reps = 30, 60, 400
    series = np.repeat(np.arange(n_series), n_periods)
    period = np.tile(np.arange(n_periods), n_series)
    layout = pooled_layout(series, period)
    rej = np.zeros(2)
    for _ in range(reps):
        common = rng.normal(size=n_periods)  # one shock hits every series in a period
        d = common[period] + 0.5 * rng.normal(size=series.size)
        rej[0] += dm_pooled(d, np.zeros_like(d), layout=layout, horizon=1).p_value < 0.05
        rej[1] += dm_cross_sectional(d, np.zeros_like(d), period=period, horizon=1).p_value < 0.05
    size = rej / reps
    assert size[0] > 0.5, size  # pooled test assumes independent series: badly oversized
    assert 0.02 <= size[1] <= 0.08, size
    d = rng.normal(size=series.size)
    manual = np.array([d[period == t].mean() for t in range(n_periods)])
    res = dm_cross_sectional(d, np.zeros_like(d), period=period, horizon=1)
    assert res.n == n_periods
    assert res.statistic == pytest.approx(diebold_mariano(manual, np.zeros(n_periods), horizon=1).statistic)


def test_when_dm_inputs_are_bad_then_errors_say_what():
    with pytest.raises(InputError, match="too few"):
        diebold_mariano([1.0, 2.0, 3.0], [1.0, 1.0, 1.0], horizon=6)
    with pytest.raises(InputError, match="alternative"):
        diebold_mariano(np.ones(10), np.zeros(10), horizon=1, alternative="smaller")
    with pytest.raises(InputError, match="horizon"):
        overlap_lags(0)
    with pytest.raises(InputError, match="series and origin"):
        dm_pooled(np.ones(10), np.zeros(10), horizon=1)
    res = diebold_mariano(np.ones(10), np.ones(10), horizon=1)  # identical forecasts
    assert res.statistic == 0.0 and res.p_value == 1.0


def test_when_both_one_sided_tests_agree_then_the_verdict_follows_adr_decision_6():
    from tycheon.stats import verdict_vs_random_walk

    assert verdict_vs_random_walk(0.01, 0.04) == "beats"
    assert verdict_vs_random_walk(0.01, 0.06) == "indistinguishable"  # one test is not enough
    assert verdict_vs_random_walk(0.97, 0.99) == "worse"
    assert verdict_vs_random_walk(0.97, 0.90) == "indistinguishable"
    assert verdict_vs_random_walk(0.5, 0.5) == "indistinguishable"
    with pytest.raises(InputError, match="p-value"):
        verdict_vs_random_walk(1.5, 0.1)


def _verdict_table(noise: dict[str, float], seed: int = 0):
    import pandas as pd

    from tycheon.backtest.scoreset import quantile_column

    rng = np.random.default_rng(seed)
    levels = (0.1, 0.5, 0.9)
    z = stats.norm.ppf(levels)
    rows = []
    for s in range(15):
        for o in range(12):
            for h in (1, 2):
                actual = rng.normal()
                for model, sd in noise.items():
                    point = actual + sd * rng.normal()
                    row = {"model": model, "unit": "series", "series_id": f"s{s}", "origin": o, "step": h,
                           "actual": actual, "point": point}  # fmt: skip
                    row.update(
                        {quantile_column(lv): point + max(sd, 0.1) * zz for lv, zz in zip(levels, z, strict=False)}
                    )
                    rows.append(row)
    return pd.DataFrame(rows), levels


def test_when_a_challenger_is_far_better_or_worse_then_the_score_set_verdict_says_so():
    from tycheon.stats import verdict_from_scores

    table, levels = _verdict_table({"naive": 1.0, "good": 0.3, "bad": 2.5, "same": 1.0})
    good = verdict_from_scores(table, challenger="good", horizon=2, quantile_levels=levels)
    assert good.verdict == "beats" and good.crps_kind == "approx_quantiles" and good.n_pairs == 360
    assert good.squared_error.alternative == "less" and good.squared_error.lag == 1
    assert verdict_from_scores(table, challenger="bad", horizon=2, quantile_levels=levels).verdict == "worse"
    same = verdict_from_scores(table, challenger="same", horizon=2, quantile_levels=levels)
    assert same.verdict == "indistinguishable"
    with pytest.raises(InputError, match="models present"):
        verdict_from_scores(table, challenger="nope", horizon=2, quantile_levels=levels)
    gappy = table.copy()
    gappy.loc[gappy.model == "naive", "q0.5"] = np.nan  # baseline lacks quantiles: no mixing, no silence
    with pytest.raises(InputError, match="lack a approx_quantiles CRPS"):
        verdict_from_scores(gappy, challenger="good", horizon=2, quantile_levels=levels)


def _accumulating_null(rng, n_series, n_origins, horizon, reps):
    """Null-true per-step differentials that accumulate over the steps of one origin (a random walk's
    h-step errors): strongly dependent within a block, independent across blocks (stride = horizon)."""
    return np.cumsum(rng.normal(size=(reps, n_series * n_origins, horizon)), axis=2).reshape(reps, -1)


@pytest.mark.parametrize(("n_series", "n_origins"), [(1, 6), (3, 6)])
def test_when_few_blocks_are_pooled_then_size_is_held_by_block_degrees_of_freedom(n_series, n_origins):
    # the regime of a "total" unit (one series, six non-overlapping origins of six steps), where a
    # reference t(N-1) on the N = 36 pooled steps would be oversized: df = G - 1 holds the size
    horizon, reps = 6, 4000
    series = np.repeat(np.arange(n_series), n_origins * horizon)
    origin = np.tile(np.repeat(np.arange(n_origins), horizon), n_series)
    layout = pooled_layout(series, origin)
    d = _accumulating_null(np.random.default_rng(20261130 + n_series), n_series, n_origins, horizon, reps)
    zero = np.zeros(d.shape[1])
    results = [dm_pooled(row, zero, layout=layout, horizon=horizon, stride=horizon) for row in d]
    assert {(r.n_blocks, r.df) for r in results} == {(n_series * n_origins, n_series * n_origins - 1)}
    size = np.mean([r.p_value < 0.05 for r in results])
    assert 0.035 <= size <= 0.065, size  # 4000 replications: +-2.2 s.e. around 5%


def test_when_blocks_do_not_overlap_then_the_pooled_test_is_the_t_test_on_block_sums():
    # with L = 0 and equal blocks, HLN on n_blocks turns the pooled DM into the one-sample t-test of the
    # block sums, whose t(G-1) reference is exact for Gaussian sums (scipy as the oracle)
    rng = np.random.default_rng(12)
    series, origin = np.repeat(np.arange(2), 15), np.tile(np.repeat(np.arange(5), 3), 2)
    d = rng.normal(0.2, 1.0, size=30)
    res = dm_pooled(d, np.zeros(30), series=series, origin=origin, horizon=3, stride=3)
    sums = np.bincount(pooled_layout(series, origin).block, weights=d)
    ref = stats.ttest_1samp(sums, 0.0)
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-10)
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    assert res.df == 9 and res.n_blocks == 10 and res.n == 30


def test_when_a_series_misses_origins_then_the_pooled_test_counts_only_present_blocks():
    rng = np.random.default_rng(13)
    series = np.repeat(["a", "b"], 12)
    origin = np.r_[np.repeat([0, 1, 2, 3], 3), np.repeat([0, 2, 5, 6], 3)]  # b misses origins 1, 3, 4
    a, b = rng.gamma(2.0, size=24), rng.gamma(2.0, size=24)
    res = dm_pooled(a, b, series=series, origin=origin, horizon=3, stride=1, hln=False)
    mean, v = _pooled_loop_variance(list(a - b), list(series), list(origin), lags=2)
    # documented: a gap makes non-adjacent present origins neighbours (more covariance terms, not fewer)
    assert res.statistic == pytest.approx(mean / math.sqrt(v / 24**2), rel=1e-10)
    assert res.n_blocks == 8 and res.df == 7
    with pytest.raises(InputError, match="too few"):
        dm_pooled(a[:6], b[:6], series=series[:6], origin=origin[:6], horizon=3, stride=1)  # 2 blocks


def test_when_the_verdict_is_asked_for_an_unknown_crps_kind_then_it_is_refused():
    from tycheon.stats import verdict_from_scores

    table, levels = _verdict_table({"naive": 1.0, "good": 0.3})
    with pytest.raises(InputError, match="crps_kind must be"):
        verdict_from_scores(table, challenger="good", horizon=2, quantile_levels=levels, crps_kind="exact")


def _scaled_null_size(*, n_origins: int, stride: int, reps: int, seed: int) -> dict[str, float]:
    """Share of 5%-level rejections of the pooled DM on per-step losses scaled the leaderboard's way
    (MASE: |e|/s; RMSSE: e^2/s^2), for two equally good models on series of very different scales whose
    forecast errors are nested over the steps of overlapping origins."""
    rng = np.random.default_rng(seed)
    n_series, horizon = 10, 3
    scale = np.exp(rng.normal(0.0, 2.0, n_series))  # scales spread over orders of magnitude
    s = np.repeat(np.arange(n_series), n_origins * horizon)
    o = np.tile(np.repeat(np.arange(n_origins) * stride, horizon), n_series)
    step = np.tile(np.arange(1, horizon + 1), n_series * n_origins)
    layout = pooled_layout(s, o)
    span = (n_origins - 1) * stride + horizon + 1
    rejected = {"mase": 0, "rmsse": 0}
    for _ in range(reps):
        walks = [
            np.cumsum(np.c_[np.zeros(n_series), rng.normal(size=(n_series, span))], axis=1) * scale[:, None]
            for _ in range(2)
        ]
        e_a, e_b = ((w[s, o + step] - w[s, o]) for w in walks)  # null-true: same law for both models
        sc = scale[s]
        for name, loss in (("mase", lambda e, sc=sc: np.abs(e) / sc), ("rmsse", lambda e, sc=sc: e * e / sc**2)):
            p = dm_pooled(loss(e_a), loss(e_b), layout=layout, horizon=horizon, stride=stride).p_value
            rejected[name] += p < 0.05
    return {k: v / reps for k, v in rejected.items()}


@pytest.mark.parametrize("stride", [1, 3])
def test_when_losses_are_scaled_as_on_the_leaderboard_then_dm_holds_its_size_with_200_origins(stride):
    size = _scaled_null_size(n_origins=200, stride=stride, reps=2000, seed=11 + stride)
    # 2000 replications: 5% +- 1 point is about +-2 s.e.
    assert all(0.04 <= v <= 0.06 for v in size.values()), size
