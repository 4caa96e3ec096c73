"""The verdict against the random walk (ADR-0006 decision 6): hard to win, hard to lose.

One rule, one function for every caller: :func:`verdict_vs_random_walk` states it; :func:`family_verdicts` applies
it to a table's family of challengers with the one-sided p-values adjusted for multiplicity (the
leaderboard calls it); :func:`verdict_from_scores` runs the two one-sided DM tests on score-set rows of one
pair and applies the same rule. The tests are panel-robust by default (:func:`tycheon.stats.dm.dm_panel`:
nothing assumed independent across series); ``inference="pooled"`` is the series-independent variant.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Literal

import numpy as np
import pandas as pd

from tycheon.errors import StatisticInputError
from tycheon.metrics.aggregate import row_crps, row_scales, step_loss
from tycheon.metrics.probabilistic import CRPSKind
from tycheon.stats.dm import DMResult, dm_panel, dm_pooled, panel_layout, pooled_layout
from tycheon.stats.multiplicity import benjamini_hochberg, holm

__all__ = [
    "Adjustment",
    "FamilyVerdict",
    "Verdict",
    "VerdictLabel",
    "family_verdicts",
    "verdict_from_scores",
    "verdict_vs_random_walk",
]

VerdictLabel = Literal["beats", "worse", "indistinguishable"]
Adjustment = Literal["bh", "holm", "none"]


def _verdict_rule(p_better: Sequence[float], p_worse: Sequence[float], *, alpha: float) -> VerdictLabel:
    """The rule of :func:`verdict_vs_random_walk` on each leg's p-values of "better" and of "worse"."""
    if all(p < alpha for p in p_better):
        return "beats"
    if all(p < alpha for p in p_worse):
        return "worse"
    return "indistinguishable"


def verdict_vs_random_walk(p_squared_error: float, p_crps: float, *, alpha: float = 0.05) -> VerdictLabel:
    r"""Combine the two one-sided DM p-values (challenger more accurate than the random walk).

    The rule, the one formula every verdict applies (:func:`family_verdicts` applies it to adjusted p-values):

    .. math::

        \text{beats} \iff p_{\mathrm{SE}} < \alpha \wedge p_{\mathrm{CRPS}} < \alpha, \qquad
        \text{worse} \iff (1-p)_{\mathrm{SE}} < \alpha \wedge (1-p)_{\mathrm{CRPS}} < \alpha

    and ``"indistinguishable"`` otherwise. Both p-values are for the alternative "the challenger's
    expected loss is lower", so :math:`1-p`, the p-value of the reverse, below :math:`\alpha` is evidence
    that the challenger is worse.

    References
    ----------
    ADR-0006 decision 6; Diebold & Mariano (1995).
    """
    for name, p in (("p_squared_error", p_squared_error), ("p_crps", p_crps)):
        if not (np.isfinite(p) and 0.0 <= p <= 1.0):
            raise StatisticInputError(f"{name} must be a p-value in [0, 1]; got {p!r}")
    if not 0.0 < alpha < 0.5:
        raise StatisticInputError(f"alpha must be in (0, 0.5); got {alpha}")
    return _verdict_rule((p_squared_error, p_crps), (1.0 - p_squared_error, 1.0 - p_crps), alpha=alpha)


@dataclass(frozen=True, kw_only=True)
class FamilyVerdict:
    """A challenger's verdict within a table's family, with the raw and adjusted one-sided p-values.

    ``p_*_adj`` are the adjusted p-values of "the challenger is better"; ``p_*_worse_adj`` those of "the
    challenger is worse" (the adjusted :math:`1-p`).
    """

    verdict: VerdictLabel
    p_se: float
    p_crps: float
    p_se_adj: float
    p_crps_adj: float
    p_se_worse_adj: float
    p_crps_worse_adj: float


def _adjust(p: np.ndarray, method: Adjustment) -> np.ndarray:
    if method == "bh":
        return benjamini_hochberg(p)
    if method == "holm":
        return holm(p)
    if method == "none":
        return p
    raise StatisticInputError(f"adjust must be 'bh', 'holm' or 'none'; got {method!r}")


def family_verdicts(
    p_squared_error: Mapping[str, float],
    p_crps: Mapping[str, float],
    *,
    alpha: float = 0.05,
    adjust: Adjustment = "bh",
) -> dict[str, FamilyVerdict]:
    r"""The verdict of every challenger of one table, with its one-sided p-values adjusted in the family.

    The family is the challengers :math:`1..m` that have both p-values. Each leg's p-values (:math:`p` for
    "better", :math:`1-p` for "worse") are adjusted across the family with Benjamini-Hochberg (default) or
    Holm,

    .. math::

        \tilde p_{\ell,i} = \mathrm{adj}(p_{\ell,1}, \dots, p_{\ell,m})_i, \qquad
        \widetilde{(1-p)}_{\ell,i} = \mathrm{adj}(1-p_{\ell,1}, \dots, 1-p_{\ell,m})_i, \qquad
        \ell \in \{\mathrm{SE}, \mathrm{CRPS}\}

    and the rule of :func:`verdict_vs_random_walk` (stated there only) is applied to challenger :math:`i`
    with :math:`\tilde p` in place of :math:`p` and :math:`\widetilde{(1-p)}` in place of :math:`1-p`.
    With ``adjust="none"`` this is exactly :func:`verdict_vs_random_walk`.

    Parameters
    ----------
    p_squared_error, p_crps : mapping
        Challenger -> one-sided p-value that its point loss / CRPS is lower than the random walk's.
    alpha : float
        Level, in (0, 0.5).
    adjust : {"bh", "holm", "none"}
        Multiplicity adjustment within the family.

    References
    ----------
    ADR-0006 decision 6; Benjamini & Hochberg (1995); Holm (1979).
    """
    if not 0.0 < alpha < 0.5:
        raise StatisticInputError(f"alpha must be in (0, 0.5); got {alpha}")
    family = sorted(set(p_squared_error) & set(p_crps))
    if not family:
        return {}
    raw = {leg: np.array([float(ps[m]) for m in family]) for leg, ps in (("se", p_squared_error), ("crps", p_crps))}
    for leg, p in raw.items():
        if not (np.isfinite(p).all() and ((p >= 0) & (p <= 1)).all()):
            raise StatisticInputError(f"p-values of the {leg} leg must be in [0, 1]; got {p.tolist()}")
    better = {leg: _adjust(p, adjust) for leg, p in raw.items()}
    worse = {leg: _adjust(1.0 - p, adjust) for leg, p in raw.items()}
    out = {}
    for i, m in enumerate(family):
        label = _verdict_rule((better["se"][i], better["crps"][i]), (worse["se"][i], worse["crps"][i]), alpha=alpha)
        out[m] = FamilyVerdict(
            verdict=label,
            p_se=float(raw["se"][i]),
            p_crps=float(raw["crps"][i]),
            p_se_adj=float(better["se"][i]),
            p_crps_adj=float(better["crps"][i]),
            p_se_worse_adj=float(worse["se"][i]),
            p_crps_worse_adj=float(worse["crps"][i]),
        )
    return out


@dataclass(frozen=True)
class Verdict:
    """Verdict and the two one-sided pooled DM tests behind it."""

    verdict: VerdictLabel
    squared_error: DMResult
    crps: DMResult
    crps_kind: CRPSKind
    n_pairs: int


def verdict_from_scores(
    table: pd.DataFrame,
    *,
    challenger: str,
    baseline: str = "naive",
    horizon: int,
    stride: int = 1,
    quantile_levels: Sequence[float] = (),
    samples: np.ndarray | None = None,
    crps_kind: CRPSKind | None = None,
    metric: str | None = None,
    alpha: float = 0.05,
    inference: Literal["panel", "pooled"] = "panel",
) -> Verdict:
    r"""One-sided DM tests of a challenger against the random walk on score-set rows.

    .. math::

        d^{\mathrm{SE}} = (\hat y^{c} - y)^2 - (\hat y^{b} - y)^2, \qquad
        d^{\mathrm{CRPS}} = \mathrm{CRPS}^{c} - \mathrm{CRPS}^{b}, \qquad
        H_1: E\,d < 0

    Rows of the two models are paired on (unit, series_id, origin, step); the losses are the squared
    error :math:`(\hat y - y)^2` and the CRPS (exact from samples or approximate from quantiles, one
    kind for both models, never mixed; ``crps_kind`` is checked by
    :func:`~tycheon.metrics.aggregate.row_crps`). Each differential :math:`d = L^{\text{challenger}} -
    L^{\text{baseline}}` is tested with :func:`~tycheon.stats.dm.dm_panel` (averaged over series per origin,
    tested over the origins: robust to shocks shared across series), or with ``inference="pooled"`` by
    :func:`~tycheon.stats.dm.dm_pooled` (assumes series independent), ``alternative="less"``, and the
    p-values go to :func:`verdict_vs_random_walk`.

    With ``metric`` (e.g. ``"mase"``) the point leg is that metric's per-step loss from the metric registry
    (:func:`~tycheon.metrics.aggregate.step_loss`: scaled, as on a leaderboard of that metric) and the
    CRPS is divided by each row's MASE scale, so a single pair gets the leaderboard's verdict (which
    additionally adjusts p-values within a table's family, :func:`family_verdicts`). ``crps_kind=
    "band_quantiles"`` scores the conformal bands on the shared grid, the leaderboard's kind.

    References
    ----------
    ADR-0006 decisions 5-7.
    """
    needed = ("model", "unit", "series_id", "origin", "step", "actual", "point")
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise StatisticInputError(f"score-set table lacks column(s) {missing}")
    scored = row_crps(table, quantile_levels=quantile_levels, samples=samples, crps_kind=crps_kind)
    crps, kind = scored.values, scored.kind
    keys = ["unit", "series_id", "origin", "step"]
    err = table["point"].to_numpy(dtype=np.float64) - table["actual"].to_numpy(dtype=np.float64)
    if metric is None:
        point_loss = err * err
    else:
        point_loss = step_loss(table, metric)
        crps = crps / row_scales(table, columns=("scale_mae",))["scale_mae"]
    frame = table[["model", *keys]].assign(se=point_loss, crps=crps)
    sides = {}
    for role, name in (("challenger", challenger), ("baseline", baseline)):
        part = frame[frame["model"] == name].drop(columns="model")
        if part.empty:
            raise StatisticInputError(
                f"{role} model {name!r} has no rows; models present: {sorted(table['model'].unique())}"
            )
        sides[role] = part
    pairs = sides["challenger"].merge(sides["baseline"], on=keys, suffixes=("_c", "_b"), validate="one_to_one")
    if pairs.empty:
        raise StatisticInputError(f"{challenger!r} and {baseline!r} share no (unit, series, origin, step) rows")
    no_crps = ~np.isfinite(pairs[["crps_c", "crps_b"]].to_numpy()).all(axis=1)
    if no_crps.any():
        raise StatisticInputError(
            f"{int(no_crps.sum())} paired row(s) lack a {kind} CRPS for one of the models; the CRPS leg of "
            "the verdict needs both models scored the same way (ADR-0006 decision 7)"
        )
    origin = pairs["origin"].to_numpy()
    if inference == "pooled":
        series = (pairs["unit"].astype(str) + "\x1f" + pairs["series_id"].astype(str)).to_numpy()
        test = partial(dm_pooled, layout=pooled_layout(series, origin))
    elif inference == "panel":
        test = partial(dm_panel, layout=panel_layout(origin))
    else:
        raise StatisticInputError(f"inference must be 'panel' or 'pooled'; got {inference!r}")
    dm_se, dm_crps = (
        test(
            pairs[f"{leg}_c"].to_numpy(),
            pairs[f"{leg}_b"].to_numpy(),
            horizon=horizon,
            stride=stride,
            alternative="less",
        )
        for leg in ("se", "crps")  # fmt: skip
    )
    label = verdict_vs_random_walk(dm_se.p_value, dm_crps.p_value, alpha=alpha)
    return Verdict(label, dm_se, dm_crps, kind, len(pairs))
