"""Accept or reject a submitted model config before anything runs.

The strict schema, the registry lookups, the parameter checks and bounds, the reserved ids and the
one-script rule for display names are the harness's own (:func:`benchmarks.config.load_model_config`);
this module adds only what needs the *other* model files: an id that is already taken or would share a
site page with another model's, a display name that is already taken (compared after Unicode NFKC
normalisation, case folding, removal of invisible characters and whitespace, and mapping of look-alike
characters by Unicode's confusables data, so a look-alike of an existing name is taken too), a config that
repeats an existing model under a new name (compared by :func:`benchmarks.config.canonical_spec`: defaults
filled in, both sktime routes alike, sktime settings equal to a tycheon forecaster written as it), or one
that replaces a reference model (the random walk and the production baseline are the project's, not a
submission's). Every reason names the file and the field.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.config import ConfigError, ModelConfig, canonical_spec, load_model_config, read_toml
from tycheon.textsafe import for_terminal

__all__ = ["REFERENCE_MODELS", "Verdict", "name_keys", "validate_submission"]

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


def _shown(path: Path) -> str:
    return for_terminal(str(path), keep_newlines=False)


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


@functools.lru_cache(maxsize=4096)
def _prototype(char: str) -> str:
    """One representative of the characters Unicode's confusables data says look like ``char`` (the
    smallest of them), so that every member of a look-alike class maps to the same text."""
    from confusable_homoglyphs import confusables

    found = confusables.confusables_data.get(char)
    if not found:
        return char
    return min([char, *(h["c"] for h in found)])


def _skeleton(text: str) -> str:
    return unicodedata.normalize("NFKC", "".join(_prototype(c) for c in unicodedata.normalize("NFD", text)))


def name_keys(name: str) -> frozenset[str]:
    """What a display name looks like to a reader: NFKC-normalised, without invisible characters
    (format/control categories) or whitespace, with every character replaced by its look-alike class from
    Unicode's confusables data (UTS #39 skeleton: a Cyrillic 'а' is a Latin 'a'), case-folded. The data
    lists look-alikes case by case (Cyrillic 'Т' looks like 'T', Cyrillic 'т' like no Latin letter), so the
    skeleton is taken before and after folding case; two names collide when they share a key."""
    text = unicodedata.normalize("NFKC", name)
    text = "".join(c for c in text if unicodedata.category(c)[0] not in "CZ" and not c.isspace())
    return frozenset({_skeleton(text).casefold(), _skeleton(text.casefold())})


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


def _spec(path: Path, raw: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The canonical spec of another model file, or None when it does not load (it is not compared)."""
    try:
        return canonical_spec(load_model_config(path))
    except (ConfigError, TypeError, ValueError):
        return None


def _duplicates(cfg: ModelConfig, path: Path, models_dir: Path) -> list[str]:
    from benchmarks.render.fmt import slugify

    reasons = []
    mine = canonical_spec(cfg)
    for other, raw in _others(models_dir, path):
        other_id = raw.get("id") if isinstance(raw.get("id"), str) else other.stem
        if other_id == cfg.id or other.stem == cfg.id:
            reasons.append(
                f"{_shown(path)}: field 'id': {cfg.id!r} is already the id of {_shown(other)}; ids are unique (to "
                "change that model, edit its file; to add a model, choose a new id)"
            )
        elif slugify(other_id) == slugify(cfg.id) or slugify(other.stem) == slugify(cfg.id):
            reasons.append(
                f"{_shown(path)}: field 'id': {cfg.id!r} would share its page models/{slugify(cfg.id)}.md with "
                f"{_shown(other)} (id {other_id!r}); choose an id that differs in more than case or punctuation"
            )
        name = raw.get("display_name")
        if isinstance(name, str) and name_keys(name) & name_keys(cfg.display_name):
            reasons.append(
                f"{_shown(path)}: field 'display_name': {cfg.display_name!r} is already used by {_shown(other)} "
                f"({name!r}; equal after Unicode normalisation, case folding, removal of invisible characters "
                "and mapping of look-alike characters); display names must tell models apart on the leaderboard"
            )
        theirs = _spec(other, raw)
        if theirs is not None and theirs == mine:
            reasons.append(
                f"{_shown(path)}: fields 'source' and 'params': identical to {_shown(other)} (id {other_id!r}) "
                f"once defaults are filled in and sktime settings equal to a tycheon forecaster are written as it "
                f"({mine[0]} with {mine[1]}); a new model must differ from an existing one in its forecaster or "
                "its parameters"
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
        verdict.reasons.append(f"{_shown(path)}: a model config is a .toml file named <id>.toml")
        return verdict
    try:
        cfg = load_model_config(path)
    except ConfigError as err:
        hint = _path_hint(_raw(path))
        verdict.reasons.append(f"{err}" + (f" ({hint})" if hint else ""))
        return verdict
    if cfg.id in REFERENCE_MODELS:
        verdict.reasons.append(
            f"{_shown(path)}: field 'id': {cfg.id!r} is a reference model (the random walk or the production "
            "baseline) that every leaderboard is measured against; a pull request may not change it"
        )
    verdict.reasons.extend(_duplicates(cfg, path, models_dir))
    verdict.config = cfg
    return verdict
