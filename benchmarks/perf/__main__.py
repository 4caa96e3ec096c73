"""``python -m benchmarks.perf [--quick]``: every comparison, one line each, then the peak RSS.

Full run: the 30,490-series panel, medians of 3 repeats, the memory check in a subprocess and README
command 1. ``--quick``: a small panel, 1 repeat, small statistics inputs, no end-to-end run (for tests and
smoke checks; its numbers say nothing about the targets).
"""

from __future__ import annotations

import argparse
import os
import sys

__all__ = ["main"]

FULL = {"n_series": 30490, "repeats": 3, "sktime_series": 40, "dm_series": 29167, "blocks": 232651}
QUICK = {"n_series": 300, "repeats": 1, "sktime_series": 2, "dm_series": 300, "blocks": 2000}
WARM_SERIES = 200
MEMORY_TARGET_GIB = 4.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small panel, one repeat, no end-to-end run")
    parser.add_argument("--n-series", type=int, default=None, help="panel size (overrides the preset)")
    parser.add_argument("--repeats", type=int, default=None, help="timed runs per side (median reported)")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument(
        "--skip", action="append", default=[], choices=["statsforecast", "sktime", "stats", "memory", "end_to_end"]
    )
    args = parser.parse_args(argv)
    preset = dict(QUICK if args.quick else FULL)
    if args.n_series is not None:
        preset["n_series"] = args.n_series
    if args.repeats is not None:
        preset["repeats"] = args.repeats
    skip = set(args.skip) | ({"end_to_end"} if args.quick else set())

    from benchmarks.perf.backtest import compare_statsforecast, format_agreement
    from benchmarks.perf.common import HORIZON, N_ORIGINS, N_PERIODS, STRIDE, build_cv_panel, peak_rss_gib

    print(
        f"machine: {os.cpu_count()} cores; panel {preset['n_series']} series x {N_PERIODS} months, "
        f"{N_ORIGINS} origins, stride {STRIDE}, horizon {HORIZON}; medians of {preset['repeats']} run(s) after "
        "one warm-up",
        flush=True,
    )
    panel = build_cv_panel(preset["n_series"])
    warm = build_cv_panel(WARM_SERIES, seed=1)
    comparisons = []
    memory_ok = True
    if "statsforecast" not in skip:
        comps, scores, agree, medians = compare_statsforecast(
            panel, warm_panel=warm, repeats=preset["repeats"], n_jobs=args.n_jobs, backends=("joblib", "sequential")
        )
        for c in comps:
            print(c.line(), flush=True)
            for note in c.notes:
                print(f"  {note}")
        print(f"  agreement with statsforecast per model ({len(scores.table)} tycheon rows):")
        print("\n".join(format_agreement(agree)), flush=True)
        comparisons += comps
        if "sktime" not in skip:
            best = min(medians["joblib"], medians["sequential"])
            from benchmarks.perf.sktime_peer import compare_sktime

            for c in compare_sktime(panel, scores, tycheon_s=best, n_series=preset["sktime_series"]):
                print(c.line())
                for note in c.notes:
                    print(f"  {note}", flush=True)
                comparisons.append(c)
        del scores
    if "stats" not in skip:
        from benchmarks.perf.stats_scale import compare_stats

        c = compare_stats(n_series=preset["dm_series"], n_blocks=preset["blocks"], repeats=preset["repeats"])
        print(c.line())
        for note in c.notes:
            print(f"  {note}", flush=True)
        comparisons.append(c)
    if "memory" not in skip:
        from benchmarks.perf.memory import measure

        for backend, kind in (("joblib", "cv"), ("sequential", "cv"), ("sequential", "plain")):
            m = measure(n_series=preset["n_series"], backend=backend, n_jobs=args.n_jobs, panel=kind)
            whole = m["main_gib"] + m["workers_sum_gib"]  # every process's own peak, added up
            met = whole < MEMORY_TARGET_GIB
            memory_ok = memory_ok and met
            print(
                f"memory[{preset['n_series']} series, {kind} panel, {backend}]: main peak RSS "
                f"{m['main_gib']:.2f} GiB, largest worker {m['worker_gib']:.2f} GiB, whole run <= "
                f"{whole:.2f} GiB ({m['rows']} rows, {m['seconds']:.1f}s); target < {MEMORY_TARGET_GIB:g} GiB: "
                f"{'met' if met else 'MISSED'}",
                flush=True,
            )
    if "end_to_end" not in skip:
        from benchmarks.perf.end_to_end import time_end_to_end

        c = time_end_to_end()
        print(c.line())
        for note in c.notes:
            print(f"  {note}", flush=True)
        comparisons.append(c)
    ok = memory_ok and all(c.ok for c in comparisons)
    print(f"peak RSS of this process: {peak_rss_gib():.2f} GiB")
    print("all checks passed" if ok else "some checks FAILED or targets were MISSED (see above)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
