"""Block bootstraps: vectorised resampling against a plain loop over the same block draws (WP26 4.1)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tycheon.errors import InputError
from tycheon.stats import paired_block_bootstrap, ranking_bootstrap


def _data(seed=0, n_blocks=15):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 6, size=n_blocks)
    blocks = np.repeat([f"g{i:02d}" for i in range(n_blocks)], sizes)
    a = rng.gamma(2.0, 1.0, size=blocks.size)
    b = a + rng.normal(0.3, 1.0, size=blocks.size)
    return a, b, blocks


def test_when_resampled_by_a_plain_loop_then_ci_se_and_p_agree():
    a, b, blocks = _data()
    res = paired_block_bootstrap(a, b, blocks=blocks, n_resamples=300, seed=42)
    labels = np.unique(blocks)  # sorted, as the function orders blocks
    draws = np.random.default_rng(42).integers(0, labels.size, size=(300, labels.size))
    boot = []
    for row in draws:
        idx = np.concatenate([np.flatnonzero(blocks == labels[j]) for j in row])
        boot.append(b[idx].mean() - a[idx].mean())
    boot = np.array(boot)
    delta = b.mean() - a.mean()
    assert res.delta == pytest.approx(delta)
    assert (res.ci_low, res.ci_high) == pytest.approx(tuple(np.quantile(boot, [0.025, 0.975])))
    assert res.se == pytest.approx(boot.std(ddof=1))
    assert res.p_value == pytest.approx(max(1 / 301, np.mean(np.abs(boot - delta) >= abs(delta))))
    assert res.n_blocks == 15


def test_when_seeded_then_bit_identical_and_p_is_floored():
    a, b, blocks = _data(1)
    r1 = paired_block_bootstrap(a, b, blocks=blocks, n_resamples=200, seed=7)
    r2 = paired_block_bootstrap(a, b, blocks=blocks, n_resamples=200, seed=7)
    assert (r1.delta, r1.ci_low, r1.ci_high, r1.p_value, r1.se) == (r2.delta, r2.ci_low, r2.ci_high, r2.p_value, r2.se)
    far = paired_block_bootstrap(a, a + 10.0 + 0.01 * np.arange(a.size), blocks=blocks, n_resamples=200, seed=7)
    assert far.p_value == pytest.approx(1 / 201)
    assert far.ci_low > 9.0


def test_when_blocks_are_equal_iid_then_the_bootstrap_se_is_the_analytic_plug_in_se():
    # independent of the implementation's RNG calls: resampling G equal blocks with replacement gives
    # Var*(mean) = sum_g (x_g - x_bar)^2 / G^2 exactly (Efron & Tibshirani 1993, eq. 6.8 with 1/G)
    rng = np.random.default_rng(21)
    g, size = 40, 3
    blocks = np.repeat(np.arange(g), size)
    a = rng.normal(size=g * size)
    b = a + rng.normal(0.2, 1.0, size=g * size)
    res = paired_block_bootstrap(a, b, blocks=blocks, n_resamples=20000, seed=5)
    means = np.bincount(blocks, weights=b - a) / size
    analytic = np.sqrt(np.sum((means - means.mean()) ** 2)) / g
    assert res.se == pytest.approx(analytic, rel=0.03)  # Monte Carlo s.e. of an SD with B=20000: 0.5%


def test_when_blocks_are_few_then_the_bootstrap_distribution_matches_exact_enumeration():
    import itertools

    blocks = np.array([0, 0, 0, 1, 2, 2])  # unequal sizes: a resample averages all losses of drawn blocks
    a = np.zeros(6)
    b = np.array([1.0, 2.0, 0.0, 5.0, -1.0, 3.0])
    exact = []
    for draw in itertools.product(range(3), repeat=3):  # all 27 equally likely ordered draws
        idx = np.concatenate([np.flatnonzero(blocks == j) for j in draw])
        exact.append(b[idx].mean() - a[idx].mean())
    exact = np.array(exact)
    res = paired_block_bootstrap(a, b, blocks=blocks, n_resamples=20000, seed=8)
    assert res.se == pytest.approx(exact.std(ddof=0), rel=0.03)
    assert exact.min() <= res.ci_low < res.ci_high <= exact.max()
    assert res.p_value == pytest.approx(np.mean(np.abs(exact - res.delta) >= abs(res.delta)), abs=0.01)


def test_when_differences_are_null_then_the_recentred_p_value_is_roughly_uniform():
    rng = np.random.default_rng(3)
    pvals = []
    for _ in range(1000):
        blocks = np.repeat(np.arange(20), 4)
        a = rng.normal(size=80)
        b = rng.normal(size=80) + np.repeat(rng.normal(0, 0.5, 20), 4)  # block-correlated, mean zero
        pvals.append(paired_block_bootstrap(a, b, blocks=blocks, n_resamples=200, seed=rng).p_value)
    # 1000 replications (s.e. 0.7%); with 20 blocks the plug-in bootstrap variance is (G-1)/G of the
    # truth, so the test is mildly liberal (about 7%), as expected of a percentile-type block bootstrap
    assert 0.03 <= np.mean(np.array(pvals) < 0.05) <= 0.10


def test_when_methods_are_far_apart_then_every_resample_keeps_the_ranking():
    rng = np.random.default_rng(4)
    series = np.repeat(np.arange(30), 4)
    frame = pd.DataFrame(rng.normal(size=(120, 3)) * 0.1 + [1.0, 2.0, 3.0], columns=["best", "mid", "worst"])
    res = ranking_bootstrap(frame, series=series, n_resamples=200, seed=0)
    assert res.rank.to_dict() == {"best": 1, "mid": 2, "worst": 3}
    assert (res.keep_fraction == 1.0).all()
    assert (res.rank_counts.sum(axis=1) == 200).all()


def test_when_two_methods_are_close_then_they_swap_in_some_resamples_like_a_plain_loop():
    rng = np.random.default_rng(5)
    series = np.repeat(np.arange(25), 3)
    frame = pd.DataFrame(rng.normal(size=(75, 3)) + [1.0, 1.02, 3.0], columns=list("abc"))
    res = ranking_bootstrap(frame, series=series, n_resamples=300, seed=9)
    draws = np.random.default_rng(9).integers(0, 25, size=(300, 25))
    keep = np.zeros(3)
    full = frame.mean().rank(method="min").to_numpy()
    for row in draws:
        idx = np.concatenate([np.flatnonzero(series == s) for s in row])
        keep += frame.iloc[idx].mean().rank(method="min").to_numpy() == full
    np.testing.assert_allclose(res.keep_fraction.to_numpy(), keep / 300)
    assert 0.0 < res.keep_fraction["a"] < 1.0 and res.keep_fraction["c"] == 1.0
    by_rank = ranking_bootstrap(frame, series=series, n_resamples=50, by="mean_rank", seed=9)
    assert by_rank.rank["c"] == 3


def test_when_bootstrap_inputs_are_bad_then_errors_say_what():
    a, b, blocks = _data()
    with pytest.raises(InputError, match="label every loss"):
        paired_block_bootstrap(a, b, blocks=blocks[:-1], seed=0)
    with pytest.raises(InputError, match="n_resamples"):
        paired_block_bootstrap(a, b, blocks=blocks, n_resamples=0, seed=0)
    with pytest.raises(InputError, match="by must be"):
        ranking_bootstrap(pd.DataFrame({"a": [1.0], "b": [2.0]}), series=[0], by="median", seed=0)


def test_when_a_series_or_block_label_is_missing_then_every_block_function_says_so():
    # one label check for the bootstraps, the pooled/cross-sectional DM layouts and the conservative CD
    from tycheon.stats import conservative_cd
    from tycheon.stats.dm import dm_cross_sectional, pooled_layout

    scores = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": [2.0, 1.0, 4.0, 3.0], "c": [3.0, 3.0, 1.0, 2.0]})
    series = np.array(["s1", None, "s2", "s2"], dtype=object)
    with pytest.raises(InputError, match="series labels must not be missing"):
        ranking_bootstrap(scores, series=series, n_resamples=10, seed=0)
    with pytest.raises(InputError, match="series labels must not be missing"):
        conservative_cd(scores, series=series, seed=0)
    with pytest.raises(InputError, match="series labels must not be missing"):
        pooled_layout(series, np.array([1, 2, 1, 2]))
    with pytest.raises(InputError, match="origin labels must not be missing"):
        pooled_layout(np.array(["s1", "s1", "s2", "s2"]), np.array([1.0, np.nan, 1.0, 2.0]))
    with pytest.raises(InputError, match="block labels must not be missing"):
        paired_block_bootstrap(np.ones(4), np.zeros(4), blocks=series, n_resamples=10, seed=0)
    with pytest.raises(InputError, match="period labels must not be missing"):
        dm_cross_sectional(np.ones(4), np.zeros(4), period=series, horizon=1)


def test_inside_shared_weights_an_integer_seed_draws_once_and_every_result_is_unchanged():
    from tycheon.stats import _resample  # where _block_weights is read: patching the re-export patches nothing

    a, b, blocks = _data(seed=4)
    alone = [paired_block_bootstrap(a, b * k, blocks=blocks, n_resamples=200, seed=9) for k in (1.0, 2.0)]
    scores = pd.DataFrame({"m1": a, "m2": b})
    rank_alone = ranking_bootstrap(scores, series=blocks, n_resamples=200, seed=9)
    drawn = []
    real = _resample._block_weights
    _resample._block_weights = lambda *args: drawn.append(args[:2]) or real(*args)
    try:
        with _resample.shared_weights():
            shared = [paired_block_bootstrap(a, b * k, blocks=blocks, n_resamples=200, seed=9) for k in (1.0, 2.0)]
            rank_shared = ranking_bootstrap(scores, series=blocks, n_resamples=200, seed=9)
            paired_block_bootstrap(a, b, blocks=blocks, n_resamples=200, seed=np.random.default_rng(9))
    finally:
        _resample._block_weights = real
    assert len(drawn) == 2  # once for seed 9 (three calls), once for the generator (never shared)
    for x, y in zip(alone, shared, strict=True):
        assert (x.delta, x.ci_low, x.ci_high, x.p_value, x.se) == (y.delta, y.ci_low, y.ci_high, y.p_value, y.se)
    pd.testing.assert_series_equal(rank_alone.keep_fraction, rank_shared.keep_fraction, check_exact=True)
    assert _resample._SHARED.get() is None  # released when the block ends


@pytest.mark.parametrize("n_blocks", [1, 7, 30, 31])
def test_block_weights_drawn_in_chunks_are_the_counts_of_one_whole_draw(monkeypatch, n_blocks):
    """The ``[resample, block]`` weights are drawn a few resamples at a time (no whole integer matrix):
    the same counts as a plain loop over one ``integers(size=(resamples, blocks))`` draw, chunk edges
    inside and between resamples included."""
    from tycheon.stats import _resample  # where _DRAW_CELLS is read

    n_resamples = 23
    whole = np.random.default_rng(11).integers(0, n_blocks, size=(n_resamples, n_blocks))
    expected = np.zeros((n_resamples, n_blocks))
    for i in range(n_resamples):
        for j in whole[i]:
            expected[i, j] += 1.0
    for cells in (1, 2 * n_blocks, 5 * n_blocks + 1, 1 << 21):  # one resample a chunk ... all at once
        monkeypatch.setattr(_resample, "_DRAW_CELLS", cells)
        got = _resample._block_weights(n_blocks, n_resamples, np.random.default_rng(11))
        np.testing.assert_array_equal(got, expected)
        assert got.dtype == np.float64
