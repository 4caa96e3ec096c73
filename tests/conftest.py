"""Shared fixtures: small seeded panels for the engine tests (kept generic; models live in tycheon.testing),
and the run-wide builds of ``tests/_shared.py`` (the committed site, the hostile site, the tiny benchmark)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import settings

from tests._shared import committed_docs, committed_site, hostile_site, tiny_results  # noqa: F401
from tycheon.data.panel import Panel
from tycheon.testing.toys import toy_panel

# CI runs hypothesis with a fixed seed so a green run is reproducible; local runs keep exploring. ``make test-fast``
# sets HYPOTHESIS_PROFILE=fast: fewer examples where a test does not set its own max_examples.
settings.register_profile("ci", derandomize=True)
settings.register_profile("fast", max_examples=20)
if os.environ.get("HYPOTHESIS_PROFILE"):
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])
elif os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def small_panel() -> Panel:
    """12 seasonal series x 36 months with zeros, ragged starts and a region/store hierarchy."""
    return toy_panel(n_series=12, n_periods=36, seed=0)


@pytest.fixture(scope="session")
def canary_panel() -> Panel:
    """30 series x 48 months with a season and zeros, no ragged starts."""
    return toy_panel(n_series=30, n_periods=48, seed=7, zero_share=0.25, ragged=False)


# --- make test-fast: the fast subset, chosen by measured time ----------------------------------------------------
# tests/durations.json holds each test's measured seconds (setup + call + teardown) from `make durations`; with
# --fast-limit S a test recorded at S seconds or more is left out (a test not recorded yet is kept, so a new test
# runs until the file is refreshed). `make test` passes neither option and runs everything.
DURATIONS = Path(__file__).with_name("durations.json")


def pytest_addoption(parser):
    group = parser.getgroup("tycheon")
    group.addoption("--fast-limit", type=float, default=None, help="leave out tests recorded at >= this many s")
    group.addoption("--record-durations", type=Path, default=None, help="write each test's seconds to this file")


def pytest_collection_modifyitems(config, items):
    limit = config.getoption("--fast-limit")
    if limit is None:
        return
    recorded = json.loads(DURATIONS.read_text(encoding="utf-8"))["seconds"] if DURATIONS.exists() else {}
    slow = [item for item in items if recorded.get(item.nodeid, 0.0) >= limit]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if recorded.get(item.nodeid, 0.0) < limit]


_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report):
    _SECONDS[report.nodeid] = _SECONDS.get(report.nodeid, 0.0) + report.duration


def pytest_sessionfinish(session):
    path = session.config.getoption("--record-durations")
    if path is None or hasattr(session.config, "workerinput"):  # xdist workers hand their reports to the controller
        return
    seconds = {node: round(s, 2) for node, s in sorted(_SECONDS.items()) if s >= 0.1}
    note = f"make durations: {len(_SECONDS)} tests of the fast subset; those at 0.1 s or more listed"
    Path(path).write_text(json.dumps({"recorded": note, "seconds": seconds}, indent=0) + "\n", encoding="utf-8")
