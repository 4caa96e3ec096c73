"""Config fields of the selection-rule replay and the protocol-sensitivity audit: defaults, strictness and
the cross-checks that name what a config may list."""

from __future__ import annotations

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
