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
    assert SiteModel.leaderboard_page("small", key) == (
        "benchmarks/small/m5-sample-26153bbd/rolling_origin/groups-5/all-mase.md"  # sha256("M5 sample")[:8]
    )
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


def test_every_builder_module_registers_its_types_and_each_scope_lists_them_in_order():
    assert [t.key for t in registry.page_types("site")] == [
        "home",
        "benchmark",
        "models",
        "glossary",
        "methodology",
        "submit",
    ]
    assert [t.key for t in registry.page_types("benchmark")] == ["across", "history", "published"]
    dataset = registry.page_types("dataset")
    assert [t.key for t in dataset] == [
        "intervals",
        "replay",
        "sensitivity",
        "competition",
        "robustness",
        "uncertainty",
    ]
    assert all(t.build is not None for t in dataset)
    assert len({t.link for t in dataset}) == len(dataset)  # one dataset-page key each


def test_a_new_dataset_page_type_is_built_listed_and_linked_without_touching_the_frame(fresh_registry, site):
    built: list[str] = []

    @registry.page_type("notes", path="benchmarks/{name}/{dataset}/notes.md", scope="dataset", order=5, link="notes")
    def notes(site: SiteModel, run, dataset: str) -> registry.Built:
        built.append(dataset)
        path = registry.page_path("notes", name=run.name, dataset=dataset)
        return registry.in_nav(Page(path=path, template="notes.md.j2", title="Notes"))

    pages, nav = build_pages(site, root=ROOT)
    run = site.latest(site.names[0])
    assert built == [d.name for d in run.data.datasets]  # once for every dataset
    for dataset, ds_nav in zip(built, nav[1].children[0].children[: len(built)], strict=True):
        path = registry.page_path("notes", name=run.name, dataset=dataset)
        assert path in {p.path for p in pages}
        (dataset_page,) = [p for p in pages if p.path == site.dataset_page(run.name, dataset)]
        assert dataset_page.context["notes"] == path
        # listed after the dataset's units (their pages are index.md), before the types of a later order
        kinds = ["unit" if c.page.endswith("/index.md") else c.title for c in ds_nav.children]
        units = kinds.count("unit")
        assert kinds[: units + 1] == ["unit"] * units + ["Notes"]


def test_a_type_that_builds_nothing_leaves_its_link_empty_and_adds_no_entry(fresh_registry, site):
    @registry.page_type("never", path="benchmarks/{name}/{dataset}/never.md", scope="dataset", order=99, link="never")
    def never(site: SiteModel, run, dataset: str) -> registry.Built:
        return registry.in_nav(None)

    run = site.latest(site.names[0])
    scoped = registry.build_scope("dataset", site, run, run.data.datasets[0].name)
    assert scoped.links["never"] is None
    assert all(node.title for node in scoped.nav)
    assert not any(p.path.endswith("never.md") for p in scoped.pages)
