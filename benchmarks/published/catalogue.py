"""Published competition results as cited data: ``benchmarks/published/competitions.toml``, read strictly.

Each value is a number copied from a printed table, or from a later source that reprints one (named as
such, with the repository, commit and path it was read from and the sentence in which that source says it
reprints the paper), or, kept apart as ``recomputed``, the competition participants' own submitted
forecasts scored by a committed script (no paper printed those numbers; the page says so). A value names
the paper's table, row and column, the number as printed and its printed precision (decimal places), and
the model of our roster it is held against. Nothing is ever
filled in from memory: a category without a value has no entry, and the page says so.

Every table is strict (pydantic ``extra="forbid"``): an unknown or missing field, a value that does not
have its stated precision, a source that a value names but the file does not define, or a reprint
without its repository, commit and path is a :class:`PublishedDataError` naming the file and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import pydantic
from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt

from benchmarks.config import ConfigError, read_toml

__all__ = [
    "PUBLISHED_PATH",
    "PublishedCatalogue",
    "PublishedDataError",
    "PublishedSource",
    "PublishedValue",
    "load_published",
]

PUBLISHED_PATH = Path(__file__).resolve().parent / "competitions.toml"
_SLUG = r"^[a-z0-9][a-z0-9_\-]{0,63}$"
Text = Annotated[str, Field(min_length=1, max_length=600)]


class PublishedDataError(ValueError):
    """The published-results file cannot be used; the message names the file and the field."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PublishedSource(_Strict):
    """Where values were read: the paper's own table, or a named later source that reprints it."""

    id: Annotated[str, Field(pattern=_SLUG)]
    kind: Literal["printed_table", "reprint", "recomputed"] = Field(
        description="printed_table: the paper's own table; reprint: a later source that reprints it; recomputed: "
        "not printed anywhere, the participants' submitted forecasts scored by our script (a reference, never "
        "called published)"
    )
    citation: Text = Field(description="the document the numbers were read from, as it is cited")
    reprints: Text | None = Field(None, description="for a reprint: the paper and tables it reprints")
    repository: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-]+$")] | None = None
    commit: Annotated[str, Field(pattern=r"^[0-9a-f]{40}$")] | None = None
    path: Annotated[str, Field(min_length=1, max_length=300)] | None = None
    quote: Text | None = Field(None, description="the reprint's own words saying what it reprints")
    script: Annotated[str, Field(min_length=1, max_length=300)] | None = Field(
        None, description="for recomputed values: the repository script that computed them"
    )

    @pydantic.model_validator(mode="after")
    def _reprint_is_traceable(self) -> PublishedSource:
        if self.kind == "reprint":
            missing = [f for f in ("reprints", "repository", "commit", "path", "quote") if getattr(self, f) is None]
            if missing:
                raise ValueError(f"source {self.id!r}: a reprint must name {missing}")
        located = [f for f in ("repository", "commit", "path") if getattr(self, f) is not None]
        if self.kind == "printed_table" and located and len(located) != 3:
            raise ValueError(f"source {self.id!r}: a stored copy of the paper must name repository, commit and path")
        if self.kind == "recomputed":
            missing = [f for f in ("repository", "commit", "path", "script") if getattr(self, f) is None]
            if missing:
                raise ValueError(f"source {self.id!r}: recomputed values must name {missing}")
        return self


class PublishedValue(_Strict):
    """One published number and what it is held against.

    ``datasets`` lists one competition category, or several when the paper reports them pooled (all
    series of the competition); ours is then the mean of the categories' means weighted as ``pooling``
    says: ``series`` by each category's number of series (the mean over all series), ``series_horizon``
    by series times the category's horizon (the mean over every series and forecast step, as the M3
    paper's "all data" table averages: its Table 6 values are reproduced by its Tables 13-16 so weighted).
    """

    competition: Literal["M1", "M3", "Tourism"]
    datasets: list[Annotated[str, Field(pattern=_SLUG)]] = Field(min_length=1)
    metric: Literal["smape", "mape", "mase"]
    method: Text = Field(description="the method as the table prints it")
    model: Annotated[str, Field(pattern=_SLUG)] = Field(description="the roster model held against it")
    source: Annotated[str, Field(pattern=_SLUG)]
    table: Text
    row: Text
    column: Text
    value: StrictFloat | StrictInt
    precision: Annotated[StrictInt, Field(ge=0, le=6)] = Field(description="decimal places as printed")
    reason: Text | None = Field(None, description="one line: why ours can differ (shown where it does)")
    pooling: Literal["series", "series_horizon"] = Field(
        "series", description="how a value over several categories weights them: by series, or by series x horizon"
    )

    @pydantic.model_validator(mode="after")
    def _printed_precision(self) -> PublishedValue:
        if round(float(self.value), self.precision) != float(self.value):
            raise ValueError(f"value {self.value} has more than its printed {self.precision} decimal place(s)")
        if self.pooling != "series" and len(self.datasets) == 1:
            raise ValueError(f"pooling {self.pooling!r} weights several categories; {self.datasets} is one")
        return self

    def printed(self) -> str:
        """The value as the table prints it."""
        return f"{float(self.value):.{self.precision}f}"


class PublishedCatalogue(_Strict):
    sources: list[PublishedSource] = Field(min_length=1)
    values: list[PublishedValue] = Field(default_factory=list)

    @pydantic.model_validator(mode="after")
    def _references(self) -> PublishedCatalogue:
        ids = [s.id for s in self.sources]
        if len(set(ids)) != len(ids):
            raise ValueError(f"source ids must be unique, got {ids}")
        unknown = sorted({v.source for v in self.values} - set(ids))
        if unknown:
            raise ValueError(f"values name sources {unknown} that are not defined; sources: {ids}")
        return self

    def source(self, source_id: str) -> PublishedSource:
        return next(s for s in self.sources if s.id == source_id)


def load_published(path: Path = PUBLISHED_PATH) -> PublishedCatalogue:
    """Read and validate the published-results file.

    Raises
    ------
    PublishedDataError
        Unreadable, not TOML, an unknown or missing field, a value with more decimals than printed, an
        undefined source, or a reprint that cannot be traced; the message names the file and the field.
    """
    try:
        raw = read_toml(path)
    except ConfigError as err:
        raise PublishedDataError(str(err)) from err
    try:
        return PublishedCatalogue.model_validate(raw)
    except pydantic.ValidationError as err:
        problems = []
        for e in err.errors():
            loc = ".".join(str(p) for p in e["loc"]) or "(top level)"
            problems.append(
                f"unknown field {loc!r}" if e["type"] == "extra_forbidden" else f"field {loc!r}: {e['msg']}"
            )
        raise PublishedDataError(f"{path}: " + "; ".join(problems)) from err
