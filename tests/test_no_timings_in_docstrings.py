"""No machine measurements in the docstrings and comments of tycheon/ and benchmarks/ (issue 39).

A timing or a measured memory peak is a fact about one machine on one day: it goes to
benchmarks/perf/MEASUREMENTS.md (with what was measured, where and how) and to the commit message, and
the docstring keeps the reason. benchmarks/perf/ is not scanned: its docstrings state targets. Sizes
derived from counts ("15.3M rows x 8 B = 117 MB") are arithmetic, not measurements, and may stay.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("tycheon", "benchmarks")
EXCLUDED = (Path("benchmarks") / "perf",)

TIMING = re.compile(r"\b\d+(\.\d+)?(-\d+(\.\d+)?)? ?(ms|s)\b")
"""A duration in seconds or milliseconds: "1.0 s", "0.44-0.65 s", "71 s", "18 ms"."""

MEASURED_MEMORY = re.compile(
    r"\b(held|reached|peak|resident|kept about)\b[^.;]{0,80}?\b\d+(\.\d+)? ?(GiB|GB|MiB|MB)\b"
    r"|\b\d+(\.\d+)? ?(GiB|GB|MiB|MB) more at the peak\b"
)
"""A memory size read off a running process: "held 1.2 GB", "stay resident (about 90 MB", "1 GB more at the
peak"."""

ALLOWED: dict[tuple[str, int], str] = {}
"""(file relative to the repository root, line) -> why the measurement stays there. Empty: none must."""


def _texts(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of every comment (``tokenize``) and every string statement (``ast``: docstrings of
    modules, classes and functions, and the attribute docstrings under assignments) of ``path``."""
    source = path.read_text(encoding="utf-8")
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string
    for node in ast.walk(ast.parse(source, filename=str(path))):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            yield node.lineno, node.value.value


def _measurements(text: str) -> list[str]:
    return [m.group(0) for pattern in (TIMING, MEASURED_MEMORY) for m in pattern.finditer(text)]


def _scanned_files() -> list[Path]:
    files = []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if not any(relative.is_relative_to(excluded) for excluded in EXCLUDED):
                files.append(path)
    return files


def _findings() -> dict[tuple[str, int], list[str]]:
    found: dict[tuple[str, int], list[str]] = {}
    for path in _scanned_files():
        for line, text in _texts(path):
            hits = _measurements(text)
            if hits:
                found.setdefault((path.relative_to(ROOT).as_posix(), line), []).extend(hits)
    return found


def test_no_measurements_in_docstrings_or_comments() -> None:
    found = {key: hits for key, hits in _findings().items() if key not in ALLOWED}
    assert not found, (
        "machine measurements in docstrings/comments (move the numbers to benchmarks/perf/MEASUREMENTS.md "
        "and keep the reason in the text, or add an ALLOWED entry with why): "
        + "; ".join(f"{file}:{line}: {hits}" for (file, line), hits in sorted(found.items()))
    )


def test_allowed_entries_still_hold_a_measurement() -> None:
    stale = sorted(set(ALLOWED) - set(_findings()))
    assert not stale, f"ALLOWED entries with no measurement left (remove them): {stale}"


@pytest.mark.parametrize(
    "text",
    [
        "one model's bands took 1.0 s warm",
        "and take 0.44-0.65 s this way",
        "its re-verified leaderboards took 71 s with them and 47 s without",
        "the min and max took 18 ms each call",
        "one call on the series unit at M5 size held 1.2 GB of them",
        "the temporaries' pages stay resident (about 90 MB for a 10,000-series frame",
        "it kept about 110 MB of freed buffers resident",
        "the peak is two tables again (m5scale: 4.2 GiB for a 2.3 GiB table)",
        "copying every remaining block: 1 GB more at the peak for a score set",
    ],
)
def test_patterns_catch_measurements(text: str) -> None:
    assert _measurements(text)


@pytest.mark.parametrize(
    "text",
    [
        "the whole int64 matrix would be another 488 MB (2000 resamples x 30,490 series x 8 B)",
        "each int64 temporary is 15.3M rows x 8 B = 117 MB at M5 size",
        "row positions and codes kept in it instead of intp (an intp array of 15 million rows is 117 MB)",
        "numpy advises huge pages for every allocation of 4 MiB or more",
        "a 95% band needs 19 errors; 8 origins x 6 steps",
    ],
)
def test_patterns_leave_arithmetic(text: str) -> None:
    assert not _measurements(text)
