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

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from tycheon._frames import row_slice, row_spans, take_rows
from tycheon.contract import quantile_column
from tycheon.errors import CRPSKindMismatchError, MetricInputError, ScaleMismatchError
from tycheon.metrics._kernels import crps_ensemble_kernel
from tycheon.metrics.probabilistic import CRPSKind, CRPSResult
from tycheon.metrics.registry import (
    BAND_GRID,
    BAND_GRID_80,
    GRID_TERMS,
    METRICS,
    BlockTerms,
    StepTerms,
    get_metric,
    term_values,
)

__all__ = [
    "BAND_GRIDS",
    "BLOCK_KEYS",
    "DEFAULT_METRICS",
    "SCALE_COLUMNS",
    "STEP_LOSS_CHUNK",
    "block_scores",
    "block_scores_by_model",
    "check_scale_consistency",
    "column_values",
    "group_codes",
    "row_crps",
    "row_scales",
    "scale_column",
    "step_loss",
    "step_terms",
    "step_scores",
    "summarize",
]

BLOCK_KEYS = ("model", "unit", "series_id", "origin")
SCALE_KEYS = ("unit", "series_id", "origin")

SCALE_COLUMNS: dict[str, str] = {n: m.scale_column for n, m in METRICS.items() if m.scale_column}
"""The score-set scale column each scaled metric divides by (read from the metric registry)."""

DEFAULT_METRICS = tuple(METRICS)
"""Every registered metric (:data:`tycheon.metrics.registry.METRICS`), in registry order."""

STEP_LOSS_CHUNK = 1 << 20
"""Rows :func:`step_loss` evaluates at a time (its result does not depend on it)."""

_BAND_TERMS = ("is", "cov", "width")
BAND_GRIDS: dict[int, tuple[tuple[float, ...], tuple[str, ...]]] = {95: BAND_GRID, 80: BAND_GRID_80}
"""Band level -> (quantile levels, score-set columns) of the band-quantile CRPS grid."""
_REQUIRED = ("model", "unit", "series_id", "origin", "step", "actual", "point", "scale_mae", "scale_rmse")


def scale_column(metric: str) -> str:
    """The score-set column that ``metric`` is scaled by; :class:`MetricInputError` for unscaled ones."""
    col = get_metric(metric).scale_column
    if col is None:
        raise MetricInputError(f"{metric!r} is not a scaled metric; scaled ones are {sorted(SCALE_COLUMNS)}")
    return col


def group_codes(table: pd.DataFrame, keys: Sequence[str]) -> np.ndarray | None:
    """``[row]`` int64 code of each row's group of ``keys``, numbered in order of first appearance (the
    group order of ``groupby(keys, sort=False)``); None where a key has a missing value (such rows would
    be dropped by a ``groupby``, which the caller then runs itself).

    Categorical keys are read by their codes and other keys factorised once, so no text column is turned
    into Python objects; the codes are combined one key at a time and re-numbered after each, so the
    combined number stays below the number of rows."""
    out: np.ndarray | None = None
    for k in keys:
        col = table[k]
        if isinstance(col.dtype, pd.CategoricalDtype):
            codes, n = col.cat.codes.to_numpy().astype(np.int64), len(col.cat.categories)
        else:
            codes, uniques = pd.factorize(col.to_numpy())
            codes, n = codes.astype(np.int64, copy=False), len(uniques)
        if len(codes) and codes.min() < 0:
            return None
        out = codes if out is None else pd.factorize(out * max(n, 1) + codes)[0].astype(np.int64, copy=False)
    if out is None:
        return np.zeros(len(table), dtype=np.int64)
    return out if len(keys) > 1 else pd.factorize(out)[0].astype(np.int64, copy=False)


def _first_rows(codes: np.ndarray, n_groups: int) -> np.ndarray:
    """``[group]`` position of each group's first row (groups numbered by first appearance)."""
    first = np.empty(n_groups, dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)
    return first


def check_scale_consistency(table: pd.DataFrame) -> None:
    r"""Refuse a table whose rows of one (unit, series_id, origin) carry more than one scale.

    .. math:: s^{(m)}_{b} = s_{b} \quad \text{for every model } m \text{ and step of block } b

    Every model scored on a block, single method or combination, must be divided by the same in-sample
    seasonal-naive scales; a second value means one of them was scaled apart.

    References
    ----------
    Evaluation-choices paper, section 11.
    """
    codes = group_codes(table, SCALE_KEYS)
    for col in ("scale_mae", "scale_rmse"):
        filled = table[col].fillna(-1.0)  # NaN scales must agree too
        values = filled.to_numpy()
        if codes is None or values.dtype.kind != "f" or np.isinf(values).any():
            _check_scale_grouped(table, col, filled)  # the general path (missing keys, infinite scales)
            continue
        n_groups = int(codes.max()) + 1 if len(codes) else 0
        first = _first_rows(codes, n_groups)
        differs = values != values[first][codes]  # [row]: a value other than its block's first
        if differs.any():
            bad = np.unique(codes[differs])  # blocks with a second value, in order of first appearance
            row = int(first[bad[0]])
            where = {k: table[k].iloc[row] for k in SCALE_KEYS}
            _scale_mismatch(len(bad), col, where)


def _check_scale_grouped(table: pd.DataFrame, col: str, filled: pd.Series) -> None:
    g = filled.groupby([table[k] for k in SCALE_KEYS], sort=False, observed=True)  # only blocks that exist
    spread = g.max() - g.min()
    bad = spread[spread != 0]
    if len(bad):
        _scale_mismatch(len(bad), col, dict(zip(SCALE_KEYS, bad.index[0], strict=False)))


def _scale_mismatch(n_bad: int, col: str, where: dict[str, object]) -> None:
    raise ScaleMismatchError(
        f"{n_bad} block(s) carry more than one {col} across models/steps, first "
        f"{where}: every model of a block, a combination included, "
        "must be scaled by the same in-sample scales recorded by the engine"
    )


def _has_band(table: pd.DataFrame, level: str) -> bool:
    return f"lo{level}" in table.columns and f"hi{level}" in table.columns


def _band_term(term: str) -> bool:
    """Whether a per-step term reads the bands (interval terms and the bands' quantile-grid terms)."""
    return term[:-2] in _BAND_TERMS or term in GRID_TERMS


def _needs_band(terms: Iterable[str], level: str) -> bool:
    """Whether any of ``terms`` reads the ``level`` band: its interval terms, or a grid term (both bands)."""
    return any((t[:-2] in _BAND_TERMS and t[-2:] == level) or t in GRID_TERMS for t in terms)


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
    band_level: int = 95,
) -> CRPSResult:
    r"""CRPS of every score-set row, of one kind, NaN where the row lacks that kind of forecast.

    .. math::

        \mathrm{CRPS}_{\mathrm{exact}} = \frac1m\sum_i |X_i - y| - \frac{1}{2m(m-1)}\sum_{i,j}|X_i - X_j|,
        \qquad
        \mathrm{CRPS}_{\mathrm{approx}} = 2\sum_{k=1}^{K-1}\frac{\tau_{k+1}-\tau_k}{2}
            \left[\rho_{\tau_k}(y, q_k) + \rho_{\tau_{k+1}}(y, q_{k+1})\right]

    as in :func:`~tycheon.metrics.probabilistic.crps_ensemble` (fair) and
    :func:`~tycheon.metrics.probabilistic.crps_quantiles`. This is the one place where a CRPS kind is
    chosen and checked: ``crps_kind`` must be ``"exact_samples"``, ``"approx_quantiles"`` (the model's own
    ``q<level>`` columns) or ``"band_quantiles"`` (the engine's conformal bands read as quantiles on one
    grid shared by every model: ``lo95, lo80, point, hi80, hi95`` at 0.025, 0.1, 0.5, 0.9, 0.975 with
    ``band_level=95``, or ``lo80, point, hi80`` at 0.1, 0.5, 0.9 with ``band_level=80``); ``None``
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
    if kind not in ("exact_samples", "approx_quantiles", "band_quantiles"):
        raise MetricInputError(
            f"crps_kind must be 'exact_samples', 'approx_quantiles' or 'band_quantiles'; got {kind!r}"
        )
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
    if kind == "band_quantiles":
        if band_level not in BAND_GRIDS:
            raise MetricInputError(f"band_level must be one of {sorted(BAND_GRIDS)}; got {band_level!r}")
        grid, band_cols = BAND_GRIDS[band_level]
        absent = [c for c in band_cols if c not in table.columns]
        if absent:
            raise MetricInputError(f"table lacks band column(s) {absent}")
        _quantile_crps_into(out, y, table, list(band_cols), np.asarray(grid), sort=True)
        return CRPSResult(out, kind)
    lv = np.asarray(sorted(quantile_levels), dtype=np.float64)
    if lv.size < 2:
        raise MetricInputError("approximate CRPS needs at least two quantile levels")
    cols = [quantile_column(q) for q in lv]
    missing = [c for c in cols if c not in table.columns]
    if missing:
        raise MetricInputError(f"table lacks quantile column(s) {missing}")
    _quantile_crps_into(out, y, table, cols, lv, sort=False)
    return CRPSResult(out, kind)


def _quantile_crps_into(
    out: np.ndarray, y: np.ndarray, table: pd.DataFrame, cols: list[str], levels: np.ndarray, *, sort: bool
) -> None:
    """Quantile CRPS of the rows whose quantile columns ``cols`` are all finite, written into ``out``: one
    compiled pass over the rows (:func:`tycheon.metrics._crps_rows.quantile_crps_rows`, the same bits as
    :func:`~tycheon.metrics._kernels.crps_quantile_kernel` on a ``[row, level]`` stack of them, sorted per
    row where ``sort``), reading the columns in place."""
    from tycheon.metrics._crps_rows import quantile_crps_rows

    quantile_crps_rows(out, y, [table[c].to_numpy(dtype=np.float64) for c in cols], levels, sort=sort)


def block_scores(
    table: pd.DataFrame,
    *,
    metrics: Sequence[str] = DEFAULT_METRICS,
    quantile_levels: Sequence[float] = (),
    samples: np.ndarray | None = None,
    crps_kind: CRPSKind | None = None,
    categorical_keys: bool = False,
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
    categorical_keys : bool
        Keep the text keys and ``demand_class`` as categoricals of the table's own categories where the
        table has them (the group-bys of a caller then read codes; at M5 size hashing the labels of 2.5
        million blocks was a tenth of a leaderboard). Default: the values, as ``to_numpy`` gives them.

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
    specs = [get_metric(m) for m in metrics]
    needed = {t for spec in specs for t in spec.terms}
    crps = None
    if "crps" in needed:
        crps = row_crps(table, quantile_levels=quantile_levels, samples=samples, crps_kind=crps_kind)
    missing_band = sorted(
        t
        for t in needed
        if (t[:-2] in _BAND_TERMS and not _has_band(table, t[-2:])) or (t in GRID_TERMS and not _has_band(table, "80"))
    )
    if missing_band:
        raise MetricInputError(
            f"metric(s) {[m for m in metrics if set(get_metric(m).terms) & set(missing_band)]} "
            "need columns the table lacks (lo/hi bands)"
        )
    frame = pd.DataFrame(step_terms(table, needed, crps=None if crps is None else crps.values))
    carried = [c for c in ("scale_mae", "scale_rmse", "demand_class", "season_length", "weight") if c in table.columns]
    codes = group_codes(table, BLOCK_KEYS)
    if codes is None:  # a missing key: pandas' own grouping on the key values (which drops those rows)
        keys: list[np.ndarray] | str = [table[k].to_numpy() for k in BLOCK_KEYS]
        first_of = table
    else:  # one integer code per block, in order of first appearance: the same groups in the same order
        keys = "__block"
        frame[keys] = codes
        first_of = pd.DataFrame({c: table[c].array for c in carried}, copy=False)
        first_of[keys] = codes
    g = frame.groupby(keys, sort=False, observed=True)
    mean = g.mean()
    total = g[[t for t in ("abs_err", "abs_y", "zero_y") if t in frame.columns]].sum()
    n_steps = g.size()
    # a probabilistic score on only some steps of a block is not that block's score: NaN, never partial
    partial = [c for c in mean.columns if c == "crps" or _band_term(c)]
    if partial:
        counts = g[partial].count()
        mean[partial] = mean[partial].where(counts.to_numpy() == n_steps.to_numpy()[:, None])
    first = first_of.groupby(keys, sort=False, observed=True)[carried].first()
    if codes is None:
        index = mean.index
    else:  # the blocks' keys, read at each block's first row
        rows = _first_rows(codes, len(mean))
        read = _categorical_at if categorical_keys else column_values
        index = pd.MultiIndex.from_arrays([read(table[k], rows) for k in BLOCK_KEYS])
    first.index = index
    out = pd.DataFrame(index=index)
    out.index.names = list(BLOCK_KEYS)
    out["n_steps"] = n_steps.to_numpy()
    for c in ("demand_class", "season_length", "weight"):
        if c in first.columns:
            kept = categorical_keys and isinstance(first[c].dtype, pd.CategoricalDtype)
            out[c] = first[c].array if kept else first[c].to_numpy()
    raw = {c: first[c].to_numpy(dtype=np.float64) for c in ("scale_mae", "scale_rmse")}
    out["zero_scale"] = ~(raw["scale_mae"] > 0) | ~(raw["scale_rmse"] > 0)
    terms = BlockTerms(
        mean={c: mean[c].to_numpy() for c in mean.columns},
        total={c: total[c].to_numpy() for c in total.columns},
        scale={c: np.where(v > 0, v, np.nan) for c, v in raw.items()},
    )
    for spec in specs:
        out[spec.name] = spec.block(terms)
    if "mape" in metrics:
        out["mape_defined"] = terms.total["zero_y"] == 0
    if crps is not None and "crps" in metrics:
        out["crps_kind"] = pd.Series(crps.kind, index=out.index, dtype=object).where(out["crps"].notna(), None)
    return out.reset_index()


def block_scores_by_model(table: pd.DataFrame, **kwargs: Any) -> pd.DataFrame:
    """:func:`block_scores` of ``table``, one model at a time: the blocks and values of one call on every
    model (each block's rows are one model's, and a model's rows keep their order), with the
    temporaries of one model's rows (one call on the series unit at M5 size held over a gigabyte of them:
    benchmarks/perf/MEASUREMENTS.md). The
    scales are checked across models once, as that one call does. Blocks come model by model in sorted
    model order; a model whose rows are one contiguous run (a table in key order) is read as a slice of
    the table's arrays, any other as a gather of its rows. ``kwargs`` are :func:`block_scores`' (a
    ``samples`` matrix is split with the rows)."""
    check_scale_consistency(table)
    codes, _ = pd.factorize(table["model"], sort=True)
    # a table in key order has each model's rows as one run: no order array is needed (117 MB at M5 size)
    grouped = bool((codes[1:] >= codes[:-1]).all()) if len(codes) > 1 else True
    order = None if grouped else np.argsort(codes, kind="stable")
    sizes = np.bincount(codes[codes >= 0]) if len(codes) else np.zeros(0, dtype=np.int64)
    bounds = np.concatenate([[0], np.cumsum(sizes)]) + int((codes < 0).sum())
    del codes
    samples = kwargs.pop("samples", None)
    parts = []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        if a == b:
            continue
        rows = np.arange(a, b) if order is None else order[a:b]  # one run where the table is grouped
        part = take_rows(table, rows)  # slices of the table's arrays where the rows are one run
        parts.append(block_scores(part, samples=None if samples is None else samples[rows], **kwargs))
    if not parts:
        return block_scores(table, samples=samples, **kwargs)
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]


def _categorical_at(col: pd.Series, rows: np.ndarray) -> Any:
    """``col``'s values at ``rows``: a categorical of the same categories where ``col`` is one, else
    :func:`column_values`."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        return pd.Categorical.from_codes(col.cat.codes.to_numpy()[rows], dtype=col.dtype)
    return column_values(col, rows)


def column_values(col: pd.Series, rows: np.ndarray | slice | None = None) -> np.ndarray:
    """``col.to_numpy()`` (at the positions ``rows``, if given) without turning a whole categorical
    column into an array first: a categorical of text is gathered from its categories by its codes, so
    only the rows asked for become Python objects. Equal to ``col.to_numpy()[rows]`` value for value."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        codes = col.cat.codes.to_numpy()
        if rows is not None:
            codes = codes[rows]
        if not len(codes) or codes.min() >= 0:  # a missing value (code -1) takes the general path
            return col.cat.categories.to_numpy().take(codes)
    values = col.to_numpy()
    return values if rows is None else values[rows]


def summarize(blocks: pd.DataFrame, *, metrics: Sequence[str], by: Sequence[str] = ("model", "unit")) -> pd.DataFrame:
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
    g = blocks.groupby(by, sort=True, observed=True)
    parts = [g.size().rename("n_blocks")]
    if "zero_scale" in blocks.columns:
        parts.append(g["zero_scale"].sum().astype(np.int64).rename("n_zero_scale"))
    for m in metrics:
        parts.append(g[m].mean().rename(f"{m}_mean"))
        parts.append(g[m].median().rename(f"{m}_median"))
    return pd.concat(parts, axis=1).reset_index()


def step_terms(table: pd.DataFrame, terms: Iterable[str], *, crps: np.ndarray | None = None) -> dict[str, np.ndarray]:
    r"""The per-step terms of :mod:`tycheon.metrics.registry` that ``terms`` names, ``[row]`` each.

    ``crps`` gives the row CRPS (from :func:`row_crps`) when ``"crps"`` is asked for; band terms read the
    ``lo<level>``/``hi<level>`` columns (NaN where a row has no band). The formulas are
    :func:`tycheon.metrics.registry.term_values`.
    """
    terms = list(terms)
    bands = {
        level: (table[f"lo{level}"].to_numpy(dtype=np.float64), table[f"hi{level}"].to_numpy(dtype=np.float64))
        for level in ("80", "95")
        if _has_band(table, level) and _needs_band(terms, level)
    }
    return term_values(
        terms,
        actual=table["actual"].to_numpy(dtype=np.float64),
        point=table["point"].to_numpy(dtype=np.float64),
        bands=bands,
        crps=crps,
    )


def row_scales(table: pd.DataFrame, *, columns: Sequence[str] = ("scale_mae", "scale_rmse")) -> dict[str, np.ndarray]:
    """The rows' ``scale_mae`` / ``scale_rmse`` (or only ``columns`` of them) with zero or NaN scales set
    to NaN (the zero-scale rule)."""
    out = {}
    for c in columns:
        v = table[c].to_numpy(dtype=np.float64)
        out[c] = np.where(v > 0, v, np.nan)
    return out


def step_loss(table: pd.DataFrame, metric: str, *, crps: np.ndarray | None = None) -> np.ndarray:
    r"""Per-row loss that a test on a table of ``metric`` compares (:attr:`MetricSpec.step_loss`).

    .. math:: L^{\mathrm{MASE}}_h = \frac{|e_h|}{s_{\mathrm{MAE}}},\qquad
              L^{\mathrm{RMSSE}}_h = \frac{e_h^2}{s_{\mathrm{RMSE}}^2}

    and the unscaled per-step term for unscaled metrics. NaN where the row's scale is zero or NaN.

    References
    ----------
    Hyndman & Koehler (2006); Diebold & Mariano (1995); evaluation-choices paper, section 3 (the paper tests
    unscaled per-step absolute errors; tycheon tests the loss the table ranks and keeps that variant beside it).
    """
    spec = get_metric(metric)
    if spec.step_loss is None:
        raise MetricInputError(
            f"{metric!r} is not a loss a test can compare; losses: "
            f"{[n for n, m in METRICS.items() if m.step_loss is not None]}"
        )
    n = len(table)
    if n <= STEP_LOSS_CHUNK:
        # only the metric's own scale (a [row] array each: 117 MB at M5 size)
        scales = row_scales(table, columns=() if spec.scale_column is None else (spec.scale_column,))
        return np.asarray(spec.step_loss(StepTerms(step_terms(table, spec.terms, crps=crps), scales)), dtype=np.float64)
    # every term and loss is elementwise, so a block of rows at a time gives the same values with the
    # temporaries of one block (the terms, the scale and the formula's intermediates were five [row]
    # arrays at once: 5 x 117 MB for the series unit at M5 size)
    out = np.empty(n, dtype=np.float64)
    for a, b in row_spans(n, STEP_LOSS_CHUNK):
        out[a:b] = step_loss(row_slice(table, a, b), metric, crps=None if crps is None else crps[a:b])
    return out


def step_scores(
    table: pd.DataFrame, *, by: Sequence[str] = ("model", "unit"), metrics: Sequence[str] = ("mase", "rmsse")
) -> pd.DataFrame:
    r"""Per-step metrics (the metric of a one-step block), mean and median over blocks, per group and step.

    .. math::

        \mathrm{MASE}_h = \frac{|e_h|}{s_{\mathrm{MAE}}}, \qquad \mathrm{RMSSE}_h = \frac{|e_h|}{s_{\mathrm{RMSE}}}

    averaged over the blocks with a non-zero scale (``n_zero_scale`` counts the others).

    References
    ----------
    Hyndman & Koehler (2006); evaluation-choices paper, section 3.
    """
    _check_table(table, metrics)
    check_scale_consistency(table)
    specs = [get_metric(m) for m in metrics]
    no_step = [s.name for s in specs if s.step is None]
    if no_step:
        raise MetricInputError(f"metric(s) {no_step} have no per-step value")
    scales = row_scales(table)
    terms = StepTerms(step_terms(table, {t for s in specs for t in s.terms}), scales)
    zero = np.isnan(scales["scale_mae"]) | np.isnan(scales["scale_rmse"])
    frame = table[list(by) + ["step"]].copy()
    for spec in specs:
        frame[spec.name] = np.where(zero, np.nan, spec.step(terms))  # type: ignore[misc]
    frame["zero_scale"] = zero
    g = frame.groupby(list(by) + ["step"], sort=True, observed=True)
    parts = [g.size().rename("n_blocks"), g["zero_scale"].sum().astype(np.int64).rename("n_zero_scale")]
    for spec in specs:
        parts += [g[spec.name].mean().rename(f"{spec.name}_mean"), g[spec.name].median().rename(f"{spec.name}_median")]
    return pd.concat(parts, axis=1).reset_index()
