"""Which model configs a pull request adds, changes or removes, from ``git diff --raw -z``.

A submission is model configs only: every changed path must be ``benchmarks/models/<id>.toml`` (no
subfolder, an id as the schema allows it, a regular file). Anything else (results, which the harness
writes after review; the sktime allow-list; the Makefile; a symlink) is refused with one line naming the
path. git is read with ``-z``: paths arrive NUL-separated and unquoted, so a name with non-ASCII
characters or a ``"`` is seen as it is, never as a C-quoted string that no rule matches.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field

from benchmarks.config import SLUG
from benchmarks.submit.validate import REFERENCE_MODELS
from tycheon.textsafe import for_terminal

__all__ = ["Change", "ChangeSet", "GitError", "changed_model_configs", "classify", "parse_raw"]

MODELS = "benchmarks/models"
_CONFIG = re.compile(rf"^{re.escape(MODELS)}/({SLUG.strip('^$')})\.toml$")
# git's modes for a plain file (and an executable one); 120000 is a symlink, 160000 a submodule
_REGULAR = frozenset({"100644", "100755"})
_NONE = "000000"


class GitError(RuntimeError):
    """``git diff`` could not compare the two revisions (the message carries git's own)."""


@dataclass(frozen=True)
class Change:
    """One record of ``git diff --raw``: the status letter, the modes before and after, the path(s)."""

    status: str
    old_mode: str
    new_mode: str
    paths: tuple[str, ...]


@dataclass
class ChangeSet:
    """Model configs to check, configs removed, and reasons the change is not a valid submission."""

    to_check: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def shown(path: str) -> str:
    """A path as one line of plain text that is also literal markdown: a code span whose fence is longer
    than any run of backticks in it, control characters shown as escapes (the workflow copies these lines
    into the pull request's step summary)."""
    text = for_terminal(path, keep_newlines=False)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}"


def parse_raw(data: bytes) -> list[Change]:
    """Split ``git diff --raw -z`` output: ``:<old mode> <new mode> <old sha> <new sha> <status>`` then one
    path (two for a rename or copy), each field ended by NUL. Undecodable bytes are kept as escapes."""
    fields = data.decode("utf-8", errors="backslashreplace").split("\0")
    out = []
    i = 0
    while i < len(fields) and fields[i]:
        meta = fields[i].lstrip(":").split(" ")
        if len(meta) != 5:
            raise GitError(f"unexpected `git diff --raw -z` record {fields[i]!r}")
        old_mode, new_mode, _, _, status = meta
        count = 2 if status[:1] in "RC" else 1
        out.append(Change(status[:1], old_mode, new_mode, tuple(fields[i + 1 : i + 1 + count])))
        i += 1 + count
    return out


def classify(changes: list[Change]) -> ChangeSet:
    """Sort the records of a diff into a :class:`ChangeSet`: every path outside ``benchmarks/models/<id>.toml``
    is a problem, and so is a reference model, a symlink or anything but a regular file."""
    out = ChangeSet()
    for change in changes:
        for i, path in enumerate(change.paths):
            gone = change.status == "D" or (change.status == "R" and i == 0)
            mode = change.old_mode if gone else change.new_mode
            match = _CONFIG.match(path)
            if match is None:
                results = path.startswith("benchmarks/results/")
                where = "results are written by the harness after review" if results else "nothing else is a submission"
                out.problems.append(
                    f"{shown(path)}: a pull request that submits a model may only add, change or remove "
                    f"benchmarks/models/<id>.toml (no subfolder; id: lower-case letters, digits, _ and -); {where}"
                )
            elif match.group(1) in REFERENCE_MODELS:
                out.problems.append(
                    f"{shown(path)}: a reference model (random walk or production baseline) that every "
                    "leaderboard is measured against; a pull request may not add, change or remove it"
                )
            elif mode not in _REGULAR and mode != _NONE:
                out.problems.append(
                    f"{shown(path)}: not a regular file (git mode {mode}: a symlink or a submodule); a model "
                    "config is a plain TOML file"
                )
            elif gone:
                out.removed.append(path)
            else:
                out.to_check.append(path)
    return out


def changed_model_configs(base: str, head: str = "HEAD", *, cwd: str | None = None) -> ChangeSet:
    """The :class:`ChangeSet` between two git revisions of the working tree at ``cwd``."""
    cmd = ["git", "diff", "--raw", "-z", "--no-abbrev", "--find-renames", base, head, "--"]
    try:
        done = subprocess.run(cmd, cwd=cwd, capture_output=True, check=True)
    except FileNotFoundError as err:
        raise GitError("git is not installed") from err
    except subprocess.CalledProcessError as err:
        stderr = err.stderr.decode("utf-8", errors="backslashreplace").strip()
        raise GitError(f"`{' '.join(cmd)}` failed: {stderr}") from err
    return classify(parse_raw(done.stdout))
