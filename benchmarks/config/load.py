"""Loading and resolving configs: a file read (:func:`benchmarks.config.io.read_toml`), validated against
its schema, and for a model config passed through the gate (:mod:`benchmarks.config.gate`); a benchmark
config resolved together with every model it names.
"""

from __future__ import annotations

from pathlib import Path

import pydantic

from benchmarks.config.benchmark import BenchmarkConfig
from benchmarks.config.gate import check_finite, check_sktime_params, check_tycheon_params
from benchmarks.config.io import CONFIGS_DIR, MODELS_DIR, ConfigError, _format_errors, _shown, read_toml
from benchmarks.config.models import ModelConfig, TycheonSource

__all__ = ["load_benchmark_config", "load_model_config", "load_model_configs", "resolve_benchmark_config"]


def load_model_config(path: str | Path) -> ModelConfig:
    """Load and validate one model config; the file stem must equal its ``id``.

    Raises
    ------
    ConfigError
        Unknown or missing field, an id that is no registered forecaster or allow-listed sktime estimator, an
        unknown parameter, one of the wrong type, out of range or non-finite; the message names the file and
        the field.
    """
    path = Path(path)
    raw = read_toml(path)
    try:
        cfg = ModelConfig.model_validate(raw)
    except pydantic.ValidationError as err:
        raise ConfigError(_format_errors(path, err)) from err
    check_finite(path, cfg.params, "params")
    if path.stem != cfg.id:
        raise ConfigError(f"{_shown(path)}: field 'id': {cfg.id!r} must equal the file name stem {path.stem!r}")
    if isinstance(cfg.source, TycheonSource):
        check_tycheon_params(path, cfg.source.forecaster, cfg.params)
    else:
        check_sktime_params(path, cfg.source.estimator, cfg.params)
    return cfg


def load_model_configs(ids: list[str], *, models_dir: Path = MODELS_DIR) -> dict[str, ModelConfig]:
    """Load ``<models_dir>/<id>.toml`` for every id, in the given order."""
    out = {}
    for model_id in ids:
        path = models_dir / f"{model_id}.toml"
        if not path.exists():
            known = sorted(p.stem for p in models_dir.glob("*.toml"))
            raise ConfigError(f"unknown model id {model_id!r}: no file {_shown(path)}; known model ids: {known}")
        out[model_id] = load_model_config(path)
    return out


def load_benchmark_config(path: str | Path) -> BenchmarkConfig:
    """Load and validate a benchmark config (without resolving its models; see
    :func:`resolve_benchmark_config`)."""
    path = Path(path)
    raw = read_toml(path)
    try:
        return BenchmarkConfig.model_validate(raw)
    except pydantic.ValidationError as err:
        raise ConfigError(_format_errors(path, err)) from err


def resolve_benchmark_config(
    name_or_path: str | Path, *, models_dir: Path = MODELS_DIR
) -> tuple[Path, BenchmarkConfig, dict[str, ModelConfig]]:
    """Find a config by name (``benchmarks/configs/<name>.toml``) or path, validate it and every model
    it names, and check that the random walk really is the tycheon ``naive`` forecaster."""
    path = Path(name_or_path)
    if path.suffix != ".toml":
        path = CONFIGS_DIR / f"{name_or_path}.toml"
    cfg = load_benchmark_config(path)
    try:
        models = load_model_configs(list(cfg.models), models_dir=models_dir)
    except ConfigError as err:
        raise ConfigError(f"{_shown(path)}: field 'models': {err}") from err
    rw = models[cfg.random_walk]
    if not (isinstance(rw.source, TycheonSource) and rw.source.forecaster == "naive"):
        raise ConfigError(
            f"{_shown(path)}: field 'random_walk': {cfg.random_walk!r} must be the tycheon 'naive' forecaster "
            f"(the random walk), got source {rw.source.model_dump()}"
        )
    return path, cfg, models
