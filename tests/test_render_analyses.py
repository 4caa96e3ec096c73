"""The replay and sensitivity pages: rendered from a results file's typed sections, with their charts, and
linked from every leaderboard page of the dataset ("how stable is this order")."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchmarks.render import render_site
from benchmarks.results_io import to_json_value
from benchmarks.results_model import parse_document
from tests.test_analysis_replay import _table as replay_table
from tests.test_analysis_sensitivity import _table as sens_table
from tests.test_render_site import _fixture, _write
from tycheon.analysis.replay import ReplaySpec, replay, replay_tables
from tycheon.analysis.sensitivity import (
    run_losses,
    sensitivity_record,
    sensitivity_report,
)

RUNS = (
    "rolling",
    "static",
    "static_boundary-3",
    "static_boundary-1",
    "static_boundary+1",
    "static_boundary+3",
    "rolling_embargo1",
    "rolling_refit-2",
)


def _sections() -> tuple[list[dict], list[dict]]:
    rng = np.random.default_rng(0)
    y = 10 + rng.normal(size=(6, 6, 3))
    pts = {
        "snaive_momentum": y + 1.0,
        "naive": y + rng.normal(scale=0.3, size=y.shape),
        "ses": y + rng.normal(scale=0.5, size=y.shape),
    }
    res = replay(replay_table(pts, y), spec=ReplaySpec(baseline="snaive_momentum", bias_threshold=10.0))
    replay_secs = [
        to_json_value({"dataset": "synthetic_marketplace", "protocol": "rolling_origin", **t})
        for t in replay_tables(res)
    ]
    runs = {}
    for name in RUNS:
        noisy = {
            m: y + rng.normal(scale=sd, size=y.shape)
            for m, sd in (("naive", 0.5), ("ses", 0.55), ("snaive_momentum", 0.9))
        }
        runs[name] = run_losses(sens_table(noisy, y), label=name)
    rec = sensitivity_record(
        sensitivity_report(runs, seed=0, n_resamples=50),
        runs={n: n for n in RUNS},
        fitted={"naive": False, "ses": False, "snaive_momentum": False},
    )
    sens = [to_json_value({"dataset": "synthetic_marketplace", "protocol": "rolling_origin", "unit": "series", **rec})]
    return replay_secs, sens


def _figure(page: str) -> dict:
    """The first chart's figure: the JSON block the chart macro writes beside its element."""
    return json.loads(page.split('<script type="application/json"')[1].split(">", 1)[1].split("</script>")[0])


def test_replay_and_sensitivity_pages_render_with_charts_and_are_linked_from_leaderboards(tmp_path):
    data = _fixture()
    data["replay"], data["sensitivity"] = _sections()
    parse_document(data)  # the sections validate against the typed model
    results = tmp_path / "results"
    _write(results, data)
    out = tmp_path / "site"
    render_site(results_dir=results, out=out)
    docs = out / "docs" if (out / "docs").exists() else out
    replay_page = next(docs.rglob("selection-rule.md"))
    sens_page = next(docs.rglob("sensitivity.md"))
    text = replay_page.read_text()
    assert "data-figure" in text and "Gap closed" in text and "Seasonal naive + momentum (production)" in text
    stable = sens_page.read_text()
    assert "data-figure" in stable and "how stable is this order" in stable.lower()
    assert "Every model of this roster is refit-free" in stable  # fitted_state says none learns
    figure = _figure(stable)
    assert figure["layout"]["yaxis"]["autorange"] == "reversed"  # rank 1 at the top
    assert len(figure["data"]) == 3 and all(len(t["y"]) == len(RUNS) for t in figure["data"])
    bars = _figure(text)
    assert [t["type"] for t in bars["data"]] == ["bar"] * 3
    boards = [
        p
        for p in docs.rglob("*.md")
        if "/synthetic_marketplace/rolling_origin/" in p.as_posix() and p.name != "index.md"
    ]
    assert boards and all('../../sensitivity.html">How stable is this order?' in p.read_text() for p in boards)
    others = [p for p in docs.rglob("*.md") if "/m3_monthly/rolling_origin/" in p.as_posix() and p.name != "index.md"]
    assert others and all("No protocol-sensitivity audit was run" in p.read_text() for p in others)


def _figure_by_id(page: str, chart_id: str) -> dict:
    return json.loads(page.split(f'<script type="application/json" id="{chart_id}-data">')[1].split("</script>")[0])


@pytest.mark.parametrize("recorded", [True, False], ids=["with-steps-and-aggregation", "before-issue-36"])
def test_the_sensitivity_page_shows_the_steps_and_the_aggregation_curves_where_recorded(tmp_path, recorded):
    data = _fixture()
    data["replay"], data["sensitivity"] = _sections()
    sens = data["sensitivity"][0]
    if not recorded:  # a version written before issue 36 has neither section
        del sens["by_horizon"], sens["aggregation"]
    parse_document(data)
    results = tmp_path / "results"
    _write(results, data)
    out = tmp_path / "site"
    render_site(results_dir=results, out=out)
    docs = out / "docs" if (out / "docs").exists() else out
    page = next(docs.rglob("sensitivity.md")).read_text()
    lead = page.split("<p><strong>What moved.</strong>")[1].split("</p>")[0]
    between = next(c for c in sens["comparisons"] if c["kind"] == "between")
    assert f"mean PSS of {between['pss_mean']:.3f} [{between['pss_ci_low']:.3f}, {between['pss_ci_high']:.3f}]" in lead
    moved = [r for r in sens["ranks"] if r["rank_max"] > r["rank_min"]]
    if moved:
        assert f"{len(moved)} of {sens['n_models']} models change rank in some run" in lead
    else:
        assert "every model keeps its rank in every run" in lead
    if not recorded:
        assert "How the displacement varies with the step" not in page and 'id="aggregation"' not in page
        return
    steps = _figure_by_id(page, "horizon-pss")  # band upper edge, lower edge, line; then the references' line
    assert [len(t["y"]) for t in steps["data"]] == [sens["horizon"]] * 4
    assert steps["data"][2]["y"] == [round(s["pss_mean"], 4) for s in sens["by_horizon"]]
    assert steps["data"][0]["y"] == [round(s["pss_ci_high"], 4) for s in sens["by_horizon"]]
    assert steps["data"][1]["fill"] == "tonexty"
    table = page.split('id="by-step"')[1].split("</table>")[0]
    assert table.count("<tr><td>") == sens["horizon"]
    curves = _figure_by_id(page, "aggregation-curves")
    n_arm = {arm: sum(a["curve"] == arm for a in sens["aggregation"]) for arm in ("static_arm", "rolling_arm")}
    assert [len(t["x"]) for t in curves["data"]] == [n_arm["static_arm"]] * 3 + [n_arm["rolling_arm"]] * 3
    assert page.split('id="aggregation"')[1].split("</table>")[0].count("<tr><td>") == len(sens["aggregation"])
