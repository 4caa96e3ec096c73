"""The panel (time-block) bootstrap: circular blocks of origins, each bringing every series (issue 34).

Oracles: the weights and every resampled statistic against a plain loop over the same draws; the
few-groups spread against the plug-in standard error of a large ensemble; and the coverage of the 95%
interval of a mean difference under a calendar shock common to every series, against the series-only
bootstrap, which assumes series independent.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tycheon.errors import InputError
from tycheon.stats import bootstrap as bs
from tycheon.stats.bootstrap import (
    few_groups_factor,
    paired_means,
    paired_means_bootstrap,
    panel_means_bootstrap,
    panel_means_bootstraps,
    panel_ranking_bootstrap,
)


def _panel(n_series=20, n_origins=9, seed=0, missing=0.1):
    """Block values of three models with a shock per origin and some blocks missing."""
    rng = np.random.default_rng(seed)
    s, o = np.meshgrid(np.arange(n_series), np.arange(n_origins), indexing="ij")
    shock = rng.normal(size=n_origins)[o.ravel()]
    frame = pd.DataFrame(
        {m: 1.0 + k * 0.1 + shock * (1 + k) + rng.gamma(2.0, 0.5, s.size) for k, m in enumerate(["a", "base", "c"])}
    )
    frame = frame.mask(rng.random(frame.shape) < missing)
    origin = pd.Timestamp("2020-01-01") + pd.to_timedelta(o.ravel() * 30, unit="D")
    return frame, np.asarray(origin)


def _loop_weights(n_times, n_resamples, length, seed):
    """Circular block counts by a plain loop over one ``integers`` draw of the run starts."""
    runs = -(-n_times // length)
    starts = np.random.default_rng(seed).integers(0, n_times, size=(n_resamples, runs))
    out = np.zeros((n_resamples, n_times))
    for b in range(n_resamples):
        drawn = [(start + i) % n_times for start in starts[b] for i in range(length)][:n_times]
        for t in drawn:
            out[b, t] += 1.0
    return out


@pytest.mark.parametrize(("n_times", "length"), [(9, 1), (9, 2), (9, 4), (8, 8), (12, 5)])
def test_circular_block_weights_are_the_counts_of_a_plain_loop_over_the_same_starts(n_times, length):
    got = bs._circular_block_weights(n_times, 37, length, np.random.default_rng(4))
    np.testing.assert_array_equal(got, _loop_weights(n_times, 37, length, 4))
    assert (got.sum(axis=1) == n_times).all() and got.dtype == np.float64


@pytest.mark.parametrize(("horizon", "stride"), [(1, 1), (3, 3), (2, 1), (6, 2)])
def test_panel_means_bootstrap_equals_a_plain_loop_that_concatenates_the_drawn_origins(horizon, stride):
    frame, origin = _panel()
    n_res, seed = 60, 8
    res = panel_means_bootstrap(
        frame, origin=origin, horizon=horizon, stride=stride, reference="base", n_resamples=n_res, seed=seed
    )
    times = np.unique(origin)  # time order
    length = -(-horizon // stride)
    weights = _loop_weights(times.size, n_res, length, seed)
    c = stats.t.ppf(0.975, -(-times.size // length) - 1) / stats.norm.ppf(0.975)
    c *= np.sqrt((-(-times.size // length)) / (-(-times.size // length) - 1.0))
    mean, delta = frame.mean().to_numpy(), (frame.sub(frame["base"], axis=0)).mean().to_numpy()
    means, deltas = [], []
    for b in range(n_res):
        rows = np.concatenate([np.flatnonzero(origin == times[t]) for t in range(times.size)
                               for _ in range(int(weights[b, t]))])  # fmt: skip
        drawn = frame.iloc[rows]
        means.append(mean + c * (drawn.mean().to_numpy() - mean))
        deltas.append(delta + c * (drawn.sub(drawn["base"], axis=0).mean().to_numpy() - delta))
    means, deltas = np.array(means), np.array(deltas)
    j = res.columns.index("a")
    assert res.mean == pytest.approx(mean) and res.delta[j] == pytest.approx(delta[j]) and np.isnan(res.delta[1])
    lo, hi = np.quantile(means, [0.025, 0.975], axis=0)
    np.testing.assert_allclose(res.mean_low, lo)
    np.testing.assert_allclose(res.mean_high, hi)
    assert (res.delta_low[j], res.delta_high[j]) == pytest.approx(tuple(np.quantile(deltas[:, j], [0.025, 0.975])))
    assert res.delta_se[j] == pytest.approx(deltas[:, j].std(ddof=1))
    p = max(1 / (n_res + 1), np.mean(np.abs(deltas[:, j] - delta[j]) >= abs(delta[j])))
    assert res.p_value[j] == pytest.approx(p)
    assert (res.n_blocks, res.block_length, res.scale) == (times.size, length, pytest.approx(c))


def test_panel_ranking_bootstrap_ranks_the_spread_means_of_the_same_drawn_origins():
    frame, origin = _panel(missing=0.0)
    frame["b"] = frame["a"] + 0.01  # close to a: the two swap
    res = panel_ranking_bootstrap(frame, origin=origin, horizon=2, stride=1, n_resamples=80, seed=5)
    times = np.unique(origin)
    weights = _loop_weights(times.size, 80, 2, 5)
    c = few_groups_factor(-(-times.size // 2), 0.95)
    mean = frame.mean().to_numpy()
    ranks = []
    for b in range(80):
        rows = np.concatenate([np.flatnonzero(origin == times[t]) for t in range(times.size)
                               for _ in range(int(weights[b, t]))])  # fmt: skip
        ranks.append(stats.rankdata(mean + c * (frame.iloc[rows].mean().to_numpy() - mean), method="min"))
    ranks = np.array(ranks)
    full = stats.rankdata(mean, method="min")
    assert list(res.rank) == list(full)
    assert res.keep_fraction.to_numpy() == pytest.approx(np.mean(ranks == full, axis=0))
    assert res.rank_counts.loc["a"].tolist() == [int(np.sum(ranks[:, 0] == k)) for k in range(1, 5)]
    assert 0.0 < res.keep_fraction["a"] < 1.0 and res.scale == pytest.approx(c)


def test_the_few_groups_spread_makes_the_bootstrap_se_the_t_scaled_sample_se():
    # G independent origins (L = 0): Var*(mean) = sum (x_o - x_bar)^2 / G^2 (Efron & Tibshirani 1993,
    # eq. 6.8), so c * SE* = t/z * s / sqrt(G) with s the sample SD (divisor G - 1): the t interval
    rng = np.random.default_rng(3)
    g = 10
    origin = np.repeat(np.arange(g), 4)
    x = rng.normal(size=g)[origin] + 0.0 * rng.normal(size=origin.size)
    frame = pd.DataFrame({"base": np.zeros(origin.size), "a": x})
    res = panel_means_bootstrap(frame, origin=origin, horizon=1, reference="base", n_resamples=40000, seed=2)
    s = np.std(np.bincount(origin, weights=x) / 4, ddof=1)
    tz = stats.t.ppf(0.975, g - 1) / stats.norm.ppf(0.975)
    assert res.delta_se[1] == pytest.approx(tz * s / np.sqrt(g), rel=0.02)
    assert few_groups_factor(2, 0.95) == pytest.approx(np.sqrt(2) * 12.7062 / 1.95996, rel=1e-4)
    assert few_groups_factor(10_000, 0.9) == pytest.approx(1.0, abs=1e-3)


def _shocked_panel(rng, *, n_series, n_origins, horizon, stride, rho):
    """Block mean differences with true mean 0: a calendar shock per target period common to every
    series (share ``rho`` of the variance) plus independent noise, averaged over each origin's steps."""
    n_periods = (n_origins - 1) * stride + horizon
    shock = rng.normal(size=n_periods)
    o, k = np.meshgrid(np.arange(n_origins), np.arange(horizon), indexing="ij")  # [origin, step]
    common = np.sqrt(rho) * shock[o * stride + k]  # [origin, step]
    noise = np.sqrt(1.0 - rho) * rng.normal(size=(n_series, n_origins, horizon))
    d = (common[None] + noise).mean(axis=2)  # [series, origin]
    series = np.repeat(np.arange(n_series), n_origins)
    origin = np.tile(np.arange(n_origins), n_series)
    return pd.DataFrame({"base": np.zeros(d.size), "a": d.ravel()}), series, origin


@pytest.mark.parametrize(
    ("n_origins", "horizon", "stride", "low"),
    [(6, 6, 6, 0.92), (12, 3, 3, 0.92), (24, 2, 1, 0.90)],  # overlapping origins (L = 1): a little short
)
def test_under_a_common_shock_the_panel_interval_covers_and_the_series_bootstrap_does_not(
    n_origins, horizon, stride, low
):
    rng = np.random.default_rng(2024)
    n_reps, covered, covered_series = 400, 0, 0
    for _ in range(n_reps):
        frame, series, origin = _shocked_panel(
            rng, n_series=300, n_origins=n_origins, horizon=horizon, stride=stride, rho=0.3
        )
        panel = panel_means_bootstrap(
            frame, origin=origin, horizon=horizon, stride=stride, reference="base", n_resamples=499, seed=rng
        )
        covered += panel.delta_low[1] <= 0.0 <= panel.delta_high[1]
        alone = paired_means_bootstrap(frame, blocks=series, reference="base", n_resamples=499, seed=rng)
        covered_series += alone.delta_low[1] <= 0.0 <= alone.delta_high[1]
    coverage, series_coverage = covered / n_reps, covered_series / n_reps
    assert low <= coverage <= 0.985, coverage
    assert series_coverage < 0.4, series_coverage  # one shock counted once per series: far too narrow


def test_several_tables_share_one_draw_and_too_few_origins_are_refused():
    frame, origin = _panel()
    one = panel_means_bootstrap(frame, origin=origin, horizon=3, stride=3, reference="base", seed=1)
    both = panel_means_bootstraps([frame, frame * 2.0], origin=origin, horizon=3, stride=3, reference="base", seed=1)
    np.testing.assert_array_equal(one.delta_low, both[0].delta_low)
    assert both[1].mean_high == pytest.approx(2.0 * one.mean_high)
    with pytest.raises(InputError, match="at least 2"):
        panel_means_bootstrap(frame, origin=np.zeros(len(frame)), horizon=1, reference="base", seed=0)
    with pytest.raises(InputError, match="at least 2"):  # 9 origins in one run of ceil(12/1) = 12
        panel_ranking_bootstrap(frame.dropna(), origin=origin[frame.notna().all(axis=1)], horizon=12, seed=0)
    with pytest.raises(InputError, match="origin must label"):
        panel_means_bootstrap(frame, origin=origin[:-1], horizon=1, reference="base", seed=0)


def test_the_estimates_alone_are_the_bootstraps_estimates_without_intervals():
    frame, origin = _panel()
    est = paired_means(frame, reference="base")
    boot = panel_means_bootstrap(frame, origin=origin, horizon=1, reference="base", n_resamples=50, seed=0)
    np.testing.assert_allclose(est.mean, boot.mean)
    np.testing.assert_allclose(est.delta, boot.delta)
    assert np.isnan(est.mean_low).all() and np.isnan(est.p_value).all() and est.n_resamples == 0
