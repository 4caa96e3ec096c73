"""Manifest: strict reading, canonical content hash, and hash verification on load."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tycheon.data.datasets import available_datasets, load
from tycheon.data.manifest import (
    ManifestError,
    ManifestHashError,
    content_hash,
    load_verified,
    read_manifest,
)
from tycheon.data.panel import Panel

REPO_MANIFEST = Path(__file__).resolve().parents[1] / "benchmarks" / "datasets.toml"
SMALL = {"n_entities": 40, "n_periods": 24, "spikiness": 1.0, "seed": 3}


def _entry(name: str = "synthetic_marketplace", sha: str = "0" * 64, extra: str = "") -> str:
    return (
        f"[datasets.{name}]\n"
        'source = "test"\nlicence = "MIT"\nfrequency = "MS"\nseason_length = 12\n'
        f'synthetic = true\nredistributable = true\nsha256 = "{sha}"\n'
        "options = { n_entities = 40, n_periods = 24, spikiness = 1.0, seed = 3 }\n" + extra
    )


def test_the_repository_manifest_lists_every_catalogue_dataset():
    manifest = read_manifest(REPO_MANIFEST)
    assert set(manifest.names()) == set(available_datasets())
    for entry in manifest.entries.values():
        assert re.fullmatch(r"[0-9a-f]{64}", entry.sha256)
        assert entry.licence and entry.source


@pytest.mark.parametrize("name", ["m3_yearly", "fpp3_prison", "synthetic_marketplace"])
def test_repository_manifest_hashes_verify(name):
    panel = load_verified(name, manifest_path=REPO_MANIFEST)
    assert panel.meta["sha256"] == read_manifest(REPO_MANIFEST)[name].sha256


def test_when_the_content_differs_then_the_error_names_both_hashes(tmp_path):
    path = tmp_path / "datasets.toml"
    path.write_text(_entry(sha="ab" * 32))
    actual = content_hash(load("synthetic_marketplace", **SMALL))
    with pytest.raises(ManifestHashError) as info:
        load_verified("synthetic_marketplace", manifest_path=path)
    assert actual in str(info.value) and "ab" * 32 in str(info.value)


def test_when_the_hash_matches_then_the_panel_is_returned_with_provenance(tmp_path):
    path = tmp_path / "datasets.toml"
    sha = content_hash(load("synthetic_marketplace", **SMALL))
    path.write_text(_entry(sha=sha))
    panel = load_verified("synthetic_marketplace", manifest_path=path)
    assert panel.n_series == 40 and panel.meta["sha256"] == sha


def test_when_the_manifest_has_an_unknown_key_then_it_is_named(tmp_path):
    path = tmp_path / "datasets.toml"
    path.write_text(_entry(extra='licenze = "typo"\n'))
    with pytest.raises(ManifestError, match=r"datasets.synthetic_marketplace: unknown key 'licenze'"):
        read_manifest(path)


def test_when_the_manifest_misses_a_key_or_has_a_wrong_type_then_it_is_named(tmp_path):
    path = tmp_path / "datasets.toml"
    path.write_text(_entry().replace('sha256 = "' + "0" * 64 + '"\n', ""))
    with pytest.raises(ManifestError, match=r"missing key\(s\) \['sha256'\]"):
        read_manifest(path)
    path.write_text(_entry().replace("season_length = 12", 'season_length = "12"'))
    with pytest.raises(ManifestError, match=r"season_length must be int"):
        read_manifest(path)
    with pytest.raises(ManifestError, match=r"does not exist"):
        read_manifest(tmp_path / "absent.toml")


def test_when_a_dataset_is_not_in_the_manifest_then_the_listed_ones_are_named(tmp_path):
    path = tmp_path / "datasets.toml"
    path.write_text(_entry())
    with pytest.raises(ManifestError, match=r"no dataset 'm3_yearly'; the manifest lists synthetic_marketplace"):
        load_verified("m3_yearly", manifest_path=path)


def _tiny(values, *, order=None, attrs=None) -> Panel:
    frame = pd.DataFrame(
        {
            "series_id": ["a", "a", "b"],
            "period": pd.to_datetime(["2020-01-01", "2020-02-01", "2020-01-01"]),
            "value": values,
        }
    )
    if order is not None:
        frame = frame.iloc[order]
    return Panel.from_long(frame, freq="MS", attributes=attrs)


def test_content_hash_is_independent_of_row_order_and_sensitive_to_content():
    base = content_hash(_tiny([1.0, 2.0, 3.0]))
    assert content_hash(_tiny([1.0, 2.0, 3.0], order=[2, 0, 1])) == base
    assert content_hash(_tiny([1.0, 2.0, 3.0 + 1e-12])) != base
    attrs = pd.DataFrame({"weight": [1.0, 2.0]}, index=["a", "b"])
    assert content_hash(_tiny([1.0, 2.0, 3.0], attrs=attrs)) != base
    assert content_hash(_tiny([0.0, 2.0, 3.0])) == content_hash(_tiny([-0.0, 2.0, 3.0]))


def test_content_hash_matches_an_independent_rendering_of_the_canonical_bytes():
    # recompute the documented serialisation by hand for a two-row panel
    panel = Panel.from_long(
        pd.DataFrame(
            {"series_id": ["a", "a"], "period": pd.to_datetime(["2020-01-01", "2020-02-01"]), "value": [1.5, 2.0]}
        ),
        freq="MS",
    )
    header = (
        '{"attributes":{"columns":[],"data":{},"index":["a"]},"format":"tycheon-panel-v1",'
        '"freq":"MS","levels":[],"n_rows":2,"season_length":12}'
    )
    ns = lambda s: np.array([np.datetime64(s, "ns").astype(np.int64)], dtype="<i8").tobytes()  # noqa: E731
    body = (
        header.encode()
        + b"\x00"
        + b"a\x1fa"
        + b"\x00"
        + ns("2020-01-01")
        + ns("2020-02-01")
        + ns("2020-02-01")
        + ns("2020-03-01")
        + np.array([1.5, 2.0], dtype="<f8").tobytes()
    )
    assert content_hash(panel) == hashlib.sha256(body).hexdigest()


def test_when_other_options_are_asked_then_the_manifest_content_is_verified_first(tmp_path):
    path = tmp_path / "datasets.toml"
    sha = content_hash(load("synthetic_marketplace", **SMALL))
    path.write_text(_entry(sha=sha))
    variant = load_verified("synthetic_marketplace", manifest_path=path, options={**SMALL, "n_entities": 7})
    assert variant.n_series == 7 and variant.meta["verified_sha256"] == sha and "sha256" not in variant.meta
    path.write_text(_entry(sha="cd" * 32))
    with pytest.raises(ManifestHashError, match="cd" * 32):
        load_verified("synthetic_marketplace", manifest_path=path, options={**SMALL, "n_entities": 7})


def test_the_library_names_no_manifest_location():
    library = Path(__file__).resolve().parents[1] / "tycheon"
    sources = {p: p.read_text(encoding="utf-8") for p in (library / "data").glob("*.py")}
    assert not [p.name for p, text in sources.items() if 'datasets.toml"' in text or '"benchmarks"' in text]
    with pytest.raises(TypeError, match="manifest_path"):
        load_verified("synthetic_marketplace")  # type: ignore[call-arg]
