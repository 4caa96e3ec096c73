r"""The metric registry: every leaderboard metric declared once, with its kernel, scale and meaning.

One :class:`MetricSpec` per metric name says how a block's value is computed from per-step terms
(:data:`TERMS`), which score-set scale column divides it (if any), whether it scores points, intervals or
distributions, which direction is better, its display name and a one-line definition, and the per-step
loss that a Diebold-Mariano test on a table of that metric compares (:attr:`MetricSpec.step_loss`).
:func:`tycheon.metrics.aggregate.block_scores`, :func:`~tycheon.metrics.aggregate.step_scores`, the
leaderboard, the harness's config check and the site's glossary all read this table, so adding a metric is
one kernel (in :mod:`tycheon.metrics._kernels` if it needs a new formula), one entry here and its oracle
test.

Per-step terms, with :math:`e_h = \hat y_h - y_h`: ``abs_err`` :math:`|e_h|`, ``sq_err`` :math:`e_h^2`,
``err`` :math:`e_h`, ``abs_y`` :math:`|y_h|`, ``zero_y`` :math:`\mathbb 1\{y_h = 0\}`, ``smape``
:math:`2|e_h|/(|y_h|+|\hat y_h|)`, ``ape`` :math:`|e_h|/|y_h|`, ``crps`` (one kind per call), and for the
80%/95% bands ``is80``/``is95`` (interval score), ``cov80``/``cov95`` (inside the closed band) and
``width80``/``width95``. A block's value reads the block mean (or sum) of these terms and the block's
scale; probabilistic and interval terms present on only some steps of a block give NaN, never a partial
score.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np

from tycheon.errors import MetricInputError
from tycheon.metrics._kernels import interval_score_kernel, smape_ratio

__all__ = [
    "METRICS",
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


@dataclass(frozen=True)
class BlockTerms:
    """Per-block aggregates of the per-step terms, aligned ``[block]``.

    ``mean[t]`` / ``total[t]`` are the block mean / sum of term ``t``; ``scale[c]`` is the block's value
    of scale column ``c`` with zero or NaN scales already set to NaN (the zero-scale rule).
    """

    mean: Mapping[str, np.ndarray]
    total: Mapping[str, np.ndarray]
    scale: Mapping[str, np.ndarray]


@dataclass(frozen=True)
class StepTerms:
    """Per-step terms and the row's scales (zero or NaN scales already NaN), aligned ``[row]``."""

    term: Mapping[str, np.ndarray]
    scale: Mapping[str, np.ndarray]


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
        this metric; ``None`` when the metric is not a loss.
    """

    name: str
    display_name: str
    kind: MetricKind
    lower_is_better: bool
    scale_column: str | None
    definition: str
    terms: tuple[str, ...]
    block: Callable[[BlockTerms], np.ndarray]
    step: Callable[[StepTerms], np.ndarray] | None = None
    step_loss: Callable[[StepTerms], np.ndarray] | None = None

    @property
    def ranked(self) -> bool:
        """Whether a leaderboard ranks models on it (a loss with a direction)."""
        return self.lower_is_better and self.step_loss is not None


def _ratio_of_sums(b: BlockTerms) -> np.ndarray:
    den = b.total["abs_y"]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, b.total["abs_err"] / np.where(den > 0, den, np.nan), np.nan)


def _mean_of(term: str, scale: str | None = None) -> Callable[[BlockTerms], np.ndarray]:
    """Block mean of ``term``, divided by the block's ``scale`` column when given."""

    def block(b: BlockTerms) -> np.ndarray:
        return b.mean[term] if scale is None else b.mean[term] / b.scale[scale]

    return block


def _term_of(term: str, scale: str | None = None) -> Callable[[StepTerms], np.ndarray]:
    """Per-step ``term``, divided by the row's ``scale`` column when given."""

    def step(s: StepTerms) -> np.ndarray:
        return s.term[term] if scale is None else s.term[term] / s.scale[scale]

    return step


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
            block=_mean_of(f"is{level}", "scale_mae"),
            step=_term_of(f"is{level}", "scale_mae"),
            step_loss=_term_of(f"is{level}", "scale_mae"),
        ),
        MetricSpec(
            name=f"coverage{level}",
            display_name=f"Coverage {level}%",
            kind="interval",
            lower_is_better=False,
            scale_column=None,
            terms=(f"cov{level}",),
            definition=f"share of steps whose actual lies inside the {level}% band; nominal {level}%",
            block=_mean_of(f"cov{level}"),
            step=_term_of(f"cov{level}"),
        ),
        MetricSpec(
            name=f"width{level}",
            display_name=f"Width {level}%",
            kind="interval",
            lower_is_better=False,
            scale_column=None,
            terms=(f"width{level}",),
            definition=f"mean width u - l of the {level}% band, in the series' units",
            block=_mean_of(f"width{level}"),
            step=_term_of(f"width{level}"),
        ),
    ]


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
    ),
    MetricSpec(
        name="wape",
        display_name="WAPE",
        kind="point",
        lower_is_better=True,
        scale_column=None,
        terms=("abs_err", "abs_y"),
        definition="sum of absolute errors divided by the sum of absolute actuals over the horizon; lower is better",
        block=_ratio_of_sums,
        step_loss=lambda s: s.term["abs_err"],
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
        definition="mean error divided by the in-sample seasonal-naive MAE; positive = over-forecast, 0 is best",
        block=lambda b: b.mean["err"] / b.scale["scale_mae"],
        step=lambda s: s.term["err"] / s.scale["scale_mae"],
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
    ),
    *_interval("80"),
    *_interval("95"),
)

METRICS: dict[str, MetricSpec] = {s.name: s for s in _SPECS}
"""Metric name -> :class:`MetricSpec`, in display order."""


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
                "smape, ape, crps, is80/95, cov80/95, width80/95"
            )
    return out


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
    """Plain records of every metric (name, display name, kind, direction, scale, definition) for pages."""
    return [
        {
            "name": s.name,
            "display_name": s.display_name,
            "kind": s.kind,
            "lower_is_better": s.lower_is_better,
            "ranked": s.ranked,
            "scale_column": s.scale_column,
            "definition": s.definition,
        }
        for s in METRICS.values()
    ]
