"""README command 1: run the default benchmark on the embedded data, render the pages, build the site.

Each stage runs only if it exists yet; a missing stage is named, never faked. Exits non-zero if a stage
that exists fails. Your own data: ``tycheon evaluate FILE`` (see ``tycheon evaluate --help``).
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _stage(title: str, module: str, args: list[str]) -> bool:
    if importlib.util.find_spec(module) is None:
        print(f"[tycheon] {title}: not built yet ({module} is missing) - skipped")
        return False
    print(f"[tycheon] {title}: python -m {module} {' '.join(args)}", flush=True)
    subprocess.run([sys.executable, "-m", module, *args], cwd=ROOT, check=True)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Run the small benchmark on the embedded data (python -m benchmarks.run --config small "
        "--if-new), render the pages (python -m benchmarks.render) and build the site "
        "(mkdocs build --strict). Your own data: tycheon evaluate FILE.",
        epilog="Stages: datasets list, benchmark, render, site. Each runs only if it exists yet.",
    )
    parser.parse_args(argv)
    _stage("datasets", "tycheon.cli", ["datasets", "list"])
    ran = _stage("benchmark", "benchmarks.run", ["--config", "small", "--if-new"])
    rendered = _stage("render", "benchmarks.render", [])
    from benchmarks.render.site import build_html, find_mkdocs

    if rendered and find_mkdocs() and (ROOT / "site" / "mkdocs.yml").exists():
        print("[tycheon] site: mkdocs build --strict", flush=True)
        build_html(ROOT / "site" / "mkdocs.yml")
        print(f"[tycheon] site built: open {ROOT / 'site' / 'site' / 'index.html'}")
    else:
        print("[tycheon] site: not built yet (renderer or site/mkdocs.yml missing) - skipped")
    if not ran:
        print("[tycheon] nothing benchmarked yet")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
