"""Registry of forecasters by stable id: refuses duplicates, and an unknown id lists the known ones.

A forecaster is declared once, where its class is defined::

    @register("croston", roster="default", cost="closed_form", traits={"intermittent", "equivariant"})
    class CrostonForecaster(PanelForecaster): ...

The registration carries its tags (:class:`ForecasterInfo`): the roster it belongs to, its cost class,
the properties its tests may rely on and extra parameter sets for the generic tests. Everything that
lists forecasters by kind (the default roster of :func:`tycheon.evaluate`, the generated tests) asks
:func:`ids` instead of keeping a list of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, TypeVar, get_args

from tycheon.errors import TycheonError
from tycheon.forecasters.base import Forecaster

__all__ = [
    "Cost",
    "ForecasterInfo",
    "Roster",
    "Trait",
    "UnknownForecasterError",
    "available",
    "create",
    "get",
    "ids",
    "info",
    "register",
]

Roster = Literal["default", "opt_in"]
"""``"default"``: run when no models are named (fast on thousands of series); ``"opt_in"``: run when named
or with ``models="all"``. A forecaster in neither is run only where a config names it."""
Cost = Literal["closed_form", "fitted", "global", "foundation"]
"""``"closed_form"``: a formula or a one-dimensional least-squares search per series, no model selection;
``"fitted"``: a model (or its order) estimated per series at every origin; ``"global"``: one model
trained across the series; ``"foundation"``: a pretrained model."""
Trait = Literal["baseline", "intermittent", "equivariant", "equivariant_pow2"]
"""``"baseline"``: a reference method of the verdicts' kind (random walk, seasonal naive, means);
``"intermittent"``: made for series with many zeros; ``"equivariant"``: the forecast of ``c * y`` is
``c`` times the forecast of ``y`` for every ``c > 0``; ``"equivariant_pow2"``: exactly so only for powers
of two (a search whose comparisons can round differently for other ``c``)."""

ROSTERS: tuple[Roster, ...] = get_args(Roster)
COSTS: tuple[Cost, ...] = get_args(Cost)
TRAITS: tuple[Trait, ...] = get_args(Trait)


@dataclass(frozen=True, kw_only=True)
class ForecasterInfo:
    """The tags a forecaster is registered with (see :func:`register`); ``test_params`` are read-only."""

    forecaster_id: str
    roster: Roster | None
    cost: Cost
    traits: frozenset[Trait]
    test_params: tuple[Mapping[str, Any], ...]


_REGISTRY: dict[str, type[Forecaster]] = {}
_INFO: dict[str, ForecasterInfo] = {}  # registration order

F = TypeVar("F", bound=type[Forecaster])


class UnknownForecasterError(TycheonError, KeyError):
    """An id that no forecaster is registered under."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


def _check_choice(name: str, value: object, accepted: tuple[str, ...]) -> None:
    if value not in accepted:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, accepted))}, got {value!r}")


def register(
    forecaster_id: str,
    *,
    roster: Roster | None = None,
    cost: Cost = "fitted",
    traits: Iterable[Trait] = (),
    test_params: Iterable[Mapping[str, Any]] = (),
) -> Callable[[F], F]:
    """Class decorator: register a :class:`Forecaster` subclass under ``forecaster_id`` with its tags.

    Parameters
    ----------
    forecaster_id : str
        The stable id, ``[A-Za-z0-9_-]``; an id registered to another class is refused.
    roster : {"default", "opt_in"} or None
        The roster it belongs to (:data:`Roster`); None (default): none, it runs where a config names it.
    cost : {"closed_form", "fitted", "global", "foundation"}
        Its cost class (:data:`Cost`); default ``"fitted"``, the cautious guess for a new model.
    traits : iterable of str
        Properties the generic tests check (:data:`Trait`).
    test_params : iterable of dict
        Parameter sets besides the defaults that the generic tests construct it with (sktime's
        ``get_test_params``).
    """
    if not forecaster_id or not forecaster_id.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"forecaster id must be non-empty [A-Za-z0-9_-], got {forecaster_id!r}")
    if roster is not None:
        _check_choice("roster", roster, ROSTERS)
    _check_choice("cost", cost, COSTS)
    if isinstance(traits, str):
        raise TypeError(f"traits must be a collection of trait names, got the string {traits!r}")
    trait_set = frozenset(traits)
    for trait in sorted(trait_set):
        _check_choice("trait", trait, TRAITS)
    entry = ForecasterInfo(
        forecaster_id=forecaster_id,
        roster=roster,
        cost=cost,
        traits=trait_set,
        test_params=tuple(MappingProxyType(dict(p)) for p in test_params),
    )

    def decorate(cls: F) -> F:
        if forecaster_id in _REGISTRY and _REGISTRY[forecaster_id] is not cls:
            raise ValueError(
                f"forecaster id {forecaster_id!r} is already registered to {_REGISTRY[forecaster_id].__name__}"
            )
        if not (isinstance(cls, type) and issubclass(cls, Forecaster)):
            raise TypeError(f"only Forecaster subclasses can be registered, got {cls!r}")
        cls.forecaster_id = forecaster_id
        _REGISTRY[forecaster_id] = cls
        _INFO[forecaster_id] = entry
        return cls

    return decorate


def _load_roster() -> None:
    # Importing the roster package registers every built-in forecaster; done lazily so that importing
    # the registry has no side effects beyond defining it.
    import tycheon.forecasters.roster  # noqa: F401


def _unknown(forecaster_id: str) -> UnknownForecasterError:
    known = ", ".join(sorted(_REGISTRY))
    return UnknownForecasterError(f"unknown forecaster id {forecaster_id!r}; registered ids are: {known}")


def get(forecaster_id: str) -> type[Forecaster]:
    """The class registered under ``forecaster_id``; an unknown id lists the known ones."""
    _load_roster()
    try:
        return _REGISTRY[forecaster_id]
    except KeyError as err:
        raise _unknown(forecaster_id) from err


def info(forecaster_id: str) -> ForecasterInfo:
    """The tags ``forecaster_id`` was registered with; an unknown id lists the known ones."""
    _load_roster()
    try:
        return _INFO[forecaster_id]
    except KeyError as err:
        raise _unknown(forecaster_id) from err


def available() -> list[str]:
    """Sorted list of registered ids."""
    _load_roster()
    return sorted(_REGISTRY)


def ids(*, roster: Roster | None = None, cost: Cost | None = None, trait: Trait | None = None) -> tuple[str, ...]:
    """The ids registered with every tag given, in registration order (None: any).

    The order is the roster modules' (:mod:`tycheon.forecasters.roster`), class by class, so that a
    derived roster reads as its modules do.
    """
    if roster is not None:
        _check_choice("roster", roster, ROSTERS)
    if cost is not None:
        _check_choice("cost", cost, COSTS)
    if trait is not None:
        _check_choice("trait", trait, TRAITS)
    _load_roster()
    return tuple(
        i.forecaster_id
        for i in _INFO.values()
        if i.forecaster_id in _REGISTRY
        and (roster is None or i.roster == roster)
        and (cost is None or i.cost == cost)
        and (trait is None or trait in i.traits)
    )


def create(forecaster_id: str, **params: Any) -> Forecaster:
    """Instantiate a registered forecaster from keyword parameters."""
    return get(forecaster_id)(**params)
