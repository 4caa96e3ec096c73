r"""Protocol sensitivity: would another legitimate evaluation protocol have ranked the roster otherwise?

The audit (protocol-sensitivity audit, sections 4-6) compares the ranking of the same candidates under
two protocol configurations on **identical scored targets**, and reads that displacement against the
displacement left when only a convention *inside* one protocol changes:

- *between*: the static split against the rolling origin (:func:`sensitivity_protocols` builds both on
  the same origins);
- *within* (intraprotocol references): the static training boundary moved by :math:`\pm 1` and
  :math:`\pm 3` periods, the rolling embargo 0 -> 1 and 0 -> 2, and the rolling refit calendar from
  every origin to every ``k``-th and ``k + 1``-th (fit at the refit origins, update in between: the
  engine's fit/update split, :class:`tycheon.forecasters.base.FitUpdateForecaster`).

This module runs them: the protocols, each run reduced (:func:`run_losses`) to per-coordinate losses
(for every series :math:`u` and step :math:`h`, the coordinates, equally weighted, the mean over origins
of the metric's per-step loss, :func:`tycheon.metrics.aggregate.step_loss`; RMSSE: :math:`e^2/s^2`), and
the pairing checks that refuse two runs that did not score the same cells (model, series, target period,
step), naming the first difference (audit, section 4.5: unpaired runs measure sample replacement, not
convention noise). The comparison of two runs (PSS, winner swap) and the audit's battery over the K runs
live in :mod:`tycheon.analysis.sensitivity_report`; its names (:func:`compare_runs`, :func:`borda`,
:func:`sensitivity_report`, :func:`sensitivity_record`, ...) are re-exported here.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from tycheon.analysis.sensitivity_report import (
        Comparison,
        SensitivityReport,
        borda,
        compare_runs,
        sensitivity_record,
        sensitivity_report,
    )

# the report's names, re-exported on first use: the report module reads this one's runs and pairing check,
# so importing it here at import time would make a cycle
_REPORT = ("Comparison", "SensitivityReport", "borda", "compare_runs", "sensitivity_record", "sensitivity_report")

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


def __getattr__(name: str) -> Any:
    if name not in _REPORT:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("tycheon.analysis.sensitivity_report"), name)
    globals()[name] = value  # cache: the next access is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


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
    refit_every: int = 2,
    min_history: int = 1,
) -> dict[str, Protocol]:
    """The audit's runs on the origins of ``base``: the rolling reference, the static reference and the
    intraprotocol perturbations, every one scoring the same targets (checked).

    The static reference fits once ``static_gap`` periods before the first origin (``StaticSplit`` with
    the first origin as boundary and ``embargo=static_gap``) and updates after (parameters kept, state
    advanced with the data published by each origin), so its training boundary can move both ways
    without reaching a target: a shift ``s`` fits at ``first - static_gap + s``. The rolling references
    (protocol-sensitivity audit, section 4.2: conventions a practitioner could defend inside the rolling
    protocol) are an embargo of 1 period and of ``refit_shift`` periods (each origin's model estimated on
    the data published that many periods before it and updated to the origin), and the refit calendars
    ``refit_every = k`` and ``k + 1`` (refit at every k-th origin, updated at the others).

    Returns
    -------
    dict
        ``rolling``, ``static``, ``static_boundary<+s>``, ``rolling_embargo1``,
        ``rolling_embargo<refit_shift>`` (when above 1), ``rolling_refit_every<k>`` and
        ``rolling_refit_every<k+1>`` (when ``k >= 2``) -> protocol.
    """
    if base.embargo != 0:
        raise InputError(
            f"the rolling reference must have embargo 0 (its perturbation is embargo 1); got {base.embargo}"
        )
    if refit_every < 1 or refit_shift < 0:
        raise InputError(f"refit_every must be >= 1 and refit_shift >= 0, got {refit_every} and {refit_shift}")
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
    if refit_shift > 1:
        runs[f"rolling_embargo{refit_shift}"] = RollingOrigin(first_origin=first, embargo=refit_shift, **common)
    if refit_every >= 2:
        for k in (refit_every, refit_every + 1):
            runs[f"rolling_refit_every{k}"] = RollingOrigin(first_origin=first, refit_every=k, **common)
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
    refit_every: int = 2,
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
        refit_every=refit_every,
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
