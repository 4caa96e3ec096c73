"""What a run must hold before it computes and before it writes.

- :func:`results_lock`: one run at a time per results directory. The lock is taken *before* any work, with
  ``flock`` on ``<results>/<name>/.lock``, so a second run refuses at once instead of computing for an hour
  and then failing to write; the kernel releases it when the holder exits, however it exits.
- :func:`ranking_failures`: a run that cannot rank is not a version. If the random walk or the production
  baseline did not run on every dataset, or no leaderboard could be built, the run writes nothing and says
  which models failed where and why.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["CannotRankError", "ResultsLocked", "ranking_failures", "require_ranking", "results_lock"]


class ResultsLocked(RuntimeError):
    """Another run holds the results directory."""


class CannotRankError(RuntimeError):
    """The run computed, but its random walk or production baseline failed or nothing could be ranked: it
    is not a version, so nothing was written (see :func:`ranking_failures`)."""


@contextlib.contextmanager
def results_lock(directory: Path) -> Iterator[Path]:
    """Hold ``directory/.lock`` exclusively for the body; raise :class:`ResultsLocked` when another process
    holds it."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / ".lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as err:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "unknown"
            raise ResultsLocked(
                f"another run (pid {holder}) is writing to {directory}; it holds {path}. "
                "Wait for it to finish; the lock goes when that process ends"
            ) from err
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield path
    finally:
        os.close(fd)  # closing releases the flock


def ranking_failures(doc: Any, *, random_walk: str, production_baseline: str) -> list[str]:
    """Why this results document cannot rank anything (empty when it can).

    Every leaderboard is relative to the random walk and the production baseline, so each must have run on
    every dataset and protocol; and there must be at least one leaderboard or competition table.
    """
    if hasattr(doc, "model_dump"):  # the typed results document
        doc = doc.model_dump(mode="json")
    problems = []
    for model in doc.get("models", []):
        if model.get("id") not in (random_walk, production_baseline):
            continue
        role = "the random walk" if model["id"] == random_walk else "the production baseline"
        for run in model.get("runs", []):
            if run.get("status") != "ran":
                problems.append(
                    f"{role} {model['id']!r} {run.get('status')} on {run.get('dataset')} "
                    f"({run.get('protocol')}): {run.get('reason')}"
                )
    if not doc.get("leaderboards") and not doc.get("competition"):
        problems.append("no leaderboard or competition table could be built (no model produced scores)")
    return problems


def require_ranking(doc: Any, *, random_walk: str, production_baseline: str) -> None:
    """Raise :class:`CannotRankError` (one line naming every failure) when :func:`ranking_failures` finds any."""
    problems = ranking_failures(doc, random_walk=random_walk, production_baseline=production_baseline)
    if problems:
        raise CannotRankError("nothing written; this run cannot rank: " + "; ".join(problems))
