"""Why a cell is empty, and which runs did not happen: reasons, verdict p-values, grouped skips, data warnings."""

from __future__ import annotations

import html
import re

import pytest

from benchmarks.render import render_site
from tests._shared import leaderboard_panel
from tests.test_render_site import _fixture, _write

LEADERBOARD = "benchmarks/small/synthetic_marketplace/rolling_origin/series/leaderboard-all.md"  # its mase panel
DM_REASON = "<b>only 1 block</b> & the t reference needs 2"
VERDICT_REASON = "no CRPS of one kind for both <models>"
FRIEDMAN_REASON = "fewer than 2 complete blocks <none>"
CONSERVATIVE_REASON = "one origin per series leaves 1 block & no df"


def _board(data: dict) -> dict:
    return next(
        lb
        for lb in data["leaderboards"]
        if (lb["dataset"], lb["unit"], lb["demand_class"], lb["metric"])
        == ("synthetic_marketplace", "series", "all", "mase")
    )


def _row(board: dict, model: str) -> dict:
    return next(r for r in board["rows"] if r["model"] == model)


def _with_reasons() -> dict:
    """The fixture with the schema's optional reason and verdict p-value fields filled in as the harness would."""
    data = _fixture()
    board = _board(data)
    _row(board, "snaive_momentum")["dm_reason"] = "is the production baseline"
    ses = _row(board, "ses")
    ses.update(dm_stat=None, dm_p=None, dm_p_bh=None, dm_direction=None, dm_reason=DM_REASON)
    _row(board, "naive")["verdict_reason"] = "is the random walk"
    ets = _row(board, "auto_ets")
    ets.update(verdict_vs_rw=None, verdict_reason=VERDICT_REASON, verdict_p_se=None, verdict_p_crps=0.5)
    _row(board, "seasonal_naive").update(verdict_p_se=0.003, verdict_p_crps=0.21, verdict_reason=None, dm_reason=None)
    _row(board, "croston_sba").update(verdict_p_se=0.0004, verdict_p_crps=0.0456)
    board["tests"].update(
        friedman_statistic=None,
        friedman_p=None,
        nemenyi_cd=None,
        friedman_reason=FRIEDMAN_REASON,
        conservative_cd=None,
        conservative_cd_reason=CONSERVATIVE_REASON,
    )
    return data


@pytest.fixture(scope="module")
def reasons_page(tmp_path_factory) -> str:
    tmp = tmp_path_factory.mktemp("reasons")
    _write(tmp / "results", _with_reasons())
    render_site(results_dir=tmp / "results", out=tmp / "docs")
    return leaderboard_panel(tmp / "docs" / LEADERBOARD, "mase")


def _cell_row(page: str, model: str) -> str:
    match = re.search(rf'<tr(?: class="[^"]*")? data-model="{model}">(.*?)</tr>', page, flags=re.S)
    assert match, f"no row for {model}"
    return match.group(1)


def test_a_null_dm_p_shows_a_dash_with_its_escaped_reason_as_tooltip_and_footnote(reasons_page):
    escaped = html.escape(DM_REASON, quote=True)
    row = _cell_row(reasons_page, "ses")
    assert f'<span class="tyc-na" title="{escaped}">&ndash;</span>' in row
    number = re.search(r'href="#lb-note-(\d+)"', row).group(1)
    note = re.search(rf'<li id="lb-note-{number}" value="{number}">(.*?)</li>', reasons_page).group(1)
    assert note == f"No DM p against the production baseline for Simple exponential smoothing: {escaped}"
    assert DM_REASON not in reasons_page  # never raw HTML


def test_a_null_verdict_shows_its_reason_and_the_baseline_and_random_walk_get_their_own_notes(reasons_page):
    escaped = html.escape(VERDICT_REASON, quote=True)
    row = _cell_row(reasons_page, "auto_ets")
    assert f'<span class="tyc-verdict tyc-na" title="{escaped}">&ndash;</span>' in row
    notes = re.findall(r'<li id="lb-note-\d+" value="\d+">(.*?)</li>', reasons_page)
    assert f"No verdict against the random walk for AutoETS: {escaped}" in notes
    assert "No verdict against the random walk for Naive (random walk): is the random walk" in notes
    assert (
        "No DM p against the production baseline for Seasonal naive + momentum (production): is the production baseline"
        in notes
    )
    assert len(notes) == 4 and VERDICT_REASON not in reasons_page


def test_the_verdict_shows_both_one_sided_p_values_behind_it(reasons_page):
    row = _cell_row(reasons_page, "seasonal_naive")
    assert "tyc-beats" in row
    assert "p<sub>SE</sub>=0.003, p<sub>CRPS</sub>=0.21" in row
    assert "p<sub>SE</sub>=&ndash;" not in row and "p<sub>SE</sub>=\u2013, p<sub>CRPS</sub>=0.5" in _cell_row(
        reasons_page, "auto_ets"
    )
    assert "p<sub>SE</sub>" not in _cell_row(reasons_page, "imapa")  # the fixture records no p-values for it
    assert "p<sub>SE</sub>&lt;0.001, p<sub>CRPS</sub>=0.046" in _cell_row(reasons_page, "croston_sba")


def test_null_friedman_and_conservative_cd_show_their_escaped_reasons_in_the_tests_table(reasons_page):
    tests = reasons_page.split('<div class="tyc-tests">')[1].split("</div>")[0]
    friedman = f'<span class="tyc-reason">(not computed: {html.escape(FRIEDMAN_REASON, quote=True)})</span>'
    assert tests.count(friedman) == 2  # the Friedman row and the Nemenyi CD row
    assert f'<span class="tyc-reason">(not computed: {html.escape(CONSERVATIVE_REASON, quote=True)})</span>' in tests
    assert FRIEDMAN_REASON not in reasons_page and CONSERVATIVE_REASON not in reasons_page


def test_without_the_optional_fields_the_leaderboard_has_no_notes_and_no_p_value_line(tmp_path):
    _write(tmp_path / "results", _fixture())
    render_site(results_dir=tmp_path / "results", out=tmp_path / "docs")
    page = leaderboard_panel(tmp_path / "docs" / LEADERBOARD, "mase")
    assert "lb-note-" not in page and "tyc-pp" not in page and "tyc-reason" not in page


@pytest.fixture(scope="module")
def many_skips(tmp_path_factory):
    """Three unavailable models skipped on every (dataset, protocol), with the harness's one warning per run."""
    data = _fixture()
    where = [
        ("synthetic_marketplace", "rolling_origin"),
        ("m3_monthly", "rolling_origin"),
        ("m3_monthly", "competition"),
    ]
    for m in data["models"]:
        if m["id"] in ("chronos_bolt", "auto_arima"):
            reason = f"package for {m['id']} <is> not installed"
            m["runs"] = [
                {
                    "dataset": d,
                    "protocol": p,
                    "status": "skipped",
                    "reason": reason,
                    "traceback": None,
                    "support": 0,
                    "timings": {},
                }
                for d, p in where
            ]
            data["warnings"].extend(
                {"dataset": d, "kind": "model", "message": f"{m['id']} skipped on {d} ({p}): {reason}"}
                for d, p in where
            )
    for table in data["leaderboards"] + data["intervals"]:
        table["rows"] = [r for r in table["rows"] if r["model"] not in ("chronos_bolt", "auto_arima")]
    for table in data["competition"]:
        table["rows"] = [r for r in table["rows"] if r["model"] not in ("chronos_bolt", "auto_arima")]
    tmp = tmp_path_factory.mktemp("skips")
    _write(tmp / "results", data)
    render_site(results_dir=tmp / "results", out=tmp / "docs")
    return tmp / "docs"


def test_home_lists_each_skipped_model_once_with_its_datasets_grouped_by_protocol(many_skips):
    home = (many_skips / "index.md").read_text(encoding="utf-8")
    notran = home.split('<ul class="tyc-notran">')[1].split("</ul>")[0]
    items = re.findall(r"<li [^>]*>(.*?)</li>", notran)
    assert len(items) == 2
    chronos = next(i for i in items if "Chronos-Bolt" in i)
    assert chronos.endswith(
        "&mdash; skipped on synthetic_marketplace (rolling origin); m3_monthly (rolling origin, "
        "competition): package for Chronos-Bolt &lt;is&gt; not installed"
    )


def test_the_data_warnings_box_holds_data_facts_only_never_model_runs(many_skips):
    # a leaderboard links its dataset page for the warnings instead of repeating them on every table
    for page in (
        "index.md",
        "benchmarks/small/index.md",
        "benchmarks/small/m3_monthly/index.md",
        "benchmarks/small/synthetic_marketplace/index.md",
    ):
        text = (many_skips / page).read_text(encoding="utf-8")
        box = text.split('<div class="admonition warning tyc-warnings">')[1].split("</div>")[0]
        kinds = re.findall(r"<li><strong>([^<]+)</strong>", box)
        assert kinds and "model" not in kinds, page
        assert "not installed" not in box and "needs the" not in box, page
    home = (many_skips / "index.md").read_text(encoding="utf-8")
    box = home.split('<div class="admonition warning tyc-warnings">')[1].split("</div>")[0]
    assert (
        "<strong>synthetic</strong> (synthetic_marketplace)" in box and "<strong>subsample</strong> (m3_monthly)" in box
    )


def test_dataset_and_benchmark_pages_list_the_skips_that_concern_them(many_skips):
    dataset = (many_skips / "benchmarks/small/synthetic_marketplace/index.md").read_text(encoding="utf-8")
    assert "&mdash; skipped on synthetic_marketplace (rolling origin): package for Chronos-Bolt" in dataset
    assert "m3_monthly (rolling origin" not in dataset
    bench = (many_skips / "benchmarks/small/index.md").read_text(encoding="utf-8")
    assert (
        bench.count(
            "&mdash; skipped on synthetic_marketplace (rolling origin); m3_monthly (rolling origin, competition)"
        )
        == 2
    )


def test_an_interval_column_empty_for_every_model_is_named_and_a_missing_ranking_comparison_says_so(tmp_path):
    data = _fixture()
    table = data["intervals"][0]
    for row in table["rows"]:
        row.update(coverage95=None, msis95=None)
    for key in ("point_vs_interval_spearman", "point_vs_interval_p", "max_move"):
        table.pop(key, None)
    _write(tmp_path / "results", data)
    render_site(results_dir=tmp_path / "results", out=tmp_path / "docs")
    page = (tmp_path / "docs" / "benchmarks" / "small" / table["dataset"] / "intervals.md").read_text(encoding="utf-8")
    notes = re.findall(
        r"<span class=\"tyc-reason\">Empty for every model in this table \(the results file records "
        r"none\): ([^<]+)\.</span>",
        page,
    )
    assert notes == ["coverage 95%, MSIS 95%"]  # only the emptied table, only its emptied columns
    assert page.count("Point vs interval ranking: not recorded in this results file.") == 1
    assert "No model has a 95% band in any demand class here" not in page  # the other classes still have one
    for other in data["intervals"][1:]:
        for row in other["rows"]:
            row.update(coverage95=None, msis95=None)
    _write(tmp_path / "results", data)
    render_site(results_dir=tmp_path / "results", out=tmp_path / "docs")
    page = (tmp_path / "docs" / "benchmarks" / "small" / table["dataset"] / "intervals.md").read_text(encoding="utf-8")
    assert "No model has a 95% band in any demand class here" in page
