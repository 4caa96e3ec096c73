"""Model and benchmark configs: every rejection names the file and the field, and no config can make the
runner import or execute anything outside the roster and sktime's registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.config import (
    MODELS_DIR,
    ConfigError,
    load_benchmark_config,
    load_model_config,
    resolve_benchmark_config,
)

MODEL = """\
id = "{id}"
display_name = "Naive"
family = "baseline"
licence = "MIT"
contributor = "tests"
{extra}
[source]
kind = "tycheon"
forecaster = "{forecaster}"

[params]
{params}
"""

BENCH = """\
name = "tiny"
seed = 1
horizon = 3
stride = {stride}
n_origins = 2
min_history = 12
quantile_levels = [0.1, 0.5, 0.9]
metrics = ["mase"]
models = {models}
random_walk = "naive"
production_baseline = "snaive_momentum"
{extra}
[[datasets]]
name = "synthetic_marketplace"
options = {{ n_entities = 10, n_periods = 40 }}
"""


def _model(
    tmp_path: Path,
    *,
    id: str = "naive",
    forecaster: str = "naive",
    params: str = "",
    extra: str = "",
    source: str | None = None,
) -> Path:
    text = MODEL.format(id=id, forecaster=forecaster, params=params, extra=extra)
    if source is not None:
        text = text.replace(f'kind = "tycheon"\nforecaster = "{forecaster}"', source)
    path = tmp_path / f"{id}.toml"
    path.write_text(text)
    return path


def _bench(tmp_path: Path, *, stride: int = 3, models: str = '["naive", "snaive_momentum"]', extra: str = "") -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(BENCH.format(stride=stride, models=models, extra=extra))
    return path


def test_every_committed_model_config_for_a_registered_forecaster_validates():
    from tycheon.forecasters import registry

    registered = set(registry.available())
    checked = 0
    for path in sorted(MODELS_DIR.glob("*.toml")):
        text = path.read_text()
        if 'kind = "tycheon"' in text and not any(f'forecaster = "{r}"' in text for r in registered):
            continue  # roster member not built yet; its config is checked once it registers
        cfg = load_model_config(path)
        assert cfg.id == path.stem
        checked += 1
    assert checked >= 10


def test_when_model_config_has_unknown_field_then_error_names_file_and_field(tmp_path):
    path = _model(tmp_path, extra='colour = "red"')
    with pytest.raises(ConfigError, match=r"naive\.toml: unknown field 'colour'"):
        load_model_config(path)


def test_when_model_id_is_not_registered_then_error_lists_registered_ids(tmp_path):
    path = _model(tmp_path, id="mystery", forecaster="mystery_model")
    with pytest.raises(
        ConfigError,
        match=r"mystery\.toml: field 'source\.forecaster': unknown forecaster id "
        r"'mystery_model'; registered ids are: .*naive",
    ):
        load_model_config(path)


@pytest.mark.parametrize("name", ["os.system", "module.path:Class", "subprocess:run", "../evil", "builtins.eval"])
def test_when_source_is_an_import_path_then_it_is_rejected_before_any_lookup(tmp_path, name):
    path = _model(tmp_path, forecaster=name)
    with pytest.raises(ConfigError, match=r"field 'source\.forecaster': String should match pattern"):
        load_model_config(path)


def test_when_sktime_estimator_is_an_import_path_then_it_is_rejected(tmp_path):
    path = _model(tmp_path, source='kind = "sktime"\nestimator = "sktime.forecasting.theta:ThetaForecaster"')
    with pytest.raises(ConfigError, match=r"field 'source\.estimator': String should match pattern"):
        load_model_config(path)


def test_when_source_kind_is_python_then_it_is_rejected(tmp_path):
    path = _model(tmp_path, source='kind = "python"\ncallable = "os.system"')
    with pytest.raises(ConfigError, match=r"naive\.toml: field 'source'"):
        load_model_config(path)


def test_when_param_is_unknown_then_error_names_it_and_lists_accepted(tmp_path):
    path = _model(tmp_path, id="ewma", forecaster="ewma", params="flavour = 3")
    with pytest.raises(
        ConfigError,
        match=r"ewma\.toml: field 'params\.flavour': unknown parameter 'flavour' "
        r"for tycheon forecaster 'ewma'; accepted: \[",
    ):
        load_model_config(path)


def test_when_param_has_wrong_type_then_error_names_it(tmp_path):
    from tycheon.forecasters import registry

    cls = registry.get("ewma")
    name = cls._param_names()[0]
    path = _model(tmp_path, id="ewma", forecaster="ewma", params=f'{name} = "not a number"')
    with pytest.raises(ConfigError, match=rf"field 'params\.{name}': parameter '{name}' = 'not a number'"):
        load_model_config(path)


def test_when_param_is_a_table_of_code_then_only_json_scalars_are_accepted(tmp_path):
    path = _model(tmp_path, params="hook = { a = { b = 1 } }")
    with pytest.raises(ConfigError, match=r"field 'params\.hook"):
        load_model_config(path)


def test_when_file_stem_differs_from_id_then_rejected(tmp_path):
    path = _model(tmp_path)
    other = path.with_name("other.toml")
    path.rename(other)
    with pytest.raises(ConfigError, match=r"other\.toml: field 'id': 'naive' must equal the file name stem"):
        load_model_config(other)


def test_when_display_name_is_too_long_then_rejected(tmp_path):
    path = _model(tmp_path)
    path.write_text(path.read_text().replace('display_name = "Naive"', f'display_name = "{"x" * 81}"'))
    with pytest.raises(ConfigError, match=r"field 'display_name': String should have at most 80 characters"):
        load_model_config(path)


def test_sktime_estimator_params_are_checked_against_the_allow_list(tmp_path):
    ok = _model(tmp_path, id="theta", source='kind = "sktime"\nestimator = "ThetaForecaster"', params="sp = 12")
    assert load_model_config(ok).factory_spec() == ("sktime", {"estimator": "ThetaForecaster", "params": {"sp": 12}})
    bad = _model(tmp_path, id="theta2", source='kind = "sktime"\nestimator = "ThetaForecaster"', params="spp = 12")
    with pytest.raises(
        ConfigError,
        match=r"field 'params\.spp': parameter 'spp' of sktime ThetaForecaster is not "
        r"on the allow-list; allowed: \['deseasonalize'",
    ):
        load_model_config(bad)
    unknown = _model(tmp_path, id="theta3", source='kind = "sktime"\nestimator = "NoSuchForecaster"')
    with pytest.raises(
        ConfigError,
        match=r"field 'source\.estimator': sktime estimator 'NoSuchForecaster' is "
        r"not on the allow-list",
    ):
        load_model_config(unknown)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ("sp = 0", r"field 'params\.sp': parameter 'sp' = 0 of sktime ThetaForecaster: expected a value in \[1, 400\]"),
        ("sp = 12.0", r"field 'params\.sp': .*expected an int, got float"),
        (
            "deseasonalize_model = \"__import__('os')\"",
            r"field 'params\.deseasonalize_model': .*expected one of "
            r"\['multiplicative', 'additive'\]",
        ),
        ("deseasonalize = 1", r"field 'params\.deseasonalize': .*expected a bool, got int"),
    ],
)
def test_when_sktime_param_breaks_its_listed_rule_then_rejected(tmp_path, params, message):
    path = _model(tmp_path, id="theta", source='kind = "sktime"\nestimator = "ThetaForecaster"', params=params)
    with pytest.raises(ConfigError, match=message):
        load_model_config(path)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_when_a_param_is_not_finite_then_rejected_at_load(tmp_path, value):
    path = _model(tmp_path, id="ses", forecaster="ses", params=f"alpha = {value}")
    with pytest.raises(ConfigError, match=rf"field 'params\.alpha': -?{value.lstrip('-')} is not a finite number"):
        load_model_config(path)


def test_when_a_param_is_out_of_the_constructors_range_then_rejected_at_load(tmp_path):
    path = _model(tmp_path, id="moving_average", forecaster="moving_average", params="window = -3")
    with pytest.raises(
        ConfigError,
        match=r"field 'params': tycheon forecaster 'moving_average' refuses these "
        r"parameters: window must be a positive integer, got -3",
    ):
        load_model_config(path)


def test_the_sktime_forecasters_nested_params_meet_the_same_allow_list(tmp_path):
    ok = _model(
        tmp_path, id="nested", forecaster="sktime", params='estimator = "NaiveForecaster"\nparams = { sp = 12 }'
    )
    assert load_model_config(ok).factory_spec() == ("sktime", {"estimator": "NaiveForecaster", "params": {"sp": 12}})
    bad = _model(
        tmp_path,
        id="nested2",
        forecaster="sktime",
        params='estimator = "NaiveForecaster"\nparams = { strategy = "os.system" }',
    )
    with pytest.raises(ConfigError, match=r"nested2\.toml: field 'params\.params\.strategy': .*expected one of"):
        load_model_config(bad)


def test_when_toml_starts_with_a_bom_then_the_bom_is_named(tmp_path):
    path = _model(tmp_path)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    with pytest.raises(ConfigError, match=r"naive\.toml: starts with a UTF-8 byte-order mark \(BOM\)"):
        load_model_config(path)


def test_when_toml_is_too_large_then_rejected_before_parsing(tmp_path):
    path = _model(tmp_path)
    path.write_text(path.read_text() + "# " + "x" * 300_000 + "\n")
    with pytest.raises(ConfigError, match=r"naive\.toml: larger than 262144 bytes"):
        load_model_config(path)


def test_when_toml_is_nested_too_deeply_then_a_clear_error(tmp_path):
    path = tmp_path / "deep.toml"
    path.write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(ConfigError, match=r"deep\.toml: (nested too deeply|larger than)"):
        load_benchmark_config(path)
    shallow = tmp_path / "deep2.toml"
    shallow.write_text("x = " + "[" * 50_000 + "]" * 50_000 + "\n")  # under the size limit
    with pytest.raises(ConfigError, match=r"deep2\.toml: nested too deeply for a config"):
        load_benchmark_config(shallow)


def test_when_random_walk_is_missing_then_benchmark_is_rejected_saying_so(tmp_path):
    path = _bench(tmp_path, models='["snaive_momentum", "ses"]')
    with pytest.raises(
        ConfigError,
        match=r"tiny\.toml: .*the random walk is mandatory: models must include "
        r"random_walk = 'naive'",
    ):
        load_benchmark_config(path)


def test_when_origins_overlap_then_benchmark_is_rejected(tmp_path):
    path = _bench(tmp_path, stride=2)
    with pytest.raises(ConfigError, match=r"tiny\.toml: .*origins overlap: stride 2 < horizon 3"):
        load_benchmark_config(path)


def test_when_benchmark_has_unknown_field_then_error_names_it(tmp_path):
    path = _bench(tmp_path, extra="shuffle = true")
    with pytest.raises(ConfigError, match=r"tiny\.toml: unknown field 'shuffle'"):
        load_benchmark_config(path)


def test_when_dataset_entry_has_unknown_field_then_error_names_its_location(tmp_path):
    path = _bench(tmp_path)
    path.write_text(path.read_text() + "leak = true\n")
    with pytest.raises(ConfigError, match=r"unknown field 'datasets\.0\.leak'"):
        load_benchmark_config(path)


def test_when_benchmark_names_unknown_model_id_then_error_lists_known_ids(tmp_path):
    _model(tmp_path)
    _model(tmp_path, id="snaive_momentum", forecaster="snaive_momentum")
    (tmp_path / "cfg").mkdir()
    path = _bench(tmp_path / "cfg", models='["naive", "snaive_momentum", "prophet_by_mail"]')
    with pytest.raises(
        ConfigError,
        match=r"tiny\.toml: field 'models': unknown model id 'prophet_by_mail'.*"
        r"known model ids: \['naive', 'snaive_momentum'\]",
    ):
        resolve_benchmark_config(path, models_dir=tmp_path)


def test_when_random_walk_model_is_not_the_naive_forecaster_then_rejected(tmp_path):
    _model(tmp_path, forecaster="drift")
    _model(tmp_path, id="snaive_momentum", forecaster="snaive_momentum")
    (tmp_path / "cfg").mkdir()
    path = _bench(tmp_path / "cfg")
    with pytest.raises(ConfigError, match=r"field 'random_walk': 'naive' must be the tycheon 'naive' forecaster"):
        resolve_benchmark_config(path, models_dir=tmp_path)


def test_committed_benchmark_configs_validate():
    for name in ("small", "full"):
        cfg = load_benchmark_config(Path("benchmarks/configs") / f"{name}.toml")
        assert cfg.random_walk in cfg.models and cfg.production_baseline == "snaive_momentum"
        assert cfg.stride >= cfg.horizon


def test_benchmark_metrics_come_from_the_metric_registry(tmp_path):
    from tycheon.metrics.registry import metric_names

    cfg = load_benchmark_config(_bench(tmp_path))
    assert set(cfg.metrics) <= set(metric_names(ranked=True))
    text = (tmp_path / "tiny.toml").read_text().replace('metrics = ["mase"]', 'metrics = ["mase", "bias"]')
    assert 'metrics = ["mase", "bias"]' in text
    (tmp_path / "tiny.toml").write_text(text)
    with pytest.raises(ConfigError, match=r"metrics \['bias'\] are not ranked leaderboard metrics; available: "):
        load_benchmark_config(tmp_path / "tiny.toml")


def test_verdict_adjustment_and_minimum_cell_are_config_fields(tmp_path):
    cfg = load_benchmark_config(_bench(tmp_path, extra='verdict_adjust = "holm"\nmin_cell = 12'))
    assert (cfg.verdict_adjust, cfg.min_cell) == ("holm", 12)
    with pytest.raises(ConfigError, match="verdict_adjust"):
        load_benchmark_config(_bench(tmp_path, extra='verdict_adjust = "bonferroni"'))
