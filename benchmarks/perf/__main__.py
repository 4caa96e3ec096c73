"""``python -m benchmarks.perf [--quick]``: every comparison, one line each, then the peak RSS.

Full run: the 30,490-series panel, medians of 3 repeats: the backtest against statsforecast
``cross_validation`` warm (in this process) and cold (each side a fresh whole process, alternating,
:mod:`.cold`), with the peak resident set of each side's process tree; the statistics check; the memory
check in a subprocess; the whole ``m5scale`` study (backtest, statistics and analyses, results, render,
site; :mod:`.study`) and README command 1. Lines with a target end in ``target ...: PASS`` or ``MISS``.
``--quick``: a small panel, 1 repeat, small statistics inputs, no study or end-to-end run (for tests and
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
# issue 21's targets (2 cores)
WARM_TARGET = 10.0  # warm speedup over statsforecast cross_validation, at least
COLD_TARGET = 4.0  # cold whole-process speedup, at least
TREE_TARGET_GIB = 1.5  # peak RSS of the backtest's process tree (main + workers) at 30,490 series, at most
STUDY_TARGET_S = 300.0  # the whole m5scale run (backtest, analyses, results, site), under
STUDY_PEAK_GIB = 3.0  # its peak RSS, whole process tree, under
SITE_TARGET_S = 60.0  # its site build, under
JSON_TARGET_MB = 20.0  # its results JSON, under


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small panel, one repeat, no end-to-end run")
    parser.add_argument("--n-series", type=int, default=None, help="panel size (overrides the preset)")
    parser.add_argument("--repeats", type=int, default=None, help="timed runs per side (median reported)")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=["statsforecast", "cold", "sktime", "stats", "memory", "study", "end_to_end"],
    )
    parser.add_argument("--study-config", default="m5scale", help="benchmark config of the study stage")
    args = parser.parse_args(argv)
    preset = dict(QUICK if args.quick else FULL)
    if args.n_series is not None:
        preset["n_series"] = args.n_series
    if args.repeats is not None:
        preset["repeats"] = args.repeats
    skip = set(args.skip) | ({"end_to_end", "study"} if args.quick else set())

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
    results: list[bool] = []  # every target line's verdict
    memory_ok = True
    if "statsforecast" not in skip:
        comps, scores, agree, medians = compare_statsforecast(
            panel,
            warm_panel=warm,
            repeats=preset["repeats"],
            n_jobs=args.n_jobs,
            backends=("auto", "joblib", "sequential"),
        )
        for c in comps:
            print(c.line(), flush=True)
            for note in c.notes:
                print(f"  {note}")
        best = max(comps, key=lambda c: c.speedup or 0.0)
        warm_ok = (best.speedup or 0.0) >= WARM_TARGET and best.ok
        print(
            f"warm backtest vs statsforecast cross_validation: {best.speedup:.1f}x (best backend: "
            f"{best.name.split('tycheon ')[1].split(',')[0]}), forecasts agree to 1e-9: {best.ok}; "
            f"target >= {WARM_TARGET:g}x: {verdict(warm_ok)}",
            flush=True,
        )
        print(f"  agreement with statsforecast per model ({len(scores.table)} tycheon rows):")
        print("\n".join(format_agreement(agree)), flush=True)
        comparisons += comps
        results.append(warm_ok)
        if "sktime" not in skip:
            best = min(medians["joblib"], medians["sequential"])
            from benchmarks.perf.sktime_peer import compare_sktime

            for c in compare_sktime(panel, scores, tycheon_s=best, n_series=preset["sktime_series"]):
                print(c.line())
                for note in c.notes:
                    print(f"  {note}", flush=True)
                comparisons.append(c)
        del scores
    if "cold" not in skip:
        results += _cold(panel, repeats=preset["repeats"], n_jobs=args.n_jobs)
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
    if "study" not in skip:
        results += _study(args.study_config)
    if "end_to_end" not in skip:
        from benchmarks.perf.end_to_end import time_end_to_end

        c = time_end_to_end()
        print(c.line())
        for note in c.notes:
            print(f"  {note}", flush=True)
        comparisons.append(c)
    # --quick: the target lines are printed, but at that size they say nothing, so only agreement and
    # failures decide the exit code
    ok = memory_ok and all(c.ok for c in comparisons) and (args.quick or all(results))
    print(f"peak RSS of this process: {peak_rss_gib():.2f} GiB")
    print("all checks passed" if ok else "some checks FAILED or targets were MISSED (see above)")
    return 0 if ok else 1


def _cold(panel, *, repeats: int, n_jobs: int) -> list[bool]:  # type: ignore[no-untyped-def]
    """The cold comparison's lines (see :mod:`.cold`); returns their verdicts."""
    import statistics

    from benchmarks.perf.backtest import format_agreement
    from benchmarks.perf.cold import compare_cold

    runs, agree = compare_cold(panel, repeats=max(3, repeats) if panel.n_series >= 10000 else repeats, n_jobs=n_jobs)
    ours, theirs = runs["tycheon"], runs["statsforecast"]
    t_ours = statistics.median(r.wall_s for r in ours)
    t_theirs = statistics.median(r.wall_s for r in theirs)
    agree_ok = all(a["disagree"] == 0 and a["common"] > 0 for a in agree.values())
    speedup = t_theirs / t_ours
    cold_ok = speedup >= COLD_TARGET and agree_ok
    print(
        f"cold backtest vs statsforecast cross_validation [{panel.n_series} series, fresh whole processes, "
        f"alternating, median of {len(ours)}; tycheon backend=auto, n_jobs={n_jobs}]: tycheon={t_ours:.2f}s "
        f"peer={t_theirs:.2f}s speedup={speedup:.1f}x, forecasts agree to 1e-9: {agree_ok}; "
        f"target >= {COLD_TARGET:g}x: {verdict(cold_ok)}",
        flush=True,
    )
    print(f"  times tycheon={[round(r.wall_s, 2) for r in ours]} statsforecast={[round(r.wall_s, 2) for r in theirs]}")
    phases = {k: round(statistics.median(r.phases.get(k, 0.0) for r in ours), 2) for k in ours[0].phases}
    print(f"  tycheon phases (medians, s): {phases}")
    phases = {k: round(statistics.median(r.phases.get(k, 0.0) for r in theirs), 2) for k in theirs[0].phases}
    print(f"  statsforecast phases (medians, s): {phases}")
    print("\n".join(format_agreement(agree)), flush=True)
    tree = max(r.tree_gib for r in ours)
    tree_ok = tree <= TREE_TARGET_GIB or panel.n_series < 30490
    print(
        f"peak RSS of the cold backtest's process tree (main + workers) [{panel.n_series} series]: tycheon "
        f"{tree:.2f} GiB (main {max(r.main_gib for r in ours):.2f}), statsforecast "
        f"{max(r.tree_gib for r in theirs):.2f} GiB; target <= {TREE_TARGET_GIB:g} GiB at 30490 series: "
        f"{verdict(tree_ok) if panel.n_series >= 30490 else 'n/a at this size'}",
        flush=True,
    )
    return [cold_ok, tree_ok]


def _study(config: str) -> list[bool]:
    """The whole-study lines (see :mod:`.study`); returns their verdicts."""
    from benchmarks.perf.study import run_study

    return study_lines(run_study(config), config=config)


def study_lines(r: dict, *, config: str) -> list[bool]:  # type: ignore[type-arg]
    """Print the whole-study lines of a :func:`benchmarks.perf.study.run_study` report; their verdicts."""
    site = r["site_build_s"]
    checks = [
        (
            r["wall_s"] < STUDY_TARGET_S,
            f"whole {config} run (backtest, analyses, results, render, site): "
            f"{r['wall_s']:.1f}s; target < {STUDY_TARGET_S:g}s",
        ),
        (
            r["tree_peak_gib"] < STUDY_PEAK_GIB,
            f"peak RSS of the whole {config} run (process tree, sampled): "
            f"{r['tree_peak_gib']:.2f} GiB (in stage: {r.get('tree_peak_stage') or 'unknown'}); "
            f"target < {STUDY_PEAK_GIB:g} GiB",
        ),
        (
            site is not None and site < SITE_TARGET_S,
            f"{config} site build (mkdocs build --strict): "
            + ("not built (mkdocs missing)" if site is None else f"{site:.1f}s")
            + f"; target < {SITE_TARGET_S:g}s",
        ),
        (
            r["json_mb"] < JSON_TARGET_MB,
            f"{config} results JSON: {r['json_mb']:.2f} MB (score parts "
            f"{r['parts_mb']:.1f} MB, {r['rows']} rows); target < {JSON_TARGET_MB:g} MB",
        ),
    ]
    print(
        f"{config} stages: backtest {r['backtest_s']:.1f}s, statistics + analyses {r['statistics_analyses_s']:.1f}s, "
        f"results writing {r['results_write_s']:.1f}s, render (re-verifies every table) {r['render_s']:.1f}s",
        flush=True,
    )
    stages = r.get("pipeline_stages") or {}
    if stages:  # the pipeline's own marks: where the statistics stage's time and memory go
        parts = ", ".join(f"{k} {v['seconds']:.1f}s/{v['peak_gib']:.2f} GiB" for k, v in stages.items())
        print(f"  {config} pipeline stages (seconds / main-process peak): {parts}", flush=True)
    for ok, text in checks:
        print(f"{text}: {verdict(ok)}", flush=True)
    return [ok for ok, _ in checks]


if __name__ == "__main__":
    sys.exit(main())
