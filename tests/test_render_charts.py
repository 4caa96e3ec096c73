"""Chart geometry and formatting helpers of the renderer, against brute-force definitions."""

from __future__ import annotations

import itertools
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.render import charts
from benchmarks.render.fmt import relurl, safe_label, slugify

_ranks = st.lists(st.floats(min_value=1.0, max_value=10.0, allow_nan=False), min_size=1, max_size=9).map(sorted)


def _brute_cliques(ranks: list[float], cd: float) -> list[tuple[int, int]]:
    """Maximal index intervals whose spread is below cd, found by checking every interval."""
    ok = [(i, j) for i, j in itertools.combinations(range(len(ranks)), 2) if ranks[j] - ranks[i] < cd]
    return sorted((i, j) for i, j in ok if not any(a <= i and j <= b and (a, b) != (i, j) for a, b in ok))


@settings(max_examples=200, deadline=None)
@given(ranks=_ranks, cd=st.floats(min_value=0.01, max_value=5.0))
def test_cd_bars_are_exactly_the_maximal_runs_within_the_critical_difference(ranks, cd):
    assert charts.cliques(ranks, cd) == _brute_cliques(ranks, cd)


def test_when_ranks_are_further_apart_than_cd_then_no_bar_joins_them():
    assert charts.cliques([1.0, 2.0, 3.0], 0.5) == []
    assert charts.cliques([1.0, 1.2, 1.3, 3.0], 0.5) == [(0, 2)]


def _point(label: str, seconds: float, accuracy: float) -> charts.CostPoint:
    return charts.CostPoint(label, seconds, accuracy, charts.style_for(0))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0.01, 100.0), st.floats(0.1, 3.0)), min_size=1, max_size=12, unique=True))
def test_pareto_front_holds_exactly_the_undominated_points(pairs):
    points = [_point(f"m{i}", s, a) for i, (s, a) in enumerate(pairs)]
    front = {p.label for p in charts.pareto_front(points)}

    def dominated(p: charts.CostPoint) -> bool:
        return any(q.seconds <= p.seconds and q.accuracy < p.accuracy for q in points) or any(
            q.seconds < p.seconds and q.accuracy <= p.accuracy for q in points
        )

    undominated = {p.label for p in points if not dominated(p)}
    # ties on both coordinates keep one representative, so the front is a subset covering every distinct optimum
    assert front <= undominated
    assert {(p.seconds, p.accuracy) for p in points if p.label in front} == {
        (p.seconds, p.accuracy) for p in points if p.label in undominated
    }


def test_every_model_gets_a_marker_symbol_as_well_as_a_colour():
    styles = [charts.style_for(i) for i in range(len(charts.OKABE_ITO))]
    assert len({s.colour for s in styles}) == len(styles)
    assert len({s.symbol for s in styles}) == len(styles)


def test_cd_figure_escapes_labels_and_draws_both_critical_differences():
    methods = [("<b>bold</b>", 1.5, charts.style_for(0)), ("plain", 1.6, charts.style_for(1))]
    figure = charts.cd_figure(methods=methods, cd=0.4, conservative_cd=0.9)
    text = charts.to_json(figure)
    assert "<b>" not in text and "&lt;b&gt;bold&lt;/b&gt;" in json.loads(text)["layout"]["yaxis"]["ticktext"][2]
    ticks = figure["layout"]["yaxis"]["ticktext"]
    assert ticks[0] == "Nemenyi CD = 0.400" and ticks[1] == "conservative CD = 0.900"
    bars = [t for t in figure["data"] if t.get("line", {}).get("width") == 5]
    assert [b["x"] for b in bars] == [[1.5, 1.6]]


def test_slugify_keeps_clean_slugs_reads_unit_forms_and_separates_strings_that_would_collide():
    assert slugify("rolling_origin") == "rolling_origin"
    assert slugify("groups:5") == "groups-5" and slugify("level:region") == "level-region"
    assert slugify("A/B") != slugify("a-b") and slugify("a b") != slugify("a-b")
    assert slugify("Level:Region") != slugify("level:region")
    for hostile in ("../../etc", "a/b", "<script>", "C:\\x"):
        assert set(slugify(hostile)) <= set("abcdefghijklmnopqrstuvwxyz0123456789_-")


def test_safe_label_drops_markup_characters():
    assert set("<>&\"'`") & set(safe_label("<script>alert('x')</script> & `y`")) == set()


def test_relurl_points_at_built_html_relative_to_the_page():
    assert relurl("benchmarks/a/b/c.md", "models/x.md") == "../../../models/x.html"
    assert relurl("index.md", "methodology.md") == "methodology.html"


_spread = st.lists(st.floats(min_value=1.0, max_value=40.0, allow_nan=False), min_size=1, max_size=30).map(sorted)
_cd = st.one_of(st.none(), st.floats(min_value=0.05, max_value=20.0))


@settings(max_examples=200, deadline=None)
@given(ranks=_spread, cd=_cd, conservative=_cd)
def test_cd_axis_covers_ranks_and_cd_bars_with_a_margin_and_not_much_more(ranks, cd, conservative):
    methods = [(f"m{i}", r, charts.style_for(i)) for i, r in enumerate(ranks)]
    figure = charts.cd_figure(methods=methods, cd=cd, conservative_cd=conservative)
    lo, hi = figure["layout"]["xaxis"]["range"]
    xs = [x for trace in figure["data"] for x in trace["x"] if x is not None]  # markers, CD bars, guides
    data_lo, data_hi = min(xs), max(xs)
    pad = max(charts.RANK_PAD * (data_hi - data_lo), charts.RANK_PAD_MIN)
    assert lo < data_lo and data_hi < hi  # nothing on the frame
    assert data_lo - lo <= pad + 0.01 and hi - data_hi <= pad + 0.01  # and no more than the margin beyond it


def test_cd_axis_starts_near_the_best_rank_not_at_one():
    """The issue's case: ranks 9 to 15 of 15 models were drawn on an axis from 0.5."""
    methods = [(f"m{i}", 9.0 + i * 0.4, charts.style_for(i)) for i in range(15)]
    lo, hi = charts.cd_figure(methods=methods, cd=1.5, conservative_cd=3.0)["layout"]["xaxis"]["range"]
    assert 8.5 < lo < 9.0 and 14.6 < hi < 15.2
    assert (
        "1 = best"
        in charts.cd_figure(methods=methods, cd=None, conservative_cd=None)["layout"]["xaxis"]["title"]["text"]
    )


def test_cd_numbers_carry_the_three_decimals_shown_and_the_guides_are_one_trace():
    methods = [(f"m{i}", 2.0 + i / 7, charts.style_for(i)) for i in range(12)]
    figure = charts.cd_figure(methods=methods, cd=1.0, conservative_cd=None)
    xs = [x for trace in figure["data"] for x in trace["x"] if x is not None]
    assert all(round(x, 3) == x for x in xs)
    assert [t["x"][0] for t in figure["data"][:12]] == [round(2.0 + i / 7, 3) for i in range(12)]
    dotted = [t for t in figure["data"] if t.get("line", {}).get("dash") == "dot" and t["mode"] == "lines"]
    bars = charts.cliques([r for _, r, _ in methods], 1.0)
    assert len(dotted) == 1 and dotted[0]["x"].count(None) == sum(j - i + 1 for i, j in bars) - 1


def test_styles_are_distinct_colour_and_marker_pairs_for_every_index_below_style_count():
    styles = [charts.style_for(i) for i in range(charts.STYLE_COUNT)]
    assert len(set(styles)) == charts.STYLE_COUNT == len(charts.OKABE_ITO) * len(charts.SYMBOLS)
    assert charts.style_for(5) == charts.style_for(5)  # a pure function of the site-wide index


def test_every_marker_symbol_has_a_swatch_shape():
    for symbol in charts.SYMBOLS:
        svg = charts.swatch_svg(charts.Style("#E69F00", symbol))
        assert svg.startswith("<svg") and 'fill="#E69F00"' in svg


def test_on_a_phone_the_legend_goes_below_in_two_columns_and_long_names_wrap():
    narrow = charts.narrow_legend(names=["a", "b", "Seasonal naive + momentum (production)", "c"], height=400)
    legend = narrow["layout"]["legend"]
    assert legend["orientation"] == "h" and legend["entrywidth"] == 0.5 and legend["yanchor"] == "bottom"
    assert narrow["traces"] == {"2": {"name": "Seasonal naive +<br>momentum<br>(production)"}}
    assert narrow["layout"]["height"] == 400 + charts.LEGEND_ROW * 4  # rows: (a, b), (three lines, c)


def test_a_page_ships_the_cd_spec_a_fraction_of_the_figure_it_draws():
    """The leaderboard page carries the compact spec (names, ranks, styles, cliques, the two CDs, the axis),
    not the plotly figure: the same drawing at under a quarter of the bytes for a table of 22 models."""
    methods = [(f"Model number {i}", 3.0 + i * 0.41, charts.style_for(i)) for i in range(22)]
    spec = charts.cd_spec(methods=methods, cd=0.9, conservative_cd=2.1)
    shipped = charts.cd_spec_json(spec)
    assert json.loads(shipped) == spec
    assert charts.cd_figure_from_spec(json.loads(shipped)) == charts.cd_figure(
        methods=methods, cd=0.9, conservative_cd=2.1
    )
    assert len(shipped) < 0.25 * len(charts.to_json(charts.cd_figure(methods=methods, cd=0.9, conservative_cd=2.1)))
    assert [m[0] for m in spec["m"]] == [m[0] for m in methods] and spec["g"] == [
        list(run) for run in charts.cliques([r for _, r, _ in methods], 0.9)
    ]
    assert "<" not in charts.cd_spec_json(
        charts.cd_spec(methods=[("</script>", 1.0, charts.style_for(0))], cd=None, conservative_cd=None)
    )
