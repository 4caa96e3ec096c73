"""``python -m benchmarks.validate PATH [PATH ...]``: refuse a file not named ``vNNNN.json`` (a copy is no
version), then check results files against the published schema and the hash of every score part (a missing
part is fetched from its recorded URL into the local cache when it has one, else named in one line; a migrated
sidecar's parts must rebuild the file whose sha256 the version records), then check its place in its
benchmark's hash chain (:mod:`benchmarks.history`: its own tables hash, and the sha256 that every later
version recorded for its file), then, for a version computed by the current statistics version, recompute
every leaderboard, interval and competition table from the score set and the recorded config and compare them
with the published ones (:mod:`benchmarks.verify`; floats to a relative 1e-9). A version computed by an older
statistics version is not recomputed (today's statistics give other tables): it is verified by those hashes,
and the line says so. Prints every problem, naming the first difference of each table, and exits 1 if any file
is invalid, 0 otherwise."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from benchmarks.results_io import validate_results_file
from tycheon.textsafe import for_terminal

# a version's name is part of what is verified: its number places it in its folder's hash chain, and a copy
# under another name ("v0001 (copy).json") is no version at all
_VERSION_NAME = re.compile(r"v[0-9]{4}\.json")

__all__ = ["main", "verify_file"]


def verify_file(path: str | Path) -> tuple[list[str], str | None]:
    """``(problems, note)`` for one results file.

    Schema and score-part hashes first (:func:`benchmarks.results_io.validate_results_file`), then the hash
    chain (:func:`benchmarks.history.check_history`). A version computed by the current statistics version
    has every table recomputed (the note is None, or names the datasets whose private score parts are not
    here); one computed by an older statistics version is not recomputed, and the note says how it was
    verified instead (by the hash a later version recorded, or, where none does yet, by its schema, parts and
    own tables hash only)."""
    from benchmarks.history import check_history
    from benchmarks.results_io import read_results
    from benchmarks.score_source import score_source
    from benchmarks.verify import private_away, recompute_problems

    if not _VERSION_NAME.fullmatch(Path(path).name):
        return [
            f"{path}: {Path(path).name!r} is not a version name; a results version is "
            "results/<benchmark>/vNNNN.json (e.g. v0001.json)"
        ], None
    problems = validate_results_file(path)
    if problems:
        return problems, None
    check = check_history(path)
    if not check.recompute:
        return list(check.problems), None if check.problems else check.note
    doc = read_results(path)
    try:
        # the recomputation first: it names the edited field of each table, the hash only that one was edited
        source = score_source(path, doc)
        problems = [*(f"{path}: {p}" for p in recompute_problems(doc, source)), *check.problems]
        away = sorted(private_away(source))
        note = (
            f"tables of {', '.join(away)} not recomputed here: not redistributable, their private score parts "
            "stay on the machine that ran them; verified by the tables hash; every other table recomputed"
            if away
            else None
        )
        return problems, note
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
            # file names, ids and table fields are someone else's text: escaped for the terminal
            print(for_terminal(f"INVALID {path}"))
            for p in problems:
                print(for_terminal(f"  - {p}"))
        else:
            tail = f" ({note})" if note else " (every table recomputed from its score set)"
            print(for_terminal(f"valid   {path}{tail}"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
