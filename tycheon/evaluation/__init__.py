"""Your own data through the benchmark's engine and statistics: :func:`evaluate`.

``evaluate(df, ...)`` maps a long table onto a :class:`~tycheon.data.panel.Panel`, plans a rolling-origin
backtest that leaves enough history (and says *before* running what the data are too short for), runs
every model of the roster through the guarded engine (:func:`tycheon.backtest.engine.run`, one model at a
time, as the benchmark pipeline does) and builds the leaderboard tables with
:func:`tycheon.analysis.leaderboard.leaderboard_tables`, the function the published benchmark uses.

The returned :class:`Evaluation` answers in the library: ``.leaderboard(...)`` and ``.verdicts()`` as
DataFrames, ``.summary()`` as text. Writing a results version and building the static site is the
harness's job (``benchmarks/``, which the library never imports): ``.to_results(dir)`` and
``.to_site(dir)`` reach it through the one hand-over :func:`tycheon._harness.load_harness`, available in a
source checkout.

The modules, one job each: :mod:`.plan` (the data's mapping, the settings, the roster and the origins,
decided before anything runs; its docstring holds the planning rules), :mod:`.run` (the panel, the
per-model runs and the :class:`Evaluation`) and :mod:`.summary` (the text summary of the tables).
"""

from __future__ import annotations

# the public names (__all__), then those the command line, the harness and the tests import from here
from tycheon.evaluation.plan import (
    ALL_MODELS,
    DEFAULT_MODELS,
    SLOW_MODELS,
    DataSpec,
    EvaluationError,
    EvaluationPlan,
    EvaluationWarning,
    Settings,
    plan_evaluation,
    probe_seconds_per_fit,
    resolve_models,
)
from tycheon.evaluation.plan import BAND80_RESIDUALS as BAND80_RESIDUALS
from tycheon.evaluation.plan import BAND95_RESIDUALS as BAND95_RESIDUALS
from tycheon.evaluation.plan import DEFAULT_HORIZON as DEFAULT_HORIZON
from tycheon.evaluation.plan import DEFAULT_SEED as DEFAULT_SEED
from tycheon.evaluation.plan import MAX_DEFAULT_ORIGINS as MAX_DEFAULT_ORIGINS
from tycheon.evaluation.plan import METRICS as METRICS
from tycheon.evaluation.plan import MIN_TIME_BUDGET as MIN_TIME_BUDGET
from tycheon.evaluation.plan import N_CALIBRATION_ORIGINS as N_CALIBRATION_ORIGINS
from tycheon.evaluation.plan import PRODUCTION_BASELINE as PRODUCTION_BASELINE
from tycheon.evaluation.plan import QUANTILE_LEVELS as QUANTILE_LEVELS
from tycheon.evaluation.plan import RANDOM_WALK as RANDOM_WALK
from tycheon.evaluation.run import Evaluation, evaluate
from tycheon.evaluation.run import constant_columns as constant_columns
from tycheon.evaluation.run import load_panel as load_panel
from tycheon.evaluation.run import run_plan as run_plan
from tycheon.evaluation.summary import inventory_lines as inventory_lines
from tycheon.evaluation.summary import summary_lines

__all__ = [
    "ALL_MODELS",
    "DEFAULT_MODELS",
    "SLOW_MODELS",
    "DataSpec",
    "Evaluation",
    "EvaluationError",
    "EvaluationPlan",
    "EvaluationWarning",
    "Settings",
    "evaluate",
    "plan_evaluation",
    "probe_seconds_per_fit",
    "resolve_models",
    "summary_lines",
]
