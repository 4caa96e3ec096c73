"""Shared fixtures: small seeded panels for the engine tests (kept generic; models live in tycheon.testing),
and the run-wide builds of ``tests/_shared.py`` (the committed site, the hostile site, the tiny benchmark)."""

from __future__ import annotations

import os

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
