"""Bands from calibration origins on the small benchmark's synthetic panel (issue 14, first bullet).

``python -m benchmarks.perf.calibration [--c 0 6 12] [--repeats 1]``: for each number of calibration
origins C, the engine's run of the small benchmark's synthetic_marketplace dataset (its units, protocol and
min_history; four baselines, point forecasts only) and, per unit, the share of scored rows with an 80% and a
95% band, the first scored origin at which every row of the unit that has a scale has each band, the
coverage of the bands per demand class and the run's wall time. Prints one JSON document.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np
import pandas as pd

import tycheon.data as tdata
from tycheon.backtest.engine import run
from tycheon.backtest.factories import forecaster_factory
from tycheon.backtest.protocol import RollingOrigin

__all__ = ["MODELS", "UNITS", "main", "measure"]

UNITS = ("series", "total", "level:segment", "level:region", "groups:5")
MODELS = ("naive", "seasonal_naive", "snaive_momentum", "croston_sba")
MIN_HISTORY = 24


def _panel():
    return tdata.load("synthetic_marketplace", n_entities=400, n_periods=67, spikiness=1.0, seed=11)


def _inside(t: pd.DataFrame, level: int) -> pd.Series:
    return (t["actual"] >= t[f"lo{level}"]) & (t["actual"] <= t[f"hi{level}"])


def _summary(t: pd.DataFrame) -> dict[str, Any]:
    out: dict[str, Any] = {}
    origins = sorted(t["origin"].unique())
    for unit, g in t.groupby("unit", sort=False, observed=True):
        row: dict[str, Any] = {"rows": len(g)}
        for level in (80, 95):
            has = g[f"lo{level}"].notna()
            row[f"share_{level}"] = round(float(has.mean()), 4)
            scaled = g["scale_mae"].gt(0)
            full = [
                k + 1
                for k, o in enumerate(origins)
                if has[(g["origin"] == o) & scaled].all() and ((g["origin"] == o) & scaled).any()
            ]
            row[f"every_scaled_row_from_origin_{level}"] = min(full) if full else None
            row[f"coverage_{level}"] = round(float(_inside(g[has], level).mean()), 4) if has.any() else None
        out[str(unit)] = row
    return out


def _by_class(t: pd.DataFrame) -> dict[str, Any]:
    s = t[t["unit"] == "series"]
    out: dict[str, Any] = {}
    for cls, g in s.groupby("demand_class", observed=True):
        row: dict[str, Any] = {"rows": len(g)}
        for level in (80, 95):
            has = g[f"lo{level}"].notna()
            row[f"with_band_{level}"] = int(has.sum())
            row[f"coverage_{level}"] = round(float(_inside(g[has], level).mean()), 4) if has.any() else None
        out[str(cls)] = row
    return out


def measure(c: int, *, repeats: int = 1, models: tuple[str, ...] = MODELS) -> dict[str, Any]:
    panel = _panel()
    protocol = RollingOrigin(horizon=6, stride=6, n_origins=6, n_calibration_origins=c)
    factories = {m: forecaster_factory(m) for m in models}
    times = []
    scores = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        scores = run(
            panel, protocol, factories, units=UNITS, quantile_levels=(), min_history=MIN_HISTORY, seed=20261005
        )
        times.append(time.perf_counter() - t0)
    assert scores is not None
    conformal = scores.meta["conformal"]
    return {
        "C": c,
        "models": list(models),
        "seconds": round(float(np.median(times)), 3),
        "calibration_origins_used": len(conformal.get("calibration_origins", [])),
        "calibration_origins_skipped": conformal.get("calibration_origins_skipped", 0),
        "calibration_min_history": conformal.get("calibration_min_history"),
        "by_unit": _summary(scores.table),
        "series_by_demand_class": _by_class(scores.table),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf.calibration", description=__doc__)
    parser.add_argument("--c", type=int, nargs="+", default=[0, 6, 12])
    parser.add_argument("--repeats", type=int, default=1, help="timed runs per C (median reported)")
    parser.add_argument("--models", nargs="+", default=list(MODELS), help="forecaster ids (default: four baselines)")
    args = parser.parse_args(argv)
    models = tuple(args.models)
    measure(max(args.c), models=models)  # warm-up: numba compilation and caches are not timed
    print(json.dumps([measure(c, repeats=args.repeats, models=models) for c in args.c], indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
