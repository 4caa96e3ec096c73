"""The whole study at scale, as a user runs it: one benchmark run (backtest, statistics and analyses,
results), then its pages, then its site, each a fresh process whose tree memory the parent samples.

``python -m benchmarks.perf.study --config m5scale --out DIR`` (the child) resolves the config, runs the
pipeline with the score cache off and writes the results version under ``DIR/results``. It prints one
JSON line with the stage times:

- ``backtest_s``: time inside the engine's ``run`` (every model, dataset, protocol, calibration origins);
- ``statistics_analyses_s``: the rest of building the results (loading data, statistics, leaderboards and
  every analysis), ``build_results`` minus ``backtest_s``;
- ``results_write_s``: writing the JSON and the sidecar;

plus the JSON's and the sidecar's sizes, the number of scored rows, and ``pipeline_stages``: the pipeline's
own stage marks (:func:`benchmarks.perf.memory.mark_stage`) as seconds and the main process's peak RSS per
stage (leaderboards and interval tables, analyses, replay, ...; every ``backtest <model>`` mark counted as
``backtest``, engine time included), so the statistics stage can be read part by part, and ``timeline``:
each stage's end as ``time.time()`` (start-up, the pipeline's marks, results writing), which places a
tree-peak sample in its stage. :func:`run_study` (the parent) starts it, then the renderer into
``DIR/site/docs`` (which first re-verifies every table from the sidecar) and ``mkdocs build --strict``,
each after the previous one has exited, as ``python -m benchmarks`` runs its stages, and samples the
resident set of each process and all its descendants (joblib workers, isolated model processes) every
:data:`benchmarks.perf.cold.SAMPLE_S` seconds. Nothing is written into ``benchmarks/results/``: the scale
run's results are produced and rendered here, not committed."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["main", "run_study", "stage_at", "stage_breakdown", "stage_name"]


def stage_name(stage: str) -> str:
    """A mark's stage as the breakdown counts it: every ``backtest <model>`` is ``backtest``."""
    return "backtest" if str(stage).startswith("backtest ") else str(stage)


def stage_at(timeline: list[tuple[str, float]], t: float | None) -> str | None:
    """The stage a moment ``t`` (``time.time()``) fell in: the first ``(stage, end)`` of ``timeline`` (in
    order, each stage beginning where the previous one ended) that ends at or after it; None when ``t``
    is None or after the last end."""
    if t is None:
        return None
    for stage, end in timeline:
        if t <= end:
            return stage
    return None


def stage_breakdown(marks: list[dict[str, Any]], *, start: float) -> dict[str, dict[str, float]]:
    """Seconds and peak RSS (GiB, the main process's high-water mark in the stage) of each stage, from the
    marks of :func:`benchmarks.perf.memory.mark_stage` (in order; each ends its stage, the first one began
    at ``start``, a ``time.time()``); repeated names, and every ``backtest <model>``, are summed as one."""
    out: dict[str, dict[str, float]] = {}
    previous = start
    for mark in marks:
        name = stage_name(mark["stage"])
        row = out.setdefault(name, {"seconds": 0.0, "peak_gib": 0.0})
        row["seconds"] += float(mark["t"]) - previous
        row["peak_gib"] = max(row["peak_gib"], float(mark["hwm_kb"] or 0) / 2**20)
        previous = float(mark["t"])
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf.study")
    parser.add_argument("--config", default="m5scale")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    t_start = time.perf_counter()
    from benchmarks import memory_policy

    memory_policy.apply()  # as python -m benchmarks.run does (benchmarks.memory_policy)
    from benchmarks import config as config_module
    from benchmarks.cache import ScoreCache
    from benchmarks.config import resolve_benchmark_config
    from benchmarks.perf.memory import STAGE_LOG_ENV, read_stage_log
    from benchmarks.pipeline import RunInputs, build_results
    from benchmarks.results_io import write_results
    from tycheon.backtest import engine

    out = Path(args.out)
    path, cfg, models = resolve_benchmark_config(args.config, models_dir=config_module.MODELS_DIR)
    spent = [0.0]
    depth = [0]  # the engine's calibrated run calls run again: only the outermost call is timed
    real_run = engine.run

    def timed_run(*a: Any, **k: Any) -> Any:
        t0 = time.perf_counter()
        depth[0] += 1
        try:
            return real_run(*a, **k)
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                spent[0] += time.perf_counter() - t0

    engine.run = timed_run  # type: ignore[assignment]  # the pipeline calls engine.run by attribute
    inputs = RunInputs(path, cfg, models, ScoreCache(out / "cache", enabled=False), False)
    stage_log = out / "pipeline_stages.jsonl"
    stage_log.parent.mkdir(parents=True, exist_ok=True)
    stage_log.unlink(missing_ok=True)
    os.environ[STAGE_LOG_ENV] = str(stage_log)  # the pipeline's marks only: unset before the render starts
    started = time.time()
    t0 = time.perf_counter()
    doc, sidecar = build_results(inputs)
    build_s = time.perf_counter() - t0
    os.environ.pop(STAGE_LOG_ENV, None)
    engine.run = real_run  # type: ignore[assignment]
    marks = read_stage_log(stage_log)
    stages = stage_breakdown(marks, start=started)
    timeline = [("start-up", started)] + [(stage_name(str(m["stage"])), float(str(m["t"]))) for m in marks]
    rows = len(sidecar)
    t0 = time.perf_counter()
    written = write_results(doc, sidecar, results_dir=out / "results")
    results_write_s = time.perf_counter() - t0
    timeline.append(("results writing", time.time()))
    del doc, sidecar
    parts = sorted((written.parent / "parts").glob("*.parquet"))  # the score parts, stored once per content hash
    report = {
        "config": cfg.name,
        "rows": rows,
        "backtest_s": spent[0],
        "statistics_analyses_s": build_s - spent[0],
        "results_write_s": results_write_s,
        "json_mb": written.stat().st_size / 1e6,
        "parts_mb": sum(p.stat().st_size for p in parts) / 1e6,
        "whole_s": time.perf_counter() - t_start,
        "pipeline_stages": stages,
        "timeline": timeline,
    }
    print(json.dumps(report), flush=True)
    return 0


def _sampled(cmd: list[str], *, timeout: float, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run ``cmd`` as a fresh process with its tree's resident set sampled (:class:`.cold.TreePeak`):
    ``wall_s``, ``peak_gib``, ``peak_at`` (``time.time()`` of the peak sample), ``end`` (``time.time()``
    when it ended) and its ``stdout``; a non-zero exit raises with the last line of its stderr."""
    from benchmarks.perf.cold import TreePeak

    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env or {**os.environ})
    sampler = TreePeak(proc.pid).start()
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    finally:
        peak = sampler.stop()
    if proc.returncode != 0:
        tail = (stderr.strip().splitlines() or [""])[-1]
        raise RuntimeError(f"{' '.join(cmd[:4])} failed (exit {proc.returncode}): {tail[:300]}")
    return {
        "wall_s": time.perf_counter() - t0,
        "peak_gib": peak,
        "peak_at": sampler.at,
        "end": time.time(),
        "stdout": stdout,
    }


def run_study(config: str = "m5scale", *, timeout: float = 3600.0, keep: str | None = None) -> dict[str, Any]:
    """The whole study as a user runs it (``python -m benchmarks`` runs its stages one process after the
    other): :func:`main` in a fresh process (results in a temporary folder, or ``keep``), then the
    renderer (``python -m benchmarks.render``, which first re-verifies every table from the sidecar) and
    ``mkdocs build --strict`` each in its own process, every one with its tree's memory sampled.

    Returns :func:`main`'s report plus ``render_s``, ``site_build_s`` (None without mkdocs), ``wall_s``
    (the three processes), ``tree_peak_gib`` (the largest sampled resident set of any of their trees)
    and ``tree_peak_stage`` (the stage that sample fell in: one of :func:`main`'s ``timeline``, or
    ``render`` / ``site build``; :func:`stage_at`)."""
    from benchmarks.render.site import find_mkdocs

    with tempfile.TemporaryDirectory(prefix="tycheon-study-") as tmp:
        out = Path(keep) if keep else Path(tmp)
        run = _sampled(
            [sys.executable, "-m", "benchmarks.perf.study", "--config", config, "--out", str(out)], timeout=timeout
        )
        lines = [line for line in run["stdout"].splitlines() if line.startswith("{")]
        if not lines:
            raise RuntimeError(f"study run of {config!r} printed no report")
        report: dict[str, Any] = json.loads(lines[-1])
        timeline = list(report.get("timeline") or [])
        render = _sampled(
            [
                sys.executable,
                "-m",
                "benchmarks.render",
                "--results",
                str(out / "results"),
                "--out",
                str(out / "site" / "docs"),
            ],
            timeout=timeout,
        )
        timeline.append(("render", render["end"]))
        runs = [run, render]
        site = None
        mkdocs = find_mkdocs()
        if mkdocs is not None:
            # mkdocs-material 9.8 prints an end-of-life banner about MkDocs 2 on every build; not a failure
            cmd = [mkdocs, "build", "--strict", "--quiet", "-f", str(out / "site" / "mkdocs.yml")]
            site = _sampled(cmd, timeout=timeout, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
            timeline.append(("site build", site["end"]))
            runs.append(site)
    top = max(runs, key=lambda r: r["peak_gib"])
    report.update(
        render_s=render["wall_s"],
        site_build_s=None if site is None else site["wall_s"],
        wall_s=sum(r["wall_s"] for r in runs),
        tree_peak_gib=top["peak_gib"],
        tree_peak_stage=stage_at(timeline, top["peak_at"]),
        timeline=timeline,
    )
    return report


if __name__ == "__main__":
    sys.exit(main())
