"""The built site in a real headless Chromium: tables, sorting, the CD diagram, no console errors, no XSS.

Needs Debian's Chromium at /usr/bin/chromium (``.ci/run`` installs it) and the ``playwright`` Python
package; nothing is downloaded (``playwright install`` is never run). Skipped with a message otherwise.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from pathlib import Path

import pytest

from benchmarks.render import render_site
from tests.test_render_site import HOSTILE_SCRIPT, hostile_results, mkdocs_build

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]
LEADERBOARD = "benchmarks/small/synthetic_marketplace/rolling_origin/series/all-mase.html"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - signature fixed by the base class
        pass


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    if not (CHROMIUM.exists() and os.access(CHROMIUM, os.X_OK)):
        pytest.skip(f"no Chromium at {CHROMIUM}: install Debian's 'chromium' package (.ci/run does) to run the browser tests")
    pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed (dev extra)")
    tmp = tmp_path_factory.mktemp("browser")
    hostile_results(tmp / "results")
    render_site(results_dir=tmp / "results", out=tmp / "site" / "docs")
    mkdocs_build(tmp / "site" / "mkdocs.yml", tmp / "html")
    return tmp / "html"


@pytest.fixture(scope="module")
def server(built):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(built)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    thread.join(timeout=5)


@pytest.fixture(scope="module")
def browser(built):
    from playwright.sync_api import Error, sync_playwright

    with sync_playwright() as p:
        try:
            chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, timeout=30_000)
        except Error as err:
            pytest.skip(f"Chromium at {CHROMIUM} could not be started by playwright: {err}")
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    tab = context.new_page()
    tab.problems = []
    tab.on("console", lambda msg: tab.problems.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None)
    tab.on("pageerror", lambda err: tab.problems.append(f"page error: {err}"))
    yield tab
    context.close()


def _column(tab, index: int) -> list[str]:
    return tab.eval_on_selector_all(
        "#leaderboard tbody tr", f"rows => rows.map(r => r.cells[{index}].getAttribute('data-sort'))")


def test_home_page_shows_the_winners_table_without_console_errors(page, server):
    page.goto(f"{server}/index.html", wait_until="load")
    rows = page.locator("table.tyc-sortable tbody tr")
    assert rows.count() == 16  # one per leaderboard in the fixture
    assert "Where the baselines win" in page.inner_text("article")
    assert page.evaluate("typeof window.__xss") == "undefined"

    page.locator("input.md-search__input").click(force=True)  # mkdocs-material search, offline
    page.keyboard.type("Croston")
    page.wait_for_selector(".md-search-result__item", timeout=15_000)
    assert page.locator(".md-search-result__item").count() >= 1
    assert page.problems == []


def test_leaderboard_renders_table_and_cd_diagram_and_sorts_on_click(page, server):
    page.goto(f"{server}/{LEADERBOARD}", wait_until="load")
    page.wait_for_selector("#cd-diagram .main-svg", timeout=15_000)
    assert page.locator("#leaderboard tbody tr").count() == 7
    assert page.locator("#cd-diagram .main-svg").count() >= 1
    assert page.locator("#cd-diagram .scatterlayer .trace").count() >= 7  # one marker trace per model

    assert HOSTILE_SCRIPT in page.inner_text("#leaderboard")  # shown as text, never run
    assert page.evaluate("typeof window.__xss") == "undefined"

    mean_header = page.locator("#leaderboard thead th", has_text="Mean mase")
    mean_header.click()
    ascending = [float(v) for v in _column(page, 2)]
    assert ascending == sorted(ascending)
    mean_header.click()
    descending = [float(v) for v in _column(page, 2)]
    assert descending == sorted(ascending, reverse=True)
    assert mean_header.get_attribute("aria-sort") == "descending"

    rank_header = page.locator("#leaderboard thead th", has_text="Mean rank")
    rank_header.click()
    ranks = [float(v) for v in _column(page, 4)]
    assert ranks == sorted(ranks)
    assert _column(page, 0) != sorted(_column(page, 0), key=float)  # the fixture's mean-rank order differs

    beats_header = page.locator("#leaderboard thead th", has_text="Beats baseline")
    beats_header.click()
    beats = _column(page, 5)
    assert beats[-1] == ""  # the baseline has no count and sorts last
    assert [int(v) for v in beats[:-1]] == sorted(int(v) for v in beats[:-1])
    assert page.problems == []


def test_built_site_works_opened_from_disk_with_charts_and_search_and_no_network(page, built):
    requested = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto((built / LEADERBOARD).as_uri(), wait_until="load")
    page.wait_for_selector("#cd-diagram .main-svg", timeout=15_000)
    page.keyboard.press("s")  # mkdocs-material's search shortcut
    page.keyboard.type("Croston")
    page.wait_for_selector(".md-search-result__item", timeout=15_000)
    assert [url for url in requested if not url.startswith(("file:", "data:", "blob:", "about:"))] == []
    assert page.problems == []
