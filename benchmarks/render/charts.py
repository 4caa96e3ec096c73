"""Plotly figures as plain JSON-ready dicts: the critical-difference diagram and the cost-accuracy chart.

Figures are built by hand (no plotly Python objects), so the JSON is small and byte-stable; pages embed it
in a JSON script block and the shipped ``tycheon.js`` calls ``Plotly.newPlot`` on it offline. A leaderboard's
CD diagram ships a compact spec instead (:func:`cd_spec`), which ``tycheon.js`` expands into the figure.
Colours are the Okabe-Ito palette (colour-blind safe, Okabe & Ito 2008); every model gets its own
(colour, marker) pair from its place in the site-wide model list (:func:`style_for`), the same on every
page, so no two models of a chart look alike and no distinction rests on colour alone. Shared trace
defaults go in a layout template and numbers carry the precision shown, which keeps the inline JSON small.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# Trace types the site's charts use, and the only ones the shipped plotly.js build registers
# (templates/vendor/plotly-build/entry.js; tests/test_render_bundle.py holds the two equal). to_json refuses
# a figure with any other trace type, or with an attribute the build does not hold (bundle.check_figure),
# so a chart can never silently fail to draw.
TRACE_TYPES = frozenset({"scatter", "bar"})

# Okabe & Ito (2008), "Color Universal Design"; yellow last because it is faint on white.
OKABE_ITO = ("#000000", "#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#F0E442")
SYMBOLS = (
    "circle",
    "square",
    "diamond",
    "triangle-up",
    "triangle-down",
    "cross",
    "x",
    "star",
    "hexagon",
    "pentagon",
    "star-triangle-up",
    "hourglass",
)


STYLE_COUNT = len(SYMBOLS) * len(OKABE_ITO)  # distinct colour x marker pairs :func:`style_for` hands out


@dataclass(frozen=True)
class Style:
    colour: str
    symbol: str


def style_for(index: int) -> Style:
    """Style of the model at ``index`` in the site-wide sorted model list (same model, same look).

    The marker cycles through :data:`SYMBOLS` and the colour moves on one further each time the markers
    start again, so the first :data:`STYLE_COUNT` indices get distinct (colour, marker) pairs: index
    ``12a + b`` has marker ``b`` and colour ``(5a + b) mod 8``, one-to-one because 5 is prime to 8.
    The first eight differ in colour and in marker.
    """
    return Style(OKABE_ITO[(index + index // len(SYMBOLS)) % len(OKABE_ITO)], SYMBOLS[index % len(SYMBOLS)])


# each marker symbol as an SVG shape in a 12 x 12 box, for a swatch in running text (the model page)
_SHAPES = {
    "circle": '<circle cx="6" cy="6" r="5"/>',
    "square": '<rect x="1" y="1" width="10" height="10"/>',
    "diamond": '<polygon points="6,0.5 11.5,6 6,11.5 0.5,6"/>',
    "triangle-up": '<polygon points="6,1 11.5,11 0.5,11"/>',
    "triangle-down": '<polygon points="0.5,1 11.5,1 6,11"/>',
    "cross": '<polygon points="4,0.5 8,0.5 8,4 11.5,4 11.5,8 8,8 8,11.5 4,11.5 4,8 0.5,8 0.5,4 4,4"/>',
    "x": '<polygon transform="rotate(45 6 6)" points="4,0 8,0 8,4 12,4 12,8 8,8 8,12 4,12 4,8 0,8 0,4 4,4"/>',
    "star": '<polygon points="6,0.5 7.4,4.3 11.5,4.3 8.2,6.8 9.4,11 6,8.5 2.6,11 3.8,6.8 0.5,4.3 4.6,4.3"/>',
    "hexagon": '<polygon points="6,0.5 10.8,3.2 10.8,8.8 6,11.5 1.2,8.8 1.2,3.2"/>',
    "pentagon": '<polygon points="6,0.5 11.5,4.5 9.4,11 2.6,11 0.5,4.5"/>',
    "star-triangle-up": '<path d="M6,0.5 Q6.6,7 11.5,11 Q6,8.6 0.5,11 Q5.4,7 6,0.5Z"/>',
    "hourglass": '<polygon points="1,0.5 11,0.5 6,6 11,11.5 1,11.5 6,6"/>',
}


def swatch_svg(style: Style) -> str:
    """The model's marker in its colour as an inline SVG (``aria-hidden``: the name beside it says who)."""
    return (
        f'<svg class="tyc-swatch" viewBox="0 0 12 12" width="14" height="14" aria-hidden="true" fill="{style.colour}"'
        f' stroke="#000" stroke-width="0.8">{_SHAPES[style.symbol]}</svg>'
    )


def plotly_text(value: str) -> str:
    """Plotly interprets a subset of HTML in labels; escaping makes a contributed name plain text."""
    return html.escape(value, quote=False)


RANK_DECIMALS = 3  # the diagram's hover shows mean ranks to three decimals; positions need no more
RANK_PAD = 0.05  # the CD axis extends this fraction of the data's span beyond it on each side ...
RANK_PAD_MIN = 0.25  # ... and at least this many ranks, so a lone method or a tight group is not on the edge


def _round(value: float, decimals: int, sig: int = 4) -> float:
    """``value`` to ``decimals`` places, or more where that would keep fewer than ``sig`` significant digits
    (the precision a chart shows, so the JSON carries no digits no reader sees)."""
    if value == 0 or not math.isfinite(value):
        return value
    return round(value, max(decimals, sig - 1 - math.floor(math.log10(abs(value)))))


def _sig(value: float, digits: int) -> float:
    return float(f"{value:.{digits}g}")


def _template(*, marker: dict[str, Any], hover: str) -> dict[str, Any]:
    """A plotly layout template giving every scatter trace ``marker`` and ``hover`` unless it sets its own:
    a chart's shared defaults written once instead of once per trace."""
    return {"data": {"scatter": [{"marker": marker, "hovertemplate": hover}]}}


def rank_axis_range(values: Sequence[float]) -> tuple[float, float]:
    """The CD diagram's x range: the span of ``values`` (mean ranks and the ends of the CD bars) plus
    :data:`RANK_PAD` of that span (at least :data:`RANK_PAD_MIN`) on each side."""
    lo, hi = min(values), max(values)
    pad = max(RANK_PAD * (hi - lo), RANK_PAD_MIN)
    return _round(lo - pad, 2), _round(hi + pad, 2)


def cliques(ranks: Sequence[float], cd: float) -> list[tuple[int, int]]:
    """Maximal runs ``(i, j)`` of rank-sorted methods whose mean ranks differ by less than ``cd``.

    ``ranks`` must be sorted ascending. These are the bars of a critical-difference diagram
    (Demšar 2006, Fig. 1): methods joined by a bar are not significantly different by Nemenyi.
    """
    runs: list[tuple[int, int]] = []
    last_end = -1
    for i in range(len(ranks)):
        j = i
        while j + 1 < len(ranks) and ranks[j + 1] - ranks[i] < cd:
            j += 1
        if j > i and j > last_end:
            runs.append((i, j))
            last_end = j
    return runs


def cd_spec(
    *, methods: Sequence[tuple[str, float, Style]], cd: float | None, conservative_cd: float | None
) -> dict[str, Any]:
    """What a critical-difference diagram shows, in the compact form a page ships (``tycheon.js`` draws it
    with ``cdFigure``, exactly as :func:`cd_figure_from_spec` builds it here).

    ``methods`` are ``(label, mean_rank, style)`` sorted by mean rank. The spec holds ``m``: each method as
    ``[label (escaped), mean rank to three decimals, colour, symbol]``; ``g``: the clique bars ``[i, j]``
    (:func:`cliques`, on the exact ranks); ``cd`` and ``ccd``: the Nemenyi and the conservative critical
    difference as ``[value as shown, right end of its reference bar]``, absent when not computed; ``x``: the
    axis range (:func:`rank_axis_range` over the ranks and the bars' ends).
    """
    exact = [rank for _, rank, _ in methods]  # the bars join on these, as the text list does (cd_groups)
    ranks = [_round(rank, RANK_DECIMALS) for rank in exact]
    spec: dict[str, Any] = {
        "m": [
            [plotly_text(label), rank, style.colour, style.symbol]
            for (label, _, style), rank in zip(methods, ranks, strict=True)
        ],
        "g": [list(run) for run in cliques(exact, cd)] if cd is not None else [],
    }
    low = min(ranks) if ranks else 1.0
    ends = list(ranks) or [1.0]
    for key, width in (("cd", cd), ("ccd", conservative_cd)):
        if width is not None:
            ends.append(_round(low + width, RANK_DECIMALS))
            spec[key] = [f"{width:.3f}", ends[-1]]
    spec["x"] = list(rank_axis_range(ends))
    return spec


def cd_figure(
    *, methods: Sequence[tuple[str, float, Style]], cd: float | None, conservative_cd: float | None
) -> dict[str, Any]:
    """Critical-difference diagram: one row per method at its mean rank, bars joining methods within CD
    (:func:`cd_spec`, drawn by :func:`cd_figure_from_spec`)."""
    return cd_figure_from_spec(cd_spec(methods=methods, cd=cd, conservative_cd=conservative_cd))


def cd_figure_from_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """The plotly figure of a :func:`cd_spec`; ``cdFigure`` in ``templates/assets/tycheon.js`` is the same
    function, line for line (a browser test holds the two equal on the committed site's diagrams).

    One row per method at its mean rank; a bar per clique above them, a dotted guide from each member to
    its bar (Demšar 2006, Fig. 1); the Nemenyi CD and the conservative CD as two reference bars above the
    methods. The x axis covers the ranks and the reference bars, not 1 to k: ranks still read 1 = best.
    """
    methods = spec["m"]
    k = len(methods)
    ranks = [m[1] for m in methods]
    data: list[dict[str, Any]] = [
        {"mode": "markers", "x": [rank], "y": [row], "name": label, "marker": {"color": colour, "symbol": symbol}}
        for row, (label, rank, colour, symbol) in enumerate(methods)
    ]
    level = (100 * k - 40) / 100
    guides: tuple[list[float | None], list[float | None]] = ([], [])
    for n, (i, j) in enumerate(spec["g"]):
        level = (100 * k - 40 + 35 * (n + 1)) / 100
        span = f"{methods[i][0]} to {methods[j][0]}, {j - i + 1} models"
        data.append(
            {
                "mode": "lines+text",
                "x": [ranks[i], ranks[j]],
                "y": [level, level],
                "text": [clique_letter(n), ""],
                "textposition": "middle left",
                "cliponaxis": False,
                "line": {"color": "#555", "width": 5},
                "hovertemplate": f"group {clique_letter(n)} ({span}): not significantly different<extra></extra>",
            }
        )
        for m in range(i, j + 1):  # guide from each member down to its bar, as in Demšar's figure
            guides[0].extend([ranks[m], ranks[m], None])
            guides[1].extend([m, level, None])
    if guides[0]:  # one trace, the segments split by gaps: a trace per guide made the page's JSON 3x heavier
        data.append(
            {
                "mode": "lines",
                "x": guides[0][:-1],
                "y": guides[1][:-1],
                "line": {"color": "#999", "width": 1, "dash": "dot"},
                "hoverinfo": "skip",
            }
        )
    low = min(ranks) if ranks else 1.0
    ref_ticks: list[tuple[float, str]] = []
    ref_labels: dict[str, dict[str, Any]] = {}  # on a phone, with no label column, each bar's name above it
    for key, name, dash, y in (("cd", "Nemenyi CD", "solid", -1.3), ("ccd", "conservative CD", "dot", -0.7)):
        if key not in spec:
            continue
        shown, end = spec[key]
        data.append(
            {
                "mode": "lines+markers",
                "x": [low, end],
                "y": [y, y],
                "line": {"color": "#0072B2", "width": 3, "dash": dash},
                "marker": {"symbol": "line-ns-open", "size": 10, "color": "#0072B2", "line": {"width": 0}},
                "hovertemplate": f"{name} = {shown}<extra></extra>",
            }
        )
        ref_ticks.append((y, f"{name} = {shown}"))
        ref_labels[str(len(data) - 1)] = {
            "y": [y * 1.6, y * 1.6],  # spread apart, so each name fits above its bar
            "mode": "lines+markers+text",
            "text": [ref_ticks[-1][1], ""],
            "textposition": "top right",
            "textfont": {"size": 11},
        }
    x_range = spec["x"]
    top = (100 * k + 10 + 35 * len(spec["g"])) / 100  # the top bar's level + 0.5
    # narrow screens (tycheon.js applies this under 600 px): no label column; each name beside its marker,
    # on the side with room, so the plot keeps the full width
    middle = (x_range[0] + x_range[1]) / 2
    layout = {
        "height": int(150 + 34 * k + 18 * max(level - k + 0.4, 0) / 0.35),
        "margin": {"l": 260, "r": 30, "t": 20, "b": 50},
        "showlegend": False,
        "hoverlabel": {"namelength": -1},
        # every scatter trace's defaults, written once: the markers' size and outline, and their hover,
        # whose side box names the trace (the lines override or skip the hover)
        "template": _template(marker={"size": 12, "line": {"color": "#000", "width": 1}}, hover="mean rank %{x:.3f}"),
        "xaxis": {
            "title": {"text": "mean rank over complete blocks (1 = best)"},
            "range": list(x_range),
            "zeroline": False,
            "showgrid": True,
            "automargin": True,
        },
        "yaxis": {
            "tickvals": [y for y, _ in ref_ticks] + list(range(k)),
            "ticktext": [t for _, t in ref_ticks] + [m[0] for m in methods],
            "range": [top, -1.8],
            "zeroline": False,
            "showgrid": False,
        },
        "font": {"size": 13},
        "meta": {
            "narrow": {
                "layout": {
                    "margin": {"l": 16, "r": 16, "t": 20, "b": 50},
                    "yaxis.showticklabels": False,
                    "yaxis.range": [top, -2.6],
                    "font.size": 11,
                },
                # trace n's name written beside its marker, on this side (tycheon.js)
                "labels": ["right" if rank < middle else "left" for rank in ranks],
                "traces": ref_labels,
            }
        },
    }
    return {"data": data, "layout": layout}


def cd_spec_json(spec: dict[str, Any]) -> str:
    """A :func:`cd_spec` as a page ships it: checked as the figure it draws (:func:`check_drawable`), then written
    compactly with the same escapes."""
    check_drawable(cd_figure_from_spec(spec))
    return _script_json(spec, sort_keys=False)


def clique_letter(n: int) -> str:
    """Label of the ``n``-th clique bar: a, b, ..., z, aa, ab, ..."""
    letters = ""
    n += 1
    while n:
        n, rem = divmod(n - 1, 26)
        letters = chr(97 + rem) + letters
    return letters


def cd_groups(*, methods: Sequence[tuple[str, float, Style]], cd: float | None) -> list[tuple[str, list[str]]]:
    """The diagram's clique bars as ``(letter, member labels)``, for a text list beside the chart."""
    if cd is None:
        return []
    ranks = [rank for _, rank, _ in methods]
    return [(clique_letter(n), [methods[m][0] for m in range(i, j + 1)]) for n, (i, j) in enumerate(cliques(ranks, cd))]


@dataclass(frozen=True)
class CostPoint:
    label: str
    seconds: float
    accuracy: float
    style: Style
    highlight: bool = False


def pareto_front(points: Sequence[CostPoint]) -> list[CostPoint]:
    """Points not dominated on (cost, error): no other point is both cheaper-or-equal and more accurate.

    Sorted by cost; ties on cost keep the more accurate point only.
    """
    ordered = sorted(points, key=lambda p: (p.seconds, p.accuracy, p.label))
    front: list[CostPoint] = []
    best = float("inf")
    for point in ordered:
        if point.accuracy < best:
            front.append(point)
            best = point.accuracy
    return front


LEGEND_ROW = 20  # px per line of legend text at font size 11
LEGEND_WRAP = 20  # characters per line of a legend entry in a half-width column on a phone


def _wrap(label: str, width: int = LEGEND_WRAP) -> list[str]:
    lines: list[str] = []
    for word in label.split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def narrow_legend(*, names: Sequence[str], height: int) -> dict[str, Any]:
    """Overrides for a screen under 600 px (``layout.meta.narrow``, applied by tycheon.js): the legend goes
    below the plot in two columns instead of beside it (where it took two thirds of a phone's width), long
    names wrap onto a second line, and the chart grows by the legend's height so the plot keeps its own.

    ``names`` are the legend's entries in trace order (already escaped for plotly).
    """
    wrapped = [_wrap(name) for name in names]
    lines = sum(max(len(w) for w in wrapped[i : i + 2]) for i in range(0, len(wrapped), 2))
    return {
        "layout": {
            "height": height + LEGEND_ROW * lines,
            "legend": {
                "orientation": "h",
                "x": 0,
                "xanchor": "left",
                "y": 0,
                "yanchor": "bottom",
                "yref": "container",
                "entrywidth": 0.5,
                "entrywidthmode": "fraction",
                "font": {"size": 11},
            },
            "margin": {"l": 10, "r": 10, "t": 30, "b": 10 + LEGEND_ROW * lines},
        },
        "traces": {str(n): {"name": "<br>".join(w)} for n, w in enumerate(wrapped) if len(w) > 1},
    }


def cost_accuracy_figure(*, points: Sequence[CostPoint], metric: str) -> dict[str, Any]:
    """Fit+predict seconds (log axis) against mean error, with the Pareto frontier as a step line.

    Seconds carry the three significant digits the hover shows, errors four decimals (or four significant
    digits, if more)."""
    data: list[dict[str, Any]] = []
    front = pareto_front(points)
    on_front = {id(p) for p in front}
    metric_text = plotly_text(metric)
    for p in points:
        trace: dict[str, Any] = {
            "mode": "markers",
            "x": [_sig(p.seconds, 3)],
            "y": [_round(p.accuracy, 4)],
            "name": plotly_text(p.label),
            "marker": {"color": p.style.colour, "symbol": p.style.symbol},
        }
        if p.highlight:
            trace["marker"].update(size=16, line={"color": "#000", "width": 3})
        if p.highlight or id(p) in on_front:  # other names are in the hover, to avoid a pile-up of labels
            trace.update(mode="markers+text", text=[trace["name"]], textposition="top center", cliponaxis=False)
        data.append(trace)
    if front:
        data.append(
            {
                "mode": "lines",
                "name": "Pareto frontier",
                "x": [_sig(p.seconds, 3) for p in front],
                "y": [_round(p.accuracy, 4) for p in front],
                "line": {"color": "#D55E00", "width": 2, "dash": "dash", "shape": "hv"},
                "hoverinfo": "skip",
            }
        )
    height = max(440, 100 + LEGEND_ROW * len(data))  # the whole legend beside the plot, none of it scrolled away
    layout = {
        "height": height,
        "margin": {"l": 70, "r": 20, "t": 30, "b": 60},
        "hoverlabel": {"namelength": -1},
        "template": _template(  # every marker's size, outline and hover (its side box names the model)
            marker={"size": 11, "line": {"color": "#000", "width": 1}},
            hover=f"%{{x:.3g}} s<br>{metric_text} %{{y:.4f}}",
        ),
        "xaxis": {"type": "log", "title": {"text": "fit + predict seconds (log scale)"}, "automargin": True},
        "yaxis": {"title": {"text": f"mean {metric_text} (lower is better)"}, "automargin": True},
        "legend": {"orientation": "v", "x": 1.02, "y": 1, "font": {"size": 11}},
        "font": {"size": 13},
        "meta": {"narrow": narrow_legend(names=[t["name"] for t in data], height=min(height, 440))},
    }
    return {"data": data, "layout": layout}


def check_drawable(figure: dict[str, Any]) -> None:
    """Raise ``ValueError`` for a trace type outside :data:`TRACE_TYPES`, or a trace, layout or axis
    attribute the shipped plotly.js build does not hold (:func:`bundle.check_figure`)."""
    unknown = sorted({str(t.get("type", "scatter")) for t in figure.get("data", [])} - TRACE_TYPES)
    if unknown:
        raise ValueError(
            f"figure uses trace types {unknown}; the site's plotly.js bundle draws only {sorted(TRACE_TYPES)}"
        )
    from .bundle import check_figure  # here, not at the top: `python -m benchmarks.render.bundle` stays clean

    check_figure(figure)


def _script_json(value: Any, *, sort_keys: bool) -> str:
    """Compact JSON for a ``<script type="application/json">`` block: no ``<`` may close it, so ``<``, ``>``
    and ``&`` are written as ``\\u`` escapes (the same JSON strings)."""
    text = json.dumps(value, sort_keys=sort_keys, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def to_json(figure: dict[str, Any]) -> str:
    """Canonical JSON (sorted keys, no spaces, ``<``, ``>`` and ``&`` as ``\\u`` escapes) for a
    ``<script type="application/json">`` block beside its chart; byte-stable.

    Raises ``ValueError`` for a figure the shipped plotly.js build cannot draw (:func:`check_drawable`).
    """
    check_drawable(figure)
    return _script_json(figure, sort_keys=True)
