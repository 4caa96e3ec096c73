"""The dataset catalogue: one name per panel, each with its loader, its accepted options, and its
description, frequency, season length and synthetic flag, all read from the loader's own declaration
(the generator's defaults, ``COMPETITIONS`` and ``CALENDAR``, ``FPP3_DATASETS``), never restated here.

>>> from tycheon.data.datasets import load, available_datasets
>>> "m3_monthly" in available_datasets()
True
>>> load("synthetic_marketplace", n_entities=50, n_periods=24).n_series
50
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tycheon.data.competitions import CALENDAR, COMPETITIONS, load_competition
from tycheon.data.fpp3 import FPP3_DATASETS, load_fpp3
from tycheon.data.panel import DEFAULT_SEASON_LENGTH, Panel
from tycheon.data.synthetic import generate_marketplace
from tycheon.errors import TycheonError

__all__ = ["DatasetSpec", "UnknownDatasetError", "DatasetOptionError", "available_datasets", "load", "spec"]


class UnknownDatasetError(TycheonError, LookupError):
    """Raised for a dataset name that is not in the catalogue; the message lists the known names."""

    def __str__(self) -> str:  # LookupError would quote the message like a key
        return str(self.args[0]) if self.args else ""


class DatasetOptionError(TycheonError, TypeError):
    """Raised for a loader option the dataset does not accept; the message lists the accepted ones."""


@dataclass(frozen=True, kw_only=True)
class DatasetSpec:
    """A catalogue entry: how to load a dataset, which keyword options it accepts, and what it is.

    Every field is taken from the loader's own declaration (see :func:`_catalogue`), so a dataset is
    declared once, in its loader's table (only the synthetic generator's one-line description is stated
    here, where its entry is built); the manifest's ``description``, ``frequency``,
    ``season_length`` and ``synthetic`` must equal these (tests/test_manifest_catalogue.py), and
    ``tycheon datasets hash NAME --entry`` prints a manifest entry from them.
    """

    name: str
    loader: Callable[..., Panel]
    frequency: str
    season_length: int
    description: str
    synthetic: bool = False
    fixed: dict[str, Any] = field(default_factory=dict)

    @property
    def options(self) -> tuple[str, ...]:
        """The options :func:`load` accepts: the loader's keyword-only parameters."""
        parameters = inspect.signature(self.loader).parameters.values()
        return tuple(p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY)

    def manifest_fields(self) -> dict[str, Any]:
        """The fields a manifest entry must agree on, under the manifest's key names and in its order."""
        return {
            "description": self.description,
            "frequency": self.frequency,
            "season_length": self.season_length,
            "synthetic": self.synthetic,
        }


def _default_season(freq: str) -> int:
    """The season length :meth:`Panel.from_long` gives a frequency when the loader names none."""
    return DEFAULT_SEASON_LENGTH.get(freq.split("-")[0], 1)


def _synthetic() -> DatasetSpec:
    freq = inspect.signature(generate_marketplace).parameters["freq"].default
    return DatasetSpec(
        name="synthetic_marketplace",
        loader=generate_marketplace,
        frequency=freq,
        season_length=_default_season(freq),
        description="seeded synthetic marketplace with a spikiness dial (the default data)",
        synthetic=True,
    )


def _competitions() -> list[DatasetSpec]:
    return [
        DatasetSpec(
            name=f"{comp}_{subset}",
            loader=load_competition,
            frequency=CALENDAR[subset].freq,
            season_length=CALENDAR[subset].season_length,
            description=f"{cspec['title']} competition, {subset} series (train + published test part)",
            fixed={"competition": comp, "subset": subset},
        )
        for comp, cspec in COMPETITIONS.items()
        for subset in cspec["subsets"]
    ]


def _fpp3() -> list[DatasetSpec]:
    return [
        DatasetSpec(
            name=f"fpp3_{key}",
            loader=load_fpp3,
            frequency=fspec["freq"],
            season_length=_default_season(fspec["freq"]),
            description=f"fpp3 {fspec['description']}",
            fixed={"name": key},
        )
        for key, fspec in FPP3_DATASETS.items()
    ]


def _catalogue() -> dict[str, DatasetSpec]:
    """Every dataset, from its loader's declaration: the generator's defaults, the competitions'
    ``COMPETITIONS`` and ``CALENDAR``, and ``FPP3_DATASETS``."""
    specs = [_synthetic(), *_competitions(), *_fpp3()]
    return {s.name: s for s in specs}


_CATALOGUE = _catalogue()


def available_datasets() -> list[str]:
    """Names of every dataset in the catalogue, sorted."""
    return sorted(_CATALOGUE)


def spec(name: str) -> DatasetSpec:
    """The catalogue entry of a dataset; an unknown name lists the known ones."""
    try:
        return _CATALOGUE[name]
    except KeyError as err:
        raise UnknownDatasetError(
            f"unknown dataset {name!r}; known datasets: {', '.join(available_datasets())}"
        ) from err


def load(name: str, **options: Any) -> Panel:
    """Load a dataset by name.

    Parameters
    ----------
    name : str
        A catalogue name (see :func:`available_datasets`).
    **options
        Loader options: the loader's keyword-only parameters (``spec(name).options``; the synthetic
        generator's arguments, an fpp3 panel's ``value``; the competitions accept none).

    Raises
    ------
    UnknownDatasetError
        Unknown name (the message lists the known ones).
    DatasetOptionError
        An option the dataset does not accept.
    """
    entry = spec(name)
    unknown = sorted(set(options) - set(entry.options))
    if unknown:
        accepted = list(entry.options) or "none"
        raise DatasetOptionError(f"dataset {name!r} does not accept option(s) {unknown}; accepted: {accepted}")
    return entry.loader(**entry.fixed, **options)
