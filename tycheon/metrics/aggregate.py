"""Per-block scores from a score-set table, the one scaling path for every forecast.

A *block* is one (model, unit, series_id, origin): the H steps of one forecast. :func:`block_scores`
turns the long score-set table (:mod:`tycheon.backtest.scoreset`) into one row per block with every
leaderboard metric, vectorised with ``groupby``. :func:`summarize` aggregates blocks by mean and median,
:func:`step_scores` gives per-step means and medians.

One scaling path. Scaled metrics read their denominator only through :func:`scale_column`, which maps
each metric to the score-set column it must use (MASE, scaled bias and MSIS: ``scale_mae``; RMSSE:
``scale_rmse``). No public function here accepts a denominator, so a combination (an ensemble or a
selection rule stored as rows of its own model) is scaled exactly like the single methods. Before
scoring, :func:`check_scale_consistency` refuses a table in which the rows of one (unit, series, origin)
carry different scales, which is what scoring a blend with the wrong denominator looks like in the
record (evaluation-choices paper, section 11).

Zero-scale rule: a block whose scale is zero or NaN has NaN scaled metrics and ``zero_scale=True``;
:func:`summarize` drops it from scaled means/medians and reports ``n_zero_scale``. Never ``inf``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from tycheon.backtest.scoreset import quantile_column
from tycheon.metrics.errors import CRPSKindMismatchError, MetricInputError, ScaleMismatchError
from tycheon.metrics._kernels import crps_ensemble_kernel, crps_quantile_kernel, interval_score_kernel, smape_ratio
from tycheon.metrics.probabilistic import CRPSKind, CRPSResult

__all__ = [
    "BLOCK_KEYS",
    "DEFAULT_METRICS",
    "SCALE_COLUMNS",
    "block_scores",
    "check_scale_consistency",
    "row_crps",
    "scale_column",
    "step_scores",
    "summarize",
]

BLOCK_KEYS = ("model", "unit", "series_id", "origin")
SCALE_KEYS = ("unit", "series_id", "origin")

SCALE_COLUMNS: dict[str, str] = {
    "mase": "scale_mae",
    "scaled_bias": "scale_mae",
    "msis80": "scale_mae",
    "msis95": "scale_mae",
    "rmsse": "scale_rmse",
}
"""The score-set scale column each scaled metric divides by; nothing else chooses a denominator."""

DEFAULT_METRICS = (
    "mae", "rmse", "mase", "rmsse", "wape", "smape", "mape", "bias", "scaled_bias",
    "crps", "msis80", "msis95", "coverage80", "coverage95", "width80", "width95",
)  # fmt: skip

_REQUIRED = ("model", "unit", "series_id", "origin", "step", "actual", "point", "scale_mae", "scale_rmse")


def scale_column(metric: str) -> str:
    """The score-set column that ``metric`` is scaled by; :class:`MetricInputError` for unscaled ones."""
    try:
        return SCALE_COLUMNS[metric]
    except KeyError as err:
        raise MetricInputError(f"{metric!r} is not a scaled metric; scaled ones are {sorted(SCALE_COLUMNS)}") from err


def check_scale_consistency(table: pd.DataFrame) -> None:
    r"""Refuse a table whose rows of one (unit, series_id, origin) carry more than one scale.

    .. math:: s^{(m)}_{b} = s_{b} \quad \text{for every model } m \text{ and step of block } b

    Every model scored on a block, single method or combination, must be divided by the same in-sample
    seasonal-naive scales; a second value means one of them was scaled apart.

    References
    ----------
    Evaluation-choices paper, section 11.
    """
    for col in ("scale_mae", "scale_rmse"):
        filled = table[col].fillna(-1.0)  # NaN scales must agree too
        g = filled.groupby([table[k] for k in SCALE_KEYS], sort=False)
        spread = g.max() - g.min()
        bad = spread[spread != 0]
        if len(bad):
            raise ScaleMismatchError(
                f"{len(bad)} block(s) carry more than one {col} across models/steps, first "
                f"{dict(zip(SCALE_KEYS, bad.index[0]))}: every model of a block, a combination included, "
                "must be scaled by the same in-sample scales recorded by the engine"
            )


def _check_table(table: pd.DataFrame, metrics: Sequence[str]) -> None:
    missing = [c for c in _REQUIRED if c not in table.columns]
    if missing:
        raise MetricInputError(f"score-set table lacks column(s) {missing}")
    unknown = sorted(set(metrics) - set(DEFAULT_METRICS))
    if unknown:
        raise MetricInputError(f"unknown metric(s) {unknown}; available: {list(DEFAULT_METRICS)}")
    for col in ("actual", "point"):
        bad = ~np.isfinite(table[col].to_numpy(dtype=np.float64))
        if bad.any():
            row = table.loc[bad].iloc[0]
            raise MetricInputError(
                f"{int(bad.sum())} row(s) have a non-finite {col!r}, first model={row['model']!r} "
                f"series={row['series_id']!r} origin={row['origin']}; drop unsupported rows before scoring"
            )


def row_crps(
    table: pd.DataFrame,
    *,
    quantile_levels: Sequence[float] = (),
    samples: np.ndarray | None = None,
    crps_kind: CRPSKind | None = None,
) -> CRPSResult:
    r"""CRPS of every score-set row, of one kind, NaN where the row lacks that kind of forecast.

    .. math::

        \mathrm{CRPS}_{\mathrm{exact}} = \frac1m\sum_i |X_i - y| - \frac{1}{2m(m-1)}\sum_{i,j}|X_i - X_j|,
        \qquad
        \mathrm{CRPS}_{\mathrm{approx}} = 2\sum_{k=1}^{K-1}\frac{\tau_{k+1}-\tau_k}{2}
            \left[\rho_{\tau_k}(y, q_k) + \rho_{\tau_{k+1}}(y, q_{k+1})\right]

    as in :func:`~tycheon.metrics.probabilistic.crps_ensemble` (fair) and
    :func:`~tycheon.metrics.probabilistic.crps_quantiles`. This is the one place where a CRPS kind is
    chosen and checked: ``crps_kind`` must be ``"exact_samples"`` or ``"approx_quantiles"``; ``None``
    means exact if ``samples`` is given, else approximate. Anything else is refused, never computed as
    another kind under its label (ADR-0006 decision 7).

    Parameters
    ----------
    table : DataFrame
        Score-set rows with ``actual`` and, for the approximate kind, the ``q<level>`` columns.
    quantile_levels : sequence of float
        Levels of the ``q<level>`` columns (at least two) for the approximate kind.
    samples : ndarray, shape (row, n), optional
        Sample paths aligned with the rows, for the exact kind.
    crps_kind : {"exact_samples", "approx_quantiles"}, optional

    Returns
    -------
    CRPSResult
        ``values [row]`` (NaN where not scored) and the ``kind`` used.

    References
    ----------
    Gneiting & Raftery (2007), eq. (20); Ferro (2014), eq. (6); Laio & Tamea (2007), eq. (7);
    ADR-0006 decision 7.
    """
    kind = crps_kind or ("exact_samples" if samples is not None else "approx_quantiles")
    if kind not in ("exact_samples", "approx_quantiles"):
        raise MetricInputError(f"crps_kind must be 'exact_samples' or 'approx_quantiles'; got {kind!r}")
    if "actual" not in table.columns:
        raise MetricInputError("score-set table lacks column 'actual'")
    y = table["actual"].to_numpy(dtype=np.float64)
    out = np.full(len(table), np.nan)
    if kind == "exact_samples":
        if samples is None or len(samples) != len(table):
            raise MetricInputError("exact CRPS needs samples[row, n] aligned with the table rows")
        ok = np.isfinite(samples).all(axis=1) & (samples.shape[1] >= 2)
        if ok.any():
            out[ok] = crps_ensemble_kernel(y[ok], samples[ok], fair=True)
        return CRPSResult(out, kind, True)
    lv = np.asarray(sorted(quantile_levels), dtype=np.float64)
    if lv.size < 2:
        raise MetricInputError("approximate CRPS needs at least two quantile levels")
    cols = [quantile_column(q) for q in lv]
    missing = [c for c in cols if c not in table.columns]
    if missing:
        raise MetricInputError(f"table lacks quantile column(s) {missing}")
    q = table[cols].to_numpy(dtype=np.float64)  # [row, level]
    ok = np.isfinite(q).all(axis=1)
    if ok.any():
        out[ok] = crps_quantile_kernel(y[ok], q[ok], lv)
    return CRPSResult(out, kind)


def block_scores(
    table: pd.DataFrame,
    *,
    metrics: Sequence[str] = DEFAULT_METRICS,
    quantile_levels: Sequence[float] = (),
    samples: np.ndarray | None = None,
    crps_kind: CRPSKind | None = None,
) -> pd.DataFrame:
    r"""One row per (model, unit, series_id, origin) block with the requested metrics.

    With :math:`e_h = \hat y_h - y_h` over the block's steps and its scales :math:`s_{\mathrm{MAE}},
    s_{\mathrm{RMSE}}` (recorded per series and origin by the engine):

    .. math::

        \mathrm{MASE} = \frac{\overline{|e|}}{s_{\mathrm{MAE}}},\quad
        \mathrm{RMSSE} = \frac{\sqrt{\overline{e^2}}}{s_{\mathrm{RMSE}}},\quad
        \mathrm{WAPE} = \frac{\sum|e_h|}{\sum|y_h|},\quad
        \mathrm{MSIS}_\alpha = \frac{\overline{\mathrm{IS}_\alpha}}{s_{\mathrm{MAE}}}

    and sMAPE, MAPE, bias, scaled bias, CRPS, coverage and width as in :mod:`tycheon.metrics.point`,
    :mod:`~tycheon.metrics.probabilistic` and :mod:`~tycheon.metrics.intervals`. MSIS, coverage and width
    score the conformal bands ``lo80/hi80`` and ``lo95/hi95`` (NaN where a block has no band).

    Parameters
    ----------
    table : DataFrame
        Score-set table (``ScoreSet.table``).
    metrics : sequence of str
        Subset of :data:`DEFAULT_METRICS`.
    quantile_levels : sequence of float
        Levels of the ``q<level>`` columns, for the approximate CRPS.
    samples : ndarray, shape (row, n), optional
        Sample paths aligned with the rows, for the exact CRPS.
    crps_kind : {"exact_samples", "approx_quantiles"}, optional
        One kind per call, never mixed (ADR-0006 decision 7), chosen and checked by :func:`row_crps`.
        Default: exact if ``samples`` is given, else approximate. Rows without that kind of forecast
        give a block CRPS of NaN.

    Returns
    -------
    DataFrame
        Keys, ``n_steps``, ``demand_class``/``season_length``/``weight`` when present, the metrics,
        ``zero_scale`` (bool), ``mape_defined`` (bool) and ``crps_kind`` when CRPS is asked for.

    References
    ----------
    Hyndman & Koehler (2006); Makridakis et al. (2020, M4; 2022, M5); Gneiting & Raftery (2007);
    evaluation-choices paper, sections 3, 6 and 11.
    """
    metrics = tuple(metrics)
    _check_table(table, metrics)
    check_scale_consistency(table)
    y = table["actual"].to_numpy(dtype=np.float64)
    f = table["point"].to_numpy(dtype=np.float64)
    e = f - y
    rows: dict[str, np.ndarray] = {
        "abs_err": np.abs(e),
        "sq_err": e * e,
        "err": e,
        "abs_y": np.abs(y),
        "zero_y": (y == 0).astype(np.float64),
    }
    rows["smape"] = smape_ratio(y, f)
    with np.errstate(divide="ignore", invalid="ignore"):
        rows["ape"] = np.where(y != 0, np.abs(e) / np.abs(y), np.nan)
    if "crps" in metrics:
        crps = row_crps(table, quantile_levels=quantile_levels, samples=samples, crps_kind=crps_kind)
        rows["crps"] = crps.values
    for level, alpha in (("80", 0.2), ("95", 0.05)):
        lo_c, hi_c = f"lo{level}", f"hi{level}"
        if lo_c in table.columns and hi_c in table.columns:
            lo = table[lo_c].to_numpy(dtype=np.float64)
            hi = table[hi_c].to_numpy(dtype=np.float64)
            rows[f"is{level}"] = interval_score_kernel(y, lo, hi, alpha)  # NaN where no band
            rows[f"cov{level}"] = np.where(np.isfinite(lo) & np.isfinite(hi), (lo <= y) & (y <= hi), np.nan)
            rows[f"width{level}"] = hi - lo
    frame = pd.DataFrame(rows)
    keys = [table[k].to_numpy() for k in BLOCK_KEYS]
    g = frame.groupby(keys, sort=False)
    mean = g.mean()
    total = g[["abs_err", "abs_y", "zero_y"]].sum()
    n_steps = g.size()
    # a probabilistic score on only some steps of a block is not that block's score: NaN, never partial
    partial = [c for c in mean.columns if c.startswith(("crps", "is", "cov", "width"))]
    if partial:
        counts = g[partial].count()
        mean[partial] = mean[partial].where(counts.to_numpy() == n_steps.to_numpy()[:, None])
    first = table.groupby(keys, sort=False)[
        [c for c in ("scale_mae", "scale_rmse", "demand_class", "season_length", "weight") if c in table.columns]
    ].first()
    first.index = mean.index
    out = pd.DataFrame(index=mean.index)
    out.index.names = list(BLOCK_KEYS)
    out["n_steps"] = n_steps.to_numpy()
    for c in ("demand_class", "season_length", "weight"):
        if c in first.columns:
            out[c] = first[c].to_numpy()
    s_mae = first["scale_mae"].to_numpy(dtype=np.float64)
    s_rmse = first["scale_rmse"].to_numpy(dtype=np.float64)
    zero = ~(s_mae > 0) | ~(s_rmse > 0)
    out["zero_scale"] = zero
    s_mae = np.where(s_mae > 0, s_mae, np.nan)
    s_rmse = np.where(s_rmse > 0, s_rmse, np.nan)
    scales = {"scale_mae": s_mae, "scale_rmse": s_rmse}
    mae_b = mean["abs_err"].to_numpy()
    rmse_b = np.sqrt(mean["sq_err"].to_numpy())
    bias_b = mean["err"].to_numpy()
    values = {
        "mae": mae_b,
        "rmse": rmse_b,
        "mase": mae_b / scales[scale_column("mase")],
        "rmsse": rmse_b / scales[scale_column("rmsse")],
        "wape": np.where(total["abs_y"] > 0, total["abs_err"] / total["abs_y"].where(total["abs_y"] > 0), np.nan),
        "smape": mean["smape"].to_numpy(),
        "mape": np.where(total["zero_y"].to_numpy() == 0, mean["ape"].to_numpy(), np.nan),
        "bias": bias_b,
        "scaled_bias": bias_b / scales[scale_column("scaled_bias")],
    }
    if "crps" in metrics:
        values["crps"] = mean["crps"].to_numpy()
    for level in ("80", "95"):
        if f"is{level}" in mean.columns:
            values[f"msis{level}"] = mean[f"is{level}"].to_numpy() / scales[scale_column(f"msis{level}")]
            values[f"coverage{level}"] = mean[f"cov{level}"].to_numpy()
            values[f"width{level}"] = mean[f"width{level}"].to_numpy()
    for m in metrics:
        if m not in values:
            raise MetricInputError(f"metric {m!r} needs columns the table lacks (lo/hi bands)")
        out[m] = values[m]
    if "mape" in metrics:
        out["mape_defined"] = total["zero_y"].to_numpy() == 0
    if "crps" in metrics:
        out["crps_kind"] = np.where(np.isfinite(values["crps"]), crps.kind, None)
    return out.reset_index()


def summarize(
    blocks: pd.DataFrame, *, metrics: Sequence[str], by: Sequence[str] = ("model", "unit")
) -> pd.DataFrame:
    r"""Mean and median of block metrics per group, with block counts.

    .. math:: \overline{M} = \frac{1}{|B|}\sum_{b \in B} M_b, \qquad \tilde M = \operatorname{median}_{b\in B} M_b

    over the blocks :math:`B` of a group that have the metric (zero-scale blocks are left out of
    scaled metrics and counted in ``n_zero_scale``; blocks without a band or CRPS are left out of those).
    CRPS of two kinds in one call is refused.

    References
    ----------
    Evaluation-choices paper, section 3 (mean and median RMSSE columns of Table 2).
    """
    by = list(by)
    missing = [c for c in (*by, *metrics) if c not in blocks.columns]
    if missing:
        raise MetricInputError(f"block table lacks column(s) {missing}")
    if "crps" in metrics and "crps_kind" in blocks.columns:
        kinds = sorted(set(blocks["crps_kind"].dropna()))
        if len(kinds) > 1:
            raise CRPSKindMismatchError(f"block table mixes CRPS kinds {kinds} (ADR-0006 decision 7)")
    g = blocks.groupby(by, sort=True)
    parts = [g.size().rename("n_blocks")]
    if "zero_scale" in blocks.columns:
        parts.append(g["zero_scale"].sum().astype(np.int64).rename("n_zero_scale"))
    for m in metrics:
        parts.append(g[m].mean().rename(f"{m}_mean"))
        parts.append(g[m].median().rename(f"{m}_median"))
    return pd.concat(parts, axis=1).reset_index()


def step_scores(table: pd.DataFrame, *, by: Sequence[str] = ("model", "unit")) -> pd.DataFrame:
    r"""Per-step scaled errors, mean and median over blocks, per group and step.

    .. math:: \mathrm{MASE}_h = \frac{|e_h|}{s_{\mathrm{MAE}}}, \qquad \mathrm{RMSSE}_h = \frac{|e_h|}{s_{\mathrm{RMSE}}}

    averaged over the blocks with a non-zero scale (``n_zero_scale`` counts the others).

    References
    ----------
    Hyndman & Koehler (2006); evaluation-choices paper, section 3.
    """
    _check_table(table, ())
    check_scale_consistency(table)
    ae = np.abs(table["point"].to_numpy(dtype=np.float64) - table["actual"].to_numpy(dtype=np.float64))
    s_mae = table[scale_column("mase")].to_numpy(dtype=np.float64)
    s_rmse = table[scale_column("rmsse")].to_numpy(dtype=np.float64)
    zero = ~(s_mae > 0) | ~(s_rmse > 0)
    frame = table[list(by) + ["step"]].copy()
    frame["mase"] = np.where(zero, np.nan, ae / np.where(zero, 1.0, s_mae))
    frame["rmsse"] = np.where(zero, np.nan, ae / np.where(zero, 1.0, s_rmse))
    frame["zero_scale"] = zero
    g = frame.groupby(list(by) + ["step"], sort=True)
    out = pd.concat(
        [
            g.size().rename("n_blocks"),
            g["zero_scale"].sum().astype(np.int64).rename("n_zero_scale"),
            g["mase"].mean().rename("mase_mean"),
            g["mase"].median().rename("mase_median"),
            g["rmsse"].mean().rename("rmsse_mean"),
            g["rmsse"].median().rename("rmsse_median"),
        ],
        axis=1,
    )
    return out.reset_index()
