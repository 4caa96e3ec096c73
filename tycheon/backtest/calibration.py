"""Conformal bands from scaled residuals pooled within a cell, calibrated on unscored origins too.

Score (WP26 section 3.6, asymmetric scaled residual). For a forecast row with point forecast :math:`c`,
actual :math:`y` and base half-widths :math:`\\ell, u > 0`,

.. math::

    s = \\max\\left\\{\\frac{c - y}{\\ell},\\ \\frac{y - c}{u}\\right\\}.

The engine sets :math:`\\ell = u =` the row's in-sample seasonal-naive MAE scale (``scale_mae``, from the
origin's published training window), so :math:`s = |y - c| / \\ell`: the absolute error in units of the
series' own naive error, comparable across series of very different size.

Band. The calibration set of a scored row at origin :math:`o` in cell :math:`g` is every residual of
:math:`g` (calibration origins and scored origins alike) whose actual was published by :math:`o`
(``available_at <= o``). With :math:`n` such residuals and coverage :math:`1 - \\alpha`,

.. math::

    k = s_{(r)}, \\quad r = \\lceil (n + 1)(1 - \\alpha) \\rceil, \\qquad
    [c - k\\,\\ell,\\ c + k\\,u],

:math:`s_{(r)}` being the r-th smallest score. No band (NaN) when :math:`r > n`, when :math:`n` is below
``min_origins``, or when the row's own :math:`\\ell` or :math:`u` is zero or not finite; residuals whose
score is not finite (no scale, no actual) are not in any calibration set.

Cell and what pooling does to coverage. The cell is ``(model, unit, step)``: residuals are pooled across
the unit's series. If the scaled residuals of a cell are exchangeable across series and origins, the band
covers with probability at least :math:`1 - \\alpha` *marginally*, i.e. averaged over the series and
origins of the cell (Vovk et al. 2005; Lei et al. 2018, Theorem 2.1). Pooling gives no guarantee per
series or per demand class (conditional coverage): series whose scaled errors run larger than the cell's
typical are under-covered and the others over-covered, so coverage per demand class must be reported, not
assumed (``python -m benchmarks.perf.calibration`` measures it; on the small benchmark's synthetic panel
the 80% band covered smooth series less and lumpy and erratic series more than nominal). Per-(series, step)
calibration (:mod:`.conformal`) targets coverage per series but needs 19 earlier errors of that series for
a 95% band; pooling trades that conditional target for bands from the first scored origin.

Calibration origins (:func:`tycheon.backtest.protocol.calibration_plan`) are unscored origins before the
first scored one, forecast through the same engine (same guards and embargo); only their residuals are
used, never their rows.

References
----------
Vovk, V., Gammerman, A. and Shafer, G. (2005). Algorithmic Learning in a Random World. Springer.
Lei, J., G'Sell, M., Rinaldo, A., Tibshirani, R. J. and Wasserman, L. (2018). Distribution-free
predictive inference for regression. JASA 113(523), 1094-1111.
WP26 evaluation protocol, section 3.6 (conformal rescaling with an asymmetric scaled-residual score).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from tycheon._typing import BoolArray, FloatArray, IntArray
from tycheon.backtest.conformal import BAND_LEVELS, check_levels, conformal_rank
from tycheon.backtest.protocol import (
    CalibrationPlan,
    RollingOrigin,
    StaticSplit,
    calibration_plan,
)
from tycheon.backtest.scoreset import ScoreSet
from tycheon.data.panel import Panel

__all__ = ["METHOD", "PooledBands", "calibrated_run", "calibration_min_history", "pooled_bands", "scaled_residual"]

METHOD = "pooled scaled residuals, WP26 3.6"
CELL = ("model", "unit", "step")


@dataclass(frozen=True)
class PooledBands:
    """Bands of the target rows of :func:`pooled_bands`.

    Attributes
    ----------
    lower, upper : ndarray, shape (len(levels), n_targets)
        Band ends per level (NaN where no band).
    n_calibration : ndarray of int, shape (n_targets,)
        Residuals in each target row's calibration set.
    """

    lower: FloatArray
    upper: FloatArray
    n_calibration: IntArray


def scaled_residual(*, point: FloatArray, actual: FloatArray, lower: FloatArray, upper: FloatArray) -> FloatArray:
    """``max((c - y) / l, (y - c) / u)`` (WP26 section 3.6); NaN where ``l`` or ``u`` is not positive or
    anything is missing."""
    c, y = np.asarray(point, dtype=np.float64), np.asarray(actual, dtype=np.float64)
    lo, up = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
    ok = (lo > 0) & (up > 0) & np.isfinite(lo) & np.isfinite(up)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.maximum((c - y) / lo, (y - c) / up)
    return np.where(ok & np.isfinite(s), s, np.nan)


def pooled_bands(
    *,
    cell: IntArray,
    origin: np.ndarray,
    available_at: np.ndarray,
    point: FloatArray,
    actual: FloatArray,
    lower: FloatArray,
    upper: FloatArray,
    target: BoolArray,
    levels_percent: tuple[int, ...] = BAND_LEVELS,
    min_origins: int = 0,
) -> PooledBands:
    """Conformal bands of the ``target`` rows from the scaled residuals of every row of their cell.

    Parameters
    ----------
    cell : ndarray of int, shape (n,)
        Calibration cell of each row (the engine: one code per (model, unit, step)).
    origin, available_at : ndarray of datetime64[ns], shape (n,)
        The row's origin and the publication time of its actual.
    point, actual : ndarray, shape (n,)
    lower, upper : ndarray, shape (n,)
        Base half-widths :math:`\\ell, u` of each row (the engine: ``scale_mae`` for both).
    target : ndarray of bool, shape (n,)
        The rows that get a band (the scored rows); every row with a finite score calibrates.
    levels_percent : tuple of int
        Coverages in percent.
    min_origins : int
        Fewest residuals required on top of the rank condition.

    Returns
    -------
    PooledBands
        For the target rows, in their order.

    Notes
    -----
    A row's band factor depends on its cell and origin only (and the level), so it is found once per
    (cell, target origin), not per row: the rows are grouped by cell (one stable radix sort of the cell
    codes), each cell's finite scores are put in publication order, the count :math:`n` published by each
    target origin is one ``searchsorted``, and :math:`s_{(r)}` is the r-th smallest of those :math:`n`
    (``np.partition``: the same value a full sort gives, ties included). The rows then gather their
    factor. The loop runs over the cells holding a target row times the distinct target origins, which
    the engine keeps few (cells are (model, unit kind, step), origins a protocol's): at M5 size (30
    cells, 8 origins and 2 million residuals) one model's bands (:func:`attach_pooled_bands`) are faster
    this way than with one sort of the whole pool by (cell, score) and a cumulative count per origin,
    warm and cold (timings: benchmarks/perf/MEASUREMENTS.md).
    """
    check_levels(tuple(levels_percent))
    cell = np.asarray(cell, dtype=np.int64)
    target = np.asarray(target, dtype=bool)
    n_rows = len(cell)
    for name, arr in (
        ("origin", origin),
        ("available_at", available_at),
        ("point", point),
        ("actual", actual),
        ("lower", lower),
        ("upper", upper),
        ("target", target),
    ):
        if len(arr) != n_rows:
            raise ValueError(f"pooled_bands: {name} has {len(arr)} rows, cell has {n_rows}")
    c = np.asarray(point, dtype=np.float64)
    lo_w, up_w = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
    rows = np.flatnonzero(target)
    n_levels = len(levels_percent)
    out_lo = np.full((n_levels, len(rows)), np.nan)
    out_hi = np.full((n_levels, len(rows)), np.nan)
    if len(rows) == 0:
        return PooledBands(out_lo, out_hi, np.zeros(0, dtype=np.int64))
    score = scaled_residual(point=c, actual=actual, lower=lo_w, upper=up_w)
    pub_ns = np.asarray(available_at, dtype="datetime64[ns]").astype(np.int64)
    row_origin = np.asarray(origin, dtype="datetime64[ns]").astype(np.int64)[rows]
    stamps, row_stamp = np.unique(row_origin, return_inverse=True)  # the target origins (few)
    group, starts, by_group = _cell_groups(cell)
    # [group, stamp]: residuals of the cell published by the stamp, and the band factor per level
    n_table = np.zeros((len(starts) - 1, len(stamps)), dtype=np.int64)
    factor = np.full((n_levels, len(starts) - 1, len(stamps)), np.nan)
    for g in np.unique(group[rows]):  # only the cells that hold a target row
        members = by_group[starts[g] : starts[g + 1]]
        s = score[members]
        finite = np.isfinite(s)
        s, published = s[finite], pub_ns[members][finite]
        by_time = np.argsort(published, kind="stable")
        s, published = s[by_time], published[by_time]
        n_table[g] = np.searchsorted(published, stamps, side="right")  # s[:n] are published by the stamp
        for k, n in enumerate(n_table[g].tolist()):
            ranks = [(lv, int(conformal_rank(np.asarray(n), int(level)))) for lv, level in enumerate(levels_percent)]
            ranks = [(lv, r) for lv, r in ranks if r <= n and n >= int(min_origins)]
            if ranks:
                kth = np.partition(s[:n], sorted({r - 1 for _, r in ranks}))
                for lv, r in ranks:
                    factor[lv, g, k] = kth[r - 1]  # the r-th smallest published score of the cell
    row_group = group[rows]
    n_cal = n_table[row_group, row_stamp]
    width_ok = (lo_w[rows] > 0) & (up_w[rows] > 0) & np.isfinite(lo_w[rows]) & np.isfinite(up_w[rows])
    for lv in range(n_levels):
        f = factor[lv, row_group, row_stamp]
        ok = width_ok & ~np.isnan(f)
        i = rows[ok]
        out_lo[lv, ok] = c[i] - f[ok] * lo_w[i]
        out_hi[lv, ok] = c[i] + f[ok] * up_w[i]
    return PooledBands(out_lo, out_hi, n_cal)


def _cell_groups(cell: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """``(group, starts, by_group)``: each row's group (its cell's rank among the distinct cells), and the
    rows of group ``g`` in input order as ``by_group[starts[g]:starts[g + 1]]``. Cell codes spanning
    fewer than 65,536 values are grouped by one stable radix sort of their offsets (no sort of the
    codes themselves)."""
    if not len(cell):
        return cell, np.zeros(1, dtype=np.int64), cell
    lo, hi = int(cell.min()), int(cell.max())
    if hi - lo < 1 << 16:
        offset = (cell - lo).astype(np.min_scalar_type(hi - lo), copy=False)
        counts = np.bincount(offset, minlength=hi - lo + 1)
        present = counts > 0
        rank = np.cumsum(present) - 1  # [offset] -> group
        group = rank[offset]
        counts = counts[present]
        by_group = np.argsort(offset, kind="stable")  # radix sort for 8- and 16-bit integers
    else:
        _, group, counts = np.unique(cell, return_inverse=True, return_counts=True)
        by_group = np.argsort(group, kind="stable")
    starts = np.concatenate(([0], np.cumsum(counts)))
    return group, starts, by_group


def calibration_min_history(min_history: int, season_length: int) -> int:
    """History a calibration origin's series needs: ``min(min_history, season_length + 1)``.

    ``min_history`` decides which series are *scored*; a calibration residual only needs its scale, and
    the seasonal-naive scale of the scored rows needs ``season_length + 1`` observations (with fewer, the
    scale falls back to lag 1, a different kind of scale; :mod:`tycheon.metrics.scale`). Lowering the
    requirement to that keeps every calibration scale of the same kind while letting more of the early
    origins calibrate. It never exceeds the run's own ``min_history``.
    """
    return int(min(int(min_history), int(season_length) + 1))


def _cells(frames: list[pd.DataFrame]) -> IntArray:
    """One integer per row of ``frames`` (laid end to end) that is equal exactly where the rows' :data:`CELL`
    values are: the mixed radix of each column's codes (a categorical's codes over the frames' joined
    categories, otherwise ``pd.factorize``), shifted so that a missing value has a code of its own."""
    from pandas.api.types import union_categoricals

    cell = np.zeros(sum(len(f) for f in frames), dtype=np.int64)
    for name in CELL:
        columns = [f[name] for f in frames]
        if all(isinstance(col.dtype, pd.CategoricalDtype) for col in columns):
            joined = union_categoricals([col.array for col in columns])
            codes, n = np.asarray(joined.codes, dtype=np.int64), len(joined.categories)
        else:
            codes, uniques = pd.factorize(np.concatenate([col.to_numpy() for col in columns]))
            codes, n = codes.astype(np.int64, copy=False), len(uniques)
        cell = cell * (n + 1) + (codes + 1)  # codes are -1 for a missing value
    return cell


def _column(frames: list[pd.DataFrame], name: str) -> np.ndarray:
    return np.concatenate([f[name].to_numpy() for f in frames])


def attach_pooled_bands(
    scores: ScoreSet,
    calibration: ScoreSet | None,
    *,
    min_origins: int = 0,
) -> dict[str, Any]:
    """Replace ``scores``' band columns (in place) by pooled scaled-residual bands; returns the counts.

    The calibration rows (``calibration.table``) only calibrate; they are not added to ``scores``.
    """
    table = scores.table
    frames = [table] if calibration is None or calibration.table.empty else [table, calibration.table]
    target = np.zeros(sum(len(f) for f in frames), dtype=bool)
    target[: len(table)] = True
    scale = _column(frames, "scale_mae").astype(np.float64)
    bands = pooled_bands(
        cell=_cells(frames),
        origin=_column(frames, "origin"),
        available_at=_column(frames, "available_at"),
        point=_column(frames, "point"),
        actual=_column(frames, "actual"),
        lower=scale,
        upper=scale,
        target=target,
        levels_percent=BAND_LEVELS,
        min_origins=min_origins,
    )
    counts: dict[str, Any] = {"rows_with_band": {}, "rows_without_band": {}}
    for lv, level in enumerate(BAND_LEVELS):
        table[f"lo{level}"] = bands.lower[lv]
        table[f"hi{level}"] = bands.upper[lv]
        has = int(np.count_nonzero(np.isfinite(bands.lower[lv])))
        counts["rows_with_band"][str(level)] = has
        counts["rows_without_band"][str(level)] = len(table) - has
    table["has_band"] = np.isfinite(table[f"lo{BAND_LEVELS[0]}"].to_numpy())
    return counts


def _dates(panel: Panel, cols: tuple[int, ...]) -> list[str]:
    return [str(panel.periods[c].date()) for c in cols if 0 <= c < len(panel.periods)]


def calibrated_run(
    run: Callable[..., ScoreSet],
    panel: Panel,
    protocol: RollingOrigin | StaticSplit,
    factories: Mapping[str, Any],
    **options: Any,
) -> ScoreSet:
    """The engine's run with ``protocol.n_calibration_origins > 0``: scored origins plus calibration origins.

    ``run`` is :func:`tycheon.backtest.engine.run` (passed in so this module does not import the engine).
    The scored origins run as they would without calibration; the calibration origins
    (:func:`~tycheon.backtest.protocol.calibration_plan`, history
    :func:`calibration_min_history`) run through the same ``run`` (same guards, embargo, units, factories
    and seed; no quantiles or samples, which the bands do not use). The scored rows' bands are then
    replaced by :func:`pooled_bands` over both, and ``meta["conformal"]`` says how.
    """
    min_history = int(options.get("min_history", 1))
    band_min_origins = int(options.get("band_min_origins", 0))
    scores = run(panel, dataclasses.replace(protocol, n_calibration_origins=0), factories, **options)
    cal_min = calibration_min_history(min_history, panel.season_length)
    plan: CalibrationPlan = calibration_plan(protocol, panel, min_history=min_history, calibration_min_history=cal_min)
    calibration = None
    if plan.protocol is not None:
        cal_options = {**options, "quantile_levels": (), "n_samples": 0, "min_history": cal_min, "progress": False}
        calibration = run(panel, plan.protocol, factories, **cal_options)
    counts = attach_pooled_bands(scores, calibration, min_origins=band_min_origins)
    meta = scores.meta
    meta["protocol"] = protocol.describe()
    meta["conformal"] = {
        "method": METHOD,
        "cell": list(CELL),
        "score": "|actual - point| / scale_mae (l = u = scale_mae)",
        "n_calibration_origins": int(protocol.n_calibration_origins),
        "calibration_min_history": cal_min,
        "calibration_origins": _dates(panel, plan.used),
        "calibration_origins_skipped": len(plan.skipped),
        "calibration_rows": 0 if calibration is None else len(calibration.table),
        "calibration_models": {} if calibration is None else calibration.meta["models"],
        "calibration_guard_checks": {} if calibration is None else calibration.meta["guard_checks"],
        "min_origins": band_min_origins,
        **counts,
    }
    return scores
