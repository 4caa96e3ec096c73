"""Definitions for the methodology page, read from the code itself without importing it.

Docstrings of the public functions in ``tycheon/metrics`` and ``tycheon/stats`` are read with ``ast``
(the renderer never imports library internals), and column meanings come from the descriptions in the
results model (:mod:`benchmarks.results_model`). A module that is missing or has no documented public function is reported as such.
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
