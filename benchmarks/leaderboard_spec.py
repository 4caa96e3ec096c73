"""The leaderboard spec of a benchmark, built in one place.

:func:`leaderboard_spec` turns a benchmark config (:class:`benchmarks.config.BenchmarkConfig`) or the
``config`` a results document recorded (its ``model_dump(mode="json")``) into the
:class:`tycheon.analysis.leaderboard.LeaderboardSpec` every table of the run is computed with: the
pipeline, the verification of a results version (``benchmarks.verify``) and the performance scripts all
call it, so a setting of the config (the verdict's multiplicity adjustment, the minimum cell, ...) reaches
each of them the same way.

A results version written before a setting existed does not record it: the setting then takes the
default of the config model (:data:`CONFIG_DEFAULTS`, read from :class:`~benchmarks.config.BenchmarkConfig`),
which is what the pipeline that wrote it used. The library's own :meth:`tycheon.evaluation.Settings.spec`
sets the same fields (the library cannot import this harness; ``tests/test_leaderboard_spec.py`` checks
that both give the same spec).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchmarks.config import BenchmarkConfig
from tycheon.analysis.leaderboard import LeaderboardSpec

__all__ = ["CONFIG_DEFAULTS", "SPEC_FROM_CONFIG", "leaderboard_spec"]

SPEC_FROM_CONFIG: dict[str, str] = {
    "metrics": "metrics",
    "baseline": "production_baseline",
    "random_walk": "random_walk",
    "horizon": "horizon",
    "stride": "stride",
    "alpha": "alpha",
    "seed": "seed",
    "quantile_levels": "quantile_levels",
    "verdict_adjust": "verdict_adjust",
    "min_cell": "min_cell",
    "service_level": "service_level",
    "lead_time": "lead_time",
    "review_period": "review_period",
    "lost_sales": "lost_sales",
}
"""Each :class:`LeaderboardSpec` field and the config field it is read from (every spec field is listed;
``tests/test_leaderboard_spec.py`` fails when the spec gains a field without a line here)."""

_TUPLES = ("metrics", "quantile_levels")


def _defaults() -> dict[str, Any]:
    out = {}
    for field in SPEC_FROM_CONFIG.values():
        info = BenchmarkConfig.model_fields[field]
        if not info.is_required():
            out[field] = info.get_default(call_default_factory=True)
    return out


CONFIG_DEFAULTS: dict[str, Any] = _defaults()
"""The config model's defaults of the fields the spec reads (``alpha``, ``verdict_adjust``, ``min_cell``,
``random_walk``, ``production_baseline``): what a results version that does not record one was run with."""


def leaderboard_spec(config: BenchmarkConfig | Mapping[str, Any]) -> LeaderboardSpec:
    """The :class:`LeaderboardSpec` of a benchmark config, or of the ``config`` dict a results document
    recorded (a field it lacks takes the config model's default, :data:`CONFIG_DEFAULTS`).

    Raises
    ------
    KeyError
        The config lacks a field the config model requires (``metrics``, ``horizon``, ...).
    """
    cfg = config.model_dump(mode="json") if isinstance(config, BenchmarkConfig) else config
    values: dict[str, Any] = {}
    for name, field in SPEC_FROM_CONFIG.items():
        if field in cfg:
            value = cfg[field]
        elif field in CONFIG_DEFAULTS:
            value = CONFIG_DEFAULTS[field]
        else:
            raise KeyError(f"the config records no {field!r}, which the leaderboards need and has no default")
        values[name] = tuple(value) if name in _TUPLES else value
    return LeaderboardSpec(**values)
