"""Which model configs a pull request adds, changes or removes, from ``git diff --name-status``.

A submission is model configs only: results are written by the harness, never by a contributor, so a
change under ``benchmarks/results/`` is refused, and ``benchmarks/models/`` holds nothing but
``<id>.toml`` files.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from benchmarks.submit.validate import REFERENCE_MODELS

__all__ = ["ChangeSet", "GitError", "changed_model_configs", "classify"]

MODELS = PurePosixPath("benchmarks/models")
RESULTS = PurePosixPath("benchmarks/results")


class GitError(RuntimeError):
    """``git diff`` could not compare the two revisions (the message carries git's own)."""


@dataclass
class ChangeSet:
    """Model configs to check, configs removed, and reasons the change is not a valid submission."""

    to_check: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def classify(name_status: str) -> ChangeSet:
    """Sort ``git diff --name-status`` lines (``M\\tpath``, ``R100\\told\\tnew``) into a :class:`ChangeSet`."""
    out = ChangeSet()
    for line in name_status.splitlines():
        if not line.strip():
            continue
        status, *paths = line.split("\t")
        kind = status[:1]
        for i, raw in enumerate(paths):
            path = PurePosixPath(raw)
            gone = kind == "D" or (kind == "R" and i == 0)
            if RESULTS in path.parents:
                out.problems.append(
                    f"{raw}: results files are written by the harness after review, never by a pull request; "
                    "remove this change (a submission adds or edits benchmarks/models/<id>.toml only)"
                )
            elif path.parent == MODELS:
                if path.stem in REFERENCE_MODELS and path.suffix == ".toml":
                    out.problems.append(
                        f"{raw}: a reference model (random walk or production baseline) that every "
                        "leaderboard is measured against; a pull request may not add, change or remove it"
                    )
                elif path.suffix != ".toml":
                    if not gone:
                        out.problems.append(f"{raw}: benchmarks/models/ holds only <id>.toml model configs")
                elif gone:
                    out.removed.append(raw)
                else:
                    out.to_check.append(raw)
    return out


def changed_model_configs(base: str, head: str = "HEAD", *, cwd: str | None = None) -> ChangeSet:
    """The :class:`ChangeSet` between two git revisions of the working tree at ``cwd``."""
    cmd = ["git", "diff", "--name-status", "--find-renames", base, head, "--"]
    try:
        done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=True)
    except FileNotFoundError as err:
        raise GitError("git is not installed") from err
    except subprocess.CalledProcessError as err:
        raise GitError(f"`{' '.join(cmd)}` failed: {err.stderr.strip()}") from err
    return classify(done.stdout)
