"""Probes on published results: a number edited in the JSON, an edited, replaced or missing sidecar. The
validator recomputes every table from the sidecar and names the first difference; the renderer refuses
what the validator refuses."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest  # noqa: F401

from benchmarks.render.__main__ import main as render_main
from benchmarks.validate import main as validate_main


def _render(published) -> int:
    results = published.parent.parent
    return render_main(["--results", str(results), "--out", str(results.parent / "docs")])


@pytest.fixture
def published(bench):
    assert bench.run(bench.config(["naive", "snaive_momentum", "ses"])) == 0
    path = bench.results / "adv" / "v0001.json"
    assert validate_main([str(path)]) == 0
    return path


def test_an_honest_version_validates_with_every_table_recomputed(published, capsys):
    assert validate_main([str(published)]) == 0
    assert "(every table recomputed from its score set)" in capsys.readouterr().out
    assert _render(published) == 0


def test_an_edited_leaderboard_number_is_named_and_render_refuses_it(published, capsys):
    doc = json.loads(published.read_text())
    board = doc["leaderboards"][0]
    board["rows"][0]["mean"] = board["rows"][0]["mean"] * 0.5
    published.write_text(json.dumps(doc))
    capsys.readouterr()
    assert validate_main([str(published)]) == 1
    out = capsys.readouterr().out
    assert "leaderboards[0].rows[0].mean: published" in out
    assert "the published numbers are not those of the sidecar" in out
    assert _render(published) == 2
    assert "leaderboards[0].rows[0].mean: published" in capsys.readouterr().err


def test_an_edited_rank_is_named(published, capsys):
    doc = json.loads(published.read_text())
    board = doc["leaderboards"][1]
    board["rows"][0]["rank"], board["rows"][-1]["rank"] = board["rows"][-1]["rank"], board["rows"][0]["rank"]
    published.write_text(json.dumps(doc))
    assert validate_main([str(published)]) == 1
    assert "leaderboards[1].rows[0].rank: published" in capsys.readouterr().out


def _model_part(published: Path, model: str = "naive") -> Path:
    doc = json.loads(published.read_text())
    part = next(p for p in doc["scores"]["parts"] if p["kind"] == "model" and p["model"] == model)
    return published.parent / "parts" / f"{part['sha256']}.parquet"


def test_a_tampered_score_part_is_refused(published, capsys):
    part = _model_part(published)
    frame = pd.read_parquet(part)
    frame["point"] = frame["point"] + 1.0
    frame.to_parquet(part)
    assert validate_main([str(published)]) == 1
    assert "was modified" in capsys.readouterr().out
    assert _render(published) == 2
    assert "was modified" in capsys.readouterr().err


def test_a_tampered_score_set_with_its_hash_updated_is_caught_by_the_recomputation(published, capsys):
    from benchmarks.results_io import file_sha256, read_score_frame

    doc = json.loads(published.read_text())
    frame = read_score_frame(published)
    frame.loc[frame["model"] == "naive", "point"] = frame.loc[frame["model"] == "naive", "actual"]
    tmp = published.parent / "tmp.parquet"
    frame.to_parquet(tmp)
    digest = file_sha256(tmp)
    new = published.parent / "sidecars" / f"{digest}.parquet"
    new.parent.mkdir(exist_ok=True)
    tmp.rename(new)
    doc.pop("scores")  # stored as one sidecar file with its true hash, as before schema 1.6
    doc["sidecar"] = {"path": f"sidecars/{new.name}", "sha256": digest, "format": "parquet", "n_rows": len(frame)}
    published.write_text(json.dumps(doc))
    assert validate_main([str(published)]) == 1
    assert "the published numbers are not those of the sidecar" in capsys.readouterr().out


def test_a_missing_score_part_is_refused(published, capsys):
    _model_part(published).unlink()
    assert validate_main([str(published)]) == 1
    assert "score part(s) missing" in capsys.readouterr().out
    assert _render(published) == 2
    assert "score part(s) missing" in capsys.readouterr().err


def test_the_render_command_refuses_a_results_folder_with_an_edited_number(published, tmp_path, capsys):
    doc = json.loads(published.read_text())
    doc["intervals"][0]["rows"][0]["n_records"] += 1
    published.write_text(json.dumps(doc))
    out = tmp_path / "docs"
    assert render_main(["--results", str(published.parent.parent), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "render refused: " in err and "intervals[0].rows[0].n_records: published" in err
    assert not out.exists()
