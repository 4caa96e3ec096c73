"""``python -m benchmarks.render [--results DIR] [--out DIR]``: render the leaderboard site's pages."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .load import ROOT, ResultsFileError
from .site import RenderTargetError, render_site


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.render", description=__doc__)
    parser.add_argument("--results", type=Path, default=ROOT / "benchmarks" / "results",
                        help="folder of <name>/<version>.json results files (default: benchmarks/results)")
    parser.add_argument("--out", type=Path, default=ROOT / "site" / "docs",
                        help="docs folder to (re)generate; mkdocs.yml is written beside it (default: site/docs)")
    args = parser.parse_args(argv)
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
