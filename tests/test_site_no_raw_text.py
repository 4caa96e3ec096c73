"""Nothing raw reaches a reader: every built page of the committed site is read as a reader sees it (the text of
its ``<article>``, without scripts, rendered maths or attributes) and must show no YAML front matter, no LaTeX
command, no Python traceback, no raw model id, no scientific notation and no note about machines or repository
files. Tracebacks and raw ids are looked for in code and preformatted blocks too (a reader sees those); the
other rules read the prose only, so a config path a contributor writes may stand in ``<code>``. A raw id may
stand in code only where it is labelled as one: a ``<code>`` right after the words "Model id" (the model page's
configuration table). An internal document (WP26, ADR-0006) may be named only in a citation, a link to its
entry on the References page; a bare "(WP26 section 6)" is a raw note. Each test names every offending page
with the text around each hit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.render import docstring, fmt
from benchmarks.render.builders.benchmark import config_value
from benchmarks.render.load import load_file
from benchmarks.render.pages import SiteModel, named, null_notes, reader_reason
from benchmarks.render.panels import panels_of
from benchmarks.results_io import RESULTS_DIR

# Elements a reader never sees as text: scripts and styles, and maths the site renders in the browser (its source
# is LaTeX by design). Code and preformatted blocks are seen but are not prose.
_HIDDEN_TAGS = frozenset({"script", "style", "template", "svg", "math"})
_CODE_TAGS = frozenset({"code", "pre", "kbd", "samp"})
_MATH_CLASSES = frozenset({"arithmatex", "katex", "katex-display", "MathJax"})
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
)

FRONT_MATTER = re.compile(r"(?m)^\s*---\s*(?:#|$)|\bhide:\s*-\s*(?:toc|navigation)\b")
LATEX = re.compile(r"\\[a-zA-Z]+")
TRACEBACK = re.compile(r"Traceback|File \"[^\"]+\", line \d+")
SCIENTIFIC = re.compile(r"(?<![\w.])\d+(?:\.\d+)?[eE][-+]?\d+(?![\w.])")
# Notes about the machine that ran something, or about the repository's files: a reader of the results has
# neither. Each entry is (pattern, what it catches).
MACHINE_OR_REPOSITORY = (
    (re.compile(r"\b\d+\s+(?:CPU\s+)?cores?\b|\bcores?\s+(?:budget|limit)\b", re.I), "cores"),
    (re.compile(r"\b\d+(?:\.\d+)?\s*(?:GiB|GB|MiB|MB)\s+(?:of\s+)?(?:RAM|memory)\b", re.I), "memory budget"),
    (
        re.compile(r"\b\d+-(?:hour|minute)\s+budget\b|\bbudget\s+of\s+\d+\s*(?:hours?|minutes?|h)\b", re.I),
        "time budget",
    ),
    (re.compile(r"\b[\w/.-]+\.py\b"), ".py file"),
    (re.compile(r"\b[\w/.-]+\.toml\b"), ".toml file"),
    (re.compile(r"\bREADME\.md\b"), "README.md"),
)
# Internal documents cited by number: fine in a citation (a link to the References page), raw anywhere else.
INTERNAL_DOCUMENTS = (
    (re.compile(r"\bADR-\d+"), "ADR number"),
    (re.compile(r"\bWP26\b"), "WP26"),
)
# The one page written for contributors, where repository files and registered model ids are the subject.
CONTRIBUTOR_PAGES = frozenset({"submit.html"})


# A link to an entry of the References page: its text is a citation, not a raw note.
_CITATION_HREF = re.compile(r"(?:^|/)references\.html#")
# The words that label the next ``<code>`` as a model id (the model page's configuration table).
_ID_LABEL = re.compile(r"\bModel id:?$", re.I)


@dataclass(frozen=True)
class _Open:
    """An open element and what it and the elements above it make of its text."""

    tag: str
    hidden: bool = False  # a reader does not see it
    code: bool = False  # code or preformatted
    cited: bool = False  # inside a link to the References page
    labelled_id: bool = False  # code labelled "Model id"


class _ArticleText(HTMLParser):
    """The visible text of a page's ``<article>``, one string per text node: ``prose`` (outside code),
    ``shown`` (everything a reader sees, code included, but a model id labelled as one) and ``uncited`` (prose
    outside links to the References page)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.prose: list[str] = []
        self.shown: list[str] = []
        self.uncited: list[str] = []
        self._stack: list[_Open] = []  # open elements, innermost last
        self._article = 0
        self._last = ""  # the last text a reader saw

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "article":
            self._article += 1
        if tag in _VOID:
            return
        attributes = dict(attrs)
        classes = set((attributes.get("class") or "").split())
        up = self._stack[-1] if self._stack else _Open("")
        code = up.code or tag in _CODE_TAGS
        self._stack.append(
            _Open(
                tag,
                hidden=up.hidden or tag in _HIDDEN_TAGS or bool(classes & _MATH_CLASSES),
                code=code,
                cited=up.cited or (tag == "a" and bool(_CITATION_HREF.search(attributes.get("href") or ""))),
                labelled_id=up.labelled_id or (tag == "code" and not up.code and bool(_ID_LABEL.search(self._last))),
            )
        )

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        pass

    def handle_endtag(self, tag: str) -> None:
        if tag == "article":
            self._article -= 1
        if tag in _VOID:
            return
        for i in range(len(self._stack) - 1, -1, -1):  # close the nearest open element of that name
            if self._stack[i].tag == tag:
                del self._stack[i:]
                break

    def handle_data(self, data: str) -> None:
        here = self._stack[-1] if self._stack else _Open("")
        if self._article == 0 or here.hidden or not data.strip():
            return
        self._last = data.strip()
        if not here.labelled_id:
            self.shown.append(data.strip())
        if not here.code:
            self.prose.append(data.strip())
            if not here.cited:
                self.uncited.append(data.strip())


@dataclass(frozen=True)
class ArticleText:
    prose: str  # text outside code and preformatted blocks
    shown: str  # every text a reader sees, code included, but a model id in code labelled "Model id"
    uncited: str | None = None  # the prose outside citations (links to the References page); None: the prose

    @property
    def outside_citations(self) -> str:
        return self.prose if self.uncited is None else self.uncited


def article_text(html: str) -> ArticleText:
    """What a reader reads in a built page's ``<article>`` (text nodes joined by a space)."""
    parser = _ArticleText()
    parser.feed(html)
    parser.close()
    return ArticleText(prose=" ".join(parser.prose), shown=" ".join(parser.shown), uncited=" ".join(parser.uncited))


def raw_model_ids(results_dir: Path = RESULTS_DIR) -> dict[str, str]:
    """Model id -> display name, for every model of every committed results version whose id a reader could
    not take for its name: the id is not a word of the display name, case aside (``lightgbm_global`` for
    "LightGBM (global)", ``ses`` for "Simple exponential smoothing"; not ``croston`` for "Croston")."""
    ids: dict[str, str] = {}
    for path in sorted(results_dir.glob("*/v*.json")):
        for model in json.loads(path.read_text(encoding="utf-8")).get("models", []):
            words = re.findall(r"[\w-]+", model["display_name"].lower())
            if model["id"] != model["display_name"] and model["id"].lower() not in words:
                ids[model["id"]] = model["display_name"]
    return ids


@dataclass(frozen=True)
class Hit:
    page: str
    rule: str
    snippet: str


def _snippet(text: str, match: re.Match[str]) -> str:
    return " ".join(text[max(0, match.start() - 60) : match.end() + 60].split())


def find_raw_text(page: str, text: ArticleText | str, *, model_ids: dict[str, str]) -> Iterator[Hit]:
    """Every raw thing in one page's reader text (see the module docstring), one :class:`Hit` per match; a
    plain string is read as prose."""
    if isinstance(text, str):
        text = ArticleText(prose=text, shown=text)
    rules: list[tuple[str, re.Pattern[str], str]] = [
        ("front matter", FRONT_MATTER, text.prose),
        ("LaTeX command", LATEX, text.prose),
        ("traceback", TRACEBACK, text.shown),
        ("scientific notation", SCIENTIFIC, text.prose),
    ]
    if model_ids and page not in CONTRIBUTOR_PAGES:  # the contributor's page names registered ids on purpose
        ids = "|".join(re.escape(m) for m in sorted(model_ids, key=len, reverse=True))
        rules.append(("raw model id", re.compile(rf"(?<![\w-])(?:{ids})(?![\w-])"), text.shown))
    if page not in CONTRIBUTOR_PAGES:
        rules.extend(
            (f"machine or repository note ({what})", pattern, text.prose) for pattern, what in MACHINE_OR_REPOSITORY
        )
        rules.extend(
            (f"machine or repository note ({what})", pattern, text.outside_citations)
            for pattern, what in INTERNAL_DOCUMENTS
        )
    for rule, pattern, where in rules:
        for match in pattern.finditer(where):
            yield Hit(page, rule, _snippet(where, match))


def scan_site(html_dir: Path, *, model_ids: dict[str, str]) -> list[Hit]:
    hits: list[Hit] = []
    for path in sorted(html_dir.rglob("*.html")):
        page = path.relative_to(html_dir).as_posix()
        text = path.read_text(encoding="utf-8")
        hits.extend(find_raw_text(page, article_text(text), model_ids=model_ids))
        for metric, panel in list(panels_of(text).items())[1:]:  # a leaderboard's packed panels, as shown
            where = f"{page}#{metric}"
            hits.extend(find_raw_text(where, article_text(f"<article>{panel}</article>"), model_ids=model_ids))
    return hits


def report(hits: list[Hit], limit: int = 400) -> str:
    """Every offending page, with the text around each hit (the first ``limit`` hits in full, then a count)."""
    by_page: dict[str, list[Hit]] = {}
    for hit in hits:
        by_page.setdefault(hit.page, []).append(hit)
    lines = [f"{len(hits)} hit(s) on {len(by_page)} page(s):"]
    shown = 0
    for page, page_hits in by_page.items():
        lines.append(f"{page}: {len(page_hits)}")
        for hit in page_hits:
            if shown < limit:
                lines.append(f"    [{hit.rule}] ...{hit.snippet}...")
            shown += 1
    if shown > limit:
        lines.append(f"... and {shown - limit} more hit(s) not shown")
    return "\n".join(lines)


# --- the reader of one page, on strings written for the purpose -----------------------------------------------


def test_article_text_keeps_prose_apart_from_code_and_drops_scripts_maths_and_attributes() -> None:
    html = (
        '<nav>outside 1e-07</nav><article><p data-x="1e-07">A <a href="models/lightgbm_global.html">name</a>'
        "<code>lightgbm_global</code><pre>Traceback</pre></p><script>var x = 1e-07;</script>"
        '<span class="arithmatex">\\(a \\wedge b\\)</span><br>after<img src="x.png"> end</p></article>'
    )
    text = article_text(html)
    assert text.prose == "A name after end"
    assert text.shown == "A name lightgbm_global Traceback after end"


def test_a_traceback_or_raw_id_in_code_is_found_but_a_config_path_in_code_is_not() -> None:
    text = article_text(
        "<article><p>Write <code>benchmarks/models/x.toml</code>.</p>"
        '<pre>  File "tycheon/a.py", line 3, in f</pre><code>lightgbm_global</code></article>'
    )
    rules = {h.rule for h in find_raw_text("page.html", text, model_ids={"lightgbm_global": "LightGBM (global)"})}
    assert rules == {"traceback", "raw model id"}


_IDS = {"lightgbm_global": "LightGBM (global)"}


def test_an_internal_document_is_fine_in_a_citation_linked_to_the_references_page_and_raw_elsewhere() -> None:
    cited = article_text(
        '<article><p>(the minimum cell of <a class="tyc-cite" href="../references.html#ref-wp26">the WP26 '
        'evaluation protocol</a>, section 6; <a href="references.html#ref-adr-0006">ADR-0006</a>)</p></article>'
    )
    assert list(find_raw_text("page.html", cited, model_ids=_IDS)) == []
    for raw in (
        "<article><p>fewer than the minimum cell of 30 (WP26 section 6)</p></article>",
        '<article><p><a href="glossary.html#cell-rule">WP26 section 6</a></p></article>',
        '<article><p><a href="references.html#ref-wp26">the protocol</a> (ADR-0006 decision 7)</p></article>',
    ):
        rules = {h.rule for h in find_raw_text("page.html", article_text(raw), model_ids=_IDS)}
        assert rules & {"machine or repository note (WP26)", "machine or repository note (ADR number)"}, raw


def test_a_model_id_in_code_is_allowed_only_where_the_words_model_id_label_it() -> None:
    labelled = article_text(
        '<article><table><tr><th scope="row">Model id</th><td><code>lightgbm_global</code></td></tr>'
        "<tr><th>Config sha256</th><td><code>3e5a</code></td></tr></table></article>"
    )
    assert labelled.shown == "Model id Config sha256 3e5a"
    assert list(find_raw_text("page.html", labelled, model_ids=_IDS)) == []
    for raw in (
        "<article><p>Model id lightgbm_global</p></article>",  # labelled, but not as code
        "<article><p>Config sha256 <code>lightgbm_global</code></p></article>",
        "<article><p>Model id <code>naive</code>, <code>lightgbm_global</code></p></article>",  # the label's code only
        "<article><p>Model id <code>x</code> <code>lightgbm_global</code></p></article>",
    ):
        rules = {h.rule for h in find_raw_text("page.html", article_text(raw), model_ids=_IDS)}
        assert rules == {"raw model id"}, raw


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("hide:\n  - toc\n---# Glossary", "front matter"),
        ("a \\iff b", "LaTeX command"),
        ("Traceback (most recent call last):", "traceback"),
        ("p = 1.82e-07", "scientific notation"),
        ("served lightgbm_global most", "raw model id"),
        ("a 2-hour budget on 2 cores", "machine or repository note (cores)"),
        ("see benchmarks/README.md", "machine or repository note (README.md)"),
        ("set in run.py", "machine or repository note (.py file)"),
        ("ADR-0006 decision 6", "machine or repository note (ADR number)"),
        ("WP26 section 6", "machine or repository note (WP26)"),
    ],
)
def test_each_raw_kind_is_found(text: str, rule: str) -> None:
    hits = list(find_raw_text("page.html", text, model_ids={"lightgbm_global": "LightGBM (global)"}))
    assert rule in {h.rule for h in hits}


@pytest.mark.parametrize(
    "text",
    [
        "LightGBM (global) beats the random walk in 12 of 14 cells; p < 0.001",
        "Theta (M3, classical) ranks 3rd; 0.000 to 1.000; version v0003, sha 3e5a",
        "Croston and IMAPA tie; the model page of Seasonal naive",
    ],
)
def test_reader_text_is_not_flagged(text: str) -> None:
    ids = {"lightgbm_global": "LightGBM (global)", "theta_classic": "Theta (M3, classical)", "ses": "SES"}
    assert list(find_raw_text("page.html", text, model_ids=ids)) == []


def test_raw_model_ids_are_those_a_reader_cannot_take_for_names(tmp_path: Path) -> None:
    models = [
        {"id": "lightgbm_global", "display_name": "LightGBM (global)"},
        {"id": "croston", "display_name": "Croston"},
        {"id": "naive", "display_name": "Naive (random walk)"},
        {"id": "ses", "display_name": "Simple exponential smoothing"},
    ]
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "v0001.json").write_text(json.dumps({"models": models}), encoding="utf-8")
    assert raw_model_ids(tmp_path) == {"lightgbm_global": "LightGBM (global)", "ses": "Simple exponential smoothing"}


# --- the formatting and the reasons the pages show, without a build -------------------------------------------

_FILTERS = (fmt.num, fmt.pct, fmt.pvalue, fmt.pcompare, fmt.pshort, fmt.sort_key, fmt.duration, fmt.plain)


@given(st.floats(allow_nan=False, allow_infinity=False) | st.floats(min_value=-1e-6, max_value=1e-6))
def test_no_number_filter_writes_scientific_notation(value: float) -> None:
    for write in _FILTERS:
        assert not SCIENTIFIC.search(write(value)), (write.__name__, value, write(value))


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_sort_keys_without_an_exponent_keep_the_value_the_table_sorter_reads(value: float) -> None:
    assert float(fmt.sort_key(value)) == float(f"{value:.10g}")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (4.21e-08, "< 0.001"),
        (0.0009999, "< 0.001"),
        (0.001, "0.001"),
        (0.1187, "0.119"),
        (0.05021, "0.0502"),
        (0.5, "0.5"),
        (None, "\u2013"),
    ],
)
def test_a_p_value_in_running_text_has_three_significant_digits_or_says_below_0_001(
    value: float | None, text: str
) -> None:
    assert fmt.pshort(value) == text


def test_plain_and_pcompare_write_small_and_large_values_out() -> None:
    assert fmt.plain(1e-05) == "0.00001" and fmt.plain(0.05) == "0.05" and fmt.plain(1e20) == "100000000000000000000"
    assert fmt.pcompare(0.0012) == "=0.0012" and fmt.sort_key(1.61e-16) == "0.000000000000000161"


_TRACEBACK_TEXT = (
    "Traceback (most recent call last):\n"
    '  File "tycheon/backtest/tasks.py", line 303, in _step\n'
    "    forecast = fitted.predict(\n"
    "               ^^^^^^^^^^^^^^^\n"
    "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 3.2 GiB for an array\n"
)


@pytest.mark.parametrize(
    ("reason", "traceback", "line"),
    [
        (None, _TRACEBACK_TEXT, "_ArrayMemoryError: Unable to allocate 3.2 GiB for an array"),
        (_TRACEBACK_TEXT, None, "_ArrayMemoryError: Unable to allocate 3.2 GiB for an array"),
        (
            "tycheon.forecasters.base.ForecasterError: quantiles cross",
            _TRACEBACK_TEXT,
            "ForecasterError: quantiles cross",
        ),
        ("ValueError: bad input\nsecond line of the message", None, "ValueError: bad input"),
        ("package 'timesfm' is not installed", None, "package 'timesfm' is not installed"),
        (None, None, ""),
    ],
)
def test_a_reason_is_one_line_the_exceptions_last_line_when_only_a_traceback_was_kept(
    reason: str | None, traceback: str | None, line: str
) -> None:
    assert fmt.reason_line(reason, traceback) == line


@pytest.mark.parametrize(
    ("text", "read"),
    [
        (
            "11 scored blocks (series x origin), fewer than the minimum cell of 30 (WP26 section 6)",
            "11 scored blocks (series x origin), fewer than the minimum cell of 30",
        ),
        (
            "left out here: too slow for this panel on 2 cores: 0.22 s per fit (measured on 20 full-length series at "
            "6 origins, one core), about 26 min of wall time for the 2,188 unit series at 6 origins, which the 2-hour "
            "budget cannot hold beside AutoARIMA on the M3 and Tourism monthly categories (see benchmarks/README.md)",
            "left out here: too slow for this panel: 0.22 s per fit (measured on 20 full-length series at 6 origins), "
            "about 26 min of wall time for the 2,188 unit series at 6 origins",
        ),
        (
            "the verdict needs both models scored the same way (ADR-0006 decision 7)",
            "the verdict needs both models scored the same way",
        ),
        (
            "origins move together; WP26 section 4.1, Politis & Romano 1992)",
            "origins move together; Politis & Romano 1992)",
        ),
        ("an embargo gap (ADR-0006, decisions 2 and 3). Then", "an embargo gap. Then"),
        ("killed at 4 GiB of memory, over the limit", "killed at 4 GiB of memory, over the limit"),
        ("fits the weight in [1e-4, 1], on the series", "fits the weight in [0.0001, 1], on the series"),
        ("stopped, over its 2 GB of RAM budget", "stopped"),
        (
            "package 'timesfm' is not installed (module 'timesfm' not importable)",
            "package 'timesfm' is not installed (module 'timesfm' not importable)",
        ),
    ],
)
def test_reader_text_drops_machine_file_and_internal_document_notes_and_keeps_the_rest(text: str, read: str) -> None:
    assert fmt.reader_text(text) == read
    assert (
        not [h for h in find_raw_text("page.html", read, model_ids={}) if h.rule.startswith("machine")] or "GiB" in read
    )


def test_a_runs_configuration_reads_with_names_plain_numbers_and_no_machine_notes() -> None:
    names = {"ses": "Simple exponential smoothing", "lightgbm_global": "LightGBM (global)"}
    shown = config_value(
        {
            "models": ["ses", "lightgbm_global"],
            "tol": 1e-05,
            "lost_sales": True,
            "skip_models": {"lightgbm_global": "too slow on 2 cores (see benchmarks/README.md)"},
            "datasets": [{"name": "m3", "analysis_models": None}],
        },
        names,
    )
    text = article_text(f"<article>{shown}</article>")
    assert "Simple exponential smoothing, LightGBM (global)" in text.prose and "0.00001" in text.prose
    assert "LightGBM (global): too slow" in text.prose and "<script" not in config_value("<script>", {})
    assert list(find_raw_text("page.html", text, model_ids=names)) == []


def test_a_document_cited_by_number_in_a_docstring_links_to_the_references_page_in_reader_words() -> None:
    links = {"ADR-0006": ("references.html#ref-adr-0006", "the walk-forward record"), "WP26": "references.html#x"}
    shown = str(docstring.inline("References ADR-0006 decision 6; WP26 section 3.1.", links))
    assert shown == (
        'References <a class="tyc-cite" href="references.html#ref-adr-0006">the walk-forward record</a>, decision 6; '
        '<a class="tyc-cite" href="references.html#x">WP26</a> section 3.1.'
    )
    assert list(find_raw_text("page.html", article_text(f"<article>{shown}</article>"), model_ids={})) == []


def test_model_ids_are_written_as_display_names_as_whole_tokens_only() -> None:
    names = {"ses": "Simple exponential smoothing", "ses_classic": "SINGLE", "auto_theta": "AutoTheta"}
    assert named("ses_classic uses ses, not ses-x", names) == "SINGLE uses Simple exponential smoothing, not ses-x"
    assert (
        reader_reason("WallClockExceeded: auto_theta: stopped at its wall-clock limit of 405 s", None, names)
        == "WallClockExceeded: AutoTheta: stopped at its wall-clock limit of 405 s"
    )


@pytest.fixture(scope="module")
def failing_run(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    """The example results with one model failed on every run (only a traceback kept) and one skipped with a
    machine note and its own id in the reason."""
    data = json.loads((Path(__file__).parent / "fixtures" / "results_example.json").read_text(encoding="utf-8"))
    for m in data["models"]:
        if m["id"] == "ses":
            for r in m["runs"]:
                r.update(status="failed", reason=None, traceback=_TRACEBACK_TEXT, support=0)
        if m["id"] == "auto_ets":
            for r in m["runs"]:
                r.update(
                    status="skipped",
                    reason="left out here: auto_ets too slow on 2 cores (see benchmarks/README.md)",
                    traceback=None,
                    support=0,
                )
    data["warnings"].append(
        {"dataset": None, "kind": "other", "message": "ses is read as the protocol says (ADR-0006 decision 7)"}
    )
    folder = tmp_path_factory.mktemp("failing") / "small"
    folder.mkdir()
    (folder / "v0001.json").write_text(json.dumps(data), encoding="utf-8")
    return load_file(folder / "v0001.json")


def test_skipped_and_failed_models_show_one_line_reasons_with_display_names(failing_run) -> None:  # noqa: ANN001
    site = SiteModel([failing_run])
    rows = {
        r["model"]: r
        for r in site.not_scored(failing_run, dataset="synthetic_marketplace", protocol="rolling_origin", present=set())
    }
    assert rows["ses"]["reason"] == "_ArrayMemoryError: Unable to allocate 3.2 GiB for an array"
    assert rows["auto_ets"]["reason"] == "left out here: AutoETS too slow"
    assert all("traceback" not in r for r in rows.values())
    entries = {(e["model"], e["reason"]) for e in site.not_ran(failing_run) if e["model"] in ("ses", "auto_ets")}
    assert entries == {
        ("ses", "_ArrayMemoryError: Unable to allocate 3.2 GiB for an array"),
        ("auto_ets", "left out here: AutoETS too slow"),
    }
    messages = [w.message for w in site.run_warnings(failing_run)]
    assert "Simple exponential smoothing is read as the protocol says" in messages


def test_leaderboard_notes_read_without_internal_document_numbers(failing_run) -> None:  # noqa: ANN001
    lb = failing_run.data.leaderboards[0]
    row = lb.rows[1].model_copy(
        update={
            "dm_p_bh": None,
            "dm_reason": f"3 blocks, fewer than the minimum cell of 30 (WP26 section 6) for {lb.rows[0].model}",
        }
    )
    notes = null_notes([lb.rows[0], row])["notes"]
    assert [n["reason"] for n in notes] == [
        f"3 blocks, fewer than the minimum cell of 30 for {lb.rows[0].display_name}"
    ]


# --- the committed site ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hits(committed_site) -> list[Hit]:  # noqa: ANN001
    return scan_site(committed_site.html, model_ids=raw_model_ids())


# The page types whose every page reads clean on its own: a failure names the page type before the whole site's
# test names every hit.
PAGE_TYPES = {
    "home": r"index\.html",
    "benchmark": r"benchmarks/[^/]+/index\.html",
    "dataset": r"benchmarks/[^/]+/[^/]+/index\.html",
    "published": r"benchmarks/[^/]+/published\.html",
    "model": r"models/[^/]+\.html",
    "reference": r"(?:methodology|glossary|references)\.html",
}


@pytest.mark.parametrize("page_type", sorted(PAGE_TYPES))
def test_no_page_of_a_reader_page_type_shows_raw_text(hits: list[Hit], page_type: str) -> None:
    found = [h for h in hits if re.fullmatch(PAGE_TYPES[page_type], h.page)]
    assert not found, report(found)


@pytest.mark.parametrize(
    "rule",
    ["front matter", "LaTeX command", "traceback", "raw model id", "scientific notation", "machine or repository"],
)
def test_no_built_page_shows_raw_text(hits: list[Hit], rule: str) -> None:
    found = [h for h in hits if h.rule.startswith(rule)]
    assert not found, report(found)
