r"""Selection-rule replay: what a deployed "pick the best recent methods" rule is worth, against a floor
(always the production baseline) and a ceiling (the best single method with hindsight).

The rule (evaluation-choices paper, section 7 and Table 6), replayed per series at every origin ``o``:

1. the *folds* are the series' earlier origins whose targets were all published by ``o`` (``available_at
   <= o``; with overlapping origins the latest earlier folds are not yet complete and are left out), so a
   choice at ``o`` never reads an outcome it could not have seen;
2. a block is replayed only when it has at least ``min_folds`` folds (the paper needs three) and the
   floor forecasts it (the floor is the reference every share is measured against);
3. a candidate survives when it was scored on at least ``min_fold_share`` of those folds and the mean of
   its scaled bias over them lies within ``bias_threshold`` in absolute value, and it forecasts the block;
4. survivors are ranked on the mean of the ranking metric (RMSSE by default) over their folds; the best
   ``top_k`` are averaged (equal weights, step by step) and served. With no survivor the floor is served
   (counted in ``n_fallback``).

The served combination becomes rows of its own model in a score-set-shaped table, copied from the floor's
rows of the same block (so it carries that block's recorded scales, demand class and actuals), and is
scored by :func:`tycheon.metrics.aggregate.block_scores` after :func:`~tycheon.metrics.aggregate.
check_scale_consistency` has proved its scales equal the single methods' (paper, section 11: a blend
scaled apart from the methods it is compared with inverted that paper's first result).

Per unit, variant and demand class the summary reports, over the replayed blocks :math:`B` with the
metric :math:`M`:

.. math::

    \mathrm{gain} = \frac{\bar M_{\mathrm{floor}} - \bar M_{\mathrm{served}}}{\bar M_{\mathrm{floor}}},
    \qquad
    \mathrm{gap\ closed} = \frac{\bar M_{\mathrm{floor}} - \bar M_{\mathrm{served}}}
        {\bar M_{\mathrm{floor}} - \bar M_{\mathrm{oracle}}},
    \qquad
    \mathrm{wins} = \#\{b \in B : M_{\mathrm{served}, b} < M_{\mathrm{floor}, b}\}

with the oracle the best single method per block with hindsight (``oracle="block"``, the paper's
ceiling) or per series (``oracle="series"``: one method for all of a series' replayed blocks), and the
*champion*: the one method that, served everywhere with the floor where it has no forecast, has the
lowest mean (the paper's "adopt the leaderboard's winner everywhere" reference; ``champion_full`` is the
best among methods with full support, the paper's second such reference). The *non-overlapping*
variant thins the origins so that no two kept origins share a target period (the paper's production
spacing) and replays again on those alone.

**Minimum cell** (WP26 section 6, :func:`tycheon.analysis.cell.cell_check`, the one rule of every table):
a summary row (unit, variant, demand class) counts its replayed blocks (series x origin; ``n_blocks``).
Below ``spec.min_cell`` it names nothing chosen from it: no champion and no full-support champion (their
means and gap closed are NaN), ``cell_ok`` is false and ``cell_reason`` says why; the floor, served and
oracle means, gain, wins and gap closed of the rule are still reported. A variant whose pooled row
(``all``) is below the minimum cell lists no shares of chosen models (:func:`replay_tables`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from tycheon.analysis.cell import BLOCKS, cell_check
from tycheon.backtest.columns import code_dtype
from tycheon.backtest.scoreset import concat_tables, take_rows
from tycheon.contract import SCORESET_COLUMNS, is_quantile_column
from tycheon.errors import InputError
from tycheon.metrics.aggregate import block_scores, block_scores_by_model, check_scale_consistency
from tycheon.metrics.registry import get_metric

__all__ = [
    "REPLAY_CLASSES",
    "ReplayResult",
    "ReplaySpec",
    "non_overlapping_origins",
    "replay",
    "replay_tables",
    "replay_units",
]

_READ = frozenset(SCORESET_COLUMNS) - {"lo80", "hi80", "lo95", "hi95"}
"""The score-set columns the replay reads: not the bands nor the models' quantiles (the served
combination has neither)."""

REPLAY_CLASSES = ("all", "smooth", "erratic", "intermittent", "lumpy")
"""Demand classes reported; ``all`` pools every class (``undefined`` included)."""

SUMMARY_COLUMNS = (
    "unit",
    "variant",
    "demand_class",
    "n_blocks",
    "floor",
    "served",
    "oracle",
    "gain",
    "wins",
    "win_share",
    "gap_closed",
    "champion",
    "champion_mean",
    "champion_gap_closed",
    "champion_full",
    "champion_full_gap_closed",
    "n_fallback",
    "n_zero_scale",
    "cell_ok",
    "cell_reason",
)
"""Columns of :attr:`ReplayResult.summary`, in order."""

Variant = Literal["all_folds", "non_overlapping"]
OracleKind = Literal["block", "series"]


@dataclass(frozen=True, kw_only=True)
class ReplaySpec:
    """The selection rule's parameters (evaluation-choices paper, section 7).

    Parameters
    ----------
    baseline : str
        The production baseline: the floor, and what is served when no candidate survives.
    metric : str
        Ranking metric, a scaled point metric of the registry that is lower-is-better (default RMSSE).
    min_fold_share : float
        A candidate needs a score on at least this share of the available folds (paper: one half).
    bias_threshold : float
        Largest allowed absolute mean scaled bias over the folds. The paper calls it "a fixed threshold"
        without its value; the default 0.5 (half an in-sample seasonal-naive MAE per step) is ours.
    top_k : int
        Survivors averaged and served (paper: three).
    min_folds : int
        Earlier published folds a block needs before the rule can choose for it (paper: three).
    oracle : {"block", "series"}
        The ceiling: best method per block (paper) or one best method per series, with hindsight.
    candidates : tuple of str, optional
        Models the rule may choose from (default: every model in the table, the baseline included).
    served_name : str
        Model name of the served rows.
    min_cell : int
        The minimum cell (WP26 section 6; the benchmark config's ``min_cell``): a summary row with fewer
        replayed blocks names no champion (module docstring).
    """

    baseline: str
    metric: str = "rmsse"
    min_fold_share: float = 0.5
    bias_threshold: float = 0.5
    top_k: int = 3
    min_folds: int = 3
    oracle: OracleKind = "block"
    candidates: tuple[str, ...] | None = None
    served_name: str = "selection_rule"
    min_cell: int = 30

    def __post_init__(self) -> None:
        cell_check(0, min_cell=self.min_cell)  # refuses a minimum cell that is not an integer >= 2
        spec = get_metric(self.metric)
        if spec.scale_column is None or spec.kind != "point" or not spec.lower_is_better:
            raise InputError(
                f"metric {self.metric!r} cannot rank the rule: it needs a scaled point metric where "
                "lower is better, e.g. 'rmsse' or 'mase'"
            )
        if not 0.0 < self.min_fold_share <= 1.0:
            raise InputError(f"min_fold_share must be in (0, 1]; got {self.min_fold_share}")
        if not self.bias_threshold >= 0.0:
            raise InputError(f"bias_threshold must be >= 0; got {self.bias_threshold}")
        for name in ("top_k", "min_folds"):
            value = getattr(self, name)
            if int(value) != value or value < 1:
                raise InputError(f"{name} must be a positive integer; got {value!r}")
        if self.oracle not in ("block", "series"):
            raise InputError(f"oracle must be 'block' or 'series'; got {self.oracle!r}")


@dataclass(frozen=True, eq=False)
class ReplayResult:
    """A replay of the rule on one score-set table.

    Attributes
    ----------
    summary : DataFrame
        One row per (unit, variant, demand_class): ``n_blocks``, ``floor``, ``served``, ``oracle``,
        ``gain``, ``wins``, ``win_share``, ``gap_closed``, ``champion``, ``champion_mean``,
        ``champion_gap_closed``, ``champion_full`` / ``champion_full_gap_closed`` (the best method
        scored on every block of the group, no fallback needed), ``n_fallback``, ``n_zero_scale``,
        ``cell_ok`` / ``cell_reason`` (the minimum cell on ``n_blocks``; below it no champion is named).
    blocks : DataFrame
        Every replayed block: unit, variant, series_id, origin, demand_class, floor, served, oracle,
        n_folds, chosen (the served models joined by ``+``).
    served : DataFrame
        Score-set-shaped rows of the served model (all variants; ``variant`` column added).
    spec : ReplaySpec
    """

    summary: pd.DataFrame
    blocks: pd.DataFrame
    served: pd.DataFrame
    spec: ReplaySpec


def non_overlapping_origins(table: pd.DataFrame) -> list[pd.Timestamp]:
    """Origins thinned so that no two share a target period: from the first, keep an origin when it
    starts after the last target period of the previously kept one (the paper's production spacing,
    section 7)."""
    last = table.groupby("origin", observed=True)["target_period"].max().sort_index()
    kept: list[pd.Timestamp] = []
    for origin in last.index:
        if not kept or origin > last[kept[-1]]:
            kept.append(origin)
    return kept


class _Grid:
    """The unit's blocks on a ``[series, origin, model]`` grid (metric, scaled bias, points), and the
    position of every table row on it. Built once; a variant takes a subset of its origins."""

    def __init__(self, table: pd.DataFrame, spec: ReplaySpec) -> None:
        blocks = block_scores_by_model(table, metrics=(spec.metric, "scaled_bias"))  # one model's temporaries
        self.models = sorted(blocks["model"].unique())
        self.series = np.sort(blocks["series_id"].astype(str).unique())
        self.origins = np.sort(blocks["origin"].unique())
        b_s, b_o, b_m = self._codes(blocks)
        n_s, n_o, n_m = len(self.series), len(self.origins), len(self.models)
        self.metric = np.full((n_s, n_o, n_m), np.nan)  # [series, origin, model]
        self.bias = np.full((n_s, n_o, n_m), np.nan)
        self.exists = np.zeros((n_s, n_o, n_m), dtype=bool)
        self.metric[b_s, b_o, b_m] = blocks[spec.metric].to_numpy(dtype=np.float64)
        self.bias[b_s, b_o, b_m] = blocks["scaled_bias"].to_numpy(dtype=np.float64)
        self.exists[b_s, b_o, b_m] = True
        self.demand = np.full((n_s, n_o), "undefined", dtype=object)  # [series, origin]
        if "demand_class" in blocks.columns:
            self.demand[b_s, b_o] = blocks["demand_class"].to_numpy(dtype=object)
        # every table row's place on the grid, in the narrowest signed integers that hold it (-1 included:
        # a row outside a variant's origins): three int64 [row] arrays are 3 x 15.3M x 8 B = 367 MB at M5 size
        rs, ro, rm = (_narrow(c, n) for c, n in zip(self._codes(table), (n_s, n_o, n_m), strict=True))
        self.rows = (rs, ro, rm)
        # when every target of a (series, origin) block was published: the date a fold becomes usable
        pub = np.full(n_s * n_o, np.iinfo(np.int64).min, dtype=np.int64)
        cell = rs.astype(np.int64) * n_o + ro
        np.maximum.at(pub, cell, table["available_at"].to_numpy().astype("datetime64[ns]").view(np.int64))
        del cell
        self.published = pub.reshape(n_s, n_o)  # [series, origin] ns
        steps = table["step"].to_numpy(dtype=np.int64)
        self.horizon = int(steps.max())
        self.point = np.full((n_s, n_o, n_m, self.horizon), np.nan)  # [series, origin, model, step]
        self.point[rs, ro, rm, steps - 1] = table["point"].to_numpy(dtype=np.float64)

    def _codes(self, frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s = self._series_codes(frame["series_id"])
        o = np.searchsorted(self.origins, frame["origin"].to_numpy())
        m = pd.Categorical(frame["model"], categories=self.models).codes.astype(np.int64)
        return s, o, m

    def _series_codes(self, col: pd.Series) -> np.ndarray:
        """Each row's position in the grid's series (``-1``: not there), as ``pd.Categorical(col.astype(str),
        categories=self.series).codes``; a categorical column is mapped through its categories, so no
        row's label is made (15 million at M5 size)."""
        if isinstance(col.dtype, pd.CategoricalDtype):
            codes = col.cat.codes.to_numpy()
            at = pd.Categorical(col.cat.categories.astype(str), categories=self.series).codes.astype(np.int64)
            return np.where(codes >= 0, at[codes], -1)
        return pd.Categorical(col.astype(str), categories=self.series).codes.astype(np.int64)

    def take(self, keep: np.ndarray) -> _Grid:
        """The grid on the origins ``keep`` (sorted positions) only."""
        out = object.__new__(_Grid)
        out.models, out.series, out.origins, out.horizon = self.models, self.series, self.origins[keep], self.horizon
        for name in ("metric", "bias", "exists", "demand", "published", "point"):
            setattr(out, name, getattr(self, name)[:, keep])
        new = np.full(len(self.origins), -1, dtype=code_dtype(len(self.origins) + 1))  # [row] gathers come out narrow
        new[keep] = np.arange(len(keep))
        rs, ro, rm = self.rows
        out.rows = (rs, new[ro], rm)  # -1: the row's origin is not in this variant
        return out


def _narrow(codes: np.ndarray, n: int) -> np.ndarray:
    """``codes`` (in ``-1 .. n``) in the narrowest signed integers that hold them (those of codes of
    ``n + 1`` categories, :func:`tycheon.backtest.columns.code_dtype`), the same values."""
    return codes.astype(code_dtype(n + 1), copy=False)


def _choose(grid: _Grid, spec: ReplaySpec, cand: np.ndarray, base: int) -> tuple[np.ndarray, ...]:
    """The rule at every (series, origin): chosen model mask, folds available, and whether replayed."""
    n_s, n_o, n_m = grid.metric.shape
    chosen = np.zeros((n_s, n_o, n_m), dtype=bool)
    n_folds = np.zeros((n_s, n_o), dtype=np.int64)
    fallback = np.zeros((n_s, n_o), dtype=bool)
    origin_ns = grid.origins.astype("datetime64[ns]").view(np.int64)
    any_block = np.asarray(grid.exists.any(axis=2))  # [series, origin]
    for j in range(n_o):
        # folds: earlier origins of the series whose every target was published by origin j
        usable = any_block[:, :j] & (grid.published[:, :j] <= origin_ns[j])  # [series, fold]
        n_folds[:, j] = usable.sum(axis=1)
        scored = np.isfinite(grid.metric[:, :j, :]) & usable[:, :, None]  # [series, fold, model]
        support = scored.sum(axis=1)  # [series, model]
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(scored, grid.metric[:, :j, :], 0.0).sum(axis=1) / support
            bias = np.where(scored, grid.bias[:, :j, :], 0.0).sum(axis=1) / support
        ok = (
            cand[None, :]
            & grid.exists[:, j, :]
            & (support > 0)
            & (support >= spec.min_fold_share * n_folds[:, j][:, None])
            & np.isfinite(mean)
            & (np.abs(bias) <= spec.bias_threshold)
        )  # [series, model]
        # rank survivors by mean metric; ties by model name (the grid's model order, a stable sort)
        key = np.where(ok, mean, np.inf)
        rank = np.argsort(key, axis=1, kind="stable")  # [series, model]
        top = rank[:, : spec.top_k]
        pick = np.take_along_axis(ok, top, axis=1)  # survivors among the top k
        rows = np.repeat(np.arange(n_s), top.shape[1])
        chosen[rows, j, top.ravel()] = pick.ravel()
        none = ~ok.any(axis=1)
        chosen[none, j, base] = True  # no survivor: serve the floor
        fallback[:, j] = none
    replayed = np.asarray(
        (n_folds >= spec.min_folds) & grid.exists[:, :, base] & np.isfinite(grid.point[:, :, base, 0])
    )
    return chosen, n_folds, fallback, replayed


def _served_rows(
    table: pd.DataFrame, grid: _Grid, spec: ReplaySpec, chosen: np.ndarray, replayed: np.ndarray
) -> pd.DataFrame:
    """Score-set rows of the served model: the floor's rows of each replayed block with the average of
    the chosen models' points (bands and quantiles dropped: the combination has none of its own)."""
    rs, ro, rm = grid.rows
    base = grid.models.index(spec.baseline)
    keep = (rm == base) & (ro >= 0)
    keep[keep] = replayed[rs[keep], ro[keep]]
    rows = table[keep].copy()
    rs, ro = rs[keep], ro[keep]
    h = rows["step"].to_numpy(dtype=np.int64) - 1
    pick = chosen[rs, ro, :]  # [row, model]
    points = grid.point[rs, ro, :, h]  # [row, model]
    rows["point"] = np.where(pick, points, 0.0).sum(axis=1) / pick.sum(axis=1)
    rows["model"] = spec.served_name
    for col in rows.columns:
        if col in ("lo80", "hi80", "lo95", "hi95") or is_quantile_column(col):
            rows[col] = np.nan
    for col in ("has_band", "has_quantiles", "has_samples"):
        if col in rows.columns:
            rows[col] = False
    return rows.reset_index(drop=True)


def _oracle(grid: _Grid, spec: ReplaySpec, cand: np.ndarray, replayed: np.ndarray) -> np.ndarray:
    """Ceiling per (series, origin): best single candidate with hindsight, per block or per series."""
    metric = np.where(grid.exists & cand[None, None, :], grid.metric, np.nan)
    with np.errstate(all="ignore"):
        if spec.oracle == "block":
            return np.nanmin(np.where(np.isfinite(metric), metric, np.inf), axis=2)
        # per series: the model with the lowest mean over the series' replayed blocks, among those scored
        # on every one of them
        on = replayed[:, :, None]
        full = (np.isfinite(metric) | ~on).all(axis=1) & np.asarray(replayed.any(axis=1))[:, None]  # [series, model]
        mean = np.where(on, metric, 0.0).sum(axis=1) / replayed.sum(axis=1)[:, None]
        best = np.argmin(np.where(full, mean, np.inf), axis=1)  # [series]
        return np.take_along_axis(metric, np.broadcast_to(best[:, None, None], metric.shape[:2] + (1,)), axis=2)[..., 0]


def _summary_row(
    frame: pd.DataFrame, champ_values: dict[str, np.ndarray], full_support: dict[str, bool], *, min_cell: int
) -> dict[str, object]:
    floor, served, oracle = (frame[c].to_numpy() for c in ("floor", "served", "oracle"))
    f, s, o = floor.mean(), served.mean(), oracle.mean()
    gap = f - o
    check = cell_check(len(frame), min_cell=min_cell)
    # below the minimum cell no method is named from the row: no champion of either kind
    means = {m: float(v.mean()) for m, v in champ_values.items()} if check.ok else {}
    champion = min(means, key=lambda m: (means[m], m)) if means else None
    cm = means.get(champion, np.nan) if champion else np.nan
    full = {m: v for m, v in means.items() if full_support[m]}
    champion_full = min(full, key=lambda m: (full[m], m)) if full else None
    cf = full.get(champion_full, np.nan) if champion_full else np.nan
    return {
        "n_blocks": len(frame),
        "floor": float(f),
        "served": float(s),
        "oracle": float(o),
        "gain": float((f - s) / f) if f > 0 else np.nan,
        "wins": int(np.sum(served < floor)),
        "win_share": float(np.mean(served < floor)),
        "gap_closed": float((f - s) / gap) if gap > 0 else np.nan,
        "champion": champion,
        "champion_mean": float(cm),
        "champion_gap_closed": float((f - cm) / gap) if gap > 0 else np.nan,
        "champion_full": champion_full,
        "champion_full_gap_closed": float((f - cf) / gap) if gap > 0 else np.nan,
        "n_fallback": int(frame["fallback"].sum()),
        "cell_ok": check.ok,
        "cell_reason": check.reason,
    }


def _replay_once(
    table: pd.DataFrame, grid: _Grid, spec: ReplaySpec, unit: str, variant: Variant
) -> tuple[pd.DataFrame, ...]:
    if spec.baseline not in grid.models:
        raise InputError(f"the baseline {spec.baseline!r} has no rows in unit {unit!r}; models: {grid.models}")
    names = spec.candidates if spec.candidates is not None else tuple(grid.models)
    unknown = sorted(set(names) - set(grid.models))
    if unknown:
        raise InputError(f"candidate(s) {unknown} have no rows in unit {unit!r}; models: {grid.models}")
    cand = np.isin(np.asarray(grid.models, dtype=object), np.asarray(names, dtype=object))
    base = grid.models.index(spec.baseline)
    chosen, n_folds, fallback, replayed = _choose(grid, spec, cand, base)
    served_rows = _served_rows(table, grid, spec, chosen, replayed)
    # section 11: the served rows must carry exactly the scales of the single methods of their blocks;
    # they were copied from the floor's rows, whose scales block_scores has checked against every model
    check_scale_consistency(concat_tables([table[table["model"] == spec.baseline], served_rows]))
    served_blocks = block_scores(served_rows, metrics=(spec.metric,))
    s_code, o_code, _ = grid._codes(served_blocks)
    served = np.full(replayed.shape, np.nan)
    served[s_code, o_code] = served_blocks[spec.metric].to_numpy(dtype=np.float64)
    floor = grid.metric[:, :, base]
    oracle = _oracle(grid, spec, cand, replayed)
    scored = replayed & np.isfinite(floor) & np.isfinite(served) & np.isfinite(oracle)
    si, oi = np.nonzero(scored)
    models = np.asarray(grid.models, dtype=object)
    blocks = pd.DataFrame(
        {
            "unit": unit,
            "variant": variant,
            "series_id": grid.series[si],
            "origin": grid.origins[oi],
            "demand_class": grid.demand[si, oi],
            "floor": floor[si, oi],
            "served": served[si, oi],
            "oracle": oracle[si, oi],
            "n_folds": n_folds[si, oi],
            "fallback": fallback[si, oi],
            "chosen": ["+".join(models[chosen[s, o]]) for s, o in zip(si, oi, strict=False)],
        }
    )
    rows = []
    for cls in REPLAY_CLASSES:
        sel = np.ones(len(si), dtype=bool) if cls == "all" else (blocks["demand_class"].to_numpy() == cls)
        if not sel.any():
            continue
        champ = {
            m: np.where(
                np.isfinite(grid.metric[si[sel], oi[sel], k]), grid.metric[si[sel], oi[sel], k], floor[si[sel], oi[sel]]
            )
            for k, m in enumerate(grid.models)
            if cand[k]
        }
        row: dict[str, object] = {"unit": unit, "variant": variant, "demand_class": cls}
        full = {
            m: bool(np.isfinite(grid.metric[si[sel], oi[sel], k]).all()) for k, m in enumerate(grid.models) if cand[k]
        }
        row.update(_summary_row(blocks[sel], champ, full, min_cell=spec.min_cell))
        in_cls = replayed if cls == "all" else replayed & (grid.demand == cls)
        row["n_zero_scale"] = int(in_cls.sum() - sel.sum())
        rows.append(row)
    served_rows.insert(0, "variant", variant)
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS), blocks, served_rows


def replay(table: pd.DataFrame, *, spec: ReplaySpec, unit: str = "series") -> ReplayResult:
    """Replay the selection rule on one unit of a score-set table, all folds and non-overlapping folds.

    Parameters
    ----------
    table : DataFrame
        Score-set table (``ScoreSet.table``) with at least the baseline and one other model.
    spec : ReplaySpec
    unit : str
        Unit of analysis to replay on (the rule chooses per series of that unit).

    Returns
    -------
    ReplayResult

    References
    ----------
    Evaluation-choices paper, section 7 (the rule, floor and ceiling, Table 6, non-overlapping folds)
    and section 11 (one scaling path for combinations); Fildes, R. (1989), forecast value added for the
    floor.
    """
    if "unit" not in table.columns:
        raise InputError("table must be a score-set table (column 'unit' missing)")
    rows = (table["unit"] == unit).to_numpy()
    # the unit's rows of the columns the replay reads: a slice (no copy) of a table in key order, as the
    # harness hands it over; a gather of those columns only otherwise (not of bands and quantiles)
    t = take_rows(table, np.flatnonzero(rows), [c for c in table.columns if c in _READ])
    if t.empty:
        raise InputError(f"no rows for unit {unit!r}; units present: {sorted(table['unit'].unique())}")
    grid = _Grid(t, spec)
    thinned = np.searchsorted(grid.origins, np.asarray(non_overlapping_origins(t), dtype="datetime64[ns]"))
    parts = [
        _replay_once(t, grid, spec, unit, "all_folds"),
        _replay_once(t, grid.take(thinned), spec, unit, "non_overlapping"),
    ]
    summary, blocks, served = (pd.concat([p[i] for p in parts], ignore_index=True) for i in range(3))
    return ReplayResult(summary=summary, blocks=blocks, served=served, spec=spec)


def replay_units(table: pd.DataFrame, *, spec: ReplaySpec, units: tuple[str, ...] | None = None) -> ReplayResult:
    """:func:`replay` on every unit (default: those in the table with more than one series), stacked."""
    if units is None:
        counts = table.groupby("unit", observed=True)["series_id"].nunique()
        units = tuple(u for u in sorted(counts.index) if counts[u] > 1)
    results = [replay(table, spec=spec, unit=u) for u in units]
    if not results:
        raise InputError("no unit with more than one series to replay on")
    summary, blocks, served = (
        pd.concat([getattr(r, f) for r in results], ignore_index=True) for f in ("summary", "blocks", "served")
    )
    return ReplayResult(summary=summary, blocks=blocks, served=served, spec=spec)


def replay_tables(result: ReplayResult) -> list[dict[str, Any]]:
    """The replay as records: one table per unit with the rule, its rows (variant x demand class), per
    variant the share of blocks where each model was among the served ones (none for a variant whose
    ``all`` row is below the minimum cell), and the minimum cell (``min_cell``, ``cell_counts``).

    Values are plain Python/numpy scalars (NaN where undefined); the caller turns them into JSON.
    """
    spec = result.spec
    rule = {
        "metric": spec.metric,
        "baseline": spec.baseline,
        "min_fold_share": spec.min_fold_share,
        "bias_threshold": spec.bias_threshold,
        "top_k": spec.top_k,
        "min_folds": spec.min_folds,
        "oracle": spec.oracle,
        "served_name": spec.served_name,
    }
    out = []
    for unit, rows in result.summary.groupby("unit", sort=True, observed=True) if len(result.summary) else ():
        blocks = result.blocks[result.blocks["unit"] == unit]
        pooled = rows[rows["demand_class"] == "all"]
        named = set(pooled.loc[pooled["cell_ok"].astype(bool), "variant"])  # variants whose choices may be named
        blocks = blocks[blocks["variant"].isin(named)]
        picks = blocks.assign(model=blocks["chosen"].str.split("+")).explode("model")
        n = blocks.groupby("variant", observed=True).size()
        share = (picks.groupby(["variant", "model"], observed=True).size() / n).rename("share").reset_index()
        out.append(
            {
                "unit": unit,
                "rule": rule,
                "rows": rows.drop(columns=["unit"]).to_dict(orient="records"),
                "chosen_share": share.sort_values(["variant", "share", "model"], ascending=[True, False, True]).to_dict(
                    orient="records"
                ),
                "min_cell": int(spec.min_cell),
                "cell_counts": BLOCKS,
            }
        )
    return out
