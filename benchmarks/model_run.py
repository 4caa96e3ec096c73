"""One model on one (dataset, protocol): its score set as given, from the cache, or computed under its
hard limits.

Each (dataset, protocol, model) runs on its own through :func:`tycheon.backtest.one_model.run_one_model`
(the per-model run ``tycheon.evaluate`` makes too), so that its score set can be cached and reused by a
rerun; running models one at a time gives the same rows as running them together. A model that raises or
overruns its time budget is recorded as failed and the run continues; a leakage error is never swallowed.
What this module adds around that run is the harness's: the score cache and the hard limits, and the
score sets a caller already has (``RunInputs.given``: an :class:`~tycheon.evaluation.Evaluation` written
with ``to_results``), each used in place of a run only where it was made as this run would make it
(:func:`given_scores`).

Hard limits (:mod:`tycheon.backtest.isolation`): a contributed model (:func:`contributed`: any sktime
estimator, and any tycheon forecaster with parameters of the config's choosing) runs in a separate
process with a scrubbed environment, a scratch working directory, no network, a bounded process count and
CPU-time, memory and wall-clock limits, so a hang, a crash, ``sys.exit`` or an allocation without bound
in it is a failed run with its reason and the harness's own memory stays where it was. It runs there
sequentially (the child has neither ``/dev/shm`` nor a cluster client); its rows are the same, since
every task seed derives from the chunking, which does not change. Every other model runs in process
under a wall-clock alarm. Both limits are the config's time budget plus :data:`HARD_LIMIT_GRACE_SECONDS`
(the engine's own work around the model's fit and predict).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import tycheon
from benchmarks.cache import CacheMismatchError, cache_key, forecast_packages, harness_code_sha256, same_scores
from benchmarks.config import BenchmarkConfig, ModelConfig
from benchmarks.provenance import library_sha256
from benchmarks.run_inputs import GivenRun, LoadedDataset, RunInputs
from tycheon.backtest import engine
from tycheon.backtest.factories import forecaster_factory
from tycheon.backtest.isolation import IsolatedFailure, Limits, run_isolated_with_layers, wall_clock_limit
from tycheon.backtest.one_model import run_one_model
from tycheon.backtest.protocol import RollingOrigin
from tycheon.backtest.scoreset import ScoreSet

__all__ = [
    "HARD_LIMIT_GRACE_SECONDS",
    "ISOLATED_MEMORY_BYTES",
    "ISOLATED_WALL_SECONDS",
    "ModelOutcome",
    "contributed",
    "given_scores",
    "run_model",
]

_TRACEBACK_LINES = 12
HARD_LIMIT_GRACE_SECONDS = 5.0
ISOLATED_WALL_SECONDS = 3600.0  # a contributed model's wall-clock limit when the config sets no budget
ISOLATED_MEMORY_BYTES = 8 * 1024**3


def _short(tb: str | None) -> str | None:
    if not tb:
        return tb or None
    lines = tb.rstrip().splitlines()
    return "\n".join(lines[-_TRACEBACK_LINES:])


@dataclass(frozen=True)
class ModelOutcome:
    """One model on one (dataset, protocol): its score set if it ran, its engine status and whether the
    work came from the cache."""

    scores: ScoreSet | None
    status: dict[str, Any]
    # "cache", "given" (RunInputs.given), either with " (verified)", "computed" or "skipped" (left out by
    # the config)
    source: str


def run_model(
    inputs: RunInputs,
    loaded: LoadedDataset,
    protocol: RollingOrigin,
    model: ModelConfig,
    *,
    units: list[str],
    min_history: int,
    label: str,
    point_only: bool = False,
) -> ModelOutcome:
    """``model`` on ``loaded`` under ``protocol``: the score set given for it where that was made as this
    run would be (:func:`given_scores`; cached then), else from the cache where it holds the run, else
    computed under the model's hard limits (:func:`_execute`) and cached if it ran. A given or cached score
    set whose key the cache samples is recomputed and compared bit for bit. ``point_only``: no quantiles,
    sample paths or calibration origins (see :func:`benchmarks.roster_run.run_models`)."""
    cfg = inputs.config
    panel = loaded.panel
    quantile_levels = () if point_only else tuple(cfg.quantile_levels)
    n_samples = 0 if point_only else cfg.n_samples
    if point_only and isinstance(protocol, RollingOrigin) and protocol.n_calibration_origins:
        protocol = replace(protocol, n_calibration_origins=0)  # calibration origins only serve the bands
    forecaster_id, params = model.factory_spec()
    key = cache_key(
        dataset=loaded.info["content_hash"],
        model=model.sha256(),
        protocol=protocol.describe(),
        units=units,
        backend=cfg.backend,
        n_jobs=cfg.n_jobs,
        min_history=min_history,
        quantiles=list(quantile_levels),
        n_samples=n_samples,
        seed=cfg.seed,
        time_budget=cfg.time_budget_seconds,
        library=library_sha256(),
        harness=harness_code_sha256(),
        tycheon=tycheon.__version__,
        packages=forecast_packages(),
    )
    given = given_scores(
        inputs.given.get(model.id),
        loaded=loaded,
        protocol=protocol,
        model=model,
        cfg=cfg,
        units=units,
        min_history=min_history,
        quantile_levels=quantile_levels,
        n_samples=n_samples,
    )
    origin = "cache" if given is None else "given"
    cached = given if given is not None else inputs.cache.get(key)
    if cached is not None and not isinstance(cached.meta["models"].get(model.id), dict):
        cached = None  # an entry for another model under this key cannot be this model's result
    if cached is not None and not inputs.cache.should_verify(key):
        if given is not None:  # a rerun into the same folder finds it, as it would a run of its own
            inputs.cache.put(key, given)
        return ModelOutcome(cached, cached.meta["models"][model.id], origin)
    chunk = engine.worker_chunk_size(panel.n_series, n_jobs=cfg.n_jobs, backend=cfg.backend)
    # an isolated (contributed) model runs its tasks inside its limited child, which has no cluster client
    # and no /dev/shm for joblib's semaphores; the chunk above is kept, so the task seeds are the same
    backend = "sequential" if contributed(model) else cfg.backend
    result = run_one_model(
        panel,
        protocol,
        model.id,
        forecaster_factory(forecaster_id, **params),
        units=units,
        chunk_size=chunk,
        quantile_levels=quantile_levels,
        n_samples=n_samples,
        min_history=min_history,
        backend=backend,
        n_jobs=cfg.n_jobs,
        dask_client=inputs.dask_client if backend == "dask" else None,
        seed=cfg.seed,
        time_budget=cfg.time_budget_seconds,
        progress=inputs.progress,
        limit=functools.partial(_execute, model=model, cfg=cfg),
        traceback_lines=_TRACEBACK_LINES,
    )
    if result.scores is None:  # the model failed and its status says why (a leak was raised, not recorded)
        if cached is not None:
            error = result.error
            reason = error.reason if isinstance(error, IsolatedFailure) else error
            what = "cache entry" if given is None else "given score set"
            raise CacheMismatchError(f"{label}: a sampled {what} could not be recomputed: {reason}") from error
        return ModelOutcome(None, result.status, "computed")
    scores = result.scores
    status = scores.meta["models"][model.id]
    if cached is not None:  # one of the sampled hits: the recomputation must equal the entry bit for bit
        difference = same_scores(cached, scores) if status["status"] == "ran" else f"recomputed: {status}"
        if difference is not None:
            what = "cached score set" if given is None else "given score set"
            raise CacheMismatchError(
                f"{label}: the {what} (key {key[:12]}...) differs from a fresh "
                f"computation: {difference}; delete the cache and rerun"
            )
        if given is not None:
            inputs.cache.put(key, given)
        return ModelOutcome(cached, cached.meta["models"][model.id], f"{origin} (verified)")
    if status["status"] == "ran":
        inputs.cache.put(key, scores)
    return ModelOutcome(scores, status, "computed")


def given_scores(
    given: GivenRun | None,
    *,
    loaded: LoadedDataset,
    protocol: RollingOrigin,
    model: ModelConfig,
    cfg: BenchmarkConfig,
    units: list[str],
    min_history: int,
    quantile_levels: tuple[float, ...],
    n_samples: int,
) -> ScoreSet | None:
    """A copy of ``given``'s score set where it was made as :func:`run_model` would make this run (else
    None): on the same panel content, by the same forecaster and parameters, under the same protocol,
    units, ``min_history``, quantile levels, sample count, seed, backend, workers and time budget, and the
    model ran. What the engine ran is read from the score set's own ``meta``, the rest from ``given``.

    The copy (table, samples and meta) is the pipeline's to park and release as it does a run's own,
    while the caller's score set stays whole.
    """
    if given is None:
        return None
    scores = given.scores
    meta = scores.meta
    ran_as = {
        "dataset": given.dataset,
        "factory": given.factory,
        "protocol": meta.get("protocol"),
        "units": meta.get("units"),
        "min_history": meta.get("min_history"),
        "quantile_levels": tuple(scores.quantile_levels),
        "n_samples": 0 if scores.samples is None else scores.samples.shape[1],
        "seed": meta.get("seed"),
        "backend": given.backend,
        "n_jobs": given.n_jobs,
        "time_budget": given.time_budget,
        "status": (meta.get("models", {}).get(model.id) or {}).get("status"),
    }
    asked = {
        "dataset": loaded.info["content_hash"],
        "factory": model.factory_spec(),
        "protocol": protocol.describe(),
        "units": list(units),
        "min_history": int(min_history),
        "quantile_levels": tuple(quantile_levels),
        "n_samples": int(n_samples),
        "seed": cfg.seed,
        "backend": cfg.backend,
        "n_jobs": cfg.n_jobs,
        "time_budget": cfg.time_budget_seconds,
        "status": "ran",
    }
    if ran_as != asked:
        return None
    return ScoreSet(
        scores.table.copy(),
        scores.quantile_levels,
        None if scores.samples is None else scores.samples.copy(),
        copy.deepcopy(meta),
        conformed=True,
    )


def _execute(run: Callable[[], ScoreSet], *, model: ModelConfig, cfg: BenchmarkConfig) -> ScoreSet:
    """``run()`` under the model's hard limits: in a separate limited process for a contributed model,
    in process under a wall-clock alarm for tycheon's own (both at the budget plus the grace)."""
    budget = cfg.time_budget_seconds
    if contributed(model):
        wall = (budget if budget is not None else ISOLATED_WALL_SECONDS) + HARD_LIMIT_GRACE_SECONDS
        limits = Limits(wall_seconds=wall, cpu_seconds=wall * max(1, cfg.n_jobs), memory_bytes=ISOLATED_MEMORY_BYTES)
        ran = run_isolated_with_layers(
            run, write=ScoreSet.to_parquet, read=ScoreSet.from_parquet, limits=limits, label=model.id
        )
        ran.value.meta["models"][model.id]["isolation"] = ran.layers  # what kept it in, for the run's record
        return ran.value
    with wall_clock_limit(None if budget is None else budget + HARD_LIMIT_GRACE_SECONDS, label=model.id):
        return run()


def contributed(model: ModelConfig) -> bool:
    """A model that runs isolated: code tycheon did not write (an sktime estimator, by either route), or
    tycheon's code with parameters a config chose (``n_lags = 500000`` grew the harness's own memory in
    process, where no limit holds it).

    Project-owned means tycheon's forecaster at its constructor's defaults: a config with no ``params``
    (every committed model config but ``sktime_theta``), so the committed benchmarks start no extra
    interpreter. Whoever writes the config, its parameters are input, and the bounds a config is checked
    against (:data:`benchmarks.config.CONTRIBUTED_PARAMS`) are not relied on here.
    """
    if model.source.kind == "sktime" or getattr(model.source, "forecaster", None) == "sktime":
        return True
    return bool(model.params)
