"""Constructed score-set tables for the analyses' tests: every error is set by the test, so the expected
ranks and counts are known by construction."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from tycheon.analysis.leaderboard import LeaderboardSpec

HORIZON = 3
START = pd.Timestamp("2022-01-01")


def spec(**kw) -> LeaderboardSpec:
    base = {
        "metrics": ("mase", "rmsse"),
        "baseline": "base",
        "random_walk": "rw",
        "horizon": HORIZON,
        "stride": HORIZON,
        "seed": 3,
    }
    return LeaderboardSpec(**{**base, **kw})


def score_table(
    units: dict[str, int],
    models: list[str],
    error: Callable[[str, str, np.random.Generator, tuple[int, int, int]], np.ndarray],
    *,
    n_origins: int = 8,
    seed: int = 0,
    demand_class: Callable[[int, int], str] | None = None,
    weight: Callable[[int], float] | None = None,
) -> pd.DataFrame:
    """A score-set table: ``units`` maps unit -> number of series; ``error(unit, model, rng, shape)`` gives
    the point-forecast errors ``[series, origin, step]``; actuals are positive with scales of 1."""
    rng = np.random.default_rng(seed)
    frames = []
    for unit, n in units.items():
        shape = (n, n_origins, HORIZON)
        actual = 50.0 + 10.0 * np.arange(n)[:, None, None] + rng.gamma(4.0, 2.0, size=shape)
        s, o, h = np.meshgrid(np.arange(n), np.arange(n_origins), np.arange(HORIZON), indexing="ij")
        origin_ts = np.array(
            [START + pd.DateOffset(months=HORIZON * j) for j in range(n_origins)], dtype="datetime64[ns]"
        )
        target = np.array(
            [[START + pd.DateOffset(months=HORIZON * j + k) for k in range(HORIZON)] for j in range(n_origins)],
            dtype="datetime64[ns]",
        )
        for model in models:
            e = error(unit, model, rng, shape)
            frames.append(
                pd.DataFrame(
                    {
                        "model": model,
                        "unit": unit,
                        "series_id": np.char.add("s", s.ravel().astype(str)),
                        "origin": origin_ts[o.ravel()],
                        "step": (h + 1).ravel(),
                        "target_period": target[o.ravel(), h.ravel()],
                        "actual": actual.ravel(),
                        "point": (actual + e).ravel(),
                        "demand_class": [
                            demand_class(a, b) if demand_class else "smooth"
                            for a, b in zip(s.ravel(), o.ravel(), strict=False)
                        ],
                        "season_length": 12,
                        "scale_mae": 1.0,
                        "scale_rmse": 1.0,
                        "weight": [weight(a) if weight else 1.0 for a in s.ravel()],
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)
