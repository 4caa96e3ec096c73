"""``python -m benchmarks.migrate SIDECAR [SIDECAR ...] [--remove]``: store committed parquet sidecars as
content-addressed parts (:func:`benchmarks.score_source.migrate_sidecar`).

For each ``<name>/sidecars/<sha256>.parquet`` it writes the parts under ``<name>/parts/`` and the migration
manifest ``<name>/sidecars/<sha256>.parts.json``, then checks that the parts rebuild the file bit for bit
(same sha256); with ``--remove`` it deletes the file only after that check. The versions' JSON files are
not touched: they keep the sha256 they were published with, which ``python -m benchmarks.validate`` checks
by rebuilding the file. Exit 1 (nothing removed for that file) if a sidecar is not rebuilt exactly."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from benchmarks.score_source import migrate_sidecar

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.migrate", description=__doc__)
    parser.add_argument("sidecars", nargs="+", type=Path, help="stored sidecar files (<sha256>.parquet)")
    parser.add_argument("--remove", action="store_true", help="delete each sidecar once its parts rebuild it")
    args = parser.parse_args(argv)
    failed = False
    for path in args.sidecars:
        start = time.perf_counter()
        try:
            manifest_path, manifest, written = migrate_sidecar(path, remove=args.remove)
        except (OSError, ValueError) as err:
            failed = True
            print(f"FAILED  {path}: {err}", file=sys.stderr)
            continue
        print(
            f"migrated {path} ({manifest.n_rows:,} rows) -> {manifest_path.name}: {len(manifest.parts)} parts, "
            f"{manifest.total_bytes() / 1e6:.2f} MB listed, {written / 1e6:.2f} MB newly written"
            f"{', sidecar removed' if args.remove else ''} ({time.perf_counter() - start:.1f} s)"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
