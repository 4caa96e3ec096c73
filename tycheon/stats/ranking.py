"""Comparing rankings: Kendall tau-b, Spearman, the Protocol Sensitivity Score, winner swap, the PSS
resolution and TOST equivalence (protocol-sensitivity audit, section 4)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from tycheon._validate import as_float_array, check_finite, same_shape
from tycheon.errors import StatisticInputError

__all__ = [
    "rank_by_mean",
    "TOSTResult",
    "UnitDisplacement",
    "kendall_tau_b",
    "pss",
    "pss_resolution",
    "pss_units",
    "spearman",
    "spearman_test",
    "tost_equivalence",
    "winner_swap",
]


def _vectors(x: object, y: object) -> tuple[np.ndarray, np.ndarray]:
    a = as_float_array(x, "x", ndim=(1,))
    b = as_float_array(y, "y", ndim=(1,))
    same_shape(x=a, y=b)
    check_finite(a, "x")
    check_finite(b, "y")
    if a.size < 2:
        raise StatisticInputError("rank correlations need at least two items")
    return a, b


def _tau_b_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kernel: tau-b of each row pair of ``x, y [coord, item]`` via all item pairs (M is small)."""
    sx = np.sign(x[:, :, None] - x[:, None, :])
    sy = np.sign(y[:, :, None] - y[:, None, :])
    iu = np.triu_indices(x.shape[1], 1)
    sx, sy = sx[:, iu[0], iu[1]], sy[:, iu[0], iu[1]]
    num = np.sum(sx * sy, axis=1)
    den = np.sqrt(np.sum(sx != 0, axis=1) * np.sum(sy != 0, axis=1).astype(np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / den, np.nan)


def kendall_tau_b(x: object, y: object) -> float:
    r"""Kendall's tau-b (tie-aware).

    .. math:: \tau_b = \frac{n_c - n_d}{\sqrt{(n_0 - n_1)(n_0 - n_2)}}

    with :math:`n_0 = n(n-1)/2` and :math:`n_1, n_2` the pairs tied in ``x`` and in ``y``. NaN when one
    side is constant (undefined).

    References
    ----------
    Kendall, M. G. (1945). The treatment of ties in ranking problems. Biometrika 33(3).
    """
    a, b = _vectors(x, y)
    return float(_tau_b_rows(a[None, :], b[None, :])[0])


def spearman(x: object, y: object) -> float:
    r"""Spearman's rank correlation: Pearson correlation of average ranks.

    .. math:: \rho = \operatorname{corr}(\operatorname{rank}(x), \operatorname{rank}(y))

    References
    ----------
    Spearman, C. (1904). The proof and measurement of association. Am. J. Psychol. 15(1).
    """
    a, b = _vectors(x, y)
    ra, rb = stats.rankdata(a), stats.rankdata(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    den = np.sqrt((ra @ ra) * (rb @ rb))
    return float(ra @ rb / den) if den > 0 else float("nan")


def spearman_test(x: object, y: object) -> tuple[float, float]:
    r"""Spearman's :math:`\rho` with a two-sided p-value from the t approximation.

    .. math:: t = \rho\sqrt{\frac{n-2}{1-\rho^2}} \sim t_{n-2} \quad (H_0:\ \rho = 0)

    The p-value is NaN for fewer than three items (no degrees of freedom) and 0 for :math:`|\rho| = 1`.

    References
    ----------
    Zar, J. H. (1972). Significance testing of the Spearman rank correlation coefficient. JASA 67(339),
    578-580 (the convention of ``scipy.stats.spearmanr``).
    """
    rho = spearman(x, y)
    n = as_float_array(x, "x", ndim=(1,)).size
    if n < 3 or not np.isfinite(rho):
        return rho, float("nan")
    if abs(rho) >= 1.0:
        return rho, 0.0
    t = rho * np.sqrt((n - 2) / (1.0 - rho * rho))
    return rho, float(2.0 * stats.t.sf(abs(t), n - 2))


def _coords(losses_p: object, losses_q: object, weights: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    p = as_float_array(losses_p, "losses_p", ndim=(2,))
    q = as_float_array(losses_q, "losses_q", ndim=(2,))
    same_shape(losses_p=p, losses_q=q)
    check_finite(p, "losses_p")
    check_finite(q, "losses_q")
    if p.shape[1] < 2:
        raise StatisticInputError("need at least two candidates per coordinate")
    if weights is None:
        w = np.full(p.shape[0], 1.0 / p.shape[0])
    else:
        w = as_float_array(weights, "weights", ndim=(1,))
        if w.shape != (p.shape[0],) or np.any(w < 0) or not np.isclose(w.sum(), 1.0):
            raise StatisticInputError("weights must be one non-negative number per coordinate, summing to 1")
    return p, q, w


def pss(losses_p: object, losses_q: object, *, weights: object = None) -> float:
    r"""Protocol Sensitivity Score between two configurations' losses ``[coordinate, candidate]``.

    .. math:: \mathrm{PSS} = \sum_c w_c\,(1 - \tau_b(\ell^{(p)}_{c\cdot}, \ell^{(q)}_{c\cdot}))

    in :math:`[0, 2]`: 0 identical rankings, 1 no concordance, 2 reversal. Tau-b handles ties
    (audit, section 4.3); a coordinate where one configuration ties every candidate is undefined and
    raises.

    References
    ----------
    Protocol-sensitivity audit, section 4, eq. (1); Kendall (1938, 1945).
    """
    p, q, w = _coords(losses_p, losses_q, weights)
    tau = _tau_b_rows(p, q)
    if np.isnan(tau).any():
        raise StatisticInputError(
            f"tau-b undefined at coordinate(s) {np.flatnonzero(np.isnan(tau)).tolist()}: all tied"
        )
    return float(np.sum(w * (1.0 - tau)))


def winner_swap(losses_p: object, losses_q: object, *, weights: object = None) -> bool:
    r"""Whether the lowest-loss candidate differs on a majority of the weighted coordinates.

    .. math:: \mathrm{WS} = \mathbb 1\Big\{\sum_c w_c\,\mathbb 1\{\arg\min_m \ell^{(p)}_{cm} \ne
        \arg\min_m \ell^{(q)}_{cm}\} > \tfrac12\Big\}

    Ties for the minimum resolve to the first candidate in column order.

    References
    ----------
    Protocol-sensitivity audit, section 4, eq. (2).
    """
    p, q, w = _coords(losses_p, losses_q, weights)
    differ = np.argmin(p, axis=1) != np.argmin(q, axis=1)
    return bool(np.sum(w * differ) > 0.5)


def pss_resolution(n_candidates: int, n_coordinates: int) -> float:
    r"""Smallest non-zero PSS with complete untied rankings and equal weights.

    .. math:: \delta = \frac{4}{M(M-1)H}

    References
    ----------
    Protocol-sensitivity audit, section 4, eq. (3) (:math:`M=3, H=7`: :math:`2/21`).
    """
    if n_candidates < 2 or n_coordinates < 1:
        raise StatisticInputError("need M >= 2 candidates and H >= 1 coordinates")
    return 4.0 / (n_candidates * (n_candidates - 1) * n_coordinates)


@dataclass(frozen=True)
class TOSTResult:
    """Two one-sided t-tests of :math:`|\\mu| < \\delta` (or :math:`\\mu` in the given bounds)."""

    mean: float
    p_lower: float
    p_upper: float
    p_value: float
    equivalent: bool
    low: float
    high: float


def tost_equivalence(values: object, *, delta: float, low: float | None = None, alpha: float = 0.05) -> TOSTResult:
    r"""TOST equivalence of a mean (e.g. of per-unit PSS) to the interval :math:`(\mathrm{low}, \delta)`.

    .. math::

        t_L = \frac{\bar x - \mathrm{low}}{s/\sqrt n},\ p_L = P(T_{n-1} > t_L); \quad
        t_U = \frac{\bar x - \delta}{s/\sqrt n},\ p_U = P(T_{n-1} < t_U); \quad
        p = \max(p_L, p_U)

    ``low`` defaults to :math:`-\delta`. Equivalence is declared when :math:`p < \alpha`.

    Zero standard error (all values equal): each one-sided p-value is the limit of the :math:`t`-test as
    :math:`s \to 0`, i.e. 0 when the mean is strictly inside its bound, 1 when strictly outside and 1/2
    exactly on it; so constant values strictly inside the interval are equivalent, on a bound they are not.

    References
    ----------
    Schuirmann, D. J. (1987). A comparison of the two one-sided tests procedure. J. Pharmacokinet.
    Biopharm. 15(6); protocol-sensitivity audit, section 4.6.
    """
    x = as_float_array(values, "values", ndim=(1,))
    check_finite(x, "values")
    if x.size < 2:
        raise StatisticInputError("TOST needs at least two values")
    lo = -delta if low is None else float(low)
    if not lo < delta:
        raise StatisticInputError(f"need low < delta; got low={lo}, delta={delta}")
    n = x.size
    m = float(x.mean())
    se = float(x.std(ddof=1) / np.sqrt(n))
    if se == 0:  # the se -> 0 limit of each one-sided t-test (documented above)
        p_l = 0.0 if m > lo else (0.5 if m == lo else 1.0)
        p_u = 0.0 if m < delta else (0.5 if m == delta else 1.0)
    else:
        p_l = float(stats.t.sf((m - lo) / se, n - 1))
        p_u = float(stats.t.cdf((m - delta) / se, n - 1))
    p = max(p_l, p_u)
    return TOSTResult(m, p_l, p_u, p, p < alpha, lo, float(delta))


def rank_by_mean(means: dict[str, float]) -> dict[str, int]:
    r"""Competition ranks ("1224") of models by mean loss: lower is better, ties share the lower rank.

    .. math:: r_m = 1 + \#\{k : \bar L_k < \bar L_m\}

    NaN means rank after every finite one (and share a rank among themselves); the order among tied
    models, where a caller lists them, is by name.

    Parameters
    ----------
    means : dict
        Model -> mean loss (lower is better).

    Returns
    -------
    dict
        Model -> rank, 1 for the best.

    References
    ----------
    Evaluation-choices paper, Table 2 (models ranked by mean loss); ties as ``scipy.stats.rankdata``'s
    ``method="min"``.
    """
    ordered = sorted(means, key=lambda m: (np.isnan(means[m]), means[m], m))
    ranks: dict[str, int] = {}
    for pos, m in enumerate(ordered, 1):
        if pos > 1:
            prev = ordered[pos - 2]
            a, b = means[prev], means[m]
            if a == b or (np.isnan(a) and np.isnan(b)):
                ranks[m] = ranks[prev]
                continue
        ranks[m] = pos
    return ranks


@dataclass(frozen=True, eq=False)
class UnitDisplacement:
    """PSS and winner swap of many units at once (:func:`pss_units`)."""

    pss: np.ndarray  # [unit], NaN where no coordinate is defined
    winner_swap: np.ndarray  # [unit] bool
    n_coords: np.ndarray  # [unit] coordinates used
    n_coords_dropped: np.ndarray  # [unit] coordinates left out (tau-b undefined: tied throughout)
    displacement: np.ndarray | None = None  # [unit, coord] 1 - tau-b, NaN where undefined
    winner_differs: np.ndarray | None = None  # [unit, coord] bool, False where undefined


def pss_units(losses_p: object, losses_q: object, *, chunk: int = 4096) -> UnitDisplacement:
    r""":func:`pss` and :func:`winner_swap` for every unit of ``[unit, coordinate, candidate]`` losses,
    vectorised over units, with equal weights over each unit's *defined* coordinates.

    .. math::

        \mathrm{PSS}_u = \frac{1}{|C_u|}\sum_{c \in C_u} \big(1 - \tau_b(\ell^{(p)}_{uc\cdot},
            \ell^{(q)}_{uc\cdot})\big), \qquad
        \mathrm{WS}_u = \mathbb 1\Big\{\frac{1}{|C_u|}\sum_{c \in C_u} \mathbb 1\{\arg\min_m
            \ell^{(p)}_{ucm} \ne \arg\min_m \ell^{(q)}_{ucm}\} > \tfrac12\Big\}

    A NaN loss means the candidate is absent at that coordinate (both configurations must agree on
    where): pairs involving it count neither as concordant, discordant nor untied, which is tau-b on the
    present candidates. :math:`C_u` is the set of coordinates where tau-b is defined (at least one untied
    pair on each side); the others are counted in ``n_coords_dropped``. A unit without one has NaN PSS
    and no swap. Ties for the minimum resolve to the first candidate in column order, as in
    :func:`winner_swap`.

    References
    ----------
    Protocol-sensitivity audit, section 4, eqs. (1)-(2); Kendall (1945).
    """
    p = as_float_array(losses_p, "losses_p", ndim=(3,))
    q = as_float_array(losses_q, "losses_q", ndim=(3,))
    same_shape(losses_p=p, losses_q=q)
    if not np.array_equal(np.isnan(p), np.isnan(q)):
        raise StatisticInputError("losses_p and losses_q must have NaN (absent candidates) in the same cells")
    if np.isinf(p).any() or np.isinf(q).any():
        raise StatisticInputError("losses must be finite or NaN (absent)")
    n_u, n_c, n_m = p.shape
    if n_m < 2:
        raise StatisticInputError("need at least two candidates per coordinate")
    tau = np.empty((n_u, n_c))
    for start in range(0, n_u, chunk):
        sl = slice(start, start + chunk)
        a, b = p[sl].reshape(-1, n_m), q[sl].reshape(-1, n_m)
        with np.errstate(invalid="ignore"):
            t = _tau_b_rows(np.nan_to_num(a, nan=0.0) + 0.0, np.nan_to_num(b, nan=0.0) + 0.0)
        if np.isnan(a).any():  # recompute rows with absent candidates on their present pairs only
            rows = np.flatnonzero(np.isnan(a).any(axis=1))
            sx = np.sign(a[rows, :, None] - a[rows, None, :])
            sy = np.sign(b[rows, :, None] - b[rows, None, :])
            iu = np.triu_indices(n_m, 1)
            sx = np.nan_to_num(sx[:, iu[0], iu[1]], nan=0.0)
            sy = np.nan_to_num(sy[:, iu[0], iu[1]], nan=0.0)
            den = np.sqrt(np.sum(sx != 0, axis=1) * np.sum(sy != 0, axis=1).astype(np.float64))
            with np.errstate(invalid="ignore", divide="ignore"):
                t[rows] = np.where(den > 0, np.sum(sx * sy, axis=1) / den, np.nan)
        tau[sl] = t.reshape(-1, n_c)
    defined = np.isfinite(tau)  # [unit, coord]
    n_def = defined.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        pss_u = np.where(defined, 1.0 - tau, 0.0).sum(axis=1) / n_def
        differ = np.argmin(np.where(np.isnan(p), np.inf, p), axis=2) != np.argmin(
            np.where(np.isnan(q), np.inf, q), axis=2
        )  # [unit, coord]
        share = np.where(defined, differ, False).sum(axis=1) / n_def
    swap = np.where(n_def > 0, share > 0.5, False)
    return UnitDisplacement(
        np.where(n_def > 0, pss_u, np.nan),
        swap,
        n_def,
        n_c - n_def,
        displacement=np.where(defined, 1.0 - tau, np.nan),
        winner_differs=defined & differ,
    )
