"""Probes on the submission gate and the config loader: look-alike and empty names, edits to the reference
models or to results, zero-support models, non-finite params, hostile TOML files."""

from __future__ import annotations

import pytest

from benchmarks.config import ConfigError, load_benchmark_config, load_model_config
from benchmarks.submit.__main__ import main as submit_main
from benchmarks.submit.changes import classify
from benchmarks.submit.validate import validate_submission
from tests.test_submit import diff

SES = 'kind = "tycheon"\nforecaster = "ses"'


@pytest.mark.parametrize(
    "name",
    ["ＮＡＩＶＥ (random walk)", "naive (RANDOM WALK)", "Naive  (random\u00a0walk)", "ｎａｉｖｅ（random walk）"],
)
def test_a_display_name_that_looks_like_the_random_walks_is_taken(bench, name):
    verdict = validate_submission(bench.model("lookalike", SES, "alpha = 0.5", name=name), models_dir=bench.models)
    assert not verdict.accepted
    assert any(
        "field 'display_name'" in r and "is already used by" in r and "naive.toml" in r for r in verdict.reasons
    ), verdict.reasons


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Naive\u200b (random walk)", r"contains invisible or control characters \(U\+200B\)"),
        ("   ", r"is only whitespace"),
        ("\u2060", r"contains invisible or control characters \(U\+2060\)"),
        ("Good\u202eevil", r"contains invisible or control characters \(U\+202E\)"),
    ],
)
def test_invisible_or_empty_display_names_are_refused(bench, name, message):
    with pytest.raises(ConfigError, match=rf"field 'display_name': Value error, {message}"):
        load_model_config(bench.model("hidden", SES, "alpha = 0.5", name=name))


def test_a_pull_request_may_not_touch_the_reference_models_or_results():
    changes = classify(
        diff(
            "M\tbenchmarks/models/naive.toml\nD\tbenchmarks/models/snaive_momentum.toml\n"
            "M\tbenchmarks/results/small/v0004.json\nA\tbenchmarks/models/mine.toml\n"
        )
    )
    assert changes.to_check == ["benchmarks/models/mine.toml"]
    assert [p.split("`")[1].strip() for p in changes.problems] == [
        "benchmarks/models/naive.toml",
        "benchmarks/models/snaive_momentum.toml",
        "benchmarks/results/small/v0004.json",
    ]
    assert "a reference model (random walk or production baseline)" in changes.problems[0]


def test_a_swapped_reference_config_is_rejected_by_check(bench, tmp_path, capsys):
    swapped = tmp_path / "naive.toml"
    swapped.write_text(
        (bench.models / "naive.toml").read_text().replace('forecaster = "naive"', 'forecaster = "seasonal_naive"')
    )
    assert submit_main(["check", str(swapped), "--models-dir", str(bench.models), "--no-run"]) == 1
    assert "field 'id': 'naive' is a reference model" in capsys.readouterr().out


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_non_finite_params_are_refused_at_check_time(bench, capsys, value):
    path = bench.model("odd_ses", SES, f"alpha = {value}")
    assert submit_main(["check", str(path), "--models-dir", str(bench.models), "--no-run"]) == 1
    assert "field 'params.alpha'" in capsys.readouterr().out


def test_out_of_range_params_are_refused_at_check_time(bench, capsys):
    path = bench.model("neg_ma", 'kind = "tycheon"\nforecaster = "moving_average"', "window = -3")
    assert submit_main(["check", str(path), "--models-dir", str(bench.models), "--no-run"]) == 1
    assert "window must be a positive integer, got -3" in capsys.readouterr().out


@pytest.mark.slow
def test_a_model_with_zero_support_is_rejected(bench, tmp_path, capsys):
    # the longest window a contributed config may ask for (CONTRIBUTED_PARAMS), longer than every tiny series
    path = bench.model("huge_window", 'kind = "tycheon"\nforecaster = "moving_average"', "window = 1000")
    config = bench.config(["naive", "snaive_momentum"])
    code = submit_main(
        [
            "check",
            str(path),
            "--config",
            str(config),
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
    assert code == 1
    assert "Rejected: `huge_window` produced no scored forecast on any dataset (zero support" in capsys.readouterr().out


def test_a_bom_is_named(bench):
    path = bench.model("bom", SES, "alpha = 0.5")
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    verdict = validate_submission(path, models_dir=bench.models)
    assert verdict.reasons == [f"{path}: starts with a UTF-8 byte-order mark (BOM); save it as UTF-8 without a BOM"]


def test_deeply_nested_toml_is_a_clear_error_for_model_and_benchmark_configs(bench, tmp_path):
    deep = "x = " + "[" * 100_000 + "]" * 100_000 + "\n"
    model = bench.models / "deep.toml"
    model.write_text(deep)
    verdict = validate_submission(model, models_dir=bench.models)
    assert verdict.reasons == [f"{model}: nested too deeply for a config (arrays or tables inside each other)"]
    other = bench.model("fine", SES, "alpha = 0.4")  # the deep file beside it does not break the others
    assert validate_submission(other, models_dir=bench.models).accepted
    config = tmp_path / "deep_bench.toml"
    config.write_text(deep)
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_benchmark_config(config)


def test_an_oversized_toml_is_refused_before_parsing(bench):
    path = bench.model("big", SES, "alpha = 0.5")
    path.write_text(path.read_text() + "#" * 300_000)
    with pytest.raises(ConfigError, match=r"larger than 262144 bytes"):
        load_model_config(path)
