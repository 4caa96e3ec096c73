"""Shared types of the results models: the strict base model, the constrained scalars and the table key.

Every model forbids unknown fields and is strict about types (no string-to-number coercion), as the
hand-written schema of results version 1 was. Leaderboard tables are identified by :class:`TableKey`, a
named (dataset, protocol, unit, demand class, metric) tuple, never by position.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_\-]{0,63}$")]
Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
Num = float | None
Prob = Annotated[float, Field(ge=0, le=1)] | None
Status = Literal["ran", "skipped", "failed"]
DemandClass = Literal["all", "smooth", "erratic", "intermittent", "lumpy", "undefined"]
Direction = Literal["better", "worse", "none"]
Verdict = Literal["beats", "indistinguishable", "worse"]
WarningKind = Literal["synthetic", "not_redistributable", "survivorship", "subsample", "model", "other"]
"""What a warning is about: the data's origin (``synthetic``), its licence (``not_redistributable``), a
survivorship bias, a documented subsample, a model that did not run (``model``), or anything else."""

Version = Annotated[str, StringConstraints(pattern=r"^v[0-9]{4}$")]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class TableKey(NamedTuple):
    """What identifies a leaderboard within a results version."""

    dataset: str
    protocol: str
    unit: str
    demand_class: str
    metric: str


# An absolute path in a traceback names the machine that ran it (e.g. /work/fullrun/tycheon/...): a published
# document keeps the part a reader can find, the path inside the repository or inside an installed package.
_REPO_PATH = re.compile(r"(?:/[^\s\"'/]+)+?/((?:tycheon|benchmarks|tests)/[^\s\"']+\.py)")
_PACKAGE_PATH = re.compile(r"(?:/[^\s\"'/]+)+/(site-packages|dist-packages)/")
_STDLIB_PATH = re.compile(r"(?:/[^\s\"'/]+)+/lib/(python3\.\d+)/")


def portable_paths(text: str) -> str:
    """``text`` with absolute file paths made machine-free: a repository file as its path from the
    repository root (``tycheon/backtest/tasks.py``), an installed package's as ``<site-packages>/...``, the
    standard library's as ``<python3.X>/...``."""
    text = _PACKAGE_PATH.sub(lambda m: f"<{m.group(1)}>/", text)
    text = _STDLIB_PATH.sub(lambda m: f"<{m.group(1)}>/", text)
    return _REPO_PATH.sub(lambda m: m.group(1), text)


def _without_nulls(model: type[BaseModel], data: Any) -> Any:
    """``data`` without the null values of ``model``'s optional fields (they default to null)."""
    if not isinstance(data, dict):
        return data
    optional = {k for k, f in model.model_fields.items() if not f.is_required()}
    return {k: v for k, v in data.items() if not (v is None and k in optional)}
