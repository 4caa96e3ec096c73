"""The sktime forecasters a config may name, with the parameters each may set (``sktime_allowlist.toml``).

sktime's registry holds classes that evaluate or import what a string parameter says (``FhPlexForecaster``
passes one to ``eval``), so naming "any registered forecaster" lets a config run code. Here a name is
looked up only in the reviewed list beside this module; each parameter must be listed under its class, of
the listed type, inside the listed range, and a string one of the listed choices. Floats must be finite.
The class is imported from the module the list names, never from anything a caller passes.

Every refusal is a :class:`SktimeAllowListError` naming the estimator, the parameter and what is accepted.
"""

from __future__ import annotations

import difflib
import importlib
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = [
    "ALLOWLIST_PATH",
    "ParamRule",
    "SktimeAllowListError",
    "allowed_class",
    "allowed_estimators",
    "check_params",
    "rules",
]

ALLOWLIST_PATH = Path(__file__).with_name("sktime_allowlist.toml")
_TYPES = ("int", "float", "bool", "str")


class SktimeAllowListError(ValueError):
    """An sktime estimator or parameter that the allow-list does not permit."""


@dataclass(frozen=True)
class ParamRule:
    """What one parameter accepts: a type, an inclusive range (numbers), choices (strings), None or not."""

    type: str
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] | None = None
    nullable: bool = False

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is refused, or None when it is accepted."""
        if value is None:
            return None if self.nullable else "None is not accepted"
        if self.type == "bool":
            return None if isinstance(value, bool) else f"expected a bool, got {type(value).__name__}"
        if self.type == "str":
            if not isinstance(value, str):
                return f"expected one of {list(self.choices or ())}, got {type(value).__name__}"
            return None if value in (self.choices or ()) else f"expected one of {list(self.choices or ())}"
        numeric = (int,) if self.type == "int" else (int, float)
        if isinstance(value, bool) or not isinstance(value, numeric):
            return f"expected {'an int' if self.type == 'int' else 'a number'}, got {type(value).__name__}"
        if not math.isfinite(value):
            return "expected a finite number"
        if (self.min is not None and value < self.min) or (self.max is not None and value > self.max):
            return f"expected a value in [{self.min}, {self.max}]"
        return None


@dataclass(frozen=True)
class _Entry:
    module: str
    params: Mapping[str, ParamRule]
    season_param: str | None = None


@lru_cache(maxsize=1)
def _load() -> dict[str, _Entry]:
    with ALLOWLIST_PATH.open("rb") as fh:
        raw = tomllib.load(fh)
    out = {}
    for name, spec in raw.items():
        rules = {}
        for param, rule in spec.get("params", {}).items():
            if rule.get("type") not in _TYPES:  # a broken list is a bug in the repository, said loudly
                raise SktimeAllowListError(f"{ALLOWLIST_PATH}: {name}.params.{param}: type must be one of {_TYPES}")
            rules[param] = ParamRule(
                type=rule["type"],
                min=rule.get("min"),
                max=rule.get("max"),
                choices=tuple(rule["choices"]) if "choices" in rule else None,
                nullable=bool(rule.get("nullable", False)),
            )
        season = spec.get("season_param")
        if season is not None and season not in rules:
            raise SktimeAllowListError(f"{ALLOWLIST_PATH}: {name}.season_param {season!r} is not a listed parameter")
        out[name] = _Entry(module=spec["module"], params=rules, season_param=season)
    return out


def allowed_estimators() -> list[str]:
    """Sorted class names a config may name."""
    return sorted(_load())


def rules(estimator: str) -> Mapping[str, ParamRule]:
    """The parameter rules of an allowed estimator (raises :class:`SktimeAllowListError` otherwise)."""
    table = _load()
    if not isinstance(estimator, str) or estimator not in table:
        close = difflib.get_close_matches(str(estimator), list(table), n=3, cutoff=0.5)
        hint = f"close matches: {', '.join(close)}; " if close else ""
        raise SktimeAllowListError(
            f"sktime estimator {estimator!r} is not on the allow-list ({hint}allowed: {', '.join(sorted(table))}); "
            f"an estimator joins the list only by a reviewed change to {ALLOWLIST_PATH.name}"
        )
    return table[estimator].params


def season_param(estimator: str) -> str | None:
    """The parameter of ``estimator`` that takes the panel's season length when a config leaves it out
    (the list's ``season_param``; None for estimators where a season length would change the method)."""
    rules(estimator)  # raises for an estimator off the list
    return _load()[estimator].season_param


def check_params(estimator: str, params: Mapping[str, Any] | None) -> None:
    """Refuse an estimator off the list, an unlisted parameter, or a value outside its rule.

    Raises
    ------
    SktimeAllowListError
        The message names the estimator, the parameter and what it accepts.
    """
    allowed = rules(estimator)
    if params is None:
        return
    if not isinstance(params, Mapping):
        raise SktimeAllowListError(f"params of sktime {estimator} must be a mapping, got {type(params).__name__}")
    for name, value in params.items():
        rule = allowed.get(name)
        if rule is None:
            raise SktimeAllowListError(
                f"parameter {name!r} of sktime {estimator} is not on the allow-list; "
                f"allowed: {sorted(allowed) or 'none'}"
            )
        problem = rule.problem(value)
        if problem:
            raise SktimeAllowListError(f"parameter {name!r} = {value!r} of sktime {estimator}: {problem}")


def allowed_class(estimator: str) -> type:
    """The class of an allowed estimator, imported from the module the list names."""
    rules(estimator)
    entry = _load()[estimator]
    cls = getattr(importlib.import_module(entry.module), estimator)
    if not isinstance(cls, type):  # the list is reviewed, so this is a broken list, not an attack
        raise SktimeAllowListError(f"{entry.module}.{estimator} is not a class")
    return cls
