"""Exceptions and warnings raised by :mod:`tycheon.metrics` and :mod:`tycheon.stats`."""

from __future__ import annotations

__all__ = [
    "CRPSKindMismatchError",
    "MetricInputError",
    "ScaleMismatchError",
    "ZeroScaleError",
]


class MetricInputError(ValueError):
    """An input to a metric or a test has the wrong shape, type or values (NaN, negative scale, ...)."""


class ZeroScaleError(MetricInputError):
    """A scaled metric was asked for on a series whose in-sample seasonal-naive scale is zero."""


class CRPSKindMismatchError(MetricInputError):
    """Exact (sample) and approximate (quantile) CRPS values were put into one comparison (ADR-0006, 7)."""


class ScaleMismatchError(MetricInputError):
    """Rows of one (unit, series, origin) block carry different scales: a combination was scaled apart
    from the methods it is compared with (the error of the evaluation-choices paper, section 11)."""
