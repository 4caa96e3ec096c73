"""``python -m benchmarks.render.screenshots [--html DIR] [--out DIR]``: screenshots of the built site.

Home, the first leaderboard, the first model page, the glossary and the submit page, each at 1400 px and 390 px
wide, full page, after the charts have drawn, so a reviewer can look at the site without serving it. Serves the
built HTML (``mkdocs build`` output, default ``site/site``) on a local port and drives Debian's Chromium
(``/usr/bin/chromium``) through playwright; nothing is downloaded. Exit status 2 with a message when the site
is not built or the browser is missing.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import sys
import threading
from pathlib import Path

from .load import ROOT
from .serve import CHARTS_DRAWN

CHROMIUM = Path("/usr/bin/chromium")
WIDTHS = (1400, 390)


def pages(html: Path) -> list[tuple[str, str]]:
    """``(name, path)`` of the pages to capture; the leaderboard and the model page are the first ones in path
    order."""
    boards = sorted(html.glob("benchmarks/*/*/*/*/leaderboard-*.html"))
    models = sorted(p for p in html.glob("models/*.html") if p.name != "index.html")
    chosen = [("home", "index.html")]
    if boards:
        chosen.append(("leaderboard", str(boards[0].relative_to(html))))
    if models:
        chosen.append(("model", str(models[0].relative_to(html))))
    chosen += [("glossary", "glossary.html"), ("submit", "submit.html")]
    return [(name, path) for name, path in chosen if (html / path).exists()]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - signature fixed by the base class
        pass


def capture(html: Path, out: Path) -> list[Path]:
    """Write ``<name>-<width>.png`` for every page and width; returns the written files."""
    from playwright.sync_api import sync_playwright

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(html)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}/"
    out.mkdir(parents=True, exist_ok=True)
    written = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
            for width in WIDTHS:
                context = browser.new_context(viewport={"width": width, "height": 900})
                tab = context.new_page()
                for name, path in pages(html):
                    tab.goto(base + path, wait_until="load")
                    tab.wait_for_function(CHARTS_DRAWN, timeout=15_000)
                    target = out / f"{name}-{width}.png"
                    tab.screenshot(path=str(target), full_page=True)
                    written.append(target)
                context.close()
            browser.close()
    finally:
        httpd.shutdown()
        thread.join(timeout=5)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.render.screenshots", description=__doc__)
    parser.add_argument("--html", type=Path, default=ROOT / "site" / "site", help="built site (default: site/site)")
    parser.add_argument(
        "--out",
        type=Path,
        default=ROOT / "build" / "screenshots",
        help="folder for the PNG files (default: build/screenshots)",
    )
    args = parser.parse_args(argv)
    if not (args.html / "index.html").exists():
        print(
            f"screenshots: no built site at {args.html}; run `make screenshots` or mkdocs build first", file=sys.stderr
        )
        return 2
    if not CHROMIUM.exists():
        print(f"screenshots: no Chromium at {CHROMIUM}; install Debian's 'chromium' package", file=sys.stderr)
        return 2
    for path in capture(args.html, args.out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
