"""``python -m benchmarks.run --config small [--if-new] [--no-cache]``: run a benchmark and write the next
append-only results version under ``benchmarks/results/<name>/``.

``--if-new`` does nothing (exit 0) when a results version already exists for this exact benchmark config,
model configs, dataset manifest and code (their sha256 in the provenance), and runs otherwise. Ctrl-C
leaves no partial version: the files are written only at the end, atomically.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.cache import CACHE_DIR, ScoreCache
from benchmarks.config import ConfigError, resolve_benchmark_config
from benchmarks.results_io import RESULTS_DIR, existing_versions, read_results, write_results

__all__ = ["find_same_run", "main"]


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
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__)
    parser.add_argument("--config", required=True, help="config name under benchmarks/configs/ or a .toml path")
    parser.add_argument("--if-new", action="store_true", help="skip if this config+code already has results")
    parser.add_argument("--no-cache", action="store_true", help="recompute every (dataset, model)")
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    parser.add_argument("--cache-dir", type=Path, default=CACHE_DIR)
    parser.add_argument("--models-dir", type=Path, default=None)
    parser.add_argument("--progress", action="store_true")
    args = parser.parse_args(argv)
    from benchmarks import config as config_module

    try:
        path, cfg, models = resolve_benchmark_config(
            args.config, models_dir=args.models_dir or config_module.MODELS_DIR)
    except ConfigError as err:
        print(f"config error: {err}", file=sys.stderr)
        return 2
    from benchmarks.pipeline import MANIFEST, RunInputs, build_results
    from benchmarks.provenance import fingerprint as run_fingerprint

    fingerprint = run_fingerprint(path, models, MANIFEST)
    if args.if_new:
        same = find_same_run(args.results_dir, cfg.name, fingerprint)
        if same is not None:
            print(f"[benchmarks.run] {cfg.name}: results for this exact config and code exist ({same}); nothing to do")
            return 0
    inputs = RunInputs(path, cfg, models, ScoreCache(args.cache_dir, enabled=not args.no_cache), args.progress)
    doc, sidecar = build_results(inputs)
    out = write_results(doc, sidecar, results_dir=args.results_dir)
    runtime = doc.provenance.timings["runtime_seconds"]
    print(f"[benchmarks.run] wrote {out} ({len(sidecar)} scored records, {runtime:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
