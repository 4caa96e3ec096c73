"""Backends: sequential, joblib (loky) and Dask give identical score sets; guard errors cross processes."""

from __future__ import annotations

import pytest

from tests._forecasters_support import NoEmbargoProtocol, assert_same_scores
from tycheon.backtest.engine import run
from tycheon.backtest.execution import release_workers, run_tasks, task_seed
from tycheon.backtest.factories import instance_factory
from tycheon.backtest.guards import LookaheadError
from tycheon.backtest.protocol import RollingOrigin
from tycheon.testing.toys import GlobalMeanForecaster, MeanForecaster, NaiveForecaster

PROTOCOL = RollingOrigin(horizon=3, stride=3, n_origins=3)
UNITS = ("series", "total", "groups_random:3")


def _factories():
    return {
        "naive": instance_factory(NaiveForecaster()),
        "mean": instance_factory(MeanForecaster()),
        "global": instance_factory(GlobalMeanForecaster()),
    }


def _run(panel, **kwargs):
    # chunk_size=5 splits the 12 series into 3 chunks per local model: several tasks, several seeds
    return run(panel, PROTOCOL, _factories(), units=UNITS, n_samples=4, chunk_size=5, **kwargs)


def _assert_same(a, b):
    assert_same_scores(a, b, meta=("guard_checks", "abstained", "origins"))


@pytest.fixture(scope="module")
def sequential(small_panel):
    return _run(small_panel)


def test_when_run_on_joblib_then_the_score_set_equals_the_sequential_one(small_panel, sequential):
    _assert_same(sequential, _run(small_panel, backend="joblib", n_jobs=2))


def test_when_run_on_a_dask_cluster_then_the_score_set_equals_the_sequential_one(small_panel, sequential):
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        dask = _run(small_panel, backend="dask", dask_client=client, progress=True)
    _assert_same(sequential, dask)


def test_chunks_get_distinct_seeds_and_the_guard_counts_add_up(sequential):
    assert task_seed(0, "naive", "series", 0) != task_seed(0, "naive", "series", 1)
    assert task_seed(0, "naive", "series", 0) == task_seed(0, "naive", "series", 0)
    # local models: 3 chunks on 'series', 1 on each aggregate unit; the global model: 1 task per unit
    tasks = 2 * (3 + 1 + 1) + 3
    assert sequential.meta["guard_checks"] == {"predict": 3 * tasks, "fit": 3 * tasks, "embargo": 3 * tasks}


def test_when_a_guard_fires_in_a_joblib_worker_then_lookahead_error_reaches_the_caller(small_panel):
    with pytest.raises(LookaheadError, match="inside the embargo of 1"):
        run(
            small_panel,
            NoEmbargoProtocol(horizon=3, stride=3, n_origins=2, embargo=1),
            {"g": instance_factory(GlobalMeanForecaster())},
            backend="joblib",
            n_jobs=2,
        )


def test_when_the_backend_is_misconfigured_then_the_error_says_what_is_accepted():
    with pytest.raises(ValueError, match="unknown backend 'ray'; accepted: sequential, joblib, dask, auto"):
        run_tasks([], backend="ray")
    with pytest.raises(ValueError, match="backend='dask' needs a dask_client"):
        run_tasks([lambda: 1], backend="dask")


def test_results_come_back_in_task_order():
    tasks = [lambda k=k: k * k for k in range(7)]
    assert run_tasks(tasks, backend="sequential", progress=True) == [k * k for k in range(7)]


def _square(k):
    return k * k


@pytest.mark.parametrize("backend", ["sequential", "joblib", "auto"])
def test_on_result_sees_each_result_once_as_it_comes_back(backend):
    import functools

    seen = []
    tasks = [functools.partial(_square, k) for k in range(6)]
    out = run_tasks(tasks, backend=backend, n_jobs=2, on_result=lambda i, r: seen.append((i, r)))
    assert out == [k * k for k in range(6)]
    assert sorted(seen) == [(k, k * k) for k in range(6)]


def _pid_after(seconds, k):
    import os
    import time

    time.sleep(seconds)
    return k, os.getpid()


def test_auto_keeps_short_runs_in_process_and_moves_long_ones_to_workers(monkeypatch):
    import functools
    import os

    from tycheon.backtest import execution

    quick = [functools.partial(_pid_after, 0.0, k) for k in range(6)]
    out = run_tasks(quick, backend="auto", n_jobs=2)
    assert [k for k, _ in out] == list(range(6)) and {pid for _, pid in out} == {os.getpid()}
    monkeypatch.setattr(execution, "WORKER_STARTUP_S", 0.0)  # workers always pay now
    slow = [functools.partial(_pid_after, 0.01, k) for k in range(6)]
    out = run_tasks(slow, backend="auto", n_jobs=2)
    assert [k for k, _ in out] == list(range(6))  # task order whatever ran where
    pids = [pid for _, pid in out]
    probed = 1 + execution.PROBE_TASKS  # the first task (its warm-up) and the tasks timed after it
    assert pids[:probed] == [os.getpid()] * probed
    assert os.getpid() not in pids[probed:]


def test_auto_does_not_extrapolate_the_first_tasks_warm_up(monkeypatch):
    import functools
    import os

    # a first task 50x slower than the rest (compiled kernels loading): the rate of the others says the
    # remaining work is far below the start-up of workers, so everything stays in process
    from tycheon.backtest import execution

    monkeypatch.setattr(execution, "WORKER_STARTUP_S", 0.5)
    tasks = [functools.partial(_pid_after, 0.6 if k == 0 else 0.012, k) for k in range(12)]
    out = run_tasks(tasks, backend="auto", n_jobs=2)
    assert [k for k, _ in out] == list(range(12)) and {pid for _, pid in out} == {os.getpid()}
    # the warm-up counts against workers: the same rest of work with a first task's 0.6 s beyond the rate
    args = dict(probed_seconds=1.0, probed_work=1.0, n_workers=2, rest_tasks=10)
    assert execution.auto_uses_workers(rest_work=2 * execution.WORKER_STARTUP_S + 1, **args)
    assert not execution.auto_uses_workers(rest_work=2 * execution.WORKER_STARTUP_S + 1, warm_up=0.6, **args)


def test_auto_decision_weighs_the_remaining_work_against_the_start_up():
    from tycheon.backtest.execution import WORKER_STARTUP_S, auto_uses_workers

    args = dict(probed_seconds=1.0, probed_work=1.0, n_workers=2)
    assert auto_uses_workers(rest_work=2 * WORKER_STARTUP_S + 1, rest_tasks=10, **args)
    assert not auto_uses_workers(rest_work=2 * WORKER_STARTUP_S - 1, rest_tasks=10, **args)
    assert not auto_uses_workers(rest_work=100.0, rest_tasks=1, **args)  # one task left: no parallelism
    assert not auto_uses_workers(rest_work=100.0, rest_tasks=10, probed_seconds=1.0, probed_work=1.0, n_workers=1)


@pytest.mark.parametrize("workers_pay", [False, True])
def test_when_run_on_auto_then_the_score_set_equals_the_joblib_one_bit_for_bit(
    small_panel, sequential, monkeypatch, workers_pay
):
    from tycheon.backtest import execution

    if workers_pay:
        monkeypatch.setattr(execution, "WORKER_STARTUP_S", 0.0)
        monkeypatch.setattr(execution, "PROBE_TASKS", 1)
    auto = _run(small_panel, backend="auto", n_jobs=2)
    _assert_same(sequential, auto)
    _assert_same(_run(small_panel, backend="joblib", n_jobs=2), auto)


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_release_workers_ends_the_workers_run_tasks_started_and_else_touches_no_pool(monkeypatch):
    import os

    from joblib.externals import loky

    release_workers()  # any pool an earlier test left
    pids = set(run_tasks([os.getpid] * 4, backend="joblib", n_jobs=2)) - {os.getpid()}
    assert pids and all(_alive(p) for p in pids)  # joblib keeps its workers after the tasks
    release_workers()
    assert not any(_alive(p) for p in pids)

    def no_pool(**kwargs):
        raise AssertionError("release_workers asked loky for an executor with no workers of run_tasks running")

    monkeypatch.setattr(loky, "get_reusable_executor", no_pool)
    release_workers()  # nothing started since: loky is not asked, so no pool is started just to stop it
    run_tasks([os.getpid] * 2, backend="sequential")
    release_workers()
