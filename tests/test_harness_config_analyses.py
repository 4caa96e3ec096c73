"""Config fields of the selection-rule replay and the protocol-sensitivity audit: defaults, strictness and
the cross-checks that name what a config may list."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.config import ConfigError, load_benchmark_config
from tests.test_harness_config import _bench


def test_defaults_are_the_papers_rule_and_the_automatic_dataset_choice(tmp_path):
    cfg = load_benchmark_config(_bench(tmp_path))
    assert (cfg.replay.metric, cfg.replay.min_fold_share, cfg.replay.top_k, cfg.replay.min_folds) == (
        "rmsse",
        0.5,
        3,
        3,
    )
    assert cfg.sensitivity.datasets is None and cfg.sensitivity.boundary_shifts == [-3, -1, 1, 3]


def test_rule_parameters_are_read_from_the_config(tmp_path):
    extra = '[replay]\ntop_k = 2\nbias_threshold = 0.25\noracle = "series"\n[sensitivity]\ndatasets = []\n'
    cfg = load_benchmark_config(_bench(tmp_path, extra=extra))
    assert (cfg.replay.top_k, cfg.replay.bias_threshold, cfg.replay.oracle) == (2, 0.25, "series")
    assert cfg.sensitivity.datasets == []


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("[replay]\ntop_k = 0\n", "top_k"),
        ('[replay]\nmetric = "wape"\n', "metric"),
        ("[replay]\nnot_a_field = 1\n", "not_a_field"),
        ('[sensitivity]\ndatasets = ["m4_monthly"]\n', "m4_monthly"),
        ('[sensitivity]\nmodels = ["auto_arima"]\n', "auto_arima"),
    ],
)
def test_bad_fields_are_refused_naming_the_field(tmp_path, extra, message):
    with pytest.raises(ConfigError, match=message):
        load_benchmark_config(_bench(tmp_path, extra=extra))


_TINY = Path(__file__).parent / "fixtures" / "tiny_analyses.toml"


def _with_analysis_models(tmp_path: Path, line: str, *, drop: str = "") -> Path:
    text = _TINY.read_text().replace("sweep = [0.0, 1.0, 6.0]", f"sweep = [0.0, 1.0, 6.0]\n{line}")
    path = tmp_path / "bench.toml"
    path.write_text(text.replace(drop, "") if drop else text)
    return path


def test_analysis_models_default_to_the_whole_roster_and_are_read_when_given(tmp_path):
    assert load_benchmark_config(_TINY).datasets[0].analysis_models is None
    cfg = load_benchmark_config(_with_analysis_models(tmp_path, 'analysis_models = ["naive", "snaive_momentum"]'))
    assert cfg.datasets[0].analysis_models == ["naive", "snaive_momentum"]


@pytest.mark.parametrize(
    ("line", "drop", "message"),
    [
        ('analysis_models = ["snaive_momentum", "ses"]', "", r"random walk and the production baseline.*\['naive'\]"),
        ('analysis_models = ["naive", "ses"]', "", r"missing \['snaive_momentum'\]"),
        ('analysis_models = ["naive", "snaive_momentum", "auto_arima"]', "", "auto_arima"),
        ('analysis_models = ["naive", "snaive_momentum", "naive"]', "", "more than once"),
        ("analysis_models = []", "", "analysis_models"),
        (
            'analysis_models = ["naive", "snaive_momentum"]',
            "dial = [1, 5, 10]\nsweep = [0.0, 1.0, 6.0]\n",
            "has neither",
        ),
    ],
)
def test_bad_analysis_models_are_refused(tmp_path, line, drop, message):
    with pytest.raises(ConfigError, match=message):
        load_benchmark_config(_with_analysis_models(tmp_path, line, drop=drop))
