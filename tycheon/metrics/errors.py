"""The metric errors, kept importable from here; they are defined once in :mod:`tycheon.errors`."""

from tycheon.errors import CRPSKindMismatchError, MetricInputError, ScaleMismatchError, ZeroScaleError

__all__ = ["CRPSKindMismatchError", "MetricInputError", "ScaleMismatchError", "ZeroScaleError"]
