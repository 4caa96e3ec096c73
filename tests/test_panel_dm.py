"""Size and power of the verdict's panel-robust DM test under a shock common to every series.

The simulation of issue 34: ``n`` series scored at ``T`` origins ``stride`` periods apart for ``h`` steps;
the per-step loss differential of series :math:`s` for target period :math:`t` is

.. math:: d_{s,t} = \\sqrt{\\rho}\\, c_t + \\sqrt{1-\\rho}\\, e_{s,t} + \\delta, \\qquad c_t, e_{s,t} \\sim N(0, 1)

(:math:`c_t` a shock common to all series in period :math:`t`, :math:`e_{s,t}` idiosyncratic; both shared
by the overlapping origins that forecast period :math:`t`), :math:`\\delta = 0` under the null. Balanced,
or with 20% of the (series, origin) cells missing at random. The verdict's test
(:func:`tycheon.stats.dm.dm_panel`, one-sided at 5%) must reject a true null in [3%, 7%] of 1,000
replications in every case; the series-independent :func:`tycheon.stats.dm.dm_pooled` is run beside it
(on fewer replications: it is only the contrast) and is far oversized once :math:`\\rho > 0`.

``python tests/test_panel_dm.py`` prints the whole table (size of both, power at :math:`\\rho = 0`).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from tycheon.contract import overlap_lags
from tycheon.stats.dm import _dm_rows, diebold_mariano, dm_panel, dm_pooled, panel_df

N_SERIES = 300
H = 6
REPS = 1000
POOLED_REPS = 100
BATCH = 100


def _draw(
    rng: np.random.Generator, reps: int, *, n_origins: int, stride: int, rho: float, missing: float, delta: float
):
    """``reps`` simulated panels at once: differentials ``[rep, series, origin, step]`` and the mask of the
    (series, origin) cells present ``[rep, series, origin]``."""
    periods = (n_origins - 1) * stride + H
    target = np.arange(n_origins)[:, None] * stride + np.arange(H)[None, :]  # [origin, step] -> period
    common = rng.standard_normal((reps, 1, periods))
    own = rng.standard_normal((reps, N_SERIES, periods))
    d = (math.sqrt(rho) * common + math.sqrt(1.0 - rho) * own)[:, :, target] + delta
    return d, rng.random((reps, N_SERIES, n_origins)) >= missing


def _cells(d: np.ndarray, present: np.ndarray):
    """One panel's present cells as flat losses with their series and origin labels."""
    s, o = np.nonzero(present)
    return d[s, o, :].ravel(), np.repeat(s, H), np.repeat(o, H)


def _panel(rng: np.random.Generator, *, n_origins: int, stride: int, rho: float, missing: float, delta: float = 0.0):
    """One simulated panel: per-step differentials and their series and origin labels (present cells)."""
    d, present = _draw(rng, 1, n_origins=n_origins, stride=stride, rho=rho, missing=missing, delta=delta)
    return _cells(d[0], present[0])


def _panel_p_values(d: np.ndarray, present: np.ndarray, stride: int, *, naive_df: bool = False) -> np.ndarray:
    """Vectorised over replications: the one-sided ("less") p-value of :func:`dm_panel` on each panel,
    from the origin averages by array sums and the same kernel (checked against ``dm_panel`` itself on
    every replication of a batch in :func:`test_the_vectorised_simulation_is_dm_panel`). ``naive_df``: the
    reference :math:`t_{T-1}` instead of :func:`panel_df` (the contrast printed by ``__main__``)."""
    lags = overlap_lags(H, stride)
    weight = present[..., None].astype(np.float64)
    avg = (d * weight).sum(axis=(1, 3)) / (weight.sum(axis=(1, 3)) * H)  # [rep, origin]
    stat, _ = _dm_rows(avg, lags, True)
    t = avg.shape[1]
    return stats.t.cdf(stat, t - 1 if naive_df else panel_df(t, lags))


def rejection_rates(
    *, n_origins: int, stride: int, rho: float, missing: float, delta: float = 0.0, seed: int = 0
) -> tuple[float, float]:
    """(panel, pooled) shares of one-sided 5% rejections of "the differential's mean is below zero"
    (for ``delta < 0`` the power): the panel test on :data:`REPS` panels, the pooled one on the first
    :data:`POOLED_REPS` of them."""
    rng = np.random.default_rng(seed)
    panel = pooled = 0
    for start in range(0, REPS, BATCH):
        d, present = _draw(rng, BATCH, n_origins=n_origins, stride=stride, rho=rho, missing=missing, delta=delta)
        panel += int((_panel_p_values(d, present, stride) < 0.05).sum())
        for r in range(max(0, min(BATCH, POOLED_REPS - start))):
            x, series, origin = _cells(d[r], present[r])
            res = dm_pooled(
                x, np.zeros_like(x), series=series, origin=origin, horizon=H, stride=stride, alternative="less"
            )
            pooled += res.p_value < 0.05
    return panel / REPS, pooled / POOLED_REPS


def test_the_vectorised_simulation_is_dm_panel():
    """The size study's vectorised p-values are those of the public function, replication by replication."""
    rng = np.random.default_rng(3)
    for t, stride, missing in ((8, 3, 0.2), (24, H, 0.0)):
        d, present = _draw(rng, 20, n_origins=t, stride=stride, rho=0.3, missing=missing, delta=0.0)
        fast = _panel_p_values(d, present, stride)
        for r in range(20):
            x, _, origin = _cells(d[r], present[r])
            p = dm_panel(x, np.zeros_like(x), origin=origin, horizon=H, stride=stride, alternative="less").p_value
            assert fast[r] == pytest.approx(p, rel=1e-9, abs=1e-15)


CASES = list(itertools.product((6, 8, 24), (H, 3), (0.0, 0.1, 0.3, 0.7), (0.0, 0.2)))


@pytest.mark.slow
@pytest.mark.parametrize(("n_origins", "stride", "rho", "missing"), CASES)
def test_the_panel_test_holds_its_size_under_a_common_shock(n_origins, stride, rho, missing):
    seed = CASES.index((n_origins, stride, rho, missing))
    size, pooled = rejection_rates(n_origins=n_origins, stride=stride, rho=rho, missing=missing, seed=seed)
    assert 0.03 <= size <= 0.07, f"panel DM size {size:.3f}"
    if rho >= 0.1:  # the series-independent variant counts one shock once per series
        assert pooled > 0.2, f"pooled DM size {pooled:.3f}"


def test_on_one_balanced_panel_the_test_is_the_dm_test_of_the_origin_averages():
    """Plain-loop oracle: average each origin's losses by hand, then the single-series DM (same HLN and
    HAC), whose t statistic is referred to t with ceil(T/(L+1)) - 1 degrees of freedom."""
    rng = np.random.default_rng(5)
    d, _, origin = _panel(rng, n_origins=10, stride=3, rho=0.3, missing=0.2, delta=-0.05)
    averages = []
    for o in sorted(set(origin.tolist())):
        cells = [d[i] for i in range(d.size) if origin[i] == o]
        averages.append(sum(cells) / len(cells))
    single = diebold_mariano(np.array(averages), np.zeros(len(averages)), horizon=H, stride=3, alternative="less")
    res = dm_panel(d, np.zeros_like(d), origin=origin, horizon=H, stride=3, alternative="less")
    assert res.statistic == pytest.approx(single.statistic, rel=1e-12)
    assert res.df == panel_df(10, 1) == 4 and res.n_blocks == 10 and res.lag == 1
    assert res.p_value == pytest.approx(stats.t.cdf(single.statistic, 4), rel=1e-12)


def test_degrees_of_freedom_count_non_overlapping_origin_groups():
    assert [panel_df(t, 0) for t in (8, 24)] == [7, 23]
    assert [panel_df(t, 1) for t in (8, 9, 24)] == [3, 4, 11]
    assert panel_df(24, 5) == 3


def test_an_origin_mean_shift_is_found_and_the_reverse_is_not():
    rng = np.random.default_rng(11)
    d, _, origin = _panel(rng, n_origins=24, stride=H, rho=0.0, missing=0.0, delta=-0.1)
    zero = np.zeros_like(d)
    assert dm_panel(d, zero, origin=origin, horizon=H, stride=H, alternative="less").p_value < 1e-6
    assert dm_panel(d, zero, origin=origin, horizon=H, stride=H, alternative="greater").p_value > 1 - 1e-6


def test_too_few_origins_is_refused_with_the_reason():
    from tycheon.errors import StatisticInputError

    d = np.ones(40)
    with pytest.raises(StatisticInputError, match="origins for the panel test"):
        dm_panel(d, d * 0, origin=np.repeat(np.arange(4), 10), horizon=6, stride=3)


if __name__ == "__main__":  # the whole table, for the note
    print("origins stride rho missing | panel size | pooled size")
    for i, (t, s, rho, miss) in enumerate(CASES):
        size, pooled = rejection_rates(n_origins=t, stride=s, rho=rho, missing=miss, seed=i)
        print(f"{t:7d} {s:6d} {rho:3.1f} {miss:7.1f} | {size:10.3f} | {pooled:11.3f}", flush=True)
    for t, s in ((8, H), (8, 3), (24, H), (24, 3)):
        for delta in (-0.02, -0.05):
            power, pooled = rejection_rates(n_origins=t, stride=s, rho=0.0, missing=0.0, delta=delta, seed=99)
            print(f"power rho=0 origins={t} stride={s} delta={delta}: panel {power:.3f}, pooled {pooled:.3f}")
    print("the reference's degrees of freedom (rho 0.3, balanced, 2,000 panels): ceil(T/(L+1))-1 vs T-1")
    rng = np.random.default_rng(2024)
    for t in (8, 12, 24, 48):
        for s in (H, 3, 2, 1):
            if t <= 2 * overlap_lags(H, s) + 2:
                continue
            rates = []
            for naive in (False, True):
                hits = 0
                for _ in range(20):
                    d, present = _draw(rng, 100, n_origins=t, stride=s, rho=0.3, missing=0.0, delta=0.0)
                    hits += int((_panel_p_values(d, present, s, naive_df=naive) < 0.05).sum())
                rates.append(hits / 2000)
            print(f"origins {t:3d} L {overlap_lags(H, s)}: panel_df {rates[0]:.3f}, T-1 {rates[1]:.3f}", flush=True)
