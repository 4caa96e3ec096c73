"""The page builders of the site, one module per kind of page, each registering its page types
(:mod:`.registry`: path, scope, navigation order, dataset-page link).

Importing this package loads only the registry; the builder modules are imported when a path is asked
for or a scope is built, which registers their types.
"""

from .registry import (
    Built,
    NavNode,
    Page,
    PageType,
    Scope,
    Scoped,
    UnknownPageTypeError,
    build_scope,
    in_nav,
    page_part,
    page_path,
    page_type,
    page_types,
)

__all__ = [
    "Built",
    "NavNode",
    "Page",
    "PageType",
    "Scope",
    "Scoped",
    "UnknownPageTypeError",
    "build_scope",
    "in_nav",
    "page_part",
    "page_path",
    "page_type",
    "page_types",
]
