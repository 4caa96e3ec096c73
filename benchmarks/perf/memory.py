"""Peak RSS of one backtest of the roster in a clean subprocess.

``python -m benchmarks.perf.memory --n-series N --backend joblib --n-jobs 2`` builds the panel, runs the
roster once and prints one JSON line: the main process's peak, the largest worker's peak and the sum of
the workers' peaks, in GiB. ``main + workers_sum`` bounds the whole run (the peaks need not coincide).

Peaks are read from ``VmHWM`` in ``/proc/<pid>/status`` (Linux), the high-water mark of the process's own
address space. ``getrusage().ru_maxrss`` is not used there: Linux carries the RSS of the forking parent
into a child across ``exec``, so a measuring subprocess started by a large parent (the perf suite, after
its timed runs) reported the *parent's* size, and a joblib worker reported the main process's size at
spawn time. Elsewhere ``ru_maxrss`` is the fallback.

The same module holds the whole-tree probe of the cold end-to-end scripts (:func:`tree_rss`, which
counts a forked child that has not exec'd its own program by its private pages only) and the stage marks
a measured run writes when :data:`STAGE_LOG_ENV` names a file (:func:`mark_stage`).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "STAGE_LOG_ENV",
    "TreeSample",
    "main",
    "mark_stage",
    "measure",
    "peak_gib",
    "read_stage_log",
    "release_heap",
    "tree_rss",
]

#: Environment variable naming the file a measured run appends its stage marks to (one JSON line each).
STAGE_LOG_ENV = "TYCHEON_PERF_STAGES"


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


def _status_kb(pid: int | str = "self") -> dict[str, int]:
    """``VmHWM`` / ``VmRSS`` of a process in kB from ``/proc/<pid>/status`` (empty where there is none)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        key = line.split(":", 1)[0]
        if key in ("VmHWM", "VmRSS"):
            out[key] = int(line.split()[1])
    return out


def release_heap() -> None:
    """Hand freed memory back to the system between the stages of a run: a full ``gc`` pass, pyarrow's
    pool's unused memory where pyarrow is loaded, then glibc's ``malloc_trim(0)`` (freed arrays below
    glibc's adaptive mmap threshold stay in the heap otherwise, and count in the RSS of every later
    stage). The trim (:func:`tycheon.backtest.heap.release_free_memory`) is skipped where the C library is
    not glibc."""
    from tycheon.backtest.heap import release_free_memory

    gc.collect()
    release_free_memory()  # arrow's pool too, where pyarrow is loaded


def mark_stage(name: str) -> None:
    """End the stage ``name`` of a run: :func:`release_heap`, then, when :data:`STAGE_LOG_ENV` names a
    file, append ``{"stage", "t", "hwm_kb", "rss_kb"}`` (the process's peak since the previous mark) and
    reset the peak (``/proc/self/clear_refs``), so the next mark reports its own stage's peak."""
    release_heap()
    path = os.environ.get(STAGE_LOG_ENV)
    if not path:
        return
    status = _status_kb()
    record = {"stage": name, "t": time.time(), "hwm_kb": status.get("VmHWM"), "rss_kb": status.get("VmRSS")}
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
    try:
        Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS (Linux >= 4.0)
    except OSError:
        pass


def read_stage_log(path: Path) -> list[dict[str, float | str | None]]:
    """The stage marks :func:`mark_stage` wrote to ``path``, in order (empty where there is no file)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError:
        return []
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@dataclass(frozen=True)
class TreeSample:
    """One reading of a process tree: when, the summed RSS (bytes), and each process's own peak
    (``VmHWM``, bytes) by pid."""

    t: float
    rss: int
    peaks: dict[int, int]


def tree_rss(pid: int) -> TreeSample:
    """Summed RSS of ``pid`` and its live descendants, and each one's peak.

    A child that has not exec'd its own program (same command line as its parent: ``subprocess`` or
    loky between ``fork`` and ``exec``) shares its parent's pages copy-on-write; its RSS counts them a
    second time (a 1.9 GiB parent read as a 3.9 GiB "tree" for the instant of a fork). Such a child is
    counted by its private pages only (USS), which is what it adds to the machine's memory.
    """
    import psutil

    t = time.time()
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return TreeSample(t, 0, {})
    cmdlines: dict[int, list[str] | None] = {}
    for p in procs:
        try:
            cmdlines[p.pid] = p.cmdline()
        except psutil.Error:
            cmdlines[p.pid] = None
    total, peaks = 0, {}
    for p in procs:
        try:
            own, parent = cmdlines[p.pid], cmdlines.get(p.ppid())
            if p.pid != pid and own is not None and own == parent:  # forked, not exec'd: private pages only
                total += p.memory_full_info().uss
                continue
            total += p.memory_info().rss
            hwm = _status_kb(p.pid).get("VmHWM")
            if hwm is not None:
                peaks[p.pid] = hwm * 1024
        except psutil.Error:
            pass
    return TreeSample(t, total, peaks)


def parent_pids() -> dict[int, int]:
    """Every live process's parent id, from ``/proc/<pid>/stat`` (field 4); empty where there is no ``/proc``."""
    parents: dict[int, int] = {}
    proc = Path("/proc")
    if not proc.is_dir():
        return parents
    for entry in proc.iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    return parents


def descendants(pid: int) -> list[int]:
    """Live descendants of ``pid`` (children, their children, ...)."""
    parents = parent_pids()
    found, frontier = [], [pid]
    while frontier:
        kids = [child for child, parent in parents.items() if parent in frontier]
        found += kids
        frontier = kids
    return found


def _worker_peaks() -> list[float]:
    """``VmHWM`` of every live descendant (the joblib workers), read before they are shut down."""
    peaks = [peak_gib(child) for child in descendants(os.getpid())]
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
    from tycheon.backtest.execution import release_workers

    panel = build_cv_panel(args.n_series) if args.panel == "cv" else build_panel(args.n_series)
    t0 = time.perf_counter()
    scores = run_tycheon(panel, backend=args.backend, n_jobs=args.n_jobs)
    seconds = time.perf_counter() - t0
    workers = _worker_peaks() if sys.platform.startswith("linux") else []
    release_workers()  # the workers end here (the fallback below counts only children that have ended)
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
