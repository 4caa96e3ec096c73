"""The runner end to end on a tiny config: deterministic results, cache reuse, --if-new, and a model that
raises is recorded as failed while the run goes on."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchmarks.config import MODELS_DIR
from benchmarks.results_io import strip_volatile, validate_results_file
from benchmarks.run import main as run_main
from tests._shared import TINY, copy_results
from tycheon.forecasters import registry
from tycheon.forecasters.base import Capabilities, Forecast, Forecaster

pytestmark = pytest.mark.slow  # whole-harness runs: outside the fast subset


def _run(tmp_path: Path, *extra: str, config: Path = TINY) -> int:
    return run_main(
        [
            "--config",
            str(config),
            "--results-dir",
            str(tmp_path / "results"),
            "--cache-dir",
            str(tmp_path / "cache"),
            *extra,
        ]
    )


def _comparable(path: Path) -> dict:
    doc = strip_volatile(json.loads(path.read_text()))
    doc.pop("version")
    # the scores block lists the parts by sha256: equal runs list the same parts
    # Other engineers commit to this working tree while the test runs; the commit is not a result.
    for key in ("git_commit", "git_dirty", "code_sha256"):
        doc["provenance"].pop(key)
    return doc


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory, tiny_results):
    """v0001: the run-wide ``--no-cache`` run (tests/_shared.py), copied; v0002 fills the cache, v0003 reads it."""
    tmp = tmp_path_factory.mktemp("runs")
    copy_results(tiny_results, tmp)
    assert _run(tmp) == 0  # fills the cache
    assert _run(tmp) == 0  # reads it
    return tmp / "results" / "tiny"


def test_two_runs_with_the_same_seed_give_identical_results_apart_from_timings(two_runs):
    first, second, third = (two_runs / f"v000{i}.json" for i in (1, 2, 3))
    assert _comparable(first) == _comparable(second)
    assert _comparable(first) == _comparable(third)


def test_a_rerun_reuses_finished_work_from_the_cache(two_runs):
    cache_of = lambda v: json.loads((two_runs / f"{v}.json").read_text())["provenance"]["cache"]  # noqa: E731
    assert set(cache_of("v0002").values()) == {"computed"}
    assert set(cache_of("v0003").values()) == {"cache"}


def test_results_validate_and_carry_every_table_the_site_needs(two_runs):
    path = two_runs / "v0001.json"
    assert validate_results_file(path) == []
    doc = json.loads(path.read_text())
    keys = {(t["dataset"], t["unit"], t["demand_class"], t["metric"]) for t in doc["leaderboards"]}
    assert ("synthetic_marketplace", "series", "all", "mase") in keys
    assert ("synthetic_marketplace", "total", "all", "rmsse") in keys
    board = next(
        t for t in doc["leaderboards"] if t["unit"] == "series" and t["demand_class"] == "all" and t["metric"] == "mase"
    )
    baseline = next(r for r in board["rows"] if r["model"] == "snaive_momentum")
    assert baseline["is_baseline"] and baseline["dm_p"] is None and baseline["beats_baseline_blocks"] is None
    assert next(r for r in board["rows"] if r["model"] == "naive")["verdict_vs_rw"] is None
    assert [r["rank"] for r in board["rows"]] == sorted(r["rank"] for r in board["rows"])
    glossary = {g["name"]: g for g in doc["metric_glossary"]}  # the site's glossary, from the registry
    assert {"mase", "rmsse", "msis80", "coverage95"} <= set(glossary) and glossary["mase"]["display_name"] == "MASE"
    comp = doc["competition"][0]
    assert comp["competition"] == "M3" and comp["metric"] == "smape" and comp["horizon"] == 18
    assert {r["n_series"] for r in comp["rows"]} == {6}
    statuses = {m["id"]: {r["status"] for r in m["runs"]} for m in doc["models"]}
    assert statuses == {m: {"ran"} for m in ("naive", "seasonal_naive", "snaive_momentum", "ses")}


def test_if_new_does_nothing_when_this_config_and_code_already_have_results(two_runs, capsys):
    tmp = two_runs.parent.parent
    assert _run(tmp, "--if-new") == 0
    assert "nothing to do" in capsys.readouterr().out
    assert not (two_runs / "v0004.json").exists()


class _Boom(Forecaster):
    capabilities = Capabilities(min_obs=1, vectorised=True)

    def __init__(self, *, level: float = 0.0) -> None:
        self.level = level

    def _predict(self, history, *, horizon, quantile_levels, n_samples, rng) -> Forecast:
        raise ZeroDivisionError("boom at the origin")


def test_when_a_model_raises_then_it_is_recorded_as_failed_and_the_run_continues(tmp_path, monkeypatch):
    monkeypatch.setitem(registry._REGISTRY, "test_boom", _Boom)
    models = tmp_path / "models"
    models.mkdir()
    for m in ("naive", "snaive_momentum"):
        shutil.copy(MODELS_DIR / f"{m}.toml", models)
    (models / "boom.toml").write_text(
        'id = "boom"\ndisplay_name = "Boom"\nfamily = "test"\nlicence = "MIT"\ncontributor = "tests"\n'
        '[source]\nkind = "tycheon"\nforecaster = "test_boom"\n'
    )
    text = TINY.read_text().replace(
        'models = ["naive", "seasonal_naive", "snaive_momentum", "ses"]',
        'models = ["naive", "snaive_momentum", "boom"]',
    )
    text = text[: text.index("[[competition]]")]
    config = tmp_path / "boomy.toml"
    config.write_text(text)
    assert (
        run_main(
            [
                "--config",
                str(config),
                "--results-dir",
                str(tmp_path / "results"),
                "--no-cache",
                "--models-dir",
                str(models),
            ]
        )
        == 0
    )
    doc = json.loads((tmp_path / "results" / "tiny" / "v0001.json").read_text())
    boom = next(m for m in doc["models"] if m["id"] == "boom")["runs"][0]
    assert (
        boom["status"] == "failed" and "ZeroDivisionError" in boom["reason"] and "boom at the origin" in boom["reason"]
    )
    assert boom["traceback"]
    models_ranked = {r["model"] for t in doc["leaderboards"] for r in t["rows"]}
    assert models_ranked == {"naive", "snaive_momentum"}
    assert any(w["kind"] == "model" and "boom failed" in w["message"] for w in doc["warnings"])


def test_when_config_is_invalid_then_the_runner_exits_2_naming_the_problem(tmp_path, capsys):
    config = tmp_path / "bad.toml"
    config.write_text(TINY.read_text().replace("stride = 3", "stride = 1"))
    assert _run(tmp_path, config=config) == 2
    assert "origins overlap: stride 1 < horizon 3" in capsys.readouterr().err
    assert not (tmp_path / "results").exists()


def test_when_the_manifest_hash_of_a_dataset_differs_then_the_run_stops_naming_it(tmp_path):
    from benchmarks.config import resolve_benchmark_config
    from benchmarks.pipeline import MANIFEST, RunInputs, build_results
    from tycheon.data.manifest import ManifestHashError, read_manifest

    recorded = read_manifest(MANIFEST)["synthetic_marketplace"].sha256
    tampered = tmp_path / "datasets.toml"
    tampered.write_text(MANIFEST.read_text().replace(recorded, "ab" * 32))
    path, cfg, models = resolve_benchmark_config(str(TINY), models_dir=MODELS_DIR)
    with pytest.raises(ManifestHashError, match=f"{'ab' * 32}"):
        build_results(RunInputs(path, cfg, models, manifest=tampered))
