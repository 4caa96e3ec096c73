"""Pages of the issue-16 analyses: one "how much the answer moves" page per dataset (a partial per section
of :mod:`benchmarks.sections`: inversion, dial with its chart, spikiness sweep, class winners, a link to
the uncertainty page, horizon), one uncertainty
page per dataset (the bootstrap tables: four fifths of the analyses' HTML, kept off the page that loads
plotly.js), and one across-datasets page. The values are read from the results document; nothing is
recomputed here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchmarks.results_model import DialTable, Leaderboard, TableKey, UncertaintyRow, UncertaintyTable
from benchmarks.sections import on_page

from .. import charts
from ..fmt import reader_text, safe_label, slugify
from ..load import Run
from ..pages import Page, SiteModel, named
from .registry import Built, in_nav, page_part, page_path, page_type

__all__ = [
    "across_page",
    "across_path",
    "dial_figure",
    "leaderboard_ranks",
    "ranked_on",
    "reader_words",
    "robustness_page",
    "robustness_path",
    "uncertainty_anchor",
    "uncertainty_pages",
    "uncertainty_path",
    "uncertainty_unit_path",
]

_CONVENTIONS = (("friedman", "Friedman mean rank"), ("mean_rmsse", "mean RMSSE"), ("median_wape", "median WAPE"))
_DASH = {"size": "solid", "random": "dash", "hierarchy": "dot"}
_KIND = {"size": "size-sorted groups", "random": "random groups", "hierarchy": "hierarchy levels"}
_RANKED_ON = {  # a leaderboard's rank column by its ranking rule (tests.ranking), in a few words
    "gmean_rel_rw": "the geometric mean of each block's {metric} relative to the random walk's (lower is better)",
    "pooled": "the cell's pooled {metric}, sum |e| / sum |y| (lower is better)",
    "abs_mean": "the size of the mean {metric} (closest to 0 is best)",
    "mean": "the mean {metric} (lower is better)",
}


page_part("uncertainty_unit", path="benchmarks/{name}/{dataset}/uncertainty-{unit}.md", module=__name__)


def robustness_path(name: str, dataset: str) -> str:
    return page_path("robustness", name=name, dataset=dataset)


def uncertainty_path(name: str, dataset: str) -> str:
    return page_path("uncertainty", name=name, dataset=dataset)


def across_path(name: str) -> str:
    return page_path("across", name=name)


def dial_figure(dial: DialTable) -> dict[str, Any]:
    """The baseline's place in its roster against the number of groups (log axis), one line per curve and
    ranking convention; place is rank / models so rosters of different sizes share the axis (paper Fig. 1)."""
    data = []
    for ci, (conv, label) in enumerate(_CONVENTIONS):
        style = charts.style_for(ci)
        for curve in dial.curves:
            pts = [p for p in curve.points if p.baseline_rank.get(conv) is not None and p.n_models]
            if not pts:
                continue
            data.append(
                {
                    "type": "scatter",
                    "mode": "lines+markers",
                    "name": charts.plotly_text(f"{label}, {_KIND[curve.kind]}"),
                    "x": [p.k for p in pts],
                    "y": [p.baseline_rank[conv] for p in pts],
                    "customdata": [[p.unit, p.n_models] for p in pts],
                    "line": {"color": style.colour, "dash": _DASH[curve.kind], "width": 2},
                    "marker": {"symbol": style.symbol, "size": 9, "color": style.colour},
                    "hovertemplate": "%{customdata[0]}: rank %{y} of %{customdata[1]}<extra></extra>",
                }
            )
    n_models = max((p.n_models for c in dial.curves for p in c.points), default=1)
    layout = {
        "height": 420,
        "margin": {"l": 70, "r": 20, "t": 30, "b": 60},
        "xaxis": {"type": "log", "title": {"text": "groups k (log scale; the last point is per series)"}},
        "yaxis": {
            "title": {"text": f"rank of {charts.plotly_text(dial.baseline)} (1 = best)"},
            "range": [n_models + 0.5, 0.5],
            "dtick": 1,
        },
        "legend": {"orientation": "h", "y": -0.25, "font": {"size": 11}},
        "plot_bgcolor": "#ffffff",
        "paper_bgcolor": "#ffffff",
        "font": {"size": 13},
    }
    return {"data": data, "layout": layout}


def robustness_page(site: SiteModel, run: Run, dataset: str) -> Page | None:
    """The dataset's analyses page, or None when the results hold no analysis of it."""
    a = run.data.analyses

    shown = on_page()  # every section with a partial on this page (benchmarks.sections), in page order
    sections = {s.key: [t for t in getattr(a, s.key) if t.dataset == dataset] for s in shown}
    if not any(sections.values()):
        return None
    names = {mid: m.display_name for mid, m in site.models(run).items()}
    figures = [charts.to_json(dial_figure(d)) for d in sections["dials"]]  # in the order of the dials
    return Page(
        path=robustness_path(run.name, dataset),
        template="robustness.md.j2",
        title="How much the answer moves",
        context={
            "run": run,
            "dataset": dataset,
            "partials": [s.template for s in shown],
            **sections,
            "names": names,
            "figures": figures,
            "conventions": _CONVENTIONS,
            "uncertainty_page": uncertainty_path(run.name, dataset) if sections["uncertainty"] else None,
            "dataset_page": site.dataset_page(run.name, dataset),
            "provenance": site.provenance(run),
        },
    )


def uncertainty_unit_path(name: str, dataset: str, unit: str) -> str:
    return page_path("uncertainty_unit", name=name, dataset=dataset, unit=unit)


def ranked_on(lb: Leaderboard) -> str:
    """What a leaderboard's rank column ranks on, in a few words; older results (no rule recorded) rank
    on the mean."""
    return _RANKED_ON.get(lb.tests.ranking or "mean", _RANKED_ON["mean"]).format(metric=lb.metric)


def leaderboard_ranks(site: SiteModel, run: Run) -> dict[TableKey, tuple[Leaderboard, dict[str, int]]]:
    """Every leaderboard of the run by its key, with its rank column by model: the order the views of the
    same cell (uncertainty, intervals, stability) show their rows in."""
    return {lb.key: (lb, {r.model: r.rank for r in lb.rows}) for lb in site.leaderboards(run)}


def in_rank_order(models: list[str], rank: dict[str, int], names: dict[str, str]) -> list[str]:
    """``models`` in the order of a leaderboard's rows (``rank`` is its rank column, in row order: ties as
    the leaderboard breaks them); models it does not rank last, by name."""
    row = {m: i for i, m in enumerate(rank)}
    return sorted(models, key=lambda m: (m not in row, row.get(m, 0), names.get(m, m).lower()))


def reader_words(names: dict[str, str]) -> Callable[[str | None], str]:
    """A results-file sentence as a page shows it: no machine, file or internal-document note
    (:func:`~benchmarks.render.fmt.reader_text`), model ids written as display names."""
    return lambda text: named(reader_text(text), names)


def uncertainty_anchor(protocol: str, demand_class: str, metric: str) -> str:
    """The id of one table on its unit's uncertainty page (the leaderboard of the same cell links to it)."""
    return "u-" + slugify(f"{protocol}-{demand_class}-{metric}")


def _uncertainty_section(
    site: SiteModel, run: Run, t: UncertaintyTable, boards: dict, names: dict[str, str]
) -> dict[str, Any]:
    """One bootstrap table with its rows in the leaderboard's rank order, that leaderboard's rank beside each."""
    key = TableKey(t.dataset, t.protocol, t.unit, t.demand_class, t.metric)
    lb, rank = boards.get(key, (None, {}))
    by_model: dict[str, UncertaintyRow] = {r.model: r for r in t.rows}
    order = in_rank_order(list(by_model), rank, names)
    return {
        "table": t,
        "rows": [(by_model[m], rank.get(m)) for m in order],
        "anchor": uncertainty_anchor(t.protocol, t.demand_class, t.metric),
        "lb_page": site.leaderboard_page(run.name, key) if lb is not None else None,
        "ranked_on": ranked_on(lb) if lb is not None else None,
        "reasons": {k: reader_words(names)(getattr(t, k)) for k in ("interval_reason", "dm_reason", "mcs_reason")},
    }


def uncertainty_pages(site: SiteModel, run: Run, dataset: str) -> list[Page]:
    """The dataset's bootstrap tables (linked from its robustness page): an index page listing its units,
    then one page per unit with that unit's tables; none when the dataset has no tables. A page per unit
    keeps a deep hierarchy's pages light (fpp3 PBS has 57 tables, too heavy and slow to load on one page)."""
    tables = [t for t in run.data.analyses.uncertainty if t.dataset == dataset]
    if not tables:
        return []
    units = list(dict.fromkeys(t.unit for t in tables))
    names = {mid: m.display_name for mid, m in site.models(run).items()}
    boards = leaderboard_ranks(site, run)
    common = {
        "run": run,
        "dataset": dataset,
        "names": names,
        "dataset_page": site.dataset_page(run.name, dataset),
        "robustness_page": robustness_path(run.name, dataset),
        "index_page": uncertainty_path(run.name, dataset),
        "provenance": site.provenance(run),
    }
    index = Page(
        path=uncertainty_path(run.name, dataset),
        template="uncertainty.md.j2",
        title="Uncertainty of every ranking",
        context={
            **common,
            "unit": None,
            "uncertainty": [],
            "units": [
                (u, uncertainty_unit_path(run.name, dataset, u), sum(t.unit == u for t in tables)) for u in units
            ],
        },
    )
    per_unit = [
        Page(
            path=uncertainty_unit_path(run.name, dataset, u),
            template="uncertainty.md.j2",
            title=f"Uncertainty: {u}",
            context={
                **common,
                "unit": u,
                "uncertainty": [_uncertainty_section(site, run, t, boards, names) for t in tables if t.unit == u],
                "units": [],
            },
        )
        for u in units
    ]
    return [index, *per_unit]


def across_page(site: SiteModel, run: Run) -> Page | None:
    across = run.data.analyses.across
    if across is None:
        return None
    names = {mid: m.display_name for mid, m in site.models(run).items()}
    return Page(
        path=across_path(run.name),
        template="across.md.j2",
        title=safe_label("Across datasets"),
        context={
            "run": run,
            "across": across,
            "names": names,
            "bench_page": site.bench_page(run.name),
            "provenance": site.provenance(run),
        },
    )


def _robustness_link() -> str:
    """The dataset page's words for the robustness page: the topics of its sections (benchmarks.sections)."""
    return "How much the answer moves: " + ", ".join(s.topic for s in on_page() if s.topic)


@page_type(
    "robustness",
    path="benchmarks/{name}/{dataset}/robustness.md",
    scope="dataset",
    order=50,
    link="robustness_page",
    link_text=_robustness_link,
    link_order=10,
)
def _robustness(site: SiteModel, run: Run, dataset: str) -> Built:
    return in_nav(robustness_page(site, run, dataset))


@page_type(
    "uncertainty",
    path="benchmarks/{name}/{dataset}/uncertainty.md",
    scope="dataset",
    order=60,
    link="uncertainty_page",
    link_text=(
        "Uncertainty of every ranking: bootstrap intervals, rank intervals, adjusted p-values, model confidence set"
    ),
    link_order=20,
)
def _uncertainty(site: SiteModel, run: Run, dataset: str) -> Built:
    return in_nav(uncertainty_pages(site, run, dataset))  # the index, its units as children


@page_type("across", path="benchmarks/{name}/across.md", scope="benchmark", order=10)
def _across(site: SiteModel, run: Run) -> Built:
    return in_nav(across_page(site, run))
