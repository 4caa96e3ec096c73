"""The plan of an evaluation, decided before anything runs: the data's mapping (:class:`DataSpec`), the
run's settings (:class:`Settings`), the roster (:func:`resolve_models`) and the origins with what the data
are too short for (:func:`plan_evaluation`, :class:`EvaluationPlan`).

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tycheon._typing import Backend, EdgeNan, NanPolicy
from tycheon.analysis.cell import time_check
from tycheon.analysis.leaderboard import LeaderboardSpec
from tycheon.backtest import engine
from tycheon.backtest.calibration import calibration_min_history
from tycheon.backtest.factories import forecaster_factory
from tycheon.backtest.protocol import RollingOrigin, calibration_plan
from tycheon.data.panel import Panel
from tycheon.data.userfile import DEFAULT_MAX_ROWS
from tycheon.errors import InputError
from tycheon.forecasters import registry

__all__ = [
    "ALL_MODELS",
    "BAND80_RESIDUALS",
    "BAND95_RESIDUALS",
    "DEFAULT_HORIZON",
    "DEFAULT_MODELS",
    "DEFAULT_SEED",
    "MAX_DEFAULT_ORIGINS",
    "METRICS",
    "MIN_TIME_BUDGET",
    "N_CALIBRATION_ORIGINS",
    "PRODUCTION_BASELINE",
    "QUANTILE_LEVELS",
    "RANDOM_WALK",
    "SLOW_MODELS",
    "DataSpec",
    "EvaluationError",
    "EvaluationPlan",
    "EvaluationWarning",
    "Settings",
    "plan_evaluation",
    "probe_seconds_per_fit",
    "resolve_models",
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
