"""``Evaluation.to_results`` writes the score sets the evaluation already has: every model runs once in
all (in ``evaluate``), and the version written equals one whose pipeline ran every model again; a score
set is used only where the harness's run would be the one that made it."""

from __future__ import annotations

import json
import warnings
from collections import Counter
from pathlib import Path

import pytest

import benchmarks.model_run as model_run
import tycheon.evaluation.run as evaluation_run
from benchmarks.evaluate import write_evaluation
from benchmarks.results_io import strip_volatile, validate_results_file
from tests.test_evaluate import _user_table
from tycheon.backtest.one_model import run_one_model
from tycheon.evaluation import EvaluationWarning, evaluate

MODELS = "naive,snaive_momentum"


@pytest.fixture()
def runs(monkeypatch) -> Counter[str]:
    """Every per-model run, counted by model id, at both callers (the library's and the harness's)."""
    counted: Counter[str] = Counter()

    def counting(panel, protocol, model_id, *args, **kwargs):
        counted[model_id] += 1
        return run_one_model(panel, protocol, model_id, *args, **kwargs)

    monkeypatch.setattr(evaluation_run, "run_one_model", counting)
    monkeypatch.setattr(model_run, "run_one_model", counting)
    return counted


def _evaluation(**options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvaluationWarning)
        return evaluate(_user_table(n_series=8), n_jobs=1, n_origins=4, models=MODELS, **options)


def _doc(path: Path) -> dict:
    assert validate_results_file(path) == []
    return json.loads(path.read_text())


@pytest.mark.slow
def test_to_results_runs_no_model_again_and_writes_what_a_rerun_writes(runs, tmp_path):
    ev = _evaluation()
    assert set(runs) == set(ev.plan.settings.models) and set(runs.values()) == {1}
    written = _doc(ev.to_results(tmp_path / "given"))
    assert set(runs.values()) == {1}, runs  # to_results ran nothing
    assert set(written["provenance"]["cache"].values()) == {"given"}
    assert len(written["provenance"]["cache"]) == len(ev.plan.settings.models)
    assert (tmp_path / "given" / "config").is_dir()  # the config is written all the same, for provenance

    rerun = _doc(write_evaluation(ev, tmp_path / "rerun").results)  # no score sets handed over: all run again
    assert set(runs.values()) == {2}, runs
    assert set(rerun["provenance"]["cache"].values()) == {"computed"}
    assert strip_volatile(written) == strip_volatile(rerun)
    assert written["leaderboards"] == rerun["leaderboards"] and written["intervals"] == rerun["intervals"]
    tables = {(t["unit"], t["demand_class"], t["metric"]): t["rows"] for t in written["leaderboards"]}
    for t in ev.tables:
        rows = tables[(t["unit"], t["demand_class"], t["metric"])]
        assert [(r["model"], r["rank"], r["mean"]) for r in rows] == [
            (r["model"], r["rank"], r["mean"]) for r in t["rows"]
        ]
    # the evaluation is left whole: its score sets were copied, not parked by the pipeline
    assert all(len(s.table.columns) > 10 and len(s.table) for s in ev._score_sets.values())


@pytest.mark.slow
def test_a_score_set_of_another_run_is_not_used_and_the_model_runs_again(runs, tmp_path):
    ev = _evaluation()
    other = _evaluation(seed=ev.plan.settings.seed + 1)  # the same models on the same data, another seed
    runs.clear()
    doc = _doc(write_evaluation(ev, tmp_path / "out", given=other._score_sets).results)
    assert set(runs) == set(ev.plan.settings.models) and set(runs.values()) == {1}
    assert set(doc["provenance"]["cache"].values()) == {"computed"}


@pytest.mark.slow
def test_when_the_dataframe_changed_since_evaluate_then_the_models_run_again_on_what_is_written(runs, tmp_path):
    df = _user_table(n_series=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvaluationWarning)
        ev = evaluate(df, n_jobs=1, n_origins=4, models=MODELS)
    df.loc[df["unique_id"] == "s01", "y"] += 1.0  # the file written is no longer the panel evaluated
    runs.clear()
    doc = _doc(ev.to_results(tmp_path / "out"))
    assert set(runs) == set(ev.plan.settings.models) and set(runs.values()) == {1}
    assert set(doc["provenance"]["cache"].values()) == {"computed"}
