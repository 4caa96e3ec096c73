"""The renderer end to end: determinism, escaping of contributed strings, errors, history, built links."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from benchmarks.render import RenderTargetError, ResultsFileError, render_site
from benchmarks.render.panels import panels_of
from benchmarks.render.site import plotly_bundle
from tests._shared import leaderboard_panel, mkdocs_build

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "results_example.json"


def _fixture() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def _write(results: Path, data: dict) -> Path:
    path = results / data["name"] / f"{data['version']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_rendering_the_same_results_twice_gives_byte_identical_pages(tmp_path):
    results = tmp_path / "results"
    data = _fixture()
    _write(results, data)
    second = copy.deepcopy(data)
    second["version"] = "v0002"
    _write(results, second)
    render_site(results_dir=results, out=tmp_path / "a" / "docs")
    render_site(results_dir=results, out=tmp_path / "b" / "docs")
    a, b = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert len(a) > 30
    assert a.keys() == b.keys()
    assert [name for name in a if a[name] != b[name]] == []


def test_a_rerender_replaces_stale_pages_and_keeps_nothing_old(tmp_path):
    results = tmp_path / "results"
    _write(results, _fixture())
    out = tmp_path / "site" / "docs"
    render_site(results_dir=results, out=out)
    (out / "stale.md").write_text("old")
    render_site(results_dir=results, out=out)
    assert not (out / "stale.md").exists()


def test_when_the_output_folder_holds_foreign_files_then_the_renderer_refuses_to_wipe_it(tmp_path):
    out = tmp_path / "docs"
    out.mkdir()
    (out / "precious.md").write_text("keep me")
    with pytest.raises(RenderTargetError, match="refusing to delete"):
        render_site(results_dir=tmp_path / "none", out=out)
    assert (out / "precious.md").read_text() == "keep me"


def _run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.render", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_when_a_results_file_breaks_the_schema_then_the_cli_exits_non_zero_naming_file_and_field(tmp_path):
    data = _fixture()
    data["leaderboards"][0]["rows"][0]["dm_p_bh"] = 1.7
    path = _write(tmp_path / "results", data)
    done = _run_cli("--results", str(tmp_path / "results"), "--out", str(tmp_path / "site" / "docs"))
    assert done.returncode == 2
    assert str(path) in done.stderr
    assert "/leaderboards/0/rows/0/dm_p_bh" in done.stderr and "1.7" in done.stderr
    assert not (tmp_path / "site" / "docs").exists()


def test_when_a_results_file_is_not_json_or_misfiled_then_the_error_says_so(tmp_path):
    results = tmp_path / "results"
    (results / "small").mkdir(parents=True)
    (results / "small" / "v0001.json").write_text("{not json")
    with pytest.raises(ResultsFileError, match=r"not valid JSON \(line 1"):
        render_site(results_dir=results, out=tmp_path / "docs")
    data = _fixture()
    (results / "small" / "v0001.json").unlink()
    misfiled = results / "other" / "v0003.json"
    misfiled.parent.mkdir()
    misfiled.write_text(json.dumps(data))
    with pytest.raises(ResultsFileError, match="is filed as other/v0003.json"):
        render_site(results_dir=results, out=tmp_path / "docs")


def test_history_page_reports_which_models_moved_between_consecutive_versions(tmp_path):
    results = tmp_path / "results"
    old = _fixture()
    _write(results, old)
    new = copy.deepcopy(old)
    new["version"] = "v0002"
    board = next(
        lb for lb in new["leaderboards"] if (lb["unit"], lb["demand_class"], lb["metric"]) == ("series", "all", "mase")
    )
    first, last = board["rows"][0], board["rows"][-1]
    n = last["rank"]
    assert first["rank"] == 1 and n > 2
    first["rank"], last["rank"] = n, 1
    _write(results, new)
    out = tmp_path / "site" / "docs"
    render_site(results_dir=results, out=out)
    history = (out / "benchmarks" / "small" / "history.md").read_text()
    assert "v0001 to v0002" in history
    moved = re.findall(r"<li>Rank, (\d+) \u2192 (\d+): ([^<]+)</li>", history)
    assert sorted(moved) == sorted([("1", str(n), first["display_name"]), (str(n), "1", last["display_name"])])
    assert "Nothing a reader would notice changed" not in history


def test_history_page_says_nothing_changed_once_when_nothing_did(tmp_path):
    results = tmp_path / "results"
    old = _fixture()
    _write(results, old)
    new = copy.deepcopy(old)
    new["version"] = "v0002"
    board = new["leaderboards"][0]
    board["rows"][0]["mean"] = (board["rows"][0]["mean"] or 0) + 1e-9  # a number moved, nothing a reader sees
    _write(results, new)
    out = tmp_path / "site" / "docs"
    render_site(results_dir=results, out=out)
    history = (out / "benchmarks" / "small" / "history.md").read_text()
    assert history.count("Nothing a reader would notice changed") == 1
    assert "no model moved.<" not in history and "<li>" not in history.split("v0001 to v0002")[1]


def test_every_skipped_or_failed_model_is_named_on_its_leaderboard_and_listed_with_its_reason_on_its_dataset_page(
    tmp_path,
):
    results = tmp_path / "results"
    _write(results, _fixture())
    out = tmp_path / "site" / "docs"
    render_site(results_dir=results, out=out)
    page = leaderboard_panel(
        out / "benchmarks/small/synthetic_marketplace/rolling_origin/series/leaderboard-all.md", "mase"
    )
    line = page.split('class="tyc-caption tyc-notscored"')[1].split("</p>")[0]
    assert "AutoARIMA (failed)" in line and "Chronos-Bolt (skipped)" in line and 'href="../../index.html"' in line
    dataset = (out / "benchmarks/small/synthetic_marketplace/index.md").read_text()
    assert "time budget of 120 s exceeded after 96 of 400 series" in dataset and "tyc-status-failed" in dataset
    assert "needs the &#39;chronos-forecasting&#39; package" in dataset and "tyc-status-skipped" in dataset


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.anchors: list[str] = []  # <a href>: navigation a reader chooses, not a load
        self.scripts: list[str] = []  # executable scripts only
        self.data_blocks: list[str] = []  # <script type="application/json">: chart data, never run
        self.handlers: list[tuple[str, str]] = []
        self._in_script = False
        self._in_data = False

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name.startswith("on"):
                self.handlers.append((tag, name))
            if name in ("href", "src") and value:
                self.links.append(value)
                if tag == "a" and name == "href":
                    self.anchors.append(value)
        is_data = tag == "script" and dict(attrs).get("type") == "application/json"
        self._in_script = tag == "script" and not is_data
        self._in_data = is_data

    def handle_endtag(self, tag):
        self._in_script = False
        self._in_data = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)
        if self._in_data:
            self.data_blocks.append(data)


def test_hostile_model_names_render_as_text_in_the_built_html(hostile_site):
    cell = hostile_site / "benchmarks/small/synthetic_marketplace/rolling_origin/series/leaderboard-all.html"
    for metric in ("mase", "rmsse"):  # the panel shown and one packed
        page = leaderboard_panel(cell, metric)
        assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in page
        assert "&lt;img src=x onerror=" in page
    texts = []
    for html_file in sorted(hostile_site.rglob("*.html")):
        text = html_file.read_text(encoding="utf-8")
        texts.append((html_file, text))
        texts.extend((html_file, panel) for panel in list(panels_of(text).values())[1:])  # what a script shows
    for html_file, text in texts:
        assert "<script>window.__xss" not in text, html_file
        assert "<img src=x" not in text, html_file
        collector = _Collector()
        collector.feed(text)
        assert collector.handlers == [], f"{html_file}: inline event handlers {collector.handlers}"
        assert not any("__xss" in s for s in collector.scripts), html_file
        for block in collector.data_blocks:  # chart data: valid JSON that cannot close its script element
            assert "<" not in block and json.loads(block) is not None, html_file


def test_every_internal_link_and_asset_in_the_built_site_resolves(hostile_site):
    broken = []
    # mkdocs' own 404 page uses root-absolute links by design (it is served at any path)
    for html_file in sorted(p for p in hostile_site.rglob("*.html") if p.name != "404.html"):
        collector = _Collector()
        text = html_file.read_text(encoding="utf-8")
        collector.feed(text)
        for panel in list(panels_of(text).values())[1:]:  # the packed panels' links too
            collector.feed(panel)
        for link in collector.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith(("#", "//", "mailto:")):
                continue
            target = (html_file.parent / unquote(parts.path)).resolve()
            if parts.path and not target.exists():
                broken.append(f"{html_file.relative_to(hostile_site)} -> {link}")
    assert broken == []


# references the methodology and the References page link to; followed only on a click
READING_HOSTS = {"doi.org", "jmlr.org", "otexts.com", "papers.nips.cc"}


def test_built_site_loads_nothing_from_the_network(hostile_site):
    external = set()
    for html_file in sorted(hostile_site.rglob("*.html")):
        collector = _Collector()
        collector.feed(html_file.read_text(encoding="utf-8"))
        external |= {
            link
            for link in collector.links
            if link.startswith(("http:", "https:", "//"))
            and urlsplit(link).netloc not in {"github.com", "squidfunk.github.io", "www.mkdocs.org"}
            and not (link in collector.anchors and urlsplit(link).netloc in READING_HOSTS)
        }
    assert external == set()
    assert (hostile_site / "assets" / "plotly.min.js").read_bytes() == plotly_bundle().read_bytes()  # no CDN


def test_with_no_results_yet_the_site_still_builds_and_says_so(tmp_path):
    render_site(results_dir=tmp_path / "results", out=tmp_path / "site" / "docs")
    home = (tmp_path / "site" / "docs" / "index.md").read_text()
    assert "No results yet" in home and "make run" in home
    mkdocs_build(tmp_path / "site" / "mkdocs.yml", tmp_path / "html")
    assert (tmp_path / "html" / "index.html").exists()


def test_a_site_rendered_outside_the_repository_names_no_path_of_this_machine_and_builds_after_a_move(tmp_path):
    """The committed site's mkdocs.yml points into the repository; one rendered elsewhere (``tycheon
    evaluate --out``) carries its own copy of the hooks and theme overrides, so its config holds no
    ``..`` path back to wherever the repository happens to be, and the folder builds after a move."""
    from benchmarks.render.site import HOOKS, OVERRIDES, _theme_files

    results = tmp_path / "results"
    _write(results, _fixture())
    render_site(results_dir=results, out=tmp_path / "a" / "site" / "docs")
    config = (tmp_path / "a" / "site" / "mkdocs.yml").read_text(encoding="utf-8")
    assert ".." not in config and str(ROOT) not in config and str(tmp_path) not in config
    assert "hooks:\n  - theme/hooks.py" in config and "custom_dir: theme/overrides" in config
    theme = tmp_path / "a" / "site" / "theme"
    assert (theme / "hooks.py").read_bytes() == HOOKS.read_bytes()
    assert (theme / "overrides/partials/source.html").read_bytes() == (OVERRIDES / "partials/source.html").read_bytes()
    moved = tmp_path / "elsewhere" / "deeper" / "site"
    moved.parent.mkdir(parents=True)
    (tmp_path / "a" / "site").rename(moved)
    mkdocs_build(moved / "mkdocs.yml", tmp_path / "html")
    home = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    assert 'class="md-source"' in home and 'data-md-component="source"' not in home  # the override was used
    assert (tmp_path / "html" / "search" / "search_index.js").is_file()  # the hooks ran
    inside = _theme_files(ROOT / "site", root=ROOT)  # the published site (make run): no copy, relative paths
    assert inside == {"hooks": "../benchmarks/render/hooks.py", "custom_dir": "../templates/overrides"}


def test_methodology_quotes_library_docstrings_and_names_what_is_missing(tmp_path):
    from benchmarks.render.definitions import read_package

    lib = tmp_path / "tycheon" / "metrics"
    lib.mkdir(parents=True)
    (lib / "point.py").write_text(
        'def mase(*, y, f):\n    """Mean absolute scaled error.\n\n    .. math:: q = e / s\n    """\n\n'
        'def _hidden():\n    """private"""\n'
    )
    found = read_package(tmp_path, "tycheon.metrics")
    assert [(d.module, d.name, d.signature) for d in found.definitions] == [
        ("tycheon.metrics.point", "mase", "mase(*, y, f)")
    ]
    assert ".. math:: q = e / s" in found.definitions[0].doc and found.note is None
    missing = read_package(tmp_path, "tycheon.stats")
    assert missing.definitions == () and "does not exist" in missing.note


def test_data_warnings_come_from_the_dataset_flags_even_when_the_harness_wrote_none(tmp_path):
    data = _fixture()
    data["datasets"][1]["redistributable"] = False  # m3_monthly, which carries no such warning
    assert not any(w["kind"] == "not_redistributable" for w in data["warnings"])
    _write(tmp_path / "results", data)
    out = tmp_path / "site" / "docs"
    render_site(results_dir=tmp_path / "results", out=out)
    page = leaderboard_panel(out / "benchmarks/small/m3_monthly/rolling_origin/series/leaderboard-all.md", "mase")
    assert "its data warnings (subsample, not redistributable)" in page  # named, the box is on the dataset page
    dataset = (out / "benchmarks/small/m3_monthly/index.md").read_text()
    assert "<strong>not redistributable</strong> (m3_monthly)" in dataset
    home = (out / "index.md").read_text()
    assert "&mdash; failed on synthetic_marketplace (rolling origin): time budget of 120 s exceeded" in home


# --- No page is wider than a phone: the built HTML read against what the site's CSS lets scroll or wrap -------

PHONE = 390  # px: the narrowest width the browser tests load (tests/test_site_browser.py)
CONTENT_MARGIN = 32  # px: mkdocs-material pads its content .8rem on each side, at a 20 px root font size
CHAR_PX = 0.6 * 16  # px: a generous average character (0.6 em) at .md-typeset's .8rem
_COMPOUND = re.compile(r"(?P<tag>[a-z][a-z0-9]*)?(?P<classes>(?:\.[\w-]+)*)(?P<classless>:not\(\[class\]\))?")
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)\b((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>")
_CLASS = re.compile(r"""\bclass\s*=\s*["']([^"']*)["']""")
_INLINE_WIDTH = re.compile(r"(?:^|[;\s\"'])(?:min-)?width\s*:\s*([\d.]+)(px|em|rem)", re.I)
_WIDTH_ATTR = re.compile(r"""\bwidth\s*=\s*["']?(\d+)""", re.I)
_VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())
_SIZED = frozenset("img svg video canvas iframe embed object table".split())


@dataclass(frozen=True)
class LayoutRule:
    """A CSS rule of the simple form the site's layout relies on, ``[.within ]tag.class[:not([class])]``, and
    what it does to content wider than its box: ``contains`` it (overflow auto, scroll, hidden or clip),
    lets long words ``wrap`` (overflow-wrap, word-break), or keeps text on one line (``nowrap``)."""

    tag: str | None
    classes: frozenset[str]
    classless: bool
    within: str | None
    contains: bool
    wrap: bool | None
    nowrap: bool | None

    def applies(self, tag: str, classes: frozenset[str], ancestors: frozenset[str]) -> bool:
        return (
            (self.tag is None or self.tag == tag)
            and self.classes <= classes
            and not (self.classless and classes)
            and (self.within is None or self.within in ancestors)
        )


def _top_level_rules(css: str) -> list[tuple[str, str]]:
    """(selector list, declarations) of every rule outside an at-rule (@media and the like apply only at
    some widths or not to layout; a rule the check does not see only makes it stricter)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    rules, depth, start, head = [], 0, 0, ""
    for m in re.finditer(r"[{};]", css):
        char = m.group()
        if depth == 0 and char == ";":  # @charset "UTF-8"; @import ...;
            start = m.end()
        elif char == "{":
            if depth == 0:
                head, start = css[start : m.start()].strip(), m.end()
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                if not head.startswith("@"):
                    rules.append((head, css[start : m.start()]))
                start = m.end()
    return rules


def layout_rules(css: str) -> list[LayoutRule]:
    """The rules of ``css`` (in source order) that contain, wrap or unwrap wide content."""
    out = []
    for selectors, body in _top_level_rules(css):
        decl = {
            k.strip().lower(): v.strip().lower() for k, _, v in (d.partition(":") for d in body.split(";")) if v.strip()
        }
        overflow = {decl.get("overflow", ""), decl.get("overflow-x", "")}
        contains = bool(overflow & {"auto", "scroll", "hidden", "clip"})
        breaks = decl.get("overflow-wrap", decl.get("word-wrap")), decl.get("word-break")
        wrap = None
        if breaks[0] in ("anywhere", "break-word") or breaks[1] in ("break-all", "break-word"):
            wrap = True
        elif breaks[0] == "normal" or breaks[1] == "normal":
            wrap = False
        space = decl.get("white-space")
        nowrap = None if space is None else space in ("nowrap", "pre")
        if not (contains or wrap is not None or nowrap is not None):
            continue
        for selector in selectors.split(","):
            parts = re.sub(r"\s*>\s*", " ", selector.strip()).split()
            compounds = [_COMPOUND.fullmatch(p) for p in parts]
            if not parts or len(parts) > 2 or not all(compounds):
                continue  # a form the layout does not rely on
            last = compounds[-1]
            within = None
            if len(parts) == 2:
                first = compounds[0]
                if first["tag"] or first["classless"] or first["classes"].count(".") != 1:
                    continue
                within = first["classes"][1:]
            out.append(
                LayoutRule(
                    tag=last["tag"],
                    classes=frozenset(c for c in last["classes"].split(".") if c),
                    classless=bool(last["classless"]),
                    within=within,
                    contains=contains,
                    wrap=wrap,
                    nowrap=nowrap,
                )
            )
    return out


def _closing(html: str, tag: str, pos: int) -> int:
    """The end of the element ``<tag`` whose start tag ends at ``pos`` (nested ones of the same name counted)."""
    depth, opening, closing = 1, re.compile(rf"<{tag}\b", re.I), re.compile(rf"</{tag}\s*>", re.I)
    while depth:
        close = closing.search(html, pos)
        if close is None:
            return len(html)
        depth += len(opening.findall(html, pos, close.start())) - 1
        pos = close.end()
    return pos


def _px(value: str, unit: str) -> float:
    return float(value) * (1 if unit.lower() == "px" else 16)


def _indexed(rules: list[LayoutRule]) -> dict[str, list[tuple[int, LayoutRule]]]:
    """The rules by the tag, else the first class, an element needs to match them (``""``: any element)."""
    index: dict[str, list[tuple[int, LayoutRule]]] = {}
    for i, rule in enumerate(rules):
        index.setdefault(rule.tag or min(rule.classes, default=""), []).append((i, rule))
    return index


def sideways_problems(html: str, rules: list[LayoutRule], *, width: int = PHONE) -> list[str]:
    """What in a built page's content (its ``<article>``, else the whole text) would be wider than a
    ``width`` px screen and is in no box that ``rules`` make scroll: a table, a ``<pre>``, an inline width or
    a width attribute over ``width``, and a word longer than the content column where nothing wraps it."""
    start, end = html.find("<article"), html.rfind("</article>")
    if start >= 0 and end > start:
        html = html[start:end]
    longest = int((width - CONTENT_MARGIN) / CHAR_PX)
    index = _indexed(rules)
    problems: list[str] = []
    # per open element: its tag, its and its ancestors' classes, whether long words wrap, whether lines do not
    stack: list[tuple[str, frozenset[str], bool, bool]] = [("", frozenset(), False, False)]
    pos = 0
    while (m := _TAG.search(html, pos)) is not None:
        _, ancestors, wrap, nowrap = stack[-1]
        if nowrap or not wrap:
            text = unescape(html[pos : m.start()])
            if nowrap and len(text.strip()) > longest:
                problems.append(f"text kept on one line, {len(text.strip())} characters: {text.strip()[:60]!r}")
            elif not wrap:
                words = [w for w in text.split() if len(w) > longest]
                problems += [f"an unbreakable word of {len(w)} characters: {w[:60]!r}" for w in words]
        pos = m.end()
        closing, tag, attrs = m.group(1), m.group(2).lower(), m.group(3)
        if closing:
            while len(stack) > 1 and stack.pop()[0] != tag:
                pass
            continue
        if tag in ("script", "style"):
            pos = _closing(html, tag, pos)
            continue
        found = _CLASS.search(attrs)
        classes = frozenset(found.group(1).split()) if found else frozenset()
        ancestors = ancestors | classes
        candidates = [*index.get(tag, ()), *index.get("", ()), *(r for c in classes for r in index.get(c, ()))]
        matched = [r for _, r in sorted(candidates, key=lambda c: c[0]) if r.applies(tag, classes, ancestors)]
        if any(r.contains for r in matched):
            if tag not in _VOID:
                pos = _closing(html, tag, pos)  # whatever it holds scrolls inside it
            continue
        if tag in ("table", "pre"):
            problems.append(f"a <{tag}> in no box that scrolls: <{tag}{attrs}>")
        for value, unit in _INLINE_WIDTH.findall(attrs):
            if _px(value, unit) > width:
                problems.append(f"an inline width of {value}{unit}: <{tag}{attrs}>")
        sized = _WIDTH_ATTR.search(attrs) if tag in _SIZED else None
        if sized and int(sized.group(1)) > width:
            problems.append(f"a width of {sized.group(1)} px: <{tag}{attrs}>")
        if tag in ("table", "pre"):
            pos = _closing(html, tag, pos)
            continue
        if tag not in _VOID:
            for r in matched:
                wrap = r.wrap if r.wrap is not None else wrap
                nowrap = r.nowrap if r.nowrap is not None else nowrap
            stack.append((tag, ancestors, wrap, nowrap))
    return problems


def site_layout_rules(html_root: Path) -> list[LayoutRule]:
    """The layout rules of a built site: the theme's stylesheet, then the site's own (loaded after it)."""
    theme = sorted((html_root / "assets" / "stylesheets").glob("main.*.min.css"))
    assert theme, f"no mkdocs-material stylesheet under {html_root / 'assets' / 'stylesheets'}"
    css = [theme[0], html_root / "assets" / "tycheon.css"]
    return [rule for path in css for rule in layout_rules(path.read_text(encoding="utf-8"))]


BROKEN_PAGES = {
    "a table of its own class": '<article class="md-typeset"><table class="x"><tr><td>1</td></tr></table></article>',
    "a fixed width": '<article class="md-typeset"><div style="width: 1200px">wide</div></article>',
    "a width in em": '<article class="md-typeset"><p style="min-width:40em">wide</p></article>',
    "a wide image": '<article class="md-typeset"><p><img src="x.png" width="800"></p></article>',
    "a pre outside the content": "<div><pre>code</pre></div>",
    "a long word outside the content": f"<div><p>{'x' * 80}</p></div>",
    "a long badge": f'<article class="md-typeset"><span class="tyc-badge">{"many words " * 8}</span></article>',
}


@pytest.mark.parametrize("page", BROKEN_PAGES.values(), ids=BROKEN_PAGES.keys())
def test_the_sideways_check_finds_what_would_make_a_phone_scroll(page, hostile_site):
    assert len(sideways_problems(page, site_layout_rules(hostile_site))) == 1


def test_the_sideways_check_passes_what_the_css_keeps_in_its_box(hostile_site):
    rules = site_layout_rules(hostile_site)
    long = "x" * 200
    fine = [
        f'<article class="md-typeset"><table class="tyc-table"><tr><td style="width:2000px">{long}</td></tr></table>',
        f'<article class="md-typeset"><div class="tyc-table-wrap"><table class="x"><tr><td>{long}</td></tr></table>',
        f'<article class="md-typeset"><table><tr><td>{long}</td></tr></table><pre>{long}</pre><p>{long}</p>',
        f'<article class="md-typeset"><p><code>{long}</code></p><svg width="320"></svg></article>',
    ]
    assert [sideways_problems(page, rules) for page in fine] == [[]] * len(fine)
    leaderboard = hostile_site / "benchmarks/small/synthetic_marketplace/rolling_origin/series/leaderboard-all.html"
    assert sideways_problems(leaderboard.read_text(encoding="utf-8"), rules) == []
