"""The charts of the site built from the committed results: one style per model everywhere, a chart picker
on the model pages, and charts that fit a phone.

The style test reads the rendered pages (``committed_docs``); the others load the built site
(``committed_site``) in Debian's Chromium (skipped with a message where it or playwright is missing).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchmarks.render import charts
from benchmarks.render.panels import panels_of
from benchmarks.render.serve import serve
from tests._shared import chromium_browser, need_chromium

PHONE = {"width": 390, "height": 844}
_DATA = re.compile(r'<script type="application/json" id="((?:cd-diagram|cost-\d+|bump))-data">(.*?)</script>', re.S)


def _figure(chart: str, data: str) -> dict:
    """The figure a chart's JSON block draws: a CD diagram ships its compact spec, which tycheon.js draws as
    :func:`charts.cd_figure_from_spec` builds it (the browser test below holds the two equal)."""
    shipped = json.loads(data)
    return charts.cd_figure_from_spec(shipped) if chart == "cd-diagram" else shipped


def _model_figures(docs: Path) -> list[tuple[str, dict]]:
    """Every chart whose markers are models (CD diagrams, cost charts, rank bump charts), with its page: those
    shipped as JSON and those in a leaderboard's packed panels."""
    found = []
    for page in sorted(docs.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        for part in [text, *list(panels_of(text).values())[1:]]:
            found += [
                (f"{page.relative_to(docs)}#{m.group(1)}", _figure(m.group(1), m.group(2)))
                for m in _DATA.finditer(part)
            ]
    return found


def test_no_two_models_share_a_style_in_any_chart_and_each_model_keeps_its_style(committed_docs):
    figures = _model_figures(committed_docs.docs)
    assert {where.split("#")[1].split("-")[0] for where, _ in figures} >= {"cd", "cost", "bump"}
    style_of: dict[str, tuple[str, str]] = {}
    for where, figure in figures:
        in_chart: dict[tuple[str, str], str] = {}
        for trace in figure["data"]:
            marker = trace.get("marker", {})
            if "symbol" not in marker or "name" not in trace or trace["mode"].startswith("lines"):
                continue  # the CD reference bars, the frontier
            name = trace["name"].removesuffix("\u2020")  # the CD diagram marks partial support with a dagger
            style = (marker["color"], marker["symbol"])
            assert in_chart.setdefault(style, name) == name, (where, style, in_chart[style], name)
            assert style_of.setdefault(name, style) == style, (where, name, style_of[name], style)
    assert len(style_of) >= 20


# --- in a browser --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(committed_site) -> Path:
    need_chromium()
    return committed_site.html


@pytest.fixture(scope="module")
def server(site):
    with serve(site, gzip_text=True) as url:
        yield url


@pytest.fixture(scope="module")
def chromium(site):
    yield from chromium_browser()


def _tab(chromium, viewport: dict):  # type: ignore[no-untyped-def]
    tab = chromium.new_context(viewport=viewport).new_page()
    tab.problems = []
    tab.on("console", lambda msg: tab.problems.append(msg.text) if msg.type == "error" else None)
    tab.on("pageerror", lambda err: tab.problems.append(str(err)))
    return tab


def _most_charts(site: Path) -> str:
    pages = [p for p in (site / "models").glob("*.html") if p.name != "index.html"]
    page = max(sorted(pages), key=lambda p: p.read_text(encoding="utf-8").count('class="tyc-chart"'))
    return str(page.relative_to(site))


DRAWN = "document.querySelectorAll('.tyc-chart .main-svg').length"
VISIBLE = "Array.from(document.querySelectorAll('.tyc-chart-panel')).filter(p => !p.hidden).map(p => p.id)"


@pytest.mark.browser
def test_the_model_page_draws_one_chart_and_the_picker_draws_any_other(chromium, server, site):
    path = _most_charts(site)
    charts = (site / path).read_text(encoding="utf-8").count('class="tyc-chart"')
    assert charts >= 5
    tab = _tab(chromium, {"width": 1400, "height": 900})
    tab.goto(f"{server}/{path}", wait_until="load")
    tab.wait_for_selector("#cost-1 .main-svg", timeout=20_000)
    options = tab.eval_on_selector_all("select.tyc-picker option", "os => os.map(o => o.value)")
    assert options == [f"cost-panel-{n}" for n in range(1, charts + 1)]  # every chart can be picked
    assert tab.evaluate(VISIBLE) == ["cost-panel-1"]
    drawn_one = tab.evaluate(DRAWN)
    tab.select_option("select.tyc-picker", "cost-panel-3")
    tab.wait_for_selector("#cost-3 .main-svg", timeout=20_000)
    assert tab.evaluate(VISIBLE) == ["cost-panel-3"]
    assert tab.evaluate(DRAWN) == 2 * drawn_one  # the picked chart, drawn on demand; no other
    assert tab.locator("#cost-3 .scatterlayer .trace").count() >= 3
    assert tab.problems == []
    tab.context.close()


def _a_page(site: Path, suffix: str) -> str:
    return next(str(p.relative_to(site)) for p in sorted(site.rglob(f"*{suffix}")))


FIT = """el => {
  const svg = el.querySelector('.main-svg').getBoundingClientRect();
  const plot = el.querySelector('.nsewdrag').getBoundingClientRect();
  const legend = el.querySelector('.legend');
  const box = legend ? legend.getBoundingClientRect() : {width: 0, height: 0};
  const out = Array.from(el.querySelectorAll('.xtick text, .ytick text, .g-xtitle text, .g-ytitle text, .legendtext'))
    .map(t => [t.textContent, t.getBoundingClientRect()])
    .filter(([, r]) => r.width > 0 && (r.left < svg.left - 1 || r.right > svg.right + 1 || r.top < svg.top - 1
                                       || r.bottom > svg.bottom + 1))
    .map(([text]) => text);
  return {plot: plot.width / svg.width, legend: (box.width * box.height) / (svg.width * svg.height),
          width: svg.width, outside: out};
}"""


@pytest.mark.browser
def test_on_a_phone_charts_keep_the_width_for_the_plot_and_every_label_inside(chromium, server, site):
    pages = {
        "cost": _most_charts(site),
        "bump": _a_page(site, "/sensitivity.html"),
        "cd-diagram": next(
            str(p.relative_to(site))
            for p in sorted(site.rglob("*.html"))
            if 'id="cd-diagram"' in p.read_text(encoding="utf-8")
        ),
    }
    tab = _tab(chromium, PHONE)
    for kind, path in pages.items():
        tab.goto(f"{server}/{path}", wait_until="load")
        chart = tab.locator(f".tyc-chart[id^='{kind}']").first
        chart.locator(".main-svg").first.wait_for(timeout=20_000)
        fit = chart.evaluate(FIT)
        assert fit["width"] <= PHONE["width"], (kind, fit)
        assert fit["plot"] >= 0.6, (kind, path, fit)  # was 0.18 with the legend beside the plot
        assert fit["legend"] < 0.4, (kind, path, fit)  # was 0.73
        assert fit["outside"] == [], (kind, path, fit)
    assert tab.problems == []
    tab.context.close()


def _cd_specs(site: Path, limit: int = 60) -> list[tuple[str, dict]]:
    """The CD specs of the built leaderboards (every 15th panel, shown or packed, up to ``limit``), with their
    pages; the first is a shown panel's, which the page draws on load."""
    panels = [
        (f"{page.relative_to(site)}#{metric}", panel)
        for page in sorted(site.joinpath("benchmarks").rglob("leaderboard-*.html"))
        for metric, panel in panels_of(page.read_text(encoding="utf-8")).items()
        if 'id="cd-diagram"' in panel
    ]
    specs = []
    for where, panel in panels[::15][:limit]:
        data = _DATA.search(panel)
        specs.append((where, json.loads(data.group(2))))
    return specs


@pytest.mark.browser
def test_the_cd_diagram_a_page_draws_from_its_spec_is_the_figure_the_renderer_defines(chromium, server, site):
    """tycheon.js's cdFigure builds, from the compact spec a leaderboard ships, exactly the plotly figure of
    charts.cd_figure_from_spec (which the bundle check and the chart tests read), on the committed site's
    diagrams; and the page draws a marker per model from it."""
    specs = _cd_specs(site)
    assert len(specs) >= 20
    tab = _tab(chromium, {"width": 1400, "height": 900})
    tab.goto(f"{server}/{specs[0][0].split('#')[0]}", wait_until="load")  # its shown panel
    tab.wait_for_selector("#cd-diagram .main-svg", timeout=20_000)
    assert tab.locator("#cd-diagram .scatterlayer .trace").count() >= len(specs[0][1]["m"])
    drawn = tab.evaluate("specs => specs.map(s => window.tycheon.cdFigure(s))", [s for _, s in specs])
    for (page, spec), figure in zip(specs, drawn, strict=True):
        assert figure == json.loads(json.dumps(charts.cd_figure_from_spec(spec))), page
    assert tab.problems == []
    tab.context.close()
