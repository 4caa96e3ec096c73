"""The harness turns numpy's huge-page advice off (benchmarks.memory_policy) unless the user set it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from benchmarks import memory_policy
from tycheon.backtest.heap import advise_huge_pages

multiarray = pytest.importorskip("numpy._core.multiarray")
get = getattr(multiarray, "_get_madvise_hugepage", None)
pytestmark = pytest.mark.skipif(get is None, reason="this numpy has no huge-page switch")


@pytest.fixture(autouse=True)
def _restore():
    before = get()
    yield
    advise_huge_pages(before)


def test_the_switch_turns_the_advice_on_and_off_and_returns_the_previous_setting():
    advise_huge_pages(True)
    assert advise_huge_pages(False) is True and get() is False
    assert advise_huge_pages(True) is False and get() is True


def test_the_policy_turns_the_advice_off_unless_the_user_set_it(monkeypatch):
    advise_huge_pages(True)
    monkeypatch.delenv(memory_policy.ENV, raising=False)
    assert memory_policy.apply() is True and get() is False
    advise_huge_pages(True)
    monkeypatch.setenv(memory_policy.ENV, "1")
    assert memory_policy.apply() is None and get() is True  # the user's choice stands


def test_the_library_never_changes_it_on_import():
    code = (
        "import numpy._core.multiarray as m; before = m._get_madvise_hugepage(); import tycheon, tycheon.backtest; "
        "import tycheon.backtest.engine; print(before == m._get_madvise_hugepage())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
