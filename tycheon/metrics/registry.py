r"""The metric registry: every leaderboard metric declared once, with its kernel, scale and meaning.

One :class:`MetricSpec` per metric name says how a block's value is computed from per-step terms
(:data:`TERMS`), which score-set scale column divides it (if any), whether it scores points, intervals or
distributions, which direction is better, its display name and a one-line definition, and the per-step
loss that a Diebold-Mariano test on a table of that metric compares (:attr:`MetricSpec.step_loss`) with
the words a table publishes for it (:attr:`MetricSpec.dm_loss_label`).
:func:`tycheon.metrics.aggregate.block_scores`, :func:`~tycheon.metrics.aggregate.step_scores`, the
leaderboard, the harness's config check and the site's glossary all read this table, so adding a metric is
one kernel (in :mod:`tycheon.metrics._kernels` if it needs a new formula), one entry here and its oracle
test (``tests/test_metrics_registry.py`` checks every entry's invariants without a list of names). A scale
column is one of :data:`tycheon.metrics.scale.SCALE_TEXT`'s keys: a new denominator is declared there.

Per-step terms, with :math:`e_h = \hat y_h - y_h`: ``abs_err`` :math:`|e_h|`, ``sq_err`` :math:`e_h^2`,
``err`` :math:`e_h`, ``abs_y`` :math:`|y_h|`, ``zero_y`` :math:`\mathbb 1\{y_h = 0\}`, ``smape``
:math:`2|e_h|/(|y_h|+|\hat y_h|)`, ``ape`` :math:`|e_h|/|y_h|`, ``crps`` (one kind per call), and for the
80%/95% bands ``is80``/``is95`` (interval score), ``cov80``/``cov95`` (inside the closed band) and
``width80``/``width95``; on the conformal bands read as one quantile grid (``lo95, lo80, point, hi80, hi95``
at 0.025, 0.1, 0.5, 0.9, 0.975, :data:`BAND_GRID`; a row with only the 80% band: ``lo80, point, hi80`` at 0.1,
0.5, 0.9), ``pin50``/``pin80``/``pin90``/``pin95`` the pinball
loss of the grid's quantile at that service level (:func:`tycheon.metrics._kernels.grid_quantile`: exact at
0.5, 0.9, piecewise linear between grid levels at 0.8 and 0.95) and ``bcrps`` the grid's CRPS. A block's
value reads the block mean (or sum) of these terms and the block's
scale; probabilistic and interval terms present on only some steps of a block give NaN, never a partial
score.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np

from tycheon.errors import MetricInputError
from tycheon.metrics._formulas import BlockTerms, StepTerms, mean_of, ratio_of_sums, scaled_loss, term_of
from tycheon.metrics._kernels import (
    BAND_LEVELS_80,
    BAND_LEVELS_95,
    band_grid_quantile,
    interval_score_kernel,
    pinball_kernel,
    smape_ratio,
)
from tycheon.metrics.scale import SCALE_TEXT

__all__ = [
    "BAND_GRID",
    "BAND_GRID_80",
    "METRICS",
    "SCALED_STEP_LOSSES",
    "SERVICE_LEVELS",
    "BlockTerms",
    "MetricKind",
    "MetricSpec",
    "StepTerms",
    "block_value",
    "get_metric",
    "glossary",
    "metric_names",
    "term_values",
]

_BAND_ALPHA = {"80": 0.2, "95": 0.05}

MetricKind = Literal["point", "interval", "probabilistic"]
RankBy = Literal["gmean_rel_rw", "pooled", "abs_mean"]

SERVICE_LEVELS = (0.5, 0.8, 0.9, 0.95)
"""Service levels of the scaled pinball losses ``spl50`` ... ``spl95`` (issue 35: 0.5, 0.8, 0.9, 0.95)."""

BAND_GRID: tuple[tuple[float, ...], tuple[str, ...]] = (
    tuple(BAND_LEVELS_95.tolist()),
    ("lo95", "lo80", "point", "hi80", "hi95"),
)
"""The conformal bands read as one quantile grid (levels, score-set columns), shared by every model: a row
with both bands; a row with only the 80% band is read on :data:`BAND_GRID_80`."""

BAND_GRID_80: tuple[tuple[float, ...], tuple[str, ...]] = (tuple(BAND_LEVELS_80.tolist()), ("lo80", "point", "hi80"))
"""The grid of a row with only the 80% band (a benchmark without calibration origins has no 95% band early:
full v0002 has 80% bands only); service levels above 0.9 are NaN on it (no extrapolation)."""


@dataclass(frozen=True, kw_only=True)
class MetricSpec:
    """One metric: how a block is scored, how it is scaled, what it means.

    Attributes
    ----------
    name : str
        Registry key, as written in configs and results (``"mase"``).
    display_name : str
        As printed on pages (``"MASE"``).
    kind : {"point", "interval", "probabilistic"}
        What it scores: the point forecast, a band, or a predictive distribution.
    lower_is_better : bool
        Direction of a loss; ``False`` for a statistic that is not a loss (bias, coverage, width: the
        leaderboard does not rank them).
    scale_column : str or None
        The score-set column that divides it (``scale_mae`` / ``scale_rmse``), the only place a
        denominator is chosen.
    scale_power : int
        The power of the scale column in the denominator: 1 (the default) for a loss in the series' units
        over the scale (MASE, RMSSE), 2 for a squared loss over the squared scale (MSSE = RMSSE²), so a
        block's value times ``scale ** scale_power`` is free of the scale. Read by the registry's tests.
    definition : str
        One line, formula and plain meaning, for the glossary.
    terms : tuple of str
        The per-step terms it needs (keys of :data:`TERMS`, or ``"crps"``).
    block : callable
        :class:`BlockTerms` -> ``[block]`` values.
    step : callable or None
        :class:`StepTerms` -> the metric of a one-step block ``[row]`` (per-horizon tables).
    step_loss : callable or None
        :class:`StepTerms` -> the per-step loss whose mean the table ranks, for the DM test on tables of
        this metric; ``None`` when the metric is not a mean of per-step losses.
    elicits : str
        The functional of the predictive distribution the metric is consistent for (Gneiting 2011): the
        forecast that minimises its expectation. ``"mean"`` for squared error, ``"median"`` for absolute
        error (0 on a mostly-zero series), ``"τ-quantile"`` for the pinball loss, the whole distribution for
        a proper score; ``"-"`` for a statistic that is not a loss.
    rank_by : {"gmean_rel_rw", "pooled", "abs_mean"}
        How a table of it ranks models: the geometric mean over blocks of the error relative to the
        random walk (the default for losses; robust to one huge block), the cell's pooled ratio of sums
        (WAPE) or the absolute value of the cell mean (scaled bias: 0 is best).
    loss_label : str or None
        Plain words for the per-step loss a DM test on a table of it compares, as the table publishes them
        (``tests.dm_loss``); ``None``: ``"per-step <display name>"`` (:attr:`dm_loss_label`).
    better : str
        Which value is better, as the glossary prints it; empty (the default): ``"lower"`` for a loss,
        else ``"closer to 0"`` (:meth:`default_better`).
    """

    name: str
    display_name: str
    kind: MetricKind
    lower_is_better: bool
    scale_column: str | None
    definition: str
    scale_power: int = 1
    terms: tuple[str, ...]
    block: Callable[[BlockTerms], np.ndarray]
    step: Callable[[StepTerms], np.ndarray] | None = None
    step_loss: Callable[[StepTerms], np.ndarray] | None = None
    elicits: str = "-"
    rank_by: RankBy = "gmean_rel_rw"
    loss_label: str | None = None
    better: str = ""

    def __post_init__(self) -> None:
        if self.scale_column is not None and self.scale_column not in SCALE_TEXT:
            raise MetricInputError(
                f"metric {self.name!r}: scale column {self.scale_column!r} is not a scale of "
                f"tycheon.metrics.scale.SCALE_TEXT (scales: {sorted(SCALE_TEXT)}); declare a new scale there"
            )
        if self.scale_power < 1:
            raise MetricInputError(f"metric {self.name!r}: scale_power must be >= 1, got {self.scale_power}")
        if not self.better:
            object.__setattr__(self, "better", self.default_better(self.lower_is_better))

    @staticmethod
    def default_better(lower_is_better: bool) -> str:
        """The glossary's "Better" wording of a metric that declares none (also for a metric of older results
        that the registry no longer has)."""
        return "lower" if lower_is_better else "closer to 0"

    @property
    def dm_loss_label(self) -> str:
        """The per-step loss a DM test on a table of this metric compares, in plain words (``tests.dm_loss``)."""
        return self.loss_label if self.loss_label is not None else f"per-step {self.display_name}"

    @property
    def ranked(self) -> bool:
        """Whether a leaderboard ranks models on it (a loss with a direction, or a bias ranked on its size)."""
        return self.rank_by == "abs_mean" or (self.lower_is_better and self.step_loss is not None)

    @property
    def tested(self) -> bool:
        """Whether a DM test can compare models on it (a mean of per-step losses)."""
        return self.lower_is_better and self.step_loss is not None


def _interval(level: str) -> list[MetricSpec]:
    alpha = {"80": 0.2, "95": 0.05}[level]
    return [
        MetricSpec(
            name=f"msis{level}",
            display_name=f"MSIS {level}%",
            kind="interval",
            lower_is_better=True,
            scale_column="scale_mae",
            terms=(f"is{level}",),
            definition=(
                f"mean interval score of the {level}% band, (u-l) + (2/{alpha:g})·(distance outside "
                "the band), divided by the in-sample seasonal-naive MAE; lower is better"
            ),
            **scaled_loss(f"is{level}"),
            elicits=f"the {alpha / 2:g} and {1 - alpha / 2:g} quantiles (interval score)",
        ),
        MetricSpec(
            name=f"coverage{level}",
            display_name=f"Coverage {level}%",
            kind="interval",
            lower_is_better=False,
            scale_column=None,
            terms=(f"cov{level}",),
            definition=f"share of steps whose actual lies inside the {level}% band; nominal {level}%",
            block=mean_of(f"cov{level}"),
            step=term_of(f"cov{level}"),
            better="closer to nominal",
        ),
        MetricSpec(
            name=f"width{level}",
            display_name=f"Width {level}%",
            kind="interval",
            lower_is_better=False,
            scale_column=None,
            terms=(f"width{level}",),
            definition=f"mean width u - l of the {level}% band, in the series' units",
            block=mean_of(f"width{level}"),
            step=term_of(f"width{level}"),
        ),
    ]


def _service_levels() -> list[MetricSpec]:
    """Scaled pinball loss at each of :data:`SERVICE_LEVELS`, on the bands' quantile grid."""
    out = []
    for tau in SERVICE_LEVELS:
        tag = f"{round(tau * 100):02d}"
        out.append(
            MetricSpec(
                name=f"spl{tag}",
                display_name=f"SPL {tau:g}",
                kind="probabilistic",
                lower_is_better=True,
                scale_column="scale_mae",
                terms=(f"pin{tag}",),
                definition=(
                    f"scaled pinball loss at service level {tau:g}: mean of max({tau:g}(y-q), ({tau:g}-1)(y-q)) "
                    f"over the horizon, q the {tau:g} quantile of the calibrated bands' grid"
                    + (
                        " (read between grid levels on its piecewise-linear quantile function)"
                        if tau not in BAND_GRID[0]
                        else ""
                    )
                    + (
                        "; a step with only the 80% band has no 0.95 quantile (no extrapolation) and is not scored"
                        if tau > 0.9
                        else ""
                    )
                    + ", divided by the in-sample seasonal-naive MAE; lower is better"
                    + ("; at 0.5 the quantile is the point forecast, so this is half the MASE" if tau == 0.5 else "")
                ),
                **scaled_loss(f"pin{tag}"),
                elicits=f"the {tau:g}-quantile",
            )
        )
    return out


_SPECS: tuple[MetricSpec, ...] = (
    MetricSpec(
        name="mae",
        display_name="MAE",
        kind="point",
        lower_is_better=True,
        scale_column=None,
        terms=("abs_err",),
        definition="mean absolute error over the horizon, in the series' units; lower is better",
        block=lambda b: b.mean["abs_err"],
        step=lambda s: s.term["abs_err"],
        step_loss=lambda s: s.term["abs_err"],
        elicits="median",
        loss_label="absolute error",
    ),
    MetricSpec(
        name="rmse",
        display_name="RMSE",
        kind="point",
        lower_is_better=True,
        scale_column=None,
        terms=("sq_err",),
        definition="root mean squared error over the horizon, in the series' units; lower is better",
        block=lambda b: np.sqrt(b.mean["sq_err"]),
        step=lambda s: np.sqrt(s.term["sq_err"]),
        step_loss=lambda s: s.term["sq_err"],
        elicits="mean",
        loss_label="squared error",
    ),
    MetricSpec(
        name="mase",
        display_name="MASE",
        kind="point",
        lower_is_better=True,
        scale_column="scale_mae",
        terms=("abs_err",),
        definition=(
            "mean absolute error divided by the in-sample seasonal-naive MAE of the training window; "
            "1.0 = as good as the in-sample seasonal naive, lower is better"
        ),
        block=lambda b: b.mean["abs_err"] / b.scale["scale_mae"],
        step=lambda s: s.term["abs_err"] / s.scale["scale_mae"],
        step_loss=lambda s: s.term["abs_err"] / s.scale["scale_mae"],
        elicits="median",
        loss_label="absolute error / MASE scale",
    ),
    MetricSpec(
        name="rmsse",
        display_name="RMSSE",
        kind="point",
        lower_is_better=True,
        scale_column="scale_rmse",
        terms=("sq_err",),
        definition=(
            "root mean squared error divided by the in-sample seasonal-naive RMSE of the training "
            "window; 1.0 = as good as the in-sample seasonal naive, lower is better"
        ),
        block=lambda b: np.sqrt(b.mean["sq_err"]) / b.scale["scale_rmse"],
        step=lambda s: np.sqrt(s.term["sq_err"]) / s.scale["scale_rmse"],
        step_loss=lambda s: s.term["sq_err"] / (s.scale["scale_rmse"] * s.scale["scale_rmse"]),
        elicits="mean",
        loss_label="squared error / RMSSE scale squared",
    ),
    MetricSpec(
        name="wape",
        display_name="WAPE",
        kind="point",
        lower_is_better=True,
        scale_column=None,
        terms=("abs_err", "abs_y"),
        definition=(
            "sum of absolute errors divided by the sum of absolute actuals; a table pools it over the cell "
            "(sum |e| / sum |y| of every scored step), never a mean of per-block ratios; lower is better"
        ),
        block=ratio_of_sums,
        step_loss=lambda s: s.term["abs_err"],
        elicits="median",
        rank_by="pooled",
        loss_label="absolute error",
    ),
    MetricSpec(
        name="smape",
        display_name="sMAPE",
        kind="point",
        lower_is_better=True,
        scale_column=None,
        terms=("smape",),
        definition="mean of 2|y - f| / (|y| + |f|) over the horizon (0 where both are 0), 0 to 2; lower is better",
        block=lambda b: b.mean["smape"],
        step=lambda s: s.term["smape"],
        step_loss=lambda s: s.term["smape"],
        elicits="no standard functional (consistent for neither mean nor median; Gneiting 2011)",
    ),
    MetricSpec(
        name="mape",
        display_name="MAPE",
        kind="point",
        lower_is_better=True,
        scale_column=None,
        terms=("ape", "zero_y"),
        definition="mean of |y - f| / |y| over the horizon; undefined for a block with a zero actual; lower is better",
        block=lambda b: np.where(b.total["zero_y"] == 0, b.mean["ape"], np.nan),
        step=lambda s: s.term["ape"],
        step_loss=lambda s: s.term["ape"],
        elicits="the median of the 1/y-reweighted distribution, below the median (Gneiting 2011)",
    ),
    MetricSpec(
        name="bias",
        display_name="Bias",
        kind="point",
        lower_is_better=False,
        scale_column=None,
        terms=("err",),
        definition="mean error f - y over the horizon; positive = over-forecast, 0 is best",
        block=lambda b: b.mean["err"],
        step=lambda s: s.term["err"],
    ),
    MetricSpec(
        name="scaled_bias",
        display_name="Scaled bias",
        kind="point",
        lower_is_better=False,
        scale_column="scale_mae",
        terms=("err",),
        definition=(
            "mean error divided by the in-sample seasonal-naive MAE; positive = over-forecast, 0 is best; a "
            "table ranks models on the absolute value of the cell's mean"
        ),
        block=lambda b: b.mean["err"] / b.scale["scale_mae"],
        step=lambda s: s.term["err"] / s.scale["scale_mae"],
        elicits="mean (its expectation is 0 only for the mean)",
        rank_by="abs_mean",
    ),
    MetricSpec(
        name="crps",
        display_name="CRPS",
        kind="probabilistic",
        lower_is_better=True,
        scale_column=None,
        terms=("crps",),
        definition=(
            "continuous ranked probability score of the predictive distribution (one kind per table: "
            "exact from samples or approximate from quantiles), in the series' units; lower is better"
        ),
        block=lambda b: b.mean["crps"],
        step=lambda s: s.term["crps"],
        step_loss=lambda s: s.term["crps"],
        elicits="the whole predictive distribution (strictly proper)",
        loss_label="CRPS of the model's own quantiles",
    ),
    *_service_levels(),
    MetricSpec(
        name="crps_band",
        display_name="Scaled CRPS (bands)",
        kind="probabilistic",
        lower_is_better=True,
        scale_column="scale_mae",
        terms=("bcrps",),
        definition=(
            "CRPS of the calibrated conformal bands read as one quantile grid (lo95, lo80, point, hi80, hi95 at "
            "0.025, 0.1, 0.5, 0.9, 0.975; a step with only the 80% band: lo80, point, hi80 at 0.1, 0.5, 0.9), the "
            "same kind for every model, divided by the in-sample seasonal-naive MAE; lower is better"
        ),
        **scaled_loss("bcrps"),
        elicits="the whole predictive distribution (strictly proper on the grid)",
    ),
    *_interval("80"),
    *_interval("95"),
)

METRICS: dict[str, MetricSpec] = {s.name: s for s in _SPECS}
"""Metric name -> :class:`MetricSpec`, in display order."""

SCALED_STEP_LOSSES: tuple[str, ...] = tuple(
    n for n, s in METRICS.items() if s.kind == "point" and s.tested and s.step is not None and s.scale_column
)
"""Point losses with a per-step value and a scale column, in registry order: the metrics on which a ranking
of per-step (or per-series) scaled errors is formed (horizon robustness, the selection-rule replay, the
protocol-sensitivity audit)."""


def term_values(
    names: Iterable[str],
    *,
    actual: np.ndarray,
    point: np.ndarray,
    bands: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None,
    crps: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """The per-step terms ``names`` (see the module docstring) of aligned arrays, elementwise.

    ``bands`` maps a level (``"80"``, ``"95"``) to its ``(lo, hi)`` arrays (NaN where no band); ``crps``
    gives the per-step CRPS when the ``"crps"`` term is asked for. The one place each term's formula lives.
    """
    y, f = actual, point
    e = f - y
    out: dict[str, np.ndarray] = {}
    for t in names:
        if t == "abs_err":
            out[t] = np.abs(e)
        elif t == "sq_err":
            out[t] = e * e
        elif t == "err":
            out[t] = e
        elif t == "abs_y":
            out[t] = np.abs(y)
        elif t == "zero_y":
            out[t] = (y == 0).astype(np.float64)
        elif t == "smape":
            out[t] = smape_ratio(y, f)
        elif t == "ape":
            with np.errstate(divide="ignore", invalid="ignore"):
                out[t] = np.where(y != 0, np.abs(e) / np.abs(y), np.nan)
        elif (t.startswith("pin") and t[3:].isdigit()) or t == "bcrps":
            grid = _grid_values(bands, point=f, term=t)
            if t == "bcrps":
                from tycheon.metrics._crps_rows import quantile_crps_rows

                out[t] = np.full(len(y), np.nan)
                # rows with only the 80% band on its three-point grid, then rows with both on the five-point one
                quantile_crps_rows(out[t], y, list(grid[:, 1:4].T), np.asarray(BAND_GRID_80[0]), sort=True)
                quantile_crps_rows(out[t], y, list(grid.T), np.asarray(BAND_GRID[0]), sort=True)
            else:
                tau = int(t[3:]) / 100.0
                q = band_grid_quantile(grid, tau)
                out[t] = pinball_kernel(y, q[:, None], np.asarray([tau]))[:, 0]
        elif t == "crps":
            if crps is None:
                raise MetricInputError("the 'crps' term needs the rows' CRPS")
            out[t] = crps
        elif t[:-2] in ("is", "cov", "width") and t[-2:] in _BAND_ALPHA:
            level = t[-2:]
            if bands is None or level not in bands:
                raise MetricInputError(f"the {t!r} term needs the {level}% band (lo{level}/hi{level})")
            lo, hi = bands[level]
            if t.startswith("is"):
                out[t] = interval_score_kernel(y, lo, hi, _BAND_ALPHA[level])  # NaN where no band
            elif t.startswith("cov"):
                out[t] = np.where(np.isfinite(lo) & np.isfinite(hi), (lo <= y) & (y <= hi), np.nan)
            else:
                out[t] = hi - lo
        else:
            raise MetricInputError(
                f"unknown per-step term {t!r}; terms: abs_err, sq_err, err, abs_y, zero_y, "
                "smape, ape, crps, is80/95, cov80/95, width80/95, pin50/80/90/95, bcrps"
            )
    return out


def _grid_values(
    bands: Mapping[str, tuple[np.ndarray, np.ndarray]] | None, *, point: np.ndarray, term: str
) -> np.ndarray:
    """The rows' band grid ``[row, 5]`` (:data:`BAND_GRID`'s columns, NaN where a band is missing)."""
    if bands is None or "80" not in bands:
        raise MetricInputError(f"the {term!r} term needs the conformal bands (lo80/hi80, and lo95/hi95 where any)")
    lo80, hi80 = bands["80"]
    lo95, hi95 = bands.get("95", (np.full(len(point), np.nan), np.full(len(point), np.nan)))
    return np.column_stack([lo95, lo80, point, hi80, hi95]).astype(np.float64, copy=False)


GRID_TERMS = ("pin50", "pin80", "pin90", "pin95", "bcrps")
"""Per-step terms read from the bands' quantile grid (both bands and the point)."""


def block_value(name: str, *, actual: np.ndarray, point: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
    """Metric ``name`` of blocks given as arrays ``[..., step]``, reduced over the last axis.

    The registry's block formula applied to the block means and sums of its terms; ``scale`` (one per
    block, zero/NaN already handled by the caller) is the metric's scale column. Used by
    :mod:`tycheon.metrics.point`, so the array functions and the score-set tables share one formula.
    """
    spec = get_metric(name)
    terms = term_values(spec.terms, actual=actual, point=point)
    scales = {} if spec.scale_column is None or scale is None else {spec.scale_column: np.asarray(scale)}
    return np.asarray(
        spec.block(
            BlockTerms(
                mean={t: v.mean(axis=-1) for t, v in terms.items()},
                total={t: v.sum(axis=-1) for t, v in terms.items()},
                scale=scales,
            )
        )
    )


def metric_names(*, kind: MetricKind | None = None, ranked: bool | None = None) -> tuple[str, ...]:
    """Registered metric names, optionally only of one ``kind`` or only those a leaderboard ranks."""
    return tuple(
        n for n, s in METRICS.items() if (kind is None or s.kind == kind) and (ranked is None or s.ranked == ranked)
    )


def get_metric(name: str) -> MetricSpec:
    """The spec of ``name``; :class:`~tycheon.errors.MetricInputError` listing the known names otherwise."""
    try:
        return METRICS[name]
    except KeyError as err:
        raise MetricInputError(f"unknown metric {name!r}; available: {sorted(METRICS)}") from err


def glossary() -> list[dict[str, object]]:
    """Plain records of every metric (name, display name, kind, direction, scale, definition, the functional it
    elicits, how a table ranks on it) for pages."""
    return [
        {
            "name": s.name,
            "display_name": s.display_name,
            "kind": s.kind,
            "lower_is_better": s.lower_is_better,
            "ranked": s.ranked,
            "scale_column": s.scale_column,
            "definition": s.definition,
            "elicits": s.elicits,
            "rank_by": s.rank_by,
        }
        for s in METRICS.values()
    ]
