"""Score sets stored as normalised, content-addressed parts (benchmarks.score_parts, score_source,
part_fetch, migrate): read back bit for bit, shared across versions, checked by hash, fetched safely."""

from __future__ import annotations

import hashlib
import http.server
import json
import multiprocessing
import subprocess
import threading
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks import score_parts as sp
from benchmarks.part_fetch import fetch_part
from benchmarks.results_io import file_sha256, validate_results_file, write_results
from benchmarks.score_source import migrate_sidecar, rebuilt_sidecar_sha256, score_source
from tests._scores_support import toy_scores
from tycheon.contract import SCORESET_COLUMNS

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
FIXTURE = Path(__file__).parent / "fixtures" / "results_example.json"
MAX_TRACKED_BYTES = 25 * 1024 * 1024


def assert_same_bits(got: pd.DataFrame, want: pd.DataFrame) -> None:
    """Equal columns, dtypes, categories, codes and float bit patterns (NaN payloads and signed zeros)."""
    assert list(got.columns) == list(want.columns)
    assert len(got) == len(want)
    for c in want.columns:
        a, b = got[c], want[c]
        assert str(a.dtype) == str(b.dtype), c
        if isinstance(b.dtype, pd.CategoricalDtype):
            assert list(a.cat.categories) == list(b.cat.categories), c
            assert np.array_equal(a.cat.codes.to_numpy(), b.cat.codes.to_numpy()), c
        elif b.dtype.kind == "f":
            assert np.array_equal(a.to_numpy().view(np.int64), b.to_numpy().view(np.int64)), c
        else:
            assert np.array_equal(a.to_numpy(), b.to_numpy()), c


def _round_trip(frame: pd.DataFrame, folder: Path) -> pd.DataFrame:
    manifest, _ = sp.write_parts(frame, folder)
    return sp.read_scores(folder, sp.ScoreParts.from_json(json.loads(json.dumps(manifest.to_json()))))


def test_a_harness_score_set_reads_back_bit_for_bit_and_smaller(tmp_path):
    frame = toy_scores(("naive", "ses", "croston"), datasets=(("a", "rolling_origin"), ("b", "competition")))
    back = _round_trip(frame, tmp_path)
    assert_same_bits(back, frame)
    manifest, _ = sp.write_parts(frame, tmp_path)
    kinds = [p.kind for p in manifest.parts]
    assert kinds.count("facts") == kinds.count("actuals") == 2 and kinds.count("model") == kinds.count("bands") == 6
    # pooled bands and Gaussian quantiles of the harness's form need no raw cell: every quantile is
    # point + spread * z, and a band the group's factor misses by rounding takes one radius on its row
    for part in manifest.parts:
        if part.kind == "model":
            data, meta = sp.read_part_table(sp.resolve_part(tmp_path, part))
            assert [c for c in data if c.startswith("x_")] in ([], ["x_r80"]), part
            if "x_r80" in data:
                assert data["x_r80"][1].sum() <= 0.1 * part.rows
            assert len(meta["z"]) == 5


def test_a_chunk_reads_like_the_same_rows_of_the_whole_table(tmp_path):
    frame = toy_scores(("naive", "ses"), datasets=(("a", "rolling_origin"), ("b", "competition")))
    manifest, _ = sp.write_parts(frame, tmp_path)
    cols = ["model", "series_id", "origin", "step", "actual", "point", "lo80", "q0.9", "scale_mae"]
    chunk = sp.read_chunk(tmp_path, manifest, dataset="b", protocol="competition", columns=cols)
    want = frame[frame["dataset"] == "b"][cols].reset_index(drop=True)
    for c in ("model", "series_id"):
        want[c] = want[c].cat.remove_unused_categories()
    assert_same_bits(chunk, want)


def _hostile(frame: pd.DataFrame, data: st.DataObject) -> pd.DataFrame:
    """The toy set with what the formulas do not give: NaN payloads, signed zeros, infinities, zero
    scales, bands that are not pooled, quantiles that are not Gaussian, facts that vary within their key,
    and model rows that do not stand together."""
    out = frame.copy()
    n = len(out)
    rows = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=12), label="rows")
    neg_nan = np.frombuffer(np.int64(-2251799813685248).tobytes(), dtype=np.float64)[0]  # a NaN with the sign bit
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, neg_nan, 1e300, 5e-324]
    float_cols = [c for c, dtype in SCORESET_COLUMNS.items() if dtype == "float64"] + ["q0.025", "q0.5", "q0.975"]
    for r in rows:
        col = data.draw(st.sampled_from(float_cols), label="column")
        value = data.draw(st.sampled_from(specials) | st.floats(allow_nan=False, width=64), label="value")
        values = out[col].to_numpy(copy=True)
        values[r] = value
        out[col] = values
    if data.draw(st.booleans(), label="class varies"):
        classes = out["demand_class"].astype(object).to_numpy(copy=True)
        classes[rows[0]] = "lumpy"
        out["demand_class"] = classes
    if data.draw(st.booleans(), label="shuffle models"):
        same_chunk = out.index[out["dataset"] == out["dataset"].iloc[0]]
        perm = np.random.default_rng(len(rows)).permutation(len(same_chunk))
        out = pd.concat([out.loc[same_chunk].iloc[perm], out.drop(index=same_chunk)], ignore_index=True)
    from tycheon.backtest.scoreset import conform_table

    return conform_table(out.reset_index(drop=True))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_score_set_reads_back_bit_for_bit(tmp_path_factory, data):
    base = toy_scores(
        ("naive", "ses"), datasets=(("a", "rolling_origin"), ("b", "competition")), n_series=3, n_origins=2, horizon=2
    )
    frame = _hostile(base, data)
    assert_same_bits(_round_trip(frame, tmp_path_factory.mktemp("parts")), frame)


def test_rows_of_one_dataset_must_stand_together(tmp_path):
    frame = toy_scores(("naive",), datasets=(("a", "rolling_origin"), ("b", "rolling_origin")))
    mixed = pd.concat([frame.iloc[:5], frame.iloc[-5:], frame.iloc[5:-5]], ignore_index=True)
    with pytest.raises(ValueError, match="must stand together"):
        sp.write_parts(mixed, tmp_path)


# ------------------------------------------------------------------------------- versions share parts


def _body() -> dict:
    doc = json.loads(FIXTURE.read_text())
    doc.pop("version")
    doc.pop("sidecar")
    return doc


def _parts(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_size for p in (folder / sp.PARTS_DIR).glob("*.parquet")}


def test_rewriting_the_same_scores_adds_no_part_and_a_new_model_adds_only_its_own(tmp_path):
    body = _body()
    folder = tmp_path / body["name"]
    first = write_results(body, toy_scores(("naive", "ses")), results_dir=tmp_path)
    before = _parts(folder)
    second = write_results(body, toy_scores(("naive", "ses")), results_dir=tmp_path)
    assert _parts(folder) == before, "a version with the same scores wrote a part"
    one, two = (json.loads(p.read_text())["scores"] for p in (first, second))
    assert one == two
    third = write_results(body, toy_scores(("naive", "ses", "croston")), results_dir=tmp_path)
    new = set(_parts(folder)) - set(before)
    listed = {p["sha256"] + ".parquet": p for p in json.loads(third.read_text())["scores"]["parts"]}
    assert new and all(listed[name]["model"] == "croston" for name in new)
    assert {listed[name]["kind"] for name in new} == {"model", "bands"}
    for path in (first, second, third):
        assert validate_results_file(path) == []
        assert "sidecar" not in json.loads(path.read_text())


def test_validate_names_a_modified_and_a_missing_part(tmp_path):
    body = _body()
    path = write_results(body, toy_scores(("naive", "ses")), results_dir=tmp_path)
    parts = json.loads(path.read_text())["scores"]["parts"]
    store = path.parent / sp.PARTS_DIR
    victim = store / f"{parts[-1]['sha256']}.parquet"
    victim.chmod(0o644)
    victim.write_bytes(victim.read_bytes()[:-1] + b"\x00")
    problems = validate_results_file(path)
    assert len(problems) == 1 and parts[-1]["sha256"] in problems[0] and "modified" in problems[0]
    victim.unlink()
    (store / f"{parts[0]['sha256']}.parquet").unlink()
    problems = validate_results_file(path)
    assert len(problems) == 1
    assert "2 score part(s) missing" in problems[0] and parts[0]["sha256"][:12] in problems[0]
    assert "restore them from version control" in problems[0]


# -------------------------------------------------------------------------------- migrated sidecars


def _old_sidecar(frame: pd.DataFrame, folder: Path) -> Path:
    """A sidecar as results schema 1.5 stored it: pandas -> arrow with the score-set metadata, default
    parquet settings, named by its sha256."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tycheon.contract import SCORESET_SCHEMA, SCORESET_SCHEMA_KEY

    table = pa.Table.from_pandas(frame, preserve_index=False)
    table = table.replace_schema_metadata(
        {**(table.schema.metadata or {}), SCORESET_SCHEMA_KEY: SCORESET_SCHEMA.encode()}
    )
    (folder / "sidecars").mkdir(parents=True)
    tmp = folder / "sidecars" / "tmp.parquet"
    pq.write_table(table, tmp)
    final = tmp.with_name(f"{file_sha256(tmp)}.parquet")
    tmp.rename(final)
    return final


def test_a_migrated_sidecar_is_rebuilt_bit_for_bit_and_tampering_is_caught(tmp_path):
    frame = toy_scores(("naive", "ses"))
    sidecar = _old_sidecar(frame, tmp_path / "small")
    sha = sidecar.stem
    doc = {"sidecar": {"sha256": sha, "path": f"sidecars/{sha}.parquet", "n_rows": len(frame)}}
    json_path = tmp_path / "small" / "v0001.json"
    manifest_path, manifest, written = migrate_sidecar(sidecar, remove=True)
    assert not sidecar.exists() and manifest_path.name == f"{sha}.parts.json" and written > 0
    source = score_source(json_path, doc)
    assert source.kind == "migrated" and source.problems() == []
    assert rebuilt_sidecar_sha256(source) == sha
    assert_same_bits(source.frame(), frame)
    model_part = next(p for p in manifest.parts if p.kind == "model")
    stored = tmp_path / "small" / sp.PARTS_DIR / f"{model_part.sha256}.parquet"
    stored.unlink()  # replaced by a part that reads as different scores, under the same name
    other = toy_scores(("naive", "ses"), seed=7)
    forged, _ = sp.write_parts(other, tmp_path / "forged")
    (tmp_path / "forged" / sp.PARTS_DIR / f"{forged.parts[2].sha256}.parquet").rename(stored)
    assert any("modified" in p for p in score_source(json_path, doc).problems())


def _one_version_per_score_set() -> list:
    """Every committed version, those sharing one sidecar (small v0001-v0004) checked once under one id
    naming them all: the check reads the score set, not the version around it."""
    shared: dict[str, list[Path]] = {}
    for path in sorted(RESULTS.glob("*/v*.json")):
        side = json.loads(path.read_text()).get("sidecar") or {}
        shared.setdefault(side.get("sha256") or str(path), []).append(path)
    return [
        pytest.param(paths[0], id="+".join(f"{p.parent.name}/{p.stem}" for p in paths)) for paths in shared.values()
    ]


@pytest.mark.slow
@pytest.mark.parametrize("path", _one_version_per_score_set())
def test_every_committed_version_reads_back_as_its_sidecar_bit_for_bit(path, tmp_path):
    doc = json.loads(path.read_text())
    source = score_source(path, doc)
    if source.kind == "migrated":  # the parts rebuild the file whose sha256 the version was published with
        assert source.problems() == []
    elif source.kind == "sidecar":  # still a file: storing it as parts would read back the same table
        want = pd.read_parquet(source.sidecar)
        assert_same_bits(_round_trip(want, tmp_path), want)
    else:
        assert source.problems() == []


def test_no_tracked_file_is_over_25_mb():
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    big = []
    for name in filter(None, listed.decode().split("\0")):
        path = ROOT / name
        if path.is_file() and path.stat().st_size > MAX_TRACKED_BYTES:
            big.append(f"{name} ({path.stat().st_size / 1e6:.1f} MB)")
    assert not big, f"tracked files over 25 MB (GitHub warns at 50 MB and refuses 100 MB): {big}"


# ---------------------------------------------------------------------------------- fetching by URL


class _Server:
    """A local HTTP server on 127.0.0.1 for the fetch tests: serves ``files`` (name -> bytes); a name in
    ``truncate`` announces its full length but sends half and closes."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.truncate: set[str] = set()
        self.closed = False
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                name = self.path.lstrip("/")
                body = server.files.get(name)
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body[: len(body) // 2] if name in server.truncate else body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server():
    s = _Server()
    yield s
    s.close()


def test_a_part_listed_by_url_is_fetched_checked_and_cached(tmp_path, server, monkeypatch):
    monkeypatch.setenv("TYCHEON_PARTS_CACHE", str(tmp_path / "cache"))
    body = _body()
    path = write_results(body, toy_scores(("naive",)), results_dir=tmp_path / "results")
    doc = json.loads(path.read_text())
    store = path.parent / sp.PARTS_DIR
    for part in doc["scores"]["parts"]:  # the parts move to the server; the version lists their URLs
        f = store / f"{part['sha256']}.parquet"
        server.files[f.name] = f.read_bytes()
        f.unlink()
        part["url"] = f"{server.url}/{f.name}"
    path.chmod(0o644)
    path.write_text(json.dumps(doc))
    assert validate_results_file(path) == []  # fetched into the cache, hashes checked
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == sorted(server.files)
    assert_same_bits(score_source(path, doc).frame(), toy_scores(("naive",)))


def test_a_download_with_the_wrong_hash_or_cut_short_never_enters_the_cache(tmp_path, server):
    good = b"parquet bytes" * 100
    sha = hashlib.sha256(good).hexdigest()
    server.files["bad"] = good[:-1] + b"!"
    with pytest.raises(ValueError, match="not the recorded"):
        fetch_part(f"{server.url}/bad", sha, tmp_path, size=len(good))
    server.files["cut"] = good
    server.truncate.add("cut")
    with pytest.raises(ValueError, match="truncated"):
        fetch_part(f"{server.url}/cut", sha, tmp_path, size=len(good))
    assert list(tmp_path.iterdir()) == []  # no part, no temp file


def test_offline_or_a_missing_url_is_one_line_naming_the_part(tmp_path, server):
    with pytest.raises(sp.PartsMissingError) as err:
        fetch_part(f"{server.url}/nothing-here", "ab" * 32, tmp_path)
    assert "abababababab" in str(err.value) and "\n" not in str(err.value)
    server.close()
    with pytest.raises(sp.PartsMissingError, match="could not be fetched"):
        fetch_part(f"{server.url}/gone", "ab" * 32, tmp_path)
    with pytest.raises(sp.PartsMissingError, match="not http"):
        fetch_part("file:///etc/passwd", "ab" * 32, tmp_path)


def _fetch_in_child(url: str, sha: str, cache: str, size: int) -> str:
    return str(fetch_part(url, sha, cache, size=size))


def test_two_processes_fetching_the_same_part_both_get_it_whole(tmp_path, server):
    data = np.random.default_rng(0).bytes(3 << 20)
    sha = hashlib.sha256(data).hexdigest()
    server.files["p"] = data
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        got = pool.starmap(_fetch_in_child, [(f"{server.url}/p", sha, str(tmp_path), len(data))] * 2)
    assert got[0] == got[1] == str(tmp_path / f"{sha}.parquet")
    assert file_sha256(got[0]) == sha
    assert [p.name for p in tmp_path.iterdir()] == [f"{sha}.parquet"]  # no temp file left behind


@pytest.mark.slow
def test_rewriting_smalls_latest_version_from_its_scores_adds_no_part():
    """The committed small version with the highest number, its score set read back and stored again,
    gives exactly the parts it lists: a new version with the same scores writes nothing new."""
    latest = sorted(RESULTS.glob("small/v*.json"))[-1]
    source = score_source(latest, json.loads(latest.read_text()))
    assert source.manifest is not None, "small's latest version is stored as parts"
    manifest, blobs = sp.prepare_parts(source.frame())
    assert [p.sha256 for p in manifest.parts] == [p.sha256 for p in source.manifest.parts]
    stored = {p.name for p in (latest.parent / sp.PARTS_DIR).glob("*.parquet")}
    assert {f"{sha}.parquet" for sha in blobs} <= stored
