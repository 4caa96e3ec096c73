r"""The protocol-sensitivity comparison and report: how far two reduced runs
(:class:`~tycheon.analysis.sensitivity.RunLosses`) rank the roster apart, and the audit's battery over
the K runs of :func:`~tycheon.analysis.sensitivity.sensitivity_protocols` (protocol-sensitivity audit,
sections 4-6).

A comparison of two runs (:func:`compare_runs`) first proves that they scored the same cells (model,
series, target period, step; :func:`~tycheon.analysis.sensitivity.check_cell_pairing`, naming the first
difference otherwise), then computes per series

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
(:func:`~tycheon.stats.ranking.pss_resolution`, audit eq. 3); the Borda mean rank over the K runs; the
between contrast step by step (:func:`by_horizon`); the hard-reversal prevalence after Borda aggregation of
K-run subsets of each arm (:func:`aggregation_curves`); and the ranking-variance report
("how stable is this order"): each model's rank in every run, its range, and how
often it keeps the reference rank. :func:`sensitivity_record` writes the report as one record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from tycheon.analysis.sensitivity import RunLosses, check_cell_pairing
from tycheon.errors import InputError
from tycheon.stats.bootstrap import paired_block_bootstrap, shared_weights
from tycheon.stats.ranking import TOSTResult, pss_resolution, pss_units, rank_by_mean, tost_equivalence

__all__ = [
    "Comparison",
    "SensitivityReport",
    "aggregation_curves",
    "borda",
    "by_horizon",
    "compare_runs",
    "sensitivity_record",
    "sensitivity_report",
]


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
    displacement: np.ndarray  # [series, step] 1 - tau-b, NaN where undefined
    winner_differs: np.ndarray  # [series, step] bool, False where undefined


def compare_runs(a: RunLosses, b: RunLosses) -> Comparison:
    """PSS and winner swap of run ``b`` against run ``a`` (after
    :func:`~tycheon.analysis.sensitivity.check_cell_pairing`), per series and on the panel-level
    coordinates, by :func:`tycheon.stats.ranking.pss_units`."""
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
        np.asarray(per.displacement),
        np.asarray(per.winner_differs),
    )


def _mean_ci(values: np.ndarray, blocks: np.ndarray, *, seed: int, n_resamples: int) -> dict[str, float]:
    """Mean of ``values`` with the percentile interval of its block bootstrap (zero as the other arm)."""
    if values.size < 2:
        return {"mean": float(values.mean()) if values.size else np.nan, "ci_low": np.nan, "ci_high": np.nan}
    r = paired_block_bootstrap(np.zeros_like(values), values, blocks=blocks, n_resamples=n_resamples, seed=seed)
    return {"mean": r.delta, "ci_low": r.ci_low, "ci_high": r.ci_high}


def _pss_and_swap(
    pss: np.ndarray, swap: np.ndarray, blocks: np.ndarray, *, seed: int, n_resamples: int
) -> dict[str, float | int]:
    """``n_series`` and the means of PSS values and winner-swap indicators with their bootstrap intervals."""
    m = _mean_ci(pss, blocks, seed=seed, n_resamples=n_resamples)
    w = _mean_ci(swap.astype(np.float64), blocks, seed=seed, n_resamples=n_resamples)
    return {
        "n_series": int(pss.size),
        "pss_mean": m["mean"],
        "pss_ci_low": m["ci_low"],
        "pss_ci_high": m["ci_high"],
        "swap_share": w["mean"],
        "swap_ci_low": w["ci_low"],
        "swap_ci_high": w["ci_high"],
    }


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


def by_horizon(
    between: Comparison,
    within: Mapping[str, Comparison],
    blocks: np.ndarray,
    *,
    seed: int = 0,
    n_resamples: int = 2000,
) -> pd.DataFrame:
    r"""PSS and winner disagreement step by step (protocol-sensitivity audit, section 5.3, "how discrepancy
    varies with horizon"): for each step :math:`h`, the mean over series of :math:`1 - \tau_b` between the
    rolling and the static reference at coordinate :math:`(u, h)`, and the share of series whose winner
    differs there, each with its block-bootstrap interval over series; beside them the mean displacement
    of the intraprotocol references at that step (their mean over references and series).

    A step's mean is over the series where :math:`\tau_b` is defined at that step (``n_series``).
    """
    rows = []
    n_h = between.displacement.shape[1]
    for h in range(n_h):
        d = np.isfinite(between.displacement[:, h])
        inside = [c.displacement[:, h] for c in within.values()]
        pooled = np.concatenate([x[np.isfinite(x)] for x in inside]) if inside else np.empty(0)
        rows.append(
            {
                "step": h + 1,
                **_pss_and_swap(
                    between.displacement[d, h],
                    between.winner_differs[d, h],
                    blocks[d],
                    seed=seed,
                    n_resamples=n_resamples,
                ),
                "within_pss_mean": float(pooled.mean()) if pooled.size else np.nan,
            }
        )
    return pd.DataFrame(rows)


def _coordinate_ranks(coord: np.ndarray) -> np.ndarray:
    """``[series, step, model]`` competition ranks (1 = lowest loss) of each coordinate; an absent model
    (NaN) ranks last."""
    from scipy.stats import rankdata

    return rankdata(np.where(np.isnan(coord), np.inf, coord), method="min", axis=2)


def _winners(values: np.ndarray) -> np.ndarray:
    """``[series, step]`` index of the lowest value (ties: the first model in name order)."""
    return np.argmin(np.where(np.isnan(values), np.inf, values), axis=2)


def aggregation_curves(runs: Mapping[str, RunLosses], *, n_draws: int = 100, seed: int = 0) -> pd.DataFrame:
    r"""Does aggregating intraprotocol runs remove the between-protocol discrepancy? (protocol-sensitivity
    audit, section 5.5, Figure 8 and Table 4.)

    For each arm and each :math:`K = 1..n_{arm}`, subsets of :math:`K` runs of the arm (every subset where
    there are at most ``n_draws`` of them, else ``n_draws`` drawn at random with ``seed``) are aggregated
    per coordinate :math:`(u, h)` by the Borda mean rank :math:`\bar r_{uhm} = \frac1K\sum_k r^{(k)}_{uhm}`
    (ties broken by model name); the aggregated winner is compared with the opposite protocol's reference
    run, and a series is a *hard reversal* when they differ on more than half of its steps (the winner swap
    of section 4). Curve A aggregates the static arm (``static`` and its moved boundaries) against the
    rolling reference; curve B the rolling arm (``rolling`` and its references) against the static
    reference. A step counts where the reference run does not tie every present model.

    Returns
    -------
    DataFrame
        One row per (curve, K): ``curve`` (``static_arm``/``rolling_arm``), ``reference``, ``k``,
        ``n_subsets``, ``exhaustive``, ``prevalence_mean`` (mean over subsets of the share of series with
        a hard reversal) and ``prevalence_min``/``prevalence_max`` over the subsets.
    """
    import itertools
    import math

    rng = np.random.default_rng(seed)
    rows = []
    for curve, arm, ref_name in (("static_arm", "static", "rolling"), ("rolling_arm", "rolling", "static")):
        names = sorted(n for n in runs if _reference_of(n) == arm)
        ref = runs[ref_name].coord
        ref_winner = _winners(ref)
        present = np.isfinite(ref)
        lo = np.where(present, ref, np.inf).min(axis=2)
        hi = np.where(present, ref, -np.inf).max(axis=2)
        defined = (present.sum(axis=2) >= 2) & (hi > lo)  # [series, step]
        n_def = defined.sum(axis=1)
        counted = n_def > 0
        ranks = {n: _coordinate_ranks(runs[n].coord) for n in names}
        for k in range(1, len(names) + 1):
            total = math.comb(len(names), k)
            if total <= n_draws:
                subsets = [list(c) for c in itertools.combinations(names, k)]
            else:
                subsets = [sorted(rng.choice(names, size=k, replace=False).tolist()) for _ in range(n_draws)]
            shares = []
            for subset in subsets:
                mean_rank = np.mean([ranks[n] for n in subset], axis=0)
                differs = (_winners(mean_rank) != ref_winner) & defined
                with np.errstate(invalid="ignore", divide="ignore"):
                    reversal = differs.sum(axis=1) / n_def > 0.5
                shares.append(float(reversal[counted].mean()) if counted.any() else np.nan)
            rows.append(
                {
                    "curve": curve,
                    "reference": ref_name,
                    "k": k,
                    "n_subsets": len(subsets),
                    "exhaustive": total <= n_draws,
                    "prevalence_mean": float(np.mean(shares)),
                    "prevalence_min": float(np.min(shares)),
                    "prevalence_max": float(np.max(shares)),
                }
            )
    return pd.DataFrame(rows)


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
    by_horizon : DataFrame
        The between contrast step by step (:func:`by_horizon`).
    aggregation : DataFrame
        Hard-reversal prevalence after Borda aggregation of K runs of each arm (:func:`aggregation_curves`).
    """

    comparisons: pd.DataFrame
    attribution: pd.DataFrame
    tost: TOSTResult
    ranks: pd.DataFrame
    resolution: float
    metric: str
    n_models: int
    horizon: int
    by_horizon: pd.DataFrame
    aggregation: pd.DataFrame


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
    """The audit's battery over reduced runs named as by
    :func:`~tycheon.analysis.sensitivity.sensitivity_protocols`.

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
        rows.append(
            {
                "kind": kind,
                "protocol": "both" if kind == "between" else _reference_of(name),
                "reference": comp.a,
                "run": comp.b,
                **_pss_and_swap(comp.pss_u[d], comp.swap_u[d], lab[d], seed=seed, n_resamples=n_resamples),
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
        by_horizon(between, within, lab, seed=seed, n_resamples=n_resamples),
        aggregation_curves(runs, seed=seed),
    )


def sensitivity_record(
    report: SensitivityReport, *, runs: Mapping[str, str] | None = None, fitted: Mapping[str, bool] | None = None
) -> dict[str, object]:
    """The report as one record: the resolution, the TOST of mean between-protocol PSS, the comparison
    and attribution rows, and one rank row per model (rank in every run, Borda, range, keep share).
    ``runs`` maps a run name to its description (e.g. the protocol's ``describe()`` in words);
    ``fitted`` (from :func:`~tycheon.analysis.sensitivity.fitted_state`) says which models learn when
    fitted.

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
        "by_horizon": report.by_horizon.to_dict(orient="records"),
        "aggregation": report.aggregation.to_dict(orient="records"),
    }
