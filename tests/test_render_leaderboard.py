"""Leaderboards open on their rows (issue 37), read from the committed results rendered (``committed_docs``).

A one-line legend above the table and the rest in a "How to read this table" disclosure; one line linking
the same cell's interval, uncertainty and stability views, each resolving to its table; those views list
their rows in the leaderboard's rank order; a caption on every table of these pages; the explanations that
every row used to repeat in a tooltip written once in the header.
"""

from __future__ import annotations

import html
import posixpath
import re
from collections import defaultdict

import pytest

from benchmarks.render.fmt import slugify
from benchmarks.render.pages import SiteModel
from tests._shared import latest_results

pytestmark = pytest.mark.slow

_TABLE = re.compile(r"<table\b[^>]*>(.*?)</table>", re.S)
_MACRO_TABLES = re.compile(  # tables of the shared macros (_macros.html.j2), not of these templates
    r'<div class="tyc-notscored".*?</div>|<details class="tyc-provenance".*?</details>', re.S
)
_MODEL = re.compile(r'<a class="tyc-model" href="[^"]*models/([^"/]+)\.html"')


def _target(page: str, href: str) -> tuple[str, str]:
    """The docs-relative ``.md`` path and anchor a relative link of ``page`` points at."""
    path, _, anchor = href.partition("#")
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(page), path))
    return (joined[: -len(".html")] + ".md" if joined.endswith(".html") else joined), anchor


def _leaderboard_order(committed_docs) -> dict[str, list[str]]:
    """Each leaderboard page's models in its rows' order, and its rank column."""
    out = {}
    for path, text in committed_docs.leaderboards().items():
        body = text.split('id="leaderboard"', 1)[1].split("</tbody>", 1)[0]
        rows = re.findall(r'<tr(?: class="[^"]*")? data-model="([^"]+)">\n<td>(\d+)</td>', body)
        out[path] = [(slugify(m), int(rank)) for m, rank in rows]
    return out


def test_every_leaderboard_opens_with_a_one_line_legend_and_keeps_the_rest_in_a_disclosure(committed_docs):
    pages = committed_docs.leaderboards()
    assert len(pages) > 100
    for path, text in pages.items():
        head = text.split('<table class="tyc-table tyc-sortable tyc-leaderboard', 1)[0]
        head = re.sub(r'<p class="tyc-cell-warning".*?</p>', "", head, flags=re.S)  # a warning, not the legend
        assert head.count('<details class="tyc-howto" data-search-exclude>\n<summary>How to read this table') == 1
        howto = head.split('<details class="tyc-howto"', 1)[1].split("</details>", 1)[0]
        outside = head.replace(howto, "")
        legend = re.search(r'<p class="tyc-caption tyc-legend"[^>]*>(.*?)</p>', outside).group(1)
        assert legend.startswith("Ranked on ") and "random walk" in legend, path
        assert len(re.sub(r"<[^>]+>", "", html.unescape(legend))) < 200, path
        for long_form in ("Benjamini-Hochberg", "Diebold-Mariano", "HLN", "ADR-0006", "paper's variant", "WP26"):
            assert long_form not in outside, (path, long_form)
        assert "glossary.html#verdict" in howto and "methodology.html" in howto
        assert "Diebold-Mariano" in howto  # the rest of the legend is still there, one click away


def test_every_leaderboard_links_the_same_cells_views_and_each_link_resolves_to_its_table(committed_docs):
    docs = committed_docs.docs
    pages = committed_docs.leaderboards()
    expected = defaultdict(set)  # page -> views the results hold for its cell
    for name, doc in latest_results().items():
        cells = {(t.dataset, t.protocol, t.unit, t.demand_class) for t in doc.intervals}
        unc = {(t.dataset, t.protocol, t.unit, t.demand_class, t.metric) for t in doc.analyses.uncertainty}
        audited = {(t.dataset, t.protocol, t.unit) for t in doc.sensitivity}
        for lb in doc.leaderboards:
            page = SiteModel.leaderboard_page(name, lb.key)  # its cell's page, at its metric's panel
            assert page in pages
            key = (lb.dataset, lb.protocol, lb.unit, lb.demand_class, lb.metric)
            for view, present in (
                ("intervals", key[:4] in cells),
                ("uncertainty", key in unc),
                ("stability of the order", key[:3] in audited),
            ):
                if present:
                    expected[page].add(view)
    assert sum(len(v) for v in expected.values()) > 500
    found = 0
    for path, text in pages.items():
        line = re.search(r'<p class="tyc-caption tyc-views"[^>]*>(.*?)</p>', text)
        links = dict((t, h) for h, t in re.findall(r'<a href="([^"]+)">([^<]+)</a>', line.group(1))) if line else {}
        assert set(links) == expected[path], path
        assert text.index("tyc-views") < text.index('id="leaderboard"') if line else True
        for href in links.values():
            target, anchor = _target(path, href)
            assert anchor and f'id="{anchor}"' in (docs / target).read_text(encoding="utf-8"), (path, href)
            found += 1
    assert found == sum(len(v) for v in expected.values())


def _views(committed_docs, template: str, table_start: str) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """Every table of a view page that names its leaderboard: (page, leaderboard page, [(model, rank shown)])."""
    out = []
    for path, text in committed_docs.pages_of(template).items():
        for table in re.findall(rf"{table_start}.*?</table>", text, re.S):
            caption = re.search(r"<caption>.*?</caption>", table, re.S).group(0)
            link = re.search(r'href="([^"]+)"', caption)
            if not link:
                continue
            board = "#".join(_target(path, link.group(1)))  # a cell's page at one metric's panel
            body = table.split("<tbody>", 1)[1]
            rows = re.findall(r"<tr>\n?<td>([^<]*)</td>\n?<td[^>]*>" + _MODEL.pattern, body)
            out.append((path, board, rows))
    return out


@pytest.mark.parametrize(
    ("template", "table_start"),
    [
        ("uncertainty.md.j2", r'<table class="tyc-table tyc-sortable" data-search-exclude>'),
        ("intervals.md.j2", r'<table class="tyc-table tyc-sortable" data-search-exclude id="intervals-'),
        ("sensitivity.md.j2", r'<table class="tyc-table tyc-sortable" id="ranks">'),
    ],
)
def test_the_views_of_a_cell_list_their_rows_in_the_leaderboards_rank_order(committed_docs, template, table_start):
    order = _leaderboard_order(committed_docs)
    tables = _views(committed_docs, template, table_start)
    assert len(tables) >= (20 if template != "sensitivity.md.j2" else 2)
    for path, board, rows in tables:
        ranks = dict(order[board])
        assert rows, (path, board)
        shown = [(slugify(m), rank) for rank, m in rows]
        on_board = [(m, int(rank)) for m, rank in shown if rank != "\u2013"]
        assert all(m not in ranks for m, rank in shown if rank == "\u2013"), (path, board)
        assert on_board == [(m, ranks[m]) for m, _ in on_board], (path, board)  # the leaderboard's own ranks
        assert [r for _, r in on_board] == sorted(r for _, r in on_board), (path, board)
        assert shown[: len(on_board)] == [(m, str(r)) for m, r in on_board], (path, board)  # unranked last
        board_models = [m for m, _ in order[board]]
        assert [m for m, _ in on_board] == [m for m in board_models if m in dict(on_board)], (path, board)


@pytest.mark.parametrize("template", ["leaderboard.md.j2", "uncertainty.md.j2", "intervals.md.j2", "sensitivity.md.j2"])
def test_every_table_of_these_pages_has_a_caption(committed_docs, template):
    pages = committed_docs.pages_of(template)
    seen = 0
    for path, text in pages.items():
        for match in _TABLE.finditer(_MACRO_TABLES.sub("", text)):
            assert match.group(1).lstrip().startswith("<caption>"), (path, match.group(0)[:200])
            seen += 1
    assert seen >= len(pages)


def test_what_every_row_repeated_in_a_tooltip_is_written_once_in_the_header(committed_docs):
    for path, text in committed_docs.leaderboards().items():
        table = text.split('id="leaderboard"', 1)[1].split("</table>", 1)[0]
        head, body = table.split("<tbody>", 1)
        assert "one-sided panel-robust Diebold-Mariano p-values" in head, path
        assert "panel-robust" not in body and "the paper's variant" not in body, path
        # a footnote mark names its note; the reason is written once, in the note below the table
        assert not re.search(r'class="tyc-fn"[^>]* title=', body), path
        # the cell text sorts as the number did: data-sort only where it would not (a p below 0.0001, badges)
        assert body.count("data-sort=") <= body.count("&lt;0.0001") + body.count("tyc-badge"), path
        for number in re.findall(r'href="#lb-note-(\d+)"', body):
            assert f'<li id="lb-note-{number}" value="{number}">' in text, (path, number)


def test_the_verdict_column_comes_right_after_the_model(committed_docs):
    for path, text in committed_docs.leaderboards().items():
        head = text.split('id="leaderboard"', 1)[1].split("</thead>", 1)[0]
        cells = re.findall(r"<th\b.*?</th>", head, re.S)
        assert "Rank" in cells[0] and ">Model<" in cells[1] and "#verdict" in cells[2], path
        assert "Support" in cells[-1], path


def test_what_every_leaderboard_of_a_dataset_repeated_is_one_line_linking_the_dataset_page(committed_docs):
    """Skipped and failed models, data warnings and provenance are the same on every leaderboard of a dataset
    and protocol: each leaderboard names the models missing from its table in one line and links the
    dataset page, which gives each skipped or failed model's reason, the warnings and the provenance."""
    docs = committed_docs.docs
    pages = committed_docs.leaderboards()
    datasets = {}
    for path, text in pages.items():
        assert '<details class="tyc-provenance"' not in text and "tyc-warnings" not in text, path
        assert '<div class="tyc-notscored"' not in text and "Skipped and failed models" not in text, path
        line = re.search(r'<p class="tyc-caption tyc-notscored"[^>]*>(.*?)</p>', text).group(1)
        link = re.search(r'<a href="([^"]+)">The dataset page</a>', line)
        target, _ = _target(path, link.group(1))
        dataset = datasets.setdefault(target, (docs / target).read_text(encoding="utf-8"))
        assert "## Skipped or failed models" in dataset and '<details class="tyc-provenance"' in dataset, path
        assert "the provenance of " in line, path
        for name, status in re.findall(r"([^,:>]+?) \((skipped|failed)\)", line):
            listed = re.search(rf">{re.escape(name.strip())}</a> &mdash; {status} on [^:]*: ([^<]+)</li>", dataset)
            assert listed and listed.group(1).strip(), (path, name, status)  # with its reason, on the dataset page
    assert len(datasets) >= 6


def test_the_analyses_not_computed_are_counted_and_linked_not_listed(committed_docs):
    pages = committed_docs.leaderboards()
    assert not any("analysis not computed" in t for t in pages.values())
    linked = [t for t in pages.values() if "analyses not computed" in t]
    assert linked and all(
        re.search(r'<a href="[./]*index\.html">the benchmark page</a> lists the \d+ analyses not computed', t)
        for t in linked
    )


def test_leaderboards_show_no_raw_text(committed_docs):
    """Every leaderboard as a reader reads it (its HTML without the front matter; the chart's data is a
    script): no raw model id (winner, runner-up, baseline and random walk are display names), no internal
    document cited by number, no machine note (tests/test_site_no_raw_text.py's scanner)."""
    from tests.test_site_no_raw_text import article_text, find_raw_text, raw_model_ids

    ids = raw_model_ids()
    hits = []
    for path, text in committed_docs.leaderboards().items():
        hits.extend(find_raw_text(path, article_text(f"<article>{text}</article>"), model_ids=ids))
    assert hits == [], hits[:20]


def test_leaderboard_pages_are_lighter(committed_docs):
    """The leaderboards' markdown is a fraction of what it was: 23.6 MB for 911 pages of one metric each, and
    5.16 MB for the 106 pages of one cell each, every metric a panel (the shown one as HTML, the others
    packed); measured once each on the committed results (small v0008, full v0003)."""
    pages = committed_docs.pages_of("leaderboard.md.j2")
    assert len(committed_docs.leaderboards()) > 5 * len(pages)  # every metric is still there
    total = sum(len(t.encode()) for t in pages.values())
    assert total < 0.3 * 23_600_000, total


def test_a_leaderboard_links_views_only_within_the_docs(committed_docs):
    for path, text in committed_docs.leaderboards().items():
        line = re.search(r'<p class="tyc-caption tyc-views"[^>]*>(.*?)</p>', text)
        if line:
            for href in re.findall(r'href="([^"]+)"', line.group(1)):
                assert not href.startswith(("http", "/")) and ".md" not in href, (path, href)
                assert (committed_docs.docs / _target(path, href)[0]).is_file()
