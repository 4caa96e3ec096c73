"""Prepared scores, the input every analysis shares: a score set split by unit, each unit's block scores
and per-step forecasts computed once and reused by every analysis. The DM family against the baseline
that several analyses run on those per-step forecasts lives in :mod:`tycheon.analysis.dm_family`
(:class:`DMFamily`, :func:`dm_family` and :data:`DMTest` are re-exported here). No statistic lives here;
each is called from :mod:`tycheon.metrics` / :mod:`tycheon.stats`.

A full score set of a large panel (30,490 series x 8 origins x 6 steps x 9 models: 11 million rows) is
read once per unit: block scores are computed model by model (a block belongs to one model, so this is
exact and keeps the intermediate arrays small) and the per-step point forecasts are laid out once as a
dense ``[cell, model]`` array, a cell being one (series, origin, step), from which the per-step loss of
any point metric is evaluated by the metric registry (:meth:`StepLosses.loss`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from tycheon._codes import factorize_sorted, position_dtype, unique_inverse
from tycheon._frames import row_spans
from tycheon.analysis.blockgrid import block_grid
from tycheon.analysis.dm_family import DMFamily, DMTest, dm_family
from tycheon.backtest.scoreset import concat_tables
from tycheon.contract import quantile_column
from tycheon.errors import InputError
from tycheon.metrics.aggregate import STEP_LOSS_CHUNK, block_scores, column_values, row_crps, step_loss
from tycheon.metrics.registry import get_metric
from tycheon.stats.ranking import rank_by_mean

__all__ = [
    "BLOCK_METRICS",
    "READ_COLUMNS",
    "BlockCollector",
    "DMFamily",
    "DMTest",
    "PreparedScores",
    "ScoredUnit",
    "StepLosses",
    "UnitScores",
    "check_table",
    "dm_family",
    "group_kind",
    "prepared",
    "ranks",
    "require_models",
    "wide",
]

_GROUPS = re.compile(r"^(groups|groups_random):(\d+)$")
_NEEDED = ("model", "unit", "series_id", "origin", "step", "target_period", "actual", "point")
_OPTIONAL = ("demand_class", "season_length", "scale_mae", "scale_rmse", "weight")
BLOCK_METRICS = ("mase", "rmsse", "wape")
READ_COLUMNS = (*_NEEDED, *_OPTIONAL)
"""The score-set columns prepared scores read (block scores and per-step losses of point forecasts):
a table of only these serves every analysis built on them."""


def check_table(table: pd.DataFrame) -> None:
    """Refuse what is not a score-set table."""
    if not isinstance(table, pd.DataFrame) or not set(_NEEDED) <= set(table.columns):
        got = list(table.columns) if isinstance(table, pd.DataFrame) else type(table).__name__
        raise InputError(f"expected a score-set table with columns {sorted(_NEEDED)}; got {got}")


def group_kind(unit: str) -> tuple[str, int | None]:
    """``("size", k)`` for ``groups:k``, ``("random", k)`` for ``groups_random:k``, else ``(unit, None)``."""
    match = _GROUPS.match(unit)
    if not match:
        return unit, None
    return ("size" if match.group(1) == "groups" else "random"), int(match.group(2))


def ranks(values: Mapping[Any, Any]) -> dict[str, int]:
    """Competition ranks of models by a value, lower is better, finite values only
    (:func:`tycheon.stats.ranking.rank_by_mean`)."""
    return rank_by_mean({str(m): float(v) for m, v in values.items() if np.isfinite(v)})


@dataclass(frozen=True, eq=False)
class StepLosses:
    """Every model's per-step forecasts on the unit's cells (one cell per (series, origin, step)), from
    which :meth:`loss` gives the per-step loss of any registry metric.

    The actual, the scales, the target period and the demand class belong to the cell (every model of a
    cell shares them); the point forecast (and the own-quantile CRPS, where asked for) to the cell and
    the model."""

    models: list[str]
    point: np.ndarray  # [cell, model] point forecast, NaN where the model did not forecast the cell
    actual: np.ndarray  # [cell]
    series: np.ndarray  # [cell] series code
    origin: np.ndarray  # [cell] origin code (origins in time order)
    period: np.ndarray  # [cell] target-period code (periods in time order)
    scale_mae: np.ndarray  # [cell]
    scale_rmse: np.ndarray  # [cell]
    demand_class: np.ndarray  # [cell] demand class of the cell's (series, origin) block
    crps: np.ndarray | None = None  # [cell, model] CRPS of the model's own quantiles (approx_quantiles)
    quantile_levels: tuple[float, ...] = ()  # the levels of ``crps``

    def where(self, keep: np.ndarray) -> StepLosses:
        """The same losses on the cells ``keep`` (a boolean ``[cell]`` mask)."""
        return StepLosses(
            self.models,
            self.point[keep],
            self.actual[keep],
            self.series[keep],
            self.origin[keep],
            self.period[keep],
            self.scale_mae[keep],
            self.scale_rmse[keep],
            self.demand_class[keep],
            None if self.crps is None else self.crps[keep],
            self.quantile_levels,
        )

    def loss(self, metric: str = "mae") -> np.ndarray:
        r"""``[cell, model]`` per-step loss that a test on a table of ``metric`` compares:
        :func:`tycheon.metrics.aggregate.step_loss` (the registry's :attr:`MetricSpec.step_loss`), as the
        leaderboard evaluates it; NaN where a model did not forecast a cell or the metric's scale is zero.

        ``mae``: :math:`|e|` (the paper's unscaled absolute error); ``mase``: :math:`|e|/s_{\mathrm{MAE}}`;
        ``rmsse``: :math:`e^2/s^2_{\mathrm{RMSE}}`; ``crps``: the CRPS of the model's own quantiles
        (needs :meth:`UnitScores.step_losses` with ``quantile_levels``). Metrics of bands are refused
        (:class:`~tycheon.errors.MetricInputError`): the cells hold point forecasts only."""
        if "crps" in get_metric(metric).terms and self.crps is None:
            raise InputError(f"metric {metric!r} needs the own-quantile CRPS: step_losses(quantile_levels=...)")
        out = np.full(self.point.shape, np.nan, order="F")
        for j in range(len(self.models)):  # one model's column at a time: a [cell] frame, no [cell, model] copy
            cells = pd.DataFrame(
                {"actual": self.actual, "point": self.point[:, j], "scale_mae": self.scale_mae,
                 "scale_rmse": self.scale_rmse},
                copy=False,
            )  # fmt: skip
            out[:, j] = step_loss(cells, metric, crps=None if self.crps is None else self.crps[:, j])
        return out


class UnitScores:
    """One unit's rows of a score-set table (row positions into it, no copy), with its block scores and
    step losses computed on first use; rows are copied one model at a time when they are needed."""

    def __init__(self, unit: str, table: pd.DataFrame, index: np.ndarray | None) -> None:
        self.unit = unit
        self._table = table
        self._index = index  # [row] positions in ``table``; None: every row
        # the same rows as one slice where they are one run (a unit of a table in key order): a numeric
        # column is then read as a view of the table's array, not gathered
        self._span: slice | np.ndarray | None = index
        if index is not None and len(index) > 0 and int(index[-1]) - int(index[0]) == len(index) - 1:
            self._span = slice(int(index[0]), int(index[-1]) + 1)
        self._blocks: pd.DataFrame | None = None
        self._metrics: tuple[str, ...] = ()
        self._levels: tuple[float, ...] = ()  # the own-quantile levels of the blocks' ``crps``
        self._losses: StepLosses | None = None
        self._model_codes: tuple[np.ndarray, list[str]] | None = None

    def column(self, name: str) -> np.ndarray:
        """One column of the unit's rows (a numpy array; gathered when the unit is part of its table)."""
        return column_values(self._table[name], self._span)

    def factorize(self, name: str, *, sort: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """``pd.factorize(self.column(name), sort=sort)``, the same codes and uniques; a categorical column
        (the score set's text columns) is factorised by its integer codes, so no row's label is made
        (equal codes are equal labels; with ``sort`` the categories must be sorted, as the contract keeps
        them, else the labels are factorised)."""
        col = self._table[name]
        if isinstance(col.dtype, pd.CategoricalDtype) and (not sort or col.cat.categories.is_monotonic_increasing):
            raw = col.cat.codes.to_numpy()
            raw = raw if self._span is None else raw[self._span]
            if not len(raw) or raw.min() >= 0:  # a missing value (code -1) takes the general path
                codes, first = pd.factorize(raw, sort=sort)
                return codes, col.cat.categories.to_numpy().take(first)
        codes, uniques = pd.factorize(self.column(name), sort=sort)
        return codes, np.asarray(uniques)

    def _codes(self) -> tuple[np.ndarray, list[str]]:
        if self._model_codes is None:
            codes, uniques = self.factorize("model", sort=True)
            # kept for the unit's life: in the narrowest integers (one byte a row for a few models)
            codes = codes.astype(position_dtype(len(uniques)), copy=False)
            self._model_codes = (codes, [str(m) for m in uniques])
        return self._model_codes

    @property
    def models(self) -> list[str]:
        return self._codes()[1]

    def nunique(self, name: str) -> int:
        """Distinct values of a column among the unit's rows (``pd.unique(...).size``; a categorical
        column counted by its codes)."""
        col = self._table[name]
        if isinstance(col.dtype, pd.CategoricalDtype):
            raw = col.cat.codes.to_numpy()
            raw = raw if self._span is None else raw[self._span]
            if not len(raw) or raw.min() >= 0:
                return int(np.unique(raw).size)
        return int(pd.unique(self.column(name)).size)

    def _take(
        self, positions: np.ndarray | None, *, categorical: bool = False, extra: Sequence[str] = ()
    ) -> pd.DataFrame:
        """The needed columns (and ``extra`` ones) at some row positions of the table (column by column: no
        full-table copy). Text columns come as arrays of objects, as ``to_numpy`` gives them;
        ``categorical`` keeps them categorical (for :func:`~tycheon.metrics.aggregate.block_scores`, whose
        blocks are the same)."""
        cols = [c for c in (*READ_COLUMNS, *extra) if c in self._table.columns]
        if positions is None:
            return self._table[cols]
        if categorical:
            return pd.DataFrame({c: self._table[c].array.take(positions) for c in cols}, copy=False)
        return pd.DataFrame({c: column_values(self._table[c], positions) for c in cols})

    @property
    def rows(self) -> pd.DataFrame:
        """A copy of the unit's rows (needed columns only)."""
        return self._take(self._index)

    def by_model(self, *, categorical: bool = False, extra: Sequence[str] = ()) -> Iterator[tuple[str, pd.DataFrame]]:
        """Each model's rows (a copy of one model's rows at a time), models in sorted order; the needed
        columns and ``extra`` ones."""
        codes, models = self._codes()
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(len(models) + 1))
        for j, m in enumerate(models):
            pos = order[bounds[j] : bounds[j + 1]]
            yield m, self._take(pos if self._index is None else self._index[pos], categorical=categorical, extra=extra)

    def blocks(self, metrics: Sequence[str] = BLOCK_METRICS, *, quantile_levels: Sequence[float] = ()) -> pd.DataFrame:
        """:func:`tycheon.metrics.aggregate.block_scores` of the unit, model by model; the text keys are the
        table's categoricals (``categorical_keys``), the labels only where the table has none. ``crps``
        is the CRPS of the models' own quantiles at ``quantile_levels`` (``approx_quantiles``, as the
        leaderboard's ``crps`` tables)."""
        want = tuple(dict.fromkeys((*BLOCK_METRICS, *metrics)))
        levels = tuple(float(q) for q in quantile_levels) if "crps" in want else ()
        if self._blocks is None or not set(want) <= set(self._metrics) or (levels and levels != self._levels):
            kw: dict[str, Any] = {"quantile_levels": levels, "crps_kind": "approx_quantiles"} if levels else {}
            extra = [quantile_column(q) for q in levels]
            parts = [
                block_scores(g, metrics=list(want), categorical_keys=True, **kw)
                for _, g in self.by_model(categorical=True, extra=extra)
            ]
            self._blocks, self._metrics, self._levels = pd.concat(parts, ignore_index=True), want, levels
        return self._blocks

    def step_losses(self, *, quantile_levels: Sequence[float] = ()) -> StepLosses:
        """The unit's per-step forecasts on its cells (:class:`StepLosses`), with the CRPS of the models'
        own quantiles at ``quantile_levels`` when given (for :meth:`StepLosses.loss` of ``crps``)."""
        levels = tuple(float(q) for q in quantile_levels)
        if self._losses is None or (levels and self._losses.quantile_levels != levels):
            self._losses = _step_losses(self, levels)
        return self._losses


class ScoredUnit(UnitScores):
    """A unit whose rows were scored into blocks and released (:class:`BlockCollector`): its block scores
    of ``metrics`` and its models only. ``column``, ``factorize`` and ``nunique`` read the block table
    (its keys, ``demand_class``, ``weight``, ...: the same distinct values as the rows'); what needs the
    rows (per-step losses, the rows themselves) is refused with :class:`~tycheon.errors.InputError`."""

    def __init__(self, unit: str, blocks: pd.DataFrame, metrics: Sequence[str]) -> None:
        super().__init__(unit, blocks, None)
        self._blocks, self._metrics = blocks, tuple(metrics)

    def _released(self, what: str) -> InputError:
        return InputError(f"unit {self.unit!r} keeps its block scores only (its rows were released): no {what}")

    def _take(
        self, positions: np.ndarray | None, *, categorical: bool = False, extra: Sequence[str] = ()
    ) -> pd.DataFrame:
        raise self._released("rows")

    def blocks(self, metrics: Sequence[str] = BLOCK_METRICS, *, quantile_levels: Sequence[float] = ()) -> pd.DataFrame:
        missing = [m for m in metrics if m not in self._metrics]
        if missing:
            raise self._released(f"block scores of {missing} (scored: {list(self._metrics)})")
        assert self._blocks is not None
        return self._blocks

    def step_losses(self, *, quantile_levels: Sequence[float] = ()) -> StepLosses:
        raise self._released("per-step losses")


class BlockCollector:
    """Block scores of score-set tables gathered unit by unit as the tables arrive, so that each table's
    rows can be released once it is added (the aggregation dial's own units at M5 size: 7 million rows
    whose blocks are what the dial reads).

    :meth:`add` scores each model's rows of each unit of a table in key order (as
    :meth:`UnitScores.blocks` scores a unit of a table in key order), :meth:`prepared` joins each unit's
    parts in sorted model order (the text keys stay categoricals, on the union of their categories), so
    every block, and the order of the blocks, is that of :meth:`UnitScores.blocks` on all the tables at
    once. A model's rows of one unit must come from one table.

    Parameters
    ----------
    metrics : sequence of str
        Block metrics kept besides :data:`BLOCK_METRICS`.
    """

    def __init__(self, *, metrics: Sequence[str] = ()) -> None:
        self.metrics = tuple(dict.fromkeys((*BLOCK_METRICS, *metrics)))
        self._parts: dict[str, dict[str, pd.DataFrame]] = {}

    def add(self, table: pd.DataFrame) -> None:
        """Score ``table``'s blocks (the caller may release the table afterwards)."""
        check_table(table)
        if not len(table):
            return
        rows = concat_tables([table], sort_keys=True)  # key order, as a table of every model would be read
        for name, unit in PreparedScores(rows).items():
            parts = self._parts.setdefault(name, {})
            for model, g in unit.by_model(categorical=True):
                if model in parts:
                    raise InputError(f"model {model!r} of unit {name!r} appears in more than one table")
                parts[model] = block_scores(g, metrics=list(self.metrics), categorical_keys=True)
        del rows

    def prepared(self) -> PreparedScores:
        """The collected units (:class:`ScoredUnit`), in the order they first arrived."""
        out = PreparedScores()
        out._units = {
            name: ScoredUnit(name, concat_tables([parts[m] for m in sorted(parts)]), self.metrics)
            for name, parts in self._parts.items()
        }
        return out


def _step_losses(unit: UnitScores, quantile_levels: tuple[float, ...] = ()) -> StepLosses:
    # cell = (series * n_origins + origin) * n_steps + (step - 1), built in place: each int64 [row]
    # temporary is 117 MB for the series unit at M5 size, and the expression form held five at once
    cell, s_uni = unit.factorize("series_id")
    cell = cell.astype(np.int64, copy=False)
    o_codes, o_uni = factorize_sorted(unit.column("origin"))
    cell *= len(o_uni)
    cell += o_codes
    del o_codes
    step = unit.column("step")
    n_h = int(step.max()) if len(step) else 1  # steps are 1..H: the largest step - 1, plus one
    cell *= n_h
    cell += step
    cell -= 1
    del step
    # the distinct cells marked in the (series, origin, step) space, not sorted (the same arrays); the
    # rows' cell positions in the narrowest integers that hold them
    cells, cell_idx = unique_inverse(cell, size=len(s_uni) * len(o_uni) * n_h, compact=True)
    del cell
    m_codes, models = unit._codes()
    point = np.full((len(cells), len(models)), np.nan, order="F")  # [cell, model]: a model's column contiguous
    point[cell_idx, m_codes] = np.asarray(unit.column("point"), dtype=np.float64)
    first = np.zeros(len(cells), dtype=np.int64)
    rows = np.arange(len(cell_idx), dtype=position_dtype(len(cell_idx)))
    first[cell_idx[::-1]] = rows[::-1]  # a row of each cell (the first)
    del rows
    y = np.asarray(unit.column("actual"), dtype=np.float64)  # no copy of a float column
    actual = y[first]
    differ = ~((y == actual[cell_idx]) | (np.isnan(y) & np.isnan(actual[cell_idx])))
    if differ.any():
        raise InputError(
            f"unit {unit.unit!r}: {int(differ.sum())} row(s) give another actual than the other models' rows of "
            "the same (series, origin, step): one score set holds one actual per target"
        )
    del y, differ
    p_codes, _ = factorize_sorted(unit.column("target_period")[first])
    scale = {
        c: (
            np.asarray(unit.column(c), dtype=np.float64)[first]
            if c in unit._table.columns
            else np.full(len(cells), np.nan)
        )
        for c in ("scale_mae", "scale_rmse")
    }
    classes = (
        unit.column("demand_class")[first]
        if "demand_class" in unit._table.columns
        else np.full(len(cells), None, dtype=object)
    )
    crps = None
    if quantile_levels:
        crps = np.full((len(cells), len(models)), np.nan, order="F")
        crps[cell_idx, m_codes] = _own_crps(unit, quantile_levels)
    per_origin = len(o_uni) * n_h
    return StepLosses(
        list(models),
        point,
        actual,
        cells // per_origin,
        (cells // n_h) % len(o_uni),
        p_codes,
        scale["scale_mae"],
        scale["scale_rmse"],
        classes,
        crps,
        tuple(quantile_levels),
    )


def _own_crps(unit: UnitScores, levels: tuple[float, ...]) -> np.ndarray:
    """``[row]`` CRPS of each row's own quantiles at ``levels``, as the leaderboard's ``crps`` tables score
    it (:func:`tycheon.metrics.aggregate.row_crps`, ``approx_quantiles``); NaN where a row has none, or
    everywhere when the table lacks a level's column. Evaluated a block of rows at a time."""
    cols = [quantile_column(q) for q in levels]
    n = len(unit.column("step"))
    if len(levels) < 2 or any(c not in unit._table.columns for c in cols):
        return np.full(n, np.nan)
    arrays = {c: np.asarray(unit.column(c), dtype=np.float64) for c in ("actual", *cols)}
    out = np.empty(n)
    for a, b in row_spans(n, STEP_LOSS_CHUNK):
        part = pd.DataFrame({c: v[a:b] for c, v in arrays.items()}, copy=False)
        out[a:b] = row_crps(part, quantile_levels=levels, crps_kind="approx_quantiles").values
    return out


class PreparedScores(Mapping[str, UnitScores]):
    """A score set split by unit (from one or several score-set tables; a unit must come from one table).

    Pass it to several analyses instead of the table, so that each unit's block scores and per-step losses
    are computed once. The tables are referenced, not copied.
    """

    def __init__(self, *tables: pd.DataFrame) -> None:
        self._units: dict[str, UnitScores] = {}
        for table in tables:
            check_table(table)
            unit = table["unit"]
            raw = unit.cat.codes.to_numpy() if isinstance(unit.dtype, pd.CategoricalDtype) else None
            if raw is not None and (not len(raw) or raw.min() >= 0):  # by its codes: no label made per row
                codes, first = pd.factorize(raw)
                uniques = unit.cat.categories.take(first).to_numpy()  # in the order they first appear
            else:  # labels (a missing unit, code -1, is left out as pd.factorize leaves it out)
                codes, uniques = pd.factorize(unit.to_numpy())
            for j, unit in enumerate(uniques):
                if unit in self._units:
                    raise InputError(f"unit {unit!r} appears in more than one table")
                index = None if len(uniques) == 1 else np.flatnonzero(codes == j)
                self._units[str(unit)] = UnitScores(str(unit), table, index)

    def extended(self, *tables: pd.DataFrame | PreparedScores) -> PreparedScores:
        """These prepared units (shared, not recomputed) followed by the units of ``tables`` (tables, or
        prepared scores whose units are shared too); a unit already here is refused, as in the
        constructor."""
        out = PreparedScores(*[t for t in tables if not isinstance(t, PreparedScores)])
        units = dict(self._units)
        for part in [t._units for t in tables if isinstance(t, PreparedScores)] + [out._units]:
            clash = sorted(set(part) & set(units))
            if clash:
                raise InputError(f"unit(s) {clash} appear in more than one table")
            units.update(part)
        out._units = units
        return out

    def subset(self, units: Sequence[str]) -> PreparedScores:
        """The same prepared units (shared, not recomputed), only ``units``."""
        out = PreparedScores()
        out._units = {u: self[u] for u in units}
        return out

    def __getitem__(self, unit: str) -> UnitScores:
        if unit not in self._units:
            raise InputError(f"no rows for unit {unit!r} (units present: {sorted(self._units)})")
        return self._units[unit]

    def __iter__(self) -> Iterator[str]:
        return iter(self._units)

    def __len__(self) -> int:
        return len(self._units)


def prepared(scores: pd.DataFrame | PreparedScores) -> PreparedScores:
    """The scores split by unit (a table is split now; prepared scores are passed through)."""
    return scores if isinstance(scores, PreparedScores) else PreparedScores(scores)


def require_models(unit: UnitScores, models: Sequence[str]) -> None:
    present = set(unit.models)
    absent = [m for m in models if m not in present]
    if absent:
        raise InputError(f"model(s) {absent} have no rows in unit {unit.unit!r} (models present: {sorted(present)})")


def wide(blocks: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Block scores ``[(series, origin), model]`` (NaN where a model has no score for a block).

    The frame of ``set_index(["series_id", "origin", "model"])[metric].unstack("model")`` on the labels
    as values (sorted rows and columns, object text labels), by one scatter where the keys are
    categoricals (:func:`.blockgrid.block_grid`), else by that reshape of the labels."""
    grid = block_grid(blocks, metric, categorical=False)
    if grid is not None:
        return grid
    keys = ["series_id", "origin", "model"]
    # an unstack of categorical keys would order the rows by first appearance, not by label
    labels = pd.DataFrame({k: column_values(blocks[k]) for k in keys} | {metric: blocks[metric].to_numpy()})
    return labels.set_index(keys)[metric].unstack("model")
