"""The pages a reader starts from: the home page's answer, the glossary, the submit page, model pages."""

from __future__ import annotations

import re

from benchmarks.render import render_site
from benchmarks.render.fmt import duration
from tests.test_render_site import _fixture, _write


def _render(tmp_path, data):
    _write(tmp_path / "results", data)
    out = tmp_path / "docs"
    render_site(results_dir=tmp_path / "results", out=out)
    return out


def _answer(home: str) -> list[list[str]]:
    table = home.split('<table class="tyc-table tyc-answer')[1].split("</table>")[0]
    rows = re.findall(r"<tr>\s*(.*?)</tr>", table.split("<tbody>")[1], re.S)
    return [[re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)] for r in rows]


def test_home_answers_first_from_the_headline_tables_that_reach_the_minimum_cell(tmp_path):
    data = _fixture()
    # every class's headline is RMSSE where the benchmark ranks it (tycheon.analysis.headline)
    headline = [lb for lb in data["leaderboards"] if (lb["unit"], lb["metric"]) == ("series", "rmsse")]
    small = next(lb for lb in headline if lb["demand_class"] != "all")
    small["tests"].update(
        cell_ok=False,
        cell_count=4,
        cell_counts="scored blocks",
        min_cell=30,
        cell_reason="4 scored blocks, fewer than the minimum cell of 30",
    )
    out = _render(tmp_path, data)
    home = (out / "index.md").read_text(encoding="utf-8")
    assert home.index("tyc-answer") < home.index("Data warnings")
    # the tables behind the answer are the benchmark page's (issue 37)
    bench = (out / "benchmarks" / "small" / "index.md").read_text(encoding="utf-8")
    assert "Where the baselines win" in bench and "Where the baselines win" not in home
    rows = _answer(home)
    assert [r[1] for r in rows] == [lb["demand_class"] for lb in headline if lb is not small]
    all_board = next(lb for lb in headline if lb["demand_class"] == "all")
    best = min(all_board["rows"], key=lambda r: r["rank"])
    assert rows[0][2].startswith(best["display_name"])
    beats = sum(r["verdict_vs_rw"] == "beats" and not r["is_random_walk"] for r in all_board["rows"])
    assert rows[0][-1].startswith("yes" if beats else "no")
    assert "4 scored blocks, fewer than the minimum cell of 30" in home.split("Details of")[0]


def test_glossary_reads_the_results_metric_glossary_when_the_file_carries_one(tmp_path):
    data = _fixture()
    data["metric_glossary"] = [
        {
            "name": "mase",
            "display_name": "MASE",
            "kind": "point",
            "lower_is_better": True,
            "ranked": True,
            "scale_column": "scale_mae",
            "definition": "a definition only the results file has",
        }
    ]
    glossary = (_render(tmp_path, data) / "glossary.md").read_text(encoding="utf-8")
    assert "a definition only the results file has" in glossary
    assert 'id="metric-mase"' in glossary and "the benchmark run copied this table from it (small " in glossary
    for anchor in ("demand-classes", "random-walk", "production-baseline", "verdict", "cell-rule", "units"):
        assert f'id="{anchor}"' in glossary or f"#{anchor} " in glossary, anchor
    assert "ADI &lt; 1.32 and CV² &lt; 0.49" in glossary


def test_glossary_falls_back_to_the_registry_source_for_older_results(tmp_path):
    glossary = (_render(tmp_path, _fixture()) / "glossary.md").read_text(encoding="utf-8")
    assert "this table is read from the library&#39;s source, as no results file records it" in glossary
    assert "1.0 = as good as the in-sample seasonal naive" in glossary


def test_submit_page_is_markdown_with_every_field_described(tmp_path):
    submit = (_render(tmp_path, _fixture()) / "submit.md").read_text(encoding="utf-8")
    assert "(no description in the schema)" not in submit
    assert '<pre class="tyc-contributing">' not in submit
    example = submit.split("```toml\n")[1].split("```")[0]
    assert 'kind = "' in example and "&#34;" not in example  # the model file verbatim, not escaped
    assert "\n### 1. Write `benchmarks/models/<id>.toml`" in submit  # its headings, one level down
    for field in (
        "id",
        "display_name",
        "family",
        "source",
        "source.forecaster",
        "source.estimator",
        "params",
        "licence",
        "contributor",
    ):
        assert f"<code>{field}</code></td>" in submit, field


def test_model_pages_are_titled_by_display_name_with_the_method_description(tmp_path):
    data = _fixture()
    out = _render(tmp_path, data)
    croston = next(m for m in data["models"] if m["id"] == "croston_sba")
    page = (out / "models" / "croston_sba.md").read_text(encoding="utf-8")
    assert page.splitlines()[4] == f"# {croston['display_name']}"
    assert "Syntetos-Boylan approximation" in page


def test_durations_read_in_ms_under_a_second():
    assert duration(0.0004) == "0.4 ms" and duration(0.25) == "250 ms" and duration(3.5) == "3.50 s"
    assert duration(None) == "\u2013"


def test_unit_pages_have_readable_paths(tmp_path):
    out = _render(tmp_path, _fixture())
    assert not [p for p in out.rglob("*.md") if re.search(r"-[0-9a-f]{8}(\.md|/)", str(p.relative_to(out)) + "/")]


def test_the_commit_is_linked_only_to_a_repository_url_the_project_metadata_gives(tmp_path):
    from benchmarks.render.site import ROOT, repository_url

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    assert repository_url(tmp_path) is None
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[project.urls]\nRepository = "https://example.org/x/"\n', encoding="utf-8"
    )
    assert repository_url(tmp_path) == "https://example.org/x"
    (tmp_path / "pyproject.toml").write_text('[project.urls]\nRepository = "javascript:alert(1)"\n', encoding="utf-8")
    assert repository_url(tmp_path) is None

    out = _render(tmp_path / "site", _fixture())
    board = next(p for p in sorted(out.rglob("*.md")) if "Git commit" in p.read_text(encoding="utf-8"))
    row = next(line for line in board.read_text(encoding="utf-8").splitlines() if "<th>Git commit</th>" in line)
    if repository_url(ROOT) is None:  # this checkout names no repository: the commit is printed, not linked
        assert "<code>" in row and "/commit/" not in row
    else:
        assert f'href="{repository_url(ROOT)}/commit/' in row
