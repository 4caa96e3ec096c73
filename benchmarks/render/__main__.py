"""``python -m benchmarks.render [--results DIR] [--out DIR]``: render the leaderboard site's pages.

Before anything is written, every results file is verified as ``python -m benchmarks.validate`` does it
(schema, score parts with their recorded sha256, its place in the hash chain of its benchmark, and every
table recomputed from its score set where the current statistics computed it); a file that fails stops
the render (exit 2) naming its first problem, so a page never shows a number its scores do not give. A
version computed by an older statistics version renders as history: it is verified by the sha256 that the
later versions recorded for its file (:mod:`benchmarks.history`), not recomputed by today's statistics."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks import memory_policy
from tycheon.textsafe import terminal_safe_output

from .load import ROOT, ResultsFileError
from .site import RenderTargetError, render_site


def main(argv: list[str] | None = None) -> int:
    """The command; everything it prints goes through :func:`tycheon.textsafe.for_terminal` (no id, name or
    reason from a config can carry an escape sequence to the terminal)."""
    with terminal_safe_output():
        return _main(argv)


def _main(argv: list[str] | None = None) -> int:
    memory_policy.apply()  # numpy's huge-page advice off while verifying and rendering (benchmarks.memory_policy)
    parser = argparse.ArgumentParser(prog="python -m benchmarks.render", description=__doc__)
    parser.add_argument(
        "--results",
        type=Path,
        default=ROOT / "benchmarks" / "results",
        help="folder of <name>/<version>.json results files (default: benchmarks/results)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=ROOT / "site" / "docs",
        help="docs folder to (re)generate; mkdocs.yml is written beside it (default: site/docs)",
    )
    args = parser.parse_args(argv)
    from benchmarks.validate import verify_file

    from .load import load_results

    try:
        load_results(args.results.resolve())  # schema problems first, in the loader's own words
    except ResultsFileError as err:
        print(f"render failed: {err}", file=sys.stderr)
        return 2
    for path in sorted(args.results.glob("*/v*.json")):
        problems, _ = verify_file(path)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            print(f"render refused: {path} fails verification: {problems[0]}{more}", file=sys.stderr)
            return 2
    try:
        written = render_site(results_dir=args.results.resolve(), out=args.out.resolve())
    except (ResultsFileError, RenderTargetError) as err:
        print(f"render failed: {err}", file=sys.stderr)
        return 2
    pages = sum(1 for p in written if p.suffix == ".md")
    print(f"rendered {pages} pages into {args.out} (mkdocs config: {args.out.resolve().parent / 'mkdocs.yml'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
