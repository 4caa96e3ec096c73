"""Results history (issue 34): each version records the statistics version that computed it and a hash chain
of the versions before it; a version of an older statistics version is verified by hash, not recomputed; a
statistics change is a new version (``python -m benchmarks.restat``), never a rewrite; the version-history
page says which verdicts changed between versions, and why.

Every test works on copies in ``tmp_path``; the committed results are only read."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path

import pytest

import tycheon._version as tycheon_version
from benchmarks import history
from benchmarks.render import render_site
from benchmarks.results_io import RESULTS_DIR, file_sha256, strip_volatile, validate_results_file, write_results
from benchmarks.results_model import SCHEMA_VERSION
from benchmarks.validate import main as validate_main
from benchmarks.validate import verify_file
from tests._scores_support import toy_scores

FIXTURE = Path(__file__).parent / "fixtures" / "results_example.json"
TINY = Path(__file__).parent / "fixtures" / "tiny_benchmark.toml"
TABLES = ("leaderboards", "intervals", "competition", "analyses", "replay", "sensitivity")
NEXT = tycheon_version.STATISTICS_VERSION + 1
"""A statistics version after the running code's: what a statistics change bumps it to."""


def _bump(monkeypatch: pytest.MonkeyPatch) -> None:
    """The statistics changed: the running code is at :data:`NEXT`."""
    monkeypatch.setattr(tycheon_version, "STATISTICS_VERSION", NEXT)
    monkeypatch.setattr(tycheon_version, "STATISTICS_CHANGES", {**tycheon_version.STATISTICS_CHANGES, NEXT: "a test"})


def _no_recompute(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make recomputing a version's tables record the version and fail it (validate imports it when called)."""
    called: list[str] = []

    def refuse(doc, source):  # noqa: ANN001
        called.append(doc.version)
        return ["recomputed, which a version of an older statistics version must not be"]

    monkeypatch.setattr("benchmarks.verify.recompute_problems", refuse)
    return called


def _doc() -> dict:
    doc = json.loads(FIXTURE.read_text())
    doc.pop("version")
    doc.pop("sidecar")
    return doc


def _scores():  # noqa: ANN202
    return toy_scores(("naive", "ses"), n_series=2, n_origins=1, horizon=1, quantiles=False)


def _edit_a_number(path: Path) -> None:
    """Change one digit of the first mean in ``path`` (one byte of a table; still valid JSON and schema)."""
    text = path.read_text(encoding="utf-8")
    found = re.search(r'"mean": -?\d+\.\d*(\d)', text)
    assert found is not None
    at = found.start(1)
    text = text[:at] + ("1" if text[at] != "1" else "2") + text[at + 1 :]
    path.write_text(text, encoding="utf-8")


# --- the fields a version records --------------------------------------------------------------------------------


def test_a_written_version_records_its_statistics_version_tables_hash_and_every_earlier_versions_sha256(tmp_path):
    first = write_results(_doc(), _scores(), results_dir=tmp_path, statistics_version=1)
    second = write_results(_doc(), _scores(), results_dir=tmp_path)
    one, two = (json.loads(p.read_text()) for p in (first, second))
    assert one["schema_version"] == two["schema_version"] == SCHEMA_VERSION
    assert one["provenance"]["statistics_version"] == 1 and one["provenance"]["history"] == []
    assert two["provenance"]["statistics_version"] == tycheon_version.STATISTICS_VERSION
    assert two["provenance"]["history"] == [{"version": "v0001", "sha256": file_sha256(first), "statistics_version": 1}]
    for path, doc in ((first, one), (second, two)):
        assert doc["provenance"]["tables_sha256"] == history.tables_sha256(doc)
        assert validate_results_file(path) == []
    # two runs with equal tables compare equal once wall-clock facts and the chain are left out
    strip = [strip_volatile(d) for d in (one, two)]
    for d in strip:
        del d["version"], d["provenance"]["statistics_version"]
    assert strip[0] == strip[1]


def test_a_version_written_before_the_field_was_computed_by_statistics_version_1():
    doc = json.loads(FIXTURE.read_text())
    assert "statistics_version" not in doc["provenance"]
    assert history.statistics_version_of(doc) == 1
    assert history.tables_sha256(doc) == history.tables_sha256({**doc, "provenance": {}})  # tables only
    timed = copy.deepcopy(doc)
    timed["leaderboards"][0]["timings"] = {"seconds": 1.0}  # a wall-clock fact does not change the hash
    assert history.tables_sha256(timed) == history.tables_sha256(doc)


# --- validate: recompute the current statistics version, verify older ones by hash ----------------------------


def test_a_version_of_an_older_statistics_version_is_verified_by_the_hash_a_later_version_recorded(
    tmp_path, monkeypatch, capsys
):
    first = write_results(_doc(), _scores(), results_dir=tmp_path, statistics_version=1)
    last = write_results(_doc(), _scores(), results_dir=tmp_path, statistics_version=1)
    called = _no_recompute(monkeypatch)
    assert verify_file(first) == (
        [],
        "computed by statistics version 1; verified by hash (recorded in v0002), not recomputed",
    )
    problems, note = verify_file(last)  # the newest: nothing pins it yet
    assert problems == [] and "not pinned by a later version" in note and "its own tables hash" in note
    assert called == []
    assert validate_main([str(first), str(last)]) == 0
    out = capsys.readouterr().out
    assert f"valid   {first} (computed by statistics version 1; verified by hash (recorded in v0002)" in out


def test_a_version_of_the_current_statistics_version_is_recomputed(tmp_path, monkeypatch):
    path = write_results(_doc(), _scores(), results_dir=tmp_path)
    called = _no_recompute(monkeypatch)
    problems, _ = verify_file(path)
    assert called == ["v0001"] and problems and "must not be" in problems[0]


def test_an_edited_older_version_is_invalid_naming_the_later_version_that_pinned_it(tmp_path, capsys):
    first = write_results(_doc(), _scores(), results_dir=tmp_path, statistics_version=1)
    write_results(_doc(), _scores(), results_dir=tmp_path, statistics_version=1)
    third = write_results(_doc(), _scores(), results_dir=tmp_path, statistics_version=1)
    pinned = file_sha256(first)
    _edit_a_number(first)
    problems, _ = verify_file(first)
    assert len(problems) == 3  # its own tables hash, and the two later versions' records of its bytes
    assert "its published tables hash to sha256" in problems[0] and "a table was edited" in problems[0]
    for later, problem in zip(("v0002", "v0003"), problems[1:], strict=True):
        assert f"but {later} ({first.parent / later}.json) recorded sha256 {pinned} for v0001" in problem
        assert f"its file bytes have sha256 {file_sha256(first)}" in problem
    assert validate_main([str(first)]) == 1
    assert "INVALID" in capsys.readouterr().out
    assert verify_file(third)[0] == []  # the later versions themselves are as written


def test_a_removed_replaced_or_inserted_version_breaks_the_chain(tmp_path):
    first = write_results(_doc(), _scores(), results_dir=tmp_path, statistics_version=1)
    write_results(_doc(), _scores(), results_dir=tmp_path, statistics_version=1)
    fourth = write_results(_doc(), _scores(), results_dir=tmp_path, version="v0004", statistics_version=1)
    lone = tmp_path / "elsewhere" / fourth.name  # a copy of one version alone is checked on its own
    lone.parent.mkdir()
    shutil.copyfile(fourth, lone)
    assert history.check_history(lone).problems == ()
    first.unlink()  # removed after v0002 and v0004 pinned it
    assert any("its history records v0001" in p and "is missing" in p for p in verify_file(fourth)[0])
    other = _doc()
    other["warnings"] = []  # other bytes under the same name
    write_results(other, _scores(), results_dir=tmp_path, version="v0001", statistics_version=1)
    assert any("but v0002" in p and "v0001 was changed after v0002 pinned it" in p for p in verify_file(first)[0])
    third = write_results(_doc(), _scores(), results_dir=tmp_path, version="v0003", statistics_version=1)
    problems = verify_file(third)[0]  # written after v0004, into the gap
    assert any("v0004" in p and "does not list v0003" in p and "append-only" in p for p in problems)


# --- (a) a statistic changes: every committed version still validates and renders ------------------------------


@pytest.mark.slow
def test_after_a_statistics_change_every_committed_version_validates_by_hash_and_renders(tmp_path, monkeypatch):
    _bump(monkeypatch)

    def other_labels(*args, **kwargs):  # noqa: ANN002, ANN003
        raise AssertionError("a statistic was computed for a version of an older statistics version")

    # the statistic itself changed (any call of it would show up here), as a new statistics version says;
    # the leaderboard's tests module is imported first, so that it does not import the patched function as its own
    import tycheon.analysis.table_tests  # noqa: F401

    monkeypatch.setattr("tycheon.stats.verdict.family_verdicts", other_labels, raising=False)
    monkeypatch.setattr("tycheon.analysis.table_tests.family_verdicts", other_labels)
    called = _no_recompute(monkeypatch)
    import benchmarks.validate as validate_module

    notes: dict[str, str | None] = {}
    real = validate_module.verify_file

    def recording(path):  # noqa: ANN001, ANN202
        problems, note = real(path)
        notes[Path(path).relative_to(RESULTS_DIR).as_posix()] = note
        return problems, note

    monkeypatch.setattr(validate_module, "verify_file", recording)
    from benchmarks.render.__main__ import main as render_main

    out = tmp_path / "site" / "docs"
    assert render_main(["--results", str(RESULTS_DIR), "--out", str(out)]) == 0  # verifies every version first
    committed = sorted(p.relative_to(RESULTS_DIR).as_posix() for p in RESULTS_DIR.glob("*/v*.json"))
    assert sorted(notes) == committed and called == []
    for name, note in notes.items():
        sv = history.statistics_version_of(json.loads((RESULTS_DIR / name).read_text()))
        assert note is not None and note.startswith(f"computed by statistics version {sv}; "), (name, note)
        assert note.endswith("not recomputed")
    for folder in sorted(p for p in RESULTS_DIR.iterdir() if p.is_dir()):
        page = (out / "benchmarks" / folder.name / "history.md").read_text(encoding="utf-8")
        assert all(f"<code>{p.stem}</code>" in page for p in folder.glob("v*.json"))
        assert f"<dt>Statistics version 1</dt><dd>{tycheon_version.STATISTICS_CHANGES[1]}</dd>" in page


# --- (b) on the committed small benchmark: restated, then an edited older version -------------------------------


def _small_copy(tmp_path: Path, last: int = 6) -> Path:
    """benchmarks/results/small up to v0006 (versions written later left out), copied."""
    folder = tmp_path / "results" / "small"
    shutil.copytree(RESULTS_DIR / "small", folder, ignore=shutil.ignore_patterns(".lock", "*.tmp"))
    for path in folder.glob("v*.json"):
        if int(path.stem[1:]) > last:
            path.unlink()
    return folder


@pytest.mark.slow
def test_restating_a_migrated_sidecar_lists_its_parts_and_pins_every_earlier_version(tmp_path, monkeypatch):
    """small v0006 stores its score set as a migrated sidecar: its restatement lists the manifest's parts and
    writes no part; it pins v0001-v0006, so an edited v0003 is invalid naming v0007. The recomputation is
    replaced by the published tables here (the slow part; the tiny benchmark below recomputes for real)."""
    from benchmarks import restat
    from benchmarks.score_source import migration_manifest_path

    folder = _small_copy(tmp_path)
    _bump(monkeypatch)
    monkeypatch.setattr(
        restat,
        "recompute_tables",
        lambda doc, source: restat.Tables(
            doc.leaderboards, doc.intervals, doc.competition, doc.analyses, doc.replay, doc.sensitivity
        ),
    )
    parts_before = sorted(p.name for p in (folder / "parts").iterdir())
    hashes = {p.stem: file_sha256(p) for p in sorted(folder.glob("v*.json"))}
    assert restat.main(["--results", str(folder)]) == 0
    assert sorted(p.name for p in (folder / "parts").iterdir()) == parts_before  # no part written
    old = json.loads((folder / "v0006.json").read_text())
    new = json.loads((folder / "v0007.json").read_text())
    manifest = json.loads(migration_manifest_path(folder, old["sidecar"]["sha256"]).read_text())
    assert new["scores"] == manifest["scores"] and "sidecar" not in new
    prov = new["provenance"]
    assert prov["statistics_version"] == NEXT
    assert prov["history"] == [{"version": v, "sha256": s, "statistics_version": 1} for v, s in hashes.items()]
    assert prov["restated_from"]["version"] == "v0006" and prov["restated_from"]["sha256"] == hashes["v0006"]
    assert prov["restated_from"]["statistics_version"] == 1 and prov["timings"]["restat_seconds"] > 0
    assert prov["config_sha256"] == old["provenance"]["config_sha256"]  # the score set's run, as it was
    called = _no_recompute(monkeypatch)
    for version in ("v0001", "v0006"):
        assert verify_file(folder / f"{version}.json") == (
            [],
            "computed by statistics version 1; verified by hash (recorded in v0007), not recomputed",
        )
    assert called == []
    _edit_a_number(folder / "v0003.json")
    problems, _ = verify_file(folder / "v0003.json")
    assert len(problems) == 1, problems
    assert f"but v0007 ({folder / 'v0007.json'}) recorded sha256 {hashes['v0003']} for v0003" in problems[0]
    assert "v0003 was changed after v0007 pinned it" in problems[0]


def test_restat_refuses_a_newest_version_of_the_current_statistics_or_one_that_does_not_validate(tmp_path, capsys):
    from benchmarks.restat import main as restat_main

    current = write_results(_doc(), _scores(), results_dir=tmp_path)
    assert restat_main(["--results", str(current.parent)]) == 1
    assert "the current one: there is nothing to restate" in capsys.readouterr().err
    older = write_results(_doc(), _scores(), results_dir=tmp_path, statistics_version=1)
    _edit_a_number(older)
    assert restat_main(["--results", str(older.parent)]) == 1
    err = capsys.readouterr().err
    assert "refused, nothing written" in err and "does not validate" in err and "a table was edited" in err
    assert sorted(p.name for p in older.parent.glob("v*.json")) == ["v0001.json", "v0002.json"]
    assert restat_main(["--results", str(tmp_path / "nowhere")]) == 2


# --- (c) restat on the tiny benchmark: recomputed as the pipeline computes, the same parts, refused twice --------


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    from benchmarks.run import main as run_main

    tmp = tmp_path_factory.mktemp("tiny")
    args = ["--config", str(TINY), "--results-dir", str(tmp / "results"), "--cache-dir", str(tmp / "cache")]
    assert run_main(args) == 0
    return tmp / "results" / "tiny"


@pytest.mark.slow
def test_restat_writes_the_next_version_with_the_same_parts_and_the_pipelines_tables_and_refuses_twice(
    tiny_run, tmp_path, monkeypatch, capsys
):
    from benchmarks.restat import main as restat_main

    folder = tmp_path / "tiny"
    shutil.copytree(tiny_run, folder)
    current = tycheon_version.STATISTICS_VERSION
    assert restat_main(["--results", str(folder)]) == 1  # v0001 is of the current statistics version
    assert "nothing to restate" in capsys.readouterr().err and not (folder / "v0002.json").exists()
    _bump(monkeypatch)
    parts_before = sorted(p.name for p in (folder / "parts").iterdir())
    assert restat_main(["--results", str(folder)]) == 0
    assert "wrote" in capsys.readouterr().out
    assert sorted(p.name for p in (folder / "parts").iterdir()) == parts_before
    old, new = (json.loads((folder / f"{v}.json").read_text()) for v in ("v0001", "v0002"))
    # nothing but the statistics version changed, so every table is the pipeline's, bit for bit
    for key in TABLES:
        assert new[key] == old[key], key
    assert new["scores"] == old["scores"] and new["models"] == old["models"]
    carried = [w for w in new["warnings"] if w not in old["warnings"]]
    assert [w["message"] for w in carried] == [
        "restated from v0001: the protocol-sensitivity audit of synthetic_marketplace: it reruns the models under "
        "other protocols, which the score set does not hold is carried over unchanged from it (computed by the "
        "statistics of that version)"
    ]
    prov = new["provenance"]
    assert prov["statistics_version"] == NEXT
    assert prov["history"] == [
        {"version": "v0001", "sha256": file_sha256(folder / "v0001.json"), "statistics_version": current}
    ]
    assert prov["restated_from"]["version"] == "v0001" and prov["restated_from"]["statistics_version"] == current
    assert prov["tables_sha256"] == old["provenance"]["tables_sha256"]  # the same tables
    assert prov["timings"]["restat_seconds"] > 0
    # a second restatement is refused, nothing written
    assert restat_main(["--results", str(folder)]) == 1
    assert "the current one: there is nothing to restate" in capsys.readouterr().err
    assert sorted(p.name for p in folder.glob("v*.json")) == ["v0001.json", "v0002.json"]
    # v0001 is verified by the hash v0002 recorded, v0002 by recomputing it
    assert verify_file(folder / "v0001.json") == (
        [],
        f"computed by statistics version {current}; verified by hash (recorded in v0002), not recomputed",
    )
    assert verify_file(folder / "v0002.json") == ([], None)


# --- (d) the history page: verdict changes between versions, and why --------------------------------------------


def _write(results: Path, data: dict) -> Path:
    path = results / data["name"] / f"{data['version']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


def test_the_history_page_counts_the_verdicts_that_changed_and_says_why(tmp_path):
    results = tmp_path / "results"
    old = json.loads(FIXTURE.read_text())  # statistics version 1 (no field)
    _write(results, old)
    new = copy.deepcopy(old)
    new["version"] = "v0002"
    new["provenance"]["statistics_version"] = 2
    flipped = []
    for lb in new["leaderboards"]:
        for row in lb["rows"]:
            if row["verdict_vs_rw"] == "beats":
                row["verdict_vs_rw"] = "indistinguishable"
                if lb["metric"] == "mase":
                    flipped.append((lb["dataset"], lb["unit"], lb["demand_class"], row["display_name"], row["model"]))
    _write(results, new)
    out = tmp_path / "site" / "docs"
    render_site(results_dir=results, out=out)
    page = (out / "benchmarks" / "small" / "history.md").read_text(encoding="utf-8")
    rows = re.findall(r"<tr><td><code>(v\d{4})</code></td><td>(\d+)</td>", page)
    assert rows == [("v0002", "2"), ("v0001", "1")]  # the statistics version of each version
    for v in (1, 2):
        assert f"<dt>Statistics version {v}</dt><dd>{tycheon_version.STATISTICS_CHANGES[v]}</dd>" in page
    section = page.split("## v0001 to v0002")[1]
    n = len(flipped)
    assert n > 0 and f"{n} of " in section and "verdicts changed" in section
    assert f"<summary>beats &rarr; indistinguishable: {n}</summary>" in section
    assert "the statistics changed (statistics version 1 \u2192 2)" in section
    assert f"<blockquote>Statistics version 2: {tycheon_version.STATISTICS_CHANGES[2]}</blockquote>" in section
    assert "first metric (mase)" in section  # the tables read, where a version gave a verdict per metric
    assert "v0001 gave a verdict per metric table (statistics version 1)" in section
    cell = f"<li>{flipped[0][0]} / {flipped[0][1]} / {flipped[0][2]}: "
    assert cell in section and flipped[0][3] in section.split(cell)[1].split("</li>")[0]


def test_the_history_page_says_when_the_statistics_changed_but_no_verdict_did(tmp_path):
    results = tmp_path / "results"
    old = json.loads(FIXTURE.read_text())
    _write(results, old)
    new = copy.deepcopy(old)
    new["version"] = "v0002"
    new["provenance"]["statistics_version"] = 2
    _write(results, new)
    out = tmp_path / "site" / "docs"
    render_site(results_dir=results, out=out)
    section = (out / "benchmarks" / "small" / "history.md").read_text(encoding="utf-8").split("## v0001 to v0002")[1]
    assert "no verdict changed" in section and "the same score set (sidecar sha256" in section
    assert "<summary>" not in section and "<li>" not in section


@pytest.mark.slow
def test_restat_with_a_tables_config_applies_its_table_settings_and_refuses_any_other_change(
    tiny_run, tmp_path, monkeypatch, capsys
):
    """``--tables-config`` may change only how the same score set is tabled (the metrics ranked, the inventory
    policy): those tables appear in the next version, which records the changed settings as [old, new];
    a file that changes anything else (the horizon) is refused with nothing written."""
    from benchmarks.restat import main as restat_main

    folder = tmp_path / "tiny"
    shutil.copytree(tiny_run, folder)
    _bump(monkeypatch)
    text = TINY.read_text(encoding="utf-8")
    other = tmp_path / "horizon.toml"
    other.write_text(text.replace("horizon = 3", "horizon = 2"), encoding="utf-8")
    assert restat_main(["--results", str(folder), "--tables-config", str(other)]) == 1
    err = capsys.readouterr().err
    assert "differs from the config v0001 records in ['horizon']" in err and not (folder / "v0002.json").exists()
    tables = tmp_path / "tables.toml"
    tables.write_text(
        text.replace('metrics = ["mase", "rmsse"]', 'metrics = ["rmsse", "wape"]\nservice_level = 0.8'),
        encoding="utf-8",
    )
    assert restat_main(["--results", str(folder), "--tables-config", str(tables)]) == 0
    new = json.loads((folder / "v0002.json").read_text())
    assert {lb["metric"] for lb in new["leaderboards"]} == {"rmsse", "wape"}
    assert new["config"]["metrics"] == ["rmsse", "wape"] and new["config"]["service_level"] == 0.8
    prov = new["provenance"]
    assert prov["restated_from"]["table_settings"] == {
        "metrics": [["mase", "rmsse"], ["rmsse", "wape"]],
        "service_level": [0.9, 0.8],
    }
    assert prov["config_sha256"] == prov["restated_from"]["config_file_sha256"] == file_sha256(tables)
    assert verify_file(folder / "v0002.json")[0] == []  # recomputed from its recorded config: the same tables
