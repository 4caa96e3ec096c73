"""One model through the engine on its own: :func:`run_one_model`, the plain in-process run that the
user-data front door (:func:`tycheon.evaluation.evaluate`) and the benchmark harness
(``benchmarks/model_run.py``, which adds its score cache and hard limits around it) both call.

Running models one at a time gives the same rows as running them together: the engine derives every task
seed from (seed, model, unit, chunk) and builds each model's conformal bands from its own errors.

A leakage error is raised, never recorded: a run that looked at the future has no result to report, and
the roster must not go on as if it had one. Any other failure of the model (an exception, a wall-clock
limit, ``sys.exit``, an isolated process that returned nothing) is recorded as the model's status, with
its reason and traceback, and the caller goes on with the next model.
"""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tycheon._typing import Backend
from tycheon.backtest import engine
from tycheon.backtest.factories import Factory
from tycheon.backtest.guards import LookaheadError
from tycheon.backtest.isolation import IsolatedFailure, WallClockExceeded
from tycheon.backtest.protocol import RollingOrigin, StaticSplit
from tycheon.backtest.scoreset import ScoreSet
from tycheon.data.panel import Panel

__all__ = ["ModelResult", "run_one_model"]

#: Wraps the engine call (``run() -> ScoreSet``) in limits, e.g. a separate process or a wall-clock alarm.
Limit = Callable[[Callable[[], ScoreSet]], ScoreSet]


@dataclass(frozen=True)
class ModelResult:
    """One model's run: the score set the engine returned (None when the run failed), the model's status
    (the engine's, or the failure's record) and the failure itself, for a caller that must not record it
    (a cache check recomputing an entry)."""

    scores: ScoreSet | None
    status: dict[str, Any]
    error: BaseException | None = None


def _tail(text: str, lines: int | None) -> str | None:
    if lines is None:
        return text
    if not text:
        return text or None
    return "\n".join(text.rstrip().splitlines()[-lines:])


def run_one_model(
    panel: Panel,
    protocol: RollingOrigin | StaticSplit,
    model_id: str,
    factory: Factory,
    *,
    units: Sequence[str],
    chunk_size: int | None,
    quantile_levels: Sequence[float],
    min_history: int,
    backend: Backend,
    n_jobs: int | None,
    seed: int,
    time_budget: float | None,
    n_samples: int = 0,
    progress: bool = False,
    dask_client: Any = None,
    limit: Limit | None = None,
    traceback_lines: int | None = None,
) -> ModelResult:
    """``model_id`` (built by ``factory``) through :func:`tycheon.backtest.engine.run` on its own.

    Parameters
    ----------
    panel, protocol, units, chunk_size, quantile_levels, min_history, backend, n_jobs, seed, time_budget,
    n_samples, progress, dask_client
        Passed to :func:`tycheon.backtest.engine.run`.
    model_id : str
        The model's name in the score set.
    factory : Factory
        Builds the fitted forecaster (:func:`tycheon.backtest.factories.forecaster_factory`).
    limit : callable, optional
        Called with the engine call (``run() -> ScoreSet``) to run it under limits; default: call it.
    traceback_lines : int, optional
        Keep only the last lines of a failure's traceback (default: all of it).

    Returns
    -------
    ModelResult
        The score set and the engine's status of the model; on a failure no score set, a ``failed``
        status with the reason and traceback (an isolated failure adds the isolation layers), and the error.

    Raises
    ------
    LookaheadError
        The model (or the engine on its behalf) reached the future, in process or in an isolated one.
    """
    run = functools.partial(
        engine.run,
        panel,
        protocol,
        {model_id: factory},
        units=list(units),
        chunk_size=chunk_size,
        quantile_levels=quantile_levels,
        n_samples=n_samples,
        min_history=min_history,
        backend=backend,
        n_jobs=n_jobs,
        dask_client=dask_client,
        seed=seed,
        time_budget=time_budget,
        progress=progress,
    )
    try:
        scores = run() if limit is None else limit(run)
    except LookaheadError:
        raise
    except IsolatedFailure as err:
        if err.error_type == "LookaheadError":  # leakage found in the isolated process: never swallowed
            raise LookaheadError(err.reason) from err
        status = {"status": "failed", "reason": err.reason, "traceback": err.traceback or None, "isolation": err.layers}
        return ModelResult(None, status, err)
    except (Exception, WallClockExceeded, SystemExit) as err:  # noqa: BLE001 - recorded, the others go on
        reason = f"{type(err).__name__}: {err}"
        status = {"status": "failed", "reason": reason, "traceback": _tail(traceback.format_exc(), traceback_lines)}
        return ModelResult(None, status, err)
    return ModelResult(scores, scores.meta["models"][model_id])
