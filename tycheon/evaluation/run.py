"""The run of an evaluation: a user's table becomes a panel (:func:`load_panel`), a planned run goes
through the engine one model at a time (:func:`run_plan`, with :func:`tycheon.backtest.one_model.run_one_model`,
the per-model run the benchmark harness calls too) and ends as an :class:`Evaluation` holding the
leaderboard tables of :func:`tycheon.analysis.leaderboard.leaderboard_tables`; :func:`evaluate` does all of
it from a DataFrame. The :class:`Evaluation` keeps each model's score set, so that writing it as a results
version (:meth:`Evaluation.to_results`) hands those to the harness instead of running every model again."""

from __future__ import annotations

import warnings as _warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from tycheon._typing import EdgeNan, NanPolicy
from tycheon.analysis.leaderboard import (
    DEMAND_CLASSES,
    interval_tables,
    leaderboard_and_interval_tables,
    leaderboard_tables,
)
from tycheon.backtest import engine
from tycheon.backtest.factories import forecaster_factory
from tycheon.backtest.one_model import run_one_model
from tycheon.backtest.scoreset import ScoreSet
from tycheon.data.panel import Panel
from tycheon.data.userfile import nested_columns, panel_from_frame
from tycheon.evaluation.plan import (
    DEFAULT_SEED,
    DataSpec,
    EvaluationError,
    EvaluationPlan,
    EvaluationWarning,
    plan_evaluation,
)
from tycheon.evaluation.summary import inventory_lines, summary_lines

__all__ = ["Evaluation", "constant_columns", "evaluate", "load_panel", "run_plan"]


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
    # each model that ran, its score set as the engine returned it (``scores`` is their rows joined): the
    # runs :meth:`to_results` hands to the harness, which uses them where its own run would be the same
    _score_sets: dict[str, ScoreSet] = field(default_factory=dict, repr=False, compare=False)

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

        The pipeline is handed this evaluation's score sets: a model whose run the pipeline would make
        on the same panel content with the same protocol, settings and seed takes its score set from
        here (recorded as ``given`` in the provenance's ``cache``) instead of running again; any other
        run (its own analyses' backtests among them) is computed as usual. So the file's tables equal
        this object's. Needs the source checkout (see :func:`tycheon._harness.load_harness`).
        """
        from tycheon._harness import load_harness

        return load_harness().write_evaluation(self, Path(directory), given=self._score_sets).results

    def to_site(self, directory: str | Path) -> Path:
        """Write results and build the static site under ``directory`` (``mkdocs build --strict``);
        returns the folder of the built site's ``index.html``."""
        from tycheon._harness import load_harness

        return load_harness().write_evaluation(self, Path(directory), build_site=True, given=self._score_sets).site


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
        The rolling-origin protocol (the defaults: the planning rules of :mod:`tycheon.evaluation.plan`).
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
    s = plan.settings
    protocol = s.protocol()
    chunk = engine.worker_chunk_size(panel.n_series, n_jobs=s.n_jobs, backend=s.backend)
    status: dict[str, dict[str, Any]] = {}
    ran: dict[str, ScoreSet] = {}
    for model in s.models:  # one at a time, the harness's way: a failure is recorded, a leak is raised
        result = run_one_model(
            panel,
            protocol,
            model,
            forecaster_factory(model),
            units=s.units,
            chunk_size=chunk,
            quantile_levels=s.quantile_levels,
            min_history=s.min_history,
            backend=s.backend,
            n_jobs=s.n_jobs,
            seed=s.seed,
            time_budget=s.time_budget,
            progress=progress,
        )
        status[model] = result.status
        if result.scores is not None and result.status["status"] == "ran":
            ran[model] = result.scores
    if not ran:
        raise EvaluationError("no model ran: " + "; ".join(f"{m}: {st.get('reason')}" for m, st in status.items()))
    scores = pd.concat([r.table for r in ran.values()], ignore_index=True)
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
        _score_sets=ran,
    )
