"""Page types, declared once: what a page is, where it lives, who builds it and where the site lists it.

A page type is registered by the module that builds it (:func:`page_type` on its builder, or
:func:`page_part` for a page that another type's builder writes), with the one path convention of the
site: a format string whose every part is slugified (:func:`page_path`). The site, each benchmark and
each dataset then build whatever types are registered for their scope (:func:`build_scope`), in the
order the types declare. Adding a page type is a builder module under ``benchmarks/render/builders/``,
its template, and a test; the modules here are found with :mod:`pkgutil`, lazily, so importing the
registry has no side effect beyond defining it.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, TypeVar

from ..fmt import slugify

if TYPE_CHECKING:
    from ..pages import SiteModel

__all__ = [
    "OFF_NAV",
    "Built",
    "NavNode",
    "Page",
    "PageType",
    "Scope",
    "Scoped",
    "UnknownPageTypeError",
    "build_scope",
    "in_nav",
    "is_page_of",
    "off_nav_patterns",
    "page_part",
    "page_path",
    "page_type",
    "page_types",
    "prune_nav",
]


@dataclass
class Page:
    path: str  # docs-relative, e.g. "benchmarks/small/synthetic/series/all-mase.md"
    template: str
    title: str  # safe label (navigation and <title>)
    context: dict[str, Any] = field(default_factory=dict)


@dataclass
class NavNode:
    title: str
    page: str | None = None
    children: list[NavNode] = field(default_factory=list)


Built = tuple[list[Page], list[NavNode]]  # a builder's pages, and the navigation entries it adds
Scope = Literal["site", "benchmark", "dataset", "part"]
# what a builder of each scope is called with: site (site, root=...), benchmark (site, run),
# dataset (site, run, dataset); a "part" is written by another type's builder and has none
Builder = Callable[..., Built]
B = TypeVar("B", bound=Builder)


class UnknownPageTypeError(KeyError):
    """A page type that no builder module registers."""

    def __str__(self) -> str:  # KeyError would quote the whole message
        return str(self.args[0])


@dataclass(frozen=True)
class PageType:
    """One kind of page.

    ``path`` is the page's docs-relative path as a format string (``"benchmarks/{name}/{dataset}/
    intervals.md"``); ``order`` places the type's navigation entries among the other types of its scope;
    ``link`` is the context key under which the dataset page's context holds the type's first page (None
    when the type was not built for that dataset); ``link_text``, where given, lists that page among the
    dataset page's other tables under those words (a callable is asked for them when the page is built),
    at ``link_order`` among the listed types (default: ``order``).
    """

    key: str
    path: str
    scope: Scope
    module: str
    build: Builder | None = None
    order: int = 0
    link: str | None = None
    link_text: str | Callable[[], str] | None = None
    link_order: int | None = None

    @functools.cached_property
    def parts(self) -> tuple[str, ...]:
        """The names ``path`` is filled with, in order."""
        return tuple(name for _, name, _, _ in string.Formatter().parse(self.path) if name)


_REGISTRY: dict[str, PageType] = {}


def _register(kind: PageType) -> None:
    held = _REGISTRY.get(kind.key)
    if held is not None and held.module != kind.module:
        raise ValueError(f"page type {kind.key!r} is already registered by {held.module}")
    taken = next((t for t in _REGISTRY.values() if t.path == kind.path and t.key != kind.key), None)
    if taken is not None:
        raise ValueError(f"page type {kind.key!r} would share the path {kind.path!r} with {taken.key!r}")
    _REGISTRY[kind.key] = kind


def page_type(
    key: str,
    *,
    path: str,
    scope: Literal["site", "benchmark", "dataset"],
    order: int,
    link: str | None = None,
    link_text: str | Callable[[], str] | None = None,
    link_order: int | None = None,
) -> Callable[[B], B]:
    """Decorator: register a builder of the pages of type ``key`` (see :class:`PageType`)."""

    def decorate(build: B) -> B:
        _register(
            PageType(
                key=key,
                path=path,
                scope=scope,
                module=build.__module__,
                build=build,
                order=order,
                link=link,
                link_text=link_text,
                link_order=link_order,
            )
        )
        return build

    return decorate


def page_part(key: str, *, path: str, module: str) -> None:
    """Register the path of a page that another type's builder writes (a leaderboard, a unit page...)."""
    _register(PageType(key=key, path=path, scope="part", module=module))


_loaded: list[bool] = []  # one True once every builder module is imported


def _load_builders() -> None:
    # Importing the builder modules registers every page type; done on first use, so that importing the
    # registry (pages.py does, for the paths) has no side effects beyond defining it.
    if _loaded:
        return
    package = __name__.rpartition(".")[0]
    for module in pkgutil.iter_modules(importlib.import_module(package).__path__):
        if module.name != "registry":
            importlib.import_module(f"{package}.{module.name}")
    _loaded.append(True)


def _get(key: str) -> PageType:
    _load_builders()
    try:
        return _REGISTRY[key]
    except KeyError as err:
        raise UnknownPageTypeError(
            f"unknown page type {key!r}; registered page types are: {', '.join(sorted(_REGISTRY))}"
        ) from err


def page_path(key: str, **parts: str) -> str:
    """The docs-relative path of a page of type ``key``, every part slugified (:func:`~..fmt.slugify`).

    >>> page_path("intervals", name="small", dataset="m5")
    'benchmarks/small/m5/intervals.md'
    """
    kind = _get(key)
    needed = kind.parts
    if set(parts) != set(needed):
        raise TypeError(f"page type {key!r} ({kind.path}) needs the parts {list(needed)}, got {sorted(parts)}")
    return kind.path.format(**{name: slugify(value) for name, value in parts.items()})


def page_types(scope: Scope) -> list[PageType]:
    """The registered types of ``scope``, in their declared order."""
    _load_builders()
    return sorted((t for t in _REGISTRY.values() if t.scope == scope), key=lambda t: (t.order, t.key))


class Scoped(NamedTuple):
    """What the types of one scope built: pages, navigation entries in the types' order, and links."""

    pages: list[Page]
    nav: list[NavNode]
    links: dict[str, str | None]  # each linking type's context key -> its first page, None where not built
    listed: list[tuple[str, str]]  # (link text, first page) of each built type with a link text, in link order


def build_scope(scope: Literal["site", "benchmark", "dataset"], site: SiteModel, *args: Any, **kwargs: Any) -> Scoped:
    """Build every type of ``scope``, each builder called with ``site, *args, **kwargs``."""
    done = Scoped([], [], {}, [])
    listed: list[tuple[int, str, str, str]] = []  # link order, key, text, page
    for kind in page_types(scope):
        assert kind.build is not None  # only a part has no builder, and a part has no scope to build
        pages, entries = kind.build(site, *args, **kwargs)
        done.pages.extend(pages)
        done.nav.extend(entries)
        if kind.link is not None:
            done.links[kind.link] = pages[0].path if pages else None
        if kind.link_text is not None and pages:
            text = kind.link_text if isinstance(kind.link_text, str) else kind.link_text()
            order = kind.order if kind.link_order is None else kind.link_order
            listed.append((order, kind.key, text, pages[0].path))
    done.listed.extend((text, page) for _, _, text, page in sorted(listed))
    return done


def in_nav(pages: Page | list[Page] | None) -> Built:
    """Pages with one navigation entry: the first page, the others as its children (none without pages)."""
    found = [pages] if isinstance(pages, Page) else list(pages or [])
    if not found:
        return [], []
    first, rest = found[0], found[1:]
    return found, [NavNode(title=first.title, page=first.path, children=[NavNode(p.title, p.path) for p in rest])]


# Page types the navigation leaves out: a leaderboard is reached from its unit page, its dataset page and the
# Unit / Class / Metric switcher on every leaderboard. Listed in the sidebar, each benchmark's leaderboards
# were written into every one of their siblings' HTML (the open branch is written out in full), most of a
# leaderboard page's weight.
OFF_NAV = frozenset({"leaderboard"})


@functools.cache
def _path_pattern(key: str) -> re.Pattern[str]:
    kind = _get(key)
    parts = string.Formatter().parse(kind.path)
    return re.compile("".join(re.escape(text) + ("[^/]+" if name else "") for text, name, _, _ in parts))


def is_page_of(key: str, path: str) -> bool:
    """Whether the docs-relative ``path`` is one that page type ``key`` writes."""
    return _path_pattern(key).fullmatch(path) is not None


def prune_nav(nodes: list[NavNode], off: frozenset[str] = OFF_NAV) -> list[NavNode]:
    """The navigation without the pages of the types in ``off`` (a node keeps its children that stay)."""
    kept = []
    for node in nodes:
        if node.page is not None and any(is_page_of(key, node.page) for key in off):
            continue
        kept.append(NavNode(node.title, node.page, prune_nav(node.children, off)))
    return kept


def off_nav_patterns(off: frozenset[str] = OFF_NAV) -> list[str]:
    """mkdocs ``not_in_nav`` patterns (gitignore style, from the docs folder) of the types in ``off``: the
    pages left out on purpose, which mkdocs then does not list as missing from the navigation."""
    return sorted("/" + re.sub(r"\{[^}]*\}", "*", _get(key).path) for key in off)
