"""Probes on a run as a whole: a second run while one holds the results folder refuses before computing;
a run whose random walk or production baseline failed, or that has nothing to rank, writes nothing."""

from __future__ import annotations

import time

from benchmarks.run_guard import results_lock


def test_a_concurrent_run_is_refused_before_computing_and_loses_nothing(bench, capsys):
    config = bench.config(["naive", "snaive_momentum"])
    assert bench.run(config) == 0
    before = bench.written()
    with results_lock(bench.results / "adv"):
        t0 = time.monotonic()
        assert bench.run(config, "--no-cache") == 3
        assert time.monotonic() - t0 < 5  # refused up front, not after the work
    err = capsys.readouterr().err
    assert "[benchmarks.run] refused: another run (pid " in err and "is writing to" in err
    assert bench.written() == before
    assert bench.run(config) == 0  # the lock went with its holder
    assert (bench.results / "adv" / "v0002.json").exists()


def test_a_run_whose_random_walk_failed_writes_nothing(bench, hostile, capsys, monkeypatch):
    from tests.adversarial._models import Crash
    from tycheon.forecasters import registry

    monkeypatch.setitem(registry._REGISTRY, "naive", Crash)
    config = bench.config(["naive", "snaive_momentum"])
    assert bench.run(config, "--no-cache") == 1
    err = capsys.readouterr().err
    assert "nothing written; this run cannot rank" in err
    assert (
        "the random walk 'naive' failed on synthetic_marketplace (rolling_origin): RuntimeError: crashed on "
        "purpose" in err
    )
    assert not (bench.results / "adv" / "v0001.json").exists()


def test_a_run_where_every_model_fails_writes_nothing(bench, hostile, capsys, monkeypatch):
    # every model of the roster crashes (a dask backend without a client was the way to fail them all before
    # the harness could start a cluster itself)
    from tests.adversarial._models import Crash
    from tycheon.forecasters import registry

    for model_id in ("naive", "snaive_momentum"):
        monkeypatch.setitem(registry._REGISTRY, model_id, Crash)
    config = bench.config(["naive", "snaive_momentum"])
    assert bench.run(config, "--no-cache") == 1
    err = capsys.readouterr().err
    assert "crashed on purpose" in err
    assert "no leaderboard or competition table could be built" in err
    assert not list(bench.results.rglob("v*.json"))


def test_a_submission_check_whose_random_walk_failed_writes_nothing(bench, hostile, tmp_path, capsys, monkeypatch):
    from benchmarks.submit.__main__ import main as submit_main
    from tests.adversarial._models import Crash
    from tycheon.forecasters import registry

    path = bench.model("mine", 'kind = "tycheon"\nforecaster = "ses"', "alpha = 0.45")
    monkeypatch.setitem(registry._REGISTRY, "naive", Crash)
    code = submit_main(
        [
            "check",
            str(path),
            "--config",
            str(bench.config(["naive", "snaive_momentum"])),
            "--models-dir",
            str(bench.models),
            "--work-dir",
            str(tmp_path / "work"),
            "--results-dir",
            str(bench.results),
            "--cache-dir",
            str(bench.cache),
        ]
    )
    assert code == 2
    assert (
        "submit check could not run: the benchmark cannot rank, so nothing was written: the random walk "
        "'naive' failed" in capsys.readouterr().err
    )
    assert not list(bench.results.rglob("v*.json"))
