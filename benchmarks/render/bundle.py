"""What the site's plotly.js bundle can draw, and the check that every figure stays inside it.

``templates/vendor/plotly-tycheon.min.js`` is plotly.js built with only the trace types and components the
site's charts use (``templates/vendor/plotly-build/``). plotly.js silently ignores an attribute whose
component is not in the bundle (a ``shapes`` list, ``error_y`` bars, an axis ``rangeslider``) and draws
nothing for an unregistered trace type, so :func:`check_figure` refuses such a figure at render time.

What the bundle holds is read from the bundle itself: ``python -m benchmarks.render.bundle`` loads it in
Debian's Chromium and writes the attribute names of its own plot schema (``Plotly.PlotSchema.get()``) to
``templates/vendor/plotly-tycheon.schema.json``: each registered trace type's top-level attributes, the
layout's top-level attributes (the base ones and those a trace type adds, such as ``barmode``) and the
cartesian axes' attributes. ``tests/test_render_bundle.py`` holds
that file equal to the bundle's live schema and its trace types equal to :data:`charts.TRACE_TYPES`.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from pathlib import Path
from typing import Any

from .load import ROOT

__all__ = ["BUNDLE", "SCHEMA", "bundle_schema", "check_figure", "read_schema"]

BUNDLE = ROOT / "templates" / "vendor" / "plotly-tycheon.min.js"
SCHEMA = ROOT / "templates" / "vendor" / "plotly-tycheon.schema.json"
CHROMIUM = Path("/usr/bin/chromium")
_AXIS = re.compile(r"^([xy]axis)([2-9]|[1-9][0-9]+)?$")  # xaxis, xaxis2, ... share the xaxis attributes

# run in the page after the bundle: attribute names only, sorted, so the file is small and byte-stable
SCHEMA_JS = """() => {
  const s = window.Plotly.PlotSchema.get();
  const keys = o => Object.keys(o).filter(k => !k.startsWith('_') && k !== 'role' && k !== 'editType').sort();
  const traces = {}, traceLayout = {};
  for (const t of Object.keys(s.traces).sort()) {
    traces[t] = keys(s.traces[t].attributes);
    traceLayout[t] = keys(s.traces[t].layoutAttributes || {});
  }
  const la = s.layout.layoutAttributes;
  return {version: window.Plotly.version, traces: traces, trace_layout: traceLayout, layout: keys(la),
          axes: {xaxis: keys(la.xaxis), yaxis: keys(la.yaxis)}};
}"""


def bundle_schema(page: Any, bundle: Path = BUNDLE) -> dict[str, Any]:
    """The attribute names of ``bundle``'s plot schema, read in a playwright ``page`` (any blank page)."""
    page.set_content("<!doctype html><html><head></head><body></body></html>")
    page.add_script_tag(content=bundle.read_text(encoding="utf-8"))
    return page.evaluate(SCHEMA_JS)


@functools.lru_cache(maxsize=1)
def read_schema(path: Path = SCHEMA) -> dict[str, Any]:
    """The committed attribute names of the bundle (see the module docstring)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(
            f"{path}: cannot read the plotly bundle's schema ({err}); run python -m benchmarks.render.bundle"
        ) from err


def _unknown(keys: Any, allowed: list[str], where: str, *, axes: bool = False) -> None:
    allowed_set = set(allowed)
    for key in keys:
        match = _AXIS.match(key) if axes else None
        base = match.group(1) if match else key
        if base not in allowed_set:
            raise ValueError(
                f"figure {where} has attribute {key!r}, which the site's plotly.js bundle does not draw "
                "(templates/vendor/plotly-build/entry.js lists what it holds); accepted: "
                + ", ".join(sorted(allowed_set))
            )


def check_figure(figure: dict[str, Any], schema: dict[str, Any] | None = None) -> None:
    """Raise ``ValueError`` if ``figure`` uses a trace type or attribute the bundle does not hold.

    Checked: each trace's type and top-level attributes, the layout's top-level attributes, and the
    attributes of every cartesian axis (``xaxis``, ``yaxis2``, ...), against :func:`read_schema`.
    """
    schema = read_schema() if schema is None else schema
    traces = schema["traces"]
    for n, trace in enumerate(figure.get("data", [])):
        kind = str(trace.get("type", "scatter"))
        if kind not in traces:
            raise ValueError(
                f"figure trace {n} has type {kind!r}; the site's plotly.js bundle draws only {sorted(traces)}"
            )
        _unknown(trace, traces[kind], f"trace {n} ({kind})")
    layout = figure.get("layout", {})
    trace_layout = [key for keys in schema["trace_layout"].values() for key in keys]  # barmode, bargap, ...
    _unknown(layout, schema["layout"] + trace_layout, "layout", axes=True)
    for key, value in layout.items():
        match = _AXIS.match(key)
        if match and isinstance(value, dict):
            _unknown(value, schema["axes"][match.group(1)], f"layout.{key}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.render.bundle", description=__doc__)
    parser.add_argument("--bundle", type=Path, default=BUNDLE)
    parser.add_argument("--out", type=Path, default=SCHEMA)
    args = parser.parse_args(argv)
    if not CHROMIUM.exists():
        print(f"bundle: no Chromium at {CHROMIUM}; install Debian's 'chromium' package", file=sys.stderr)
        return 2
    if not args.bundle.exists():
        print(f"bundle: no plotly.js bundle at {args.bundle}", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"])
        schema = bundle_schema(browser.new_page(), args.bundle)
        browser.close()
    args.out.write_text(json.dumps(schema, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{args.out}: plotly.js {schema['version']}, traces {sorted(schema['traces'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
