"""One cold side of the cold comparison, as a fresh whole process (run as a script, not imported).

``python cold_child.py tycheon|statsforecast FRAME.parquet --n-jobs N [--backend B] [--out PATH]``

Each side does what a user's one-shot script does: import its library, read the long frame
(``unique_id, ds, y``), build its input from it (tycheon: ``Panel.from_long``; statsforecast takes the
frame itself), run one backtest of the eight baselines (horizon 6, stride 3, 8 windows). It then prints one
JSON line, ``{"phase_s": {...}, "main_peak_gib": ..., "workers_peak_gib": [...], "rows": ...}``, and flushes:
the parent takes that line's arrival as the end of the timed run and stops sampling memory there. Only
afterwards, and only with ``--out``, are the point forecasts written for the agreement check.

It imports nothing from ``benchmarks`` (a user's script would not), and it reads its peaks from
``/proc/<pid>/status`` (``VmHWM``) before printing.
"""

from __future__ import annotations

import time

T0 = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

HORIZON, STRIDE, WINDOWS = 6, 3, 8
ROSTER = {  # tycheon forecaster -> (params, statsforecast class, its args)
    "naive": ({}, "Naive", ()),
    "seasonal_naive": ({}, "SeasonalNaive", (12,)),
    "drift": ({}, "RandomWalkWithDrift", ()),
    "historic_mean": ({}, "HistoricAverage", ()),
    "croston": ({}, "CrostonClassic", ()),
    "croston_sba": ({}, "CrostonSBA", ()),
    "tsb": ({"alpha_d": 0.2, "alpha_p": 0.2}, "TSB", (0.2, 0.2)),
    "ses": ({"alpha": 0.3}, "SimpleExponentialSmoothing", (0.3,)),
}


def _peak_gib(pid: int) -> float | None:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 2**20
    return None


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _tycheon(path: str, *, n_jobs: int, backend: str) -> tuple[dict[str, float], object]:
    phases: dict[str, float] = {}
    t = time.perf_counter()
    import pandas as pd

    import tycheon

    phases["import"] = time.perf_counter() - t
    t = time.perf_counter()
    frame = pd.read_parquet(path)
    phases["read"] = time.perf_counter() - t
    t = time.perf_counter()
    panel = tycheon.Panel.from_long(frame, series_col="unique_id", period_col="ds", value_col="y", freq="MS")
    del frame
    phases["from_long"] = time.perf_counter() - t
    t = time.perf_counter()
    protocol = tycheon.RollingOrigin(horizon=HORIZON, stride=STRIDE, n_origins=WINDOWS, mode="analysis")
    factories = {name: tycheon.forecaster_factory(name, **params) for name, (params, _, _) in ROSTER.items()}
    scores = tycheon.run(panel, protocol, factories, quantile_levels=(), backend=backend, n_jobs=n_jobs)
    phases["backtest"] = time.perf_counter() - t
    return phases, scores


def _statsforecast(path: str, *, n_jobs: int) -> tuple[dict[str, float], object]:
    import warnings

    phases: dict[str, float] = {}
    t = time.perf_counter()
    import pandas as pd
    import statsforecast.models as sfm
    from statsforecast import StatsForecast

    phases["import"] = time.perf_counter() - t
    t = time.perf_counter()
    frame = pd.read_parquet(path)
    phases["read"] = time.perf_counter() - t
    t = time.perf_counter()
    models = [getattr(sfm, cls)(*args) for _, cls, args in ROSTER.values()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "shorter than season_length" once per short series
        cv = StatsForecast(models=models, freq="MS", n_jobs=n_jobs).cross_validation(
            df=frame, h=HORIZON, step_size=STRIDE, n_windows=WINDOWS
        )
    phases["backtest"] = time.perf_counter() - t
    return phases, cv


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cold_child.py")
    parser.add_argument("side", choices=["tycheon", "statsforecast"])
    parser.add_argument("frame")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    if args.side == "tycheon":
        phases, result = _tycheon(args.frame, n_jobs=args.n_jobs, backend=args.backend)
        rows = len(result.table)  # type: ignore[attr-defined]
    else:
        phases, result = _statsforecast(args.frame, n_jobs=args.n_jobs)
        rows = len(result)  # type: ignore[arg-type]
    phases["process"] = time.perf_counter() - T0
    workers = [p for p in (_peak_gib(c) for c in _children(os.getpid())) if p is not None]
    report = {"phase_s": phases, "main_peak_gib": _peak_gib(os.getpid()), "workers_peak_gib": workers, "rows": rows}
    print(json.dumps(report), flush=True)
    if args.out:
        if args.side == "tycheon":
            table = result.table  # type: ignore[attr-defined]
            table[["model", "series_id", "origin", "target_period", "point"]].to_parquet(args.out)
        else:
            result.to_parquet(args.out)  # type: ignore[attr-defined]
    return 0


if __name__ == "__main__":
    sys.exit(main())
