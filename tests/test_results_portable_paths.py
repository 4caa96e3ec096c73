"""Tracebacks in a results document name files as a reader can find them, never the machine that ran them."""

from __future__ import annotations

import re

from benchmarks.results_io import RESULTS_DIR
from benchmarks.results_model import ModelRun, portable_paths


def test_repository_package_and_stdlib_paths_lose_the_machine_part():
    text = (
        'File "/work/fullrun/tycheon/backtest/tasks.py", line 3\n'
        'File "/home/u/x/.venv/lib/python3.11/site-packages/statsforecast/theta.py", line 9\n'
        'File "/usr/lib/python3.11/concurrent/futures/_base.py", line 1'
    )
    assert portable_paths(text) == (
        'File "tycheon/backtest/tasks.py", line 3\n'
        'File "<site-packages>/statsforecast/theta.py", line 9\n'
        'File "<python3.11>/concurrent/futures/_base.py", line 1'
    )
    run = ModelRun(dataset="d", protocol="p", status="failed", reason="r", traceback=text, support=0, timings={})
    assert "/work/" not in run.traceback and "/usr/" not in run.traceback


def test_no_committed_results_version_holds_an_absolute_machine_path():
    pattern = re.compile(r"(?<![\w.])/(?:work|home|root|tmp|usr|opt|Users)/")
    offenders = [p.name for p in RESULTS_DIR.glob("*/v*.json") if pattern.search(p.read_text(encoding="utf-8"))]
    assert not offenders, offenders
