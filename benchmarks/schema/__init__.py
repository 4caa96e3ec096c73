"""The published JSON Schema of results files, generated from :mod:`benchmarks.results_model`.

``python -m benchmarks.schema`` rewrites ``results-v1.schema.json`` from the models; ``--check`` exits 1
(naming the file) when the committed schema differs from what the models generate.
"""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.results_model import json_schema

__all__ = ["SCHEMA_PATH", "json_schema_dict", "schema_text"]

SCHEMA_PATH = Path(__file__).resolve().parent / "results-v1.schema.json"


def schema_text() -> str:
    """The schema file's exact bytes as the models generate them (sorted keys, trailing newline)."""
    return json.dumps(json_schema(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def json_schema_dict() -> dict:
    """The generated schema as a dict (what :func:`schema_text` writes)."""
    return json.loads(schema_text())
