"""Small score sets in the results sidecar form (tags, score-set columns, quantile columns), built from a
seed without running the engine, for the tests of how results store their scores."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tycheon.backtest.scoreset import conform_table

LEVELS = (0.025, 0.1, 0.5, 0.9, 0.975)


def toy_scores(
    models: tuple[str, ...] = ("naive", "ses"),
    *,
    datasets: tuple[tuple[str, str], ...] = (("toy", "rolling_origin"),),
    n_series: int = 4,
    n_origins: int = 3,
    horizon: int = 3,
    seed: int = 0,
    quantiles: bool = True,
) -> pd.DataFrame:
    """One row per (dataset, model, unit, series, origin, step); pooled bands (a factor per (unit, step,
    origin) times the row's scale), Gaussian quantiles (``point + s * z``), an actual per (series, target
    period) and scales per (series, origin), as the harness writes them. A model's values depend on its
    name and the seed only, so adding a model leaves the others' rows as they were."""
    from scipy.stats import norm

    frames = []
    for dataset, protocol in datasets:
        rng = np.random.default_rng([seed, len(dataset)])
        origins = pd.date_range("2020-01-01", periods=n_origins, freq="MS")
        series = [f"s{i}" for i in range(n_series)]
        actual = {
            (s, t): float(rng.gamma(2.0, 5.0))
            for s in series
            for t in pd.date_range("2020-01-01", periods=n_origins + horizon + 1, freq="MS")
        }
        scale = {(s, o): float(rng.uniform(0.5, 3.0)) for s in series for o in origins}
        for model in models:
            mrng = np.random.default_rng([seed, sum(map(ord, model)), len(dataset)])
            factor = {(h, o): float(mrng.uniform(0.2, 2.0)) for h in range(1, horizon + 1) for o in origins}
            rows = []
            for s in series:
                for o in origins:
                    for h in range(1, horizon + 1):
                        t = o + pd.DateOffset(months=h)
                        point = float(mrng.normal(10.0, 3.0))
                        width = factor[(h, o)] * scale[(s, o)]
                        spread = float(mrng.uniform(0.5, 4.0))
                        rows.append(
                            {
                                "unit": "series",
                                "series_id": s,
                                "origin": o,
                                "step": h,
                                "target_period": t,
                                "actual": actual[(s, t)],
                                "point": point,
                                "available_at": t,
                                "demand_class": "smooth" if s != "s0" else "intermittent",
                                "season_length": 12,
                                "scale_mae": scale[(s, o)],
                                "scale_rmse": scale[(s, o)] * 1.25,
                                "weight": 1.0 / n_series,
                                "lo80": point - width,
                                "hi80": point + width,
                                "lo95": np.nan,
                                "hi95": np.nan,
                                "has_band": True,
                                "has_quantiles": True,
                                "has_samples": False,
                                **({f"q{q:g}": point + spread * norm.ppf(q) for q in LEVELS} if quantiles else {}),
                            }
                        )
            frame = pd.DataFrame(rows)
            frame.insert(0, "model", model)
            frame.insert(0, "protocol", protocol)
            frame.insert(0, "dataset", dataset)
            frames.append(frame)
    out = pd.concat(frames, ignore_index=True)
    out["step"] = out["step"].astype(np.int16)
    out["season_length"] = out["season_length"].astype(np.int16)
    for c in ("dataset", "protocol"):
        out[c] = pd.Categorical(out[c], categories=sorted(out[c].unique()))
    return conform_table(out)
