"""Registry of forecasters by stable id: refuses duplicates, and an unknown id lists the known ones."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from tycheon.errors import TycheonError
from tycheon.forecasters.base import Forecaster

__all__ = ["UnknownForecasterError", "available", "create", "get", "register"]

_REGISTRY: dict[str, type[Forecaster]] = {}

F = TypeVar("F", bound=type[Forecaster])


class UnknownForecasterError(TycheonError, KeyError):
    """An id that no forecaster is registered under."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


def register(forecaster_id: str) -> Callable[[F], F]:
    """Class decorator: register a :class:`Forecaster` subclass under ``forecaster_id``."""

    def decorate(cls: F) -> F:
        if not forecaster_id or not forecaster_id.replace("_", "").replace("-", "").isalnum():
            raise ValueError(f"forecaster id must be non-empty [A-Za-z0-9_-], got {forecaster_id!r}")
        if forecaster_id in _REGISTRY and _REGISTRY[forecaster_id] is not cls:
            raise ValueError(
                f"forecaster id {forecaster_id!r} is already registered to {_REGISTRY[forecaster_id].__name__}"
            )
        if not (isinstance(cls, type) and issubclass(cls, Forecaster)):
            raise TypeError(f"only Forecaster subclasses can be registered, got {cls!r}")
        cls.forecaster_id = forecaster_id
        _REGISTRY[forecaster_id] = cls
        return cls

    return decorate


def _load_roster() -> None:
    # Importing the roster package registers every built-in forecaster; done lazily so that importing
    # the registry has no side effects beyond defining it.
    import tycheon.forecasters.roster  # noqa: F401


def get(forecaster_id: str) -> type[Forecaster]:
    """The class registered under ``forecaster_id``; an unknown id lists the known ones."""
    _load_roster()
    try:
        return _REGISTRY[forecaster_id]
    except KeyError as err:
        known = ", ".join(sorted(_REGISTRY))
        raise UnknownForecasterError(f"unknown forecaster id {forecaster_id!r}; registered ids are: {known}") from err


def available() -> list[str]:
    """Sorted list of registered ids."""
    _load_roster()
    return sorted(_REGISTRY)


def create(forecaster_id: str, **params: Any) -> Forecaster:
    """Instantiate a registered forecaster from keyword parameters."""
    return get(forecaster_id)(**params)
