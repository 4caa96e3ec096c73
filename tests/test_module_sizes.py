"""No module of the library or the harness is over 600 lines (issue 39: one room per change).

A module that grows past the limit is split by job (``../shared/STYLE.md``: small modules that each own
one idea); one that must stay whole goes in ``ALLOWED`` with the reason, which a reviewer then reads.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 600
ALLOWED: dict[str, str] = {}  # "path/from/root.py": "why it stays whole"


def _modules() -> list[Path]:
    return sorted(p for package in ("tycheon", "benchmarks") for p in (ROOT / package).rglob("*.py"))


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_is_over_the_limit_unless_allowed_with_a_reason():
    over = {str(p.relative_to(ROOT)): _lines(p) for p in _modules() if _lines(p) > LIMIT}
    assert {path: n for path, n in over.items() if path not in ALLOWED} == {}
    assert {path: why for path, why in ALLOWED.items() if path not in over or not why.strip()} == {}, (
        "an allowed module is back under the limit (drop it from ALLOWED) or gives no reason"
    )


def test_the_walk_finds_both_packages():
    names = {p.relative_to(ROOT).parts[0] for p in _modules()}
    assert names == {"tycheon", "benchmarks"} and len(_modules()) > 100
