"""``python -m benchmarks.perf.evaluate_cli``: ``tycheon evaluate`` cold on a synthetic intermittent panel.

Issue 15's target: a 5,000 x 84 monthly intermittent panel with the default roster, cold (fresh process,
empty output folder, no cache), under 3 minutes on 2 cores with a peak RSS under 3 GiB. The command runs
in a subprocess pinned to ``--cores`` cores (``taskset`` where available) and includes everything a user
waits for: reading the CSV, the plan, every model through the pipeline, the results version, the render
and the strict mkdocs build. Memory is reported two ways: the largest single process
(``RUSAGE_CHILDREN`` max RSS) and the peak of the whole process tree's summed RSS, sampled every 0.2 s
with psutil (the worker processes count too).

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


def _tree_rss(pid: int) -> int:
    import psutil

    try:
        proc = psutil.Process(pid)
        procs = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf.evaluate_cli", description=__doc__)
    parser.add_argument("--n-series", type=int, default=5000)
    parser.add_argument("--n-periods", type=int, default=84)
    parser.add_argument("--cores", type=int, default=2, help="cores to pin the command to (and --jobs)")
    parser.add_argument("--models", default="default")
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
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        peak = [0]

        def sample() -> None:
            while proc.poll() is None:
                peak[0] = max(peak[0], _tree_rss(proc.pid))
                time.sleep(0.2)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        out, err = proc.communicate()
        seconds = time.perf_counter() - t0
        sampler.join()
        largest = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024 / 2**30
        tree = peak[0] / 2**30
    print(
        f"tycheon evaluate, cold, {args.n_series} x {args.n_periods} monthly intermittent, models={args.models}, "
        f"{args.cores} core(s): exit {proc.returncode}"
    )
    print(f"  wall {seconds:.1f} s (target < {TARGET_SECONDS:g} s: {'met' if seconds < TARGET_SECONDS else 'MISSED'})")
    print(
        f"  peak RSS: largest process {largest:.2f} GiB; process tree (summed, sampled) {tree:.2f} GiB "
        f"(target < {TARGET_GIB:g} GiB: {'met' if max(largest, tree) < TARGET_GIB else 'MISSED'})"
    )
    plan = [line for line in err.splitlines() if line.startswith("tycheon: ")]
    print("\n".join(f"  {line}" for line in plan[:4]))
    print("\n".join(f"  {line}" for line in out.splitlines()[:8]))
    if proc.returncode != 0:
        print(err[-2000:], file=sys.stderr)
    return 0 if proc.returncode == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
