"""Intermittent-demand methods (Croston, Croston-SBA, TSB, ADIDA, IMAPA), vectorised over the panel.

The recursions live in :mod:`tycheon.forecasters.kernels.smoothing` (numba, one compiled loop over the
series) and follow statsforecast 2.x exactly (``CrostonClassic``, ``CrostonSBA``, ``TSB``, ``ADIDA``,
``IMAPA``), including its edge cases: a series with no demand forecasts 0 (Croston via its naive
fallback, the last value, which is then 0). All give a flat point forecast; intervals are the engine's
conformal bands.
"""

from __future__ import annotations

from typing import ClassVar

from tycheon.forecasters.base import Capabilities
from tycheon.forecasters.kernels.smoothing import adida_level, croston_level, imapa_level, tsb_level
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


@register("adida", roster="default", cost="closed_form", traits={"intermittent", "equivariant_pow2"})
class AdidaForecaster(PanelForecaster):
    """ADIDA: sum the series in non-overlapping blocks of :math:`a = \\mathrm{round}(\\overline{\\text{interval}})`
    periods (the incomplete block at the start dropped), forecast the block sums with SES whose alpha
    minimises in-sample SSE on [0.1, 0.3] (golden section), and divide by :math:`a`. No demand: 0.
    Nikolopoulos et al. (2011)."""

    capabilities: ClassVar[Capabilities] = _CAPS

    def _point(self, values, starts, *, season, horizon):
        return flat(adida_level(values, starts), horizon)


@register("imapa", roster="default", cost="closed_form", traits={"intermittent", "equivariant_pow2"})
class ImapaForecaster(PanelForecaster):
    """IMAPA: the mean over block lengths :math:`a = 1..\\mathrm{round}(\\overline{\\text{interval}})` of
    the ADIDA per-period estimate at each length. No demand: 0. Petropoulos & Kourentzes (2015)."""

    capabilities: ClassVar[Capabilities] = _CAPS

    def _point(self, values, starts, *, season, horizon):
        return flat(imapa_level(values, starts), horizon)
