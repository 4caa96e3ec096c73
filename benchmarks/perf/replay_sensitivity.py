"""``python -m benchmarks.perf.replay_sensitivity``: the selection-rule replay and the protocol-sensitivity
audit on the 30,490-series synthetic marketplace with the baseline roster (issue 17; target: the analysis
under 2 minutes on 2 cores).

The sensitivity audit needs K = 10 engine runs of the roster (rolling and static references, static
boundary -3/-1/+1/+3, rolling embargo 1 and 2, rolling refit calendars every 2nd and 3rd origin), each on
identical scored cells. Each
run is reduced to its per-coordinate losses at once (:func:`tycheon.analysis.sensitivity.run_losses`)
and its score set released, so memory stays at one score set. Timed and printed separately:

- ``engine``: the K backtests (the engine's own cost, measured by its own perf scripts too);
- ``analysis``: the replay on the rolling run's score set (all folds and non-overlapping), the K
  reductions and the report (pairing checks, PSS, winner swap, bootstrap CIs, TOST, Borda) - the part
  this issue adds, and what the 2-minute target is checked against.

``--quick`` runs a small panel (for tests; its numbers say nothing about the target).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

import numpy as np

from benchmarks.perf.common import (
    HORIZON,
    N_ORIGINS,
    N_PERIODS,
    SPIKINESS,
    STRIDE,
    peak_rss_gib,
    roster,
)

__all__ = ["TARGET_SECONDS", "main", "measure"]

TARGET_SECONDS = 120.0
BASELINE = "snaive_momentum"  # the production baseline: the replay's floor
MIN_HISTORY = 13


def measure(*, n_series: int, seed: int, n_jobs: int, n_resamples: int = 2000) -> dict[str, object]:
    """Run the K backtests and the analyses; return timings and the headline numbers."""
    import tycheon
    from tycheon.analysis.replay import ReplaySpec, replay
    from tycheon.analysis.sensitivity import (
        run_losses,
        sensitivity_protocols,
        sensitivity_report,
    )
    from tycheon.backtest.engine import run
    from tycheon.backtest.factories import forecaster_factory
    from tycheon.backtest.protocol import RollingOrigin

    panel = tycheon.data.load(
        "synthetic_marketplace", n_entities=n_series, n_periods=N_PERIODS, spikiness=SPIKINESS, seed=seed
    )
    factories = {**roster(), BASELINE: forecaster_factory(BASELINE)}
    base = RollingOrigin(horizon=HORIZON, stride=STRIDE, n_origins=N_ORIGINS, mode="analysis")
    protocols = sensitivity_protocols(base, panel, min_history=MIN_HISTORY)
    engine_s, analysis_s, replay_s = 0.0, 0.0, 0.0
    runs = {}
    summary = None
    for name, protocol in protocols.items():
        t0 = time.perf_counter()
        scores = run(
            panel, protocol, factories, min_history=MIN_HISTORY, backend="joblib", n_jobs=n_jobs, quantile_levels=()
        )
        engine_s += time.perf_counter() - t0
        t0 = time.perf_counter()
        if name == "rolling":
            summary = replay(scores.table, spec=ReplaySpec(baseline=BASELINE)).summary
            replay_s = time.perf_counter() - t0
        runs[name] = run_losses(scores.table, label=name)
        analysis_s += time.perf_counter() - t0
        del scores
        gc.collect()
    t0 = time.perf_counter()
    report = sensitivity_report(runs, seed=seed, n_resamples=n_resamples)
    analysis_s += time.perf_counter() - t0
    return {
        "engine_s": engine_s,
        "analysis_s": analysis_s,
        "replay_s": replay_s,
        "k": len(runs),
        "replay": summary,
        "report": report,
        "n_series": panel.n_series,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf.replay_sensitivity", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a 300-series panel (smoke test only)")
    parser.add_argument("--n-series", type=int, default=None)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args(argv)
    n = args.n_series or (300 if args.quick else 30490)
    print(
        f"machine: {os.cpu_count()} cores; synthetic marketplace {n} series x {N_PERIODS} months (seed "
        f"{args.seed}), baseline roster + {BASELINE}, {N_ORIGINS} origins, stride {STRIDE}, horizon {HORIZON}",
        flush=True,
    )
    m = measure(n_series=n, seed=args.seed, n_jobs=args.n_jobs, n_resamples=200 if args.quick else 2000)
    rep, summ = m["report"], m["replay"]
    met = m["analysis_s"] < TARGET_SECONDS
    print(
        f"replay+sensitivity analysis: {m['analysis_s']:.1f}s (replay {m['replay_s']:.1f}s) for K={m['k']} runs; "
        f"target < {TARGET_SECONDS:g}s: {'met' if met else 'MISSED'}"
    )
    print(
        f"engine: {m['engine_s']:.1f}s for the K={m['k']} backtests ({m['engine_s'] / m['k']:.1f}s per run); "
        f"total {m['engine_s'] + m['analysis_s']:.1f}s"
    )
    row = summ.query("variant == 'all_folds' and demand_class == 'all'").iloc[0]  # type: ignore[union-attr]
    thin = summ.query("variant == 'non_overlapping' and demand_class == 'all'").iloc[0]  # type: ignore[union-attr]
    print(
        f"replay (floor {BASELINE}): {row['n_blocks']} blocks, floor {row['floor']:.3f} served "
        f"{row['served']:.3f} oracle {row['oracle']:.3f}, gain {row['gain']:.1%}, wins {row['win_share']:.1%}, "
        f"gap closed {row['gap_closed']:.1%} (champion {row['champion']} {row['champion_gap_closed']:.1%}); "
        f"non-overlapping: {thin['n_blocks']} blocks, gap closed {thin['gap_closed']:.1%}"
    )
    between = rep.comparisons.query("kind == 'between'").iloc[0]  # type: ignore[attr-defined]
    within = rep.comparisons.query("kind == 'within'")  # type: ignore[attr-defined]
    print(
        f"sensitivity: between PSS {between['pss_mean']:.4f} [{between['pss_ci_low']:.4f}, "
        f"{between['pss_ci_high']:.4f}], winner swap {between['swap_share']:.1%}; within PSS "
        f"{np.round(within['pss_mean'].to_numpy(), 4).tolist()}; resolution {rep.resolution:.4g}; "  # type: ignore[attr-defined]
        f"TOST p {rep.tost.p_value:.3g}"
    )  # type: ignore[attr-defined]
    print(f"peak RSS of this process: {peak_rss_gib():.2f} GiB")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
