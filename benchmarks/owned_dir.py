"""Folders a command owns: emptied and rewritten on every run, but only if that command wrote them.

A marker file left by the first run proves ownership; a folder holding other files is refused (never
deleted), so pointing ``--out``/``--work-dir`` at the wrong place loses nothing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

__all__ = ["reset_owned_dir"]


def reset_owned_dir(path: Path, *, marker: str, writer: str, option: str, note: str, error: type[Exception]) -> Path:
    """Empty ``path`` (absent, empty, or holding ``marker``), recreate it with the marker and return it.

    Raises ``error`` when ``path`` is a file, or a folder with files but no marker (named ``writer`` and
    the command-line ``option`` that chose it in the message).
    """
    if path.exists():
        if not path.is_dir():
            raise error(f"{path} exists and is not a folder")
        if any(path.iterdir()) and not (path / marker).exists():
            raise error(
                f"{path} holds files {writer} did not write (no {marker} marker); refusing to delete them. "
                f"Point {option} at an empty folder or one {writer} wrote before."
            )
        shutil.rmtree(path)
    path.mkdir(parents=True)
    (path / marker).write_text(note)
    return path
