"""The benchmark manifest agrees with the dataset catalogue: one test per manifest entry, none by hand.

A dataset is declared once, in its loader's table (``FPP3_DATASETS``, ``COMPETITIONS``/``CALENDAR``, the
generator's defaults); the catalogue reads it from there, and ``tycheon datasets hash NAME --entry``
writes the manifest entry from the catalogue and the loaded panel. These tests check that every entry
of benchmarks/datasets.toml is exactly that output, so a new dataset's entry is generated, not typed.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from tycheon.cli import _entry_text, main
from tycheon.data.datasets import load, spec
from tycheon.data.manifest import content_hash, read_manifest

REPO_MANIFEST = Path(__file__).resolve().parents[1] / "benchmarks" / "datasets.toml"
MANIFEST = read_manifest(REPO_MANIFEST)
NAMES = MANIFEST.names()


def _committed_block(name: str) -> str:
    """The entry's lines as committed, from its ``[datasets.NAME]`` header to the next table or the end."""
    text = REPO_MANIFEST.read_text(encoding="utf-8")
    match = re.search(rf"^\[datasets\.{re.escape(name)}\]\n(?:(?!\[)[^\n]+\n)*", text, flags=re.MULTILINE)
    assert match is not None, name
    return match.group(0)


@pytest.mark.parametrize("name", NAMES)
def test_manifest_entry_states_what_the_catalogue_declares(name):
    entry = MANIFEST[name]
    declared = spec(name).manifest_fields()
    assert {key: getattr(entry, key) for key in declared} == declared


@pytest.mark.parametrize("name", NAMES)
def test_catalogue_declarations_are_what_the_loader_produces(name):
    panel = load(name, **MANIFEST[name].options)
    declared = spec(name).manifest_fields()
    assert (panel.freq, panel.season_length, bool(panel.meta["synthetic"])) == (
        declared["frequency"],
        declared["season_length"],
        declared["synthetic"],
    )


@pytest.mark.parametrize("name", NAMES)
def test_hash_entry_prints_the_committed_manifest_entry(name, capsys):
    assert main(["datasets", "hash", name, "--entry", "--manifest", str(REPO_MANIFEST)]) == 0
    assert capsys.readouterr().out == _committed_block(name)


def test_hash_entry_of_several_names_prints_tables_separated_by_a_blank_line(capsys):
    names = ["fpp3_prison", "m3_other"]
    assert main(["datasets", "hash", *names, "--entry", "--manifest", str(REPO_MANIFEST)]) == 0
    out = capsys.readouterr().out
    assert out == "\n".join(_committed_block(n) for n in names)
    assert set(tomllib.loads(out)["datasets"]) == set(names)


def test_hash_entry_of_a_dataset_missing_from_the_manifest_uses_the_loader_defaults(tmp_path, capsys):
    manifest = tmp_path / "datasets.toml"
    manifest.write_text(_committed_block("m3_other"))
    assert main(["datasets", "hash", "fpp3_prison", "--entry", "--manifest", str(manifest)]) == 0
    table = tomllib.loads(capsys.readouterr().out)["datasets"]["fpp3_prison"]
    assert table["options"] == {} and table["sha256"] == content_hash(load("fpp3_prison"))
    assert {k: table[k] for k in spec("fpp3_prison").manifest_fields()} == spec("fpp3_prison").manifest_fields()


def test_when_manifest_options_change_the_frequency_then_hash_entry_refuses_with_code_2(tmp_path, capsys):
    block = _committed_block("synthetic_marketplace")
    manifest = tmp_path / "datasets.toml"
    manifest.write_text(block.replace("seed = 0 }", 'seed = 0, freq = "QS", start = "2021-01-01" }'))
    assert main(["datasets", "hash", "synthetic_marketplace", "--entry", "--manifest", str(manifest)]) == 2
    err = capsys.readouterr().err
    assert "frequency is 'QS' but the catalogue declares 'MS'" in err


@pytest.mark.parametrize(
    "value",
    ['quote " and back\\slash', "tab\tnew\nline", "é ü ∑", 0, -3, 1.0, 2.5e-7, True, False, [1, "a"], {}, {"a b": 1}],
)
def test_entry_values_round_trip_through_toml(value):
    text = _entry_text("x", {"v": value, "nested": {"k": value}})
    assert tomllib.loads(text)["datasets"]["x"] == {"v": value, "nested": {"k": value}}
