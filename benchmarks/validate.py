"""``python -m benchmarks.validate PATH [PATH ...]``: check results files against the published schema and
the hash of every score part (a missing part is fetched from its recorded URL into the local cache when it
has one, else named in one line; a migrated sidecar's parts must rebuild the file whose sha256 the version
records), then recompute every leaderboard, interval and competition table from the score set and
the recorded config and compare them with the published ones (:mod:`benchmarks.verify`; floats to a
relative 1e-9). Prints every problem, naming the first difference of each table, and exits 1 if any file
is invalid, 0 otherwise. A file whose sidecar predates the quantile columns is checked for schema and
hash only, and says so."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.results_io import validate_results_file

__all__ = ["main", "verify_file"]


def verify_file(path: str | Path) -> tuple[list[str], str | None]:
    """``(problems, note)`` for one results file: schema, sidecar hash and every table recomputed; the
    note says when the tables could not be recomputed (an older sidecar)."""
    from benchmarks.results_io import read_results
    from benchmarks.score_source import score_source
    from benchmarks.verify import NotRecomputableError, recompute_problems

    problems = validate_results_file(path)
    if problems:
        return problems, None
    doc = read_results(path)
    try:
        return [f"{path}: {p}" for p in recompute_problems(doc, score_source(path, doc))], None
    except NotRecomputableError as err:  # only an older sidecar is excused
        return [], f"tables not recomputed: {err}"
    except (ValueError, KeyError, TypeError) as err:  # a sidecar the tables cannot be built from is invalid
        return [f"{path}: the tables cannot be recomputed from the sidecar: {type(err).__name__}: {err}"], None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.validate", description=__doc__)
    parser.add_argument("paths", nargs="+", help="results JSON file(s)")
    args = parser.parse_args(argv)
    failed = False
    for path in args.paths:
        problems, note = verify_file(path)
        if problems:
            failed = True
            print(f"INVALID {path}")
            for p in problems:
                print(f"  - {p}")
        else:
            print(f"valid   {path}" + (f" ({note})" if note else " (every table recomputed from its score set)"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
