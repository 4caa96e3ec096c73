"""The first screen of a leaderboard holds its answer (issue 37), in a real headless Chromium over the
committed results built (``committed_site``): at 1400x900 and at 390x844 at least five ranked rows, each
with its rank, its model and its verdict against the random walk inside the viewport, and no sideways
scroll. Checked on every metric's panel of a small cell (the shown one and each swapped in from the packed
ones), a full table, the panel with the widest row and the one with the most text above its table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks.render.panels import panel_id, panels_of
from benchmarks.render.serve import serve
from tests._shared import chromium_browser
from tests.test_site_browser import _need_chromium, _widest_row

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SCREENS = ((1400, 900), (390, 844))
SMALL = "benchmarks/small/m3_monthly/rolling_origin/series/leaderboard-all.html"
FULL = "benchmarks/full/synthetic_marketplace/rolling_origin/groups-25/leaderboard-all.html#crps_band"


@pytest.fixture(scope="module")
def site(request) -> Path:
    _need_chromium()
    from benchmarks.results_io import RESULTS_DIR

    if not any(RESULTS_DIR.glob("*/v*.json")):
        pytest.skip("no committed results")
    return request.getfixturevalue("committed_site").html


@pytest.fixture(scope="module")
def server(site):
    with serve(site, gzip_text=True) as url:
        yield url


@pytest.fixture(scope="module")
def chromium(site):
    yield from chromium_browser()


def _leaderboards(site: Path) -> dict[str, str]:
    """Every leaderboard panel of the built site, by ``<page>#<metric>``."""
    pages = {}
    for path in site.joinpath("benchmarks").rglob("leaderboard-*.html"):
        for metric, panel in panels_of(path.read_text(encoding="utf-8")).items():
            pages[f"{path.relative_to(site)}#{panel_id(metric)}"] = f"<article>{panel}</article>"
    return pages


def _above_table(page: str) -> int:
    """Characters of text in a panel above its leaderboard (the disclosure counted closed)."""
    head = page[: page.find('id="leaderboard"')]
    head = re.sub(r"<details.*?</summary>.*?</details>", "", head, flags=re.S)
    return len(re.sub(r"<[^>]*>", "", head))


@pytest.fixture(scope="module")
def boards(site) -> list[str]:
    pages = _leaderboards(site)
    widest = max(pages, key=lambda p: (_widest_row(pages[p]), p))
    wordiest = max(pages, key=lambda p: (_above_table(pages[p]), p))
    small = sorted(p for p in pages if p.startswith(SMALL + "#"))
    assert len(small) >= 8 and FULL in pages
    return list(dict.fromkeys([*small, FULL, widest, wordiest]))


def _open(tab, server: str, board: str) -> None:
    """Open a leaderboard panel as a reader does, at its page's address with the metric as the fragment."""
    tab.goto(f"{server}/{board}", wait_until="load")
    metric = board.rsplit("#", 1)[1]
    tab.wait_for_selector(f'#tyc-panel[data-metric="{metric}"] #leaderboard', state="attached")


_FIRST_SCREEN = """() => {
  const w = window.innerWidth, h = window.innerHeight;
  const inside = el => { const b = el.getBoundingClientRect();
    return b.width > 0 && b.height > 0 && b.top >= 0 && b.left >= 0 && b.bottom <= h && b.right <= w; };
  const rows = [...document.querySelectorAll('#leaderboard tbody tr')];
  const shown = rows.filter(r => [0, 1, 2].every(i => r.cells[i] && inside(r.cells[i])));
  const heads = [...document.querySelectorAll('#leaderboard thead th')].map(th => th.textContent.trim());
  return {rows: rows.length, shown: shown.length, verdict: heads[2],
          ranks: shown.map(r => r.cells[0].textContent.trim()),
          sideways: document.documentElement.scrollWidth - document.documentElement.clientWidth};
}"""


@pytest.mark.parametrize(("width", "height"), SCREENS)
def test_the_first_screen_of_a_leaderboard_shows_five_ranked_rows_with_their_verdict(
    chromium, server, boards, width, height
):
    context = chromium.new_context(viewport={"width": width, "height": height})
    tab = context.new_page()
    try:
        for path in boards:
            _open(tab, server, path)
            tab.evaluate("() => window.scrollTo(0, 0)")
            seen = tab.evaluate(_FIRST_SCREEN)
            assert seen["verdict"].startswith("vs random walk"), (path, seen)
            assert seen["shown"] >= min(5, seen["rows"]), (path, width, seen)
            assert seen["ranks"][:5] == sorted(seen["ranks"][:5], key=int), (path, seen)
            assert seen["sideways"] <= 0, (path, width, seen)
    finally:
        context.close()


def test_on_a_phone_every_column_is_one_tick_away(chromium, server):
    context = chromium.new_context(viewport={"width": 390, "height": 844})
    tab = context.new_page()
    try:
        _open(tab, server, FULL)
        visible = (
            "() => [...document.querySelectorAll('#leaderboard thead th')].filter(th => th.offsetWidth > 0).length"
        )
        total = tab.evaluate("() => document.querySelectorAll('#leaderboard thead th').length")
        narrow = tab.evaluate(visible)
        assert 3 <= narrow < total
        tab.check(".tyc-allcols input")
        assert tab.evaluate(visible) == total
        sideways = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
        assert tab.evaluate(sideways) <= 0  # the wide table scrolls in its own box, never the page
    finally:
        context.close()
