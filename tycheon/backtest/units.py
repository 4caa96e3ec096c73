"""Units of analysis (evaluation-choices paper, section 4): what a "series" is when a forecast is scored.

Accepted forms:

- ``"series"``: every series of the panel as it is;
- ``"total"``: one aggregate, the sum of all series;
- ``"level:<attr>"``: one aggregate per value of a hierarchy level ``attr`` in ``panel.levels``;
- ``"groups:<k>"``: ``k`` groups formed by size: series sorted by total volume before the first origin's
  training cut (``fit_end``), largest first (ties by series id), split into ``k`` contiguous groups of
  near-equal count (section 4.2, "Exhibit 3": groups formed "using only data from before the first
  origin");
- ``"groups_random:<k>"``: ``k`` groups of near-equal count by a seeded random permutation (section 4.2,
  the random-assignment check).

An aggregate is the sum of its members, a member contributing zero where it is unobserved; it is
observed where any member is, and a cell is published when its last member's cell is (``max`` of the
members' ``available_at``). Every unit is scored over the same origins, so units are comparable.

An aggregate follows a series' entry, exit and abstention rules: where none of its members is observed it
has exited (an origin there is an abstention, ``not_observed_at_origin``), and when a member enters again
it re-enters with a new history that starts there (``too_short`` until it has ``min_history``
observations), so no history handed to a model has a hole (:func:`tycheon.backtest.slices.run_start`).
Small groups of the synthetic marketplace do this: their few members enter late or exit early.

Weights: the panel's ``weight`` attribute when present (summed over members for aggregates), otherwise
the mean observed value before the first origin's training cut (0 when there is none).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from tycheon.backtest.slices import UnitData
from tycheon.data.panel import Panel

__all__ = ["UNIT_FORMS", "build_unit", "cached_unit", "parse_unit"]

UNIT_FORMS = ("series", "total", "level:<attr>", "groups:<k>", "groups_random:<k>")

_GROUPS = re.compile(r"^(groups|groups_random):(\d+)$")


def parse_unit(unit: str, panel: Panel) -> tuple[str, str | int | None]:
    """Validate a unit name against a panel; return ``(kind, argument)``."""
    accepted = f"accepted forms are {', '.join(UNIT_FORMS)}"
    if not isinstance(unit, str):
        raise ValueError(f"unit must be a string; {accepted}, got {unit!r}")
    if unit in ("series", "total"):
        return unit, None
    if unit.startswith("level:"):
        attr = unit.split(":", 1)[1]
        if attr not in panel.levels:
            raise ValueError(
                f"unknown unit {unit!r}: {attr!r} is not a hierarchy level of panel {panel.name!r} "
                f"(levels: {list(panel.levels)}); {accepted}"
            )
        return "level", attr
    match = _GROUPS.match(unit)
    if match:
        k = int(match.group(2))
        if not 1 <= k <= panel.n_series:
            raise ValueError(f"unit {unit!r}: k must be between 1 and the {panel.n_series} series of the panel")
        return match.group(1), k
    raise ValueError(f"unknown unit {unit!r}; {accepted}")


def _volume_mean(values: np.ndarray, observed: np.ndarray, cut: int) -> tuple[np.ndarray, np.ndarray]:
    """Total and mean observed value in columns ``[0, cut)`` per row (mean 0 when none)."""
    v = np.where(observed[:, :cut], values[:, :cut], 0.0)
    n = observed[:, :cut].sum(axis=1)
    total = v.sum(axis=1)
    return total, np.where(n > 0, total / np.maximum(n, 1), 0.0)


def _aggregate(panel: Panel, unit: str, codes: np.ndarray, names: np.ndarray, cut: int) -> UnitData:
    """Sum series into ``len(names)`` aggregates; ``codes[s]`` is series s's aggregate."""
    view = panel.dense()
    n_agg, n_t = len(names), view.shape[1]
    lowest = np.iinfo(np.int64).min  # NaT is the smallest int64: never the max of a member
    values = np.zeros((n_agg, n_t))  # [aggregate, time]
    counts = np.zeros((n_agg, n_t), dtype=np.int64)
    avail = np.full((n_agg, n_t), lowest, dtype=np.int64)
    # members of each aggregate as one run of rows, in series order (a stable sort). The float sums add
    # the k-th member of every aggregate at step k, so each aggregate adds its members one after another
    # in series order, as ``np.add.at`` does (the same floats), without its per-element loop (seconds of the
    # dial's 10,000-series backtests: benchmarks/perf/MEASUREMENTS.md); counts and maxima are exact in any
    # order
    order = np.argsort(codes, kind="stable")
    members = np.bincount(codes, minlength=n_agg)
    has = np.flatnonzero(members)
    starts = (np.cumsum(members) - members)[has]
    observed_rows = view.observed[order]
    filled = np.where(observed_rows, view.values[order], 0.0)
    depth = int(members.max()) if len(has) else 0
    if len(has) <= depth:  # few large aggregates: one sum over each run (numpy adds the rows in order)
        for g, a in zip(has, starts, strict=True):
            values[g] = filled[a : a + members[g]].sum(axis=0)
    else:  # many small ones: the k-th member of every aggregate at once
        for k in range(depth):
            deep = members[has] > k  # the aggregates with a k-th member
            values[has[deep]] += filled[starts[deep] + k]
    counts[has] = np.add.reduceat(observed_rows.astype(np.int64), starts, axis=0)
    stamps = np.where(observed_rows, view.available_at.astype(np.int64)[order], lowest)
    avail[has] = np.maximum.reduceat(stamps, starts, axis=0)
    observed = counts > 0
    available_at = np.where(observed, avail, lowest).astype("datetime64[ns]")
    values = np.where(observed, values, np.nan)
    if "weight" in panel.attributes.columns:
        weight = np.bincount(codes, weights=panel.attributes["weight"].to_numpy(dtype=np.float64), minlength=n_agg)
    else:
        weight = _volume_mean(values, observed, cut)[1]
    attrs = pd.DataFrame(index=pd.Index(names, name="series_id"))
    return UnitData(
        unit,
        values,
        observed,
        available_at,
        np.asarray(names, dtype=object),
        view.periods,
        panel.freq,
        panel.season_length,
        np.asarray(weight, dtype=np.float64),
        attrs,
    )


def build_unit(panel: Panel, unit: str, *, first_fit_end: int, seed: int = 0) -> UnitData:
    """The dense arrays of one unit of analysis.

    Parameters
    ----------
    panel : Panel
    unit : str
        One of :data:`UNIT_FORMS`.
    first_fit_end : int
        Training cut of the first origin: sizes for ``groups:<k>`` and default weights use columns
        ``[0, first_fit_end)`` only.
    seed : int
        Seed of the random assignment for ``groups_random:<k>``.
    """
    kind, arg = parse_unit(unit, panel)
    view = panel.dense()
    if kind == "series":
        if "weight" in panel.attributes.columns:
            weight = panel.attributes["weight"].to_numpy(dtype=np.float64)
        else:
            weight = _volume_mean(view.values, view.observed, first_fit_end)[1]
        return UnitData(
            unit,
            view.values,
            view.observed,
            view.available_at,
            view.series_ids,
            view.periods,
            panel.freq,
            panel.season_length,
            weight,
            panel.attributes,
        )
    if kind == "total":
        return _aggregate(panel, unit, np.zeros(panel.n_series, dtype=np.int64), np.array(["total"]), first_fit_end)
    if kind == "level":
        codes, uniques = pd.factorize(panel.attributes[arg].astype(str), sort=True)
        return _aggregate(panel, unit, codes, np.asarray([f"{arg}={u}" for u in uniques]), first_fit_end)
    k = int(arg)  # type: ignore[arg-type]
    if kind == "groups":
        volume = _volume_mean(view.values, view.observed, first_fit_end)[0]
        order = np.lexsort((view.series_ids.astype(str), -volume))  # largest first, ties by id
    else:
        order = np.random.default_rng(np.random.SeedSequence([seed, k])).permutation(panel.n_series)
    codes = np.empty(panel.n_series, dtype=np.int64)
    for g, members in enumerate(np.array_split(order, k)):
        codes[members] = g
    width = len(str(k))
    return _aggregate(panel, unit, codes, np.asarray([f"g{g + 1:0{width}d}" for g in range(k)]), first_fit_end)


def cached_unit(panel: Panel, unit: str, *, first_fit_end: int, seed: int = 0) -> UnitData:
    """:func:`build_unit`, built once per panel and arguments and kept on the panel (as its dense view is).

    A benchmark runs the engine once per model on one panel (twice with calibration origins), and every
    run built the same units again (at M5 size a measurable part of a run, ``groups:k`` sorting 30,490
    series by volume each time: benchmarks/perf/MEASUREMENTS.md). The unit depends only on the panel and
    these arguments (``seed`` only for ``groups_random``), and its arrays are made read-only before it is
    shared, so a cached unit is the one :func:`build_unit` would give."""
    kind, _ = parse_unit(unit, panel)
    key = (unit, int(first_fit_end), int(seed) if kind == "groups_random" else None)
    cache: dict[tuple[str, int, int | None], UnitData] = panel.__dict__.setdefault("_units", {})
    if key not in cache:
        data = build_unit(panel, unit, first_fit_end=first_fit_end, seed=seed)
        for arr in (data.values, data.observed, data.available_at, data.series_ids, data.weight):
            if isinstance(arr, np.ndarray):
                arr.setflags(write=False)
        cache[key] = data
    return cache[key]
