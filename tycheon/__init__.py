"""tycheon: honest walk-forward forecasting benchmarks.

The user-facing names, loaded on first use so that ``import tycheon`` stays cheap::

    import tycheon

    panel = tycheon.load("synthetic_marketplace", n_entities=300, seed=1)
    protocol = tycheon.RollingOrigin(horizon=6, stride=6, n_origins=4)
    factories = {m: tycheon.forecaster_factory(m) for m in ("naive", "snaive_momentum", "croston_sba")}
    scores = tycheon.run(panel, protocol, factories, units=("series", "total"), min_history=13)
    tycheon.metrics.summarize(tycheon.metrics.block_scores(scores.table, metrics=("mase",)), metrics=("mase",))
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tycheon._version import __version__

if TYPE_CHECKING:  # names for type checkers and IDEs; at run time they load lazily
    from tycheon import analysis, metrics, stats
    from tycheon.analysis.leaderboard import LeaderboardSpec, leaderboard_tables
    from tycheon.backtest.engine import run
    from tycheon.backtest.factories import forecaster_factory
    from tycheon.backtest.guards import LookaheadError
    from tycheon.backtest.protocol import RollingOrigin, StaticSplit, same_targets
    from tycheon.backtest.scoreset import ScoreSet
    from tycheon.data.datasets import available_datasets, load
    from tycheon.data.panel import Panel
    from tycheon.errors import InputError, TycheonError, TycheonWarning
    from tycheon.evaluation import Evaluation, EvaluationError, evaluate
    from tycheon.forecasters.registry import available as available_forecasters

_LAZY: dict[str, tuple[str, str | None]] = {
    "Evaluation": ("tycheon.evaluation", "Evaluation"),
    "EvaluationError": ("tycheon.evaluation", "EvaluationError"),
    "InputError": ("tycheon.errors", "InputError"),
    "LeaderboardSpec": ("tycheon.analysis.leaderboard", "LeaderboardSpec"),
    "LookaheadError": ("tycheon.backtest.guards", "LookaheadError"),
    "Panel": ("tycheon.data.panel", "Panel"),
    "RollingOrigin": ("tycheon.backtest.protocol", "RollingOrigin"),
    "ScoreSet": ("tycheon.backtest.scoreset", "ScoreSet"),
    "StaticSplit": ("tycheon.backtest.protocol", "StaticSplit"),
    "TycheonError": ("tycheon.errors", "TycheonError"),
    "TycheonWarning": ("tycheon.errors", "TycheonWarning"),
    "analysis": ("tycheon.analysis", None),
    "available_datasets": ("tycheon.data.datasets", "available_datasets"),
    "available_forecasters": ("tycheon.forecasters.registry", "available"),
    "evaluate": ("tycheon.evaluation", "evaluate"),
    "forecaster_factory": ("tycheon.backtest.factories", "forecaster_factory"),
    "leaderboard_tables": ("tycheon.analysis.leaderboard", "leaderboard_tables"),
    "load": ("tycheon.data.datasets", "load"),
    "metrics": ("tycheon.metrics", None),
    "run": ("tycheon.backtest.engine", "run"),
    "same_targets": ("tycheon.backtest.protocol", "same_targets"),
    "stats": ("tycheon.stats", None),
}

__all__ = ["__version__", *sorted(_LAZY)]


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'tycheon' has no attribute {name!r}") from None
    value = importlib.import_module(module)
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value  # cache: the next access is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
