"""Folders a command owns: it writes only where its marker file proves it wrote before.

Two kinds of ownership:

- :func:`reset_owned_dir`: a folder emptied and rewritten on every run (the renderer's docs folder, a
  submission's work folder). A marker file left by the first run proves ownership; a folder holding other
  files is refused (never deleted), so pointing ``--out``/``--work-dir`` at the wrong place loses nothing.
- :class:`OwnedFolder`: a folder kept across runs (``tycheon evaluate --out``) whose marker is also a
  manifest: the sha256 of every file the command wrote. A run replaces or removes only files the manifest
  lists with their recorded content; any other file (one the user added or edited since) makes the run
  refuse before it writes, naming that file.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from benchmarks.results_io import file_sha256

__all__ = ["OwnedFolder", "reset_owned_dir"]


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


def _files(path: Path) -> list[Path]:
    """Every non-folder entry at or under ``path`` (a link counts as a file: it is never followed)."""
    if path.is_symlink() or path.is_file():
        return [path]
    if not path.is_dir():
        return [path] if os.path.lexists(path) else []
    return sorted(p for p in path.rglob("*") if p.is_symlink() or not p.is_dir())


class OwnedFolder:
    """A folder a command claimed with a manifest marker (see the module docstring).

    Parameters
    ----------
    root : Path
        The folder (resolved by the caller).
    marker : str
        File name of the manifest inside ``root``.
    writer, option : str
        The command and its command-line option, named in every refusal.
    error : type of Exception
        What a refusal raises (the caller's one-line bad-input error).
    """

    def __init__(self, root: Path, *, marker: str, writer: str, option: str, error: type[Exception]) -> None:
        self.root = root
        self.marker = marker
        self.writer = writer
        self.option = option
        self.error = error

    @property
    def manifest(self) -> Path:
        return self.root / self.marker

    def claim(self) -> OwnedFolder:
        """Create the folder with an empty manifest, or accept it when it is empty or holds the marker.

        Raises ``error`` when ``root`` is a file, or a folder with entries but no marker; an ``OSError``
        (read-only parent, full disk) propagates for the caller to report.
        """
        root = self.root
        if os.path.lexists(root) and not root.is_dir():
            raise self.error(
                f"{self.option} {root} is a file, not a folder; point {self.option} at a folder "
                f"(absent, empty, or one {self.writer} wrote before)"
            )
        if root.is_dir() and not self.manifest.is_file():
            entries = sorted(p.name for p in root.iterdir())
            if entries:
                raise self.error(
                    f"{self.option} {root} holds files {self.writer} did not write ({entries[0]!r} and "
                    f"{len(entries) - 1} more; no {self.marker} marker); refusing to write there. Point "
                    f"{self.option} at a new or empty folder, or at one {self.writer} wrote before"
                )
        root.mkdir(parents=True, exist_ok=True)
        if not self.manifest.is_file():
            self._save({})
        return self

    def recorded(self) -> dict[str, str]:
        """The manifest: relative POSIX path -> sha256 of every file the command wrote and still owns."""
        try:
            doc = json.loads(self.manifest.read_text(encoding="utf-8"))
            files = doc["files"]
        except (ValueError, KeyError, TypeError) as err:
            raise self.error(
                f"{self.manifest} is not a manifest {self.writer} wrote ({type(err).__name__}); "
                f"refusing to replace anything in {self.root}. Point {self.option} at a new folder"
            ) from err
        if not isinstance(files, dict):
            raise self.error(f"{self.manifest}: field 'files' is not a mapping; point {self.option} at a new folder")
        return {str(k): str(v) for k, v in files.items()}

    def _rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def check_replaceable(self, paths: Iterable[Path]) -> None:
        """Raise ``error`` unless every file at or under ``paths`` is in the manifest with its recorded
        sha256 (a file the user added, or edited since, is never replaced or removed)."""
        files = self.recorded()
        for path in paths:
            for file in _files(path):
                rel = self._rel(file)
                if file.is_symlink() or not file.is_file() or files.get(rel) != file_sha256(file):
                    why = "was changed after" if rel in files else "was not written by"
                    raise self.error(
                        f"{file} {why} {self.writer}; refusing to replace or remove it. Move it out of "
                        f"{self.root} (or point {self.option} at another folder) and run again"
                    )

    def record(self, paths: Iterable[Path]) -> None:
        """Add every file at or under ``paths`` to the manifest (with its sha256)."""
        files = self.recorded()
        for path in paths:
            for file in _files(path):
                if file.is_file() and not file.is_symlink():
                    files[self._rel(file)] = file_sha256(file)
        self._save(files)

    def remove(self, paths: Iterable[Path]) -> None:
        """Delete ``paths`` (files or folders this run wrote or checked as replaceable) and forget them."""
        files = self.recorded()
        for path in paths:
            for file in _files(path):
                files.pop(self._rel(file), None)
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
        self._save(files)

    def _save(self, files: dict[str, str]) -> None:
        note = f"written by {self.writer}: the files it wrote here (sha256); it replaces only these"
        text = json.dumps({"note": note, "files": dict(sorted(files.items()))}, indent=1) + "\n"
        tmp = self.manifest.with_name(self.manifest.name + ".tmp")
        try:
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, self.manifest)
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
