"""``python -m benchmarks.run --config small [--if-new] [--no-cache]``: run a benchmark and write the next
append-only results version under ``benchmarks/results/<name>/``.

``--if-new`` does nothing (exit 0) when a results version already exists for this exact benchmark config,
model configs, dataset manifest and code (their sha256 in the provenance), and runs otherwise. Ctrl-C
leaves no partial version: the files are written only at the end, atomically.

Before computing, the run takes the results directory's lock (a second run refuses at once, exit 3).
``--verify-cache FRACTION`` recomputes that share of the cache hits and stops (exit 1) if one differs bit
for bit. A run in which the random walk or the production baseline failed, or that built no table, writes
nothing and exits 1 naming the failures.

With ``backend = "dask"`` the run starts a local Dask cluster sized to the machine and shuts it down when
it ends (also on an error or Ctrl-C); ``--scheduler tcp://HOST:PORT`` (or the config's ``scheduler``)
uses an existing cluster instead, which is never shut down (:mod:`benchmarks.cluster`). A cluster that
cannot be reached within ``--connect-timeout`` seconds, or whose workers run another tycheon, writes
nothing and exits 1.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from benchmarks import memory_policy
from benchmarks.cache import CACHE_DIR, ScoreCache
from benchmarks.cluster import CONNECT_TIMEOUT_SECONDS, ClusterError, dask_client, parse_scheduler_address
from benchmarks.config import ConfigError, resolve_benchmark_config
from benchmarks.results_io import RESULTS_DIR, existing_versions, read_results, write_results
from tycheon.textsafe import terminal_safe_output

if TYPE_CHECKING:
    from benchmarks.results_model import ModelRun

__all__ = ["ProgressLines", "find_same_run", "main"]


class ProgressLines:
    """One line per finished (dataset, protocol, model) on ``stream``: the count so far, the wall time since
    the run started, its status, where it came from (computed, cache, skipped) and its model seconds. A
    killed run's finished models are in the cache, so the rerun's lines for them say ``cache``."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream
        self.done = 0
        self.started = time.perf_counter()

    def __call__(self, label: str, record: ModelRun, source: str) -> None:
        self.done += 1
        seconds = sum(v for v in record.timings.values() if v is not None)
        elapsed = time.perf_counter() - self.started
        print(
            f"[benchmarks.run] {self.done} done, {elapsed:.0f} s: {label} {record.status} ({source}, "
            f"model {seconds:.1f} s)" + (f": {record.reason}" if record.status != "ran" and record.reason else ""),
            file=self.stream or sys.stderr,
            flush=True,
        )


def find_same_run(results_dir: Path, name: str, fingerprint: dict[str, object]) -> Path | None:
    """An existing version whose provenance matches ``fingerprint`` on every key, or None."""
    for path in existing_versions(results_dir / name):
        try:
            prov = read_results(path).provenance
        except (OSError, ValueError):  # unreadable or off-model: not the same run
            continue
        if all(getattr(prov, k, None) == v for k, v in fingerprint.items()):
            return path
    return None


def main(argv: list[str] | None = None) -> int:
    """The command; everything it prints goes through :func:`tycheon.textsafe.for_terminal` (no id, name or
    reason from a config can carry an escape sequence to the terminal)."""
    with terminal_safe_output():
        return _main(argv)


def _main(argv: list[str] | None = None) -> int:
    memory_policy.apply()  # numpy's huge-page advice off for the run (benchmarks.memory_policy)
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__)
    parser.add_argument("--config", required=True, help="config name under benchmarks/configs/ or a .toml path")
    parser.add_argument("--if-new", action="store_true", help="skip if this config+code already has results")
    parser.add_argument("--no-cache", action="store_true", help="recompute every (dataset, model)")
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    parser.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    parser.add_argument("--models-dir", type=Path, default=None)
    parser.add_argument(
        "--verify-cache",
        type=float,
        default=0.0,
        metavar="FRACTION",
        help="recompute this share (0..1) of cache hits and compare bit for bit (publishing runs)",
    )
    parser.add_argument(
        "--scheduler",
        default=None,
        metavar="tcp://HOST:PORT",
        help="run the engine's tasks on this existing Dask cluster (needs backend = 'dask'; overrides the "
        "config's scheduler); default for backend = 'dask': a local cluster sized to the machine",
    )
    parser.add_argument(
        "--connect-timeout",
        type=float,
        default=CONNECT_TIMEOUT_SECONDS,
        metavar="SECONDS",
        help=f"seconds to reach the Dask scheduler and its first worker (default {CONNECT_TIMEOUT_SECONDS:g})",
    )
    parser.add_argument("--progress", action="store_true")
    args = parser.parse_args(argv)
    if args.scheduler is not None:
        try:
            parse_scheduler_address(args.scheduler)
        except ValueError as err:
            print(f"--scheduler: {err}", file=sys.stderr)
            return 2
    if not args.connect_timeout > 0:
        print(f"--connect-timeout: must be a positive number of seconds, got {args.connect_timeout}", file=sys.stderr)
        return 2
    from benchmarks import config as config_module

    try:
        path, cfg, models = resolve_benchmark_config(
            args.config, models_dir=args.models_dir or config_module.MODELS_DIR
        )
    except ConfigError as err:
        print(f"config error: {err}", file=sys.stderr)
        return 2
    scheduler = args.scheduler if args.scheduler is not None else cfg.scheduler
    if scheduler is not None and cfg.backend != "dask":
        print(
            f"--scheduler: {scheduler} is only used with backend = 'dask'; {path} has backend = {cfg.backend!r}",
            file=sys.stderr,
        )
        return 2
    from benchmarks.pipeline import MANIFEST, RunInputs, build_results
    from benchmarks.provenance import fingerprint as run_fingerprint

    fingerprint = run_fingerprint(path, models, MANIFEST)
    if args.if_new:
        same = find_same_run(args.results_dir, cfg.name, fingerprint)
        if same is not None:
            print(f"[benchmarks.run] {cfg.name}: results for this exact config and code exist ({same}); nothing to do")
            return 0
    from benchmarks.cache import CacheMismatchError
    from benchmarks.run_guard import ResultsLocked, ranking_failures, results_lock

    try:
        cache = ScoreCache(
            args.cache_dir, enabled=not args.no_cache, verify_fraction=args.verify_cache, verify_seed=cfg.seed
        )
    except ValueError as err:
        print(f"--verify-cache: {err}", file=sys.stderr)
        return 2
    try:
        with (
            results_lock(args.results_dir / cfg.name),
            dask_client(backend=cfg.backend, scheduler=scheduler, timeout=args.connect_timeout) as client,
        ):
            inputs = RunInputs(
                path, cfg, models, cache, args.progress, dask_client=client, on_model_done=ProgressLines()
            )
            doc, sidecar = build_results(inputs)
            problems = ranking_failures(doc, random_walk=cfg.random_walk, production_baseline=cfg.production_baseline)
            if problems:
                print(
                    f"[benchmarks.run] {cfg.name}: nothing written; this run cannot rank:\n  - "
                    + "\n  - ".join(problems),
                    file=sys.stderr,
                )
                return 1
            out = write_results(doc, sidecar, results_dir=args.results_dir)
    except ResultsLocked as err:
        print(f"[benchmarks.run] refused: {err}", file=sys.stderr)
        return 3
    except ClusterError as err:
        print(f"[benchmarks.run] nothing written; the Dask cluster cannot be used: {err}", file=sys.stderr)
        return 1
    except CacheMismatchError as err:
        print(f"[benchmarks.run] nothing written; the score cache failed verification: {err}", file=sys.stderr)
        return 1
    runtime = doc.provenance.timings["runtime_seconds"]
    print(f"[benchmarks.run] wrote {out} ({len(sidecar)} scored records, {runtime:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
