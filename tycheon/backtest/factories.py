"""Factories, not fitted objects (ADR-0006 decision 2).

A run takes, per model, a factory ``(history, fit_time) -> fitted Forecaster``. The engine decides which
history a model may see and when; the factory only builds and fits. Global models are refit through their
factory at every origin (rolling) or once at the boundary (static split), always on data published before
the origin less the embargo.

The two factories here are picklable (they travel to joblib and Dask workers) and tell the engine what
they build (``capabilities``, ``availability()``). A plain callable is accepted too; the engine then knows
nothing of the model and treats it conservatively as global (one task over all series, so a cross-series
model is never fitted on a chunk).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from tycheon.forecasters.base import Availability, Capabilities, Forecaster, History
from tycheon.forecasters.registry import create, get

__all__ = [
    "ConstantFactory",
    "Factory",
    "RegistryFactory",
    "factory_availability",
    "factory_capabilities",
    "factory_unfitted",
    "forecaster_factory",
    "instance_factory",
]

Factory = Callable[[History, pd.Timestamp], Forecaster]


class RegistryFactory:
    """Builds a registered forecaster from parameters and fits it: ``create(id, **params).fit(history)``."""

    def __init__(self, forecaster_id: str, params: dict[str, Any]) -> None:
        self.forecaster_id = forecaster_id
        self.params = dict(params)
        self.forecaster_class = get(forecaster_id)  # an unknown id fails here, listing the known ones

    @property
    def capabilities(self) -> Capabilities:
        return self.forecaster_class.capabilities

    def availability(self) -> Availability:
        return self.forecaster_class.availability()

    def __call__(self, history: History, fit_time: pd.Timestamp) -> Forecaster:
        return create(self.forecaster_id, **self.params).fit(history)

    def unfitted(self) -> Forecaster:
        """The forecaster this factory builds, before fitting."""
        return create(self.forecaster_id, **self.params)

    def __repr__(self) -> str:
        return f"forecaster_factory({self.forecaster_id!r}, **{self.params!r})"


class ConstantFactory:
    """Clones a template forecaster (parameters only) and fits the clone: the ADR's constant factory."""

    def __init__(self, template: Forecaster) -> None:
        self.template = template
        self.forecaster_class = type(template)

    @property
    def capabilities(self) -> Capabilities:
        return self.template.capabilities

    def availability(self) -> Availability:
        return self.template.availability()

    def __call__(self, history: History, fit_time: pd.Timestamp) -> Forecaster:
        return self.template.clone().fit(history)

    def unfitted(self) -> Forecaster:
        """The forecaster this factory builds, before fitting."""
        return self.template.clone()

    def __repr__(self) -> str:
        return f"instance_factory({self.template!r})"


def forecaster_factory(forecaster_id: str, **params: Any) -> RegistryFactory:
    """A factory for a registered forecaster id with constructor parameters."""
    return RegistryFactory(forecaster_id, params)


def instance_factory(forecaster: Forecaster) -> ConstantFactory:
    """A factory that fits a fresh clone of ``forecaster`` at every call (for unregistered forecasters)."""
    if not isinstance(forecaster, Forecaster):
        raise TypeError(f"instance_factory needs a Forecaster, got {type(forecaster).__name__}")
    return ConstantFactory(forecaster)


def factory_capabilities(factory: Factory) -> Capabilities:
    """What the factory builds; an opaque callable is treated as a global model."""
    caps = getattr(factory, "capabilities", None)
    return caps if isinstance(caps, Capabilities) else Capabilities(is_global=True)


def factory_availability(factory: Factory) -> Availability:
    check = getattr(factory, "availability", None)
    return check() if callable(check) else Availability(ok=True)


def factory_unfitted(factory: Factory) -> Forecaster | None:
    """The unfitted forecaster the factory builds, or None when the factory does not say (an opaque
    callable). The engine plans score-set rows with its ``min_history`` and checks the plan against what
    the fitted models actually forecast."""
    unfitted = getattr(factory, "unfitted", None)
    return unfitted() if callable(unfitted) else None
