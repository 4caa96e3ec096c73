"""Published competition results as cited data: the strict loader, the comparison with a run, the page.

Oracle: the Tourism competition's published MAPE of the seasonal naive forecasts (Athanasopoulos et al.
2011, Tables 4-6, as reprinted by the Tcomp R package's test-naive-mape.R, whose vignette says they are
exact matches of the paper) is recomputed here from the data with plain numpy, independently of the
engine and the metric code, and must equal the printed numbers at their printed precision.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks.published.catalogue import PUBLISHED_PATH, PublishedDataError, load_published
from benchmarks.published.compare import compare
from benchmarks.render.load import load_file
from benchmarks.results_model import CompetitionTable
from tycheon.data.datasets import load

REPO = Path(__file__).resolve().parent.parent
SMALL = REPO / "benchmarks" / "results" / "small" / "v0005.json"


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "published.toml"
    path.write_text(text)
    return path


_SOURCE = """
[[sources]]
id = "paper"
kind = "printed_table"
citation = "A paper"
"""
_VALUE = """
[[values]]
competition = "M3"
datasets = ["m3_yearly"]
metric = "smape"
method = "NAIVE2"
model = "naive2"
source = "paper"
table = "Table 1"
row = "Naive2"
column = "Average"
value = 17.88
precision = 2
"""


def test_the_committed_file_loads_and_every_reprint_is_traceable():
    catalogue = load_published()
    assert catalogue.values
    for value in catalogue.values:
        source = catalogue.source(value.source)
        if source.kind == "reprint":
            assert source.repository and source.commit and source.path and source.quote
        if source.kind == "recomputed":
            assert source.script and (REPO / source.script).is_file()
        assert round(float(value.value), value.precision) == float(value.value)


@pytest.mark.parametrize(
    "text, message",
    [
        (
            _SOURCE + _VALUE.replace('row = "Naive2"', 'row = "Naive2"\ncolour = "red"'),
            r"unknown field 'values\.0\.colour'",
        ),
        (_SOURCE + _VALUE.replace("value = 17.88", "value = 17.883"), r"more than its printed 2 decimal place"),
        (
            _SOURCE + _VALUE.replace('source = "paper"', 'source = "memory"'),
            r"sources \['memory'\] that are not defined",
        ),
        (_SOURCE.replace('"printed_table"', '"reprint"') + _VALUE, r"a reprint must name \['reprints', 'repository'"),
        (_SOURCE + _VALUE.replace('metric = "smape"', 'metric = "rmse"'), r"field 'values\.0\.metric'"),
        (_SOURCE.replace('"printed_table"', '"recomputed"') + _VALUE, r"recomputed values must name \['repository'"),
    ],
)
def test_when_the_published_file_is_wrong_then_loading_names_the_field(tmp_path, text, message):
    with pytest.raises(PublishedDataError, match=message):
        load_published(_write(tmp_path, text))


def _table(dataset: str, metric: str, rows: list[tuple[str, float | None, int, str]]) -> CompetitionTable:
    return CompetitionTable(
        dataset=dataset,
        protocol="competition",
        competition="M3",
        horizon=6,
        metric=metric,
        metric_definition="d",
        rows=[
            {"rank": None, "model": m, "display_name": m.upper(), "value": v, "n_series": n, "status": s}
            for m, v, n, s in rows
        ],
    )


def test_a_category_value_is_held_against_the_run_at_its_printed_precision(tmp_path):
    catalogue = load_published(_write(tmp_path, _SOURCE + _VALUE))
    tables = [_table("m3_yearly", "smape", [("naive2", 17.8799, 645, "ran")]), _table("m3_yearly", "mase", [])]
    first, second = compare(tables, catalogue)
    (row,) = first.rows
    assert row.ours == 17.8799 and row.matches is True and row.display_name == "NAIVE2"
    assert row.difference == pytest.approx(-0.0001) and row.relative == pytest.approx(-0.0001 / 17.88)
    assert second.rows == ()  # no published table for this category: the page says so
    off = compare([_table("m3_yearly", "smape", [("naive2", 17.8749, 645, "ran")])], catalogue)[0].rows[0]
    assert off.matches is False  # 17.87 printed: not the published 17.88


def test_a_pooled_value_is_held_against_the_series_weighted_mean_of_its_categories(tmp_path):
    pooled = _VALUE.replace('["m3_yearly"]', '["m3_yearly", "m3_other"]')
    catalogue = load_published(_write(tmp_path, _SOURCE + pooled))
    tables = [
        _table("m3_yearly", "smape", [("naive2", 17.0, 645, "ran")]),
        _table("m3_other", "smape", [("naive2", 6.0, 174, "ran")]),
    ]
    pooled_row = compare(tables, catalogue)[-1]
    assert pooled_row.datasets == ("m3_yearly", "m3_other") and pooled_row.n_series == 819
    assert pooled_row.rows[0].ours == pytest.approx((17.0 * 645 + 6.0 * 174) / 819)
    missing = compare(tables[:1], catalogue)[-1].rows[0]
    assert missing.ours is None and missing.note == "this run has no smape table for m3_other"
    failed = compare([tables[0], _table("m3_other", "smape", [("naive2", None, 174, "failed")])], catalogue)[-1]
    assert failed.rows[0].ours is None and failed.rows[0].note == "naive2 failed on m3_other"


@pytest.mark.parametrize("dataset", ["tourism_monthly", "tourism_quarterly", "tourism_yearly"])
def test_seasonal_naive_mape_recomputed_from_the_data_equals_the_published_value(dataset):
    value = next(v for v in load_published().values if v.datasets == [dataset] and v.model == "seasonal_naive")
    panel = load(dataset)
    view = panel.dense()
    season, horizon = panel.season_length, int(panel.attributes["horizon"].iloc[0])
    per_series = []
    for i in range(view.values.shape[0]):
        y = view.values[i][view.observed[i]]
        train, test = y[:-horizon], y[-horizon:]
        forecast = np.resize(train[-season:], horizon)  # the last season repeated (yearly: the last value)
        per_series.append(100.0 * np.mean(np.abs(test - forecast) / np.abs(test)))
    assert f"{np.mean(per_series):.{value.precision}f}" == value.printed()


def test_the_small_run_shows_every_competition_category_and_says_where_no_table_was_found():
    run = load_file(SMALL)
    categories = compare(run.data.competition, load_published())
    labels = [(c.label, c.metric) for c in categories]
    assert labels[: len(run.data.competition)] == [(t.dataset, t.metric) for t in run.data.competition]
    by_label = {(c.label, c.metric): c for c in categories}
    recomputed = by_label[("m3_monthly", "smape")].rows  # no printed table: only the recomputed submissions
    assert {r.source.kind for r in recomputed} == {"recomputed"} and {r.published.model for r in recomputed} == {
        "naive2",
        "ses_classic",
        "theta_classic",
    }
    assert all(r.ours is None and "not in this run's roster" in r.note for r in recomputed)
    assert by_label[("tourism_monthly", "mase")].rows == ()
    (snaive,) = by_label[("tourism_monthly", "mape")].rows
    assert snaive.matches is True and snaive.published.printed() == "22.56"
    assert snaive.ours == pytest.approx(22.5624, abs=1e-4)


def test_the_site_has_a_published_page_per_benchmark_with_competition_tables(tmp_path):
    from benchmarks.render.site import render_site

    results = tmp_path / "results" / "small"
    results.mkdir(parents=True)
    doc = json.loads(SMALL.read_text())
    (results / "v0005.json").write_text(json.dumps(doc))
    render_site(results_dir=tmp_path / "results", out=tmp_path / "site" / "docs")
    page = (tmp_path / "site" / "docs" / "benchmarks" / "small" / "published.md").read_text()
    assert "## m3_monthly: smape, horizon 18" in page
    assert "No published table found in the sources available to us" in page
    assert "<td>22.56</td><td>22.5624</td>" in page
    assert '"Published vs ours": benchmarks/small/published.md' in (tmp_path / "site" / "mkdocs.yml").read_text()
    assert PUBLISHED_PATH.name == "competitions.toml"


def test_a_dataset_scored_only_by_its_competition_gets_a_dataset_and_a_competition_page(tmp_path):
    # full scores every M1/M3/Tourism category by the competition protocol alone: simulate one such
    # category by moving small's M3 competition table to a dataset without rolling origins
    from benchmarks.render.site import render_site

    doc = json.loads(SMALL.read_text())
    for table in doc["competition"]:
        if table["dataset"] == "m3_monthly":
            table["dataset"] = "m3_other"
    for model in doc["models"]:
        for run in model["runs"]:
            if run["dataset"] == "m3_monthly" and run["protocol"] == "competition":
                run["dataset"] = "m3_other"
    results = tmp_path / "results" / "small"
    results.mkdir(parents=True)
    (results / "v0005.json").write_text(json.dumps(doc))
    render_site(results_dir=tmp_path / "results", out=tmp_path / "site" / "docs")
    folder = tmp_path / "site" / "docs" / "benchmarks" / "small" / "m3_other"
    assert "Scored by the competition protocol only" in (folder / "index.md").read_text()
    assert "## M3, smape, horizon 18" in (folder / "competition.md").read_text()


@pytest.mark.parametrize("dataset", ["m3_yearly", "m3_other"])
def test_naive2_on_the_non_seasonal_m3_categories_equals_the_submitted_naive2_at_four_decimals(dataset):
    # the M3 NAIVE2 submission (Mcomp data/M3Forecast.rda) scored by extract_m3_submissions.py is the
    # reference; yearly and "other" data are never seasonally adjusted, so Naive2 is the last value
    from tests._forecasters_support import make_history
    from tycheon.forecasters import create

    value = next(
        v for v in load_published().values if v.datasets == [dataset] and v.model == "naive2" and v.metric == "smape"
    )
    panel = load(dataset)
    view = panel.dense()
    horizon = int(panel.attributes["horizon"].iloc[0])
    model = create("naive2")
    per_series = []
    for i in range(view.values.shape[0]):
        y = view.values[i][view.observed[i]]
        test = y[-horizon:]
        f = model.predict(make_history(y[None, :-horizon], season=panel.season_length), horizon=horizon).point[0]
        per_series.append(np.mean(200.0 * np.abs(test - f) / (np.abs(test) + np.abs(f))))
    assert f"{np.mean(per_series):.{value.precision}f}" == value.printed()


def test_a_subsampled_category_is_shown_but_not_compared_with_a_value_over_every_series(tmp_path):
    catalogue = load_published(_write(tmp_path, _SOURCE + _VALUE))
    tables = [_table("m3_yearly", "smape", [("naive2", 17.8799, 10, "ran")])]
    (row,) = compare(tables, catalogue, subsampled={"m3_yearly": 10})[0].rows
    assert row.ours == 17.8799 and row.matches is None and row.difference is None
    assert row.note == "not comparable: this run scored a subsample of m3_yearly (10 series)"
