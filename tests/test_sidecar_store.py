"""Sidecars stored once per content hash (``<name>/sidecars/<sha256>.parquet``): equal score tables share
one file, a stored sidecar is verified and never rewritten, the layout written before the store
(``vNNNN-<sha256>.parquet`` beside the JSON) is still found and read, and a missing or tampered sidecar is
refused with its path named."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks import results_io
from benchmarks.results_io import (
    ResultsValidationError,
    file_sha256,
    find_sidecar,
    sidecar_file,
    validate_results_file,
    write_results,
)
from benchmarks.validate import main as validate_main

FIXTURE = Path(__file__).parent / "fixtures" / "results_example.json"
COMMITTED = Path(__file__).resolve().parents[1] / "benchmarks" / "results"


def _doc() -> dict:
    doc = json.loads(FIXTURE.read_text())
    doc.pop("version")
    doc.pop("sidecar")
    return doc


def _scores(point: float = 1.5) -> pd.DataFrame:
    return pd.DataFrame({"model": ["naive", "ses"], "actual": [1.0, 2.0], "point": [point, np.nan]})


def _sidecar_block(path: Path) -> dict:
    return json.loads(path.read_text())["sidecar"]


def test_two_versions_with_equal_tables_share_one_stored_file(tmp_path):
    first = write_results(_doc(), _scores(), results_dir=tmp_path)
    second = write_results(_doc(), _scores(), results_dir=tmp_path)
    third = write_results(_doc(), _scores(point=2.5), results_dir=tmp_path)
    a, b, c = (_sidecar_block(p) for p in (first, second, third))
    assert a == b and a["sha256"] != c["sha256"]
    stored = sorted(p.name for p in (tmp_path / "small").rglob("*.parquet"))
    assert stored == sorted({f"{a['sha256']}.parquet", f"{c['sha256']}.parquet"})
    shared = tmp_path / "small" / "sidecars" / f"{a['sha256']}.parquet"
    assert sidecar_file(first, a) == sidecar_file(second, b) == shared
    assert all(validate_results_file(p) == [] for p in (first, second, third))
    assert not list(tmp_path.rglob("*.tmp"))


def test_an_existing_stored_sidecar_is_verified_not_rewritten(tmp_path):
    first = write_results(_doc(), _scores(), results_dir=tmp_path)
    stored = sidecar_file(first, _sidecar_block(first))
    before = os.stat(stored)
    write_results(_doc(), _scores(), results_dir=tmp_path)
    after = os.stat(stored)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)


def test_a_tampered_stored_sidecar_stops_the_writer_naming_it_and_is_left_as_it_is(tmp_path):
    first = write_results(_doc(), _scores(), results_dir=tmp_path)
    stored = sidecar_file(first, _sidecar_block(first))
    _scores(point=9.9).to_parquet(stored, index=False)
    tampered = stored.read_bytes()
    with pytest.raises(ResultsValidationError, match=rf"stored sidecar {stored} has sha256 [0-9a-f]{{64}}, not the"):
        write_results(_doc(), _scores(), results_dir=tmp_path)
    assert stored.read_bytes() == tampered
    assert not (tmp_path / "small" / "v0002.json").exists()


def test_a_failed_write_keeps_a_sidecar_another_version_references(tmp_path, monkeypatch):
    first = write_results(_doc(), _scores(), results_dir=tmp_path)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(results_io, "_place_no_clobber", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_results(_doc(), _scores(), results_dir=tmp_path)
    assert validate_results_file(first) == []


def _legacy_folder(tmp_path: Path) -> Path:
    """A results version as written before the store: ``v0001-<sha>.parquet`` beside ``v0001.json``."""
    path = write_results(_doc(), _scores(), results_dir=tmp_path)
    doc = json.loads(path.read_text())
    sha = doc["sidecar"]["sha256"]
    legacy = path.parent / f"v0001-{sha}.parquet"
    (path.parent / doc["sidecar"]["path"]).rename(legacy)
    (path.parent / "sidecars").rmdir()
    doc["sidecar"]["path"] = legacy.name
    path.write_text(results_io.canonical_json(doc))
    return path


def test_the_layout_before_the_store_is_still_read(tmp_path, capsys):
    path = _legacy_folder(tmp_path)
    block = _sidecar_block(path)
    assert sidecar_file(path, block) == path.parent / block["path"]
    assert validate_results_file(path) == []
    assert validate_main([str(path)]) == 0
    # a new version in that folder goes to the store; the old one stays where it is and still reads
    second = write_results(_doc(), _scores(), results_dir=tmp_path)
    assert _sidecar_block(second)["path"] == f"sidecars/{block['sha256']}.parquet"
    assert validate_results_file(path) == [] and validate_results_file(second) == []


def test_a_legacy_json_finds_its_sidecar_moved_into_the_store(tmp_path):
    path = _legacy_folder(tmp_path)
    block = _sidecar_block(path)
    (path.parent / "sidecars").mkdir()
    moved = path.parent / "sidecars" / f"{block['sha256']}.parquet"
    (path.parent / block["path"]).rename(moved)
    assert sidecar_file(path, block) == moved
    assert validate_results_file(path) == []


def test_a_missing_sidecar_is_refused_naming_where_it_was_looked_for(tmp_path):
    path = write_results(_doc(), _scores(), results_dir=tmp_path)
    block = _sidecar_block(path)
    stored = path.parent / block["path"]
    stored.unlink()
    problems = validate_results_file(path)
    assert problems == [f"{path}: sidecar {stored} is missing"]
    with pytest.raises(ResultsValidationError, match=rf"sidecar {stored} is missing"):
        sidecar_file(path, block)
    legacy = _legacy_folder(tmp_path / "old")
    (legacy.parent / _sidecar_block(legacy)["path"]).unlink()
    (problem,) = validate_results_file(legacy)
    assert "is missing (nor " in problem and _sidecar_block(legacy)["path"] in problem


def test_a_tampered_sidecar_is_refused_naming_it_in_either_layout(tmp_path):
    for path in (write_results(_doc(), _scores(), results_dir=tmp_path / "new"), _legacy_folder(tmp_path / "old")):
        stored = sidecar_file(path, _sidecar_block(path))
        _scores(point=9.9).to_parquet(stored, index=False)
        problems = validate_results_file(path)
        assert any(f"sidecar {stored} has sha256" in p and "modified or replaced" in p for p in problems), problems


def test_a_sidecar_path_outside_the_two_layouts_is_refused(tmp_path):
    path = write_results(_doc(), _scores(), results_dir=tmp_path)
    doc = json.loads(path.read_text())
    doc["sidecar"]["path"] = f"../elsewhere/{doc['sidecar']['sha256']}.parquet"
    path.write_text(results_io.canonical_json(doc))
    (problem,) = validate_results_file(path)
    assert "must be 'sidecars/" in problem
    assert find_sidecar(path, sha256="not-a-hash") is None


def test_every_committed_version_finds_its_sidecar_by_hash_and_the_store_holds_each_hash_once():
    versions = sorted(COMMITTED.glob("*/v*.json"))
    assert versions
    for path in versions:
        block = _sidecar_block(path)
        found = sidecar_file(path, block)
        assert found.parent.name == "sidecars" and found.name == f"{block['sha256']}.parquet"
    hashes = {_sidecar_block(p)["sha256"] for p in versions}
    stored = sorted(COMMITTED.glob("*/sidecars/*.parquet"))
    assert sorted(p.stem for p in stored) == sorted(hashes)
    assert not [p for p in COMMITTED.glob("*/v*.parquet")], "a duplicate sidecar is left beside the JSON"


def test_the_submit_seed_copies_the_store(tmp_path):
    from benchmarks.submit.bench import seed_results

    src = tmp_path / "committed"
    path = write_results(_doc(), _scores(), results_dir=src)
    seed_results(src, tmp_path / "work")
    copied = tmp_path / "work" / "small" / path.name
    assert validate_results_file(copied) == []
    assert file_sha256(sidecar_file(copied, _sidecar_block(copied))) == _sidecar_block(path)["sha256"]
    shutil.rmtree(src)


def test_the_site_links_where_a_committed_sidecar_is_stored_now_not_the_path_its_json_recorded():
    from benchmarks.render.load import load_file
    from benchmarks.render.pages import SiteModel

    # the newest committed version written before the store (it records <version>-<sha>.parquet)
    legacy = [p for p in sorted(COMMITTED.glob("small/v*.json")) if f'"path": "{p.stem}-' in p.read_text()]
    assert legacy, "no committed version records a sidecar path from before the store"
    path = legacy[-1]
    run = load_file(path)
    assert run.data.sidecar.path.startswith(f"{path.stem}-")  # written before the store, not rewritten
    linked = SiteModel.stored_sidecar(run)
    assert linked.path == f"sidecars/{run.data.sidecar.sha256}.parquet" and (path.parent / linked.path).is_file()
    assert linked.sha256 == run.data.sidecar.sha256
