"""Provenance hashes the imported library and the harness by walking their folders."""

from __future__ import annotations

from pathlib import Path

import tycheon
from benchmarks import provenance


def test_the_library_hashed_is_the_one_imported_and_every_source_file_is_in_it():
    assert provenance.LIBRARY_DIR == Path(tycheon.__file__).resolve().parent
    files = provenance.package_files(provenance.LIBRARY_DIR)
    on_disk = {p for p in provenance.LIBRARY_DIR.rglob("*.py") if "__pycache__" not in p.parts}
    assert on_disk <= set(files) and not [p for p in files if p.suffix == ".pyc"]


def test_the_harness_hash_walks_its_modules_and_leaves_out_the_readers():
    files = provenance.package_files(provenance.HARNESS_DIR, skip=provenance.HARNESS_READERS)
    names = {p.relative_to(provenance.HARNESS_DIR).as_posix() for p in files}
    assert {
        "pipeline.py",
        "model_run.py",
        "results_model/__init__.py",
        "results_model/tables.py",
        "config/__init__.py",
        "config/gate.py",
        "cache.py",
        "results_io.py",
    } <= names
    assert not [n for n in names if n.split("/")[0] in provenance.HARNESS_READERS]


def test_a_new_file_in_a_package_changes_its_hash(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "a.py").write_text("x = 1\n")
    before = provenance.files_sha256(package, provenance.package_files(package))
    (package / "sub" / "b.py").write_text("y = 2\n")
    (package / "sub" / "__pycache__").mkdir()
    (package / "sub" / "__pycache__" / "b.cpython-311.pyc").write_bytes(b"\0")
    files = provenance.package_files(package)
    assert [p.name for p in files] == ["a.py", "b.py"]
    assert provenance.files_sha256(package, files) != before
