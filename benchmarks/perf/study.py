"""The whole study at scale: one benchmark run (backtest, statistics and analyses, results), its pages and
its site, each stage timed, in a fresh process whose tree memory the parent samples.

``python -m benchmarks.perf.study --config m5scale --out DIR`` (the child) resolves the config, runs the
pipeline with the score cache off, writes the results version under ``DIR/results``, renders the pages
into ``DIR/site/docs`` (the renderer first re-verifies every table from the sidecar) and builds the site
with ``mkdocs build --strict``. It prints one JSON line with the stage times:

- ``backtest_s``: time inside the engine's ``run`` (every model, dataset, protocol, calibration origins);
- ``statistics_analyses_s``: the rest of building the results (loading data, statistics, leaderboards and
  every analysis), ``build_results`` minus ``backtest_s``;
- ``results_write_s``: writing the JSON and the sidecar;
- ``render_s`` and ``site_build_s``: the renderer and mkdocs;

plus the JSON's and the sidecar's sizes, the number of scored rows, and ``pipeline_stages``: the pipeline's
own stage marks (:func:`benchmarks.perf.memory.mark_stage`) as seconds and the main process's peak RSS per
stage (leaderboards and interval tables, analyses, replay, ...; every ``backtest <model>`` mark counted as
``backtest``, engine time included), so the statistics stage can be read part by part, and ``timeline``:
each stage's end as ``time.time()`` (start-up, the pipeline's marks, results writing, render, site build),
which places the parent's tree-peak sample in its stage. :func:`run_study` (the parent)
starts it and samples the resident set of the child and all its descendants (joblib workers, isolated
model processes, mkdocs) every :data:`benchmarks.perf.cold.SAMPLE_S` seconds. Nothing is written into
``benchmarks/results/``: the scale run's results are produced and rendered here, not committed.
"""

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
    from benchmarks import config as config_module
    from benchmarks.cache import ScoreCache
    from benchmarks.config import resolve_benchmark_config
    from benchmarks.perf.memory import STAGE_LOG_ENV, read_stage_log, release_heap
    from benchmarks.pipeline import RunInputs, build_results
    from benchmarks.render.site import build_html, find_mkdocs
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
    release_heap()  # the render runs beside this process, as the user's render stage runs after the benchmark's
    sidecar_files = sorted((written.parent / "sidecars").glob("*.parquet"))  # stored once per content hash
    t0 = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.render",
            "--results",
            str(out / "results"),
            "--out",
            str(out / "site" / "docs"),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    render_s = time.perf_counter() - t0
    timeline.append(("render", time.time()))
    site_build_s = None
    if find_mkdocs() is not None:
        t0 = time.perf_counter()
        build_html(out / "site" / "mkdocs.yml", quiet=True)
        site_build_s = time.perf_counter() - t0
        timeline.append(("site build", time.time()))
    report = {
        "config": cfg.name,
        "rows": rows,
        "backtest_s": spent[0],
        "statistics_analyses_s": build_s - spent[0],
        "results_write_s": results_write_s,
        "render_s": render_s,
        "site_build_s": site_build_s,
        "json_mb": written.stat().st_size / 1e6,
        "sidecar_mb": sum(p.stat().st_size for p in sidecar_files) / 1e6,
        "whole_s": time.perf_counter() - t_start,
        "pipeline_stages": stages,
        "timeline": timeline,
    }
    print(json.dumps(report), flush=True)
    return 0


def run_study(config: str = "m5scale", *, timeout: float = 3600.0, keep: str | None = None) -> dict[str, Any]:
    """Run :func:`main` in a fresh process (results in a temporary folder, or ``keep``); its report plus
    ``wall_s`` (the whole process), ``tree_peak_gib`` (sampled resident set of the process tree) and
    ``tree_peak_stage`` (the stage of the child's ``timeline`` that sample fell in, :func:`stage_at`)."""
    from benchmarks.perf.cold import TreePeak

    with tempfile.TemporaryDirectory(prefix="tycheon-study-") as tmp:
        out = Path(keep) if keep else Path(tmp)
        cmd = [sys.executable, "-m", "benchmarks.perf.study", "--config", config, "--out", str(out)]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ})
        sampler = TreePeak(proc.pid).start()
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        finally:
            peak = sampler.stop()
        wall = time.perf_counter() - t0
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (stderr.strip().splitlines() or [""])[-1]
        raise RuntimeError(f"study run of {config!r} failed (exit {proc.returncode}): {tail[:300]}")
    report: dict[str, Any] = json.loads(lines[-1])
    report.update(wall_s=wall, tree_peak_gib=peak, tree_peak_stage=stage_at(report.get("timeline") or [], sampler.at))
    return report


if __name__ == "__main__":
    sys.exit(main())
