"""Results files: the published schema, append-only atomic writes and the validator's sidecar check."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import numpy as np
import pandas as pd
import pytest

from benchmarks import results_io
from benchmarks.results_io import (
    ResultsExistError,
    ResultsValidationError,
    canonical_json,
    strip_volatile,
    validate_document,
    validate_results_file,
    write_results,
)
from benchmarks.validate import main as validate_main
from tests._scores_support import toy_scores

FIXTURE = Path(__file__).parent / "fixtures" / "results_example.json"


def _doc() -> dict:
    doc = json.loads(FIXTURE.read_text())
    doc.pop("version")
    doc.pop("sidecar")
    return doc


def _scores() -> pd.DataFrame:
    return toy_scores(("naive", "ses"), n_series=2, n_origins=1, horizon=1, quantiles=False)


def test_schema_is_valid_draft_2020_12_and_the_example_fixture_validates():
    jsonschema.Draft202012Validator.check_schema(results_io.schema())
    assert validate_document(json.loads(FIXTURE.read_text())) == []


def test_when_a_required_block_is_missing_then_schema_validation_names_it():
    doc = json.loads(FIXTURE.read_text())
    del doc["leaderboards"][0]["tests"]["conservative_cd"]
    doc["models"][0]["runs"][0]["status"] = "crashed"
    problems = validate_document(doc)
    assert "leaderboards/0/tests/conservative_cd: Field required" in problems
    assert any(
        p.startswith("models/0/runs/0/status: Input should be 'ran', 'skipped' or 'failed'") and "'crashed'" in p
        for p in problems
    )


def test_canonical_json_writes_nan_as_null_with_sorted_keys():
    text = canonical_json({"b": float("nan"), "a": np.float64(1.5), "c": [np.int64(2), float("inf")]})
    assert text == '{\n "a": 1.5,\n "b": null,\n "c": [\n  2,\n  null\n ]\n}\n'


def test_strip_volatile_removes_every_timings_and_cache_key_at_any_depth():
    doc = {
        "x": 1,
        "timings": {"t": 2},
        "models": [{"runs": [{"timings": {"fit_seconds": 1}, "support": 3}]}],
        "provenance": {"cache": {"a": "cache"}, "seeds": {"seed": 1}},
    }
    assert strip_volatile(doc) == {"x": 1, "models": [{"runs": [{"support": 3}]}], "provenance": {"seeds": {"seed": 1}}}


def test_write_then_validate_and_versions_are_appended(tmp_path):
    first = write_results(_doc(), _scores(), results_dir=tmp_path)
    second = write_results(_doc(), _scores(), results_dir=tmp_path)
    assert (first.name, second.name) == ("v0001.json", "v0002.json")
    assert validate_results_file(first) == [] and validate_results_file(second) == []
    doc = json.loads(first.read_text())
    assert doc["version"] == "v0001" and doc["scores"]["n_rows"] == 4 and "sidecar" not in doc
    assert all((first.parent / "parts" / f"{p['sha256']}.parquet").is_file() for p in doc["scores"]["parts"])
    assert not list(tmp_path.rglob("*.tmp"))


def test_when_version_exists_then_writer_refuses_and_names_the_path(tmp_path):
    path = write_results(_doc(), _scores(), results_dir=tmp_path)
    before = path.read_bytes()
    with pytest.raises(ResultsExistError, match=rf"results version {path} already exists; versions are append-only"):
        write_results(_doc(), _scores(), results_dir=tmp_path, version="v0001")
    assert path.read_bytes() == before
    assert len(list(path.parent.rglob("*.parquet"))) == len(
        {p["sha256"] for p in json.loads(before)["scores"]["parts"]}
    )


def test_when_document_breaks_the_schema_then_nothing_is_written(tmp_path):
    doc = _doc()
    doc["leaderboards"][0]["rows"][0]["rank"] = 0
    with pytest.raises(
        ResultsValidationError,
        match=r"leaderboards/0/rows/0/rank: Input should be greater than or equal to 1 \(got 0\)",
    ):
        write_results(doc, _scores(), results_dir=tmp_path)
    assert list((tmp_path / doc["name"]).iterdir()) == []


def test_when_interrupted_mid_write_then_no_partial_version_is_left(tmp_path, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(results_io, "_place_no_clobber", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_results(_doc(), _scores(), results_dir=tmp_path)
    assert list((tmp_path / "small").iterdir()) == []


def test_when_a_score_part_is_tampered_then_validator_reports_the_hash_mismatch(tmp_path, capsys):
    path = write_results(_doc(), _scores(), results_dir=tmp_path)
    part = next(path.parent.rglob("*.parquet"))
    part.write_bytes(part.read_bytes()[:-1] + b"X")
    problems = validate_results_file(path)
    assert any("was modified" in p and part.name in p for p in problems)
    assert validate_main([str(path)]) == 1
    assert "INVALID" in capsys.readouterr().out


def test_when_a_score_part_is_missing_then_validator_says_so(tmp_path):
    path = write_results(_doc(), _scores(), results_dir=tmp_path)
    next(path.parent.rglob("*.parquet")).unlink()
    assert any("score part(s) missing" in p for p in validate_results_file(path))
    assert validate_main([str(path)]) == 1


def test_validator_accepts_an_untouched_file(tmp_path):
    doc = _doc()
    # the tables the toy scores give: none (their dataset is not one the config tables), so that every
    # published table is recomputed from the score set and none is excused
    doc["leaderboards"], doc["intervals"], doc["competition"] = [], [], []
    path = write_results(doc, _scores(), results_dir=tmp_path)
    assert validate_main([str(path)]) == 0
