"""Write a validated :class:`~benchmarks.config.BenchmarkConfig` back to TOML.

A submission runs a benchmark config extended by the submitted models; the exact config that ran is written
to a file so that the results' ``config_sha256`` is the hash of what ran, not of the file it came from.
The writer covers the value types the schema allows (strings, numbers, booleans, lists, inline tables of
scalars, arrays of tables) and is checked by reading the file back with the harness's own loader.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from benchmarks.config import BenchmarkConfig, load_benchmark_config

__all__ = ["ConfigWriteError", "write_benchmark_config"]

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


class ConfigWriteError(RuntimeError):
    """The written TOML does not read back as the same config (a bug in the writer, never silent)."""


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key)


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # JSON string escapes are valid TOML basic-string escapes
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        items = [f"{_key(k)} = {_value(v)}" for k, v in value.items() if v is not None]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    raise ConfigWriteError(f"cannot write {type(value).__name__} {value!r} to TOML")


def _table_lines(table: dict[str, Any]) -> list[str]:
    return [f"{_key(k)} = {_value(v)}" for k, v in table.items() if v is not None]


def write_benchmark_config(cfg: BenchmarkConfig, path: str | Path, *, header: str = "") -> Path:
    """Write ``cfg`` to ``path`` as TOML and verify that it loads back to an equal config."""
    path = Path(path)
    data = cfg.model_dump(mode="json")
    arrays = {k: data.pop(k) for k in ("datasets", "competition")}
    lines = [f"# {line}" for line in header.splitlines()] + _table_lines(data)
    for name, tables in arrays.items():
        for table in tables:
            lines += ["", f"[[{name}]]", *_table_lines(table)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    back = load_benchmark_config(path)
    if back.model_dump() != cfg.model_dump():
        raise ConfigWriteError(f"{path} does not read back as the config it was written from")
    return path
