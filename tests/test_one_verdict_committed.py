"""Over the committed results: one verdict per (dataset, unit, demand class, model), on every page that
shows it, and nothing named below the minimum cell (issue 34).

Read from the newest version of each benchmark computed by the current statistics version (older ones are
history, verified by hash: tests/test_history.py)."""

from __future__ import annotations

import re
from collections import defaultdict
from functools import cache

import pytest

from benchmarks.render.site import render_site
from benchmarks.results_io import RESULTS_DIR, read_results
from tycheon._version import STATISTICS_VERSION


@cache
def _current():
    out = []
    for folder in sorted(p for p in RESULTS_DIR.iterdir() if p.is_dir()):
        newest = max(folder.glob("v*.json"))
        doc = read_results(newest)
        if (doc.provenance.statistics_version or 1) == STATISTICS_VERSION:
            out.append((folder.name, newest.stem, doc))
    return out


def test_a_benchmark_is_computed_by_the_current_statistics():
    assert {name for name, _, _ in _current()} >= {"small", "full"}


def _cells(doc):
    cells = defaultdict(list)
    for lb in doc.leaderboards:
        cells[(lb.dataset, lb.protocol, lb.unit, lb.demand_class)].append(lb)
    return cells


def test_each_models_verdict_is_one_on_every_metric_table_of_its_cell():
    checked = 0
    for _, _, doc in _current():
        for tables in _cells(doc).values():
            by_model = defaultdict(set)
            for lb in tables:
                for r in lb.rows:
                    by_model[r.model].add((r.verdict_vs_rw, r.verdict_p_se_adj, r.verdict_p_crps_adj))
            for model, seen in by_model.items():
                assert len(seen) == 1, f"{model}: {seen} in {tables[0].dataset} {tables[0].unit}"
                checked += 1
    assert checked > 100


def test_nothing_is_named_below_the_minimum_cell():
    named = 0
    for _, _, doc in _current():
        for lb in doc.leaderboards:
            t = lb.tests
            if t.cell_ok is False:
                assert lb.winner is None and t.cell_count < t.min_cell
                assert all(r.dm_p is None and r.dm_direction is None for r in lb.rows)
            if t.verdict_cell_count is not None and t.verdict_cell_count < t.min_cell:
                assert all(r.verdict_vs_rw is None for r in lb.rows)
            if t.time_reason is not None:
                assert all(r.verdict_vs_rw is None and r.dm_p is None for r in lb.rows)
            named += lb.winner is not None
        for it in doc.intervals:
            if it.cell_ok is False:
                assert all(r.rank_point is None and r.rank_interval is None for r in it.rows)
        for cw in doc.analyses.class_winners:
            for row in cw.rows:
                if row.cell_ok is False:
                    assert not row.top
    assert named > 0


@pytest.mark.slow
def test_the_model_pages_and_the_home_page_show_that_one_verdict(tmp_path):
    out = tmp_path / "docs"
    render_site(results_dir=RESULTS_DIR, out=out)
    row = re.compile(
        r"<tr><td>(?P<name>[^<]*)</td><td>(?P<dataset>[^<]*)</td><td>(?P<unit>[^<]*)</td><td>(?P<dc>[^<]*)</td>"
        r"<td><a [^>]*>(?P<metric>[^<]*)</a></td>.*?<td>(?P<verdict>(?:(?!</td>).)*)</td></tr>"
    )
    pages = 0
    for page in (out / "models").glob("*.md"):
        seen = defaultdict(set)
        for m in row.finditer(page.read_text(encoding="utf-8")):
            seen[(m["name"], m["dataset"], m["unit"], m["dc"])].add(m["verdict"])
        for key, verdicts in seen.items():
            assert len(verdicts) == 1, f"{page.name} {key}: {verdicts}"
        pages += bool(seen)
    assert pages > 5
    # the home page's "beats the random walk" counts are those of every metric table of the cell alike
    for _, _, doc in _current():
        for tables in _cells(doc).values():
            counts = {tuple(sorted(str(r.verdict_vs_rw) for r in lb.rows)) for lb in tables}
            assert len(counts) == 1
