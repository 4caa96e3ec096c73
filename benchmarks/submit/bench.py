"""Run a benchmark for submitted models: the config's roster plus the submission, one new results version,
the site rendered from it.

Only the submitted models are new work: every other (dataset, protocol, model) is served by the harness's
score cache when its key (dataset content, model config, protocol, seed, tycheon sources) is already
there, and is computed and cached otherwise, so the leaderboard the submission lands on is the complete
one. The run goes through :func:`benchmarks.pipeline.build_results`, the same guarded engine as
``python -m benchmarks.run``; nothing here computes a number.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from benchmarks.cache import ScoreCache
from benchmarks.config import BenchmarkConfig, ConfigError, ModelConfig, resolve_benchmark_config
from benchmarks.owned_dir import reset_owned_dir
from benchmarks.results_io import SIDECAR_DIR, read_results, write_results
from benchmarks.results_model import ResultsDocument
from benchmarks.score_parts import PARTS_DIR
from benchmarks.submit.tomlout import write_benchmark_config

__all__ = [
    "CannotRankError",
    "SubmissionRun",
    "WorkDirError",
    "extend_config",
    "prepare_work_dir",
    "render",
    "run_benchmark",
]

MARKER = ".tycheon-submit"


class CannotRankError(RuntimeError):
    """The random walk or the production baseline failed, or no table could be built: no version."""


class WorkDirError(RuntimeError):
    """The work folder holds files this command did not write; it refuses to delete them."""


@dataclass(frozen=True)
class SubmissionRun:
    """What a submission run wrote: the results JSON, its document, and the config that ran."""

    results_path: Path
    doc: ResultsDocument
    config_path: Path


def prepare_work_dir(work_dir: Path) -> Path:
    """Empty ``work_dir`` (only if it is empty or was written by this command) and mark it as ours."""
    return reset_owned_dir(
        work_dir,
        marker=MARKER,
        writer="`benchmarks.submit`",
        option="--work-dir",
        error=WorkDirError,
        note="written by python -m benchmarks.submit; wiped on every check\n",
    )


def seed_results(committed: Path, results_dir: Path) -> None:
    """Copy the committed results versions (JSON, score parts, migration manifests and any sidecar), so the
    new version numbers on from them and a new version's parts equal to committed ones are not written
    again."""
    results_dir.mkdir(parents=True, exist_ok=True)
    if not committed.is_dir():
        return
    stored = [*committed.glob(f"*/{SIDECAR_DIR}/*.parquet"), *committed.glob(f"*/{SIDECAR_DIR}/*.parts.json")]
    for path in sorted([*committed.glob("*/v*"), *stored, *committed.glob(f"*/{PARTS_DIR}/*.parquet")]):
        if path.suffix in (".json", ".parquet"):
            target = results_dir / path.relative_to(committed)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)


def extend_config(
    config: str | Path, submitted: list[ModelConfig], *, models_dir: Path
) -> tuple[Path, BenchmarkConfig, dict[str, ModelConfig]]:
    """The benchmark config with the submitted models added to (or replacing their id in) its roster."""
    path, cfg, models = resolve_benchmark_config(config, models_dir=models_dir)
    for model in submitted:
        models[model.id] = model
    rw = models[cfg.random_walk]
    if not (rw.source.kind == "tycheon" and getattr(rw.source, "forecaster", None) == "naive"):
        raise ConfigError(
            f"{rw.id}: the random walk {cfg.random_walk!r} must stay the tycheon 'naive' forecaster "
            f"(every evaluation reports it, ADR-0006), got source {rw.source.model_dump()}"
        )
    roster = list(cfg.models) + [m.id for m in submitted if m.id not in cfg.models]
    extended = BenchmarkConfig.model_validate({**cfg.model_dump(), "models": roster})
    return path, extended, {m: models[m] for m in roster}


def run_benchmark(
    *,
    config: str | Path,
    submitted: list[ModelConfig],
    models_dir: Path,
    results_dir: Path,
    cache_dir: Path,
    work_dir: Path,
    progress: bool = False,
) -> SubmissionRun:
    """Run the extended benchmark through the harness pipeline and write the next results version.

    Raises
    ------
    benchmarks.config.ConfigError
        The benchmark config or one of its models is invalid.
    tycheon.backtest.guards.LookaheadError
        A model reached data after its origin (never swallowed).
    """
    from benchmarks.pipeline import RunInputs, build_results

    source, cfg, models = extend_config(config, submitted, models_dir=models_dir)
    ids = ", ".join(m.id for m in submitted)
    config_path = write_benchmark_config(
        cfg,
        work_dir / "config" / f"{cfg.name}.toml",
        header=f"{source.name} with the submitted model(s) {ids} added to its roster by benchmarks.submit",
    )
    from benchmarks.cluster import dask_client
    from benchmarks.run_guard import ranking_failures

    with dask_client(backend=cfg.backend, scheduler=cfg.scheduler) as client:  # None unless backend = "dask"
        doc, sidecar = build_results(
            RunInputs(config_path, cfg, models, ScoreCache(cache_dir), progress, dask_client=client)
        )
    problems = ranking_failures(doc, random_walk=cfg.random_walk, production_baseline=cfg.production_baseline)
    if problems:
        raise CannotRankError("the benchmark cannot rank, so nothing was written: " + "; ".join(problems))
    out = write_results(doc, sidecar, results_dir=results_dir)
    return SubmissionRun(results_path=out, doc=read_results(out), config_path=config_path)


def render(*, results_dir: Path, site_dir: Path, html: bool) -> Path:
    """Render the pages into ``site_dir/docs`` and, with ``html``, build them with ``mkdocs --strict``.

    Returns the folder to open: ``site_dir/site`` (HTML) or ``site_dir/docs`` (markdown).
    """
    from benchmarks.render.site import build_html, render_site

    docs = site_dir / "docs"
    render_site(results_dir=results_dir.resolve(), out=docs.resolve())
    if not html:
        return docs
    build_html(site_dir / "mkdocs.yml", quiet=True)
    return site_dir / "site"
