"""Strict configs for the harness: one :class:`ModelConfig` per file under ``benchmarks/models/`` and one
:class:`BenchmarkConfig` per file under ``benchmarks/configs/``.

One module per job: :mod:`~benchmarks.config.io` (where configs live, :class:`ConfigError`, reading a
file with limits), :mod:`~benchmarks.config.models` (the model config schema),
:mod:`~benchmarks.config.gate` (what a contributed model may run: the roster, the sktime allow-list,
parameter bounds, reserved ids, look-alike names; :func:`canonical_spec`),
:mod:`~benchmarks.config.benchmark` (the benchmark config schema) and :mod:`~benchmarks.config.load`
(loading and resolving). Every error is a :class:`ConfigError` whose message names the file and the field.
"""

from benchmarks.config.benchmark import (
    UNIT,
    BenchmarkConfig,
    CompetitionEntry,
    CompetitionMetric,
    DatasetEntry,
    ReplayConfig,
    SensitivityConfig,
    SkipModels,
    UserFile,
)
from benchmarks.config.gate import (
    _ALLOW_LISTED as _ALLOW_LISTED,
)
from benchmarks.config.gate import (
    CONTRIBUTED_PARAMS,
    SKTIME_EQUIVALENTS,
    Bound,
    SktimeEquivalent,
    canonical_spec,
    letter_scripts,
    site_pages_under_models,
)
from benchmarks.config.io import BENCHMARKS_DIR, CONFIGS_DIR, MAX_CONFIG_BYTES, MODELS_DIR, ConfigError, read_toml
from benchmarks.config.load import (
    load_benchmark_config,
    load_model_config,
    load_model_configs,
    resolve_benchmark_config,
)
from benchmarks.config.models import NAME, SLUG, ModelConfig, ParamValue, Scalar, SktimeSource, TycheonSource

__all__ = [
    "BENCHMARKS_DIR",
    "CONFIGS_DIR",
    "CONTRIBUTED_PARAMS",
    "MAX_CONFIG_BYTES",
    "MODELS_DIR",
    "NAME",
    "SKTIME_EQUIVALENTS",
    "SLUG",
    "UNIT",
    "BenchmarkConfig",
    "Bound",
    "CompetitionEntry",
    "CompetitionMetric",
    "ConfigError",
    "DatasetEntry",
    "ModelConfig",
    "ParamValue",
    "ReplayConfig",
    "Scalar",
    "SensitivityConfig",
    "SktimeEquivalent",
    "SktimeSource",
    "SkipModels",
    "TycheonSource",
    "UserFile",
    "canonical_spec",
    "letter_scripts",
    "load_benchmark_config",
    "load_model_config",
    "load_model_configs",
    "read_toml",
    "resolve_benchmark_config",
    "site_pages_under_models",
]
