"""Find and validate results files: ``<results>/<name>/<version>.json`` read through the results model.

The renderer trusts nothing it has not validated: a file that breaks the model stops the render with
its path, the JSON location of the first problem and what was found there.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from benchmarks.results_model import ResultsDocument, document_problems
from benchmarks.schema import SCHEMA_PATH

ROOT = Path(__file__).resolve().parents[2]


class ResultsFileError(ValueError):
    """A results file cannot be rendered: unreadable, not JSON, off-schema or misfiled."""


@dataclass(frozen=True)
class Run:
    """One validated results file: benchmark ``name`` at ``version`` (``v0001``...)."""

    name: str
    version: str
    path: Path
    data: ResultsDocument


def load_file(path: Path) -> Run:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise ResultsFileError(f"{path}: cannot read results file: {err}") from err
    except json.JSONDecodeError as err:
        raise ResultsFileError(f"{path}: not valid JSON (line {err.lineno}, column {err.colno}): {err.msg}") from err
    try:
        data = ResultsDocument.model_validate(raw)
    except ValidationError as err:
        problems = document_problems(err)
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        raise ResultsFileError(
            f"{path}: invalid results file at /{problems[0]}{more}; "
            f"see {SCHEMA_PATH.relative_to(ROOT)} for what is accepted"
        ) from err
    if data.name != path.parent.name or data.version != path.stem:
        raise ResultsFileError(
            f"{path}: file says name={data.name!r}, version={data.version!r} but is filed as "
            f"{path.parent.name}/{path.stem}.json; results live at <results>/<name>/<version>.json"
        )
    return Run(name=data.name, version=data.version, path=path, data=data)


def load_results(results_dir: Path) -> list[Run]:
    """Every ``<name>/v*.json`` under ``results_dir``, validated, sorted by (name, version).

    A missing directory means no results yet (an empty list), not an error.
    """
    if not results_dir.exists():
        return []
    if not results_dir.is_dir():
        raise ResultsFileError(f"{results_dir}: results path is not a directory")
    return [load_file(path) for path in sorted(results_dir.glob("*/v*.json"))]
