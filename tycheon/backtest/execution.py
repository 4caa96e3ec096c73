"""Where the engine's tasks run: in process, on local processes (joblib/loky), or on a Dask cluster.

A task is a picklable zero-argument callable (one model on one chunk of series of one unit, over every
origin). Every backend returns the results **in task order**, whatever order they finish in, and each task
carries its own seed (derived from ``(seed, model, unit, chunk)``), so the three backends give identical
score sets. Exceptions raised by a task propagate unchanged (a :class:`~tycheon.backtest.guards.LookaheadError`
is never swallowed); tasks catch model failures themselves and return them as results.

A progress bar (tqdm) counts finished tasks when ``progress=True``.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from typing import Any

from tycheon._typing import Backend

__all__ = ["BACKENDS", "run_tasks", "task_seed"]

BACKENDS: tuple[str, ...] = ("sequential", "joblib", "dask")


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
    backend : {"sequential", "joblib", "dask"}
    n_jobs : int, optional
        Worker processes for joblib (default: all cores, ``-1``).
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
        elif backend == "joblib":
            from joblib import Parallel, delayed

            parallel = Parallel(n_jobs=-1 if n_jobs is None else n_jobs, backend="loky", return_as="generator")
            for i, result in enumerate(parallel(delayed(_call)(t) for t in tasks)):
                results[i] = result
                _report(on_result, i, result)
                bar.update(1)
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


def _report(on_result: Callable[[int, Any], None] | None, i: int, result: Any) -> None:
    if on_result is not None:
        on_result(i, result)


def _call(task: Callable[[], Any]) -> Any:
    return task()
