"""The "Published vs ours" page of a benchmark: every competition category of its latest run with a
published value, the values stored as cited data in ``benchmarks/published/competitions.toml`` beside ours
from the run (:func:`benchmarks.published.compare.compare`), each cited as the publication it comes from
(the References page's entry, :func:`~benchmarks.render.definitions.load_references`); the categories
without a published table are named in a closing note."""

from __future__ import annotations

import dataclasses

from benchmarks.published.catalogue import PUBLISHED_PATH, load_published
from benchmarks.published.compare import NO_TABLE, CategoryComparison, compare

from ..definitions import load_references
from ..fmt import reader_text
from ..load import Run
from ..pages import Page, SiteModel, named
from .registry import Built, in_nav, page_path, page_type

__all__ = ["published_page", "published_path", "subsampled"]

TITLE = "Published vs ours"
KINDS = {
    "printed_table": "printed table",
    "reprint": "printed table, as reprinted",
    "recomputed": "recomputed from the submissions (not printed)",
}


def published_path(name: str) -> str:
    return page_path("published", name=name)


def subsampled(run: Run) -> dict[str, int]:
    """Competition categories the run scored on a subsample (from its recorded config), and the size."""
    entries = run.data.config.get("competition", []) if isinstance(run.data.config, dict) else []
    return {str(e.get("label") or e["dataset"]): int(e["subsample"]) for e in entries if e.get("subsample") is not None}


def _named(categories: list[CategoryComparison], names: dict[str, str]) -> list[CategoryComparison]:
    """The comparisons as a reader reads them: a model missing from the run under its display name where any
    benchmark of the site names it (else its id), model ids in the notes as display names."""
    return [
        dataclasses.replace(
            c,
            rows=tuple(
                dataclasses.replace(
                    r,
                    display_name=names.get(r.display_name, r.display_name),
                    note=named(reader_text(r.note), names) if r.note else r.note,
                )
                for r in c.rows
            ),
        )
        for c in categories
    ]


def published_page(site: SiteModel, run: Run) -> Page | None:
    """The page for ``run``, or None when the run scored no competition category."""
    if not run.data.competition:
        return None
    catalogue = load_published(PUBLISHED_PATH)
    refs = load_references()
    unmapped = sorted({s.id for s in catalogue.sources} - set(refs.published))
    if unmapped:
        raise KeyError(f"published sources without a publication in the references file: {unmapped}")
    names = {m.id: m.display_name for name in site.names for r in site.by_name[name] for m in r.data.models}
    names.update(site.display_names(run))
    return Page(
        path=published_path(run.name),
        template="published.md.j2",
        title=TITLE,
        context={
            "run": run,
            "categories": _named(compare(run.data.competition, catalogue, subsampled=subsampled(run)), names),
            "no_table": NO_TABLE,
            "kinds": KINDS,
            "bench_page": site.bench_page(run.name),
            "provenance": site.provenance(run),
            "refs": refs,
            "published": refs.published,
        },
    )


@page_type("published", path="benchmarks/{name}/published.md", scope="benchmark", order=30)
def _published(site: SiteModel, run: Run) -> Built:
    return in_nav(published_page(site, run))
