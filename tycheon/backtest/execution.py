r"""Where the engine's tasks run: in process, on local processes (joblib/loky), or on a Dask cluster.

``backend="auto"`` is for one-shot runs, where starting worker processes (each imports the library) can
cost more than it saves: the tasks start in process, and once the first of them have been timed
(:data:`PROBE_TASKS` tasks after the first, or :data:`PROBE_SECONDS` seconds of them), the rest go to
joblib workers only when

.. math:: \\hat t_\text{rest} \\, (1 - 1/n) > S + w,

where :math:`\\hat t_\text{rest}` is the in-process time the remaining tasks are estimated to take (the
probed seconds per unit of work times the remaining work; a task's work is its series times its models
where it says, else 1), :math:`n` the workers, :math:`S` = :data:`WORKER_STARTUP_S` the start-up of a
worker pool and :math:`w` the warm-up of the first task: what it took beyond the rate of the tasks after
it (loading compiled kernels and first-use caches, which every new worker pays again). The first task
is left out of the rate: extrapolating its warm-up sent a 10,000-series run of 8 baselines to workers,
where it took longer than in process (see benchmarks/perf/MEASUREMENTS.md). The tasks and their order
are those of the other backends, so the score set is the same bit for bit whichever way the decision
goes.

A task is a picklable zero-argument callable (one model on one chunk of series of one unit, over every
origin). Every backend returns the results **in task order**, whatever order they finish in, and each task
carries its own seed (derived from ``(seed, model, unit, chunk)``), so the three backends give identical
score sets. Exceptions raised by a task propagate unchanged (a :class:`~tycheon.backtest.guards.LookaheadError`
is never swallowed); tasks catch model failures themselves and return them as results.

A progress bar (tqdm) counts finished tasks when ``progress=True``.

joblib's loky workers outlive the tasks until :func:`release_workers` ends them.
"""

from __future__ import annotations

import functools
import os
import time
import zlib
from collections.abc import Callable, Sequence
from typing import Any

from tycheon._typing import Backend
from tycheon.backtest import transport

__all__ = [
    "BACKENDS",
    "PROBE_SECONDS",
    "PROBE_TASKS",
    "WORKER_STARTUP_S",
    "auto_uses_workers",
    "release_workers",
    "run_tasks",
    "task_seed",
]

BACKENDS: tuple[str, ...] = ("sequential", "joblib", "dask", "auto")

PROBE_TASKS = 2
"""``auto``: tasks timed in process after the first before the decision (fewer when
:data:`PROBE_SECONDS` pass first)."""
PROBE_SECONDS = 0.5
"""``auto``: seconds of those tasks after which the decision is taken even before :data:`PROBE_TASKS`."""
WORKER_STARTUP_S = 4.0
"""``auto``: seconds a pool of loky workers costs before it pays: starting the processes, importing the
engine and loading the compiled kernels in each, while the main process also has to write the rows. A
one-shot 30,490-series run of 8 baselines was slower with two workers than in process on a 2-core
machine (``python -m benchmarks.perf``; benchmarks/perf/MEASUREMENTS.md), so workers are used only when
they are estimated to save more than this."""


_workers_started = False
"""Whether :func:`run_tasks` has sent tasks to loky workers since the last :func:`release_workers`."""


def release_workers() -> None:
    """End the loky workers :func:`run_tasks` started, if it started any since the last call.

    joblib keeps them alive, idle, for its idle timeout after the last task, each holding its imports and
    heap; a later run starts new ones. Shutting them down goes through loky's public
    ``get_reusable_executor(reuse=True)``, which returns the running executor as it is; it is called only
    after :func:`run_tasks` used workers, since with none running it would start a pool to stop it.
    """
    global _workers_started
    if not _workers_started:
        return
    _workers_started = False
    from joblib.externals.loky import get_reusable_executor

    get_reusable_executor(reuse=True).shutdown(wait=True)


def _work(task: Any) -> float:
    """A task's work for the ``auto`` estimate: series x models where the task says, else 1."""
    rows, models = getattr(task, "rows", None), getattr(task, "models", None)
    if rows is None:
        return 1.0
    return float(max(1, len(rows)) * max(1, len(models) if models is not None else 1))


def _workers(n_jobs: int | None) -> int:
    if n_jobs is None or n_jobs < 0:
        return os.cpu_count() or 1
    return max(1, int(n_jobs))


def auto_uses_workers(
    *,
    probed_seconds: float,
    probed_work: float,
    rest_work: float,
    n_workers: int,
    rest_tasks: int,
    warm_up: float = 0.0,
) -> bool:
    """The ``auto`` decision: True when workers are estimated to finish the remaining work sooner
    (see the module docstring; ``warm_up`` is :math:`w`, seconds)."""
    n_workers = min(int(n_workers), int(rest_tasks))
    if n_workers <= 1 or rest_work <= 0 or probed_work <= 0:
        return False
    rest_seconds = probed_seconds / probed_work * rest_work
    return rest_seconds * (1.0 - 1.0 / n_workers) > WORKER_STARTUP_S + max(0.0, float(warm_up))


def task_seed(seed: int, *parts: str | int) -> tuple[int, ...]:
    """Entropy of one task's ``np.random.SeedSequence``, stable across processes and runs.

    String parts (model, unit) are hashed with CRC-32, not ``hash()``, which is salted per process.
    """
    return (int(seed),) + tuple(zlib.crc32(p.encode()) if isinstance(p, str) else int(p) for p in parts)


def _bar(total: int, progress: bool, desc: str) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, disable=not progress, desc=desc, unit="task")


def run_tasks(
    tasks: Sequence[Callable[[], Any]],
    *,
    backend: Backend = "sequential",
    n_jobs: int | None = None,
    dask_client: Any = None,
    progress: bool = False,
    desc: str = "backtest",
    on_result: Callable[[int, Any], None] | None = None,
) -> list[Any]:
    """Run every task and return their results in task order.

    Parameters
    ----------
    tasks : sequence of callables
        Zero-argument, picklable for ``joblib`` and ``dask``.
    backend : {"sequential", "joblib", "dask", "auto"}
        ``auto``: in process, moving to joblib workers when the first tasks' timing says it pays.
    n_jobs : int, optional
        Worker processes for joblib and ``auto`` (default: all cores, ``-1``).
    dask_client : distributed.Client, optional
        Required for ``backend="dask"``.
    progress : bool
        Show a tqdm bar of finished tasks.
    on_result : callable, optional
        Called in the calling process as ``on_result(index, result)`` as soon as each result is back
        (task order for sequential and joblib, completion order for Dask), so the caller can use it
        while later tasks still run.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; accepted: {', '.join(BACKENDS)}")
    results: list[Any] = [None] * len(tasks)
    with _bar(len(tasks), progress, desc) as bar:
        if backend == "sequential":
            for i, task in enumerate(tasks):
                results[i] = task()
                _report(on_result, i, results[i])
                bar.update(1)
        elif backend in ("joblib", "auto"):
            start = 0
            if backend == "auto":
                start = _probe(tasks, results, n_jobs=n_jobs, on_result=on_result, bar=bar)
            if start < len(tasks):
                from joblib import delayed

                # large results come back through shared memory where the system has it (see .transport)
                directory, prefix = transport.shared_dir(), transport.run_prefix()
                call = (
                    _call if directory is None else functools.partial(_call_shipped, directory=directory, prefix=prefix)
                )
                parallel = _loky(n_jobs)
                try:
                    for i, shipped in enumerate(parallel(delayed(call)(t) for t in tasks[start:]), start=start):
                        results[i] = transport.receive(shipped)
                        _report(on_result, i, results[i])
                        bar.update(1)
                finally:
                    transport.sweep(directory, prefix)
        else:
            if dask_client is None:
                raise ValueError("backend='dask' needs a dask_client (a distributed.Client)")
            from distributed import as_completed

            futures = [dask_client.submit(_call, t, pure=False) for t in tasks]
            position = {f.key: i for i, f in enumerate(futures)}
            # the client's own loop: as_completed would otherwise look for a default client, and a caller's
            # client need not be the default one (benchmarks.cluster makes none)
            for future in as_completed(futures, loop=dask_client.loop):
                i = position[future.key]
                results[i] = future.result()
                _report(on_result, i, results[i])
                bar.update(1)
    return results


def _loky(n_jobs: int | None) -> Any:
    """joblib's loky ``Parallel`` for the tasks; its workers outlive them until :func:`release_workers`."""
    global _workers_started
    from joblib import Parallel

    _workers_started = True
    return Parallel(n_jobs=-1 if n_jobs is None else n_jobs, backend="loky", return_as="generator")


def _probe(
    tasks: Sequence[Callable[[], Any]],
    results: list[Any],
    *,
    n_jobs: int | None,
    on_result: Callable[[int, Any], None] | None,
    bar: Any,
) -> int:
    """``auto``: run tasks in process until the decision; return the first task left to workers
    (``len(tasks)`` when everything ran here)."""
    work = [_work(t) for t in tasks]
    n_workers = _workers(n_jobs)
    first = spent = 0.0  # seconds of the first task; of the tasks timed after it
    for i, task in enumerate(tasks):
        t0 = time.perf_counter()
        results[i] = task()
        if i == 0:
            first = time.perf_counter() - t0
        else:
            spent += time.perf_counter() - t0
        _report(on_result, i, results[i])
        bar.update(1)
        done = i + 1
        timed = done - 1  # tasks that give the rate: the first one's warm-up is not extrapolated
        if done < len(tasks) and timed and (timed >= PROBE_TASKS or spent >= PROBE_SECONDS):
            probed = float(sum(work[1:done]))
            if auto_uses_workers(
                probed_seconds=spent,
                probed_work=probed,
                rest_work=float(sum(work[done:])),
                n_workers=n_workers,
                rest_tasks=len(tasks) - done,
                warm_up=first - spent / probed * work[0],
            ):
                return done
            # in process from here on: the estimate only grows less favourable to workers as work is done
            for j in range(done, len(tasks)):
                results[j] = tasks[j]()
                _report(on_result, j, results[j])
                bar.update(1)
            return len(tasks)
    return len(tasks)


def _report(on_result: Callable[[int, Any], None] | None, i: int, result: Any) -> None:
    if on_result is not None:
        on_result(i, result)


def _call(task: Callable[[], Any]) -> Any:
    return task()


def _call_shipped(task: Callable[[], Any], *, directory: str, prefix: str) -> Any:
    """In a worker: run the task and hand its result to :func:`.transport.ship`."""
    return transport.ship(task(), directory=directory, prefix=prefix)
