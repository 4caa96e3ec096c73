"""Probes on the score cache: an edited, truncated or random entry is a miss with a warning (the run
recomputes and the numbers are the true ones); an entry forged together with its manifest is caught by
the publishing run's bit-for-bit recomputation, which then writes nothing."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from benchmarks.cache import CacheWarning


def _mase(bench, version: str, model: str) -> float:
    doc = json.loads((bench.results / "adv" / f"{version}.json").read_text())
    board = next(
        t for t in doc["leaderboards"] if t["unit"] == "series" and t["demand_class"] == "all" and t["metric"] == "mase"
    )
    return next(r for r in board["rows"] if r["model"] == model)["mean"]


def _entries(bench):
    return sorted(bench.cache.glob("*.parquet"))


def _naive_entry(bench):
    for path in _entries(bench):
        if set(pq.read_table(path).column("model").to_pylist()) == {"naive"}:
            return path
    raise AssertionError("no cache entry of the random walk")


def _cheat(path) -> None:
    """Overwrite the random walk's forecasts with the actuals (what the issue's attacker did)."""
    table = pq.read_table(path)
    table = table.set_column(table.schema.get_field_index("point"), "point", table.column("actual"))
    pq.write_table(table, path)


@pytest.fixture
def cached(bench):
    config = bench.config(["naive", "snaive_momentum"])
    assert bench.run(config) == 0  # fills the cache
    assert _mase(bench, "v0001", "naive") > 0
    return config


def test_an_edited_entry_is_a_miss_with_a_warning_and_the_true_number_is_published(bench, cached):
    _cheat(_naive_entry(bench))
    with pytest.warns(CacheWarning, match=r"content does not match the sha256 in its manifest"):
        assert bench.run(cached) == 0
    assert _mase(bench, "v0002", "naive") == _mase(bench, "v0001", "naive") > 0
    prov = json.loads((bench.results / "adv" / "v0002.json").read_text())["provenance"]["cache"]
    assert prov["synthetic_marketplace/rolling_origin/naive"] == "computed"


@pytest.mark.parametrize("damage", ["truncate", "random"])
def test_a_truncated_or_random_entry_is_a_miss_not_a_crash(bench, cached, damage):
    for path in _entries(bench):
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2] if damage == "truncate" else bytes(range(256)) * 8)
    with pytest.warns(CacheWarning, match=r"ignored \(recomputed\)"):
        assert bench.run(cached) == 0
    assert _mase(bench, "v0002", "naive") == _mase(bench, "v0001", "naive")


def test_an_entry_forged_with_its_manifest_is_caught_by_verification_and_nothing_is_written(bench, cached, capsys):
    import hashlib

    path = _naive_entry(bench)
    _cheat(path)
    manifest = path.with_suffix(".json")
    meta = json.loads(manifest.read_text())
    meta["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    manifest.write_text(json.dumps(meta))
    before = bench.written()
    assert bench.run(cached, "--verify-cache", "1.0") == 1
    err = capsys.readouterr().err
    assert (
        "nothing written; the score cache failed verification: synthetic_marketplace/rolling_origin/naive: "
        "the cached score set"
        in err
        and "column 'point' differs" in err
    )
    assert bench.written() == before


def test_verification_of_honest_entries_passes_and_says_so(bench, cached):
    assert bench.run(cached, "--verify-cache", "1.0") == 0
    prov = json.loads((bench.results / "adv" / "v0002.json").read_text())["provenance"]["cache"]
    assert set(prov.values()) == {"cache (verified)"}
