"""Intermittent-demand methods (Croston, Croston-SBA, TSB, ADIDA, IMAPA), vectorised over the panel.

The recursions live in :mod:`tycheon.forecasters.kernels.smoothing` (numba, one compiled loop over the
series) and follow statsforecast 2.x exactly (``CrostonClassic``, ``CrostonSBA``, ``TSB``, ``ADIDA``,
``IMAPA``), including its edge cases: a series with no demand forecasts 0 (Croston via its naive
fallback, the last value, which is then 0). All give a flat point forecast; intervals are the engine's
conformal bands.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar

import numpy as np

from tycheon.forecasters.base import Capabilities, History, run_start
from tycheon.forecasters.kernels.smoothing import (
    adida_level,
    adida_params,
    adida_update,
    croston_level,
    imapa_level,
    imapa_params,
    imapa_update,
    tsb_level,
)
from tycheon.forecasters.registry import register
from tycheon.forecasters.roster._common import check_unit_interval, flat
from tycheon.forecasters.roster.baselines import PanelForecaster

__all__ = ["AdidaForecaster", "CrostonForecaster", "CrostonSbaForecaster", "ImapaForecaster", "TsbForecaster"]

_CAPS = Capabilities(min_obs=1, vectorised=True)


@register("croston", roster="default", cost="closed_form", traits={"intermittent", "equivariant"})
class CrostonForecaster(PanelForecaster):
    """Croston's method: :math:`\\hat y = \\hat z / \\hat p` with :math:`\\hat z` the SES (alpha 0.1) of
    the positive demand sizes and :math:`\\hat p` the SES (alpha 0.1) of the intervals between demands,
    the first interval counted from the series start; SES starts at the first element
    (:math:`f_1 = x_1`). No positive demand: the last value. Croston (1972)."""

    capabilities: ClassVar[Capabilities] = _CAPS

    def _point(self, values, starts, *, season, horizon):
        return flat(croston_level(values, starts), horizon)


@register("croston_sba", roster="default", cost="closed_form", traits={"intermittent", "equivariant"})
class CrostonSbaForecaster(PanelForecaster):
    """Syntetos-Boylan approximation: Croston's estimate times :math:`1 - \\alpha/2 = 0.95`
    (alpha 0.1), which removes Croston's bias. Syntetos & Boylan (2005)."""

    capabilities: ClassVar[Capabilities] = _CAPS

    def _point(self, values, starts, *, season, horizon):
        return flat(croston_level(values, starts) * 0.95, horizon)


@register(
    "tsb",
    roster="default",
    cost="closed_form",
    traits={"intermittent", "equivariant"},
    test_params=[{"alpha_d": 0.1, "alpha_p": 0.3}],
)
class TsbForecaster(PanelForecaster):
    """Teunter-Syntetos-Babai: :math:`\\hat y = \\hat\\pi\\,\\hat z` with :math:`\\hat\\pi` the SES
    (``alpha_p``) of the occurrence indicator :math:`1[y_t \\ne 0]` over every period and :math:`\\hat z`
    the SES (``alpha_d``) of the positive sizes. No demand: 0. Teunter et al. (2011).

    Parameters
    ----------
    alpha_d, alpha_p : float
        Smoothing weights in (0, 1] for size and probability (defaults 0.2, 0.2).
    """

    capabilities: ClassVar[Capabilities] = _CAPS

    def __init__(self, *, alpha_d: float = 0.2, alpha_p: float = 0.2) -> None:
        check_unit_interval("alpha_d", alpha_d)
        check_unit_interval("alpha_p", alpha_p)
        self.alpha_d = alpha_d
        self.alpha_p = alpha_p

    def _point(self, values, starts, *, season, horizon):
        return flat(tsb_level(values, starts, float(self.alpha_d), float(self.alpha_p)), horizon)


class _KeptBlocks(PanelForecaster):
    """ADIDA and IMAPA with a fit/update split: ``fit`` estimates each series' block length(s) and SES
    weight(s) on the training history; ``predict`` keeps them and smooths the block sums of the history
    published by the origin (the state update). A series the fit did not see is estimated at its first
    origin and kept until the next fit; an all-zero training series has nothing to keep and is
    estimated on its predict history. On the training history itself the update equals the estimate. A
    forecaster never fitted estimates on every history it is given and keeps nothing."""

    capabilities: ClassVar[Capabilities] = _CAPS

    def _fit(self, history: History) -> None:
        self.fitted_: dict[Any, tuple[int, np.ndarray]] = {}
        if not history.n_periods:
            return
        # the current run of each series, as a predict history has it: a training history (all of the past)
        # may hold a series that exited (unobserved at its end: not kept, it is not forecast from this fit)
        # or that exited and re-entered (only the run since its re-entry is kept)
        observed = np.asarray(history.observed, dtype=bool)
        since = np.maximum(run_start(observed, history.n_periods), np.argmax(observed, axis=1))
        current = np.array([observed[i, since[i] :].all() for i in range(len(since))], dtype=bool)
        current &= observed[:, -1]
        values = np.asarray(history.values, dtype=np.float64)
        self._keep(history.series_ids[current], values[current], since[current])

    def _keep(self, ids: np.ndarray, values: np.ndarray, starts: np.ndarray) -> None:
        finite = np.array([np.isfinite(values[i, starts[i] :]).all() for i in range(len(ids))], dtype=bool)
        if not finite.any():
            return
        length, weight = self._params(values[finite], starts[finite])
        for k, sid in enumerate(ids[finite]):
            if length[k]:
                self.fitted_[sid] = (int(length[k]), np.atleast_1d(weight[k]))

    def _history_point(self, history, values, starts, *, season, horizon):
        if not hasattr(self, "fitted_"):  # never fitted: estimated on this history, kept nowhere
            return self._point(values, starts, season=season, horizon=horizon)
        fitted = self.fitted_
        ids = history.series_ids
        unseen = np.array([sid not in fitted for sid in ids], dtype=bool)
        if unseen.any():
            self._keep(ids[unseen], values[unseen], starts[unseen])
        kept = [fitted.get(sid, (0, np.full(1, np.nan))) for sid in ids]
        length = np.array([k[0] for k in kept], dtype=np.int64)
        weight = np.full((len(ids), max(len(k[1]) for k in kept) if kept else 1), np.nan)
        for i, (_, w) in enumerate(kept):
            weight[i, : len(w)] = w
        return flat(self._update(values, starts, length, weight), horizon)

    @abstractmethod
    def _params(self, values: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(block length[series], weight[series, ...])`` estimated on each series (length 0: nothing)."""

    @abstractmethod
    def _update(self, values: np.ndarray, starts: np.ndarray, length: np.ndarray, weight: np.ndarray) -> np.ndarray:
        """``[series]`` one-step levels with the kept lengths and weights (0: estimated here)."""


@register("adida", roster="default", cost="closed_form", traits={"intermittent", "equivariant_pow2"})
class AdidaForecaster(_KeptBlocks):
    """ADIDA: sum the series in non-overlapping blocks of :math:`a = \\mathrm{round}(\\overline{\\text{interval}})`
    periods (the incomplete block at the start dropped), forecast the block sums with SES whose alpha
    minimises in-sample SSE on [0.1, 0.3] (golden section), and divide by :math:`a`. No demand: 0.
    Nikolopoulos et al. (2011). Fit and update: :math:`a` and alpha are estimated at ``fit`` and kept at the
    origins it serves (see :class:`_KeptBlocks`)."""

    def _point(self, values, starts, *, season, horizon):
        return flat(adida_level(values, starts), horizon)

    def _params(self, values, starts):
        return adida_params(values, starts)

    def _update(self, values, starts, length, weight):
        return adida_update(values, starts, length, weight[:, 0])


@register("imapa", roster="default", cost="closed_form", traits={"intermittent", "equivariant_pow2"})
class ImapaForecaster(_KeptBlocks):
    """IMAPA: the mean over block lengths :math:`a = 1..\\mathrm{round}(\\overline{\\text{interval}})` of
    the ADIDA per-period estimate at each length. No demand: 0. Petropoulos & Kourentzes (2015). Fit and
    update: the largest length and the weight at each length are estimated at ``fit`` and kept."""

    def _point(self, values, starts, *, season, horizon):
        return flat(imapa_level(values, starts), horizon)

    def _params(self, values, starts):
        return imapa_params(values, starts)

    def _update(self, values, starts, length, weight):
        return imapa_update(values, starts, length, weight)
