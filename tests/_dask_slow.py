"""A naive forecaster that takes its time, for the Dask cluster tests (tests/test_dask_cluster.py).

Its forecasts are the random walk's; each fit sleeps :data:`SLEEP_SECONDS` so that a run lasts long
enough to kill a worker in the middle of it, and, when ``TYCHEON_TEST_DASK_MARKS`` names a folder, first
writes a file named by its process id there: the test kills a worker that has written one, so it is
certainly inside a task.

Loaded three ways: :func:`register` in the process that runs the harness, ``dask worker --preload
tests._dask_slow`` on an external worker (:func:`dask_setup`), and the ``distributed.worker.preload``
config on the workers of a local cluster.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from tycheon.forecasters import registry
from tycheon.forecasters.roster.baselines import NaiveForecaster

FORECASTER_ID = "test_slow_naive"
SLEEP_SECONDS = 0.15
MARKS = "TYCHEON_TEST_DASK_MARKS"


class SlowNaive(NaiveForecaster):
    """The random walk after a pause (and a mark naming this process)."""

    def _point(self, values: Any, starts: Any, *, season: Any, horizon: int) -> Any:
        marks = os.environ.get(MARKS)
        if marks:
            (Path(marks) / f"{os.getpid()}-{time.monotonic_ns()}").touch()
        time.sleep(SLEEP_SECONDS)
        return super()._point(values, starts, season=season, horizon=horizon)


def register() -> None:
    """Add the forecaster to this process's registry (idempotent)."""
    registry._REGISTRY[FORECASTER_ID] = SlowNaive


def dask_setup(worker: Any = None) -> None:
    """The ``--preload`` hook of a Dask worker."""
    register()


MODEL_TOML = (
    'id = "slow_naive"\ndisplay_name = "Slow naive"\nfamily = "test"\nlicence = "MIT"\ncontributor = "tests"\n'
    f'[source]\nkind = "tycheon"\nforecaster = "{FORECASTER_ID}"\n'
)
