"""Every dataset page describes its dataset, and the competition pages show each dataset's own horizon.

Read over the committed results rendered once per run (``committed_docs``); the expected values come from
the results files and the dataset manifest, never typed here.
"""

from __future__ import annotations

import html
import re
from functools import cache

import pytest

from benchmarks.render.load import Run, load_results
from benchmarks.results_io import RESULTS_DIR
from benchmarks.run_inputs import MANIFEST
from tycheon.data.manifest import read_manifest


@cache
def _latest() -> dict[str, Run]:
    runs: dict[str, Run] = {}
    for run in load_results(RESULTS_DIR):  # sorted by (name, version): the last one of a name is its latest
        runs[run.name] = run
    return runs


def _facts(page: str) -> dict[str, str]:
    """The dataset page's "About" table: row header -> cell text."""
    table = page.split('<table class="tyc-table tyc-dataset-facts">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r'<th scope="row">(.*?)</th><td>(.*?)</td>', table, re.S)
    return {re.sub(r"<[^>]+>", "", k): html.unescape(re.sub(r"<[^>]+>", "", v)).strip() for k, v in rows}


def _dataset_pages(committed_docs) -> dict[tuple[str, str], str]:
    """(benchmark, dataset) -> the dataset page's markdown."""
    pages = {}
    for path, template in committed_docs.templates.items():
        if template == "dataset.md.j2":
            _, name, dataset, _ = path.split("/")
            pages[name, dataset] = (committed_docs.docs / path).read_text(encoding="utf-8")
    return pages


def _series_count(run: Run, dataset: str) -> int:
    info = next((d for d in run.data.datasets if d.name == dataset), None)
    if info is not None:
        return info.n_series
    return max(r.n_series for t in run.data.competition if t.dataset == dataset for r in t.rows if r.status == "ran")


def test_every_dataset_page_states_source_licence_frequency_series_count_and_what_a_series_is(committed_docs):
    manifest = read_manifest(MANIFEST)
    pages = _dataset_pages(committed_docs)
    datasets = {(name, d) for name, run in _latest().items() for d in _dataset_names(run)}
    assert set(pages) == datasets and len({d for _, d in datasets}) >= 14
    for (name, dataset), page in pages.items():
        facts = _facts(page)
        entry = manifest[dataset]
        assert facts["Source"] == entry.source, (name, dataset)
        assert facts["Licence"] == entry.licence, (name, dataset)
        assert facts["Frequency"].startswith(entry.frequency), (name, dataset)
        assert facts["Series"].split(" ")[0].replace(",", "") == str(_series_count(_latest()[name], dataset))
        assert facts["A series is"].startswith("one "), (name, dataset)
        assert "not described" not in page and "not in the dataset catalogue" not in page
        assert "not recorded" not in page


def _dataset_names(run: Run) -> set[str]:
    return (
        {d.name for d in run.data.datasets}
        | {lb.dataset for lb in run.data.leaderboards}
        | {t.dataset for t in run.data.competition}
    )


def test_a_dataset_the_results_file_does_not_describe_is_described_from_the_catalogue(committed_docs):
    run = _latest()["full"]
    undescribed = sorted({t.dataset for t in run.data.competition} - {d.name for d in run.data.datasets})
    assert undescribed  # full scores M1, M3 and Tourism by the competition protocol only
    page = _dataset_pages(committed_docs)["full", undescribed[0]]
    description = read_manifest(MANIFEST)[undescribed[0]].description
    assert f"<p>{html.escape(description[:1].upper() + description[1:])}.</p>" in page


@pytest.mark.parametrize("name", ["small", "full"])
def test_competition_pages_show_each_datasets_own_horizon_not_the_protocols_longest(committed_docs, name):
    run = _latest()[name]
    horizons = {t.dataset: t.horizon for t in run.data.competition}
    longest = next(p.horizon for p in run.data.protocols if p.kind == "competition")
    assert any(h != longest for h in horizons.values())  # the protocol's one horizon would be wrong for these
    for dataset, horizon in horizons.items():
        page = (committed_docs.docs / f"benchmarks/{name}/{dataset}/competition.md").read_text(encoding="utf-8")
        stated = re.search(
            r"<strong>Protocol <code>competition</code> on .*?</strong> horizon <strong>(\d+)</strong>", page
        )
        assert stated is not None and int(stated.group(1)) == horizon, dataset
        about = _facts(_dataset_pages(committed_docs)[name, dataset])
        assert about["Protocol competition"].startswith(f"horizon {horizon},"), dataset
