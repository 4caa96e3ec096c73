"""The DM family against a baseline: a two-sided Diebold-Mariano test of every challenger against the
baseline on one per-step loss of a unit's cells (:class:`~tycheon.analysis.prepared.StepLosses`),
Benjamini-Hochberg adjusted. The panel-robust test (:func:`tycheon.stats.dm.dm_panel`) wherever series are
pooled; the pooled test, which assumes series independent, where a page reproduces the paper's count. No
statistic lives here; each is called from :mod:`tycheon.stats`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from tycheon.analysis.cell import time_check
from tycheon.errors import InputError
from tycheon.stats.dm import dm_cross_sectional, dm_panel, dm_pooled, panel_layout, pooled_layout
from tycheon.stats.multiplicity import benjamini_hochberg

if TYPE_CHECKING:
    from tycheon.analysis.prepared import StepLosses

__all__ = ["DMFamily", "DMTest", "dm_family"]


DMTest = Literal["panel", "pooled", "cross_sectional"]
"""Which DM test a family runs: ``panel`` (:func:`tycheon.stats.dm.dm_panel`: nothing assumed independent
across series), ``pooled`` (:func:`~tycheon.stats.dm.dm_pooled`: **assumes series
independent**) or ``cross_sectional`` (:func:`~tycheon.stats.dm.dm_cross_sectional`: period averages)."""


@dataclass(frozen=True)
class DMFamily:
    """DM of every challenger against the baseline on one per-step loss, BH adjusted."""

    n_better: int
    n_worse: int
    n_tested: int
    n_pooled: int  # per-step losses of the baseline pooled by the tests
    p_value: dict[str, float]
    p_bh: dict[str, float]
    statistic: dict[str, float]
    test: str = "pooled"  # DMTest
    loss: str = "mae"  # the registry metric whose per-step loss is compared (StepLosses.loss)
    reason: str | None = None  # why no model was tested (too few time points for the panel test), else None


def dm_family(
    losses: StepLosses,
    *,
    baseline: str,
    horizon: int,
    stride: int,
    alpha: float,
    metric: str = "mae",
    test: DMTest = "panel",
    loss: np.ndarray | None = None,
) -> DMFamily:
    r"""Two-sided DM of each model against ``baseline`` on the cells both forecast, Benjamini-Hochberg
    adjusted; a model the test refuses (too few blocks or origins) is left out of the family.

    The loss is :meth:`~tycheon.analysis.prepared.StepLosses.loss` of ``metric`` (``mae``: unscaled
    absolute errors, the paper's; a table's metric: the loss that table ranks). ``test``:

    - ``panel``: :func:`tycheon.stats.dm.dm_panel`, the differential averaged over every (series, step)
      of an origin and tested over the origins; nothing is assumed independent across series. The test
      wherever a p-value pools series (the default). Run only when the family's origins pass
      :func:`tycheon.analysis.cell.time_check` (at least :data:`~tycheon.analysis.cell.MIN_TIME_POINTS`);
      otherwise nothing is tested and ``reason`` says why;
    - ``pooled`` (the unit inversion's, whose page shows the paper's pooled count beside the
      cross-sectional one): :func:`~tycheon.stats.dm.dm_pooled` over (series, origin) blocks,
      **assuming series independent** (oversized when series share calendar shocks);
    - ``cross_sectional``: :func:`~tycheon.stats.dm.dm_cross_sectional` on target-period averages.

    ``loss`` is ``losses.loss(metric)`` where the caller has already evaluated it (``[cell, model]``).
    """
    if test not in ("panel", "pooled", "cross_sectional"):
        raise InputError(f"test must be 'panel', 'pooled' or 'cross_sectional'; got {test!r}")
    if baseline not in losses.models:
        return DMFamily(0, 0, 0, 0, {}, {}, {}, test, metric)
    b = losses.models.index(baseline)
    loss = losses.loss(metric) if loss is None else loss  # [cell, model]
    if loss.shape != losses.point.shape:
        raise InputError(f"loss must be [cell, model] {losses.point.shape}; got {loss.shape}")
    base_ok = np.isfinite(loss[:, b])
    if test == "panel":
        reason = time_check(int(np.unique(losses.origin[base_ok]).size), horizon=horizon, stride=stride)
        if reason is not None:
            return DMFamily(0, 0, 0, int(base_ok.sum()), {}, {}, {}, test, metric, reason)
    results = {}
    for j, m in enumerate(losses.models):
        if j == b:
            continue
        both = base_ok & np.isfinite(loss[:, j])
        if not both.any():
            continue
        la, lb = loss[both, j], loss[both, b]
        try:
            if test == "cross_sectional":
                res = dm_cross_sectional(la, lb, period=losses.period[both], horizon=horizon, stride=1)
            elif test == "pooled":
                res = dm_pooled(
                    la, lb, layout=pooled_layout(losses.series[both], losses.origin[both]), horizon=horizon,
                    stride=stride,
                )  # fmt: skip
            else:
                res = dm_panel(la, lb, layout=panel_layout(losses.origin[both]), horizon=horizon, stride=stride)
        except InputError:
            continue
        if np.isfinite(res.p_value):
            results[m] = res
    tested = list(results)
    p_bh = dict(zip(tested, benjamini_hochberg([results[m].p_value for m in tested]), strict=True)) if tested else {}
    better = sum(1 for m in tested if p_bh[m] < alpha and results[m].statistic < 0)
    worse = sum(1 for m in tested if p_bh[m] < alpha and results[m].statistic > 0)
    return DMFamily(
        better,
        worse,
        len(tested),
        int(base_ok.sum()),
        {m: results[m].p_value for m in tested},
        {m: float(p_bh[m]) for m in tested},
        {m: results[m].statistic for m in tested},
        test,
        metric,
    )
