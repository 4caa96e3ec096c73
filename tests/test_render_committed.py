"""Every committed results version renders through the typed document: a page per leaderboard of the
latest version, the history lists every version, and no built page holds content wider than a phone
outside a box that scrolls.

The site is rendered and built once per test run (``committed_docs``/``committed_site``, tests/_shared.py)."""

from __future__ import annotations

import re

import pytest

from benchmarks.render.fmt import slugify
from benchmarks.render.pages import SiteModel
from benchmarks.render.panels import panels_of
from benchmarks.results_io import RESULTS_DIR, read_results
from tests.test_render_site import PHONE, sideways_problems, site_layout_rules

pytestmark = pytest.mark.slow  # renders the ~1,000 pages of the committed results (and builds them with mkdocs)


def test_the_committed_results_render_with_every_version_in_the_history(committed_docs):
    out = committed_docs.docs
    assert out / "index.md" in committed_docs.written
    for folder in sorted(p for p in RESULTS_DIR.iterdir() if p.is_dir()):
        versions = sorted(p.stem for p in folder.glob("v*.json"))
        history = (out / "benchmarks" / folder.name / "history.md").read_text(encoding="utf-8")
        assert all(f"<code>{v}</code>" in history for v in versions)
        latest = read_results(folder / f"{versions[-1]}.json")
        for lb in latest.leaderboards:
            page, metric = SiteModel.leaderboard_page(folder.name, lb.key).split("#")
            assert metric in panels_of((out / page).read_text(encoding="utf-8")), (page, metric)


def test_the_uncertainty_tables_have_their_own_page_linked_from_the_robustness_page(committed_docs):
    """The bootstrap tables are most of the analyses' HTML; the robustness page, which loads plotly.js for
    its dial chart, links to them instead of carrying them (the 1.6 MB chart-page limit), and they are split
    one page per unit (a deep hierarchy's tables on one page missed the 0.8 s load-event target)."""
    out = committed_docs.docs
    checked = 0
    for folder in sorted(p for p in RESULTS_DIR.iterdir() if p.is_dir()):
        latest = read_results(max(folder.glob("v*.json")))
        for dataset in sorted({t.dataset for t in latest.analyses.uncertainty}):
            page = out / "benchmarks" / folder.name / dataset / "uncertainty.md"
            robustness = (page.parent / "robustness.md").read_text(encoding="utf-8")
            index = page.read_text(encoding="utf-8")
            tables = [t for t in latest.analyses.uncertainty if t.dataset == dataset]
            assert 'href="uncertainty.html"' in robustness and "Bootstrap p" not in robustness
            assert 'href="robustness.html"' in index and '<table class="tyc-table tyc-sortable' not in index
            # one page per unit, each holding exactly that unit's tables and linked from the index
            for unit in {t.unit for t in tables}:
                name = f"uncertainty-{slugify(unit)}"
                assert f'href="{name}.html"' in index
                text = (page.parent / f"{name}.md").read_text(encoding="utf-8")
                mine = [t for t in tables if t.unit == unit]
                assert text.count('<table class="tyc-table tyc-sortable"') == len(mine)
                heads = [re.escape(f"{t.unit} / {t.demand_class} / {t.metric}") for t in mine]
                assert all(re.search(rf"<h3[^>]*>{h}</h3>", text) for h in heads)
                assert 'href="uncertainty.html"' in text
            checked += 1
    assert checked >= 1


def test_no_built_page_holds_content_wider_than_a_phone_outside_a_box_that_scrolls(committed_site):
    """Every page of the built site, read against the theme's and the site's CSS (tests/test_render_site.py
    shows the check failing on broken pages); Chromium measures the widest page of each template
    (tests/test_site_browser.py::test_no_page_scrolls_sideways)."""
    html = committed_site.html
    rules = site_layout_rules(html)
    pages = sorted(p for p in html.rglob("*.html") if p.name != "404.html")
    found = {}
    for page in pages:
        problems = sideways_problems(page.read_text(encoding="utf-8"), rules, width=PHONE)
        if problems:
            found[str(page.relative_to(html))] = problems[:3]
    assert len(pages) >= len(committed_site.templates) > 40
    assert found == {}
