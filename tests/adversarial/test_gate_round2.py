"""Second round of probes on the submission gate (issue 38): reserved and colliding ids, unbounded
parameters, a ``changed`` gate that git's path quoting let through, look-alike names and duplicate models,
markdown in the step summary and escape sequences on the terminal."""

from __future__ import annotations

import inspect
import os
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

import benchmarks.submit.__main__ as submit_cli
from benchmarks.config import (
    _ALLOW_LISTED,
    CONTRIBUTED_PARAMS,
    MODELS_DIR,
    ConfigError,
    load_model_config,
    site_pages_under_models,
)
from benchmarks.render.pages import SiteModel
from benchmarks.submit.summary import rejection_summary, results_summary
from benchmarks.submit.validate import validate_submission
from tycheon.forecasters import registry

SES = 'kind = "tycheon"\nforecaster = "ses"'
LGBM = 'kind = "tycheon"\nforecaster = "lightgbm_global"'
MA = 'kind = "tycheon"\nforecaster = "moving_average"'


def _check(path: Path, bench, *extra: str) -> int:
    return submit_cli.main(["check", str(path), "--models-dir", str(bench.models), *extra])


def _real_check(path: Path, bench, tmp_path: Path) -> int:
    config = bench.config(["naive", "snaive_momentum"])
    return _check(
        path,
        bench,
        "--config",
        str(config),
        "--work-dir",
        str(tmp_path / "work"),
        "--results-dir",
        str(bench.results),
        "--cache-dir",
        str(bench.cache),
    )


# ---------------------------------------------------------------------------------------- 1. page paths
def test_the_reserved_ids_are_read_from_the_renderer():
    assert site_pages_under_models() == {"models/index.md"}
    assert SiteModel.model_page("index") in site_pages_under_models()


def test_an_id_whose_page_is_the_models_index_is_refused_by_the_loader_and_by_check(bench, capsys):
    path = bench.model("index", SES, "alpha = 0.5", name="Index smoothing")
    with pytest.raises(
        ConfigError,
        match=r"index\.toml: field 'id': Value error, 'index' is reserved: the site already writes models/index\.md "
        r"\(reserved ids: \['index'\]\)",
    ):
        load_model_config(path)
    assert _check(path, bench, "--no-run") == 1
    assert "'index' is reserved: the site already writes models/index.md" in capsys.readouterr().out


@pytest.mark.parametrize("model_id", ["a--b", "ses-"])
def test_an_id_that_is_not_its_own_page_name_is_refused(bench, model_id):
    path = bench.model(model_id, SES, "alpha = 0.5", name=f"Smoothing {model_id}")
    with pytest.raises(ConfigError, match=rf"field 'id': Value error, '{model_id}' would be published as models/"):
        load_model_config(path)


@pytest.mark.parametrize("model_id", ["Ses_X", "naïve_x", "ses\u0430"])
def test_ids_are_lower_case_ascii_slugs(bench, model_id):
    path = bench.model(model_id, SES, "alpha = 0.5", name="Something new")
    with pytest.raises(ConfigError, match=r"field 'id': String should match pattern"):
        load_model_config(path)


def test_ids_that_differ_in_underscore_and_hyphen_get_different_pages(bench):
    a = validate_submission(bench.model("ses_x", SES, "alpha = 0.5", name="SES x"), models_dir=bench.models)
    b = validate_submission(bench.model("ses-x", SES, "alpha = 0.6", name="SES y"), models_dir=bench.models)
    assert a.accepted and b.accepted, a.reasons + b.reasons
    assert SiteModel.model_page("ses_x") != SiteModel.model_page("ses-x")


# ------------------------------------------------------------------------------------------- 2. bounds
@pytest.mark.parametrize(
    ("params", "field", "accepted"),
    [
        ("n_lags = 500000", "n_lags", "an integer in [1, 400]"),
        ("num_leaves = 100000", "num_leaves", "an integer in [2, 256]"),
        ("n_estimators = 10000000", "n_estimators", "an integer in [1, 2000]"),
    ],
)
def test_an_unbounded_parameter_is_refused_naming_file_field_value_and_range(bench, capsys, params, field, accepted):
    path = bench.model("big_lgbm", LGBM, params, name="Big LightGBM")
    value = params.split(" = ")[1]
    expected = (
        f"{path}: field 'params.{field}': {value} is out of range for tycheon forecaster 'lightgbm_global'; "
        f"accepted: {accepted} (leave it out for the default)"
    )
    with pytest.raises(ConfigError) as err:
        load_model_config(path)
    assert str(err.value) == expected
    assert _check(path, bench, "--no-run") == 1
    assert expected in capsys.readouterr().out


def test_every_parameter_of_every_registered_forecaster_has_a_documented_bound():
    for forecaster in registry.available():
        signature = inspect.signature(registry.get(forecaster).__init__).parameters
        names = {n for n, p in signature.items() if n != "self" and p.kind is not p.VAR_KEYWORD}
        if forecaster == "sktime":
            names -= _ALLOW_LISTED
        bounds = CONTRIBUTED_PARAMS.get(forecaster, {})
        assert names == set(bounds), (forecaster, names ^ set(bounds))
        for bound in bounds.values():
            assert bound.choices if bound.type == "str" else (bound.min is not None and bound.max is not None)


def test_every_numeric_parameter_of_the_sktime_allow_list_has_both_bounds():
    from tycheon.forecasters.roster.sktime_allowlist import allowed_estimators, rules

    for estimator in allowed_estimators():
        for name, rule in rules(estimator).items():
            if rule.type in ("int", "float"):
                assert rule.min is not None and rule.max is not None, (estimator, name)


def test_a_parameter_without_a_bound_is_refused(bench, monkeypatch):
    monkeypatch.setitem(CONTRIBUTED_PARAMS, "ses", {})
    with pytest.raises(ConfigError, match=r"field 'params\.alpha': tycheon forecaster 'ses' takes no 'alpha'"):
        load_model_config(bench.model("ses_9", SES, "alpha = 0.5", name="SES 9"))


# ----------------------------------------------------------------------------------- 3. `submit changed`
def _git(repo: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "repo"
    (root / "benchmarks" / "models").mkdir(parents=True)
    (root / "benchmarks" / "results" / "small").mkdir(parents=True)
    (root / "tycheon").mkdir()
    shutil.copy(MODELS_DIR / "ses.toml", root / "benchmarks" / "models")
    (root / "Makefile").write_text("test:\n\tpytest\n")
    (root / "tycheon" / "sktime_allowlist.toml").write_text("[NaiveForecaster]\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    monkeypatch.setattr(submit_cli, "ROOT", root)
    return root


def _changed(repo: Path, capsys, files: dict[str, str]) -> tuple[int, str, str]:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "submission")
    rc = submit_cli.main(["changed", "--base", "HEAD^1"])
    out, err = capsys.readouterr()
    return rc, out, err


def test_changed_sees_quoted_names_subfolders_and_every_file_outside_the_models(repo, capsys):
    hostile = {
        "benchmarks/results/small/v0009-é.json": "{}",
        'benchmarks/results/small/v"0010.json': "{}",
        "benchmarks/models/sub/x.toml": "",
        "Makefile": "test:\n\techo owned\n",
        "tycheon/sktime_allowlist.toml": "[FhPlexForecaster]\n",
    }
    rc, out, err = _changed(repo, capsys, {**hostile, "benchmarks/models/mine.toml": ""})
    assert rc == 1
    assert out.splitlines() == ["benchmarks/models/mine.toml"]
    lines = err.splitlines()
    assert len(lines) == len(hostile)
    for path in hostile:
        assert any(line.startswith(f"rejected: ` {path} `: a pull request that submits a model") for line in lines), (
            path,
            lines,
        )


def test_changed_accepts_a_plain_model_config(repo, capsys):
    rc, out, err = _changed(repo, capsys, {"benchmarks/models/mine.toml": ""})
    assert (rc, out, err) == (0, "benchmarks/models/mine.toml\n", "")


def test_changed_shows_an_escape_sequence_in_a_file_name_as_text(repo, capsys):
    rc, out, err = _changed(repo, capsys, {"benchmarks/models/\x1b]52;c;ZXZpbA==\x07.toml": ""})
    assert rc == 1 and out == ""
    assert "\x1b" not in err and "\x07" not in err
    assert err.startswith("rejected: ` benchmarks/models/\\x1b]52;c;ZXZpbA==\\x07.toml `:")


# ------------------------------------------------------------------------------ 4. look-alikes, duplicates
def test_a_display_name_mixing_cyrillic_into_latin_is_refused(bench, capsys):
    path = bench.model("lookalike", SES, "alpha = 0.5", name="N\u0430ive (random walk)")
    with pytest.raises(ConfigError, match=r"field 'display_name': Value error, mixes letters of several scripts "):
        load_model_config(path)
    assert _check(path, bench, "--no-run") == 1
    assert "mixes letters of several scripts (CYRILLIC, LATIN)" in capsys.readouterr().out


def test_a_display_name_written_in_look_alike_letters_of_one_script_is_taken(bench):
    bench.model("ets_a", SES, "alpha = 0.4", name="ETS")
    verdict = validate_submission(
        bench.model("ets_b", SES, "alpha = 0.6", name="\u0415\u0422\u0405"), models_dir=bench.models
    )
    assert any("field 'display_name'" in r and "is already used by" in r and "ets_a.toml" in r for r in verdict.reasons)


def test_a_model_with_its_default_written_out_is_the_same_model(bench):
    shutil.copy(MODELS_DIR / "moving_average.toml", bench.models)
    verdict = validate_submission(bench.model("ma_three", MA, "window = 3", name="MA three"), models_dir=bench.models)
    assert any(
        "fields 'source' and 'params': identical to" in r and "moving_average.toml" in r and "{'window': 3}" in r
        for r in verdict.reasons
    ), verdict.reasons


@pytest.mark.parametrize(
    ("copied", "source", "params"),
    [
        ("sktime_theta", 'kind = "sktime"\nestimator = "ThetaForecaster"', "deseasonalize = true"),
        ("sktime_theta", 'kind = "tycheon"\nforecaster = "sktime"', 'estimator = "ThetaForecaster"'),
        (
            "moving_average",
            'kind = "sktime"\nestimator = "NaiveForecaster"',
            'strategy = "mean"\nwindow_length = 3',
        ),
        ("ses", 'kind = "tycheon"\nforecaster = "ses"', "alpha = 0.3"),
    ],
)
def test_a_model_already_shipped_is_refused_through_any_route(bench, copied, source, params):
    pytest.importorskip("sktime")
    shutil.copy(MODELS_DIR / f"{copied}.toml", bench.models)
    verdict = validate_submission(bench.model("again", source, params, name="Brand new"), models_dir=bench.models)
    assert any(
        "identical to" in r and f"{copied}.toml" in r and "once defaults are filled in" in r for r in verdict.reasons
    ), verdict.reasons


# ------------------------------------------------------------------------------------ 5. markdown output
HOSTILE_MD = "![x](http://evil) [click](http://evil) <img src=x>"
HOSTILE_FILE = "![x](evil) [click](evil) <img src=x>"  # no '/' in a file name


def _no_markup(text: str) -> None:
    assert "](" not in text and "<img" not in text and "![" not in text


def test_contributor_text_in_a_rejection_is_literal_markdown_in_the_step_summary(bench, tmp_path, capsys):
    summary = tmp_path / "summary.md"
    path = tmp_path / f"{HOSTILE_FILE}.toml"
    path.write_text((bench.models / "ses.toml").read_text())
    assert _check(path, bench, "--no-run", "--summary", str(summary)) == 1
    text = summary.read_text()
    _no_markup(text)
    assert "\\!\\[x\\]\\(evil\\) \\[click\\]\\(evil\\) &lt;img src=x&gt;" in text
    assert HOSTILE_FILE in capsys.readouterr().out  # the terminal shows it as it is


def test_a_display_name_in_the_results_summary_is_literal_markdown():
    doc = SimpleNamespace(
        name="adv",
        version="v0001",
        config={"random_walk": "naive", "production_baseline": "snaive_momentum", "alpha": 0.05},
        models=[SimpleNamespace(id="mine", display_name=HOSTILE_MD, runs=[])],
        leaderboards=[],
        competition=[],
    )
    text = results_summary(doc, ["mine"], accepted=True, results_path="r.json", site_path="site")
    _no_markup(text)
    assert "### \\!\\[x\\]\\(http://evil\\)" in text


def test_a_rejection_reason_in_markdown_is_escaped():
    verdict = SimpleNamespace(path=Path("m.toml"), accepted=False, reasons=[f"m.toml: field 'x': {HOSTILE_MD!r}"])
    _no_markup(rejection_summary([verdict]))


# ------------------------------------------------------------------------------------ 6. terminal output
OSC52 = "\x1b]52;c;ZXZpbA==\x07"


def test_escape_sequences_in_a_file_name_are_shown_not_run(bench, tmp_path, capsys):
    path = tmp_path / f"{OSC52}\x1b[2J.toml"
    path.write_text((bench.models / "ses.toml").read_text())
    with pytest.raises(ConfigError) as err:
        load_model_config(path)
    assert "\x1b" not in str(err.value) and "\\x1b]52;c;ZXZpbA==\\x07\\x1b[2J.toml" in str(err.value)
    assert _check(path, bench, "--no-run") == 1
    out, errs = capsys.readouterr()
    assert "\x1b" not in out + errs and "\x07" not in out + errs
    assert "\\x1b[2J.toml" in out


def test_escape_sequences_in_an_id_or_display_name_are_refused_and_not_printed(bench, tmp_path, capsys):
    path = bench.models / "osc.toml"
    path.write_text(
        'id = "osc\\u001b]52;c;ZXZpbA==\\u0007"\ndisplay_name = "Clear\\u001b[2J"\nfamily = "test"\n'
        'licence = "MIT"\ncontributor = "tests"\n[source]\nkind = "tycheon"\nforecaster = "ses"\n'
    )
    assert _check(path, bench, "--no-run") == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "field 'id': String should match pattern" in out
    assert "field 'display_name': Value error, contains invisible or control characters (U+001B)" in out


# ------------------------------------------------------------------------- --no-run and a real check agree
@pytest.mark.parametrize(
    ("model_id", "source", "params", "name"),
    [
        ("index", SES, "alpha = 0.5", "Index smoothing"),
        ("big_lgbm", LGBM, "n_lags = 500000", "Big LightGBM"),
        ("lookalike", SES, "alpha = 0.5", "N\u0430ive (random walk)"),
        ("ses_again", SES, "alpha = 0.3", "SES again"),
    ],
)
def test_a_real_check_refuses_what_no_run_refuses_and_writes_nothing(bench, tmp_path, model_id, source, params, name):
    path = bench.model(model_id, source, params, name=name)
    before = bench.written()
    assert _check(path, bench, "--no-run") == 1
    assert _real_check(path, bench, tmp_path) == 1
    assert bench.written() == before
