"""Peak RSS of one backtest of the roster in a clean subprocess.

``python -m benchmarks.perf.memory --n-series N --backend joblib --n-jobs 2`` builds the panel, runs the
roster once, shuts the joblib workers down (so that their peak is counted in ``RUSAGE_CHILDREN``) and
prints one JSON line: the main process's peak and the largest worker's peak, in GiB. ``ru_maxrss`` of
children is the largest single child, not a sum: the bound on the whole run is ``main + n_jobs x worker``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

__all__ = ["measure", "main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf.memory")
    parser.add_argument("--n-series", type=int, required=True)
    parser.add_argument("--backend", default="joblib")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--panel", choices=["cv", "plain"], default="cv",
                        help="cv: the timed panel (series statsforecast accepts); plain: the generator's panel")
    args = parser.parse_args(argv)
    from benchmarks.perf.backtest import run_tycheon
    from benchmarks.perf.common import build_cv_panel, build_panel, peak_rss_gib

    panel = build_cv_panel(args.n_series) if args.panel == "cv" else build_panel(args.n_series)
    t0 = time.perf_counter()
    scores = run_tycheon(panel, backend=args.backend, n_jobs=args.n_jobs)
    seconds = time.perf_counter() - t0
    if args.backend == "joblib":
        from joblib.externals.loky import get_reusable_executor

        get_reusable_executor().shutdown(wait=True)
    print(json.dumps({"main_gib": peak_rss_gib(resource.RUSAGE_SELF),
                      "worker_gib": peak_rss_gib(resource.RUSAGE_CHILDREN),
                      "rows": len(scores.table), "seconds": seconds}))
    return 0


def measure(*, n_series: int, backend: str, n_jobs: int, panel: str = "cv") -> dict[str, float]:
    """Run :func:`main` in a fresh interpreter and return its JSON report."""
    out = subprocess.run([sys.executable, "-m", "benchmarks.perf.memory", "--n-series", str(n_series),
                          "--backend", backend, "--n-jobs", str(n_jobs), "--panel", panel],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    sys.exit(main())
