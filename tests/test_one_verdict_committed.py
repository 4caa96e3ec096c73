"""Over the committed results: one verdict per (dataset, unit, demand class, model), on every page that
shows it, and nothing named below the minimum cell (issue 34).

Read from the newest version of each benchmark computed by the current statistics version (older ones are
history, verified by hash: tests/test_history.py)."""

from __future__ import annotations

import re
from collections import defaultdict
from functools import cache

import pytest

from benchmarks.history import statistics_version_of
from benchmarks.render.fmt import slugify
from benchmarks.results_io import RESULTS_DIR, existing_versions, read_results
from tycheon._version import STATISTICS_VERSION


@cache
def _current():
    out = []
    for folder in sorted(p for p in RESULTS_DIR.iterdir() if p.is_dir()):
        newest = list(existing_versions(folder))[-1]
        doc = read_results(newest)
        if statistics_version_of(doc) == STATISTICS_VERSION:
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
def test_the_model_pages_and_the_home_page_show_that_one_verdict(committed_docs):
    out = committed_docs.docs
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
    # the home page's "beats the random walk?" column, read from the page, equals what the cell's tables of
    # the *other* metric give (the home page ranks on the first metric)
    home = (out / "index.md").read_text(encoding="utf-8")
    answer = re.compile(  # the class cell, any other cells, then the verdict in the row's last cell
        r"<tr>\n<td[^>]*>(?P<dataset>[^<]*)</td>\n"
        r"<td[^>]*><a href=\"[^\"]*/(?P<unit>[^/\"]+)/[^/\"]+\.html(?:#[^\"]*)?\">(?P<dc>[^<]*)</a>[^\n]*</td>"
        r"(?:\n<td[^>]*>[^\n]*</td>)*?\n"
        r"<td[^>]*>(?P<verdict>[^\n]*)</td>\n</tr>"
    )
    read = 0
    for name, _, doc in _current():
        section = home.split(f'id="answer-{name}"', 1)[1].split("</table>", 1)[0]
        other = doc.config["metrics"][1]
        for m in answer.finditer(section):
            lb = next(
                t
                for t in doc.leaderboards
                if (t.dataset, slugify(t.unit), t.demand_class, t.metric) == (m["dataset"], m["unit"], m["dc"], other)
            )
            rows = [r for r in lb.rows if not r.is_random_walk]
            beats = sum(r.verdict_vs_rw == "beats" for r in rows)
            judged = sum(r.verdict_vs_rw is not None for r in rows)
            if beats:
                assert m["verdict"].startswith(f"<strong>yes</strong>: {beats} of {judged}"), m.group(0)
            elif judged:
                assert f"none of {judged} is significantly better" in m["verdict"], m.group(0)
            else:
                assert m["verdict"] == "no verdict", m.group(0)
            read += 1
    assert read > 5
