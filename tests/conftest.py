"""Shared fixtures for the engine tests: small seeded panels (kept generic; models live in tycheon.testing)."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

from tycheon.data.panel import Panel
from tycheon.testing.toys import toy_panel

# CI runs hypothesis with a fixed seed so a green run is reproducible; local runs keep exploring.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def small_panel() -> Panel:
    """12 seasonal series x 36 months with zeros, ragged starts and a region/store hierarchy."""
    return toy_panel(n_series=12, n_periods=36, seed=0)


@pytest.fixture(scope="session")
def canary_panel() -> Panel:
    """30 series x 48 months with a season and zeros, no ragged starts."""
    return toy_panel(n_series=30, n_periods=48, seed=7, zero_share=0.25, ragged=False)
