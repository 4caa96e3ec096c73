"""Find and validate results files: ``<results>/<name>/<version>.json`` against the harness's schema.

The renderer trusts nothing it has not validated: a file that breaks the schema stops the render with
its path, the JSON location of the first problem and what the schema accepts there.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from benchmarks.results_io import SCHEMA_PATH

ROOT = Path(__file__).resolve().parents[2]


class ResultsFileError(ValueError):
    """A results file cannot be rendered: unreadable, not JSON, off-schema or misfiled."""


@dataclass(frozen=True)
class Run:
    """One validated results file: benchmark ``name`` at ``version`` (``v0001``...)."""

    name: str
    version: str
    path: Path
    data: dict[str, Any]


def load_schema(path: Path = SCHEMA_PATH) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise ResultsFileError(f"cannot read the results schema {path}: {err}") from err


def _location(error: jsonschema.ValidationError) -> str:
    return "/" + "/".join(str(part) for part in error.absolute_path)


def validate(data: Any, *, schema: dict[str, Any], path: Path) -> None:
    """Raise :class:`ResultsFileError` naming the first schema violation (by JSON pointer) in ``data``."""
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(data), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    if errors:
        first = jsonschema.exceptions.best_match(errors)
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        raise ResultsFileError(
            f"{path}: invalid results file at {_location(first)}: {first.message}{more}; "
            f"see {SCHEMA_PATH.relative_to(ROOT)} for what is accepted"
        )


def load_file(path: Path, *, schema: dict[str, Any]) -> Run:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise ResultsFileError(f"{path}: cannot read results file: {err}") from err
    except json.JSONDecodeError as err:
        raise ResultsFileError(f"{path}: not valid JSON (line {err.lineno}, column {err.colno}): {err.msg}") from err
    validate(data, schema=schema, path=path)
    if data["name"] != path.parent.name or data["version"] != path.stem:
        raise ResultsFileError(
            f"{path}: file says name={data['name']!r}, version={data['version']!r} but is filed as "
            f"{path.parent.name}/{path.stem}.json; results live at <results>/<name>/<version>.json"
        )
    return Run(name=data["name"], version=data["version"], path=path, data=data)


def load_results(results_dir: Path, *, schema: dict[str, Any] | None = None) -> list[Run]:
    """Every ``<name>/v*.json`` under ``results_dir``, validated (against ``schema``, default the
    published one), sorted by (name, version).

    A missing directory means no results yet (an empty list), not an error.
    """
    if not results_dir.exists():
        return []
    if not results_dir.is_dir():
        raise ResultsFileError(f"{results_dir}: results path is not a directory")
    schema = load_schema() if schema is None else schema
    paths = sorted(results_dir.glob("*/v*.json"))
    return [load_file(path, schema=schema) for path in paths]
