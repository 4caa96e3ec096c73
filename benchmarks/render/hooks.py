"""mkdocs hooks of the site (``hooks:`` in the generated ``mkdocs.yml``), so ``mkdocs build`` alone, from
``make run``, ``make screenshots`` or a test, builds the site a reader gets:

- every page in the search index: a page whose front matter leaves it out (``search: exclude: true``, the
  leaderboards, whose tables would make the index several times larger) gets one entry, its title with its
  headings as text;
- one copy of the index: mkdocs-material's offline plugin copies ``search/search_index.json`` into
  ``search/search_index.js`` for file://; the JSON is removed and ``templates/assets/search-on-demand.js``
  reads the script's copy over http(s) too (:data:`INDEX_PREFIX` is what it strips);
- only the search language packs the search plugin's ``lang`` loads (none for English), no source maps;
- every page's whitespace collapsed outside ``<pre>``, ``<code>``, ``<kbd>``, ``<textarea>``, ``<script>``
  and ``<style>`` (a run of blanks becomes one blank or one line break: the page renders the same), and no
  ``<link rel="canonical">`` (``site_url`` is set for the sitemap and the 404 page; a page's canonical
  address is the one it is read at, and an absolute link on every page is one more reference off the site).

Self-contained (mkdocs loads this file by path, outside the ``benchmarks`` package).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

INDEX_PREFIX = "var __index = "  # what the offline plugin writes before the index; search-on-demand.js strips it

# Kept verbatim: comments, whitespace-sensitive elements whole, and every tag with its attributes.
_VERBATIM = re.compile(
    r"<!--.*?-->"
    r"|<(pre|code|kbd|textarea|script|style)\b(?:[^>\"']|\"[^\"]*\"|'[^']*')*>.*?</\1\s*>"
    r"|<[A-Za-z/!?](?:[^>\"']|\"[^\"]*\"|'[^']*')*>",
    re.S | re.I,
)
_BLANKS = re.compile(r"\s{2,}")
_CANONICAL = re.compile(r'<link rel="canonical" href="[^"]*">\s*')

_SOURCE_MAP = re.compile(r"\n?(?://# sourceMappingURL=\S+|/\*# sourceMappingURL=\S+ \*/)\s*$")

_headings_only: dict[str, dict[str, str]] = {}  # location -> the entry of a page left out of the index


def _blank(run: re.Match[str]) -> str:
    return "\n" if "\n" in run.group(0) else " "


def collapse_whitespace(html: str) -> str:
    """``html`` with every run of whitespace in text reduced to one blank (a line break where it had one);
    tags, comments and the contents of whitespace-sensitive elements unchanged."""
    out, pos = [], 0
    for kept in _VERBATIM.finditer(html):
        out.append(_BLANKS.sub(_blank, html[pos : kept.start()]))
        out.append(kept.group(0))
        pos = kept.end()
    out.append(_BLANKS.sub(_blank, html[pos:]))
    return "".join(out)


def _toc_titles(items: Any) -> list[str]:
    titles = []
    for item in items:
        if item.level > 1:
            titles.append(item.title)
        titles.extend(_toc_titles(item.children))
    return titles


def on_pre_build(config: Any) -> None:
    _headings_only.clear()


def on_page_context(context: Any, page: Any, config: Any, nav: Any) -> Any:
    search = page.meta.get("search") or {}
    if search.get("exclude"):
        _headings_only[page.url] = {
            "location": page.url,
            "title": str(page.title),
            "text": " \u00b7 ".join(_toc_titles(page.toc)),
        }
    return context


def on_post_page(output: str, page: Any, config: Any) -> str:
    return collapse_whitespace(_CANONICAL.sub("", output))


def on_post_template(output_content: str, template_name: str, config: Any) -> str:
    return collapse_whitespace(output_content) if template_name.endswith(".html") else output_content


def _search_languages(config: Any) -> list[str]:
    plugin = next((p for name, p in config.plugins.items() if name.split("/")[-1] == "search"), None)
    return list(plugin.config.lang) if plugin is not None and plugin.config.lang else ["en"]


def _needed_lunr(langs: list[str]) -> set[str]:
    """The files under ``assets/javascripts/lunr`` the search worker loads for ``langs`` (mkdocs-material's
    worker: a segmenter for ja, hi and th, a pack for every language but English, multi for several)."""
    needed = set()
    for lang in langs:
        needed |= {"tinyseg.js"} if lang == "ja" else {"wordcut.js"} if lang in ("hi", "th") else set()
        if lang != "en":
            needed.add(f"min/lunr.{lang}.min.js")
    if len(langs) > 1:
        needed.add("min/lunr.multi.min.js")
    if needed:
        needed.add("min/lunr.stemmer.support.min.js")
    return needed


def _one_index(site: Path) -> None:
    index = site / "search" / "search_index.json"
    if not index.exists():
        return
    data = json.loads(index.read_text(encoding="utf-8"))
    data["docs"].extend(entry for _, entry in sorted(_headings_only.items()))
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    (site / "search" / "search_index.js").write_text(INDEX_PREFIX + text, encoding="utf-8")
    index.unlink()


def _drop_unused_scripts(site: Path, langs: list[str]) -> None:
    scripts = site / "assets" / "javascripts"
    lunr = scripts / "lunr"
    if lunr.is_dir():
        needed = _needed_lunr(langs)
        for path in sorted(lunr.rglob("*"), reverse=True):  # files before their folders
            if path.is_file() and path.relative_to(lunr).as_posix() not in needed:
                path.unlink()
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()
        if not any(lunr.iterdir()):
            lunr.rmdir()
    for source_map in sorted((site / "assets").rglob("*.map")):
        source_map.unlink()
        script = source_map.with_suffix("")
        if script.is_file():  # its last line names the map, which a browser's developer tools would ask for
            text = script.read_text(encoding="utf-8")
            script.write_text(_SOURCE_MAP.sub("\n", text), encoding="utf-8")


@event_priority(-200)  # after the search plugin wrote the index and the offline plugin copied it (-100)
def on_post_build(config: Any) -> None:
    site = Path(config.site_dir)
    _one_index(site)
    _drop_unused_scripts(site, _search_languages(config))
