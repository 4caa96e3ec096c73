"""Where configs live and how a config file is read: paths, :class:`ConfigError`, :func:`read_toml` with
its limits, and pydantic's validation errors written as one message that names the file and the field.

Files are read with limits: at most :data:`MAX_CONFIG_BYTES`, UTF-8 without a byte-order mark, nested no
deeper than the TOML parser can follow; each limit is a clear :class:`ConfigError`.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pydantic

from tycheon.textsafe import for_terminal

__all__ = [
    "BENCHMARKS_DIR",
    "CONFIGS_DIR",
    "MAX_CONFIG_BYTES",
    "MODELS_DIR",
    "ConfigError",
    "read_toml",
]

BENCHMARKS_DIR = Path(__file__).resolve().parent.parent
MODELS_DIR = BENCHMARKS_DIR / "models"
CONFIGS_DIR = BENCHMARKS_DIR / "configs"
MAX_CONFIG_BYTES = 256 * 1024
_KINDS = ("tycheon", "sktime")


class ConfigError(ValueError):
    """A config file that cannot be used; the message names the file, the field and what is accepted."""


def _shown(path: Path | str) -> str:
    """A file name as an error message prints it: a contributed name may hold terminal escape sequences."""
    return for_terminal(str(path), keep_newlines=False)


def _format_errors(path: Path, err: pydantic.ValidationError) -> str:
    lines = []
    for e in err.errors():
        parts = [str(p) for p in e["loc"]]
        # a discriminated union adds the tag to the location (source.tycheon.forecaster): drop it
        parts = [p for i, p in enumerate(parts) if not (i > 0 and parts[i - 1] == "source" and p in _KINDS)]
        loc = ".".join(parts) or "(top level)"
        if e["type"] == "extra_forbidden":
            lines.append(f"unknown field {loc!r}: not part of the schema")
        elif e["type"] == "missing":
            lines.append(f"missing required field {loc!r}")
        else:
            lines.append(f"field {loc!r}: {e['msg']}")
    return f"{_shown(path)}: " + "; ".join(lines)


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a config file with limits: size, encoding (UTF-8, no BOM), nesting depth.

    Raises
    ------
    ConfigError
        Missing, too large, with a byte-order mark, not UTF-8, too deeply nested, or not TOML.
    """
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError as err:
        raise ConfigError(f"{_shown(path)}: no such config file") from err
    except OSError as err:
        raise ConfigError(f"{_shown(path)}: cannot be read: {err}") from err
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{_shown(path)}: larger than {MAX_CONFIG_BYTES} bytes; a config is a short TOML file")
    if data.startswith(b"\xef\xbb\xbf"):
        raise ConfigError(f"{_shown(path)}: starts with a UTF-8 byte-order mark (BOM); save it as UTF-8 without a BOM")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(f"{_shown(path)}: not UTF-8 ({err})") from err
    try:
        return tomllib.loads(text)
    except RecursionError as err:
        raise ConfigError(
            f"{_shown(path)}: nested too deeply for a config (arrays or tables inside each other)"
        ) from err
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{_shown(path)}: not valid TOML: {err}") from err
