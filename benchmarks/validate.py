"""``python -m benchmarks.validate PATH [PATH ...]``: read results files through the results model
(:mod:`benchmarks.results_model`, from which the published schema is generated) and check their sidecar
hash and row count. Prints every problem and exits 1 if any file is invalid, 0 otherwise."""

from __future__ import annotations

import argparse
import sys

from benchmarks.results_io import validate_results_file


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.validate", description=__doc__)
    parser.add_argument("paths", nargs="+", help="results JSON file(s)")
    args = parser.parse_args(argv)
    failed = False
    for path in args.paths:
        problems = validate_results_file(path)
        if problems:
            failed = True
            print(f"INVALID {path}")
            for p in problems:
                print(f"  - {p}")
        else:
            print(f"valid   {path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
