"""Statistics at panel scale: DM for 11 challengers against a baseline over pooled per-step losses (overlap
handled, lag from h=6 and stride 3), Friedman/Nemenyi on blocks x 12 methods and BH on the 11 p-values,
timed together through the public :mod:`tycheon.stats` API. Target (issue 9): under 5 s on 2 cores.

The inputs are synthetic with a seed: per-step squared-error-like losses for 12 methods (method 0 the
baseline) over ``n_series`` series x 8 origins x 6 steps (29,167 series give 1.4 million losses per
method), and a ``[block, method]`` score table. There is no peer: the line prints ``peer=n/a``.
"""

from __future__ import annotations

import numpy as np

from benchmarks.perf.common import HORIZON, N_ORIGINS, STRIDE, Comparison, median_time
from tycheon.stats import benjamini_hochberg, dm_pooled, friedman_nemenyi, pooled_layout

__all__ = ["TARGET_SECONDS", "compare_stats", "make_inputs", "run_stats"]

TARGET_SECONDS = 5.0
N_METHODS = 12


def make_inputs(*, n_series: int, n_blocks: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = n_series * N_ORIGINS * HORIZON
    series = np.repeat(np.arange(n_series), N_ORIGINS * HORIZON)
    origin = np.tile(np.repeat(np.arange(N_ORIGINS), HORIZON), n_series)
    level = rng.lognormal(size=n_series)[series]  # [obs]
    effect = np.linspace(0.0, 0.05, N_METHODS)  # method 0 is the baseline
    losses = level[:, None] * (1.0 + effect[None, :]) * rng.chisquare(1, size=(n, N_METHODS))  # [obs, method]
    scores = rng.gamma(2.0, size=(n_blocks, 1)) * (1.0 + effect[None, :]) + rng.normal(
        scale=0.3, size=(n_blocks, N_METHODS)
    )  # [block, method]
    return {"series": series, "origin": origin, "losses": losses, "scores": scores}


def run_stats(inputs: dict[str, np.ndarray]) -> tuple[np.ndarray, float]:
    """The whole statistics pass; returns the BH-adjusted p-values and Friedman's p-value."""
    layout = pooled_layout(inputs["series"], inputs["origin"])
    losses = inputs["losses"]
    p = np.array(
        [
            dm_pooled(losses[:, j], losses[:, 0], layout=layout, horizon=HORIZON, stride=STRIDE).p_value
            for j in range(1, N_METHODS)
        ]
    )
    fr = friedman_nemenyi(inputs["scores"])
    return benjamini_hochberg(p), fr.p_value


def compare_stats(*, n_series: int, n_blocks: int, repeats: int) -> Comparison:
    inputs = make_inputs(n_series=n_series, n_blocks=n_blocks)
    run_stats(inputs)  # warm-up
    med, times, (adjusted, friedman_p) = median_time(lambda: run_stats(inputs), repeats=repeats)
    n_losses = len(inputs["series"])
    met = med < TARGET_SECONDS
    return Comparison(
        name=f"stats[DM 11 x {n_losses} losses + Friedman/Nemenyi {n_blocks} x {N_METHODS} + BH]",
        tycheon_s=med,
        peer_s=None,
        ok=met,
        notes=[
            f"target < {TARGET_SECONDS:g}s: {'met' if met else 'MISSED'}; times {np.round(times, 2).tolist()}",
            f"BH-adjusted p range [{adjusted.min():.2g}, {adjusted.max():.2g}], Friedman p {friedman_p:.2g}",
        ],
    )
