"""The statistics' BLAS context: one thread inside, the previous limits restored after."""

from __future__ import annotations

import pytest

from tycheon.stats.threads import single_thread_blas

threadpoolctl = pytest.importorskip("threadpoolctl")


def _blas_threads() -> list[int]:
    return [p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]


def test_blas_runs_on_one_thread_inside_and_as_before_after():
    import numpy as np

    np.ones(3) @ np.ones(3)  # BLAS loaded
    before = _blas_threads()
    assert before, "numpy's BLAS is not visible to threadpoolctl"
    with single_thread_blas():
        assert _blas_threads() == [1] * len(before)
    assert _blas_threads() == before
