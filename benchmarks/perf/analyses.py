"""What the issue-16 analyses add to a backtest: time and peak memory on the synthetic marketplace.

``python -m benchmarks.perf.analyses [--n-series 30490] [--n-jobs 2] [--quick]`` builds the perf panel
(:func:`benchmarks.perf.common.build_panel`: 67 months, 8 origins, stride 3, horizon 6), runs the baseline
roster plus the production baseline (``snaive_momentum``) on units ``series`` and ``total`` (the
backtest the analyses are added to), then

1. the extra backtest the dial needs (``groups:k`` and ``groups_random:k`` for k = 1..625, capped; the
   series and total units are reused, not rerun),
2. each analysis on the score sets: unit inversion, aggregation dial, class winners, uncertainty (block
   bootstrap B = 2000, ranking bootstrap, Holm/BH, MCS), horizon robustness, relative error vs the random
   walk,

and prints one line per step (seconds), the added total, and the process's peak RSS (``VmHWM``, the
backtest included) against the issue's targets (60 s added on 2 cores; 4 GiB peak). The spikiness sweep
runs its own small panels (``--sweep-series``, five settings) and is reported on its own line.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from benchmarks.leaderboard_spec import leaderboard_spec
from benchmarks.perf.common import (
    HORIZON,
    N_ORIGINS,
    STRIDE,
    build_panel,
    protocol,
    roster,
)
from benchmarks.perf.memory import peak_gib
from tycheon.analysis.across import relative_error
from tycheon.analysis.class_winners import class_winners
from tycheon.analysis.dial import aggregation_dial, dial_units
from tycheon.analysis.horizon import horizon_robustness
from tycheon.analysis.inversion import unit_inversion
from tycheon.analysis.prepared import PreparedScores
from tycheon.analysis.sweep import spikiness_sweep
from tycheon.analysis.uncertainty import leaderboard_uncertainty
from tycheon.backtest.engine import run
from tycheon.backtest.factories import forecaster_factory
from tycheon.data.synthetic import DEFAULT_SPIKINESS, generate_marketplace

__all__ = ["main"]

ADDED_TARGET_S = 60.0
PEAK_TARGET_GIB = 4.0
SWEEP_SETTINGS = (0.0, 0.5, 1.0, 3.0, 6.0)


def _factories() -> dict[str, Any]:
    return {**roster(), "snaive_momentum": forecaster_factory("snaive_momentum")}


def _timed(label: str, fn: Callable[[], Any], log: list[tuple[str, float]]) -> Any:
    t0 = time.perf_counter()
    out = fn()
    log.append((label, time.perf_counter() - t0))
    print(f"{label}: {log[-1][1]:.2f}s", flush=True)
    return out


def small_config(config: str, dataset: str | None = None) -> int:
    """The analyses' added time on a benchmark config's first dataset, as the pipeline runs them: the
    config's roster (models that can run here), protocol and units, its ``dial`` and ``sweep``."""
    from benchmarks.analyses import dataset_analyses, dial_unit_names, sweep_table
    from benchmarks.config import resolve_benchmark_config
    from benchmarks.pipeline import RunInputs, load_dataset, rolling_protocol
    from benchmarks.roster_run import run_models

    path, cfg, models = resolve_benchmark_config(config)
    inputs = RunInputs(config_path=path, config=cfg, models=models)
    entry = next((d for d in cfg.datasets if d.key == dataset), None) if dataset else cfg.datasets[0]
    if entry is None:
        raise SystemExit(f"{config} has no dataset {dataset!r} (has {[d.key for d in cfg.datasets]})")
    rolling = rolling_protocol(cfg)  # as the pipeline
    spec = leaderboard_spec(cfg)  # as the pipeline
    loaded = load_dataset(entry.name, dict(entry.options), entry.subsample, manifest=inputs.manifest)
    mh = entry.min_history or cfg.min_history
    base: list[tuple[str, float]] = []
    added: list[tuple[str, float]] = []
    run = _timed(
        f"{entry.key}: backtest of the leaderboard units {list(entry.units)}",
        lambda: run_models(
            inputs,
            loaded,
            rolling,
            units=list(entry.units),
            min_history=mh,
            protocol_id="rolling_origin",
            dataset=entry.key,
        ),
        base,
    )
    table = run.table
    units = dial_unit_names(entry.dial, loaded.panel.n_series, leaderboard_units=entry.units)
    dial = _timed(
        f"backtest of the dial units {units}",
        lambda: (
            run_models(
                inputs, loaded, rolling, units=units, min_history=mh, protocol_id="rolling_origin", dataset=entry.key
            ).table
            if units
            else None
        ),
        added,
    )
    _timed(
        "analyses (inversion, dial, class winners, uncertainty x units x metrics, horizon, relative error)",
        lambda: dataset_analyses(
            table,
            dataset=entry.key,
            protocol="rolling_origin",
            spec=spec,
            n_series=loaded.panel.n_series,
            dial_table=dial,
        ),
        added,
    )

    def sweep():
        tables = {}
        own = float(dict(entry.options).get("spikiness", DEFAULT_SPIKINESS))
        for k in entry.sweep:
            if float(k) == own and {"total", "series"} <= set(entry.units):  # as the pipeline: reuse the run
                tables[own] = table[table["unit"].isin(["total", "series"])]
                continue
            variant = load_dataset(
                entry.name, {**dict(entry.options), "spikiness": float(k)}, entry.subsample, manifest=inputs.manifest
            )
            tables[float(k)] = run_models(
                inputs,
                variant,
                rolling,
                units=["total", "series"],
                min_history=mh,
                protocol_id="rolling_origin",
                dataset=entry.key,
            ).table
        return sweep_table(
            tables, dataset=entry.key, protocol="rolling_origin", spec=spec, n_entities=loaded.panel.n_series
        )

    if entry.sweep:
        res = _timed(f"spikiness sweep {list(entry.sweep)} (backtests included)", sweep, added)
        print(
            "  "
            + ", ".join(
                f"{p.spikiness:g}: total {p.total_rank} / series {p.series_rank} of {p.n_models}" for p in res.points
            )
        )
    total = sum(s for _, s in added)
    print(
        f"{entry.key}: leaderboard backtest {base[0][1]:.1f}s; the analyses add {total:.1f}s; peak RSS "
        f"{peak_gib():.2f} GiB"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf.analyses", description=__doc__)
    parser.add_argument("--n-series", type=int, default=30490)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--n-resamples", type=int, default=2000)
    parser.add_argument("--sweep-series", type=int, default=400)
    parser.add_argument(
        "--resample",
        choices=["origin", "block", "series"],
        default="origin",
        help="bootstrap of the CIs: origin (time blocks, the pipeline's default), (series, origin) blocks, series",
    )
    parser.add_argument("--quick", action="store_true", help="300 series, 200 resamples (a smoke run)")
    parser.add_argument(
        "--config", default=None, help="measure on this benchmark config's first dataset instead (e.g. small)"
    )
    parser.add_argument("--dataset", default=None, help="with --config: this dataset of it (default: the first)")
    args = parser.parse_args(argv)
    if args.config:
        return small_config(args.config, args.dataset)
    n_series = 300 if args.quick else args.n_series
    n_res = 200 if args.quick else args.n_resamples
    spec = leaderboard_spec(  # a benchmark config's settings, the rest at the config model's defaults
        {
            "metrics": ["mase", "rmsse"],
            "production_baseline": "snaive_momentum",
            "random_walk": "naive",
            "horizon": HORIZON,
            "stride": STRIDE,
            "seed": 0,
            "quantile_levels": [],
        }
    )
    panel = build_panel(n_series)
    print(
        f"panel {panel.n_series} series x {len(panel.periods)} months, {N_ORIGINS} origins, stride {STRIDE}, "
        f"horizon {HORIZON}; roster {sorted(_factories())}; B = {n_res}",
        flush=True,
    )
    kw = {"quantile_levels": (), "min_history": 1, "backend": "joblib", "n_jobs": args.n_jobs, "seed": 0}
    base: list[tuple[str, float]] = []
    scores = _timed(
        "backtest (series, total)", lambda: run(panel, protocol(), _factories(), units=("series", "total"), **kw), base
    )
    table = scores.table
    del scores
    print(f"  peak RSS after the backtest {peak_gib():.2f} GiB", flush=True)
    added: list[tuple[str, float]] = []
    extra = [u for u in dial_units(panel.n_series) if u != "series"]
    dial_scores = _timed(
        f"backtest of the dial units ({len(extra)} units)",
        lambda: run(panel, protocol(), _factories(), units=extra, **kw),
        added,
    )
    dial_table = dial_scores.table
    del dial_scores
    # one split by unit for every analysis: each unit's block scores and step losses are computed once
    ps = _timed("split by unit", lambda: PreparedScores(table, dial_table), added)
    inv = _timed(
        "unit inversion (total, series)", lambda: unit_inversion(ps.subset(["total", "series"]), spec=spec), added
    )
    dial = _timed("aggregation dial", lambda: aggregation_dial(ps, spec=spec, n_series=panel.n_series), added)
    cw = _timed(
        "class winners",
        lambda: class_winners(ps, baseline=spec.baseline, metric="rmsse", min_cell=spec.min_cell),
        added,
    )
    unc = _timed(
        f"uncertainty (series, B={n_res}, {args.resample} blocks)",
        lambda: leaderboard_uncertainty(ps, spec=spec, metric="rmsse", n_resamples=n_res, resample=args.resample),
        added,
    )
    _timed(
        f"uncertainty per demand class (series, 4 classes, B={n_res})",
        lambda: [
            leaderboard_uncertainty(
                ps, spec=spec, metric="rmsse", n_resamples=n_res, resample=args.resample, demand_class=c
            )
            for c in ("smooth", "erratic", "intermittent", "lumpy")
        ],
        added,
    )
    _timed("horizon robustness", lambda: horizon_robustness(ps, metric="mase"), added)
    _timed(
        "relative error vs the random walk",
        lambda: relative_error(
            ps,
            dataset="synthetic",
            metric="mase",
            random_walk=spec.random_walk,
            min_cell=spec.min_cell,
            n_resamples=n_res,
        ),
        added,
    )
    total_added = sum(s for _, s in added)
    peak = peak_gib()
    print(
        f"backtest {base[0][1]:.1f}s; analyses add {total_added:.1f}s (target <= {ADDED_TARGET_S:.0f}s: "
        f"{'met' if total_added <= ADDED_TARGET_S else 'NOT met'}); peak RSS {peak:.2f} GiB "
        f"(target < {PEAK_TARGET_GIB:.0f}: {'met' if peak is not None and peak < PEAK_TARGET_GIB else 'NOT met'})"
    )
    series = next(c for c in inv.columns if c.unit == "series")
    total = next(c for c in inv.columns if c.unit == "total")
    print(
        f"  baseline rank (mase): total {total.baseline_rank['mase']} / series {series.baseline_rank['mase']} "
        f"of {series.n_models}; inverted={inv.inverted}; better per series {series.n_better}"
    )
    for curve in dial.curves:
        print(
            f"  dial {curve.kind}: "
            + ", ".join(f"k={p.k}:{p.baseline_rank['friedman']}" for p in curve.points)
            + f"; never improves {curve.never_improves}"
        )
    print(
        f"  class winners: pooled {cw.pooled_winner} leads {cw.pooled_winner_leads} of {cw.n_classes}; "
        f"MCS {[r.model for r in unc.rows if r.in_mcs]} ({unc.mcs_reason or 'ok'})"
    )
    if args.sweep_series:
        sweep_kw = {"quantile_levels": (), "min_history": 1, "backend": "sequential", "seed": 0}

        def sweep():
            tables = {
                k: run(
                    generate_marketplace(n_entities=args.sweep_series, n_periods=67, spikiness=k, seed=11),
                    protocol(),
                    _factories(),
                    units=("total", "series"),
                    **sweep_kw,
                ).table
                for k in SWEEP_SETTINGS
            }
            return spikiness_sweep(tables, spec=spec, metric="mase")

        res = _timed(
            f"spikiness sweep ({len(SWEEP_SETTINGS)} panels of {args.sweep_series}, backtests included)", sweep, []
        )
        print("  " + ", ".join(f"{p.spikiness:g}: total {p.total_rank} / series {p.series_rank}" for p in res.points))
    return 0 if total_added <= ADDED_TARGET_S and (peak is None or peak < PEAK_TARGET_GIB) else 1


if __name__ == "__main__":
    raise SystemExit(main())
