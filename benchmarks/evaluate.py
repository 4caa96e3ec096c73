"""A user's own data through the published benchmark's pipeline, into the user's own folder.

``tycheon evaluate FILE`` and :meth:`tycheon.evaluation.Evaluation.to_results` / ``.to_site`` arrive here
through the library's one hand-over (:func:`tycheon._harness.load_harness`). Nothing here computes a
statistic: a benchmark config with one user-file dataset (``[datasets.file]``) is written under
``OUT/config/``, run by :func:`benchmarks.pipeline.build_results` (the published benchmark's pipeline;
for an :class:`~tycheon.evaluation.Evaluation` it is handed the score sets the evaluation already has, see
:func:`write_evaluation`), written by :func:`benchmarks.results_io.write_results` as an append-only
version under ``OUT/results/``, rendered by :func:`benchmarks.render.site.render_site` into
``OUT/site/docs`` and built with ``mkdocs build --strict`` into ``OUT/site/site``.

Layout of ``OUT`` (default ``./tycheon-results``)::

    config/<name>.toml        the generated benchmark config (the user file's path relative to it)
    results/<name>/vNNNN.json the results version (+ parquet sidecar); file name + sha256 only, no paths
    cache/                    score sets of earlier runs, so a rerun with new models is quick
    data/<name>.parquet       only for a DataFrame given to the Python API (the file the config names)
    site/docs, site/mkdocs.yml, site/site/index.html
    .tycheon-evaluate.json    the marker: sha256 of every file this command wrote (see below)
    .lock                     held (flock) for the whole run: a second run into OUT refuses at once

``OUT`` may never be, or lie inside, the repository's published results (``benchmarks/results``).

``OUT`` is the command's own folder: it must be absent, empty, or hold the marker, else the run is refused
before anything is read. Inside it, a run replaces only files the marker lists with the content it
recorded (the config, the data file, the site); a file added or edited since makes the run refuse, named,
before it computes. ``results/`` is append-only and ``cache/`` holds files named by their content key. A
run whose random walk or production baseline failed writes nothing (:mod:`benchmarks.run_guard`); the
site is built in ``.site-staging`` and swapped in whole, so a failed build leaves the previous site.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks import memory_policy
from benchmarks.cache import ScoreCache
from benchmarks.config import ConfigError, resolve_benchmark_config
from benchmarks.owned_dir import OwnedFolder
from benchmarks.perf.memory import mark_stage
from benchmarks.pipeline import RunInputs, build_results
from benchmarks.render.site import RenderTargetError, build_html, render_site
from benchmarks.results_io import RESULTS_DIR, existing_versions, write_results
from benchmarks.run_guard import CannotRankError, ResultsLocked, require_ranking, results_lock
from benchmarks.run_inputs import GivenRun
from tycheon.backtest.scoreset import ScoreSet
from tycheon.data.manifest import content_hash
from tycheon.data.userfile import DEFAULT_MAX_ROWS
from tycheon.evaluation import DataSpec, Evaluation, EvaluationPlan, summary_lines

__all__ = [
    "BAD_INPUT",
    "DEFAULT_OUT",
    "MARKER",
    "RUN_FAILED",
    "OutputFolderError",
    "OutputWriteError",
    "Written",
    "run_file",
    "seconds_per_fit",
    "write_evaluation",
]

DEFAULT_OUT = Path("tycheon-results")
#: The manifest marker that makes a folder ``tycheon evaluate``'s own (``OUT/.tycheon-evaluate.json``).
MARKER = ".tycheon-evaluate.json"
SITE_STAGING = ".site-staging"


class OutputFolderError(ValueError):
    """``--out`` points where user results must not go: the repository's published results, a file, or a
    folder (or files in it) this command did not write."""


class OutputWriteError(ValueError):
    """An OS error while writing into ``--out`` (a read-only folder, a full disk), named with its path."""


#: Errors of this module a command line reports as bad input (one line, exit code 2).
BAD_INPUT: tuple[type[Exception], ...] = (
    OutputFolderError,
    OutputWriteError,
    ResultsLocked,
    ConfigError,
    RenderTargetError,
)
#: The run itself failed (it cannot rank): one line, exit code 1, nothing written.
RUN_FAILED: tuple[type[Exception], ...] = (CannotRankError,)


@dataclass(frozen=True)
class Written:
    """What an evaluation wrote: the results file, the built site's folder (or None), the summary."""

    results: Path
    site: Path | None
    summary: list[str]
    doc: dict[str, Any]


def slug(text: str) -> str:
    """A config/dataset name from a file stem: lower case, ``[a-z0-9_-]``, starting alphanumeric."""
    out = re.sub(r"[^a-z0-9_\-]+", "_", text.lower()).strip("_-")[:64]
    return out if out and out[0].isalnum() else f"data_{out}"[:64]


def _check_out(out: Path) -> Path:
    out = out.resolve()
    published = RESULTS_DIR.resolve()
    if out == published or published in out.parents or out in published.parents:
        raise OutputFolderError(
            f"--out {out} would write into (or over) the repository's published results {published}; "
            "choose a folder of your own (default ./tycheon-results)"
        )
    return out


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def config_text(
    *, name: str, file: Path, config_dir: Path, data: DataSpec, levels: tuple[str, ...], plan: EvaluationPlan
) -> str:
    """The benchmark config of one user-file evaluation (TOML)."""
    s = plan.settings
    top = {
        "name": name,
        "description": f"tycheon evaluate on the user file {file.name}",
        "seed": s.seed,
        "horizon": s.horizon,
        "stride": s.stride,
        "n_origins": s.n_origins,
        "embargo": 0,
        "min_history": s.min_history,
        "quantile_levels": list(s.quantile_levels),
        "n_samples": 0,
        "metrics": list(s.metrics),
        "random_walk": s.random_walk,
        "production_baseline": s.baseline,
        "alpha": s.alpha,
        "verdict_adjust": s.verdict_adjust,
        "min_cell": s.min_cell,
        "n_jobs": s.n_jobs,
        "n_calibration_origins": s.n_calibration_origins,
        "backend": s.backend,
        "models": list(s.models),
    }
    if s.time_budget is not None:
        top["time_budget_seconds"] = float(s.time_budget)
    user = {
        "path": Path(os.path.relpath(file, config_dir)).as_posix(),
        "id": data.id_col,
        "time": data.time_col,
        "target": data.target_col,
        "levels": list(levels),
        "nan_policy": data.nan_policy,
        "edge_nan": data.edge_nan,
        "static_universe": data.static_universe,
        "redistributable": data.redistributable,
        **({"max_rows": data.max_rows} if data.max_rows not in (None, DEFAULT_MAX_ROWS) else {}),
    }
    # only what the user declared: the pipeline infers the rest again (same rule, same data), so the
    # results carry the "inferred" warning as the plan said it
    for key, value in (("freq", data.freq), ("season_length", data.season_length), ("licence", data.licence)):
        if value is not None:
            user[key] = value
    lines = ["# Written by tycheon evaluate; rerun with python -m benchmarks.run --config this-file.", ""]
    lines += [f"{k} = {_toml_value(v)}" for k, v in top.items()]
    # the protocol-sensitivity audit backtests the roster eight more times: opt-in for a user's own file
    lines += ["", "[sensitivity]", "datasets = []"]
    lines += [
        "",
        "[[datasets]]",
        f"name = {_toml_value(name)}",
        f"units = {_toml_value(list(s.units))}",
        "",
        "[datasets.file]",
    ]
    lines += [f"{k} = {_toml_value(v)}" for k, v in user.items()]
    return "\n".join(lines) + "\n"


@contextlib.contextmanager
def _owned_out(out: Path) -> Iterator[OwnedFolder]:
    """Claim ``out`` (see the module docstring) and hold its lock for the body; an OS error on the way
    (read-only folder, full disk) becomes one :class:`OutputWriteError` naming the path and the reason."""
    folder = OwnedFolder(out, marker=MARKER, writer="tycheon evaluate", option="--out", error=OutputFolderError)
    try:
        folder.claim()
        with results_lock(out):
            yield folder
    except OSError as err:
        raise OutputWriteError(f"{_os_problem(err, out)}; no results version was written") from err


def _os_problem(err: OSError, out: Path) -> str:
    reason = err.strerror or str(err)
    if err.errno is not None:
        reason += f" ({errno.errorcode.get(err.errno, err.errno)})"
    if err.filename is None:
        return f"--out {out}: {reason}"
    path = Path(os.fsdecode(err.filename))
    verb = "cannot write" if path == out or out in path.parents else "cannot read or write"
    return f"{verb} {path}: {reason}"


def _write_text(path: Path, text: str) -> None:
    """Write ``text`` through a temporary file, so a full disk leaves the old file or none, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def run_file(
    file: Path,
    *,
    data: DataSpec,
    levels: tuple[str, ...],
    plan: EvaluationPlan,
    out: Path = DEFAULT_OUT,
    build_site: bool = True,
    progress: bool = False,
    echo: Callable[[str], None] = lambda line: None,
) -> Written:
    """Run a planned evaluation of a user file through the benchmark pipeline into ``out``.

    ``out`` is claimed and locked first (see the module docstring), and every file the run would replace
    is checked to be one this command wrote, before anything is computed.

    Raises
    ------
    OutputFolderError
        ``out`` is, or is inside, the published results folder; is a file; holds files this command did
        not write (or that were changed since) where it would write.
    OutputWriteError
        An OS error writing into ``out`` (read-only, full disk): nothing partial is left as if complete.
    benchmarks.run_guard.ResultsLocked
        Another run holds ``out``.
    benchmarks.run_guard.CannotRankError
        The random walk or the production baseline failed, or nothing could be ranked: nothing written.
    benchmarks.config.ConfigError
        A model id without a model config under ``benchmarks/models``.
    """
    mark_stage("read and plan")
    memory_policy.apply()  # numpy's huge-page advice off for the run (benchmarks.memory_policy)
    out = _check_out(Path(out))
    with _owned_out(out) as folder:
        return _run_owned(
            folder, Path(file), data=data, levels=levels, plan=plan, build_site=build_site, progress=progress
        )


def _run_owned(
    folder: OwnedFolder,
    file: Path,
    *,
    data: DataSpec,
    levels: tuple[str, ...],
    plan: EvaluationPlan,
    build_site: bool,
    progress: bool,
    given: Mapping[str, GivenRun] | None = None,
) -> Written:
    out = folder.root
    name = slug(data.name)
    config_path = out / "config" / f"{name}.toml"
    folder.check_replaceable([config_path, *([out / "site"] if build_site else [])])
    previous = config_path.read_bytes() if config_path.is_file() else None
    text = config_text(
        name=name, file=file.resolve(), config_dir=config_path.parent, data=data, levels=levels, plan=plan
    )
    _write_text(config_path, text)
    folder.record([config_path])
    try:
        path, cfg, models = resolve_benchmark_config(config_path)
        inputs = RunInputs(path, cfg, models, ScoreCache(out / "cache"), progress, given=given or {})
        body, sidecar = build_results(inputs)
        require_ranking(body, random_walk=cfg.random_walk, production_baseline=cfg.production_baseline)
        results = write_results(body, sidecar, results_dir=out / "results")
    except BaseException:
        # no version, so no config of one: the folder is left as it was before this run
        if previous is None:
            folder.remove([config_path])
        else:
            config_path.write_bytes(previous)
        raise
    mark_stage("write results")
    doc = json.loads(results.read_text(encoding="utf-8"))  # the document as written (and validated)
    try:
        site = _build_site(folder) if build_site else None
    except OSError as err:
        raise OutputWriteError(
            f"{_os_problem(err, out)}; the results version {results} was written, the site was not (the "
            "previous one, if any, is kept)"
        ) from err
    tables = [t for t in doc["leaderboards"] if t["dataset"] == name and t["protocol"] == "rolling_origin"]
    return Written(results=results, site=site, summary=summary_lines(tables), doc=doc)


def _build_site(folder: OwnedFolder) -> Path:
    """Render and build the site in a staging folder and swap it in whole: a failure (a full disk, a
    failed ``mkdocs build``) leaves the previous site as it was, never a partial one."""
    out = folder.root
    staging = out / SITE_STAGING  # this name is the command's own scratch space; a crashed run's is stale
    shutil.rmtree(staging, ignore_errors=True)
    try:
        render_site(results_dir=out / "results", out=staging / "docs")
        mark_stage("render site")
        build_html(staging / "mkdocs.yml", quiet=True)
        mark_stage("build site")
        site = out / "site"
        folder.remove([site])  # checked as this command's own before the run
        os.replace(staging, site)
        folder.record([site])
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return site / "site"


def write_evaluation(
    evaluation: Evaluation,
    out: Path,
    *,
    build_site: bool = False,
    given: Mapping[str, ScoreSet] | None = None,
) -> Written:
    """Write an :class:`~tycheon.evaluation.Evaluation` of the Python API as a results version (and site).

    A DataFrame source is saved as ``OUT/data/<name>.parquet``, the file the generated config names (the
    config is written as for ``tycheon evaluate``, the provenance of the version). ``given``: the
    evaluation's score sets per model (what :meth:`~tycheon.evaluation.Evaluation.to_results` passes);
    the pipeline uses each where the run it would make from the config is the one that made it (the
    panel it reads from the file has the same content; :func:`benchmarks.model_run.given_scores`) and
    runs the others, so without ``given`` every model runs again, with the same seed. ``out`` is claimed
    and locked as in :func:`run_file`."""
    out = _check_out(Path(out))
    with _owned_out(out) as folder:
        source = evaluation.source
        if isinstance(source, Path):
            file = source
        else:
            file = out / "data" / f"{slug(evaluation.data.name)}.parquet"
            folder.check_replaceable([file])
            file.parent.mkdir(parents=True, exist_ok=True)
            tmp = file.with_suffix(".parquet.tmp")
            try:
                source.to_parquet(tmp, index=False)
                os.replace(tmp, file)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    tmp.unlink()
            folder.record([file])
        return _run_owned(
            folder,
            file,
            data=evaluation.data,
            levels=evaluation.panel.levels,
            plan=evaluation.plan,
            build_site=build_site,
            progress=False,
            given=_given_runs(evaluation, given or {}),
        )


def _given_runs(evaluation: Evaluation, scores: Mapping[str, ScoreSet]) -> dict[str, GivenRun]:
    """The evaluation's score sets with what made them beyond their ``meta``: its panel's content, and
    the settings :func:`tycheon.evaluation.run_plan` ran every model under, each model built from its
    forecaster id at the constructor's defaults (``forecaster_factory(model)``)."""
    if not scores:
        return {}
    s = evaluation.plan.settings
    dataset = content_hash(evaluation.panel)
    return {
        model: GivenRun(
            scores=score_set,
            dataset=dataset,
            factory=(model, {}),
            backend=s.backend,
            n_jobs=s.n_jobs,
            time_budget=s.time_budget,
        )
        for model, score_set in scores.items()
    }


def seconds_per_fit(results_dir: Path = RESULTS_DIR) -> dict[str, float]:
    """Measured seconds per (series, origin) block of each model, from the latest version of every
    published benchmark (fit + predict time over blocks scored, pooled over its datasets)."""
    spent: dict[str, float] = {}
    blocks: dict[str, int] = {}
    for folder in sorted(p for p in Path(results_dir).iterdir() if p.is_dir()) if Path(results_dir).is_dir() else []:
        versions = list(existing_versions(folder))
        if not versions:
            continue
        try:
            doc = json.loads(versions[-1].read_text())
        except (OSError, ValueError):
            continue
        for model in doc.get("models", []):
            for run in model.get("runs", []):
                t = run.get("timings") or {}
                if run.get("status") == "ran" and run.get("support") and t.get("fit_seconds") is not None:
                    spent[model["id"]] = (
                        spent.get(model["id"], 0.0) + t["fit_seconds"] + (t.get("predict_seconds") or 0.0)
                    )
                    blocks[model["id"]] = blocks.get(model["id"], 0) + int(run["support"])
    return {m: spent[m] / blocks[m] for m in spent if blocks[m]}
