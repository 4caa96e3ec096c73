"""The analyses sections of a results document: built by the pipeline from the run's score sets,
validated by the results model, deterministic, and refused in a config where they cannot apply."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.analyses import dial_unit_names
from benchmarks.config import ConfigError, load_benchmark_config
from benchmarks.render.site import render_site
from benchmarks.results_model import parse_document
from benchmarks.run import main as run_main
from benchmarks.validate import validate_results_file

pytestmark = pytest.mark.slow  # whole-harness runs: outside the fast subset

CONFIG = Path(__file__).parent / "fixtures" / "tiny_analyses.toml"


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("analyses")
    assert run_main(["--config", str(CONFIG), "--results-dir", str(tmp / "results"), "--no-cache"]) == 0
    return tmp / "results"


@pytest.fixture(scope="module")
def doc(results):
    path = results / "tinyanalyses" / "v0001.json"
    assert validate_results_file(path) == []
    return parse_document(json.loads(path.read_text()))


def test_the_robustness_and_across_pages_render_the_stored_values_with_the_dial_chart(results, doc, tmp_path):
    out = tmp_path / "docs"
    render_site(results_dir=results, out=out)
    page = (out / "benchmarks" / "tinyanalyses" / "synthetic_marketplace" / "robustness.md").read_text()
    for heading in (
        "Unit of analysis",
        "The aggregation dial",
        "The spikiness sweep",
        "Winner per demand class",
        "Uncertainty of every ranking",
        "Horizon robustness",
    ):
        assert heading in page, heading
    assert page.count('class="tyc-chart" id="dial-1"') == 1 and "groups k (log scale" in page
    cw = doc.analyses.class_winners[0]
    assert f"leads {cw.pooled_winner_leads} of {cw.n_classes} classes" in page
    across = (out / "benchmarks" / "tinyanalyses" / "across.md").read_text()
    assert "Win rate" in across and "Beats the random walk" in across
    index = (out / "benchmarks" / "tinyanalyses" / "synthetic_marketplace" / "index.md").read_text()
    assert 'href="robustness.html"' in index
    again = tmp_path / "again"
    render_site(results_dir=results, out=again)
    assert (again / "benchmarks" / "tinyanalyses" / "synthetic_marketplace" / "robustness.md").read_text() == page


def test_every_analysis_section_is_stored_for_the_synthetic_dataset(doc):
    a = doc.analyses
    (inv,) = a.inversion
    assert [c.unit for c in inv.columns] == ["total", "groups:5", "series"]
    assert inv.columns[-1].n_series <= 40 and inv.columns[0].n_series == 1
    (dial,) = a.dials
    size = next(c for c in dial.curves if c.kind == "size")
    assert [p.k for p in size.points] == [1, 5, 10, 40]
    assert {p.unit for p in size.points} == {"total", "groups:5", "groups:10", "series"}
    random = next(c for c in dial.curves if c.kind == "random")
    assert [p.k for p in random.points] == [1, 5, 10, 40]
    (cw,) = a.class_winners
    assert cw.unit == "series" and cw.metric == "rmsse" and cw.rows
    assert {(t.unit, t.metric) for t in a.uncertainty} == {
        (u, m) for u in ("series", "total", "groups:5") for m in ("mase", "rmsse")
    }
    classes = {t.demand_class for t in a.uncertainty if t.unit == "series"}
    assert "all" in classes and len(classes) > 1  # every leaderboard: the demand classes too
    series = next(t for t in a.uncertainty if t.unit == "series" and t.metric == "mase" and t.demand_class == "all")
    assert series.n_resamples == 2000 and {r.model for r in series.rows} == {
        "naive",
        "seasonal_naive",
        "snaive_momentum",
        "ses",
        "historic_mean",
    }
    (hz,) = a.horizon
    assert hz.steps == [1, 2, 3]
    (sweep,) = a.sweeps
    assert [p.spikiness for p in sweep.points] == [0.0, 1.0, 6.0]
    assert a.across is not None and a.across.datasets == ["synthetic_marketplace"]
    assert {m.model for m in a.across.models} >= {"ses", "snaive_momentum"}


def test_the_dial_units_skip_what_the_leaderboard_already_scores():
    assert dial_unit_names([1, 5, 25, 625], 400, leaderboard_units=["series", "total", "groups:5"]) == [
        "groups:25",
        "groups_random:5",
        "groups_random:25",
    ]
    assert dial_unit_names([1, 5], 400, leaderboard_units=["series"]) == ["groups:1", "groups:5", "groups_random:5"]


def test_a_sweep_on_a_dataset_without_a_spikiness_dial_is_refused(tmp_path):
    text = (
        CONFIG.read_text()
        .replace('name = "synthetic_marketplace"', 'name = "m3_monthly"')
        .replace("options = { n_entities = 40, n_periods = 40, seed = 3 }", "subsample = 10")
    )
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    with pytest.raises(ConfigError, match="sweep"):
        load_benchmark_config(bad)


def test_a_unit_a_model_failed_on_is_kept_in_its_run_record_and_warned_about():
    from benchmarks.pipeline import (
        DatasetPart,
        ProtocolRun,
        _model_warnings,
        _run_record,
    )

    status = {
        "status": "ran",
        "support": 10,
        "fit_seconds": 0.1,
        "predict_seconds": 0.2,
        "failed_units": {"groups:625": {"reason": "ValueError: boom", "traceback": "..."}},
    }
    record = _run_record("synthetic_marketplace", "rolling_origin", status)
    assert record.status == "ran" and record.failed_units == {"groups:625": "ValueError: boom"}
    part = DatasetPart(
        run=ProtocolRun("synthetic_marketplace", "rolling_origin", None, [], {"m": record}, {}), sidecar=None
    )  # type: ignore[arg-type]
    (warning,) = _model_warnings(["m"], [part])
    assert "failed on unit groups:625" in warning.message and "other units are scored" in warning.message
    clean = _run_record("d", "rolling_origin", {**status, "failed_units": {}})
    assert clean.failed_units == {} and "failed_units" not in clean.model_dump(exclude_unset=True)


def test_a_dial_and_sweep_with_their_own_models_run_only_those_and_say_so(tmp_path, capsys):
    own = ["naive", "snaive_momentum", "ses"]
    text = CONFIG.read_text().replace("sweep = [0.0, 1.0, 6.0]", f"sweep = [0.0, 1.0, 6.0]\nanalysis_models = {own}")
    cfg = tmp_path / "own.toml"
    cfg.write_text(text.replace("'", '"'))
    assert run_main(["--config", str(cfg), "--results-dir", str(tmp_path / "results"), "--no-cache"]) == 0
    extra = [
        ln for ln in capsys.readouterr().err.splitlines() if "(aggregation dial)" in ln or "(spikiness sweep" in ln
    ]
    ran = {ln.split("/rolling_origin/")[1].split(" ")[0] for ln in extra}
    assert ran == set(own) and len(extra) == 3 * len(own)  # the dial and two new sweep settings, these only
    path = tmp_path / "results" / "tinyanalyses" / "v0001.json"
    assert validate_results_file(path) == []
    doc = parse_document(json.loads(path.read_text()))
    (dial,) = doc.analyses.dials
    (sweep,) = doc.analyses.sweeps
    assert dial.models == own and sweep.models == own
    assert {p.n_models for c in dial.curves for p in c.points} == {3}  # the leaderboard units' rows too
    assert {p.n_models for p in sweep.points} == {3}
    assert {r.model for lb in doc.leaderboards for r in lb.rows} == {  # the leaderboards keep the whole roster
        "naive",
        "seasonal_naive",
        "snaive_momentum",
        "ses",
        "historic_mean",
    }
    render_site(results_dir=tmp_path / "results", out=tmp_path / "docs")
    page = (tmp_path / "docs" / "benchmarks" / "tinyanalyses" / "synthetic_marketplace" / "robustness.md").read_text()
    assert "The dial covers 3 models of the roster" in page and "The sweep covers 3 models" in page
    names = {m.id: m.display_name for m in doc.models}
    assert ", ".join(names[m] for m in ("naive", "snaive_momentum", "ses")) in page  # display names, not ids
