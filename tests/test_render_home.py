"""The home page answers in one compact row per dataset and demand class; the tables behind the answer (where
the baselines win, every unit's winners, the service level and the stock) are on the benchmark page (issue 37).

Read over the committed results rendered (``committed_docs``); every expected value comes from the newest
results file of each benchmark."""

from __future__ import annotations

import html
import re
from functools import cache

from benchmarks.render.fmt import pct, pvalue, slugify
from benchmarks.results_io import RESULTS_DIR, existing_versions, read_results
from tycheon.analysis.headline import headline_metrics


@cache
def _newest():
    out = []
    for folder in sorted(p for p in RESULTS_DIR.iterdir() if p.is_dir() and any(p.glob("v*.json"))):
        out.append((folder.name, read_results(list(existing_versions(folder))[-1])))
    return out


def _text(cell: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", cell)).strip()


def _table(page: str, table_id: str) -> str:
    return page.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]


def _rows(table: str) -> list[list[str]]:
    body = table.split("<tbody>", 1)[1]
    return [re.findall(r"<td[^>]*>(.*?)</td>", r, re.S) for r in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)]


def _ranked(doc) -> list[str]:
    return list(dict.fromkeys(lb.metric for lb in doc.leaderboards))


def test_home_carries_no_baseline_sentences_and_no_table_of_every_units_winners(committed_docs):
    home = (committed_docs.docs / "index.md").read_text(encoding="utf-8")
    assert _newest()
    for name, _ in _newest():
        assert f'id="answer-{slugify(name)}"' in home
    assert "Where the baselines win" not in home and "beat the random walk, <strong>" not in home
    assert 'id="winners-' not in home and "tyc-sortable" not in home
    # every row of the home page is an answer row or an answer table's header row
    answer_rows = sum(len(_rows(_table(home, f"answer-{slugify(n)}"))) for n, _ in _newest())
    assert home.count("<tr") == answer_rows + len(_newest())


def test_the_benchmark_page_lists_where_the_baselines_win_and_every_headline_tables_winner(committed_docs):
    for name, doc in _newest():
        page = (committed_docs.docs / "benchmarks" / name / "index.md").read_text(encoding="utf-8")
        ranked = _ranked(doc)
        pooled = headline_metrics("all", ranked)[0]
        expected = [
            lb for lb in doc.leaderboards if lb.demand_class == "all" and lb.metric == pooled and lb.tests.cell_ok
        ]
        rows = _rows(_table(page, f"baselines-{slugify(name)}"))
        assert len(rows) == len(expected) > 0
        for row in rows:
            lb = next(t for t in expected if (t.dataset, t.unit) == (_text(row[0]), _text(row[1])))
            verdicts = [r.verdict_vs_rw for r in lb.rows if not r.is_random_walk]
            counts = [verdicts.count(v) for v in ("beats", "indistinguishable", "worse", None)]
            assert [_text(c) for c in row[2:7]] == [str(len(verdicts)), *map(str, counts)]
        headline = [lb for lb in doc.leaderboards if lb.metric in headline_metrics(lb.demand_class, ranked)[:2]]
        assert len(_rows(_table(page, f"winners-{slugify(name)}"))) == len(headline)


def test_each_home_answer_row_shows_the_results_winner_skill_tie_and_verdict(committed_docs):
    home = (committed_docs.docs / "index.md").read_text(encoding="utf-8")
    read = 0
    for name, doc in _newest():
        for row in _rows(_table(home, f"answer-{slugify(name)}")):
            assert len(row) == 6
            link = re.search(
                r'href="[^"]*/(?P<unit>[^/"]+)/leaderboard-(?P<dc>[a-z]+)\.html#(?P<metric>[a-z0-9_]+)"', row[1]
            )
            lb = next(
                t
                for t in doc.leaderboards
                if (t.dataset, slugify(t.unit), t.demand_class, t.metric)
                == (_text(row[0]), link["unit"], link["dc"], link["metric"])
            )
            best = min(r.rank for r in lb.rows)
            winners = [r for r in lb.rows if r.rank == best]
            for w in winners:
                assert html.escape(w.display_name, quote=False) in row[2]
            if winners[0].skill_rw is not None:
                assert _text(row[3]).startswith(pct(winners[0].skill_rw))
                if winners[0].skill_rw_low is not None:
                    assert f"[{pct(winners[0].skill_rw_low)}, {pct(winners[0].skill_rw_high)}]" in _text(row[3])
            if len(winners) == 1 and lb.tests.runner_up_tied:
                assert f"DM p {pvalue(lb.tests.runner_up_p)}" in _text(row[4])
            elif len(winners) == 1 and lb.tests.runner_up_tied is False:
                assert _text(row[4]).startswith("none") and "told apart" in row[4]
            judged = [r for r in lb.rows if r.verdict_vs_rw is not None and not r.is_random_walk]
            beats = [r for r in judged if r.verdict_vs_rw == "beats"]
            verdict = _text(row[5])
            if beats:
                assert verdict.startswith(f"yes: {len(beats)} of {len(judged)}")
            elif judged:
                assert verdict == f"no: none of {len(judged)} is significantly better"
            else:
                assert verdict == "no verdict"
            read += 1
    assert read > 10


def test_every_answer_cell_names_its_column_for_the_phone_layout(committed_docs):
    home = (committed_docs.docs / "index.md").read_text(encoding="utf-8")
    for name, _ in _newest():
        table = _table(home, f"answer-{slugify(name)}")
        cells = re.findall(r"<td([^>]*)>", table.split("<tbody>", 1)[1])
        assert cells and all('data-label="' in c for c in cells)


def test_every_table_of_the_home_and_benchmark_templates_has_a_caption(committed_docs):
    """The provenance table (``tyc-kv``, a shared macro of ``_macros.html.j2``) is not these templates' own."""
    pages = [committed_docs.docs / "index.md"] + [
        committed_docs.docs / "benchmarks" / name / "index.md" for name, _ in _newest()
    ]
    for path in pages:
        text = path.read_text(encoding="utf-8")
        tables = re.findall(r"<table(?![^>]*tyc-kv)[^>]*>\s*(<[a-z]+)", text)
        assert tables and all(first == "<caption" for first in tables), path


def test_screenshots_cover_home_a_leaderboard_a_model_page_and_the_glossary(tmp_path):
    from benchmarks.render.screenshots import pages

    for path in (
        "index.html",
        "glossary.html",
        "benchmarks/b/d/p/u/leaderboard-all.html",
        "benchmarks/b/d/p/u/index.html",
        "benchmarks/b/d/p/u/all-mase.html",  # the redirect from a leaderboard's old address
        "models/zeta.html",
        "models/alpha.html",
    ):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("<html></html>", encoding="utf-8")
    assert pages(tmp_path) == [
        ("home", "index.html"),
        ("leaderboard", "benchmarks/b/d/p/u/leaderboard-all.html"),
        ("model", "models/alpha.html"),
        ("glossary", "glossary.html"),
    ]
