"""``python -m benchmarks.perf.competition_cost``: what each model of the full roster costs on a competition
category, and where AutoARIMA's time goes.

Each model runs through the engine on the category's published hold-out (one origin, every series, the
sequential backend so that the seconds are one core's), and its wall time is printed with the seconds per
series. For the statsforecast models the peer is statsforecast itself in the same run: the same model's
``forecast`` called on each training part directly, with the same interval levels, so the ratio is the
engine's overhead around the same work. ``--profile-arima N`` then profiles AutoARIMA on ``N`` series
and reports how many candidate orders its stepwise search fits per series and which share of the time
is statsforecast's C++ likelihood and which scipy's finite-difference gradients for the BFGS fits around it
(the two overlap: the gradients call the likelihood; the rest of the gradients' share is scipy's Python).
Each model is warmed up on two series (imports, first-call set-up) before either side is timed.

The machine is shared: read the ratios within one run, not the seconds across runs.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
import warnings

import numpy as np

from tycheon.backtest.competition import CompetitionHoldout
from tycheon.backtest.engine import run
from tycheon.backtest.factories import forecaster_factory
from tycheon.data.datasets import load
from tycheon.data.panel import Panel
from tycheon.forecasters import registry
from tycheon.forecasters.roster.statistical import StatsforecastForecaster, levels_for_quantiles

__all__ = ["QUANTILES", "ROSTER", "arima_profile", "main", "model_seconds", "peer_seconds"]

ROSTER = (
    "naive",
    "seasonal_naive",
    "snaive_momentum",
    "ses",
    "naive2",
    "ses_classic",
    "theta_classic",
    "auto_ets",
    "damped_ets",
    "auto_theta",
    "auto_arima",
    "mstl",
    "lightgbm_global",
)
QUANTILES = (0.025, 0.1, 0.25, 0.5, 0.75, 0.9, 0.975)  # the full config's levels


def _panel(dataset: str, n_series: int | None) -> Panel:
    panel = load(dataset)
    if n_series is not None and n_series < panel.n_series:
        panel = panel.subset(list(panel.series_ids[:: max(1, panel.n_series // n_series)][:n_series]))
    return panel


def model_seconds(panel: Panel, model: str) -> tuple[float, str]:
    """(wall seconds, status) of one model on the panel's published hold-out through the engine."""
    start = time.perf_counter()
    scores = run(
        panel,
        CompetitionHoldout.from_panel(panel),
        {model: forecaster_factory(model)},
        units=["series"],
        quantile_levels=QUANTILES,
        min_history=1,
        backend="sequential",
    )
    return time.perf_counter() - start, scores.meta["models"][model]["status"]


def peer_seconds(panel: Panel, model: str) -> float | None:
    """statsforecast's own time for the same model on the same training parts (None: not a statsforecast
    model)."""
    instance = registry.create(model)
    if not isinstance(instance, StatsforecastForecaster):
        return None
    horizon = CompetitionHoldout.from_panel(panel).horizon
    view = panel.dense()
    levels = levels_for_quantiles(QUANTILES)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i in range(view.values.shape[0]):
            y = np.ascontiguousarray(view.values[i][view.observed[i]][:-horizon])
            instance._model(panel.season_length).forecast(y, horizon, level=levels)
    return time.perf_counter() - start


def arima_profile(panel: Panel, n_series: int) -> dict[str, float]:
    """Candidate fits per series and the shares of AutoARIMA's time (likelihood, finite differences, rest)."""
    from statsforecast.models import AutoARIMA

    horizon = CompetitionHoldout.from_panel(panel).horizon
    view = panel.dense()
    series = [view.values[i][view.observed[i]][:-horizon] for i in range(min(n_series, view.values.shape[0]))]
    profile = cProfile.Profile()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        profile.enable()
        for y in series:
            AutoARIMA(season_length=panel.season_length).forecast(np.ascontiguousarray(y), horizon, level=[80, 95])
        profile.disable()
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]

    def total(name: str, *, cumulative: bool) -> tuple[float, int]:
        # a Python function is keyed by its name, a C++ builtin by "<built-in method module.name>"
        hits = [
            (v[3] if cumulative else v[2], v[1])
            for k, v in stats.items()
            if k[2] in (name, f"<{name}>") or k[2].endswith(f".{name}>")
        ]
        return sum(h[0] for h in hits), sum(h[1] for h in hits)

    whole, _ = total("auto_arima_f", cumulative=True)
    likelihood = total("arima_like", cumulative=False)[0] + total("getQ0", cumulative=False)[0]
    numdiff, _ = total("approx_derivative", cumulative=True)
    _, fits = total("myarima", cumulative=True)
    return {
        "series": float(len(series)),
        "seconds_per_series": whole / len(series),
        "candidate_fits_per_series": fits / len(series),
        "share_cpp_likelihood": likelihood / whole,
        "share_finite_difference_gradients": numdiff / whole,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.perf.competition_cost", description=__doc__)
    parser.add_argument("--dataset", default="m3_quarterly")
    parser.add_argument("--n-series", type=int, default=None, help="evenly spaced subsample (default: all)")
    parser.add_argument("--models", default=",".join(ROSTER))
    parser.add_argument("--profile-arima", type=int, default=0, metavar="N", help="profile AutoARIMA on N series")
    args = parser.parse_args(argv)
    panel = _panel(args.dataset, args.n_series)
    print(f"{args.dataset}: {panel.n_series} series, horizon {CompetitionHoldout.from_panel(panel).horizon}")
    print(f"{'model':<16} {'status':<8} {'seconds':>9} {'s/series':>9} {'peer s':>9} {'ours/peer':>9}")
    warm = panel.subset(list(panel.series_ids[:2]))
    for model in [m.strip() for m in args.models.split(",") if m.strip()]:
        model_seconds(warm, model)  # imports and first-call set-up, paid before either side is timed
        peer_seconds(warm, model)
        seconds, status = model_seconds(panel, model)
        peer = peer_seconds(panel, model)
        ratio = f"{seconds / peer:9.2f}" if peer else f"{'-':>9}"
        peer_text = f"{peer:9.2f}" if peer is not None else f"{'-':>9}"
        print(f"{model:<16} {status:<8} {seconds:9.2f} {seconds / panel.n_series:9.4f} {peer_text} {ratio}")
    if args.profile_arima:
        for key, value in arima_profile(panel, args.profile_arima).items():
            print(f"auto_arima {key}: {value:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
