"""Nothing raw on the reference pages: the glossary's front matter is front matter, every formula of the
library's docstrings is MathML (no LaTeX command left in the text), every model on the site names its
method's source (a DOI, or a textbook for a baseline), and every citation links to a References entry.

The fast tests read the references file and the docstrings; the slow ones read the committed site
(``committed_docs``/``committed_site``, tests/_shared.py)."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from mkdocs.utils.meta import get_data

from benchmarks.published.catalogue import PUBLISHED_PATH, load_published
from benchmarks.render.definitions import (
    REFERENCES_PATH,
    References,
    forecaster_docs,
    load_references,
    read_package,
)
from benchmarks.render.docstring import blocks, mathml
from benchmarks.render.load import ROOT
from benchmarks.results_io import RESULTS_DIR

LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")


class _Text(HTMLParser):
    """The text a reader sees, with the ids and the targets of the links of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.ids: set[str] = set()
        self.hrefs: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag in {"script", "style"}:
            self._skip += 1
        if found.get("id"):
            self.ids.add(str(found["id"]))
        if tag == "a" and found.get("href"):
            self.hrefs.append(str(found["href"]))

    def handle_endtag(self, tag: str) -> None:
        if tag in {"script", "style"}:
            self._skip -= 1

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.text.append(data)


def _read(html: str) -> _Text:
    parser = _Text()
    parser.feed(html)
    return parser


def _library_docstrings() -> list[str]:
    docs = [d.doc for p in ("tycheon.metrics", "tycheon.stats") for d in read_package(ROOT, p).definitions]
    return docs + list(forecaster_docs(ROOT).values())


# --- fast: the converter and the references file ------------------------------------------------------------


def test_every_formula_of_the_library_docstrings_becomes_mathml_with_no_latex_left():
    docs = _library_docstrings()
    html = "".join(str(b.html) for d in docs for b in blocks(d))
    assert html.count("<math") >= 200  # the formulas of the shown sections (argument sections are left out)
    assert 'class="tyc-math">' not in html.replace('<div class="tyc-math"', "")  # no plain-text fallback
    assert LATEX_COMMAND.findall("".join(_read(html).text)) == []


def test_the_forms_the_converter_misreads_are_rewritten_and_a_directive_keeps_every_equation():
    for tex in (r"\arg\min_m \ell_m", r"\max\Big\{1, \frac{m}{j} p\Big\}", r"a \iff b \wedge c", r"\text{CI}"):
        out = str(mathml(tex))
        assert out.startswith("<math") and LATEX_COMMAND.findall("".join(_read(out).text)) == [], tex
    doc = "Two equations.\n\n.. math::\n\n    a = b\n\n    c = \\frac{d}{e}\n\nAfter.\n"
    kinds = [b.kind for b in blocks(doc)]
    assert kinds == ["p", "math", "math", "p"]


def test_phrases_of_a_docstring_link_to_their_references():
    html = "".join(str(b.html) for b in blocks("Hard to win (ADR-0006 decision 6).", {"ADR-0006": "r.html#ref-a"}))
    assert '<a class="tyc-cite" href="r.html#ref-a">ADR-0006</a> decision 6' in html


def test_every_published_source_is_cited_as_a_publication_with_a_doi():
    refs = load_references()
    for source in load_published(PUBLISHED_PATH).sources:
        work = refs.get(refs.published[source.id].cites)
        assert work.doi, source.id


def test_a_citation_of_an_undeclared_work_or_a_method_without_doi_is_refused():
    raw = json.loads(References.model_validate(_toml()).model_dump_json())
    broken = {**raw, "models": {**raw["models"], "naive": {"basis": "textbook", "cites": ["nowhere"]}}}
    with pytest.raises(ValueError, match=r"models\.naive -> 'nowhere'"):
        References.model_validate(broken)
    no_doi = {**raw, "models": {**raw["models"], "croston": {"basis": "paper", "cites": ["fpp3"]}}}
    with pytest.raises(ValueError, match=r"models\.croston: a method's source needs a DOI"):
        References.model_validate(no_doi)


def _toml() -> dict:
    import tomllib

    return tomllib.loads(REFERENCES_PATH.read_text(encoding="utf-8"))


# --- slow: the committed site ----------------------------------------------------------------------------


def _site_model_ids() -> set[str]:
    return {
        m["id"]
        for path in RESULTS_DIR.glob("*/v*.json")
        for m in json.loads(path.read_text(encoding="utf-8"))["models"]
    }


@pytest.mark.slow
def test_the_glossary_opens_with_front_matter_that_mkdocs_reads(committed_docs):
    text = (committed_docs.docs / "glossary.md").read_text(encoding="utf-8")
    body, meta = get_data(text)
    assert meta == {"hide": ["toc"]}
    assert body.lstrip().startswith("# Glossary")


@pytest.mark.slow
def test_methodology_shows_formulas_as_mathml_and_no_latex_command(committed_docs):
    html = (committed_docs.docs / "methodology.md").read_text(encoding="utf-8")
    assert html.count("<math") >= 100
    assert LATEX_COMMAND.findall("".join(_read(html).text)) == []


@pytest.mark.slow
def test_the_references_page_gives_every_model_on_the_site_a_doi_or_a_textbook(committed_docs):
    refs = load_references()
    page = (committed_docs.docs / "references.md").read_text(encoding="utf-8")
    ids = _site_model_ids()
    assert ids and ids <= set(refs.models)
    for mid in sorted(ids):
        row = re.search(rf'<tr id="model-{re.escape(mid)}">(.*?)</tr>', page)
        assert row is not None, mid
        cited = refs.models[mid]
        if cited.basis == "textbook":
            assert row.group(1).count("Textbook baseline: ") == 1 and 'href="#ref-fpp3"' in row.group(1), mid
        else:
            assert re.search(r'href="https://doi\.org/10\.\d{4,9}/', row.group(1)), mid


@pytest.mark.slow
def test_every_citation_on_methodology_glossary_and_published_pages_has_its_entry(committed_docs):
    docs: Path = committed_docs.docs
    anchors = _read((docs / "references.md").read_text(encoding="utf-8")).ids
    pages = [
        "methodology.md",
        "glossary.md",
        *(p.relative_to(docs).as_posix() for p in docs.glob("benchmarks/*/published.md")),
    ]
    checked = 0
    for page in pages:
        for href in _read((docs / page).read_text(encoding="utf-8")).hrefs:
            if "references.html#" in href:
                assert href.split("#", 1)[1] in anchors, (page, href)
                checked += 1
    assert checked >= 20
    for key in ("adr-0006", "wp26", "evaluation-choices", "sensitivity-audit"):
        assert f"ref-{key}" in anchors


@pytest.mark.slow
def test_published_pages_lead_with_a_comparison_and_cite_no_repository_path(committed_docs):
    for page in committed_docs.docs.glob("benchmarks/*/published.md"):
        text = page.read_text(encoding="utf-8")
        headings = re.findall(r"^## (.*)$", text, flags=re.M)
        assert "<table" in text.split(f"## {headings[1]}")[0], page  # the first section is a comparison
        body = text.split("## Provenance")[0]
        assert ".pdf" not in body and "competitions.toml" not in body and "jordicolomer" not in body


@pytest.mark.slow
def test_the_built_glossary_and_methodology_show_no_front_matter_or_latex(committed_site):
    glossary = "".join(_read((committed_site.html / "glossary.html").read_text(encoding="utf-8")).text)
    assert "hide:" not in glossary
    methodology = (committed_site.html / "methodology.html").read_text(encoding="utf-8")
    assert "<math" in methodology and LATEX_COMMAND.findall("".join(_read(methodology).text)) == []
