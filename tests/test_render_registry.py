"""Page types declared once (benchmarks/render/builders/registry.py): one path convention, refused
duplicates, helpful unknown names, and a new type picked up by its scope without touching the frame."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.render.builders import registry
from benchmarks.render.builders.analyses import across_path, robustness_path, uncertainty_path, uncertainty_unit_path
from benchmarks.render.builders.published import published_path
from benchmarks.render.load import load_file
from benchmarks.render.pages import Page, SiteModel
from benchmarks.render.site import build_pages
from benchmarks.results_model import TableKey

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "results_example.json"


@pytest.fixture
def fresh_registry(monkeypatch):
    """The registry with every builder loaded, restored after the test (a test may register a type)."""
    registry.page_types("site")
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))


@pytest.fixture
def site(tmp_path) -> SiteModel:
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    path = tmp_path / data["name"] / f"{data['version']}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return SiteModel([load_file(path)])


def test_every_page_path_is_its_type_path_with_each_part_slugified():
    # paths as the site has always published them (links from outside must keep working)
    key = TableKey(dataset="M5 sample", protocol="rolling_origin", unit="groups:5", demand_class="all", metric="mase")
    assert SiteModel.leaderboard_page("small", key) == (  # a cell's page at its metric's panel
        "benchmarks/small/m5-sample-26153bbd/rolling_origin/groups-5/leaderboard-all.md#mase"  # sha256("M5 sample")[:8]
    )  # the address of the page per metric it had before, .../groups-5/all-mase.html, redirects there (site.py)
    assert SiteModel.bench_page("small") == "benchmarks/small/index.md"
    assert SiteModel.history_page("small") == "benchmarks/small/history.md"
    assert SiteModel.dataset_page("small", "m5") == "benchmarks/small/m5/index.md"
    assert SiteModel.unit_page("small", "m5", "rolling_origin", "series") == (
        "benchmarks/small/m5/rolling_origin/series/index.md"
    )
    assert SiteModel.intervals_page("small", "m5") == "benchmarks/small/m5/intervals.md"
    assert SiteModel.replay_page("small", "m5") == "benchmarks/small/m5/selection-rule.md"
    assert SiteModel.sensitivity_page("small", "m5") == "benchmarks/small/m5/sensitivity.md"
    assert SiteModel.competition_page("small", "m5") == "benchmarks/small/m5/competition.md"
    assert SiteModel.model_page("ses_x") == "models/ses_x.md"
    assert robustness_path("small", "m5") == "benchmarks/small/m5/robustness.md"
    assert uncertainty_path("small", "m5") == "benchmarks/small/m5/uncertainty.md"
    assert uncertainty_unit_path("small", "m5", "level:region") == "benchmarks/small/m5/uncertainty-level-region.md"
    assert across_path("small") == "benchmarks/small/across.md"
    assert published_path("full") == "benchmarks/full/published.md"
    assert registry.page_path("home") == "index.md"


def test_when_a_page_type_is_unknown_then_the_error_lists_the_registered_ones():
    with pytest.raises(registry.UnknownPageTypeError) as err:
        registry.page_path("intervalz", name="small", dataset="m5")
    assert "'intervalz'" in str(err.value)
    assert "intervals" in str(err.value) and "leaderboard" in str(err.value)


def test_when_a_path_part_is_missing_or_extra_then_the_error_names_the_parts_it_needs():
    with pytest.raises(TypeError, match=r"needs the parts \['name', 'dataset'\], got \['name'\]"):
        registry.page_path("intervals", name="small")
    with pytest.raises(TypeError, match="needs the parts"):
        registry.page_path("intervals", name="small", dataset="m5", unit="series")


def test_when_another_module_registers_a_taken_key_or_path_then_it_is_refused(fresh_registry):
    with pytest.raises(ValueError, match="already registered by benchmarks.render.builders.dataset_tables"):
        registry.page_part("intervals", path="benchmarks/{name}/{dataset}/other.md", module="elsewhere")
    with pytest.raises(ValueError, match="would share the path .* with 'intervals'"):
        registry.page_part("other", path="benchmarks/{name}/{dataset}/intervals.md", module="elsewhere")


# the order the committed site lists its page types in: a new type may go anywhere, these keep their order
_PUBLISHED_ORDER = {
    "site": ["home", "benchmark", "models", "glossary", "methodology", "submit"],
    "benchmark": ["across", "history", "published"],
    "dataset": ["intervals", "replay", "sensitivity", "competition", "robustness", "uncertainty"],
}
# and the order of the dataset page's "Other tables" links
_PUBLISHED_LINK_ORDER = ["robustness", "uncertainty", "intervals", "competition", "replay", "sensitivity"]


def _keep_order(keys: list[str], published: list[str]) -> list[str]:
    return [k for k in keys if k in published]


def test_every_builder_module_registers_its_types_and_each_scope_lists_them_in_order():
    registry.page_types("site")  # loads every builder module
    kinds = list(registry._REGISTRY.values())
    package = Path(registry.__file__).parent
    modules = {f"{registry.__package__}.{f.stem}" for f in package.glob("*.py")} - {
        f"{registry.__package__}.__init__",
        registry.__name__,
    }
    assert modules <= {t.module for t in kinds}  # every builder module registers at least one type
    assert len({t.key for t in kinds}) == len(kinds)
    assert len({t.path for t in kinds}) == len(kinds)
    for scope, published in _PUBLISHED_ORDER.items():
        scoped = registry.page_types(scope)  # type: ignore[arg-type]
        assert all(t.build is not None for t in scoped)
        assert [(t.order, t.key) for t in scoped] == sorted((t.order, t.key) for t in scoped)
        assert len({t.order for t in scoped}) == len(scoped)  # no tie left to the keys' spelling
        assert _keep_order([t.key for t in scoped], published) == published
    dataset = registry.page_types("dataset")
    linked = [t.link for t in dataset if t.link is not None]
    assert len(set(linked)) == len(linked)  # one dataset-page key each
    listed = sorted((t.order if t.link_order is None else t.link_order, t.key) for t in dataset if t.link_text)
    assert len({order for order, _ in listed}) == len(listed)
    assert _keep_order([key for _, key in listed], _PUBLISHED_LINK_ORDER) == _PUBLISHED_LINK_ORDER


def test_a_new_dataset_page_type_is_built_listed_and_linked_without_touching_the_frame(fresh_registry, site):
    built: list[str] = []

    @registry.page_type(
        "_probe",
        path="benchmarks/{name}/{dataset}/_probe.md",
        scope="dataset",
        order=5,
        link="_probe",
        link_text="Probe: a page no real type would take",
        link_order=1,
    )
    def probe(site: SiteModel, run, dataset: str) -> registry.Built:
        built.append(dataset)
        path = registry.page_path("_probe", name=run.name, dataset=dataset)
        return registry.in_nav(Page(path=path, template="_probe.md.j2", title="Probe"))

    pages, nav = build_pages(site, root=ROOT)
    run = site.latest(site.names[0])
    assert built == [d.name for d in run.data.datasets]  # once for every dataset
    for dataset, ds_nav in zip(built, nav[1].children[0].children[: len(built)], strict=True):
        path = registry.page_path("_probe", name=run.name, dataset=dataset)
        assert path in {p.path for p in pages}
        (dataset_page,) = [p for p in pages if p.path == site.dataset_page(run.name, dataset)]
        assert dataset_page.context["_probe"] == path
        # first among the dataset page's other tables (link order 1), in the words it declares
        assert dataset_page.context["other_tables"][0] == ("Probe: a page no real type would take", path)
        # listed after the dataset's units (their pages are index.md), before the types of a later order
        kinds = ["unit" if c.page.endswith("/index.md") else c.title for c in ds_nav.children]
        units = kinds.count("unit")
        assert kinds[: units + 1] == ["unit"] * units + ["Probe"]


def test_a_type_that_builds_nothing_leaves_its_link_empty_and_adds_no_entry(fresh_registry, site):
    @registry.page_type(
        "_never",
        path="benchmarks/{name}/{dataset}/_never.md",
        scope="dataset",
        order=99,
        link="_never",
        link_text="Never",
    )
    def never(site: SiteModel, run, dataset: str) -> registry.Built:
        return registry.in_nav(None)

    run = site.latest(site.names[0])
    scoped = registry.build_scope("dataset", site, run, run.data.datasets[0].name)
    assert scoped.links["_never"] is None
    assert "Never" not in [text for text, _ in scoped.listed]
    assert all(node.title for node in scoped.nav)
    assert not any(p.path.endswith("_never.md") for p in scoped.pages)
