"""``python -m benchmarks.perf.evaluate_cli``: ``tycheon evaluate`` cold on a synthetic intermittent panel.

Issue 15's target: a 5,000 x 84 monthly intermittent panel with the default roster, cold (fresh process,
empty output folder, no cache), under 3 minutes on 2 cores with a peak RSS under 3 GiB. The command runs
in a subprocess pinned to ``--cores`` cores (``taskset`` where available) and includes everything a user
waits for: reading the CSV, the plan, every model through the pipeline, the results version, the render
and the strict mkdocs build. Memory is reported two ways: the largest single process (the largest of
``RUSAGE_CHILDREN`` max RSS, every process's sampled ``VmHWM`` and the main process's stage peaks) and
the peak of the whole process tree's summed RSS, sampled every 0.2 s with psutil (the worker processes
count too; a forked child that has not exec'd yet counts by its private pages only,
:func:`benchmarks.perf.memory.tree_rss`).

Unless ``--no-stages``, the run writes a mark at the end of each stage (:func:`benchmarks.perf.memory.
mark_stage`) and the script prints each stage's seconds, the main process's own peak in it and the
process tree's sampled peak in it, so that the stage that sets the peak can be read off.

The panel: for each series, a demand probability p ~ U(0.1, 0.6) per month and gamma(2, mean/2) sizes
with mean ~ U(1, 20), so most series are intermittent or lumpy (seeded, reproducible).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.perf.memory import STAGE_LOG_ENV, TreeSample, read_stage_log, tree_rss

__all__ = ["intermittent_table", "main"]

TARGET_SECONDS = 180.0
TARGET_GIB = 3.0
ROOT = Path(__file__).resolve().parents[2]


def intermittent_table(n_series: int, n_periods: int, *, seed: int = 15) -> pd.DataFrame:
    """A long ``unique_id, ds, y`` table of intermittent monthly demand (see the module docstring)."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.1, 0.6, size=(n_series, 1))
    mean = rng.uniform(1.0, 20.0, size=(n_series, 1))
    occurs = rng.random((n_series, n_periods)) < p
    sizes = np.ceil(rng.gamma(2.0, mean / 2.0, size=(n_series, n_periods)))
    y = np.where(occurs, sizes, 0.0)
    months = pd.date_range("2017-01-01", periods=n_periods, freq="MS")
    return pd.DataFrame(
        {
            "unique_id": np.repeat([f"part{i:05d}" for i in range(n_series)], n_periods),
            "ds": np.tile(months, n_series),
            "y": y.ravel(),
        }
    )


def _gib(n: float) -> str:
    return f"{n / 2**30:.2f}"


def stage_rows(marks: list[dict], samples: list[TreeSample], *, start: float) -> list[tuple[str, float, float, float]]:
    """Per stage of the run (the span up to each mark): seconds, the main process's own peak and the
    sampled peak of the process tree (bytes). The main peak is the ``VmHWM`` the mark recorded (reset at
    every mark); the tree peak is the largest summed sample inside the stage's span."""
    rows, t0 = [], start
    for mark in marks:
        t1 = float(mark["t"])
        inside = [s.rss for s in samples if t0 <= s.t <= t1]
        main_peak = float(mark["hwm_kb"] or 0) * 1024
        rows.append((str(mark["stage"]), t1 - t0, main_peak, max(inside, default=0.0)))
        t0 = t1
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf.evaluate_cli", description=__doc__)
    parser.add_argument("--n-series", type=int, default=5000)
    parser.add_argument("--n-periods", type=int, default=84)
    parser.add_argument("--cores", type=int, default=2, help="cores to pin the command to (and --jobs)")
    parser.add_argument("--models", default="default")
    parser.add_argument("--no-stages", action="store_true", help="do not print the peak of each stage")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tycheon-perf-evaluate-") as tmp:
        work = Path(tmp)
        intermittent_table(args.n_series, args.n_periods).to_csv(work / "parts.csv", index=False)
        cmd = [
            sys.executable,
            "-m",
            "tycheon.cli",
            "evaluate",
            "parts.csv",
            "--jobs",
            str(args.cores),
            "--models",
            args.models,
            "--no-progress",
        ]
        if shutil.which("taskset") and (os.cpu_count() or 1) >= args.cores:
            cmd = ["taskset", "-c", ",".join(str(c) for c in range(args.cores)), *cmd]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        env.pop(STAGE_LOG_ENV, None)
        log = work / "stages.jsonl"
        if not args.no_stages:
            env[STAGE_LOG_ENV] = str(log)
        t0 = time.perf_counter()
        start = time.time()
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        samples: list[TreeSample] = []

        def sample() -> None:
            while proc.poll() is None:
                samples.append(tree_rss(proc.pid))
                time.sleep(0.2)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        out, err = proc.communicate()
        seconds = time.perf_counter() - t0
        sampler.join()
        marks = read_stage_log(log)
    # the largest process: ru_maxrss of the waited-for tree, each process's sampled VmHWM, and the main
    # process's per-stage peaks (with stage marks its VmHWM, so its ru_maxrss, is reset at every mark)
    rows = stage_rows(marks, samples, start=start)
    largest = max(
        [resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024.0]
        + [float(p) for s in samples for p in s.peaks.values()]
        + [r[2] for r in rows]
    )
    tree = max((s.rss for s in samples), default=0)
    print(
        f"tycheon evaluate, cold, {args.n_series} x {args.n_periods} monthly intermittent, models={args.models}, "
        f"{args.cores} core(s): exit {proc.returncode}"
    )
    print(f"  wall {seconds:.1f} s (target < {TARGET_SECONDS:g} s: {'met' if seconds < TARGET_SECONDS else 'MISSED'})")
    print(
        f"  peak RSS: largest process {_gib(largest)} GiB; process tree (summed, sampled) {_gib(tree)} GiB "
        f"(target < {TARGET_GIB:g} GiB: {'met' if max(largest, tree) < TARGET_GIB * 2**30 else 'MISSED'})"
    )
    if rows:
        print("  stages (seconds, main process peak GiB, process tree peak GiB):")
        print("\n".join(f"    {name:<28} {sec:7.1f} {_gib(m):>6} {_gib(t):>6}" for name, sec, m, t in rows))
    plan = [line for line in err.splitlines() if line.startswith("tycheon: ")]
    print("\n".join(f"  {line}" for line in plan[:4]))
    print("\n".join(f"  {line}" for line in out.splitlines()[:8]))
    if proc.returncode != 0:
        print(err[-2000:], file=sys.stderr)
    return 0 if proc.returncode == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
