"""Cold is what users get: each side as a fresh whole process, timed from the parent, with its tree's memory.

A user runs a backtest once, in a new interpreter: import the library, build its input from a long frame,
run. :func:`compare_cold` writes the panel's long frame (``unique_id, ds, y``) to a parquet file once and
then starts :mod:`benchmarks.perf.cold_child` (as a script) for tycheon and for statsforecast
``cross_validation``, alternating, after one untimed warm-up process per side (it fills the OS file cache
and the compiled-code caches on disk, as any second use would find them). A run's time is the wall
time from starting the process to its report line (interpreter start, imports, reading the frame,
``Panel.from_long``, the backtest, worker start-up and shut-down where the backend has workers); the
median of ``repeats`` runs per side is compared.

Memory: a thread samples the resident set of the child and every descendant (its workers) from
``/proc/<pid>/statm`` every :data:`SAMPLE_S` seconds and keeps the largest sum; the child's own
``VmHWM`` (exact) and its live workers' ``VmHWM`` are reported too, and the tree's peak is the larger of
the sampled sum and ``main VmHWM + workers' VmHWM``. The last repeat of each side writes its forecasts
(after its report line, outside the timing) so the two cold results are checked to agree to 1e-9.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from benchmarks.perf.backtest import agreement, long_frame
from benchmarks.perf.memory import descendants
from tycheon.data.panel import Panel

__all__ = ["SAMPLE_S", "ColdRun", "TreePeak", "compare_cold", "cold_run", "tree_rss_gib"]

SAMPLE_S = 0.05
CHILD = Path(__file__).with_name("cold_child.py")
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def tree_rss_gib(pid: int) -> float:
    """Resident set of ``pid`` and all its live descendants, summed (``/proc/<pid>/statm``), in GiB."""
    total = 0
    for p in [pid, *descendants(pid)]:
        try:
            total += int(Path(f"/proc/{p}/statm").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
    return total * _PAGE / 2**30


class TreePeak:
    """The largest :func:`tree_rss_gib` of a running process, sampled every :data:`SAMPLE_S` seconds by a
    thread from :meth:`start` until :meth:`stop` (0.0 where there is no ``/proc``); ``at`` is the
    ``time.time()`` of the sample that set it (None before any sample)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.gib = 0.0
        self.at: float | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._done.is_set():
            if sys.platform.startswith("linux"):
                gib = tree_rss_gib(self.pid)
                if gib > self.gib:
                    self.gib, self.at = gib, time.time()
            self._done.wait(SAMPLE_S)

    def start(self) -> TreePeak:
        self._thread.start()
        return self

    def stop(self) -> float:
        self._done.set()
        self._thread.join()
        return self.gib


@dataclass
class ColdRun:
    """One cold process: wall seconds to its report, its phases, and its memory."""

    side: str
    wall_s: float
    phases: dict[str, float]
    sampled_tree_gib: float
    main_gib: float
    workers_gib: list[float] = field(default_factory=list)
    rows: int = 0

    @property
    def tree_gib(self) -> float:
        return max(self.sampled_tree_gib, self.main_gib + sum(self.workers_gib))


def cold_run(side: str, frame: Path, *, n_jobs: int, backend: str = "auto", out: Path | None = None) -> ColdRun:
    """Start one fresh process for ``side`` and measure it (see the module docstring)."""
    cmd = [sys.executable, str(CHILD), side, str(frame), "--n-jobs", str(n_jobs), "--backend", backend]
    if out is not None:
        cmd += ["--out", str(out)]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    sampler = TreePeak(proc.pid).start()
    assert proc.stdout is not None
    report: dict[str, Any] | None = None
    for line in proc.stdout:
        if line.startswith("{"):
            report = json.loads(line)
            break
    wall = time.perf_counter() - t0
    peak = sampler.stop()
    proc.stdout.read()
    code = proc.wait()
    if report is None or code != 0:
        raise RuntimeError(f"cold {side} process failed (exit {code}): {' '.join(cmd)}")
    return ColdRun(
        side,
        wall,
        report["phase_s"],
        peak,
        float(report["main_peak_gib"] or 0.0),
        [float(w) for w in report["workers_peak_gib"]],
        int(report["rows"]),
    )


def compare_cold(
    panel: Panel, *, repeats: int, n_jobs: int = 2, backend: str = "auto"
) -> tuple[dict[str, list[ColdRun]], dict[str, dict[str, Any]]]:
    """Alternating cold runs of both sides (after one warm-up each); returns the runs per side and the
    agreement of the last runs' forecasts (:func:`benchmarks.perf.backtest.agreement`)."""
    runs: dict[str, list[ColdRun]] = {"tycheon": [], "statsforecast": []}
    with tempfile.TemporaryDirectory(prefix="tycheon-cold-") as tmp:
        frame = Path(tmp) / "long.parquet"
        long_frame(panel).to_parquet(frame)
        outs = {side: Path(tmp) / f"{side}.parquet" for side in runs}
        for side in runs:
            cold_run(side, frame, n_jobs=n_jobs, backend=backend)  # warm-up, untimed
        for r in range(repeats):
            last = r == repeats - 1
            for side in runs:
                runs[side].append(
                    cold_run(side, frame, n_jobs=n_jobs, backend=backend, out=outs[side] if last else None)
                )
        ours = pd.read_parquet(outs["tycheon"])
        cv = pd.read_parquet(outs["statsforecast"])
        agree = agreement(ours, cv)
    return runs, agree


def median(values: list[float]) -> float:
    return float(statistics.median(values))
