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

Planning rules (one place, used by the API and ``tycheon evaluate``):

- origins are non-overlapping (``stride = horizon``, ADR-0006 decision 5) and the latest ones that leave a
  full horizon of actuals; each needs ``min_history`` periods before it (default two seasons, at least one
  horizon); by default as many as fit, at most :data:`MAX_DEFAULT_ORIGINS`;
- every model's conformal bands are calibrated on up to :data:`N_CALIBRATION_ORIGINS` unscored stride-1
  origins before the first scored one, from scaled residuals pooled per (model, unit, step)
  (:mod:`tycheon.backtest.calibration`, WP26 section 3.6): a cell needs 4 residuals for an 80% band and
  19 for a 95% band; the verdict against the random walk needs a CRPS leg (read from those bands,
  :mod:`tycheon.analysis.leaderboard`) and more than two (series, origin) blocks for its DM tests
  (:mod:`tycheon.stats.dm`); a table with fewer than ``min_cell`` blocks names no winner; the plan warns
  when the data cannot give them.
"""

from __future__ import annotations

import math
import os
import time
import traceback
import warnings as _warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from tycheon._typing import Backend, EdgeNan, NanPolicy
from tycheon.analysis.cell import time_check
from tycheon.analysis.leaderboard import (
    DEMAND_CLASSES,
    LeaderboardSpec,
    interval_tables,
    leaderboard_and_interval_tables,
    leaderboard_tables,
)
from tycheon.backtest import engine
from tycheon.backtest.calibration import calibration_min_history
from tycheon.backtest.factories import forecaster_factory
from tycheon.backtest.guards import LookaheadError
from tycheon.backtest.protocol import RollingOrigin, calibration_plan
from tycheon.data.panel import Panel
from tycheon.data.userfile import DEFAULT_MAX_ROWS, nested_columns, panel_from_frame
from tycheon.errors import InputError
from tycheon.forecasters import registry

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

RANDOM_WALK = "naive"
PRODUCTION_BASELINE = "snaive_momentum"
#: The default roster: fast baselines and the intermittent-demand methods (seconds on thousands of series),
#: the forecasters registered with ``roster="default"`` (:func:`tycheon.forecasters.registry.ids`).
DEFAULT_MODELS: tuple[str, ...] = registry.ids(roster="default")
#: Fitted statistical models: opt-in by name or with ``models="all"`` (minutes to hours on large panels),
#: the forecasters registered with ``roster="opt_in"``.
SLOW_MODELS: tuple[str, ...] = registry.ids(roster="opt_in")
ALL_MODELS: tuple[str, ...] = DEFAULT_MODELS + SLOW_MODELS
METRICS: tuple[str, ...] = ("rmsse", "mase", "wape", "scaled_bias", "spl90", "crps_band")
"""The default ranked tables: RMSSE first (it elicits the mean: the headline, :mod:`tycheon.analysis.headline`),
MASE (with the zero-forecast flag beside a winner that forecasts zero), pooled WAPE, the size of the scaled
bias, the scaled pinball loss at the 0.9 service level and the CRPS of the calibrated bands."""
QUANTILE_LEVELS: tuple[float, ...] = (0.025, 0.1, 0.5, 0.9, 0.975)
MAX_DEFAULT_ORIGINS = 12
DEFAULT_SEED = 20261005
DEFAULT_HORIZON: dict[str, int] = {"MS": 6, "QS": 4, "YS": 2, "W": 8, "D": 14, "h": 24}
N_CALIBRATION_ORIGINS = 12  # unscored origins that calibrate the bands (the small benchmark's measurement)
BAND80_RESIDUALS = 4  # ceil(5 * 0.8) = 4 <= 4
BAND95_RESIDUALS = 19  # ceil(20 * 0.95) = 19 <= 19


class EvaluationError(InputError):
    """An evaluation that cannot run as asked (too few origins, unknown model or unit); the message says
    what was asked, what the data allow and what is accepted."""


class EvaluationWarning(UserWarning):
    """Something the results will lack or a reader must know (no bands, no verdicts, inferred settings)."""


#: The smallest time budget (seconds per model): below it even the random walk cannot finish its origins,
#: and a run without the random walk cannot rank anything.
MIN_TIME_BUDGET = 1.0


@dataclass(frozen=True, kw_only=True)
class DataSpec:
    """How a long table maps onto a panel (column names and the data's own settings)."""

    id_col: str = "unique_id"
    time_col: str = "ds"
    target_col: str = "y"
    level_cols: tuple[str, ...] | None = None  # None: every other column constant within each series
    freq: str | None = None
    season_length: int | None = None
    nan_policy: NanPolicy = "raise"
    edge_nan: EdgeNan = "policy"
    static_universe: bool = False
    redistributable: bool = False
    licence: str | None = None
    name: str = "user_data"
    max_rows: int | None = DEFAULT_MAX_ROWS  # a file of more rows is refused before it is loaded; None: no limit


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Everything that decides a run besides the data (what a benchmark config holds)."""

    horizon: int
    n_origins: int
    min_history: int
    models: tuple[str, ...]
    units: tuple[str, ...] = ("series",)
    metrics: tuple[str, ...] = METRICS
    quantile_levels: tuple[float, ...] = QUANTILE_LEVELS
    seed: int = DEFAULT_SEED
    n_jobs: int = 1
    time_budget: float | None = None
    random_walk: str = RANDOM_WALK
    baseline: str = PRODUCTION_BASELINE
    alpha: float = 0.05
    verdict_adjust: str = "bh"
    min_cell: int = 30  # fewest blocks for a table to name a winner and give verdicts (WP26 section 6)
    n_calibration_origins: int = N_CALIBRATION_ORIGINS

    @property
    def stride(self) -> int:
        return self.horizon

    def protocol(self, *, n_origins: int | None = None) -> RollingOrigin:
        """The rolling-origin protocol these settings run (calibration origins included)."""
        return RollingOrigin(
            horizon=self.horizon,
            stride=self.stride,
            n_origins=self.n_origins if n_origins is None else n_origins,
            n_calibration_origins=self.n_calibration_origins,
        )

    @property
    def backend(self) -> Backend:
        return "joblib" if self.n_jobs > 1 else "sequential"

    def spec(self) -> LeaderboardSpec:
        """The leaderboard spec of these settings: every :class:`LeaderboardSpec` field, set as the
        harness's ``benchmarks.leaderboard_spec.leaderboard_spec`` sets it from the config these settings
        write (the library cannot import the harness; ``tests/test_leaderboard_spec.py`` checks both agree)."""
        return LeaderboardSpec(
            metrics=self.metrics,
            baseline=self.baseline,
            random_walk=self.random_walk,
            horizon=self.horizon,
            stride=self.stride,
            alpha=self.alpha,
            seed=self.seed,
            quantile_levels=self.quantile_levels,
            verdict_adjust=self.verdict_adjust,  # type: ignore[arg-type]
            min_cell=self.min_cell,
        )


@dataclass(frozen=True, kw_only=True)
class EvaluationPlan:
    """A planned run: settings, the panel's shape, and what the user must know before it starts."""

    settings: Settings
    n_series: int
    n_periods: int
    freq: str
    season_length: int
    origins: tuple[str, ...]
    max_origins: int
    notes: tuple[str, ...] = ()  # what was inferred or chosen
    warnings: tuple[str, ...] = ()  # what the results will lack

    @property
    def slow_models(self) -> tuple[str, ...]:
        return tuple(m for m in self.settings.models if m in SLOW_MODELS)

    @property
    def fits_per_model(self) -> int:
        """Upper bound on (series, origin) fits per model and unit (abstentions make it fewer)."""
        return self.n_series * len(self.origins)

    def lines(self, *, seconds_per_fit: Mapping[str, float] | None = None) -> list[str]:
        """The plan as text lines, with the expected cost of slow models when per-fit seconds are given."""
        s = self.settings
        out = [
            (
                f"data: {self.n_series} series, {self.n_periods} periods, frequency {self.freq}, season length "
                f"{self.season_length}"
            ),
            (
                f"protocol: {len(self.origins)} origins ({self.origins[0]} .. {self.origins[-1]}), horizon "
                f"{s.horizon}, stride {s.stride}, min history {s.min_history}; units {', '.join(s.units)}"
            ),
            f"models: {', '.join(s.models)}",
        ]
        out += [f"note: {n}" for n in self.notes]
        out += [f"warning: {w}" for w in self.warnings]
        for model in self.slow_models:
            per = (seconds_per_fit or {}).get(model)
            fits = self.fits_per_model * len(s.units)
            cost = (
                f"about {per * fits / max(s.n_jobs, 1) / 60:.1f} min on {s.n_jobs} worker(s) at {per:.3g} s per fit"
                if per
                else "no measured cost on record"
            )
            out.append(f"cost: {model} is slow: up to {fits} fits, {cost}")
        return out


def resolve_models(models: str | Sequence[str]) -> tuple[tuple[str, ...], list[str]]:
    """The roster for ``"default"``, ``"all"``, ``"id,id"`` or a list of forecaster ids, with notes.

    The random walk and the production baseline are always added (every evaluation reports them).

    Raises
    ------
    EvaluationError
        An id that is not a registered forecaster (the message lists the known ids).
    """
    if isinstance(models, str):
        if models == "default":
            return DEFAULT_MODELS, []
        if models == "all":
            return ALL_MODELS, []
        asked = [m.strip() for m in models.split(",") if m.strip()]
    else:
        asked = list(models)
    known = set(registry.available())
    unknown = [m for m in asked if m not in known]
    if unknown or not asked:
        raise EvaluationError(
            f"unknown model id(s) {unknown or asked}; use 'default', 'all' or registered forecaster ids: "
            f"{sorted(known)}"
        )
    notes = [f"added {m} (every evaluation reports it)" for m in (RANDOM_WALK, PRODUCTION_BASELINE) if m not in asked]
    return tuple(dict.fromkeys([RANDOM_WALK, PRODUCTION_BASELINE, *asked])), notes


def _max_origins(n_periods: int, *, horizon: int, min_history: int) -> int:
    """Non-overlapping origins from the latest one (``n_periods - horizon``) back to ``min_history``."""
    last = n_periods - horizon
    return 0 if last < min_history else (last - min_history) // horizon + 1


def plan_evaluation(
    panel: Panel,
    *,
    horizon: int | None = None,
    n_origins: int | None = None,
    min_history: int | None = None,
    models: str | Sequence[str] = "default",
    units: Sequence[str] = ("series",),
    n_jobs: int | None = None,
    seed: int = DEFAULT_SEED,
    time_budget: float | None = None,
) -> EvaluationPlan:
    """Choose origins that leave enough history and say what the data are too short for.

    Raises
    ------
    EvaluationError
        No origin fits, more origins are asked than fit, or a bad option.
    """
    notes = [f"{k.replace('_', ' ')} {v!r} inferred from the data" for k, v in panel.meta.get("inferred", {}).items()]
    roster, model_notes = resolve_models(models)
    notes += model_notes
    if horizon is None:
        horizon = DEFAULT_HORIZON.get(panel.freq.split("-")[0], 6)
        notes.append(f"horizon {horizon} (default for frequency {panel.freq})")
    if min_history is None:
        min_history = max(2 * panel.season_length, horizon, 3)
    for label, value in (("horizon", horizon), ("min_history", min_history)):
        if int(value) < 1:
            raise EvaluationError(f"{label} must be >= 1, got {value}")
    if time_budget is not None and not (math.isfinite(time_budget) and time_budget >= MIN_TIME_BUDGET):
        raise EvaluationError(
            f"time_budget {time_budget!r} is not a usable budget per model; accepted: a finite number of seconds "
            f">= {MIN_TIME_BUDGET:g} (below it even the random walk cannot finish, and nothing would be written)"
        )
    missing = [u for u in units if u.startswith("level:") and u.split(":", 1)[1] not in panel.levels]
    if missing:
        raise EvaluationError(
            f"units {missing[0]!r}: {missing[0].split(':', 1)[1]!r} is not a level of the data; accepted levels: "
            f"{list(panel.levels)} (columns constant within each series)"
        )
    n_periods = len(panel.periods)
    fit = _max_origins(n_periods, horizon=horizon, min_history=min_history)
    if fit == 0:
        raise EvaluationError(
            f"too few origins: the data span {n_periods} periods, and one origin needs {min_history} periods "
            f"of history plus a horizon of {horizon}; use a shorter --horizon or --min-history"
        )
    if n_origins is None:
        n_origins = min(fit, MAX_DEFAULT_ORIGINS)
        notes.append(f"{n_origins} origins ({fit} fit the data; at most {MAX_DEFAULT_ORIGINS} by default)")
    elif n_origins < 1 or n_origins > fit:
        raise EvaluationError(
            f"too few origins: {n_origins} asked, the data leave room for {fit} (span {n_periods} periods, "
            f"horizon {horizon}, min history {min_history}); accepted: 1..{fit}"
        )
    jobs = max(1, int(n_jobs if n_jobs is not None else min(os.cpu_count() or 1, 8)))
    settings = Settings(
        horizon=int(horizon),
        n_origins=int(n_origins),
        min_history=int(min_history),
        models=roster,
        units=tuple(dict.fromkeys(units)),
        seed=seed,
        n_jobs=jobs,
        time_budget=time_budget,
    )
    try:
        protocol = settings.protocol()
        origins = protocol.origins(panel, min_history=settings.min_history)
        calibration = calibration_plan(
            protocol,
            panel,
            min_history=settings.min_history,
            calibration_min_history=calibration_min_history(settings.min_history, panel.season_length),
        )
    except ValueError as err:
        raise EvaluationError(f"too few origins: {err}") from err
    warnings = []
    n_cal = len(calibration.used)
    # residuals per (model, unit, step) cell at the first scored origin: every series of the per-series
    # unit pools its calibration errors; a one-series unit (the total) has one per calibration origin
    per_series = n_cal * panel.n_series
    if per_series < BAND80_RESIDUALS:
        warnings.append(
            f"{n_cal} calibration origin(s) fit before the first scored origin: too few residuals for "
            f"conformal bands (an 80% band needs {BAND80_RESIDUALS}), so no interval scores and no verdicts "
            "against the random walk at the first origins (the verdict's CRPS leg reads the bands)"
        )
    else:
        notes.append(
            f"bands calibrated on {n_cal} unscored origin(s) before the first scored one"
            + (f" ({len(calibration.skipped)} more had too little history)" if calibration.skipped else "")
            + (
                "; a one-series unit (the total) needs 19 for its 95% band and gets more from each scored origin"
                if n_cal < BAND95_RESIDUALS and "total" in settings.units
                else ""
            )
        )
    if panel.n_series == 1:  # said before the run: the results hold no cross-series section
        warnings.append(
            "1 series: the analyses across series are skipped (the selection-rule replay needs a unit of more "
            "than one series); the tables rank the models over this series' origins only"
        )
    too_few = time_check(settings.n_origins, horizon=settings.horizon, stride=settings.stride)
    if too_few:  # the verdict and the DM tests run over the origins: series share calendar shocks
        warnings.append(f"no verdicts against the random walk and no DM p-values: {too_few}")
    eligible = int((panel.lengths().to_numpy() >= settings.min_history + settings.horizon).sum())
    if eligible < panel.n_series:
        notes.append(
            f"{panel.n_series - eligible} series are shorter than min history + horizon "
            f"({settings.min_history + settings.horizon}) and are abstained at the origins they miss"
        )
    return EvaluationPlan(
        settings=settings,
        n_series=panel.n_series,
        n_periods=n_periods,
        freq=panel.freq,
        season_length=panel.season_length,
        origins=tuple(str(o.timestamp.date()) for o in origins),
        max_origins=fit,
        notes=tuple(notes),
        warnings=tuple(warnings),
    )


def probe_seconds_per_fit(panel: Panel, plan: EvaluationPlan, model: str, *, n_series: int = 4) -> float | None:
    """Measured seconds per (series, origin) fit of ``model`` on this data: the engine runs it on the
    ``n_series`` longest series at the plan's last origin, sequentially (None when it cannot run there).
    A few seconds spent to say what a slow model will cost before it starts."""
    s = plan.settings
    ids = panel.lengths().sort_values(ascending=False, kind="stable").index[:n_series]
    probe = panel.subset(list(ids))
    protocol = RollingOrigin(horizon=s.horizon, stride=s.stride, n_origins=1)  # cost of fits: no calibration
    t0 = time.perf_counter()
    try:
        scores = engine.run(
            probe,
            protocol,
            {model: forecaster_factory(model)},
            units=["series"],
            quantile_levels=s.quantile_levels,
            min_history=s.min_history,
            seed=s.seed,
        )
    except (ValueError, RuntimeError):
        return None
    seconds = time.perf_counter() - t0
    support = int(scores.meta["models"][model].get("support") or 0)
    return seconds / support if support else None


def _run_one(
    panel: Panel, plan: EvaluationPlan, model: str, *, progress: bool
) -> tuple[pd.DataFrame | None, dict[str, Any]]:
    """One model through the engine, the pipeline's way: a failure is recorded, a leak is raised."""
    s = plan.settings
    chunk = engine.worker_chunk_size(panel.n_series, n_jobs=s.n_jobs, backend=s.backend)
    protocol = s.protocol()
    try:
        scores = engine.run(
            panel,
            protocol,
            {model: forecaster_factory(model)},
            units=list(s.units),
            chunk_size=chunk,
            quantile_levels=s.quantile_levels,
            min_history=s.min_history,
            backend=s.backend,
            n_jobs=s.n_jobs,
            seed=s.seed,
            time_budget=s.time_budget,
            progress=progress,
        )
    except LookaheadError:
        raise
    except Exception as err:  # noqa: BLE001 - a model that breaks is recorded, the others go on
        return None, {"status": "failed", "reason": f"{type(err).__name__}: {err}", "traceback": traceback.format_exc()}
    status = scores.meta["models"][model]
    return (scores.table if status["status"] == "ran" else None), status


@dataclass(frozen=True, kw_only=True)
class Evaluation:
    """The outcome of :func:`evaluate`: score table, per-model status and the leaderboard tables."""

    panel: Panel
    plan: EvaluationPlan
    data: DataSpec
    scores: pd.DataFrame  # the score-set table of every model that ran
    status: dict[str, dict[str, Any]]
    tables: list[dict[str, Any]] = field(repr=False)
    intervals: list[dict[str, Any]] = field(repr=False)
    source: pd.DataFrame | Path = field(repr=False)

    def leaderboard(self, *, unit: str = "series", demand_class: str = "all", metric: str = "mase") -> pd.DataFrame:
        """One leaderboard (rank, model, mean, median, mean rank, DM and verdict columns) as a DataFrame.

        Raises
        ------
        EvaluationError
            When no table has that unit, class and metric (the message lists those that exist).
        """
        for t in self.tables:
            if (t["unit"], t["demand_class"], t["metric"]) == (unit, demand_class, metric):
                frame = pd.DataFrame(t["rows"]).set_index("model")
                frame.attrs.update({k: v for k, v in t.items() if k != "rows"})
                return frame
        have = sorted({(t["unit"], t["demand_class"], t["metric"]) for t in self.tables})
        raise EvaluationError(
            f"no leaderboard for unit={unit!r}, demand_class={demand_class!r}, "
            f"metric={metric!r}; available (unit, class, metric): {have}"
        )

    def verdicts(self, *, unit: str = "series") -> pd.DataFrame:
        """Verdict of every model against the random walk, one column per demand class
        (``beats`` / ``indistinguishable`` / ``worse``; None with its reason where it cannot be given)."""
        first = self.plan.settings.metrics[0]
        cols = {
            t["demand_class"]: {r["model"]: r["verdict_vs_rw"] for r in t["rows"]}
            for t in self.tables
            if t["unit"] == unit and t["metric"] == first
        }
        return pd.DataFrame(cols).reindex(columns=[c for c in DEMAND_CLASSES if c in cols])

    def summary(self, *, unit: str = "series") -> str:
        """Per demand class the winner per metric and which models beat the random walk, then the inventory
        simulation's outcome per class (:func:`inventory_lines`)."""
        return "\n".join([*summary_lines(self.tables, unit=unit), *inventory_lines(self.intervals, unit=unit)])

    def to_results(self, directory: str | Path) -> Path:
        """Write a results version under ``directory`` through the benchmark pipeline; returns its path.

        The pipeline runs the same engine calls with the same seed again (its own run, recorded with
        provenance), so the file's tables equal this object's. Needs the source checkout (see
        :func:`tycheon._harness.load_harness`).
        """
        from tycheon._harness import load_harness

        return load_harness().write_evaluation(self, Path(directory)).results

    def to_site(self, directory: str | Path) -> Path:
        """Write results and build the static site under ``directory`` (``mkdocs build --strict``);
        returns the folder of the built site's ``index.html``."""
        from tycheon._harness import load_harness

        return load_harness().write_evaluation(self, Path(directory), build_site=True).site


def _winner_facts(row: Mapping[str, Any]) -> str:
    """The mean, the share better than the random walk with its interval, and the zero-forecast flag."""
    out = f"mean {row['mean']:.3f}"
    skill, low, high = row.get("skill_rw"), row.get("skill_rw_low"), row.get("skill_rw_high")
    if skill is not None and not row.get("is_random_walk"):
        out += f", {100 * skill:+.1f}% vs the random walk"
        if low is not None and high is not None:
            out += f" [{100 * low:+.1f}%, {100 * high:+.1f}%]"
    if row.get("zero_forecast_flag"):
        out += f", FORECASTS ZERO on {100 * row['zero_forecast_share']:.0f}% of steps with demand"
    return out


def summary_lines(tables: Sequence[Mapping[str, Any]], *, unit: str = "series") -> list[str]:
    """A short text summary of leaderboard tables (as :func:`leaderboard_tables` returns them, or as a
    results file holds them): per demand class, the winner per metric (ranked by each table's rule, with its
    mean, its share better than the random walk with the interval and the zero-forecast flag) and the models
    that beat the random walk (verdict ``beats``)."""
    chosen = [t for t in tables if t["unit"] == unit]
    lines = []
    for dc in DEMAND_CLASSES:
        class_tables = [t for t in chosen if t["demand_class"] == dc]
        if not class_tables:
            continue
        winners = []
        for t in class_tables:
            top = [r for r in t["rows"] if r["rank"] == 1]
            if not top:
                winners.append(f"{t['metric']} no model scored")
            elif t.get("winner") is None and "winner" in t:  # below the minimum cell: ranked, not named
                winners.append(f"{t['metric']} no winner named ({t['tests'].get('cell_reason')})")
            else:
                names = " = ".join(r["display_name"] for r in top)
                winners.append(f"{t['metric']} winner {names} ({_winner_facts(top[0])})")
        rows = class_tables[0]["rows"]
        beats = [r["display_name"] for r in rows if r.get("verdict_vs_rw") == "beats"]
        judged = [r for r in rows if r.get("verdict_vs_rw") is not None]
        if beats:
            rw = f"beat the random walk: {', '.join(beats)}"
        elif judged:
            rw = "no model beats the random walk"
        else:
            rw = "no verdicts against the random walk (see the reasons in the tables)"
        blocks = class_tables[0]["n_blocks_total"]
        zero = max(int(t["tests"].get("n_zero_scale_blocks") or 0) for t in class_tables)
        left_out = f", {zero} left out for a zero scale" if zero else ""
        lines.append(f"{dc} ({blocks} blocks{left_out}): {'; '.join(winners)}; {rw}")
    return lines


def inventory_lines(intervals: Sequence[Mapping[str, Any]], *, unit: str = "series") -> list[str]:
    """Per demand class of ``unit``, the inventory simulation's outcome (as interval tables carry it): the
    model that needs the least stock to reach the target fill rate, that stock, and the fill rate each of the
    top three reaches unshifted."""
    lines = []
    for t in intervals:
        inv = t.get("inventory")
        if t["unit"] != unit or not inv:
            continue
        top = ", ".join(
            f"{r['model']} fill {100 * r['fill_rate']:.1f}%" for r in inv["rows"][:3] if r.get("fill_rate") is not None
        )
        need = inv["rows"][0].get("stock_needed") if inv["rows"] else None
        head = (
            f"least stock for {100 * inv['target']:.0f}%: {inv['winner']} ({need:.2f} periods of demand)"
            if inv.get("winner") and need is not None
            else f"no ranking ({inv.get('cell_reason') or 'no model reaches the target'})"
        )
        lines.append(f"{t['demand_class']} inventory ({inv['policy']}): {head}; unshifted: {top}")
    return lines


def evaluate(
    df: pd.DataFrame,
    *,
    id_col: str = "unique_id",
    time_col: str = "ds",
    target_col: str = "y",
    level_cols: Sequence[str] | None = None,
    freq: str | None = None,
    season_length: int | None = None,
    horizon: int | None = None,
    n_origins: int | None = None,
    min_history: int | None = None,
    units: Sequence[str] = ("series",),
    models: str | Sequence[str] = "default",
    nan_policy: NanPolicy = "raise",
    edge_nan: EdgeNan = "policy",
    static_universe: bool = False,
    n_jobs: int | None = None,
    seed: int = DEFAULT_SEED,
    time_budget: float | None = None,
    progress: bool = False,
    name: str = "user_data",
    on_plan: Callable[[EvaluationPlan], None] | None = None,
) -> Evaluation:
    """Evaluate the roster on a user's long table, as the published benchmark evaluates its datasets.

    Parameters
    ----------
    df : DataFrame
        Long format: one row per (series, period) with the series id, the period start and the value.
    id_col, time_col, target_col : str
        Column names (default the ``unique_id, ds, y`` convention).
    level_cols : sequence of str, optional
        Hierarchy levels (constant within a series). Default: every other column that is constant
        within each series (the rest are ignored).
    freq, season_length : optional
        Inferred when unambiguous; what was inferred is said in the plan's notes and the panel's warnings.
    horizon, n_origins, min_history : int, optional
        The rolling-origin protocol (see the module docstring for the defaults).
    units : sequence of str
        Units of analysis: ``series``, ``total``, ``level:<column>``, ``groups:<k>``.
    models : "default", "all", "id,id" or list of str
        The roster (:data:`DEFAULT_MODELS`; ``"all"`` adds :data:`SLOW_MODELS`).
    nan_policy : {"raise", "zero", "drop_series"}
    edge_nan : {"policy", "unlisted"}
        See :mod:`tycheon.data.panel`.
    static_universe : bool
        The series are the entities alive at a snapshot (adds the survivorship warning).
    n_jobs : int, optional
        Worker processes (default: the machine's cores, at most 8).
    seed : int
    time_budget : float, optional
        Soft per-model budget in seconds.
    progress : bool
        A progress bar per model.
    on_plan : callable, optional
        Called with the plan before any model runs (the command line prints it there).

    Returns
    -------
    Evaluation

    Raises
    ------
    tycheon.data.panel.PanelValidationError, tycheon.data.userfile.UserFileError
        Data that cannot become a panel (the message names the rows).
    EvaluationError
        A protocol or roster the data cannot support.

    Examples
    --------
    >>> ev = tycheon.evaluate(df, id_col="sku", time_col="month", target_col="qty")  # doctest: +SKIP
    >>> ev.leaderboard(demand_class="intermittent", metric="mase").head()  # doctest: +SKIP
    """
    data = DataSpec(
        id_col=id_col,
        time_col=time_col,
        target_col=target_col,
        level_cols=None if level_cols is None else tuple(level_cols),
        freq=freq,
        season_length=season_length,
        nan_policy=nan_policy,
        edge_nan=edge_nan,
        static_universe=static_universe,
        name=name,
    )
    panel = load_panel(df, data, source="the DataFrame")
    plan = plan_evaluation(
        panel,
        horizon=horizon,
        n_origins=n_origins,
        min_history=min_history,
        models=models,
        units=units,
        n_jobs=n_jobs,
        seed=seed,
        time_budget=time_budget,
    )
    return run_plan(panel, plan, data=data, source=df, progress=progress, on_plan=on_plan)


def constant_columns(frame: pd.DataFrame, data: DataSpec) -> tuple[str, ...]:
    """The columns besides id/time/target that are constant within every series (hierarchy levels).

    A column of nested values (a parquet struct, list or map column) is never a level; with a nested id
    column there are none (the panel's validation then names that column)."""
    others = [c for c in frame.columns if c not in (data.id_col, data.time_col, data.target_col)]
    if not others or data.id_col not in frame.columns or nested_columns(frame, [data.id_col]):
        return ()
    nested = set(nested_columns(frame, others))
    others = [c for c in others if c not in nested]
    if not others:
        return ()
    counts = frame.groupby(data.id_col, dropna=True)[others].nunique(dropna=False)
    return tuple(c for c in others if bool((counts[c] <= 1).all()) and frame[c].notna().all())


def load_panel(frame: pd.DataFrame, data: DataSpec, *, source: str, file: dict[str, str] | None = None) -> Panel:
    """The panel of a user table under ``data`` (levels detected when ``data.level_cols`` is None).

    Raises
    ------
    EvaluationError
        When every value is zero (after the NaN policy): no metric can rank models on it.
    """
    levels = constant_columns(frame, data) if data.level_cols is None else data.level_cols
    panel = panel_from_frame(
        frame,
        series_col=data.id_col,
        period_col=data.time_col,
        value_col=data.target_col,
        freq=data.freq,
        season_length=data.season_length,
        level_cols=levels,
        static_universe=data.static_universe,
        nan_policy=data.nan_policy,
        edge_nan=data.edge_nan,
        redistributable=data.redistributable,
        licence=data.licence,
        source=source,
        file=file,
        name=data.name,
    )
    if not panel.data["value"].to_numpy().any():
        raise EvaluationError(
            f"{source}: every value of column {data.target_col!r} is zero ({panel.n_series} series), so no "
            "model can be ranked: scaled errors divide by the in-sample scale and WAPE by the total, both zero; "
            "data with non-zero values are accepted (check that the target column, --target / target_col, is "
            "the quantity)"
        )
    return panel


def run_plan(
    panel: Panel,
    plan: EvaluationPlan,
    *,
    data: DataSpec,
    source: pd.DataFrame | Path,
    progress: bool = False,
    on_plan: Callable[[EvaluationPlan], None] | None = None,
) -> Evaluation:
    """Run a planned evaluation: every model through the engine, then the leaderboard tables."""
    if on_plan is not None:
        on_plan(plan)
    for w in plan.warnings:
        _warnings.warn(w, EvaluationWarning, stacklevel=3)
    status: dict[str, dict[str, Any]] = {}
    ran = []
    for model in plan.settings.models:
        table, status[model] = _run_one(panel, plan, model, progress=progress)
        if table is not None:
            ran.append(table)
    if not ran:
        raise EvaluationError("no model ran: " + "; ".join(f"{m}: {s.get('reason')}" for m, s in status.items()))
    scores = pd.concat(ran, ignore_index=True)
    s = plan.settings
    spec = s.spec()
    if tuple(spec.quantile_levels) == tuple(s.quantile_levels):  # one pass over the units for both
        tables, intervals = leaderboard_and_interval_tables(scores, spec=spec, point_metric=s.metrics[0])
    else:
        tables = leaderboard_tables(scores, spec=spec)
        intervals = interval_tables(scores, point_metric=s.metrics[0], quantile_levels=s.quantile_levels)
    return Evaluation(
        panel=panel,
        plan=plan,
        data=data,
        scores=scores,
        status=status,
        tables=tables,
        intervals=intervals,
        source=source,
    )
