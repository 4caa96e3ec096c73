"""Probe: a model config that would make sktime eval() a string. FhPlexForecaster is in sktime's registry
and passes ``fh_params`` to ``eval``; every route must refuse it before anything is built, and the canary
file the payload would create must not exist afterwards."""

from __future__ import annotations

import pytest

from benchmarks.config import ConfigError, load_model_config
from benchmarks.submit.__main__ import main as submit_main
from tycheon.forecasters import create
from tycheon.forecasters.roster.sktime_adapter import UnknownSktimeEstimatorError


def _payload(canary) -> str:
    return f"fh_params = \"__import__('pathlib').Path({str(canary)!r}).touch() or (lambda h: {{}})\""


def test_kind_sktime_route_is_refused_by_submit_check(bench, tmp_path, capsys):
    canary = tmp_path / "canary"
    path = bench.model("evil", 'kind = "sktime"\nestimator = "FhPlexForecaster"', _payload(canary))
    before = bench.written()
    code = submit_main(
        [
            "check",
            str(path),
            "--models-dir",
            str(bench.models),
            "--work-dir",
            str(tmp_path / "w"),
            "--results-dir",
            str(bench.results),
            "--cache-dir",
            str(bench.cache),
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "field 'source.estimator': sktime estimator 'FhPlexForecaster' is not on the allow-list" in out
    assert not canary.exists() and bench.written() == before


def test_kind_sktime_route_is_refused_by_benchmarks_run(bench, tmp_path, capsys):
    canary = tmp_path / "canary"
    bench.model("evil", 'kind = "sktime"\nestimator = "FhPlexForecaster"', _payload(canary))
    assert bench.run(bench.config(["naive", "snaive_momentum", "evil"])) == 2
    assert "'FhPlexForecaster' is not on the allow-list" in capsys.readouterr().err
    assert not canary.exists() and not bench.results.exists()


def test_nested_params_of_the_sktime_forecaster_are_refused_by_run_and_check(bench, tmp_path, capsys):
    canary = tmp_path / "canary"
    nested = (
        'estimator = "FhPlexForecaster"\n'
        f"params = {{ fh_params = \"__import__('pathlib').Path({str(canary)!r}).touch()\" }}"
    )
    path = bench.model("evil2", 'kind = "tycheon"\nforecaster = "sktime"', nested)
    assert bench.run(bench.config(["naive", "snaive_momentum", "evil2"])) == 2
    assert (
        "field 'params.estimator': sktime estimator 'FhPlexForecaster' is not on the allow-list"
        in capsys.readouterr().err
    )
    assert submit_main(["check", str(path), "--models-dir", str(bench.models), "--no-run"]) == 1
    assert "is not on the allow-list" in capsys.readouterr().out
    assert not canary.exists()


def test_an_allowed_estimator_with_a_string_payload_in_a_listed_param_is_refused(bench, tmp_path):
    canary = tmp_path / "canary"
    path = bench.model(
        "evil3",
        'kind = "sktime"\nestimator = "NaiveForecaster"',
        f"strategy = \"__import__('pathlib').Path({str(canary)!r}).touch()\"",
    )
    with pytest.raises(ConfigError, match=r"field 'params\.strategy': .*expected one of \['last', 'mean', 'drift'\]"):
        load_model_config(path)
    assert not canary.exists()


def test_the_library_route_refuses_it_too(tmp_path):
    canary = tmp_path / "canary"
    with pytest.raises(UnknownSktimeEstimatorError, match="'FhPlexForecaster' is not on the allow-list"):
        create(
            "sktime",
            estimator="FhPlexForecaster",
            params={"fh_params": f"__import__('pathlib').Path({str(canary)!r}).touch()"},
        )
    assert not canary.exists()
