"""Backtest of the baseline roster: tycheon's engine against statsforecast ``cross_validation``.

Both sides get the same panel in their native form (tycheon a :class:`~tycheon.data.panel.Panel`,
statsforecast the long ``unique_id/ds/y`` frame built from it, outside the timing), the same eight models
and the same design: horizon 6, stride 3, 8 windows, refit at every window.

Alignment. statsforecast's ``cutoff`` is the last training period; tycheon's origin is the next period
(origin column = cutoff column + 1). statsforecast places each series' windows back from *that series'*
last period, tycheon places one set of origins back from the panel's last period and abstains where a
series cannot be forecast there (not yet entered, exited, too short for the model). So the two score sets
coincide for series observed to the panel's end, and partly elsewhere. The agreement check joins the two
on (series, origin, target period) and compares point forecasts on every common row, per model; rows only
one side has are counted and explained in the report (tycheon abstains on seasonal naive below m + 1 = 13
observations and on drift below 2; statsforecast then returns NaN or a forecast from a partial season).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from benchmarks.perf.common import HORIZON, N_ORIGINS, STRIDE, Comparison, median_time, protocol, roster
from tycheon.backtest.engine import run
from tycheon.backtest.scoreset import ScoreSet
from tycheon.data.panel import Panel

__all__ = ["SF_COLUMNS", "TOLERANCE", "agreement", "compare_statsforecast", "run_statsforecast", "run_tycheon"]

TOLERANCE = 1e-9

SF_COLUMNS = {  # tycheon model -> statsforecast output column
    "naive": "Naive",
    "seasonal_naive": "SeasonalNaive",
    "drift": "RWD",
    "historic_mean": "HistoricAverage",
    "croston": "CrostonClassic",
    "croston_sba": "CrostonSBA",
    "tsb": "TSB",
    "ses": "SES",
}


def run_tycheon(panel: Panel, *, backend: str, n_jobs: int, chunk_size: int | None = None) -> ScoreSet:
    return run(
        panel,
        protocol(),
        roster(),
        units=("series",),
        quantile_levels=(),
        n_samples=0,
        min_history=1,
        backend=backend,
        n_jobs=n_jobs,
        seed=0,
        chunk_size=chunk_size,
    )  # type: ignore[arg-type]


def long_frame(panel: Panel) -> pd.DataFrame:
    """statsforecast's input: ``unique_id, ds, y`` sorted by series then period."""
    return panel.data.rename(columns={"series_id": "unique_id", "period": "ds", "value": "y"})[
        ["unique_id", "ds", "y"]
    ].reset_index(drop=True)


def _sf_models() -> list[Any]:
    from statsforecast.models import (
        TSB,
        CrostonClassic,
        CrostonSBA,
        HistoricAverage,
        Naive,
        RandomWalkWithDrift,
        SeasonalNaive,
        SimpleExponentialSmoothing,
    )

    return [
        Naive(),
        SeasonalNaive(12),
        RandomWalkWithDrift(),
        HistoricAverage(),
        CrostonClassic(),
        CrostonSBA(),
        TSB(0.2, 0.2),
        SimpleExponentialSmoothing(0.3),
    ]


def run_statsforecast(frame: pd.DataFrame, *, n_jobs: int) -> pd.DataFrame:
    from statsforecast import StatsForecast

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "shorter than season_length" once per short series
        return StatsForecast(models=_sf_models(), freq="MS", n_jobs=n_jobs).cross_validation(
            df=frame, h=HORIZON, step_size=STRIDE, n_windows=N_ORIGINS
        )


def agreement(
    scores: ScoreSet | pd.DataFrame, cv: pd.DataFrame, *, tolerance: float = TOLERANCE
) -> dict[str, dict[str, Any]]:
    """Per model: common rows, rows only one side has, NaN-vs-number rows and the largest difference.

    ``scores`` is a score set or its table (at least ``model, series_id, origin, target_period, point``).

    A common row agrees when ``|tycheon - statsforecast| <= tolerance * max(1, |statsforecast|)``.
    """
    sf = cv.copy()
    sf["origin"] = pd.DatetimeIndex(sf["cutoff"]) + pd.offsets.MonthBegin(1)
    sf = sf.rename(columns={"unique_id": "series_id", "ds": "target_period"})
    keys = ["series_id", "origin", "target_period"]
    sf["series_id"] = sf["series_id"].astype(str)
    sf = sf.set_index(keys)
    table = scores if isinstance(scores, pd.DataFrame) else scores.table
    table = table.assign(series_id=table["series_id"].astype(str))  # categorical vs object ids
    out: dict[str, dict[str, Any]] = {}
    for model, column in SF_COLUMNS.items():
        ours = table.loc[table["model"] == model, keys + ["point"]].set_index(keys)["point"]
        theirs = sf[column]
        theirs_known = theirs[theirs.notna()]
        common = ours.index.intersection(theirs.index)
        a = ours.reindex(common).to_numpy()
        b = theirs.reindex(common).to_numpy()
        both = np.isfinite(a) & np.isfinite(b)
        diff = np.abs(a[both] - b[both])
        bad = diff > tolerance * np.maximum(1.0, np.abs(b[both]))
        out[model] = {
            "common": int(both.sum()),
            "disagree": int(bad.sum()),
            "max_abs_diff": float(diff.max()) if diff.size else 0.0,
            "nan_on_one_side": int((~both).sum()),
            "tycheon_only": int(len(ours) - len(common)),
            "statsforecast_only": int(len(theirs_known.index.difference(ours.index))),
        }
    return out


def compare_statsforecast(
    panel: Panel, *, warm_panel: Panel, repeats: int, n_jobs: int = 2, backends: tuple[str, ...] = ("joblib",)
) -> tuple[list[Comparison], ScoreSet, dict[str, dict[str, Any]], dict[str, float]]:
    """Time both sides (after a warm-up on ``warm_panel``), check agreement, one comparison per backend.

    Returns the comparisons, tycheon's last score set, the agreement table and the median times.
    """
    frame, warm_frame = long_frame(panel), long_frame(warm_panel)
    for backend in backends:
        # small chunks: many tasks, so every worker process imports tycheon and loads the compiled kernels
        # here, not in the first timed run
        run_tycheon(
            warm_panel, backend=backend, n_jobs=n_jobs, chunk_size=max(1, warm_panel.n_series // (8 * max(1, n_jobs)))
        )
    run_statsforecast(warm_frame, n_jobs=n_jobs)
    times: dict[str, list[float]] = {b: [] for b in (*backends, "statsforecast")}
    scores: ScoreSet | None = None
    cv: pd.DataFrame | None = None
    for _ in range(repeats):  # alternate the sides so background load hits both
        for backend in backends:
            scores = None  # each timed run starts without the previous run's output held in memory
            t, _, scores = median_time(lambda b=backend: run_tycheon(panel, backend=b, n_jobs=n_jobs), repeats=1)
            times[backend].append(t)
        cv = None
        t, _, cv = median_time(lambda: run_statsforecast(frame, n_jobs=n_jobs), repeats=1)
        times["statsforecast"].append(t)
    assert scores is not None and cv is not None
    medians = {k: float(np.median(v)) for k, v in times.items()}
    agree = agreement(scores, cv)
    ok = all(a["disagree"] == 0 and a["common"] > 0 for a in agree.values())
    comparisons = [
        Comparison(
            name=f"backtest_vs_statsforecast[{panel.n_series} series, tycheon {b}, n_jobs={n_jobs}]",
            tycheon_s=medians[b],
            peer_s=medians["statsforecast"],
            ok=ok,
            notes=[
                f"times tycheon={np.round(times[b], 2).tolist()} "
                f"statsforecast={np.round(times['statsforecast'], 2).tolist()}"
            ],
        )
        for b in backends
    ]
    return comparisons, scores, agree, medians


def format_agreement(agree: dict[str, dict[str, Any]]) -> list[str]:
    lines = []
    for model, a in agree.items():
        verdict = "agree" if a["disagree"] == 0 else "DISAGREE"
        lines.append(
            f"  {model:<15} {verdict} to {TOLERANCE:g} on {a['common']} common rows (max |diff| "
            f"{a['max_abs_diff']:.1e}); NaN on one side {a['nan_on_one_side']}, tycheon-only "
            f"{a['tycheon_only']}, statsforecast-only {a['statsforecast_only']}"
        )
    return lines
