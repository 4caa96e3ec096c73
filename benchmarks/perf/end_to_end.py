"""README command 1 end to end: ``python -m benchmarks.run --config small``, timed once in a subprocess.

Results and cache go to a temporary directory (``--results-dir``/``--cache-dir``, ``--no-cache``): the perf
script never writes into ``benchmarks/results/``. Fresh set-up (installing, downloading data) is excluded.
Target (issue 9): under 10 minutes.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.perf.common import Comparison

__all__ = ["TARGET_SECONDS", "time_end_to_end"]

TARGET_SECONDS = 600.0


def time_end_to_end(config: str = "small", *, timeout: float = 1800.0) -> Comparison:
    with tempfile.TemporaryDirectory(prefix="tycheon-perf-") as tmp:
        cmd = [
            sys.executable,
            "-m",
            "benchmarks.run",
            "--config",
            config,
            "--no-cache",
            "--results-dir",
            str(Path(tmp) / "results"),
            "--cache-dir",
            str(Path(tmp) / "cache"),
        ]
        t0 = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        seconds = time.perf_counter() - t0
    ok = done.returncode == 0 and seconds < TARGET_SECONDS
    # the runner's own last line (stdout) on success; the error's last line (stderr) on failure
    text = done.stdout if done.returncode == 0 and done.stdout.strip() else done.stderr
    tail = text.strip().splitlines()[-1:] or [""]
    return Comparison(
        name=f"end_to_end[benchmarks.run --config {config}, 1 run]",
        tycheon_s=seconds,
        peer_s=None,
        ok=ok,
        notes=[
            f"exit {done.returncode}; target < {TARGET_SECONDS:g}s: "
            f"{'met' if ok else 'MISSED' if done.returncode == 0 else 'FAILED'}; last line: {tail[0][:200]}"
        ],
    )
