"""Definitions for the methodology page, read from the code itself without importing it.

Docstrings of the public functions in ``tycheon/metrics`` and ``tycheon/stats`` are read with ``ast``
(the renderer never imports library internals), and column meanings come from the descriptions in the
results model (:mod:`benchmarks.results_model`). A module that is missing or has no documented public function is
reported as such.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel


@dataclass(frozen=True)
class Definition:
    module: str
    name: str
    signature: str
    doc: str


@dataclass(frozen=True)
class Package:
    """Definitions found in one library package, or a note saying why there are none."""

    package: str
    definitions: tuple[Definition, ...]
    note: str | None


def _public_functions(path: Path, module: str) -> list[Definition]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            doc = ast.get_docstring(node, clean=True)
            if doc:
                found.append(Definition(module, node.name, f"{node.name}({ast.unparse(node.args)})", doc))
    return found


def read_package(root: Path, package: str) -> Package:
    """Public documented functions of ``package`` (dotted, e.g. ``tycheon.metrics``) under ``root``."""
    folder = root.joinpath(*package.split("."))
    if not folder.is_dir():
        return Package(package, (), f"{package} does not exist in this checkout yet.")
    definitions: list[Definition] = []
    for path in sorted(folder.glob("*.py")):
        if path.name.startswith("_"):
            continue
        try:
            definitions.extend(_public_functions(path, f"{package}.{path.stem}"))
        except SyntaxError as err:
            return Package(package, (), f"{path.relative_to(root)} could not be parsed ({err.msg}, line {err.lineno}).")
    note = None if definitions else f"{package} has no documented public function yet."
    return Package(package, tuple(definitions), note)


def model_columns(model: type[BaseModel]) -> list[tuple[str, str]]:
    """``(field, description)`` for every described field of a results model, in declaration order."""
    return [(name, f.description) for name, f in model.model_fields.items() if f.description]


_GLOSSARY_FIELDS = ("name", "display_name", "kind", "lower_is_better", "scale_column", "definition")


def registry_glossary(root: Path) -> list[dict[str, object]]:
    """Metric records read with ``ast`` from ``tycheon/metrics/registry.py``, for results files that predate
    the ``metric_glossary`` block.

    Only ``MetricSpec(...)`` calls whose name, display name, kind, direction, scale and definition are
    literals are read (the registry's point and probabilistic metrics); specs built from f-strings (the
    interval family) are left out rather than guessed. ``ranked`` is taken as ``lower_is_better`` and
    ``step_loss`` given. Returns ``[]`` when the file is missing or does not parse.
    """
    path = root / "tycheon" / "metrics" / "registry.py"
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError):
        return []
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "MetricSpec"):
            continue
        kwargs = {k.arg: k.value for k in node.keywords if k.arg}
        values = {}
        for key in _GLOSSARY_FIELDS:
            value = kwargs.get(key)
            if not isinstance(value, ast.Constant):
                break
            values[key] = value.value
        else:
            values["ranked"] = bool(values["lower_is_better"]) and "step_loss" in kwargs
            found.append(values)
    return found


def forecaster_docs(root: Path) -> dict[str, str]:
    """``{registered id: class docstring}`` of the built-in forecasters, read with ``ast`` from
    ``tycheon/forecasters/roster/*.py`` (classes decorated ``@register("<id>")``)."""
    found: dict[str, str] = {}
    for path in sorted((root / "tycheon" / "forecasters" / "roster").glob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except SyntaxError:
            continue
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            doc = ast.get_docstring(node, clean=True)
            for deco in node.decorator_list:
                if (
                    isinstance(deco, ast.Call)
                    and isinstance(deco.func, ast.Name)
                    and deco.func.id == "register"
                    and deco.args
                    and isinstance(deco.args[0], ast.Constant)
                    and doc
                ):
                    found[str(deco.args[0].value)] = doc
    return found
