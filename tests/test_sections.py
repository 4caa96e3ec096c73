"""The analysis-section registry (benchmarks.sections): every section is declared once, and the results
model, the schema, the pipeline's order, the restatement and the robustness page are derived from it."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel

import benchmarks.restat
from benchmarks.results_model import Analyses
from benchmarks.schema import SCHEMA_PATH
from benchmarks.sections import SECTIONS, Section, by_key, computed, on_page

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "templates"


@pytest.mark.parametrize("section", SECTIONS, ids=lambda s: s.key)
def test_every_section_declares_its_table_description_and_partial(section: Section):
    assert issubclass(section.table, BaseModel), section.table
    assert section.table.model_config.get("extra") == "forbid"  # results models refuse unknown fields
    assert section.description.strip() and section.description.endswith(".")
    assert section.recompute in typing.get_args(typing.get_type_hints(Section)["recompute"])
    if section.template is not None:
        assert (TEMPLATES / section.template).is_file(), section.template
        assert section.template == f"sections/{section.key}.md.j2"
        assert section.page_position is not None
    if section.combine is None:
        assert {"dataset", "protocol"} <= set(section.table.model_fields), "a per-dataset table names its dataset"


def test_the_analyses_model_has_one_field_per_section_in_registry_order():
    assert list(Analyses.model_fields) == [s.key for s in SECTIONS]
    for s in SECTIONS:
        annotation = Analyses.model_fields[s.key].annotation
        assert annotation == (list[s.table] if s.many else s.table | None), s.key
    assert Analyses().model_dump() == {s.key: [] if s.many else None for s in SECTIONS}


def test_the_committed_schema_lists_every_section_with_its_table():
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    props = schema["$defs"]["Analyses"]["properties"]  # the file's keys are sorted
    assert sorted(props) == sorted(s.key for s in SECTIONS)
    for s in SECTIONS:
        assert s.table.__name__ in schema["$defs"], s.table.__name__


def _known(keys: list[str]) -> list[str]:
    """The keys of the sections of issue 16, in the given order (a new section may go anywhere)."""
    return [
        k for k in keys if k in {"inversion", "dials", "class_winners", "uncertainty", "horizon", "sweeps", "across"}
    ]


def test_sections_run_in_the_pipeline_order_and_show_in_the_page_order():
    # the notes of a dataset keep the order the analyses have always run in; the page its reading order
    assert _known([s.key for s in computed()]) == [
        "inversion",
        "dials",
        "class_winners",
        "horizon",
        "across",
        "uncertainty",
        "sweeps",
    ]
    assert _known([s.key for s in on_page()]) == [
        "inversion",
        "dials",
        "sweeps",
        "class_winners",
        "uncertainty",
        "horizon",
    ]


def test_keys_and_positions_are_unique_and_an_unknown_key_lists_the_known_ones():
    assert len({s.key for s in SECTIONS}) == len(SECTIONS)
    assert len({s.position for s in SECTIONS}) == len(SECTIONS)
    with pytest.raises(KeyError, match="known: .*inversion"):
        by_key("no_such_section")


def test_restat_has_no_hand_list_of_sections_and_carries_only_backtested_ones():
    source = Path(benchmarks.restat.__file__).read_text(encoding="utf-8")
    literals = {
        n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }
    assert not literals & {s.key for s in SECTIONS}, "restat loops over benchmarks.sections"
    assert {s.key for s in SECTIONS if s.recompute == "own_backtests"} == {"dials", "sweeps"}


@pytest.mark.parametrize("first", ["benchmarks.sections", "benchmarks.results_model", "benchmarks.sections.dials"])
def test_the_registry_and_the_results_model_import_in_either_order(first: str):
    code = f"import {first}; from benchmarks.sections import SECTIONS; print(len(SECTIONS))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == len(SECTIONS)


def test_the_robustness_page_includes_every_partial_and_the_dataset_link_names_the_topics():
    page = (TEMPLATES / "robustness.md.j2").read_text(encoding="utf-8")
    assert "{% include partial %}" in page
    for s in on_page():
        assert s.template is not None and s.template not in page  # no hand list on the page either
    from benchmarks.render.builders import registry

    (robustness,) = [t for t in registry.page_types("dataset") if t.key == "robustness"]
    assert callable(robustness.link_text)
    assert robustness.link_text() == "How much the answer moves: " + ", ".join(s.topic for s in on_page() if s.topic)
    topics = [s.topic for s in on_page() if s.topic]
    assert [t for t in topics if t in {"unit inversion", "aggregation dial", "class winners", "horizon"}] == [
        "unit inversion",
        "aggregation dial",
        "class winners",
        "horizon",
    ]
