"""A dataset's views beyond its leaderboards (intervals, uncertainty, selection rule, stability, competition) show
nothing raw and are light (issue 37), read from the committed results rendered (``committed_docs``).

Model ids are written as display names and results-file sentences as a reader reads them; the internal documents
are cited as links to the References page. The intervals page is one table per unit and demand class behind a
class switcher per unit (disclosures sharing a ``name``: one open at a time; the page opens on its first table)
instead of a pivot that repeated every table's numbers; what every table shared (the inventory policy, the
skipped models, the analyses not computed) is written once.
"""

from __future__ import annotations

import re

import pytest
from markupsafe import escape

from benchmarks.render.builders.dataset_tables import intervals_anchor
from benchmarks.render.fmt import reader_text
from benchmarks.render.pages import named
from tests._shared import latest_results
from tests.test_site_no_raw_text import article_text, find_raw_text, raw_model_ids

pytestmark = pytest.mark.slow

VIEWS = ("intervals.md.j2", "uncertainty.md.j2", "sensitivity.md.j2", "competition.md.j2", "replay.md.j2")
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
_TABLE = re.compile(r"<table\b[^>]*>(.*?)</table>", re.S)
_MACRO_TABLES = re.compile(r'<div class="tyc-notscored".*?</div>|<details class="tyc-provenance".*?</details>', re.S)


def _intervals(committed_docs):  # noqa: ANN202
    """Every intervals page with its results document and its tables: (path, text, document, tables)."""
    out = []
    for name, doc in latest_results().items():
        for dataset in dict.fromkeys(t.dataset for t in doc.intervals):
            path = f"benchmarks/{name}/{dataset}/intervals.md"
            text = (committed_docs.docs / path).read_text(encoding="utf-8")
            out.append((path, text, doc, [t for t in doc.intervals if t.dataset == dataset]))
    assert len(out) >= 8
    return out


@pytest.mark.parametrize("template", VIEWS)
def test_no_view_page_shows_a_raw_model_id_or_an_internal_document_number(committed_docs, template):
    ids = raw_model_ids()
    pages = committed_docs.pages_of(template)
    assert pages
    hits = []
    for path, text in pages.items():
        body = _FRONT_MATTER.sub("", text)
        hits += [h for h in find_raw_text(path, article_text(f"<article>{body}</article>"), model_ids=ids)]
    assert hits == [], hits[:20]


def test_every_interval_table_is_in_its_units_class_switcher_one_class_open(committed_docs):
    for path, text, _, tables in _intervals(committed_docs):
        assert "Coverage by demand class" not in text, path  # the pivot repeated the tables' numbers
        units = list(dict.fromkeys((t.protocol, t.unit) for t in tables))
        for protocol, unit in units:
            cells = [t for t in tables if (t.protocol, t.unit) == (protocol, unit)]
            anchors = [intervals_anchor(protocol, unit, t.demand_class) for t in cells]
            opening = r'<details class="tyc-section" name="([^"]+)" id="{}"( open)?>'
            found = [re.search(opening.format(re.escape(a)), text) for a in anchors]
            assert all(found), (path, unit)
            assert len({f.group(1) for f in found}) == 1, (path, unit)  # one switcher per unit
            # the page opens on its first unit's first class; any other is one click away
            assert [bool(f.group(2)) for f in found] == [(protocol, unit) == units[0]] + [False] * (len(found) - 1)
        groups = re.findall(r'<details class="tyc-section" name="([^"]+)"', text)
        assert len(set(groups)) == len(units) and len(groups) == len(tables), path


def test_inventory_tables_name_models_and_write_the_policy_once(committed_docs):
    seen = 0
    for path, text, doc, tables in _intervals(committed_docs):
        names = {m.id: m.display_name for m in doc.models}
        policies = {reader_text(t.inventory.policy_text) for t in tables if t.inventory}
        for policy in policies:
            assert text.count(str(escape(named(policy, names)))) == 1, path
        for t in tables:
            if not t.inventory:
                continue
            head = f"<caption>Inventory simulation, {escape(t.unit)} / {t.demand_class}:"
            body = text.split(head, 1)[1].split("</table>", 1)[0]
            shown = re.findall(r"<tr><td>[^<]*</td><td>([^<]+)</td>", body)
            assert shown == [str(escape(names[r.model])) for r in t.inventory.rows], (path, t.unit)
            if t.inventory.winner:
                assert f"<strong>{escape(names[t.inventory.winner])}</strong>" in text, path
            seen += 1
    assert seen >= 20


@pytest.mark.parametrize("template", VIEWS)
def test_view_tables_have_captions_and_sort_on_their_text(committed_docs, template):
    pages = committed_docs.pages_of(template)
    seen = 0
    for path, text in pages.items():
        for match in _TABLE.finditer(_MACRO_TABLES.sub("", text)):
            assert match.group(1).lstrip().startswith("<caption>"), (path, match.group(0)[:200])
            assert match.group(0).count("data-sort=") <= match.group(0).count("&lt;0.0001"), path
            seen += 1
    assert seen >= len(pages) or template == "uncertainty.md.j2"


def test_the_uncertainty_method_is_written_once_per_dataset_and_cites_the_protocol_by_link(committed_docs):
    pages = committed_docs.pages_of("uncertainty.md.j2")
    index = {p: t for p, t in pages.items() if p.endswith("/uncertainty.md")}
    assert index and len(pages) > 2 * len(index)
    for path, text in pages.items():
        method = "Paired bootstrap that resamples <strong>time</strong>"
        if path in index:
            assert text.count(method) == 1 and 'href="../../../references.html#ref-wp26">' in text, path
        else:
            assert method not in text and 'href="uncertainty.html#method">How these are computed</a>' in text, path


@pytest.mark.parametrize("template", ["intervals.md.j2", "sensitivity.md.j2", "competition.md.j2", "replay.md.j2"])
def test_the_analyses_not_computed_are_linked_not_listed_on_the_view_pages(committed_docs, template):
    pages = committed_docs.pages_of(template)
    assert not any('<details class="tyc-skipped-analyses">' in t for t in pages.values())
    linked = [t for t in pages.values() if "analyses were not computed" in t]
    assert linked and all(re.search(r'analyses were not computed; <a href="\.\./index\.html">', t) for t in linked)


def test_intervals_pages_are_lighter(committed_docs):
    """The intervals pages' markdown is well under what it was with a pivot per unit, a ``data-sort`` on every
    cell and the inventory policy under every table (measured once on the committed results: 2,469,334 bytes
    for the 8 pages before the change)."""
    total = sum(len(text.encode()) for _, text, _, _ in _intervals(committed_docs))
    assert total < 0.6 * 2_469_334, total
