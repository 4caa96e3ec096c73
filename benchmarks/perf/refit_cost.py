"""``python -m benchmarks.perf.refit_cost``: what refitting buys (issue 36). For each model with estimated
parameters, the seconds per origin and the accuracy under refit calendars, against refitting at every origin
(the peer in the same run):

- ``every``: refit at every origin (the rolling protocol);
- ``every 2``, ``every 3``: refit at every 2nd / 3rd origin, update (parameters kept, state advanced with the
  data published by the origin) at the others;
- ``once``: fit at the first origin and update after (a refit calendar of one refit: the static split's rule
  on the rolling origins).

Every calendar scores the same cells. One line per (model, calendar): seconds per origin (fit + predict, the
engine's own timers, summed over the model's series), its ratio to ``every``, the mean per-coordinate loss
(``--metric``, RMSSE by default: mean over series and steps of the mean over origins of the per-step loss) and
its change against ``every``. ``--quick`` runs a small panel for tests; its numbers say nothing about cost.
"""

from __future__ import annotations

import argparse
import hashlib
import sys

from tycheon.analysis.sensitivity import run_losses
from tycheon.backtest.engine import run
from tycheon.backtest.factories import forecaster_factory
from tycheon.backtest.protocol import RollingOrigin
from tycheon.data.datasets import load

__all__ = ["CALENDARS", "MODELS", "main", "measure"]

MODELS = ("auto_ets", "damped_ets", "auto_theta", "adida", "imapa")
CALENDARS = {"every": 1, "every 2": 2, "every 3": 3, "once": None}
HORIZON, STRIDE, N_ORIGINS, MIN_HISTORY = 6, 6, 6, 24


def _panel(dataset: str, n_series: int):
    options = {"n_entities": 400, "n_periods": 73, "seed": 11} if dataset == "synthetic_marketplace" else {}
    panel = load(dataset, **options)
    # the n series with the smallest sha256 of their id (the benchmark's deterministic subsample rule)
    ids = sorted(panel.series_ids, key=lambda s: hashlib.sha256(str(s).encode()).hexdigest())[:n_series]
    return panel.subset(ids)


def measure(*, dataset: str, n_series: int, models: tuple[str, ...], metric: str) -> list[dict[str, object]]:
    """One row per (model, calendar): seconds per origin, mean loss, and both against ``every``."""
    panel = _panel(dataset, n_series)
    rows: list[dict[str, object]] = []
    for model in models:
        peer: dict[str, float] = {}
        for name, k in CALENDARS.items():
            protocol = RollingOrigin(horizon=HORIZON, stride=STRIDE, n_origins=N_ORIGINS, refit_every=k or N_ORIGINS)
            scores = run(
                panel, protocol, {model: forecaster_factory(model)}, quantile_levels=(), min_history=MIN_HISTORY
            )
            status = scores.meta["models"][model]
            if status["status"] != "ran":
                raise RuntimeError(f"{model} under refit calendar {name!r}: {status}")
            seconds = (status["fit_seconds"] + status["predict_seconds"]) / N_ORIGINS
            loss = run_losses(scores.table, label=name, metric=metric).model_mean[model]
            peer = peer or {"seconds": seconds, "loss": loss}
            rows.append(
                {
                    "model": model,
                    "calendar": name,
                    "refits": len({o.fit_end for o in protocol.origins(panel, min_history=MIN_HISTORY)}),
                    "seconds_per_origin": seconds,
                    "time_ratio": seconds / peer["seconds"],
                    "loss": loss,
                    "loss_change": loss / peer["loss"] - 1.0,
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf.refit_cost", description=__doc__)
    parser.add_argument("--dataset", default="fpp3_tourism")
    parser.add_argument("--n-series", type=int, default=304)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--metric", default="rmsse", choices=["rmsse", "mase"])
    parser.add_argument("--quick", action="store_true", help="a small panel and two models, for tests")
    args = parser.parse_args(argv)
    models = ("auto_ets", "adida") if args.quick else tuple(m for m in args.models.split(",") if m)
    n_series = 12 if args.quick else args.n_series
    rows = measure(dataset=args.dataset, n_series=n_series, models=models, metric=args.metric)
    print(
        f"refit cost on {args.dataset} ({n_series} series), {N_ORIGINS} origins at stride {STRIDE}, "
        f"h = {HORIZON}, mean {args.metric}; peer: refit at every origin"
    )
    for r in rows:
        print(
            f"{r['model']:<11} {r['calendar']:<8} refits {r['refits']}  {r['seconds_per_origin']:8.3f} s/origin "
            f"(x{r['time_ratio']:.2f})  {args.metric} {r['loss']:.4f} ({r['loss_change']:+.2%})"
        )
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
