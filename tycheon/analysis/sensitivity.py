r"""Protocol sensitivity: would another legitimate evaluation protocol have ranked the roster otherwise?

The audit (protocol-sensitivity audit, sections 4-6) compares the ranking of the same candidates under
two protocol configurations on **identical scored targets**, and reads that displacement against the
displacement left when only a convention *inside* one protocol changes:

- *between*: the static split against the rolling origin (:func:`sensitivity_protocols` builds both on
  the same origins);
- *within* (intraprotocol references): the static training boundary moved by :math:`\pm 1` and
  :math:`\pm 3` periods, the rolling embargo 0 -> 1, and the rolling refit calendar moved earlier.

Each run is reduced (:func:`run_losses`) to per-coordinate losses: for every series :math:`u` and step
:math:`h` (the coordinates, equally weighted) the mean over origins of the metric's per-step loss
(:func:`tycheon.metrics.aggregate.step_loss`; RMSSE: :math:`e^2/s^2`). A comparison of two runs
(:func:`compare_runs`) first proves that they scored the same cells (model, series, target period, step),
naming the first difference otherwise (audit, section 4.5: unpaired runs measure sample replacement, not
convention noise), then computes per series

.. math::

    \mathrm{PSS}_u = \frac1H \sum_h \big(1 - \tau_b(\ell^{(p)}_{u,h\cdot}, \ell^{(q)}_{u,h\cdot})\big),
    \qquad
    \mathrm{WS}_u = \mathbb 1\Big\{\frac1H\sum_h \mathbb 1\{\arg\min \ell^{(p)}_{u,h\cdot} \ne
        \arg\min \ell^{(q)}_{u,h\cdot}\} > \tfrac12\Big\}

through :func:`tycheon.stats.ranking.pss_units` (:func:`~tycheon.stats.ranking.pss` and
:func:`~tycheon.stats.ranking.winner_swap` vectorised over series; coordinates where either run ties every
candidate are left out, and counted; a model without a forecast for a series is left out of its ranking), their panel
means with block-bootstrap
intervals (:func:`tycheon.stats.bootstrap.paired_block_bootstrap` of the values against zero, i.e. the
bootstrap of a mean), and the same two measures on the panel-level coordinates (mean loss per step over
all series, the leaderboard's view).

:func:`sensitivity_report` adds the attribution: paired differences :math:`B_u - N_{u,p}` of the between
PSS and each protocol's mean within PSS with block-bootstrap intervals; TOST equivalence
(:func:`~tycheon.stats.ranking.tost_equivalence`) of mean :math:`B_u` to zero and of the mean paired
difference to zero, both with the margin :math:`\delta = 4/[M(M-1)H]`
(:func:`~tycheon.stats.ranking.pss_resolution`, audit eq. 3); the Borda mean rank over the K runs; and the
ranking-variance report ("how stable is this order"): each model's rank in every run, its range, and how
often it keeps the reference rank.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tycheon._codes import factorize_sorted
from tycheon.backtest import engine
from tycheon.backtest.factories import Factory, factory_unfitted
from tycheon.backtest.protocol import Origin, RollingOrigin, StaticSplit
from tycheon.data.panel import Panel
from tycheon.errors import InputError
from tycheon.metrics.aggregate import step_loss
from tycheon.metrics.registry import get_metric
from tycheon.stats.bootstrap import paired_block_bootstrap, shared_weights
from tycheon.stats.ranking import (
    TOSTResult,
    pss_resolution,
    pss_units,
    rank_by_mean,
    tost_equivalence,
)

__all__ = [
    "Comparison",
    "RunLosses",
    "SensitivityReport",
    "TargetPairingError",
    "borda",
    "check_cell_pairing",
    "check_same_targets",
    "compare_runs",
    "fitted_state",
    "run_losses",
    "sensitivity_protocols",
    "sensitivity_record",
    "sensitivity_report",
    "sensitivity_runs",
]


class TargetPairingError(InputError):
    """Two runs compared for sensitivity do not score identical targets; the message names the first
    difference (audit, section 4.5)."""


Protocol = RollingOrigin | StaticSplit


def check_same_targets(
    p: Protocol, q: Protocol, panel: Panel, *, min_history: int = 1, labels: tuple[str, str] = ("p", "q")
) -> None:
    """Refuse two protocols that do not score identical (target period, step) pairs on ``panel``, naming
    the first (earliest target, then step) pair scored by one and not the other.

    The set test is :meth:`scored_pairs` of each protocol, as in
    :func:`tycheon.backtest.protocol.same_targets`, which only answers yes or no.
    """
    a = p.scored_pairs(panel, min_history=min_history)
    b = q.scored_pairs(panel, min_history=min_history)
    if a == b:
        return
    first = min(a ^ b)
    has, lacks = (labels[0], labels[1]) if first in a else (labels[1], labels[0])
    raise TargetPairingError(
        f"protocols {labels[0]} and {labels[1]} score different targets: (target {first[0].date()}, step "
        f"{first[1]}) is scored by {has} but not by {lacks} ({len(a ^ b)} pair(s) differ); a sensitivity "
        "comparison needs identical scored (target, step) pairs (protocol-sensitivity audit, section 4.5)"
    )


def sensitivity_protocols(
    base: RollingOrigin,
    panel: Panel,
    *,
    static_gap: int = 3,
    boundary_shifts: Sequence[int] = (-3, -1, 1, 3),
    refit_shift: int = 2,
    min_history: int = 1,
) -> dict[str, Protocol]:
    """The audit's runs on the origins of ``base``: the rolling reference, the static reference and the
    intraprotocol perturbations, every one scoring the same targets (checked).

    The static reference fits once ``static_gap`` periods before the first origin (``StaticSplit`` with
    the first origin as boundary and ``embargo=static_gap``), so its training boundary can move both ways
    without reaching a target: a shift ``s`` fits at ``first - static_gap + s``. The rolling references
    are ``embargo=1`` and the refit calendar moved ``refit_shift`` periods earlier (each origin's model
    fitted on the data published ``refit_shift`` periods before it; with a refit at every origin, as this
    engine's rolling origin has, the model sees what an embargo of that length would leave it).

    Returns
    -------
    dict
        ``rolling``, ``static``, ``static_boundary<+s>``, ``rolling_embargo1``,
        ``rolling_refit<-s>`` -> protocol.
    """
    if base.embargo != 0:
        raise InputError(
            f"the rolling reference must have embargo 0 (its perturbation is embargo 1); got {base.embargo}"
        )
    origins: list[Origin] = base.origins(panel, min_history=min_history)
    first = origins[0].index
    common: dict[str, Any] = {
        "horizon": base.horizon,
        "stride": base.stride,
        "n_origins": len(origins),
        "mode": base.mode,
    }
    shifts = sorted({int(s) for s in boundary_shifts})
    if any(abs(s) > static_gap for s in shifts) or static_gap < 0:
        raise InputError(
            f"boundary shifts {shifts} must lie within the static gap of {static_gap} periods, "
            "or the shifted boundary would train on a target"
        )
    runs: dict[str, Protocol] = {
        "rolling": RollingOrigin(first_origin=first, **common),
        "static": StaticSplit(boundary=first, embargo=static_gap, **common),
    }
    for s in shifts:
        runs[f"static_boundary{s:+d}"] = StaticSplit(boundary=first, embargo=static_gap - s, **common)
    runs["rolling_embargo1"] = RollingOrigin(first_origin=first, embargo=1, **common)
    if refit_shift > 0:
        runs[f"rolling_refit{-refit_shift:+d}"] = RollingOrigin(first_origin=first, embargo=refit_shift, **common)
    ref = runs["rolling"]
    for name, prot in runs.items():
        check_same_targets(ref, prot, panel, min_history=min_history, labels=("rolling", name))
    return runs


@dataclass(frozen=True, eq=False)
class RunLosses:
    """One run reduced to what the sensitivity analysis reads.

    Attributes
    ----------
    label : str
    models : tuple of str
        Sorted.
    series : ndarray of str
        Sorted series ids.
    coord : ndarray, shape (series, step, model)
        Mean per-step loss over the origins (NaN where a model has no forecast for that coordinate).
    panel_coord : ndarray, shape (step, model)
        Mean per-step loss over every scored cell of the step (the panel-level coordinates).
    model_mean : dict
        Model -> mean per-step loss over all its cells (the order of the run).
    cells : ndarray of int64
        Sorted keys of the scored (model, series, target period, step) cells.
    periods : ndarray of datetime64[ns]
        Target periods the keys index.
    """

    label: str
    models: tuple[str, ...]
    series: np.ndarray
    coord: np.ndarray
    panel_coord: np.ndarray
    model_mean: dict[str, float]
    cells: np.ndarray
    periods: np.ndarray
    metric: str = "rmsse"
    meta: dict[str, object] = field(default_factory=dict)


def run_losses(table: pd.DataFrame, *, label: str, metric: str = "rmsse", unit: str = "series") -> RunLosses:
    """Reduce one run's score-set table (one unit) to per-coordinate losses and its cell keys.

    Rows whose per-step loss is not finite (a zero in-sample scale) are left out, in both the losses and
    the cell keys, so two runs agree on them exactly when they agree on the scales.
    """
    spec = get_metric(metric)
    if spec.step_loss is None or not spec.lower_is_better:
        raise InputError(f"metric {metric!r} has no per-step loss to rank on; use e.g. 'rmsse' or 'mase'")
    if "unit" not in table.columns:
        raise InputError(f"run {label!r} is not a score-set table (column 'unit' missing)")
    rows = (table["unit"] == unit).to_numpy()
    if not rows.any():
        raise InputError(f"run {label!r} has no rows for unit {unit!r}")
    # only the columns the loss and the keys need, as arrays: no copy of the whole table
    col = {
        c: table[c].to_numpy() if rows.all() else table[c].to_numpy()[rows]
        for c in ("model", "series_id", "target_period", "step", "actual", "point", "scale_mae", "scale_rmse")
    }
    loss = step_loss(pd.DataFrame({c: col[c] for c in ("actual", "point", "scale_mae", "scale_rmse")}), metric)
    ok = np.isfinite(loss)
    if not ok.all():
        col = {c: v[ok] for c, v in col.items()}
        loss = loss[ok]
    m_code, models = factorize_sorted(col["model"])
    s_code, series = factorize_sorted(col["series_id"])
    p_code, periods = factorize_sorted(col["target_period"])
    step = col["step"].astype(np.int64)
    n_m, n_s, n_p, n_h = len(models), len(series), len(periods), int(step.max())
    flat = (s_code * n_h + (step - 1)) * n_m + m_code
    sums = np.bincount(flat, weights=loss, minlength=n_s * n_h * n_m)
    counts = np.bincount(flat, minlength=n_s * n_h * n_m)
    with np.errstate(invalid="ignore"):
        coord = (sums / counts).reshape(n_s, n_h, n_m)  # [series, step, model]
    pflat = (step - 1) * n_m + m_code
    psum = np.bincount(pflat, weights=loss, minlength=n_h * n_m)
    pcnt = np.bincount(pflat, minlength=n_h * n_m)
    with np.errstate(invalid="ignore"):
        panel_coord = (psum / pcnt).reshape(n_h, n_m)  # [step, model]
    msum = np.bincount(m_code, weights=loss, minlength=n_m)
    mcnt = np.bincount(m_code, minlength=n_m)
    cells = np.sort(((m_code.astype(np.int64) * n_s + s_code) * n_p + p_code) * n_h + (step - 1))
    return RunLosses(
        label=label,
        models=tuple(str(m) for m in models),
        series=np.asarray(series, dtype=str),
        coord=coord,
        panel_coord=panel_coord,
        model_mean={str(m): float(msum[k] / mcnt[k]) for k, m in enumerate(models)},
        cells=cells,
        periods=np.asarray(periods, dtype="datetime64[ns]"),
        metric=metric,
    )


def fitted_state(factories: Mapping[str, Factory]) -> dict[str, bool]:
    """Whether each model learns anything when it is fitted (its class overrides ``Forecaster._fit``).

    A model that does not forecasts from the history published at its origin alone, so every protocol
    here (they differ only in when and on what a model is fitted) hands it the same information and its
    forecasts, hence its rank, cannot move: a roster of such models has PSS 0 by construction. An opaque
    factory (one that does not say what it builds) counts as having fitted state.
    """
    out = {}
    for name, factory in factories.items():
        unfitted = factory_unfitted(factory)
        if unfitted is None:
            out[name] = True
            continue
        # the class that defines the _fit hook the model runs: the base Forecaster (which also defines the
        # fit template method) when no subclass overrides it
        owner = next(c for c in type(unfitted).__mro__ if "_fit" in vars(c))
        out[name] = "fit" not in vars(owner)
    return out


def sensitivity_runs(
    panel: Panel,
    base: RollingOrigin,
    factories: Mapping[str, Factory],
    *,
    metric: str = "rmsse",
    unit: str = "series",
    static_gap: int = 3,
    boundary_shifts: Sequence[int] = (-3, -1, 1, 3),
    refit_shift: int = 2,
    min_history: int = 1,
    **engine_options: Any,
) -> dict[str, RunLosses]:
    """Backtest ``factories`` under every protocol of :func:`sensitivity_protocols` and reduce each run
    with :func:`run_losses` as soon as it ends (one score set in memory at a time).

    ``engine_options`` go to :func:`tycheon.backtest.engine.run` (backend, n_jobs, seed, ...); every run
    gets the same ones, and models are refitted in every run (audit, section 4.6 step 2). A model that
    fails in one run and not in another leaves the runs unpaired, which :func:`check_cell_pairing`
    then refuses.
    """
    protocols = sensitivity_protocols(
        base,
        panel,
        static_gap=static_gap,
        boundary_shifts=boundary_shifts,
        refit_shift=refit_shift,
        min_history=min_history,
    )
    out = {}
    for name, protocol in protocols.items():
        scores = engine.run(panel, protocol, factories, units=(unit,), min_history=min_history, **engine_options)
        out[name] = run_losses(scores.table, label=name, metric=metric, unit=unit)
        del scores
    return out


def _decode(run: RunLosses, key: int) -> str:
    n_h = run.coord.shape[1]
    n_p, n_s = len(run.periods), len(run.series)
    step, rest = key % n_h + 1, key // n_h
    p, rest = rest % n_p, rest // n_p
    s, m = rest % n_s, rest // n_s
    return (
        f"model {run.models[m]!r}, series {str(run.series[s])!r}, target "
        f"{pd.Timestamp(run.periods[p]).date()}, step {step}"
    )


def check_cell_pairing(a: RunLosses, b: RunLosses) -> None:
    """Refuse two runs that did not score identical (model, series, target period, step) cells, naming
    the first difference (audit, section 4.5: pairing verified at the cell level)."""
    for what in ("models", "series", "periods"):
        x, y = getattr(a, what), getattr(b, what)
        if len(x) != len(y) or not np.array_equal(x, y):
            diff = sorted(set(map(str, x)) ^ set(map(str, y)))
            first = diff[0] if diff else "(same items, different order)"
            side = a.label if first in set(map(str, x)) else b.label
            raise TargetPairingError(
                f"runs {a.label!r} and {b.label!r} score different {what}: first difference {first} "
                f"(only in {side!r}); a sensitivity comparison needs identical scored cells"
            )
    if a.cells.shape == b.cells.shape and np.array_equal(a.cells, b.cells):
        return
    only_a = np.setdiff1d(a.cells, b.cells, assume_unique=True)
    only_b = np.setdiff1d(b.cells, a.cells, assume_unique=True)
    first_a = only_a[0] if only_a.size else None
    first_b = only_b[0] if only_b.size else None
    if first_b is None or (first_a is not None and first_a < first_b):
        where, has, lacks = _decode(a, int(first_a)), a.label, b.label  # type: ignore[arg-type]
    else:
        where, has, lacks = _decode(b, int(first_b)), b.label, a.label
    raise TargetPairingError(
        f"runs {a.label!r} and {b.label!r} score different cells ({only_a.size + only_b.size} differ): first "
        f"{where} is scored by {has!r} but not by {lacks!r}; a sensitivity comparison needs identical scored "
        "(target, step) cells (protocol-sensitivity audit, section 4.5)"
    )


@dataclass(frozen=True, eq=False)
class Comparison:
    """PSS and winner swap between two runs, per series and at panel level.

    ``pss_u`` / ``swap_u`` are ``[series]`` (NaN / False where no coordinate is defined: fewer than two
    candidates or every coordinate tied); ``n_coords_dropped`` counts the (series, step) coordinates left
    out because either run tied every candidate there.
    """

    a: str
    b: str
    pss_u: np.ndarray
    swap_u: np.ndarray
    defined: np.ndarray
    n_coords_dropped: int
    panel_pss: float
    panel_swap: bool
    resolution: float


def compare_runs(a: RunLosses, b: RunLosses) -> Comparison:
    """PSS and winner swap of run ``b`` against run ``a`` (after :func:`check_cell_pairing`), per series
    and on the panel-level coordinates, by :func:`tycheon.stats.ranking.pss_units`."""
    check_cell_pairing(a, b)
    per = pss_units(a.coord, b.coord)
    panel = pss_units(a.panel_coord[None], b.panel_coord[None])
    n_m, n_h = len(a.models), a.coord.shape[1]
    return Comparison(
        a.label,
        b.label,
        per.pss,
        per.winner_swap,
        np.isfinite(per.pss),
        int(per.n_coords_dropped.sum()),
        float(panel.pss[0]),
        bool(panel.winner_swap[0]),
        pss_resolution(n_m, n_h),
    )


def _mean_ci(values: np.ndarray, blocks: np.ndarray, *, seed: int, n_resamples: int) -> dict[str, float]:
    """Mean of ``values`` with the percentile interval of its block bootstrap (zero as the other arm)."""
    if values.size < 2:
        return {"mean": float(values.mean()) if values.size else np.nan, "ci_low": np.nan, "ci_high": np.nan}
    r = paired_block_bootstrap(np.zeros_like(values), values, blocks=blocks, n_resamples=n_resamples, seed=seed)
    return {"mean": r.delta, "ci_low": r.ci_low, "ci_high": r.ci_high}


def borda(orders: Mapping[str, Mapping[str, int]]) -> pd.DataFrame:
    r"""Borda aggregation of K rankings: mean rank per model, ties broken by name (audit, section 5.5).

    .. math:: \bar r_m = \frac1K \sum_{k=1}^K r^{(k)}_m

    Returns a frame indexed by model with ``mean_rank`` and ``borda_rank`` (competition ranks of the mean
    rank, :func:`tycheon.stats.ranking.rank_by_mean`), sorted by it.
    """
    if not orders:
        raise InputError("borda needs at least one ranking")
    frame = pd.DataFrame({k: pd.Series(v, dtype=float) for k, v in orders.items()})
    if frame.isna().any().any():
        raise InputError("every ranking must rank the same models for a Borda count")
    mean = frame.mean(axis=1)
    ranks = rank_by_mean({str(m): float(v) for m, v in mean.items()})
    out = pd.DataFrame({"mean_rank": mean, "borda_rank": pd.Series(ranks)})
    return out.sort_values(["borda_rank", "mean_rank"]).rename_axis("model")


@dataclass(frozen=True, eq=False)
class SensitivityReport:
    r"""The audit's battery for one dataset and unit; every table is a DataFrame ready to store.

    Attributes
    ----------
    comparisons : DataFrame
        One row per compared run against its reference: ``kind`` (between/within), ``protocol``,
        ``reference``, ``run``, ``n_series``, ``pss_mean``/``ci_low``/``ci_high``, ``swap_share``/
        ``swap_ci_low``/``swap_ci_high``, ``panel_pss``, ``panel_swap``, ``n_coords_dropped``.
    attribution : DataFrame
        Per protocol: paired difference :math:`B_u - N_{u,p}` (mean, bootstrap CI, p-value), the
        descriptive ratio, and TOST of the difference within :math:`\pm\delta`.
    tost : TOSTResult
        Equivalence of mean between-protocol PSS to zero within :math:`\delta`.
    ranks : DataFrame
        Model x run: the rank (by mean loss) in every run, plus Borda mean rank and rank, the reference
        rank, its range and the share of runs that keep it ("how stable is this order").
    resolution : float
        :math:`\delta = 4/[M(M-1)H]`.
    """

    comparisons: pd.DataFrame
    attribution: pd.DataFrame
    tost: TOSTResult
    ranks: pd.DataFrame
    resolution: float
    metric: str
    n_models: int
    horizon: int


def _reference_of(name: str) -> str:
    return "static" if name.startswith("static") else "rolling"


def sensitivity_report(
    runs: Mapping[str, RunLosses],
    *,
    seed: int = 0,
    n_resamples: int = 2000,
    blocks: np.ndarray | None = None,
    alpha: float = 0.05,
) -> SensitivityReport:
    """The audit's battery over reduced runs named as by :func:`sensitivity_protocols`.

    ``rolling`` and ``static`` are required (the between contrast); every other run is an intraprotocol
    reference of the protocol its name starts with. ``blocks`` labels each series for the bootstrap
    (default: every series its own block; pass e.g. a region to resample regions, as the audit resamples
    countries).

    References
    ----------
    Protocol-sensitivity audit, sections 4 (PSS, winner swap, resolution), 4.5 (pairing), 4.6 (bootstrap,
    TOST), 5.2 (attribution), 5.5 (Borda) and 6.5 (the ranking-variance report).
    """
    # its bootstraps all resample the same series with one seed: the weights are drawn once for all
    with shared_weights():
        return _report(runs, seed=seed, n_resamples=n_resamples, blocks=blocks, alpha=alpha)


def _report(
    runs: Mapping[str, RunLosses], *, seed: int, n_resamples: int, blocks: np.ndarray | None, alpha: float
) -> SensitivityReport:
    for need in ("rolling", "static"):
        if need not in runs:
            raise InputError(f"sensitivity needs a {need!r} run; got {sorted(runs)}")
    ref = {"rolling": runs["rolling"], "static": runs["static"]}
    series = ref["rolling"].series
    lab = np.arange(len(series)) if blocks is None else np.asarray(blocks)
    if lab.shape != series.shape:
        raise InputError(f"blocks must label each of the {len(series)} series")
    between = compare_runs(ref["rolling"], ref["static"])
    within = {name: compare_runs(ref[_reference_of(name)], run) for name, run in runs.items() if name not in ref}
    rows = []
    for kind, name, comp in [("between", "static", between)] + [("within", n, c) for n, c in within.items()]:
        d = comp.defined
        m = _mean_ci(comp.pss_u[d], lab[d], seed=seed, n_resamples=n_resamples)
        w = _mean_ci(comp.swap_u[d].astype(np.float64), lab[d], seed=seed, n_resamples=n_resamples)
        rows.append(
            {
                "kind": kind,
                "protocol": "both" if kind == "between" else _reference_of(name),
                "reference": comp.a,
                "run": comp.b,
                "n_series": int(d.sum()),
                "pss_mean": m["mean"],
                "pss_ci_low": m["ci_low"],
                "pss_ci_high": m["ci_high"],
                "swap_share": w["mean"],
                "swap_ci_low": w["ci_low"],
                "swap_ci_high": w["ci_high"],
                "panel_pss": comp.panel_pss,
                "panel_swap": comp.panel_swap,
                "n_coords_dropped": comp.n_coords_dropped,
            }
        )
    delta = between.resolution
    attribution = []
    for prot in ("static", "rolling"):
        mine = [c for n, c in within.items() if _reference_of(n) == prot]
        if not mine:
            continue
        stack = np.stack([c.pss_u for c in mine])  # [reference, series]
        n_def = np.isfinite(stack).sum(axis=0)
        with np.errstate(invalid="ignore"):
            n_u = np.where(np.isfinite(stack), stack, 0.0).sum(axis=0) / n_def  # [series] mean within PSS
        ok = between.defined & np.isfinite(n_u)
        b_u, n_u = between.pss_u[ok], n_u[ok]
        row: dict[str, object] = {
            "protocol": prot,
            "n_references": len(mine),
            "n_series": int(ok.sum()),
            "between_mean": float(b_u.mean()) if b_u.size else np.nan,
            "within_mean": float(n_u.mean()) if n_u.size else np.nan,
        }
        if b_u.size >= 2:
            r = paired_block_bootstrap(n_u, b_u, blocks=lab[ok], n_resamples=n_resamples, seed=seed)
            t = tost_equivalence(b_u - n_u, delta=delta, alpha=alpha)
            row.update(
                {
                    "diff_mean": r.delta,
                    "diff_ci_low": r.ci_low,
                    "diff_ci_high": r.ci_high,
                    "diff_p": r.p_value,
                    "ratio": float(b_u.mean() / n_u.mean()) if n_u.mean() > 0 else np.nan,
                    "tost_p": t.p_value,
                    "tost_equivalent": t.equivalent,
                }
            )
        attribution.append(row)
    b_ok = between.pss_u[between.defined]
    if b_ok.size >= 2:
        tost = tost_equivalence(b_ok, delta=delta, alpha=alpha)
    else:
        raise InputError("the between-protocol comparison has fewer than two series with a defined PSS")
    orders = {name: rank_by_mean(run.model_mean) for name, run in runs.items()}
    ranks = pd.DataFrame(orders)
    ranks = ranks.join(borda(orders))
    refr = ranks["rolling"]
    ranks["reference_rank"] = refr
    ranks["rank_min"] = ranks[list(orders)].min(axis=1)
    ranks["rank_max"] = ranks[list(orders)].max(axis=1)
    ranks["keep_share"] = ranks[list(orders)].eq(refr, axis=0).mean(axis=1)
    ranks = ranks.sort_values(["reference_rank", "borda_rank"]).rename_axis("model")
    return SensitivityReport(
        pd.DataFrame(rows),
        pd.DataFrame(attribution),
        tost,
        ranks,
        delta,
        runs["rolling"].metric,
        len(runs["rolling"].models),
        runs["rolling"].coord.shape[1],
    )


def sensitivity_record(
    report: SensitivityReport, *, runs: Mapping[str, str] | None = None, fitted: Mapping[str, bool] | None = None
) -> dict[str, object]:
    """The report as one record: the resolution, the TOST of mean between-protocol PSS, the comparison
    and attribution rows, and one rank row per model (rank in every run, Borda, range, keep share).
    ``runs`` maps a run name to its description (e.g. the protocol's ``describe()`` in words);
    ``fitted`` (from :func:`fitted_state`) says which models learn when fitted.

    Values are plain Python/numpy scalars (NaN where undefined); the caller turns them into JSON.
    """
    order = [
        c
        for c in report.ranks.columns
        if c not in ("mean_rank", "borda_rank", "reference_rank", "rank_min", "rank_max", "keep_share")
    ]
    t = report.tost
    ranks = [
        {
            "model": str(m),
            "ranks": {r: int(row[r]) for r in order},
            "mean_rank": float(row["mean_rank"]),
            "borda_rank": int(row["borda_rank"]),
            "reference_rank": int(row["reference_rank"]),
            "rank_min": int(row["rank_min"]),
            "rank_max": int(row["rank_max"]),
            "keep_share": float(row["keep_share"]),
        }
        for m, row in report.ranks.iterrows()
    ]
    return {
        "metric": report.metric,
        "n_models": report.n_models,
        "horizon": report.horizon,
        "resolution": report.resolution,
        "runs": [{"name": r, "description": (runs or {}).get(r, r)} for r in order],
        "tost": {"mean": t.mean, "low": t.low, "high": t.high, "p_value": t.p_value, "equivalent": t.equivalent},
        "comparisons": report.comparisons.to_dict(orient="records"),
        "attribution": report.attribution.to_dict(orient="records"),
        "ranks": ranks,
        "fitted_state": {str(m): bool(v) for m, v in (fitted or {}).items()},
    }
