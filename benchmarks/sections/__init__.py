"""The analysis sections of a results document (issue 16), each declared once.

A section is one module of this package that defines ``SECTION = Section(...)``: the field of
``results.analyses`` it fills (``key``), the results-model class of one entry (``table``; a new section
declares it in its own module, over :mod:`benchmarks.results_model.base`), how the harness computes it from
one dataset's score set (``compute``, reading a :class:`DatasetContext`), what a restatement can redo
(``recompute``) and the partial that shows it on the dataset's robustness page (``template``). The modules
are found by :func:`pkgutil.iter_modules`, so there is no list to edit: the pipeline's per-dataset
analyses (:func:`benchmarks.analyses.dataset_analyses`), the document's ``Analyses`` model
(:mod:`benchmarks.results_model.analyses`) and its assembly (:func:`assemble`), the restatement
(:mod:`benchmarks.restat`) and the robustness page all loop over :data:`SECTIONS`.

The results model builds ``Analyses`` from this registry while it is imported, so a section module imports
only the library (:mod:`tycheon`), :mod:`benchmarks.results_model.base` / ``.analyses`` and this package at
its top; any other harness module (the roster runner, the results writer) it imports inside its functions.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import Callable, Sequence
from typing import Any, Literal

import pandas as pd

from tycheon.analysis.leaderboard import LeaderboardSpec
from tycheon.analysis.prepared import PreparedScores
from tycheon.errors import InputError
from tycheon.stats.threads import single_thread_blas

__all__ = [
    "N_RESAMPLES",
    "SECTIONS",
    "Carried",
    "DatasetContext",
    "RunContext",
    "Section",
    "assemble",
    "by_key",
    "computed",
    "on_page",
    "plain",
    "sections",
]

N_RESAMPLES = 2000  # WP26 section 4.1

Recompute = Literal["scores", "own_backtests"]
"""``scores``: a restatement recomputes it from the score set; ``own_backtests``: it may read backtests
the score set does not hold (the section then returns :class:`Carried` and the old tables are kept)."""


@dataclasses.dataclass
class DatasetContext:
    """What a section's ``compute`` reads of one rolling-origin dataset.

    ``units``: the leaderboard units in the config's order (then any other unit of the table);
    ``dial_table``: the aggregation dial's own units' scores (released by the dial once computed);
    ``entry``: the dataset's config entry (None where a caller passes a bare table); ``rerun``: runs the
    dataset's backtests again with other loader options (``rerun(options, units=..., part=...)`` -> score
    table or None), None in a restatement; ``previous``: the analyses of the version being restated."""

    table: pd.DataFrame
    scores: PreparedScores
    dataset: str
    protocol: str
    spec: LeaderboardSpec
    n_series: int
    units: list[str]
    n_resamples: int = N_RESAMPLES
    dial_table: Any = None
    dial_models: Sequence[str] | None = None
    entry: Any = None
    rerun: Callable[..., pd.DataFrame | None] | None = None
    previous: Any = None
    notes: list[str] = dataclasses.field(default_factory=list)
    """Analyses that could not run, and why (the pipeline's warnings of the dataset)."""

    @property
    def tag(self) -> dict[str, str]:
        return {"dataset": self.dataset, "protocol": self.protocol}

    def attempt(self, what: str, fn: Callable[[], Any]) -> Any:
        """``fn()`` with BLAS on the calling thread; None, and a note ``what: reason``, where the input
        does not allow it (e.g. the baseline did not run on this dataset)."""
        try:
            with single_thread_blas():
                return fn()
        except InputError as err:
            self.notes.append(f"{what}: {err}")
            return None

    def previous_tables(self, key: str) -> list[Any]:
        """The restated version's tables of this dataset in section ``key`` (none outside a restatement)."""
        return [t for t in getattr(self.previous, key, None) or [] if t.dataset == self.dataset]


@dataclasses.dataclass(frozen=True)
class Carried:
    """A section a restatement cannot recompute: ``tables`` are copied from the restated version;
    ``reason`` (what was carried over and why) is recorded where it is not None."""

    tables: list[Any]
    reason: str | None


@dataclasses.dataclass(frozen=True)
class RunContext:
    """What a run-scoped section combines its per-dataset parts with: the rolling-origin leaderboards,
    the config's first metric and its random walk."""

    leaderboards: Sequence[Any]
    metric: str
    random_walk: str


@dataclasses.dataclass(frozen=True)
class Section:
    """One analysis section (see the module docstring).

    ``position``: its place among the fields of ``results.analyses`` (the schema's order);
    ``compute``: one dataset's entries (or a :class:`Carried`), in ``compute_position`` order
    (default: ``position``); ``combine``: for a run-scoped section, its one table from every dataset's
    entries (the field is then ``table | None``); ``note``: the word its notes start with;
    ``template`` / ``page_position``: its partial on the robustness page and its place there;
    ``topic``: the words the dataset page's link to that page names it by (None: not named)."""

    key: str
    table: type
    position: int
    description: str
    recompute: Recompute
    compute: Callable[[DatasetContext], Any] | None = None
    compute_position: int | None = None
    combine: Callable[[list[Any], RunContext], Any] | None = None
    note: str | None = None
    template: str | None = None
    page_position: int | None = None
    topic: str | None = None

    @property
    def many(self) -> bool:
        """Whether the field is a list of tables (one per dataset or more), not one run-wide table."""
        return self.combine is None


def plain(result: Any) -> Any:
    """A library result dataclass as plain JSON values (what a results-model class validates)."""
    from benchmarks.results_io import to_json_value  # the writer imports the results model

    return to_json_value(dataclasses.asdict(result))


_FOUND: tuple[Section, ...] | None = None


def sections() -> tuple[Section, ...]:
    """Every section, in the order of the fields of ``results.analyses`` (found once, on first use)."""
    global _FOUND
    if _FOUND is None:
        # the results model first: it builds Analyses from this registry while it is imported, and the
        # section modules read its table classes (whichever of the two a caller imports first)
        importlib.import_module("benchmarks.results_model")
    if _FOUND is None:
        _FOUND = _discover()
    return _FOUND


def _discover() -> tuple[Section, ...]:
    found: dict[str, Section] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        section = getattr(module, "SECTION", None)
        if not isinstance(section, Section):
            raise TypeError(f"{module.__name__} defines no SECTION = Section(...)")
        if section.key in found:
            raise ValueError(f"analysis section {section.key!r} is declared twice ({module.__name__})")
        found[section.key] = section
    positions = [s.position for s in found.values()]
    if len(set(positions)) != len(positions):
        raise ValueError(f"analysis sections share a position: {sorted(positions)}")
    return tuple(sorted(found.values(), key=lambda s: s.position))


def __getattr__(name: str) -> Any:
    if name == "SECTIONS":  # every section, in the order of the fields of results.analyses
        return sections()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def by_key(key: str) -> Section:
    """The section ``key``; an unknown key lists the known ones."""
    for s in sections():
        if s.key == key:
            return s
    raise KeyError(f"no analysis section {key!r}; known: {[s.key for s in sections()]}")


def computed() -> list[Section]:
    """The sections a dataset computes, in the order they run."""
    runs = [s for s in sections() if s.compute is not None]
    return sorted(runs, key=lambda s: s.position if s.compute_position is None else s.compute_position)


def on_page() -> list[Section]:
    """The sections shown on a dataset's robustness page, in page order."""
    return sorted((s for s in sections() if s.template is not None), key=lambda s: s.page_position or 0)


def assemble(parts: Sequence[dict[str, list[Any]]], run: RunContext) -> Any:
    """``results.analyses`` from every dataset's entries by section key (in dataset order)."""
    from benchmarks.results_model import Analyses  # built from this registry

    fields: dict[str, Any] = {}
    for s in sections():
        items = [t for part in parts for t in part.get(s.key, [])]
        fields[s.key] = items if s.combine is None else s.combine(items, run)
    return Analyses(**fields)


# last, once every name above exists: the results model builds Analyses from this registry while it is
# imported, and a section module reads its table classes, so whichever of the three a caller imports
# first, the registry is found in this order (results model -> registry -> section modules)
import benchmarks.results_model  # noqa: E402, F401
