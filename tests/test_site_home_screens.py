"""The home page of the committed site in a headless Chromium (issue 37): it answers for every benchmark within
its first three desktop screens, on a phone each answer's winner and verdict are on screen without sideways
scrolling, and the keyboard focus ring stands out from what it sits on by at least 3:1 (WCAG 2.2, 1.4.11).

Needs Debian's Chromium at /usr/bin/chromium and the ``playwright`` Python package, as
tests/test_site_browser.py does; skipped with a message otherwise.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.render.fmt import slugify
from benchmarks.render.serve import serve
from tests._shared import chromium_browser, need_chromium

pytestmark = [pytest.mark.browser, pytest.mark.slow]


DESKTOP = {"width": 1400, "height": 900}
PHONE = {"width": 390, "height": 844}
SCREENS = 3  # the answer of every benchmark within the first three desktop screens
MIN_CONTRAST = 3.0  # WCAG 2.2 success criterion 1.4.11, non-text contrast


@pytest.fixture(scope="module")
def site(request) -> Path:
    need_chromium()
    from benchmarks.results_io import RESULTS_DIR

    if not any(RESULTS_DIR.glob("*/v*.json")):
        pytest.skip("no committed results")
    return request.getfixturevalue("committed_site").html


@pytest.fixture(scope="module")
def benchmarks() -> list[str]:
    from benchmarks.results_io import RESULTS_DIR

    return sorted(p.name for p in RESULTS_DIR.iterdir() if p.is_dir() and any(p.glob("v*.json")))


@pytest.fixture(scope="module")
def server(site):
    with serve(site, gzip_text=False) as url:
        yield url


@pytest.fixture(scope="module")
def browser(site):
    yield from chromium_browser()


def _open(browser, url: str, viewport: dict):
    context = browser.new_context(viewport=viewport)
    tab = context.new_page()
    tab.goto(url, wait_until="load")
    return context, tab


# each answer row: page coordinates of its winner (3rd) and verdict (6th) cells, their text, the page's widths
ANSWERS = """ids => ids.map(id => {
  const table = document.getElementById(id);
  if (!table) { return null; }
  return [...table.tBodies[0].rows].map(row => [2, 5].map(i => {
    const r = row.cells[i].getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top + scrollY, bottom: r.bottom + scrollY,
            text: row.cells[i].textContent.trim()};
  }));
})"""


def test_home_answers_every_benchmark_within_three_desktop_screens(browser, server, benchmarks):
    context, tab = _open(browser, f"{server}/index.html", DESKTOP)
    tables = tab.evaluate(ANSWERS, [f"answer-{slugify(n)}" for n in benchmarks])
    context.close()
    assert benchmarks and None not in tables, dict(zip(benchmarks, tables, strict=True))
    for name, rows in zip(benchmarks, tables, strict=True):
        assert rows, name
        for winner, verdict in rows:
            assert winner["text"] and verdict["text"], name
        assert rows[-1][1]["bottom"] <= SCREENS * DESKTOP["height"], (name, rows[-1][1]["bottom"])


def test_on_a_phone_the_home_page_does_not_scroll_sideways_and_each_winner_and_verdict_is_in_view(
    browser, server, benchmarks
):
    context, tab = _open(browser, f"{server}/index.html", PHONE)
    widths = tab.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    tables = tab.evaluate(ANSWERS, [f"answer-{slugify(n)}" for n in benchmarks])
    context.close()
    assert widths[0] <= widths[1] == PHONE["width"], widths
    assert None not in tables
    for name, rows in zip(benchmarks, tables, strict=True):
        for winner, verdict in rows:
            for cell in (winner, verdict):
                assert cell["text"] and 0 <= cell["left"] < cell["right"] <= PHONE["width"], (name, cell)


# the focused element's outline colour against the colour under its ring: what lies just outside the element
# (the ring is drawn there) at the middle of each side, composited down to an opaque colour (WCAG 2 formulas)
RING = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) { return null; }
  const cs = getComputedStyle(el);
  if (cs.outlineStyle === 'none' || parseFloat(cs.outlineWidth) === 0) { return null; }
  const rgba = c => { const v = c.match(/[\\d.]+/g).map(Number); return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1]; };
  const lum = c => { const l = c.slice(0, 3).map(x => {
      x /= 255; return x <= 0.04045 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * l[0] + 0.7152 * l[1] + 0.0722 * l[2]; };
  const under = node => { const layers = [];
    for (let n = node; n; n = n.parentElement) { const b = rgba(getComputedStyle(n).backgroundColor);
      if (b[3] > 0) { layers.push(b); if (b[3] >= 1) { break; } } }
    let bg = [255, 255, 255];
    for (const l of layers.reverse()) { bg = bg.map((c, i) => l[3] * l[i] + (1 - l[3]) * c); }
    return bg; };
  const ring = rgba(cs.outlineColor);
  const d = parseFloat(cs.outlineOffset) + parseFloat(cs.outlineWidth) / 2;
  const r = el.getBoundingClientRect();
  const points = [[r.left - d, (r.top + r.bottom) / 2], [r.right + d, (r.top + r.bottom) / 2],
                  [(r.left + r.right) / 2, r.top - d], [(r.left + r.right) / 2, r.bottom + d]];
  const ratios = [];
  for (const [x, y] of points) {
    if (x < 0 || y < 0 || x >= innerWidth || y >= innerHeight) { continue; }
    const below = document.elementsFromPoint(x, y).find(n => n !== el && !el.contains(n));
    if (!below) { continue; }
    const a = lum(ring), b = lum(under(below));
    ratios.push((Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05));
  }
  return {what: el.tagName + ' ' + (el.className || '') + ' ' + (el.textContent || '').trim().slice(0, 40),
          colour: cs.outlineColor, inArticle: !!el.closest('article'),
          ratio: ratios.length ? Math.min(...ratios) : null};
}"""


# what a keyboard reader reaches first: the skip link (the first Tab), the header's logo, the navigation, the
# article's links and disclosures; focused one by one after a Tab (the search field is passed over: focusing it
# opens the search, whose overlay would cover the page)
TARGETS = (
    ".md-header__button.md-logo",
    ".md-sidebar--primary .md-nav__link",
    "article a",
    "article summary",
)


@pytest.mark.parametrize("page", ["index.html", "glossary.html"])
def test_the_keyboard_focus_ring_has_at_least_three_to_one_contrast(browser, server, page):
    context, tab = _open(browser, f"{server}/{page}", DESKTOP)
    tab.keyboard.press("Tab")
    seen = [tab.evaluate(RING)]
    for selector in TARGETS:
        for element in tab.locator(selector).all()[:8]:
            if element.is_visible():
                element.focus()
                seen.append(tab.evaluate(RING))
    context.close()
    seen = [r for r in seen if r and r["ratio"] is not None]
    assert any(r["inArticle"] for r in seen) and any(not r["inArticle"] for r in seen), seen
    low = [r for r in seen if r["ratio"] < MIN_CONTRAST]
    assert low == [], low
