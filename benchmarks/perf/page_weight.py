"""``python -m benchmarks.perf.page_weight [--html site/site]``: every built page weighed in Chromium.

Serves the built site (``mkdocs build`` output) gzip-compressed on a local port, loads each page cold in
Debian's Chromium and reads the browser's own resource timing (``benchmarks.render.serve.weigh``, the
same measure ``tests/test_site_browser.py`` asserts): bytes decoded and transferred by the page and
everything it fetched, and the time to its load event. Prints, for pages with and without a chart, the
count, median and largest, each against the issue's limit (1.6 MB decoded with a chart, 300 KB transferred
without, load under 0.8 s), a PASS or MISS line per target, and the heaviest pages. Load times depend on
how busy the machine is; byte counts do not.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from benchmarks.render.load import ROOT
from benchmarks.render.serve import serve, weigh

__all__ = ["CHART_LIMIT", "LOAD_LIMIT_MS", "NO_CHART_LIMIT", "fastest_load", "main", "weigh_site"]

CHART_LIMIT = 1_600_000  # bytes decoded by a page with a chart
NO_CHART_LIMIT = 300_000  # bytes transferred by a page without a chart
LOAD_LIMIT_MS = 800
CHROMIUM = Path("/usr/bin/chromium")


def pages(html: Path) -> list[str]:
    """Every page of the built site but mkdocs' 404 page, in path order."""
    return sorted(str(p.relative_to(html)) for p in html.rglob("*.html") if p.name != "404.html")


def fastest_load(browser, url: str, first: dict, tries: int, *, stop_below: float | None = None) -> float:  # type: ignore[no-untyped-def]
    """The fastest load event (ms) of ``first`` (a :func:`~benchmarks.render.serve.weigh` of ``url``) and up
    to ``tries - 1`` more cold loads of ``url``, stopping early once one is under ``stop_below``."""
    best = float(first["load"])
    for _ in range(tries - 1):
        if stop_below is not None and best < stop_below:
            break
        best = min(best, float(weigh(browser, url)["load"]))
    return best


def weigh_site(html: Path, *, only: list[str] | None = None, tries: int = 1) -> dict[str, dict]:
    """``path -> weight`` (see :func:`benchmarks.render.serve.weigh`) for every page, or those in ``only``;
    with ``tries`` > 1 each page's ``load`` is the fastest of that many cold loads."""
    from playwright.sync_api import sync_playwright

    weights = {}
    with serve(html) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        for path in only or pages(html):
            weights[path] = weigh(browser, f"{base}/{path}")
            weights[path]["load"] = fastest_load(browser, f"{base}/{path}", weights[path], tries)
        browser.close()
    return weights


def _summary(label: str, values: list[float], limit: float, unit: str) -> str:
    worst = max(values)
    return (
        f"{label}: n={len(values)}, median {statistics.median(values):,.0f} {unit}, largest {worst:,.0f} {unit} "
        f"= {worst / limit:.3f} x the limit ({limit:,.0f} {unit}); over: {sum(v >= limit for v in values)}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf.page_weight", description=__doc__)
    parser.add_argument("--html", type=Path, default=ROOT / "site" / "site", help="built site (default: site/site)")
    parser.add_argument("--top", type=int, default=5, help="list this many of the heaviest chart pages")
    parser.add_argument("--tries", type=int, default=1, help="each page's load: the fastest of this many cold loads")
    parser.add_argument("pages", nargs="*", help="weigh only these pages (paths inside the built site)")
    args = parser.parse_args(argv)
    if not (args.html / "index.html").exists():
        print(f"page_weight: no built site at {args.html}; render and mkdocs build it first", file=sys.stderr)
        return 2
    if not CHROMIUM.exists():
        print(f"page_weight: no Chromium at {CHROMIUM}; install Debian's 'chromium' package", file=sys.stderr)
        return 2
    weights = weigh_site(args.html, only=args.pages or None, tries=args.tries)
    chart = {p: w for p, w in weights.items() if w["charts"]}
    plain = {p: w for p, w in weights.items() if not w["charts"]}
    ok = True
    if chart:
        decoded = [w["decoded"] for w in chart.values()]
        print(_summary("pages with a chart, bytes decoded", decoded, CHART_LIMIT, "B"))
        ok &= max(decoded) < CHART_LIMIT
        print(f"  {'PASS' if max(decoded) < CHART_LIMIT else 'MISS'} every chart page under {CHART_LIMIT:,} B")
        for path, w in sorted(chart.items(), key=lambda item: -item[1]["decoded"])[: args.top]:
            print(f"  {w['decoded']:>11,} B  {path}")
    if plain:
        sent = [w["transferred"] for w in plain.values()]
        print(_summary("pages without a chart, bytes transferred", sent, NO_CHART_LIMIT, "B"))
        fetched = sorted(p for p, w in plain.items() if "plotly.min.js" in w["names"])
        ok &= max(sent) < NO_CHART_LIMIT and not fetched
        verdict = "PASS" if max(sent) < NO_CHART_LIMIT else "MISS"
        print(f"  {verdict} every page without a chart under {NO_CHART_LIMIT:,} B")
        print(f"  {'PASS' if not fetched else 'MISS'} none of them fetches plotly.js {fetched[:3]}")
    loads = [w["load"] for w in weights.values()]
    print(_summary("load event, all pages", loads, LOAD_LIMIT_MS, "ms"))
    verdict = "PASS" if max(loads) < LOAD_LIMIT_MS else "MISS"
    print(f"  {verdict} every load event under {LOAD_LIMIT_MS} ms (machine load matters)")
    for path, w in sorted(weights.items(), key=lambda item: -item[1]["load"])[: args.top]:
        print(f"  {w['load']:>9,.0f} ms  {path}")
    searched = sorted(p for p, w in weights.items() if "search_index.js" in w["names"])
    print(f"  {'PASS' if not searched else 'MISS'} no page fetches the search index before a search {searched[:3]}")
    ok &= not searched
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
