"""Accept or reject a submitted model config before anything runs.

The strict schema, the registry lookups and the parameter checks are the harness's own
(:func:`benchmarks.config.load_model_config`); this module adds only what needs the *other* model files:
an id or display name that is already taken (display names are compared after Unicode NFKC
normalisation, case folding and removal of invisible characters and whitespace, so a look-alike of an
existing name is taken too), a config that repeats an existing model's source and parameters under a new
name, or one that replaces a reference model (the random walk and the production baseline are the
project's, not a submission's). Every reason names the file and the field.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.config import ConfigError, ModelConfig, load_model_config, read_toml

__all__ = ["REFERENCE_MODELS", "Verdict", "name_key", "validate_submission"]

# Every leaderboard is measured against these; a pull request may not change them.
REFERENCE_MODELS = frozenset({"naive", "snaive_momentum"})

# Something that looks like an import path or a file: what a config may never name (see config.NAME).
_PATH_LIKE = re.compile(r"[./:\\]")


@dataclass
class Verdict:
    """The outcome of validating one file: the config when accepted, else the reasons it was rejected."""

    path: Path
    config: ModelConfig | None = None
    reasons: list[str] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return self.config is not None and not self.reasons


def _raw(path: Path) -> dict[str, Any] | None:
    try:
        return read_toml(path)
    except ConfigError:
        return None


def _path_hint(raw: dict[str, Any] | None) -> str | None:
    source = raw.get("source") if isinstance(raw, dict) else None
    if not isinstance(source, dict):
        return None
    for key in ("forecaster", "estimator"):
        value = source.get(key)
        if isinstance(value, str) and _PATH_LIKE.search(value):
            return (
                f"source.{key} = {value!r} looks like a module or file path; a model config may only name "
                'a forecaster registered in tycheon (kind = "tycheon", forecaster = "<id>") or an sktime '
                'forecaster by its class name (kind = "sktime", estimator = "<ClassName>"), so that a '
                "config can never make the harness import or run code of its choosing"
            )
    return None


def name_key(name: str) -> str:
    """What a display name looks like to a reader: NFKC-normalised, case-folded, without invisible
    characters (format/control categories) or whitespace. Two names with the same key collide."""
    text = unicodedata.normalize("NFKC", name)
    text = "".join(c for c in text if unicodedata.category(c)[0] not in "CZ" and not c.isspace())
    return unicodedata.normalize("NFKC", text.casefold())


def _others(models_dir: Path, path: Path) -> list[tuple[Path, dict[str, Any]]]:
    me = path.resolve()
    out = []
    for other in sorted(models_dir.glob("*.toml")):
        if other.resolve() == me:
            continue
        raw = _raw(other)
        if raw is not None:
            out.append((other, raw))
    return out


def _duplicates(cfg: ModelConfig, path: Path, models_dir: Path) -> list[str]:
    reasons = []
    mine = (cfg.source.model_dump(), dict(cfg.params))
    for other, raw in _others(models_dir, path):
        if raw.get("id") == cfg.id or other.stem == cfg.id:
            reasons.append(
                f"{path}: field 'id': {cfg.id!r} is already the id of {other}; ids are unique (to change "
                "that model, edit its file; to add a model, choose a new id)"
            )
        name = raw.get("display_name")
        if isinstance(name, str) and name_key(name) == name_key(cfg.display_name):
            reasons.append(
                f"{path}: field 'display_name': {cfg.display_name!r} is already used by {other} ({name!r}; "
                "equal after Unicode normalisation, case folding and removal of invisible characters); "
                "display names must tell models apart on the leaderboard"
            )
        if (raw.get("source"), dict(raw.get("params") or {})) == mine:
            reasons.append(
                f"{path}: fields 'source' and 'params': identical to {other} (id {raw.get('id')!r}); a new "
                "model must differ from an existing one in its forecaster or its parameters"
            )
    return reasons


def validate_submission(path: str | Path, *, models_dir: Path) -> Verdict:
    """Validate ``path`` strictly and against the other configs in ``models_dir``.

    Parameters
    ----------
    path : path
        The submitted ``<id>.toml``; it may sit inside ``models_dir`` (a changed or added model) or outside
        it (a draft), in which case its id must not be taken yet.
    models_dir : path
        The folder of model configs the submission joins (``benchmarks/models``).

    Returns
    -------
    Verdict
        ``accepted`` with the validated config, or every reason for rejection.
    """
    path = Path(path)
    verdict = Verdict(path=path)
    if path.suffix != ".toml":
        verdict.reasons.append(f"{path}: a model config is a .toml file named <id>.toml")
        return verdict
    try:
        cfg = load_model_config(path)
    except ConfigError as err:
        hint = _path_hint(_raw(path))
        verdict.reasons.append(f"{err}" + (f" ({hint})" if hint else ""))
        return verdict
    if cfg.id in REFERENCE_MODELS:
        verdict.reasons.append(
            f"{path}: field 'id': {cfg.id!r} is a reference model (the random walk or the production "
            "baseline) that every leaderboard is measured against; a pull request may not change it"
        )
    verdict.reasons.extend(_duplicates(cfg, path, models_dir))
    verdict.config = cfg
    return verdict
