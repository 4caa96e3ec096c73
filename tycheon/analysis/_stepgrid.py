"""How a leaderboard reads a score-set table: its (unit, demand class) cells, each cell's step grid.

A cell's rows are gathered once in key order (:func:`_unit_class_tables`); the step grid
(:class:`_StepGrid`) places every per-step loss of the cell on ``[(series, origin, step), model]`` with one
scatter (:class:`_Losses`, :func:`_pivot`, :func:`_pivot_loss`), the layout every DM test of the cell
reads; the band and own-quantile CRPS columns the cell's tests compare are computed here too.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tycheon._codes import factorize_sorted, position_dtype, sorted_codes, unique_inverse
from tycheon._frames import row_slice, row_spans
from tycheon.backtest.scoreset import key_order, take_rows
from tycheon.contract import quantile_column
from tycheon.metrics.aggregate import STEP_LOSS_CHUNK, block_scores_by_model, row_crps, step_loss
from tycheon.stats.dm import DMResult, PanelLayout, PooledLayout

DEMAND_CLASSES = ("all", "smooth", "erratic", "intermittent", "lumpy")
"""The cells of a unit: ``all`` pools every class (including ``undefined``); the four named classes are the
per-origin ADI/CV² classes recorded by the engine."""

_STEP_KEYS = ["series_id", "origin", "step"]


def _runs(sorted_values: pd.Series) -> list[tuple[Any, int, int]]:
    """``(value, start, stop)`` of each run of equal values of a sorted column (each value is one run)."""
    codes, uniques = pd.factorize(sorted_values)
    edges = np.flatnonzero(np.diff(codes)) + 1
    starts = np.concatenate([[0], edges]).astype(np.int64)
    stops = np.concatenate([edges, [len(codes)]]).astype(np.int64)
    return [(uniques[codes[a]], int(a), int(b)) for a, b in zip(starts, stops, strict=True)] if len(codes) else []


def _unit_class_tables(
    table: pd.DataFrame, columns: list[str], class_columns: list[str] | None = None, **block_kwargs: Any
) -> Iterator[tuple[Any, str, pd.DataFrame, pd.DataFrame]]:
    """``(unit, demand class, rows, blocks)`` for every unit and its classes (``all`` first), the rows of
    ``columns`` in key order (unit, model, series, origin, step), so that sums, and so every number, do
    not depend on the input's row order.

    Memory: a unit's rows are one gather of only ``columns``; its block scores are computed one model at
    a time (:func:`~tycheon.metrics.aggregate.block_scores_by_model`); each demand class's rows (of
    ``class_columns``, default ``columns``) are then one gather from ``table`` itself, after the unit's
    rows are released, so only one class's copy is alive at a time. A caller that ``del``-s its ``rows``
    at the end of each step keeps it so.
    """
    order = key_order(table)
    order = order.astype(position_dtype(len(order)), copy=False)  # int32 up to 2**31 rows
    for unit, start, stop in _runs(table["unit"].take(order)):
        positions = order[start:stop]
        rows = take_rows(table, positions, columns)
        blocks = block_scores_by_model(rows, categorical_keys=True, **block_kwargs)
        classes = _classes(rows)
        dc = rows["demand_class"]
        by_class = {c: positions[np.flatnonzero((dc == c).to_numpy())] for c in classes[1:]}
        del dc
        yield unit, "all", rows, blocks
        del rows
        for c in classes[1:]:
            rows = take_rows(table, by_class.pop(c), columns if class_columns is None else class_columns)
            yield unit, c, rows, blocks[blocks["demand_class"] == c]
            del rows


def _classes(table: pd.DataFrame) -> list[str]:
    present = set(table["demand_class"].unique())
    return ["all"] + [c for c in DEMAND_CLASSES[1:] if c in present]


@dataclass(frozen=True, eq=False)
class _StepGrid:
    """Where each score-set row sits in the ``[(series, origin, step), model]`` grid of one table.

    Built once per (unit, demand class); every per-step loss of the table is then placed with one
    scatter instead of a ``pivot_table`` per loss (same rows, same order, a fraction of the memory). The
    grid's keys are the unique (series_id, origin, step) in lexicographic order; ``series`` / ``origin``
    give each key's codes in sorted label order, from which every DM test's block layout is read
    (:meth:`layout`) instead of from the labels again.
    """

    row: np.ndarray  # [table row] -> key
    col: np.ndarray  # [table row] -> model
    models: np.ndarray  # [model], sorted
    series: np.ndarray  # [key] series code (sorted labels)
    origin: np.ndarray  # [key] origin code (sorted labels)
    n_origins: int
    layouts: dict[bytes, PooledLayout] = field(default_factory=dict)
    panels: dict[bytes, tuple[PanelLayout, int]] = field(default_factory=dict)

    @property
    def n_keys(self) -> int:
        return len(self.series)

    def n_blocks(self) -> int:
        """Distinct (series, origin) blocks among the keys: the minimum cell's count."""
        return int(np.unique(self.series * self.n_origins + self.origin).size)

    def n_origins_present(self, origin: np.ndarray | None = None) -> int:
        """Distinct origins among the codes ``origin`` (every key's by default): a test over time's points."""
        return int(np.count_nonzero(np.bincount(self.origin if origin is None else origin, minlength=self.n_origins)))

    def panel(self, keep: np.ndarray) -> tuple[PanelLayout, int]:
        """:func:`tycheon.stats.dm.panel_layout` of the keys ``keep`` (their origin codes, in time order)
        and how many distinct origins they hold, built once per distinct mask (every DM test of a table
        against one model shares it)."""
        tag = np.packbits(keep).tobytes()
        if tag not in self.panels:
            origin = np.asarray(self.origin[keep], dtype=np.int64)
            self.panels[tag] = (PanelLayout(origin, self.n_origins), self.n_origins_present(origin))
        return self.panels[tag]

    def layout(self, keep: np.ndarray) -> PooledLayout:
        """:func:`tycheon.stats.dm.pooled_layout` of the keys ``keep`` (a boolean ``[key]`` mask), built
        once per distinct mask: the (series, origin) blocks numbered in sorted order, as from the labels
        (codes of sorted labels order the blocks the same way; a block's series code differs from the
        one a factorisation of the kept labels would give, but only equality of series is read)."""
        tag = np.packbits(keep).tobytes()
        if tag not in self.layouts:
            key = self.series[keep] * self.n_origins + self.origin[keep]
            uniq, block = np.unique(key, return_inverse=True)
            self.layouts[tag] = PooledLayout(block.astype(np.int64), uniq // self.n_origins, len(uniq))
        return self.layouts[tag]


def _step_grid(table: pd.DataFrame) -> _StepGrid:
    # key = (series * n_origins + origin) * n_steps + step, built in place one code column at a time (each
    # int64 temporary is 15.3M rows x 8 B = 117 MB at M5 size: the expression form held five of them at once)
    key, sizes = None, []
    for k in _STEP_KEYS:
        c, n = sorted_codes(table[k])
        if key is None:
            key = c
        else:
            key *= n
            key += c
        del c
        sizes.append(n)
    assert key is not None
    # the keys' space is series x origins x steps: at most a few times the rows, so the distinct keys are
    # marked in it rather than sorted (tycheon._codes; the same arrays as np.unique); positions in the
    # narrowest integers that hold them (at M5 size two int64 row columns are 2 x 117 MB)
    uniq, row = unique_inverse(key, size=sizes[0] * sizes[1] * sizes[2], compact=True)
    del key
    s, rest = np.divmod(uniq, sizes[1] * sizes[2])
    col, models = factorize_sorted(table["model"])
    col = col.astype(position_dtype(len(models)), copy=False)
    return _StepGrid(row=row, col=col, models=np.asarray(models), series=s, origin=rest // sizes[2], n_origins=sizes[1])


@dataclass(frozen=True, eq=False)
class _Losses:
    """Per-step values of one loss on a step grid, ``[key, model]`` (NaN where a model has no value). A
    model with no value at all counts as absent, as a ``pivot_table`` would leave its column out."""

    grid: _StepGrid
    values: np.ndarray  # [key, model], column-major: each model's losses are contiguous
    present: dict[str, int]  # model -> column of ``values``, models with at least one value
    finite: np.ndarray  # [key, model] ~isnan(values), read by every test of the model
    tested: dict[tuple[str, str, str, str], tuple[DMResult | None, str | None]] = field(default_factory=dict)
    """DM results on these losses by (model, against, alternative, inference): the CRPS grids are tested against
    the random walk once per metric of a table with the same result, so each test runs once."""

    def n_keys_with_value(self) -> int:
        return int(self.finite.any(axis=1).sum())


def _pivot(grid: _StepGrid, values: pd.Series | np.ndarray) -> _Losses:
    """Per-step values placed on the grid ``[(series, origin, step), model]``, stored column by column
    (a model's column is read whole by each of its DM tests: 1,600 of them at M5 size)."""
    arr = np.full((grid.n_keys, len(grid.models)), np.nan, order="F")
    arr[grid.row, grid.col] = np.asarray(values, dtype=np.float64)
    return _losses(grid, arr)


def _pivot_loss(grid: _StepGrid, table: pd.DataFrame, metric: str, *, crps: np.ndarray | None = None) -> _Losses:
    """``_pivot(grid, step_loss(table, metric, crps=crps))``, the loss evaluated and placed a block of
    :data:`~tycheon.metrics.aggregate.STEP_LOSS_CHUNK` rows at a time: the same grid (each key and model
    is one row), without the ``[row]`` loss array beside it (15.3M rows x 8 B = 117 MB for the series unit at
    M5 size)."""
    arr = np.full((grid.n_keys, len(grid.models)), np.nan, order="F")
    for a, b in row_spans(len(table), STEP_LOSS_CHUNK):
        part = step_loss(row_slice(table, a, b), metric, crps=None if crps is None else crps[a:b])
        arr[grid.row[a:b], grid.col[a:b]] = part
    return _losses(grid, arr)


def _losses(grid: _StepGrid, arr: np.ndarray) -> _Losses:
    finite = ~np.isnan(arr)
    has = finite.any(axis=0)
    return _Losses(grid, arr, {str(m): j for j, m in enumerate(grid.models) if has[j]}, finite)


def _band_grid(table: pd.DataFrame) -> int:
    """The band level whose quantile grid the table's CRPS uses: 95 where any row has a 95% band, else 80."""
    return 95 if bool((table["lo95"].notna().to_numpy() & table["hi95"].notna().to_numpy()).any()) else 80


def _band_crps(table: pd.DataFrame, level: int) -> pd.Series:
    """CRPS of each row's conformal bands read as quantiles on the grid of ``level`` (NaN where a row
    lacks one of the bands of that grid): :func:`tycheon.metrics.aggregate.row_crps`, ``band_quantiles``."""
    return pd.Series(row_crps(table, crps_kind="band_quantiles", band_level=level).values, index=table.index)


def _own_crps(table: pd.DataFrame, levels: tuple[float, ...]) -> pd.Series:
    """CRPS of the model's own quantiles per row (NaN where the row has none, or the spec asks for fewer
    than two levels or levels the table lacks)."""
    if len(levels) < 2 or any(quantile_column(q) not in table.columns for q in levels):
        return pd.Series(np.full(len(table), np.nan), index=table.index)
    return pd.Series(row_crps(table, quantile_levels=levels, crps_kind="approx_quantiles").values, index=table.index)
