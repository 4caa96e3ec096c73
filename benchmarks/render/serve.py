"""Serve a built site on a local port, gzip-compressed as a static host serves it, for the browser checks.

Used by ``tests/test_site_browser.py`` and ``python -m benchmarks.perf.page_weight``, so the weight the
perf script reports and the weight the test asserts come from the same server.
"""

from __future__ import annotations

import functools
import gzip
import http.server
import io
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["GzipHandler", "QuietHandler", "serve"]

TEXT_SUFFIXES = {".html", ".js", ".css", ".json", ".csv", ".svg"}


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """The standard static file handler without a log line per request."""

    def log_message(self, format, *args):  # noqa: A002 - signature fixed by the base class
        pass


class GzipHandler(QuietHandler):
    """Serves text files gzip-compressed when the browser accepts it, as GitHub Pages and most hosts do."""

    def send_head(self):
        path = Path(self.translate_path(self.path.split("?")[0]))
        if path.is_file() and path.suffix in TEXT_SUFFIXES and "gzip" in self.headers.get("Accept-Encoding", ""):
            body = gzip.compress(path.read_bytes(), mtime=0)
            self.send_response(200)
            self.send_header("Content-Type", self.guess_type(str(path)))
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            return io.BytesIO(body)
        return super().send_head()


@contextmanager
def serve(directory: Path, *, gzip_text: bool = True) -> Iterator[str]:
    """Serve ``directory`` on 127.0.0.1 (a free port) while the block runs; yields the base URL."""
    handler = GzipHandler if gzip_text else QuietHandler
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(directory)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        thread.join(timeout=5)


# the charts a reader sees drawn: a chart in a hidden picker panel is drawn only when its panel is chosen
CHARTS_DRAWN = (
    "() => [...document.querySelectorAll('.tyc-chart')].filter(el => !el.closest('[hidden]'))"
    ".every(el => el.querySelector('svg'))"
)
WEIGHT_JS = """() => {
    const nav = performance.getEntriesByType('navigation')[0];
    const res = performance.getEntriesByType('resource');
    return {load: nav.loadEventStart, transferred: nav.transferSize + res.reduce((a, e) => a + e.transferSize, 0),
            decoded: nav.decodedBodySize + res.reduce((a, e) => a + e.decodedBodySize, 0),
            names: res.map(e => e.name.split('/').pop()),
            charts: document.querySelectorAll('.tyc-chart').length}; }"""


def weigh(browser, url: str, *, settle_ms: int = 500) -> dict:
    """A cold load of ``url`` (fresh context, empty cache) weighed by the browser's own resource timing.

    Waits for the load event, then for every chart to draw (pages with a chart fetch plotly.js after
    the load event) and ``settle_ms`` more for anything else fetched late. Returns ``load`` (ms to the
    load event), ``transferred`` and ``decoded`` (bytes: page plus every resource), the resource file
    ``names`` and the number of ``charts``.
    """
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        tab = context.new_page()
        tab.goto(url, wait_until="load")
        tab.wait_for_function(CHARTS_DRAWN, timeout=15_000)
        tab.wait_for_timeout(settle_ms)
        return tab.evaluate(WEIGHT_JS)
    finally:
        context.close()
