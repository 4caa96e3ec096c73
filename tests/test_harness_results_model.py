"""The typed results document: the committed schema is what the models generate, every committed results
version reads through the models and the generated schema, and leaderboards are keyed by name."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from benchmarks import schema as schema_module
from benchmarks.results_io import RESULTS_DIR, read_results, validate_results_file
from benchmarks.results_model import SCHEMA_VERSION, LeaderboardRow, ResultsDocument, TableKey
from benchmarks.schema.__main__ import main as schema_main

COMMITTED = sorted(RESULTS_DIR.glob("*/v*.json"))


def test_the_committed_schema_is_the_one_the_models_generate():
    assert schema_module.SCHEMA_PATH.read_text(encoding="utf-8") == schema_module.schema_text(), (
        "benchmarks/schema/results-v1.schema.json is stale: run `python -m benchmarks.schema` and commit it"
    )
    assert schema_main(["--check"]) == 0


def test_when_a_model_gains_a_field_the_schema_check_fails(monkeypatch, capsys):
    stale = schema_module.schema_text().replace('"verdict_reason"', '"verdict_reason_renamed"', 1)
    monkeypatch.setattr(schema_module, "schema_text", lambda: stale)
    monkeypatch.setattr("benchmarks.schema.__main__.schema_text", lambda: stale)
    assert schema_main(["--check"]) == 1
    assert "is stale" in capsys.readouterr().err


def test_there_are_committed_results_to_check():
    assert [p.stem for p in COMMITTED if p.parent.name == "small"][:4] == ["v0001", "v0002", "v0003", "v0004"]


@pytest.mark.slow  # every committed version through the schema and its score parts' hashes: full's take seconds each
@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_committed_results_version_reads_through_the_models_and_the_generated_schema(path: Path):
    doc = read_results(path)
    assert doc.version == path.stem and doc.name == path.parent.name
    assert doc.leaderboards and doc.competition and doc.intervals
    raw = json.loads(path.read_text(encoding="utf-8"))
    errors = list(jsonschema.Draft202012Validator(schema_module.json_schema_dict()).iter_errors(raw))
    assert errors == []
    assert validate_results_file(path) == []


@pytest.mark.parametrize("path", COMMITTED[:1], ids=lambda p: p.stem)
def test_reading_and_writing_a_committed_version_keeps_every_field(path: Path):
    raw = json.loads(path.read_text(encoding="utf-8"))
    again = ResultsDocument.model_validate(raw).model_dump(mode="json", exclude_unset=True)
    assert again == raw


def test_leaderboards_are_keyed_by_a_named_tuple():
    doc = read_results(COMMITTED[-1])
    lb = doc.leaderboards[0]
    assert lb.key == TableKey(
        dataset=lb.dataset, protocol=lb.protocol, unit=lb.unit, demand_class=lb.demand_class, metric=lb.metric
    )
    assert lb.key.metric == lb.metric and lb.key._replace(unit="total").unit == "total"


def test_a_field_added_to_a_row_later_is_optional_for_older_files():
    optional = {n for n, f in LeaderboardRow.model_fields.items() if not f.is_required()}
    assert {"dm_reason", "verdict_p_se", "verdict_p_crps", "verdict_reason"} <= optional
    assert SCHEMA_VERSION.startswith("1.")


def test_when_a_warning_has_an_unknown_kind_then_the_document_is_refused():
    raw = json.loads(COMMITTED[-1].read_text(encoding="utf-8"))
    raw["warnings"][0]["kind"] = "synthetic-ish"
    with pytest.raises(ValueError, match=r"warnings\.0\.kind"):
        ResultsDocument.model_validate(raw)
