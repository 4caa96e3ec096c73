"""Plotly figures as plain JSON-ready dicts: the critical-difference diagram and the cost-accuracy chart.

Figures are built by hand (no plotly Python objects), so the JSON is small and byte-stable; pages embed it
in a JSON script block and the shipped ``tycheon.js`` calls ``Plotly.newPlot`` on it offline.
Colours are the Okabe-Ito palette (colour-blind safe, Okabe & Ito 2008); every model also gets its own
marker symbol, so no distinction rests on colour alone.
"""

from __future__ import annotations

import html
import json
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


@dataclass(frozen=True)
class Style:
    colour: str
    symbol: str


def style_for(index: int) -> Style:
    """Style of the model at ``index`` in the site-wide sorted model list (same model, same look)."""
    return Style(OKABE_ITO[index % len(OKABE_ITO)], SYMBOLS[index % len(SYMBOLS)])


def plotly_text(value: str) -> str:
    """Plotly interprets a subset of HTML in labels; escaping makes a contributed name plain text."""
    return html.escape(value, quote=False)


def _r(value: float) -> float:
    return float(f"{value:.6g}")


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


def cd_figure(
    *, methods: Sequence[tuple[str, float, Style]], cd: float | None, conservative_cd: float | None
) -> dict[str, Any]:
    """Critical-difference diagram: one row per method at its mean rank, bars joining methods within CD.

    ``methods`` are ``(label, mean_rank, style)`` sorted by mean rank. The Nemenyi CD and the conservative
    CD (one origin per series) are drawn as two reference bars above the methods.
    """
    k = len(methods)
    data: list[dict[str, Any]] = []
    for row, (label, rank, style) in enumerate(methods):
        data.append(
            {
                "type": "scatter",
                "mode": "markers",
                "x": [_r(rank)],
                "y": [row],
                "name": plotly_text(label),
                "marker": {
                    "color": style.colour,
                    "symbol": style.symbol,
                    "size": 12,
                    "line": {"color": "#000000", "width": 1},
                },
                "hovertemplate": f"{plotly_text(label)}<br>mean rank %{{x:.3f}}<extra></extra>",
                "showlegend": False,
            }
        )
    ranks = [rank for _, rank, _ in methods]
    level = k - 0.4
    if cd is not None:
        for n, (i, j) in enumerate(cliques(ranks, cd)):
            level += 0.35
            members = ", ".join(plotly_text(methods[m][0]) for m in range(i, j + 1))
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines+text",
                    "x": [_r(ranks[i]), _r(ranks[j])],
                    "y": [level, level],
                    "text": [clique_letter(n), ""],
                    "textposition": "middle left",
                    "cliponaxis": False,
                    "line": {"color": "#555555", "width": 5},
                    "showlegend": False,
                    "hovertemplate": f"group {clique_letter(n)}, not significantly different: {members}<extra></extra>",
                }
            )
            for m in range(i, j + 1):  # guide from each member down to its bar, as in Demšar's figure
                data.append(
                    {
                        "type": "scatter",
                        "mode": "lines",
                        "x": [_r(ranks[m]), _r(ranks[m])],
                        "y": [m, level],
                        "line": {"color": "#999999", "width": 1, "dash": "dot"},
                        "showlegend": False,
                        "hoverinfo": "skip",
                    }
                )
    low = min(ranks) if ranks else 1.0
    ref_ticks: list[tuple[float, str]] = []
    refs = [("Nemenyi CD", cd, "solid", -1.3), ("conservative CD", conservative_cd, "dot", -0.7)]
    for name, width, dash, y in refs:
        if width is None:
            continue
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "x": [_r(low), _r(low + width)],
                "y": [y, y],
                "line": {"color": "#0072B2", "width": 3, "dash": dash},
                "showlegend": False,
                "marker": {"symbol": "line-ns-open", "size": 10, "color": "#0072B2"},
                "hovertemplate": f"{name} = {width:.3f}<extra></extra>",
            }
        )
        ref_ticks.append((y, f"{name} = {width:.3f}"))
    hi = max(max(ranks, default=1.0), low + max(cd or 0.0, conservative_cd or 0.0))
    # narrow screens (tycheon.js applies this under 600 px): no label column; each name beside its marker,
    # on the side with room, so the plot keeps the full width
    middle = (0.5 + hi + 0.5) / 2
    narrow_traces = {
        str(row): {
            "mode": "markers+text",
            "text": [plotly_text(label)],
            "cliponaxis": False,
            "textposition": "middle right" if rank < middle else "middle left",
            "textfont": {"size": 11},
        }
        for row, (label, rank, _) in enumerate(methods)
    }
    layout = {
        "height": int(150 + 34 * k + 18 * max(level - k + 0.4, 0) / 0.35),
        "margin": {"l": 260, "r": 30, "t": 20, "b": 50},
        "xaxis": {
            "title": {"text": "mean rank over complete blocks (1 = best)"},
            "range": [_r(0.5), _r(hi + 0.5)],
            "zeroline": False,
            "showgrid": True,
        },
        "yaxis": {
            "tickvals": [y for y, _ in ref_ticks] + list(range(k)),
            "ticktext": [t for _, t in ref_ticks] + [plotly_text(m[0]) for m in methods],
            "range": [_r(level + 0.5), -1.8],
            "zeroline": False,
            "showgrid": False,
        },
        "plot_bgcolor": "#ffffff",
        "paper_bgcolor": "#ffffff",
        "font": {"size": 13},
        "meta": {
            "narrow": {
                "layout": {
                    "margin": {"l": 16, "r": 16, "t": 20, "b": 50},
                    "yaxis.showticklabels": False,
                    "font.size": 11,
                },
                "traces": narrow_traces,
            }
        },
    }
    return {"data": data, "layout": layout}


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


def cost_accuracy_figure(*, points: Sequence[CostPoint], metric: str) -> dict[str, Any]:
    """Fit+predict seconds (log axis) against mean error, with the Pareto frontier as a step line."""
    data: list[dict[str, Any]] = []
    front = pareto_front(points)
    on_front = {id(p) for p in front}
    for p in points:
        labelled = p.highlight or id(p) in on_front  # other names are in the hover, to avoid a pile-up of labels
        data.append(
            {
                "type": "scatter",
                "mode": "markers+text" if labelled else "markers",
                "x": [_r(p.seconds)],
                "y": [_r(p.accuracy)],
                "name": plotly_text(p.label),
                "text": [plotly_text(p.label) if labelled else ""],
                "textposition": "top center",
                "cliponaxis": False,
                "marker": {
                    "color": p.style.colour,
                    "symbol": p.style.symbol,
                    "size": 16 if p.highlight else 11,
                    "line": {"color": "#000000", "width": 3 if p.highlight else 1},
                },
                "hovertemplate": (
                    f"{plotly_text(p.label)}<br>%{{x:.3g}} s<br>{plotly_text(metric)} %{{y:.4f}}<extra></extra>"
                ),
                "showlegend": True,
            }
        )
    if front:
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": "Pareto frontier",
                "showlegend": True,
                "x": [_r(p.seconds) for p in front],
                "y": [_r(p.accuracy) for p in front],
                "line": {"color": "#D55E00", "width": 2, "dash": "dash", "shape": "hv"},
                "hoverinfo": "skip",
            }
        )
    layout = {
        "height": 440,
        "margin": {"l": 70, "r": 20, "t": 30, "b": 60},
        "xaxis": {"type": "log", "title": {"text": "fit + predict seconds (log scale)"}},
        "yaxis": {"title": {"text": f"mean {plotly_text(metric)} (lower is better)"}},
        "legend": {"orientation": "v", "x": 1.02, "y": 1, "font": {"size": 11}},
        "plot_bgcolor": "#ffffff",
        "paper_bgcolor": "#ffffff",
        "font": {"size": 13},
    }
    return {"data": data, "layout": layout}


def to_json(figure: dict[str, Any]) -> str:
    """Canonical JSON (sorted keys, no spaces, ``<``, ``>`` and ``&`` as ``\\u`` escapes) for a
    ``<script type="application/json">`` block beside its chart; byte-stable.

    Raises ``ValueError`` for a trace type outside :data:`TRACE_TYPES`, or a trace, layout or axis
    attribute the shipped plotly.js build does not hold (:func:`bundle.check_figure`).
    """
    unknown = sorted({str(t.get("type", "scatter")) for t in figure.get("data", [])} - TRACE_TYPES)
    if unknown:
        raise ValueError(
            f"figure uses trace types {unknown}; the site's plotly.js bundle draws only {sorted(TRACE_TYPES)}"
        )
    from .bundle import check_figure  # here, not at the top: `python -m benchmarks.render.bundle` stays clean

    check_figure(figure)
    text = json.dumps(figure, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)
    # shipped inside <script type="application/json">: no "<" may close it; \u003c is the same JSON string
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def replay_figure(
    *,
    classes: Sequence[str],
    floor: Sequence[float | None],
    served: Sequence[float | None],
    oracle: Sequence[float | None],
    metric: str,
) -> dict[str, Any]:
    """Selection-rule replay: floor (production baseline), served (the rule) and oracle (hindsight) mean
    metric per demand class, as grouped bars (evaluation-choices paper, Table 6)."""
    bars = (
        ("floor (always the baseline)", floor, "#D55E00", ""),
        ("served (the rule)", served, "#0072B2", "/"),
        ("oracle (hindsight)", oracle, "#009E73", "."),
    )
    data = [
        {
            "type": "bar",
            "name": name,
            "x": [plotly_text(c) for c in classes],
            "y": [None if v is None else _r(v) for v in values],
            "marker": {"color": colour, "pattern": {"shape": pattern}},  # pattern: no distinction by colour alone
            "hovertemplate": f"{name}<br>%{{x}}: mean {plotly_text(metric)} %{{y:.4f}}<extra></extra>",
        }
        for name, values, colour, pattern in bars
    ]
    layout = {
        "barmode": "group",
        "height": 380,
        "margin": {"l": 70, "r": 20, "t": 30, "b": 50},
        "xaxis": {"title": {"text": "demand class"}},
        "yaxis": {"title": {"text": f"mean {plotly_text(metric)} (lower is better)"}, "rangemode": "tozero"},
        "legend": {"orientation": "h", "y": 1.12},
        "plot_bgcolor": "#ffffff",
        "paper_bgcolor": "#ffffff",
        "font": {"size": 13},
    }
    return {"data": data, "layout": layout}


def bump_figure(*, runs: Sequence[str], models: Sequence[tuple[str, Sequence[int], Style]]) -> dict[str, Any]:
    """Rank against protocol run: one line per model through its rank (1 = best, at the top) in each run
    of the sensitivity audit; a flat line is an order the protocol does not move."""
    data = [
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": plotly_text(label),
            "x": [plotly_text(r) for r in runs],
            "y": list(ranks),
            "line": {"color": style.colour, "width": 2},
            "marker": {
                "color": style.colour,
                "symbol": style.symbol,
                "size": 10,
                "line": {"color": "#000000", "width": 1},
            },
            "hovertemplate": f"{plotly_text(label)}<br>%{{x}}: rank %{{y}}<extra></extra>",
        }
        for label, ranks, style in models
    ]
    k = len(models)
    layout = {
        "height": int(200 + 28 * k),
        "margin": {"l": 50, "r": 20, "t": 30, "b": 110},
        "xaxis": {"title": {"text": "protocol run"}, "tickangle": -30},
        "yaxis": {"title": {"text": "rank (1 = best)"}, "autorange": "reversed", "dtick": 1},
        "legend": {"orientation": "v", "x": 1.02, "y": 1, "font": {"size": 11}},
        "plot_bgcolor": "#ffffff",
        "paper_bgcolor": "#ffffff",
        "font": {"size": 13},
    }
    return {"data": data, "layout": layout}
