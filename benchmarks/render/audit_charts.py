"""Charts of the audits on a dataset page: the selection-rule replay's bars and the protocol-sensitivity
audit's rank bump chart, PSS by step and aggregation curves (plotly figures as dicts, drawn by the site's
plotly.js bundle; :func:`benchmarks.render.charts.to_json` writes them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks.render.charts import Style, _round, narrow_legend, plotly_text

__all__ = ["aggregation_figure", "bump_figure", "horizon_pss_figure", "replay_figure"]


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
            "y": [None if v is None else _round(v, 4) for v in values],
            "marker": {"color": colour, "pattern": {"shape": pattern}},  # pattern: no distinction by colour alone
            "hovertemplate": f"{name}<br>%{{x}}: mean {plotly_text(metric)} %{{y:.4f}}<extra></extra>",
        }
        for name, values, colour, pattern in bars
    ]
    layout = {
        "barmode": "group",
        "height": 380,
        "margin": {"l": 70, "r": 20, "t": 30, "b": 50},
        "xaxis": {"title": {"text": "demand class"}, "automargin": True},
        "yaxis": {
            "title": {"text": f"mean {plotly_text(metric)} (lower is better)"},
            "rangemode": "tozero",
            "automargin": True,
        },
        "legend": {"orientation": "h", "y": 1.12},
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
    height = int(200 + 28 * k)
    layout = {
        "height": height,
        "margin": {"l": 50, "r": 20, "t": 30, "b": 110},
        "xaxis": {"title": {"text": "protocol run"}, "tickangle": -30, "automargin": True},
        "yaxis": {"title": {"text": "rank (1 = best)"}, "autorange": "reversed", "dtick": 1, "automargin": True},
        "legend": {"orientation": "v", "x": 1.02, "y": 1, "font": {"size": 11}},
        "font": {"size": 13},
        "meta": {"narrow": narrow_legend(names=[t["name"] for t in data], height=height)},
    }
    return {"data": data, "layout": layout}


def _interval_band(
    name: str,
    x: Sequence[Any],
    y: Sequence[float | None],
    lo: Sequence[float | None],
    hi: Sequence[float | None],
    *,
    colour: str,
    fill: str,
    symbol: str,
    hover: str,
) -> list[dict[str, Any]]:
    """A line through ``y`` over a shaded band from ``lo`` to ``hi``: the band's upper edge, its lower edge
    filled up to it (the shipped plotly.js build draws fills, not error bars), then the line itself."""

    def values(v: Sequence[float | None]) -> list[float | None]:
        return [None if u is None else _round(u, 4) for u in v]

    edge = {"type": "scatter", "mode": "lines", "x": list(x), "line": {"width": 0, "color": colour}}
    return [
        {**edge, "y": values(hi), "name": f"{plotly_text(name)}: upper", "showlegend": False, "hoverinfo": "skip"},
        {
            **edge,
            "y": values(lo),
            "name": f"{plotly_text(name)}: interval",
            "fill": "tonexty",
            "fillcolor": fill,
            "showlegend": False,
            "hoverinfo": "skip",
        },
        {
            "type": "scatter",
            "mode": "lines+markers",
            "name": plotly_text(name),
            "x": list(x),
            "y": values(y),
            "line": {"color": colour, "width": 2},
            "marker": {"color": colour, "symbol": symbol, "size": 9},
            "hovertemplate": hover,
        },
    ]


def horizon_pss_figure(
    *,
    steps: Sequence[int],
    pss: Sequence[float | None],
    lo: Sequence[float | None],
    hi: Sequence[float | None],
    within: Sequence[float | None],
) -> dict[str, Any]:
    """The between-protocol PSS at each step with its interval, beside the intraprotocol references' mean
    (protocol-sensitivity audit, section 5.3: how discrepancy varies with horizon)."""
    between = _interval_band(
        "static vs rolling (95% interval shaded)",
        steps,
        pss,
        lo,
        hi,
        colour="#0072B2",
        fill="rgba(0, 114, 178, 0.18)",
        symbol="circle",
        hover="step %{x}: mean PSS %{y:.4f}<extra>static vs rolling</extra>",
    )
    inside = {
        "type": "scatter",
        "mode": "lines+markers",
        "name": "intraprotocol references (mean)",
        "x": list(steps),
        "y": [None if v is None else _round(v, 4) for v in within],
        "line": {"color": "#D55E00", "width": 2, "dash": "dash"},
        "marker": {"color": "#D55E00", "symbol": "square", "size": 8},
        "hovertemplate": "step %{x}: mean PSS %{y:.4f}<extra>references</extra>",
    }
    layout = {
        "height": 360,
        "margin": {"l": 70, "r": 20, "t": 30, "b": 50},
        "xaxis": {"title": {"text": "step ahead"}, "dtick": 1, "automargin": True},
        "yaxis": {"title": {"text": "mean PSS (0: same order)"}, "rangemode": "tozero", "automargin": True},
        "legend": {"orientation": "h", "y": 1.15},
        "font": {"size": 13},
    }
    return {"data": [*between, inside], "layout": layout}


def aggregation_figure(
    *, curves: Sequence[tuple[str, Sequence[int], Sequence[float], Sequence[float], Sequence[float]]]
) -> dict[str, Any]:
    """Hard-reversal prevalence against the number K of aggregated runs, one line per arm over a band from
    the lowest to the highest subset (protocol-sensitivity audit, section 5.5, Figure 8)."""
    looks = (("#0072B2", "rgba(0, 114, 178, 0.18)", "circle"), ("#D55E00", "rgba(213, 94, 0, 0.18)", "square"))
    data = []
    for (name, ks, mean, low, high), (colour, fill, symbol) in zip(curves, looks, strict=False):
        data += _interval_band(
            f"{name} (lowest to highest subset shaded)",
            ks,
            mean,
            low,
            high,
            colour=colour,
            fill=fill,
            symbol=symbol,
            hover=f"K = %{{x}}: %{{y:.1%}} of series reversed<extra>{plotly_text(name)}</extra>",
        )
    layout = {
        "height": 360,
        "margin": {"l": 70, "r": 20, "t": 30, "b": 50},
        "xaxis": {"title": {"text": "runs aggregated (K, Borda mean rank)"}, "dtick": 1, "automargin": True},
        "yaxis": {
            "title": {"text": "series with a hard reversal"},
            "tickformat": ".0%",
            "rangemode": "tozero",
            "automargin": True,
        },
        "legend": {"orientation": "h", "y": 1.15},
        "font": {"size": 13},
    }
    return {"data": data, "layout": layout}
