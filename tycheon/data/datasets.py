"""The dataset catalogue: one name per panel, each with its loader and its accepted options.

>>> from tycheon.data.datasets import load, available_datasets
>>> "m3_monthly" in available_datasets()
True
>>> load("synthetic_marketplace", n_entities=50, n_periods=24).n_series
50
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tycheon.data.competitions import COMPETITIONS, load_competition
from tycheon.data.fpp3 import load_fpp3
from tycheon.data.panel import Panel
from tycheon.data.synthetic import generate_marketplace
from tycheon.errors import TycheonError

__all__ = ["DatasetSpec", "UnknownDatasetError", "DatasetOptionError", "available_datasets", "load", "spec"]


class UnknownDatasetError(TycheonError, LookupError):
    """Raised for a dataset name that is not in the catalogue; the message lists the known names."""

    def __str__(self) -> str:  # LookupError would quote the message like a key
        return str(self.args[0]) if self.args else ""


class DatasetOptionError(TycheonError, TypeError):
    """Raised for a loader option the dataset does not accept; the message lists the accepted ones."""


@dataclass(frozen=True)
class DatasetSpec:
    """A catalogue entry: how to load a dataset and which keyword options it accepts."""

    name: str
    loader: Callable[..., Panel]
    options: tuple[str, ...] = ()
    synthetic: bool = False
    description: str = ""
    fixed: dict[str, Any] = field(default_factory=dict)


def _catalogue() -> dict[str, DatasetSpec]:
    specs = [
        DatasetSpec(
            "synthetic_marketplace",
            generate_marketplace,
            options=("n_entities", "n_periods", "spikiness", "seed", "start", "freq"),
            synthetic=True,
            description="seeded synthetic marketplace with a spikiness dial (the default data)",
        )
    ]
    for comp, cspec in COMPETITIONS.items():
        for subset in cspec["subsets"]:
            specs.append(
                DatasetSpec(
                    f"{comp}_{subset}",
                    load_competition,
                    fixed={"competition": comp, "subset": subset},
                    description=f"{cspec['title']} competition, {subset} series (train + published test part)",
                )
            )
    fpp3 = {
        "tourism": "fpp3 Australian domestic tourism, state / region / purpose",
        "pbs": "fpp3 PBS prescriptions, concession x type x ATC1/ATC2",
        "prison": "fpp3 Australian prison population, state x gender x legal x indigenous",
    }
    for key, text in fpp3.items():
        specs.append(DatasetSpec(f"fpp3_{key}", load_fpp3, options=("value",), fixed={"name": key}, description=text))
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
        Loader options; only ``synthetic_marketplace`` (``n_entities``, ``n_periods``, ``spikiness``,
        ``seed``, ``start``, ``freq``) and the fpp3 panels (``value``) accept any.

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
