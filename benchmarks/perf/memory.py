"""Peak RSS of one backtest of the roster in a clean subprocess.

``python -m benchmarks.perf.memory --n-series N --backend joblib --n-jobs 2`` builds the panel, runs the
roster once and prints one JSON line: the main process's peak, the largest worker's peak and the sum of
the workers' peaks, in GiB. ``main + workers_sum`` bounds the whole run (the peaks need not coincide).

Peaks are read from ``VmHWM`` in ``/proc/<pid>/status`` (Linux), the high-water mark of the process's own
address space. ``getrusage().ru_maxrss`` is not used there: Linux carries the RSS of the forking parent
into a child across ``exec``, so a measuring subprocess started by a large parent (the perf suite, after
its timed runs) reported the *parent's* size, and a joblib worker reported the main process's size at
spawn time. Elsewhere ``ru_maxrss`` is the fallback.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["measure", "main", "peak_gib"]


def peak_gib(pid: int | None = None) -> float | None:
    """High-water RSS of a process (``VmHWM``) in GiB; None where ``/proc`` does not have it."""
    try:
        text = Path(f"/proc/{pid or os.getpid()}/status").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 2**20  # kB
    return None


def _descendants(pid: int) -> list[int]:
    """Live descendants of ``pid`` from ``/proc/<pid>/stat`` (field 4 is the parent id)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [pid]
    while frontier:
        kids = [child for child, parent in parents.items() if parent in frontier]
        found += kids
        frontier = kids
    return found


def _worker_peaks() -> list[float]:
    """``VmHWM`` of every live descendant (the joblib workers), read before they are shut down."""
    peaks = [peak_gib(child) for child in _descendants(os.getpid())]
    return [p for p in peaks if p is not None]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf.memory")
    parser.add_argument("--n-series", type=int, required=True)
    parser.add_argument("--backend", default="joblib")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument(
        "--panel",
        choices=["cv", "plain"],
        default="cv",
        help="cv: the timed panel (series statsforecast accepts); plain: the generator's panel",
    )
    args = parser.parse_args(argv)
    from benchmarks.perf.backtest import run_tycheon
    from benchmarks.perf.common import build_cv_panel, build_panel, peak_rss_gib

    panel = build_cv_panel(args.n_series) if args.panel == "cv" else build_panel(args.n_series)
    t0 = time.perf_counter()
    scores = run_tycheon(panel, backend=args.backend, n_jobs=args.n_jobs)
    seconds = time.perf_counter() - t0
    workers = _worker_peaks() if sys.platform.startswith("linux") else []
    if args.backend == "joblib":
        from joblib.externals.loky import get_reusable_executor

        get_reusable_executor().shutdown(wait=True)
    main_gib = peak_gib()
    if main_gib is None:  # no /proc: ru_maxrss (which may include a parent's size, see above)
        main_gib = peak_rss_gib(resource.RUSAGE_SELF)
        workers = [peak_rss_gib(resource.RUSAGE_CHILDREN)]
    print(
        json.dumps(
            {
                "main_gib": main_gib,
                "worker_gib": max(workers, default=0.0),
                "workers_sum_gib": float(sum(workers)),
                "rows": len(scores.table),
                "seconds": seconds,
            }
        )
    )
    return 0


def measure(*, n_series: int, backend: str, n_jobs: int, panel: str = "cv") -> dict[str, float]:
    """Run :func:`main` in a fresh interpreter and return its JSON report."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.perf.memory",
            "--n-series",
            str(n_series),
            "--backend",
            backend,
            "--n-jobs",
            str(n_jobs),
            "--panel",
            panel,
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    sys.exit(main())
