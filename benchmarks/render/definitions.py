"""Definitions for the methodology page, read from the code itself without importing it.

Docstrings of the public functions in ``tycheon/metrics`` and ``tycheon/stats`` are read with ``ast``
(the renderer never imports library internals), and column meanings come from the descriptions in the
results model (:mod:`benchmarks.results_model`). A module that is missing or has no documented public function is
reported as such. The site's citations (project documents, method sources, publications) are declared once in
``references.toml`` beside this module and read with :func:`load_references`.
"""

from __future__ import annotations

import ast
import functools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


@dataclass(frozen=True)
class Definition:
    module: str
    name: str
    signature: str
    doc: str


@dataclass(frozen=True)
class Package:
    """Definitions found in one library package, or a note saying why there are none."""

    package: str
    definitions: tuple[Definition, ...]
    note: str | None


def _public_functions(path: Path, module: str) -> list[Definition]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            doc = ast.get_docstring(node, clean=True)
            if doc:
                found.append(Definition(module, node.name, f"{node.name}({ast.unparse(node.args)})", doc))
    return found


def read_package(root: Path, package: str) -> Package:
    """Public documented functions of ``package`` (dotted, e.g. ``tycheon.metrics``) under ``root``."""
    folder = root.joinpath(*package.split("."))
    if not folder.is_dir():
        return Package(package, (), f"{package} does not exist in this checkout yet.")
    definitions: list[Definition] = []
    for path in sorted(folder.glob("*.py")):
        if path.name.startswith("_"):
            continue
        try:
            definitions.extend(_public_functions(path, f"{package}.{path.stem}"))
        except SyntaxError as err:
            return Package(package, (), f"{path.relative_to(root)} could not be parsed ({err.msg}, line {err.lineno}).")
    note = None if definitions else f"{package} has no documented public function yet."
    return Package(package, tuple(definitions), note)


def model_columns(model: type[BaseModel]) -> list[tuple[str, str]]:
    """``(field, description)`` for every described field of a results model, in declaration order."""
    return [(name, f.description) for name, f in model.model_fields.items() if f.description]


_GLOSSARY_FIELDS = ("name", "display_name", "kind", "lower_is_better", "scale_column", "definition")


def registry_glossary(root: Path) -> list[dict[str, object]]:
    """Metric records read with ``ast`` from ``tycheon/metrics/registry.py``, for results files that predate
    the ``metric_glossary`` block.

    Only ``MetricSpec(...)`` calls whose name, display name, kind, direction, scale and definition are
    literals are read (the registry's point and probabilistic metrics); specs built from f-strings (the
    interval family) are left out rather than guessed. ``ranked`` is taken as ``lower_is_better`` and
    ``step_loss`` given. Returns ``[]`` when the file is missing or does not parse.
    """
    path = root / "tycheon" / "metrics" / "registry.py"
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError):
        return []
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "MetricSpec"):
            continue
        kwargs = {k.arg: k.value for k in node.keywords if k.arg}
        values = {}
        for key in _GLOSSARY_FIELDS:
            value = kwargs.get(key)
            if not isinstance(value, ast.Constant):
                break
            values[key] = value.value
        else:
            values["ranked"] = bool(values["lower_is_better"]) and "step_loss" in kwargs
            found.append(values)
    return found


def forecaster_docs(root: Path) -> dict[str, str]:
    """``{registered id: class docstring}`` of the built-in forecasters, read with ``ast`` from
    ``tycheon/forecasters/roster/*.py`` (classes decorated ``@register("<id>")``)."""
    found: dict[str, str] = {}
    for path in sorted((root / "tycheon" / "forecasters" / "roster").glob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except SyntaxError:
            continue
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            doc = ast.get_docstring(node, clean=True)
            for deco in node.decorator_list:
                if (
                    isinstance(deco, ast.Call)
                    and isinstance(deco.func, ast.Name)
                    and deco.func.id == "register"
                    and deco.args
                    and isinstance(deco.args[0], ast.Constant)
                    and doc
                ):
                    found[str(deco.args[0].value)] = doc
    return found


# --- References: the site's citations, declared once in references.toml -------------------------------------

REFERENCES_PATH = Path(__file__).with_name("references.toml")
ReferenceGroup = Literal["project", "methods", "statistics", "competitions", "textbooks"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Reference(_Strict):
    """One cited work: a publication (with its DOI, or a URL where it has none) or a project document."""

    key: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    group: ReferenceGroup
    authors: str
    year: str
    title: str
    container: str
    doi: str | None = Field(default=None, pattern=r"^10\.\d{4,9}/\S+$")
    url: str | None = Field(default=None, pattern=r"^https://")
    summary: str | None = None  # the project's own summary, for readers (project documents)
    short: str | None = None  # how the pages name it in running text, where author-year would not do

    @property
    def anchor(self) -> str:
        return f"ref-{self.key}"

    @property
    def link(self) -> str | None:
        return f"https://doi.org/{self.doi}" if self.doi else self.url

    @property
    def cite(self) -> str:
        """Author-year, e.g. "Croston (1972)", "Syntetos & Boylan (2005)", "Teunter et al. (2011)"."""
        if self.short:
            return self.short
        names = re.findall(r"(?:^|, |& )([^\W\d_][\w'-]*),", self.authors)
        if len(names) > 2 or "et al." in self.authors:
            who = f"{names[0]} et al."
        else:
            who = " & ".join(names)
        return f"{who} ({self.year})"


class ModelCitation(_Strict):
    """Where a forecaster comes from: its method's source, or the textbook that describes a baseline."""

    basis: Literal["paper", "textbook"]
    cites: tuple[str, ...] = Field(min_length=1)
    note: str | None = None


class PublishedCitation(_Strict):
    """The publication behind a source of the "Published vs ours" page, and how its numbers reached us."""

    cites: str
    via: str | None = None


class References(_Strict):
    references: tuple[Reference, ...]
    models: dict[str, ModelCitation] = Field(default_factory=dict)
    published: dict[str, PublishedCitation] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> References:
        keys = [r.key for r in self.references]
        dupes = sorted({k for k in keys if keys.count(k) > 1})
        if dupes:
            raise ValueError(f"references declared twice: {dupes}")
        for r in self.references:
            if r.group != "project" and not r.link:
                raise ValueError(f"reference {r.key!r} has neither a DOI nor a URL")
            if r.group == "project" and not r.summary:
                raise ValueError(f"project document {r.key!r} has no summary for readers")
        cited = [(f"models.{m}", k) for m, c in self.models.items() for k in c.cites]
        cited += [(f"published.{s}", c.cites) for s, c in self.published.items()]
        unknown = [f"{where} -> {k!r}" for where, k in cited if k not in keys]
        if unknown:
            raise ValueError(f"citations of undeclared references ({', '.join(unknown)}); known: {sorted(keys)}")
        for model, c in self.models.items():
            works = [self.get(k) for k in c.cites]
            if c.basis == "paper" and not any(w.doi for w in works):
                raise ValueError(f"models.{model}: a method's source needs a DOI; a baseline is basis = 'textbook'")
            if c.basis == "textbook" and not any(w.group == "textbooks" for w in works):
                raise ValueError(f"models.{model}: a textbook baseline cites a textbook")
        return self

    def get(self, key: str) -> Reference:
        """The reference ``key``; an unknown key is an error that lists the known ones."""
        found = next((r for r in self.references if r.key == key), None)
        if found is None:
            raise KeyError(f"no reference {key!r}; known: {sorted(r.key for r in self.references)}")
        return found

    def group(self, name: ReferenceGroup) -> list[Reference]:
        return [r for r in self.references if r.group == name]


@functools.lru_cache(maxsize=4)
def load_references(path: Path = REFERENCES_PATH) -> References:
    """The references file, checked: unique keys, a DOI or URL for every publication, a summary for every
    project document, every citation of a model or published source naming a declared reference, a DOI for
    every method's source and a textbook for every textbook baseline."""
    with path.open("rb") as f:
        return References.model_validate(tomllib.load(f))
