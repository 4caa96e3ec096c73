"""Layers without back-arrows (DESIGN.md, Boundaries): every import of every library module is read with
``ast`` and checked against the layer it may use. A new upward import fails here, naming the file and line.

Layers, lowest first: neutral (``errors``, ``_validate``, ``_codes``, ``_frames``, ``contract``, ``_typing``,
``_version``) -> ``data`` / ``forecasters`` / ``metrics`` -> ``stats`` -> ``backtest`` -> ``analysis`` ->
``testing`` and the front doors (``cli``, the public ``__init__``). ``stats`` and ``backtest`` do not import
each other: the engine writes score sets, the tests read them. The library never imports the harness (``benchmarks``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "tycheon"
NEUTRAL = {"errors", "_validate", "_codes", "_frames", "contract", "_typing", "_version", "textsafe"}
ALLOWED: dict[str, set[str]] = {
    "neutral": NEUTRAL,
    "data": NEUTRAL | {"data"},
    "forecasters": NEUTRAL | {"forecasters"},
    "metrics": NEUTRAL | {"metrics"},
    "stats": NEUTRAL | {"metrics", "stats"},
    "backtest": NEUTRAL | {"data", "forecasters", "metrics", "backtest"},
    "analysis": NEUTRAL | {"data", "metrics", "stats", "backtest", "analysis"},
    "testing": NEUTRAL | {"data", "forecasters", "metrics", "stats", "backtest", "analysis", "testing"},
}
# The one documented exception: the forecaster registry imports the roster inside a function, so that
# registering the built-in forecasters (roster -> registry) does not make a cycle at import time.
EXCEPTIONS = {("forecasters/registry.py", "tycheon.forecasters.roster")}
# the front doors may import every layer (never the harness): the public __init__, the command line, the
# user-data front door tycheon.evaluation, and tycheon._harness, the one documented hand-over that reaches
# the harness lazily by name (load_harness -> importlib.import_module("benchmarks.evaluate"), no import
# statement) when results or a site are asked for
TOP = {"__init__", "cli", "evaluation", "_harness"}


def _layer(rel: Path) -> str:
    head = rel.parts[0].removesuffix(".py")
    if head in NEUTRAL:
        return "neutral"
    return head


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "tycheon":  # from tycheon import metrics
                found += [(node.lineno, f"tycheon.{a.name}") for a in node.names]
            else:
                found.append((node.lineno, node.module))
    return found


def violations(rel: Path, imports: list[tuple[int, str]]) -> list[str]:
    """The imports of the module at ``rel`` (relative to ``tycheon/``) that break the layering."""
    layer = _layer(rel)
    out = []
    for line, name in imports:
        top = name.split(".")[0]
        if top == "benchmarks":
            out.append(f"tycheon/{rel}:{line} imports the harness ({name})")
            continue
        if top != "tycheon" or layer in TOP or (rel.as_posix(), name) in EXCEPTIONS:
            continue
        parts = name.split(".")
        target = "neutral" if len(parts) == 1 else ("neutral" if parts[1] in NEUTRAL else parts[1])
        allowed = ALLOWED[layer]
        ok = target == "neutral" if layer == "neutral" else (target == "neutral" or target in allowed)
        if not ok:
            out.append(f"tycheon/{rel}:{line} ({layer}) imports {name} ({target})")
        elif target != layer and target != "neutral" and any(p.startswith("_") for p in parts[2:]):
            out.append(f"tycheon/{rel}:{line} imports a private module of another package ({name})")
    return out


def test_no_library_module_imports_upward_or_the_harness():
    bad = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if _layer(rel) not in ALLOWED and _layer(rel) not in TOP:
            bad.append(f"tycheon/{rel}: in no layer; add its package to ALLOWED")
            continue
        bad += violations(rel, _imports(path))
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize(
    ("module", "source"),
    [
        # the two back-arrows this test was written against (main before the layering commit)
        ("metrics/aggregate.py", "from tycheon.backtest.scoreset import quantile_column"),
        ("backtest/protocol.py", "from tycheon.stats.dm import overlap_lags"),
        ("stats/dm.py", "from tycheon.metrics._validate import as_float_array"),
        ("analysis/leaderboard.py", "import benchmarks.cache"),
    ],
)
def test_the_check_fails_on_an_upward_import(module, source, tmp_path):
    path = tmp_path / "m.py"
    path.write_text(source, encoding="utf-8")
    found = violations(Path(module), _imports(path))
    assert found and all(module in f for f in found)


def test_the_check_accepts_a_downward_import(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("from tycheon.metrics.aggregate import block_scores\nfrom tycheon.contract import overlap_lags\n")
    assert violations(Path("analysis/leaderboard.py"), _imports(path)) == []
