"""``python -m benchmarks.submit``: what a model config may name, what is rejected and with which message,
which files a pull request may change, and that the derived benchmark config is written faithfully."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchmarks.config import CONFIGS_DIR, MODELS_DIR, load_benchmark_config
from benchmarks.submit.__main__ import main
from benchmarks.submit.bench import WorkDirError, extend_config, prepare_work_dir
from benchmarks.submit.changes import Change, classify
from benchmarks.submit.tomlout import write_benchmark_config
from tycheon.textsafe import markdown_text

VALID = """\
id = "{id}"
display_name = "{display_name}"
family = "baseline"
licence = "MIT"
contributor = "a contributor"
tags = ["baseline"]
{extra}
[source]
kind = "tycheon"
forecaster = "{forecaster}"

[params]
{params}
"""


def _config(
    folder: Path,
    *,
    id="moving_average_6",
    display_name="Moving average (6)",
    forecaster="moving_average",
    params="window = 6",
    extra="",
    name=None,
) -> Path:
    path = folder / f"{name or id}.toml"
    path.write_text(VALID.format(id=id, display_name=display_name, forecaster=forecaster, params=params, extra=extra))
    return path


@pytest.fixture
def models_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "models"
    folder.mkdir()
    for model in ("naive", "snaive_momentum", "moving_average"):
        shutil.copy(MODELS_DIR / f"{model}.toml", folder)
    return folder


def _check(path: Path, models_dir: Path, capsys) -> tuple[int, str]:
    rc = main(["check", str(path), "--no-run", "--models-dir", str(models_dir)])
    return rc, capsys.readouterr().out


def test_when_config_names_an_existing_forecaster_with_new_params_then_it_is_accepted(models_dir, capsys):
    rc, out = _check(_config(models_dir), models_dir, capsys)
    assert rc == 0, out
    assert "valid" in out and "moving_average_6" in out


def test_when_config_names_an_unregistered_class_then_it_is_rejected_listing_the_registered_ids(models_dir, capsys):
    rc, out = _check(_config(models_dir, forecaster="MyForecaster"), models_dir, capsys)
    assert rc == 1
    assert "rejected" in out and "field 'source.forecaster'" in out
    assert "unknown forecaster id 'MyForecaster'" in out and "moving_average" in out


@pytest.mark.parametrize(
    "kind, key, value",
    [
        ("tycheon", "forecaster", "mypkg.models.MyForecaster"),
        ("tycheon", "forecaster", "mypkg/models.py"),
        ("sktime", "estimator", "sktime.forecasting.naive.NaiveForecaster"),
    ],
)
def test_when_config_names_a_module_path_then_it_is_rejected_before_any_import(models_dir, capsys, kind, key, value):
    path = _config(models_dir)
    path.write_text(
        path.read_text().replace(
            'kind = "tycheon"\nforecaster = "moving_average"', f'kind = "{kind}"\n{key} = "{value}"'
        )
    )
    rc, out = _check(path, models_dir, capsys)
    assert rc == 1
    assert f"field 'source.{key}'" in out
    assert "looks like a module or file path" in out


def test_when_config_has_an_unknown_field_then_it_is_rejected_naming_the_field(models_dir, capsys):
    rc, out = _check(_config(models_dir, extra='homepage = "https://example.org"\n'), models_dir, capsys)
    assert rc == 1
    assert "unknown field 'homepage': not part of the schema" in out


def test_when_a_parameter_has_the_wrong_type_then_it_is_rejected_naming_the_parameter(models_dir, capsys):
    rc, out = _check(_config(models_dir, params='window = "6"'), models_dir, capsys)
    assert rc == 1
    assert "field 'params.window'" in out and "'6'" in out and "int" in out


def test_when_a_parameter_is_unknown_then_it_is_rejected_listing_the_accepted_ones(models_dir, capsys):
    rc, out = _check(_config(models_dir, params="windw = 6"), models_dir, capsys)
    assert rc == 1
    assert "unknown parameter 'windw'" in out and "accepted: ['window']" in out


def test_when_the_id_is_already_taken_then_a_draft_with_that_id_is_rejected(models_dir, tmp_path, capsys):
    drafts = tmp_path / "drafts"
    drafts.mkdir()
    path = _config(drafts, id="naive", display_name="My naive", forecaster="moving_average", params="window = 2")
    rc, out = _check(path, models_dir, capsys)
    assert rc == 1
    assert "field 'id': 'naive' is already the id of" in out and str(models_dir / "naive.toml") in out


def test_when_two_submitted_files_share_an_id_then_both_are_reported(models_dir, tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    pa = _config(a)
    pb = _config(b, display_name="Another name", params="window = 7")
    rc = main(["check", str(pa), str(pb), "--no-run", "--models-dir", str(models_dir)])
    out = capsys.readouterr().out
    assert rc == 1
    assert f"'moving_average_6' is also the id of {pa}" in out


def test_when_the_display_name_is_over_80_characters_then_it_is_rejected(models_dir, capsys):
    rc, out = _check(_config(models_dir, display_name="M" * 81), models_dir, capsys)
    assert rc == 1
    assert "field 'display_name'" in out and "at most 80 characters" in out


def test_a_display_name_of_exactly_80_characters_is_accepted(models_dir, capsys):
    rc, out = _check(_config(models_dir, display_name="M" * 80), models_dir, capsys)
    assert rc == 0, out


def test_when_the_display_name_is_taken_then_it_is_rejected(models_dir, capsys):
    rc, out = _check(_config(models_dir, display_name="naive (RANDOM WALK)"), models_dir, capsys)
    assert rc == 1
    assert "field 'display_name'" in out and "already used by" in out and "naive.toml" in out


def test_when_source_and_params_repeat_an_existing_model_then_it_is_rejected(models_dir, capsys):
    rc, out = _check(_config(models_dir, params=""), models_dir, capsys)
    assert rc == 1
    assert "identical to" in out and "'moving_average'" in out


def test_when_the_file_name_differs_from_the_id_then_it_is_rejected(models_dir, capsys):
    rc, out = _check(_config(models_dir, name="ma6"), models_dir, capsys)
    assert rc == 1
    assert "must equal the file name stem 'ma6'" in out


def test_when_the_file_is_not_toml_then_it_is_rejected(models_dir, tmp_path, capsys):
    path = tmp_path / "model.yaml"
    path.write_text("id: x\n")
    rc, out = _check(path, models_dir, capsys)
    assert rc == 1 and "a model config is a .toml file" in out


def test_rejections_are_appended_to_the_summary_file(models_dir, tmp_path, capsys):
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier step\n")
    rc = main(
        [
            "check",
            str(_config(models_dir, params='window = "6"')),
            "--no-run",
            "--models-dir",
            str(models_dir),
            "--summary",
            str(summary),
        ]
    )
    capsys.readouterr()
    text = summary.read_text()
    assert rc == 1 and text.startswith("earlier step\n") and markdown_text("field 'params.window'") in text


def test_when_a_submission_replaces_the_random_walk_then_the_run_is_refused(models_dir):
    from benchmarks.config import ConfigError, load_model_config

    path = _config(models_dir, id="naive", display_name="Naive", params="window = 2")
    with pytest.raises(ConfigError, match="must stay the tycheon 'naive' forecaster"):
        extend_config(CONFIGS_DIR / "small.toml", [load_model_config(path)], models_dir=MODELS_DIR)


def test_a_submitted_model_joins_the_roster_after_the_configured_models(models_dir):
    from benchmarks.config import load_model_config

    new = load_model_config(_config(models_dir))
    _, cfg, models = extend_config(CONFIGS_DIR / "small.toml", [new], models_dir=MODELS_DIR)
    small = load_benchmark_config(CONFIGS_DIR / "small.toml")
    assert list(cfg.models) == [*small.models, "moving_average_6"]
    assert list(models) == list(cfg.models) and models["moving_average_6"] == new


@pytest.mark.parametrize("name", ["small", "full"])
def test_the_derived_config_file_reads_back_as_the_config_that_ran(tmp_path, name):
    cfg = load_benchmark_config(CONFIGS_DIR / f"{name}.toml")
    path = write_benchmark_config(cfg, tmp_path / f"{name}.toml", header="derived")
    assert load_benchmark_config(path) == cfg
    assert path.read_text().startswith("# derived\n")


def test_the_work_folder_is_wiped_only_if_this_command_wrote_it(tmp_path):
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(WorkDirError, match="refusing to delete them"):
        prepare_work_dir(foreign)
    assert (foreign / "notes.txt").exists()
    ours = prepare_work_dir(tmp_path / "ours")
    (ours / "old.json").write_text("{}")
    prepare_work_dir(ours)
    assert not (ours / "old.json").exists()


def diff(text: str) -> list[Change]:
    """``git diff --raw`` records from ``STATUS\tPATH[\tPATH]`` lines (regular files)."""
    out = []
    for line in text.splitlines():
        status, *paths = line.split("\t")
        old = "000000" if status[0] == "A" else "100644"
        new = "000000" if status[0] == "D" else "100644"
        out.append(Change(status[0], old, new, tuple(paths)))
    return out


def test_a_diff_yields_added_changed_and_renamed_configs_and_lists_removed_ones():
    changes = classify(
        diff(
            "A\tbenchmarks/models/new.toml\nM\tbenchmarks/models/ses.toml\n"
            "R090\tbenchmarks/models/old.toml\tbenchmarks/models/renamed.toml\n"
            "D\tbenchmarks/models/gone.toml\n"
        )
    )
    assert changes.to_check == [
        "benchmarks/models/new.toml",
        "benchmarks/models/ses.toml",
        "benchmarks/models/renamed.toml",
    ]
    assert changes.removed == ["benchmarks/models/old.toml", "benchmarks/models/gone.toml"]
    assert changes.problems == []


def test_when_a_diff_touches_results_or_puts_code_in_models_then_it_is_refused():
    changes = classify(
        diff("A\tbenchmarks/results/small/v0009.json\nA\tbenchmarks/models/hook.py\nA\tbenchmarks/models/ok.toml\n")
    )
    assert changes.to_check == ["benchmarks/models/ok.toml"]
    assert len(changes.problems) == 2
    assert "results are written by the harness after review" in changes.problems[0]
    assert changes.problems[1].startswith("` benchmarks/models/hook.py `: a pull request that submits a model may only")
