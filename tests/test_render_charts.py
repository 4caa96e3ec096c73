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
