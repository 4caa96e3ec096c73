"""The perf probe's memory readings: the process-tree sum, the fork-child rule and the stage marks."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from benchmarks.perf.evaluate_cli import stage_rows
from benchmarks.perf.memory import STAGE_LOG_ENV, TreeSample, read_stage_log, tree_rss

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

MIB = 2**20

# a parent that touches 400 MiB, then forks a child that sleeps without exec'ing (same program, its
# pages shared copy-on-write) and a child that execs a small interpreter of its own; prints "ready"
_PARENT = textwrap.dedent(
    """
    import os, subprocess, sys, time
    import numpy as np
    ballast = np.ones(400 * 2**20 // 8)
    pid = os.fork()
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    small = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    time.sleep(1.0)
    print("ready", flush=True)
    time.sleep(60)
    """
)


@pytest.fixture
def forking_parent():
    proc = subprocess.Popen([sys.executable, "-c", _PARENT], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield proc
    finally:
        for child in _children(proc.pid):
            _kill(child)
        proc.kill()
        proc.wait()


def _children(pid: int) -> list[int]:
    import psutil

    try:
        return [c.pid for c in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


def _kill(pid: int) -> None:
    try:
        os.kill(pid, 9)
    except OSError:
        pass


def test_a_forked_child_that_has_not_execd_counts_by_its_private_pages_not_its_parents(forking_parent):
    import psutil

    parent = psutil.Process(forking_parent.pid)
    kids = parent.children()
    assert len(kids) == 2
    parent_rss = parent.memory_info().rss
    naive = parent_rss + sum(k.memory_info().rss for k in kids)  # what the old probe summed
    sample = tree_rss(forking_parent.pid)
    assert parent_rss > 400 * MIB
    assert naive > 2 * 400 * MIB  # the forked child reads as a second copy of the parent
    # the tree is the parent, the fork's few private pages and the exec'd child's own interpreter
    assert parent_rss < sample.rss < parent_rss + 100 * MIB, (sample.rss / MIB, parent_rss / MIB)
    # peaks: the parent and the exec'd child, not the fork (its VmHWM is its parent's pages)
    assert forking_parent.pid in sample.peaks and len(sample.peaks) == 2


def test_the_tree_of_a_process_that_has_ended_is_empty():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    sample = tree_rss(proc.pid)
    assert sample.rss == 0 and sample.peaks == {}


def test_stage_marks_record_each_stage_peak_and_reset_it(tmp_path):
    log = tmp_path / "stages.jsonl"
    code = textwrap.dedent(
        """
        import numpy as np
        from benchmarks.perf.memory import mark_stage
        big = np.ones(300 * 2**20 // 8)
        del big
        mark_stage("big")
        small = np.ones(20 * 2**20 // 8)
        mark_stage("small")
        """
    )
    env = {**os.environ, STAGE_LOG_ENV: str(log)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    marks = read_stage_log(log)
    assert [m["stage"] for m in marks] == ["big", "small"]
    big, small = (m["hwm_kb"] * 1024 for m in marks)
    assert big > 300 * MIB
    assert small < big - 200 * MIB  # reset at the first mark: the second stage's own peak
    rows = stage_rows(marks, [TreeSample(marks[0]["t"] - 0.01, 5, {}), TreeSample(marks[1]["t"], 7, {})], start=0.0)
    assert [(r[0], r[3]) for r in rows] == [("big", 5), ("small", 7)]


def test_without_the_variable_a_stage_mark_writes_nothing(tmp_path, monkeypatch):
    from benchmarks.perf.memory import mark_stage

    monkeypatch.delenv(STAGE_LOG_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    mark_stage("nothing")
    assert list(tmp_path.iterdir()) == []
    assert read_stage_log(tmp_path / "absent.jsonl") == []
