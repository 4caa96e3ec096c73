"""``python -m benchmarks.perf.audit_fitted``: the protocol-sensitivity audit on a roster with fitted models
(issue 36), the measurement behind its note: between-protocol PSS (static split against rolling origin) with
its interval beside the within-protocol PSS of each protocol's references, the models whose rank moves, and
each model's mean loss in every run (the score changes that explain a PSS of 0 where it is 0).

The roster mixes refit-free baselines with models that estimate parameters at a fit and update between refits
(AutoETS, damped ETS, AutoTheta through statsforecast's fixed-parameter path; ADIDA); a refit-free model
scores the same in every run, so its losses are the check that the runs score the same cells. Series are the
``--n-series`` with the smallest sha256 of their id (the benchmark's subsample rule). ``--quick`` runs a small
panel for tests; its numbers say nothing.
"""

from __future__ import annotations

import argparse
import hashlib
import time

import pandas as pd

from tycheon.analysis.sensitivity import sensitivity_report, sensitivity_runs
from tycheon.backtest.factories import forecaster_factory
from tycheon.backtest.protocol import RollingOrigin
from tycheon.data.datasets import load

__all__ = ["ROSTER", "main", "measure"]

ROSTER = (
    "naive", "seasonal_naive", "snaive_momentum", "ses", "historic_mean", "croston_sba",
    "adida", "auto_ets", "damped_ets", "auto_theta",
)  # fmt: skip
QUICK_ROSTER = ("naive", "historic_mean", "adida", "auto_ets")


def measure(*, dataset: str, n_series: int, roster: tuple[str, ...], metric: str, n_jobs: int) -> dict[str, object]:
    """Run the audit's K runs and its report; return the report, each run's mean loss per model and the time."""
    options = {"n_entities": 400, "n_periods": 73, "seed": 11} if dataset == "synthetic_marketplace" else {}
    panel = load(dataset, **options)
    ids = sorted(panel.series_ids, key=lambda s: hashlib.sha256(str(s).encode()).hexdigest())[:n_series]
    panel = panel.subset(ids)
    t0 = time.perf_counter()
    runs = sensitivity_runs(
        panel,
        RollingOrigin(horizon=6, stride=6, n_origins=6),
        {m: forecaster_factory(m) for m in roster},
        metric=metric,
        min_history=24,
        quantile_levels=(),
        backend="joblib" if n_jobs > 1 else "sequential",
        n_jobs=n_jobs,
    )
    seconds = time.perf_counter() - t0
    report = sensitivity_report(runs, seed=0, n_resamples=2000)
    losses = pd.DataFrame({name: r.model_mean for name, r in runs.items()})
    return {"panel": panel, "report": report, "losses": losses, "seconds": seconds, "k": len(runs)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf.audit_fitted", description=__doc__)
    parser.add_argument("--dataset", default="synthetic_marketplace")
    parser.add_argument("--n-series", type=int, default=120)
    parser.add_argument("--metric", default="rmsse", choices=["rmsse", "mase"])
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="a small panel and four models, for tests")
    args = parser.parse_args(argv)
    roster = QUICK_ROSTER if args.quick else ROSTER
    out = measure(
        dataset=args.dataset,
        n_series=12 if args.quick else args.n_series,
        roster=roster,
        metric=args.metric,
        n_jobs=args.n_jobs,
    )
    rep, panel = out["report"], out["panel"]
    print(
        f"audit on {args.dataset}: {panel.n_series} series, {len(roster)} models, K={out['k']} runs in "
        f"{out['seconds']:.0f} s, mean {args.metric}"
    )
    for c in rep.comparisons.itertuples():
        print(
            f"{c.kind:<8} {c.run:<22} vs {c.reference:<8} PSS {c.pss_mean:.4f} [{c.pss_ci_low:.4f}, "
            f"{c.pss_ci_high:.4f}]  winner swap {c.swap_share:.1%}  panel PSS {c.panel_pss:.4f}"
        )
    for a in rep.attribution.itertuples():
        print(
            f"attribution {a.protocol:<8} between {a.between_mean:.4f} within {a.within_mean:.4f} "
            f"difference {a.diff_mean:.4f} [{a.diff_ci_low:.4f}, {a.diff_ci_high:.4f}]"
        )
    ranks = rep.ranks
    moved = ranks[ranks["rank_max"] > ranks["rank_min"]]
    print(
        "models whose rank moves: "
        + (", ".join(f"{m} ({int(r.rank_min)}-{int(r.rank_max)})" for m, r in moved.iterrows()) or "none")
    )
    losses = out["losses"]
    change = (losses["static"] / losses["rolling"] - 1.0).rename("static vs rolling")
    print(f"mean {args.metric} per model, rolling and static runs:")
    print(pd.concat([losses[["rolling", "static"]], change], axis=1).to_string(float_format=lambda v: f"{v:.4f}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
