"""The site's own plotly.js build: what it registers is what the renderer uses, and a figure that reaches
beyond it is refused when the site is rendered instead of silently not drawing in the reader's browser.

The browser half loads the committed bundle in Debian's Chromium (``/usr/bin/chromium``, as the site's
browser tests) and is skipped without it; the rest reads the committed files only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import pytest

from benchmarks.render import audit_charts, bundle, charts

README = bundle.ROOT / "templates" / "vendor" / "plotly-build" / "README.md"
CHROMIUM = Path("/usr/bin/chromium")


def _styles(n: int) -> list[charts.Style]:
    return [charts.style_for(i) for i in range(n)]


def site_figures() -> dict[str, dict]:
    """One figure from every chart builder the site uses."""
    s = _styles(3)
    return {
        "cd": charts.cd_figure(
            methods=[("a", 1.2, s[0]), ("b", 1.9, s[1]), ("c", 2.9, s[2])], cd=1.0, conservative_cd=1.5
        ),
        "cost": charts.cost_accuracy_figure(
            points=[charts.CostPoint("a", 0.1, 1.0, s[0]), charts.CostPoint("b", 2.0, 0.8, s[1], highlight=True)],
            metric="mase",
        ),
        "replay": audit_charts.replay_figure(
            classes=["all", "smooth"], floor=[1.0, 0.9], served=[0.8, None], oracle=[0.6, 0.5], metric="rmsse"
        ),
        "bump": audit_charts.bump_figure(runs=["base", "h=6"], models=[("a", [1, 2], s[0]), ("b", [2, 1], s[1])]),
        "pss by step": audit_charts.horizon_pss_figure(
            steps=[1, 2], pss=[0.2, 0.3], lo=[0.1, None], hi=[0.3, None], within=[0.1, 0.1]
        ),
        "aggregation": audit_charts.aggregation_figure(
            curves=[
                ("static arm", [1, 2], [0.3, 0.2], [0.2, 0.2], [0.4, 0.2]),
                ("rolling arm", [1], [0.1], [0.1], [0.1]),
            ]
        ),
    }


def _scatter(**extra) -> dict:
    return {"type": "scatter", "mode": "markers", "x": [1, 2], "y": [1, 2], **extra}


# (what, figure): each uses something the bundle leaves out, so plotly.js would draw nothing for it
UNBUNDLED = {
    "pie trace": {"data": [{"type": "pie", "values": [1, 2]}], "layout": {}},
    "scattergl trace": {"data": [{"type": "scattergl", "x": [1], "y": [1]}], "layout": {}},
    "error bars": {"data": [_scatter(error_y={"type": "data", "array": [0.1, 0.2]})], "layout": {}},
    "calendar": {"data": [_scatter(xcalendar="coptic")], "layout": {}},
    "annotations": {"data": [_scatter()], "layout": {"annotations": [{"text": "note", "x": 1, "y": 1}]}},
    "images": {"data": [_scatter()], "layout": {"images": [{"source": "x.png"}]}},
    "update menus": {"data": [_scatter()], "layout": {"updatemenus": [{"buttons": []}]}},
    "sliders": {"data": [_scatter()], "layout": {"sliders": [{"steps": []}]}},
    "grid": {"data": [_scatter()], "layout": {"grid": {"rows": 2, "columns": 1}}},
    "3d scene": {"data": [_scatter()], "layout": {"scene": {}}},
    "range slider": {"data": [_scatter()], "layout": {"xaxis": {"rangeslider": {"visible": True}}}},
    "range selector on axis 2": {"data": [_scatter()], "layout": {"yaxis2": {"rangeselector": {"buttons": []}}}},
}


def test_the_bundle_is_the_committed_build_named_in_its_readme():
    digest = hashlib.sha256(bundle.BUNDLE.read_bytes()).hexdigest()
    assert f"`{digest}`" in README.read_text(encoding="utf-8"), "rebuild notes: sha256 of plotly-tycheon.min.js"
    assert f"{bundle.BUNDLE.stat().st_size:,} bytes" in README.read_text(encoding="utf-8")
    assert re.search(r"plotly\.js \(tycheon: scatter, bar\) v4\.1\.1", bundle.BUNDLE.read_text(encoding="utf-8")[:400])


def test_the_schema_file_registers_exactly_the_renderers_trace_types():
    schema = bundle.read_schema()
    assert set(schema["traces"]) == charts.TRACE_TYPES
    assert schema["version"] == "4.1.1"


def test_every_figure_the_site_draws_passes_the_check():
    for name, figure in site_figures().items():
        assert json.loads(charts.to_json(figure)) == figure, name


@pytest.mark.parametrize("what", sorted(UNBUNDLED))
def test_a_figure_using_an_unbundled_trace_or_feature_is_refused_at_render_time(what):
    with pytest.raises(ValueError, match="plotly.js bundle"):
        charts.to_json(UNBUNDLED[what])


def test_an_allowed_attribute_is_not_refused_for_being_on_a_numbered_axis():
    figure = {"data": [_scatter(yaxis="y2")], "layout": {"yaxis2": {"overlaying": "y", "side": "right"}}}
    assert charts.to_json(figure)


# --- the bundle itself, in a browser ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tab():
    if not (CHROMIUM.exists() and os.access(CHROMIUM, os.X_OK)):
        pytest.skip(f"no Chromium at {CHROMIUM}: install Debian's 'chromium' package to load the bundle")
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1000, "height": 800})
        page.problems = []
        page.on("pageerror", lambda err: page.problems.append(str(err)))
        page.on("console", lambda msg: page.problems.append(msg.text) if msg.type == "error" else None)
        yield page
        browser.close()


@pytest.mark.browser
def test_the_bundle_registers_exactly_the_trace_types_and_attributes_of_the_schema_file(tab):
    live = bundle.bundle_schema(tab)
    assert set(live["traces"]) == charts.TRACE_TYPES
    assert live == bundle.read_schema()  # rerun `python -m benchmarks.render.bundle` after a rebuild
    assert tab.problems == []


def _draw(tab, figure: dict) -> dict:
    """Draw ``figure`` into a fresh div; count what plotly.js put on the page."""
    return tab.evaluate(
        """async (fig) => {
        document.body.innerHTML = '<div id="g" style="width:900px"></div>';
        const g = document.getElementById('g');
        await Plotly.newPlot(g, fig.data, fig.layout, {displaylogo: false, showSendToCloud: false});
        return {traces: g.querySelectorAll('.cartesianlayer .trace').length,
                points: g.querySelectorAll('.cartesianlayer .point').length,
                annotations: g.querySelectorAll('.annotation').length,
                share: g.querySelectorAll('.modebar-btn[data-title^="Share"]').length,
                buttons: g.querySelectorAll('.modebar-btn').length};
        }""",
        figure,
    )


@pytest.mark.browser
def test_every_chart_of_the_site_draws_with_the_bundle_and_hover_and_zoom_work(tab):
    bundle.bundle_schema(tab)  # loads the bundle into the page
    for name, figure in site_figures().items():
        drawn = _draw(tab, figure)
        assert drawn["traces"] >= len(figure["data"]) - 1 and drawn["points"] > 0, (name, drawn)
        assert drawn["buttons"] > 0 and drawn["share"] == 0, (name, drawn)  # no upload to cloud.plotly.com
        box = tab.locator("#g .nsewdrag").first.bounding_box()
        tab.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)  # hover
        tab.mouse.down()
        tab.mouse.move(box["x"] + box["width"] * 0.8, box["y"] + box["height"] * 0.8, steps=5)  # zoom box
        tab.mouse.up()
        tab.mouse.dblclick(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)  # reset
        assert tab.problems == [], (name, tab.problems)


@pytest.mark.browser
def test_what_the_check_refuses_would_indeed_not_be_drawn(tab):
    """The reason for the check: plotly.js draws nothing for an unbundled feature and raises nothing."""
    bundle.bundle_schema(tab)
    drawn = _draw(tab, UNBUNDLED["annotations"])
    assert drawn["annotations"] == 0 and drawn["traces"] == 1
    drawn = _draw(tab, {"data": [_scatter(), {"type": "pie", "values": [1, 2]}], "layout": {}})
    assert drawn["traces"] == 1  # the pie is dropped
    assert tab.problems == []
