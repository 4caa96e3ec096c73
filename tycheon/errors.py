"""The exceptions and warnings of tycheon: one base class to catch, specific subclasses to filter.

Every error tycheon raises on purpose derives from :class:`TycheonError`; bad input to a public
function derives from :class:`InputError` (also a :class:`ValueError`, so existing ``except ValueError``
code keeps working). Warnings a user may want to filter derive from :class:`TycheonWarning`.

This module is neutral: it imports nothing from tycheon, so every layer can raise these classes.
"""

from __future__ import annotations

__all__ = [
    "CRPSKindMismatchError",
    "InputError",
    "MetricInputError",
    "ScaleMismatchError",
    "StatisticInputError",
    "TycheonError",
    "TycheonWarning",
    "ZeroScaleError",
]


class TycheonError(Exception):
    """Base class of every error tycheon raises on purpose: ``except tycheon.TycheonError`` catches them."""


class TycheonWarning(UserWarning):
    """Base class of tycheon's warnings (filter them with ``warnings.filterwarnings(..., TycheonWarning)``)."""


class InputError(TycheonError, ValueError):
    """An input to a public function has the wrong shape, type or values; the message says what, where,
    and what is accepted."""


class MetricInputError(InputError):
    """An input to a metric has the wrong shape, type or values (NaN, negative scale, unknown metric, ...)."""


class StatisticInputError(InputError):
    """An input to a statistical test or ranking has the wrong shape, type or values, or too few blocks."""


class ZeroScaleError(MetricInputError):
    """A scaled metric was asked for on a series whose in-sample seasonal-naive scale is zero."""


class CRPSKindMismatchError(MetricInputError):
    """Exact (sample) and approximate (quantile) CRPS values were put into one comparison (ADR-0006, 7)."""


class ScaleMismatchError(MetricInputError):
    """Rows of one (unit, series, origin) block carry different scales: a combination was scaled apart
    from the methods it is compared with (the error of the evaluation-choices paper, section 11)."""
