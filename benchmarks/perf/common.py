"""Shared pieces of the perf scripts: the timed roster, median timings, the panel, peak RSS, the report line."""

from __future__ import annotations

import resource
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tycheon.backtest.factories import forecaster_factory
from tycheon.backtest.protocol import RollingOrigin
from tycheon.data.panel import Panel
from tycheon.data.synthetic import generate_marketplace

__all__ = [
    "Comparison",
    "HORIZON",
    "N_ORIGINS",
    "N_PERIODS",
    "STRIDE",
    "build_cv_panel",
    "build_panel",
    "median_time",
    "peak_rss_gib",
    "protocol",
    "roster",
]

HORIZON, STRIDE, N_ORIGINS = 6, 3, 8
N_PERIODS = 67  # months per series of the perf panel
PANEL_SEED = 7
SPIKINESS = 1.0


def roster() -> dict[str, Any]:
    """The baseline roster of the issue, as engine factories (model name -> factory)."""
    return {
        "naive": forecaster_factory("naive"),
        "seasonal_naive": forecaster_factory("seasonal_naive"),
        "drift": forecaster_factory("drift"),
        "historic_mean": forecaster_factory("historic_mean"),
        "croston": forecaster_factory("croston"),
        "croston_sba": forecaster_factory("croston_sba"),
        "tsb": forecaster_factory("tsb", alpha_d=0.2, alpha_p=0.2),
        "ses": forecaster_factory("ses", alpha=0.3),
    }


def protocol() -> RollingOrigin:
    """8 origins, stride 3, horizon 6, overlap allowed (analysis mode)."""
    return RollingOrigin(horizon=HORIZON, stride=STRIDE, n_origins=N_ORIGINS, mode="analysis")


def build_panel(n_series: int, *, seed: int = PANEL_SEED) -> Panel:
    """The seeded synthetic marketplace (monthly, ``N_PERIODS`` periods, spiky, with zeros, entry and exit)."""
    return generate_marketplace(n_entities=n_series, n_periods=N_PERIODS, spikiness=SPIKINESS, seed=seed)


def build_cv_panel(n_series: int, *, seed: int = PANEL_SEED) -> Panel:
    """``n_series`` series of the seeded marketplace that statsforecast's cross-validation accepts.

    statsforecast refuses a series with ``<= h + stride (windows - 1)`` (= 27) observations, so the
    generator is asked for more entities and the first ``n_series`` (by id) with at least 28 observations
    are kept; both sides then get exactly this panel.
    """
    need = HORIZON + STRIDE * (N_ORIGINS - 1) + 1
    panel = build_panel(int(n_series * 1.5) + 20, seed=seed)
    lengths = panel.lengths()
    ids = lengths.index[lengths.to_numpy() >= need][:n_series]
    if len(ids) < n_series:
        raise ValueError(f"only {len(ids)} series with >= {need} observations; asked for {n_series}")
    return panel.subset(ids.to_numpy())


def median_time(fn: Callable[[], Any], *, repeats: int) -> tuple[float, list[float], Any]:
    """Median wall time of ``repeats`` calls (the caller warms up first); also every time and the last result."""
    times: list[float] = []
    result = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times, result


def peak_rss_gib(who: int = resource.RUSAGE_SELF) -> float:
    """Peak resident set size so far (``ru_maxrss``: KiB on Linux, bytes on macOS) in GiB."""
    peak = resource.getrusage(who).ru_maxrss
    return peak / 2**30 if sys.platform == "darwin" else peak / 2**20


@dataclass
class Comparison:
    """One printed comparison: both times (medians) and the peer/tycheon ratio."""

    name: str
    tycheon_s: float
    peer_s: float | None
    notes: list[str] = field(default_factory=list)
    ok: bool = True  # outputs agreed / target met

    @property
    def speedup(self) -> float | None:
        return None if self.peer_s is None or self.tycheon_s <= 0 else self.peer_s / self.tycheon_s

    def line(self) -> str:
        peer = "n/a" if self.peer_s is None else f"{self.peer_s:.2f}s"
        ratio = "n/a" if self.speedup is None else f"{self.speedup:.1f}"
        return f"{self.name}: tycheon={self.tycheon_s:.2f}s peer={peer} speedup={ratio}"
