"""The renderer end to end: determinism, escaping of contributed strings, errors, history, built links."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from benchmarks.render import RenderTargetError, ResultsFileError, render_site
from benchmarks.render.site import plotly_bundle

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "results_example.json"
HOSTILE_SCRIPT = "<script>window.__xss=1</script>"
HOSTILE_IMG = '<img src=x onerror="window.__xss=2">'


def _fixture() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


def _write(results: Path, data: dict) -> Path:
    path = results / data["name"] / f"{data['version']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


def _rename(data: dict, model: str, display: str) -> None:
    """Give ``model`` a new display name everywhere the results file carries one."""
    for m in data["models"]:
        if m["id"] == model:
            m["display_name"] = display
    for table in data["leaderboards"] + data["competition"]:
        for row in table["rows"]:
            if row["model"] == model:
                row["display_name"] = display


def hostile_results(results: Path) -> None:
    data = _fixture()
    _rename(data, "auto_ets", HOSTILE_SCRIPT)
    _rename(data, "croston_sba", HOSTILE_IMG)
    _write(results, data)


def mkdocs_build(config: Path, site_dir: Path) -> None:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(config), "-d", str(site_dir)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_rendering_the_same_results_twice_gives_byte_identical_pages(tmp_path):
    results = tmp_path / "results"
    data = _fixture()
    _write(results, data)
    second = copy.deepcopy(data)
    second["version"] = "v0002"
    _write(results, second)
    render_site(results_dir=results, out=tmp_path / "a" / "docs")
    render_site(results_dir=results, out=tmp_path / "b" / "docs")
    a, b = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert len(a) > 30
    assert a.keys() == b.keys()
    assert [name for name in a if a[name] != b[name]] == []


def test_a_rerender_replaces_stale_pages_and_keeps_nothing_old(tmp_path):
    results = tmp_path / "results"
    _write(results, _fixture())
    out = tmp_path / "site" / "docs"
    render_site(results_dir=results, out=out)
    (out / "stale.md").write_text("old")
    render_site(results_dir=results, out=out)
    assert not (out / "stale.md").exists()


def test_when_the_output_folder_holds_foreign_files_then_the_renderer_refuses_to_wipe_it(tmp_path):
    out = tmp_path / "docs"
    out.mkdir()
    (out / "precious.md").write_text("keep me")
    with pytest.raises(RenderTargetError, match="refusing to delete"):
        render_site(results_dir=tmp_path / "none", out=out)
    assert (out / "precious.md").read_text() == "keep me"


def _run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.render", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_when_a_results_file_breaks_the_schema_then_the_cli_exits_non_zero_naming_file_and_field(tmp_path):
    data = _fixture()
    data["leaderboards"][0]["rows"][0]["dm_p_bh"] = 1.7
    path = _write(tmp_path / "results", data)
    done = _run_cli("--results", str(tmp_path / "results"), "--out", str(tmp_path / "site" / "docs"))
    assert done.returncode == 2
    assert str(path) in done.stderr
    assert "/leaderboards/0/rows/0/dm_p_bh" in done.stderr and "1.7" in done.stderr
    assert not (tmp_path / "site" / "docs").exists()


def test_when_a_results_file_is_not_json_or_misfiled_then_the_error_says_so(tmp_path):
    results = tmp_path / "results"
    (results / "small").mkdir(parents=True)
    (results / "small" / "v0001.json").write_text("{not json")
    with pytest.raises(ResultsFileError, match=r"not valid JSON \(line 1"):
        render_site(results_dir=results, out=tmp_path / "docs")
    data = _fixture()
    (results / "small" / "v0001.json").unlink()
    misfiled = results / "other" / "v0003.json"
    misfiled.parent.mkdir()
    misfiled.write_text(json.dumps(data))
    with pytest.raises(ResultsFileError, match="is filed as other/v0003.json"):
        render_site(results_dir=results, out=tmp_path / "docs")


def test_history_page_reports_which_models_moved_between_consecutive_versions(tmp_path):
    results = tmp_path / "results"
    old = _fixture()
    _write(results, old)
    new = copy.deepcopy(old)
    new["version"] = "v0002"
    board = next(
        lb for lb in new["leaderboards"] if (lb["unit"], lb["demand_class"], lb["metric"]) == ("series", "all", "mase")
    )
    first, last = board["rows"][0], board["rows"][-1]
    n = last["rank"]
    assert first["rank"] == 1 and n > 2
    first["rank"], last["rank"] = n, 1
    _write(results, new)
    out = tmp_path / "site" / "docs"
    render_site(results_dir=results, out=out)
    history = (out / "benchmarks" / "small" / "history.md").read_text()
    assert "v0001 to v0002" in history
    moved = re.findall(r"<li>Rank, (\d+) \u2192 (\d+): ([^<]+)</li>", history)
    assert sorted(moved) == sorted([("1", str(n), first["display_name"]), (str(n), "1", last["display_name"])])
    assert "Nothing a reader would notice changed" not in history


def test_history_page_says_nothing_changed_once_when_nothing_did(tmp_path):
    results = tmp_path / "results"
    old = _fixture()
    _write(results, old)
    new = copy.deepcopy(old)
    new["version"] = "v0002"
    board = new["leaderboards"][0]
    board["rows"][0]["mean"] = (board["rows"][0]["mean"] or 0) + 1e-9  # a number moved, nothing a reader sees
    _write(results, new)
    out = tmp_path / "site" / "docs"
    render_site(results_dir=results, out=out)
    history = (out / "benchmarks" / "small" / "history.md").read_text()
    assert history.count("Nothing a reader would notice changed") == 1
    assert "no model moved.<" not in history and "<li>" not in history.split("v0001 to v0002")[1]


def test_every_skipped_or_failed_model_is_listed_with_its_reason_on_its_leaderboard(tmp_path):
    results = tmp_path / "results"
    _write(results, _fixture())
    out = tmp_path / "site" / "docs"
    render_site(results_dir=results, out=out)
    page = (out / "benchmarks/small/synthetic_marketplace/rolling_origin/series/all-mase.md").read_text()
    notes = page.split("Skipped and failed models")[1]
    assert "time budget of 120 s exceeded after 96 of 400 series" in notes and ">failed<" in notes
    assert "needs the &#39;chronos-forecasting&#39; package" in notes and ">skipped<" in notes


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.anchors: list[str] = []  # <a href>: navigation a reader chooses, not a load
        self.scripts: list[str] = []  # executable scripts only
        self.data_blocks: list[str] = []  # <script type="application/json">: chart data, never run
        self.handlers: list[tuple[str, str]] = []
        self._in_script = False
        self._in_data = False

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name.startswith("on"):
                self.handlers.append((tag, name))
            if name in ("href", "src") and value:
                self.links.append(value)
                if tag == "a" and name == "href":
                    self.anchors.append(value)
        is_data = tag == "script" and dict(attrs).get("type") == "application/json"
        self._in_script = tag == "script" and not is_data
        self._in_data = is_data

    def handle_endtag(self, tag):
        self._in_script = False
        self._in_data = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts.append(data)
        if self._in_data:
            self.data_blocks.append(data)


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("hostile")
    hostile_results(tmp / "results")
    render_site(results_dir=tmp / "results", out=tmp / "site" / "docs")
    mkdocs_build(tmp / "site" / "mkdocs.yml", tmp / "html")
    return tmp / "html"


def test_hostile_model_names_render_as_text_in_the_built_html(hostile_site):
    page = (hostile_site / "benchmarks/small/synthetic_marketplace/rolling_origin/series/all-mase.html").read_text()
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=" in page
    for html_file in sorted(hostile_site.rglob("*.html")):
        text = html_file.read_text(encoding="utf-8")
        assert "<script>window.__xss" not in text, html_file
        assert "<img src=x" not in text, html_file
        collector = _Collector()
        collector.feed(text)
        assert collector.handlers == [], f"{html_file}: inline event handlers {collector.handlers}"
        assert not any("__xss" in s for s in collector.scripts), html_file
        for block in collector.data_blocks:  # chart data: valid JSON that cannot close its script element
            assert "<" not in block and json.loads(block) is not None, html_file


def test_every_internal_link_and_asset_in_the_built_site_resolves(hostile_site):
    broken = []
    # mkdocs' own 404 page uses root-absolute links by design (it is served at any path)
    for html_file in sorted(p for p in hostile_site.rglob("*.html") if p.name != "404.html"):
        collector = _Collector()
        collector.feed(html_file.read_text(encoding="utf-8"))
        for link in collector.links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith(("#", "//", "mailto:")):
                continue
            target = (html_file.parent / unquote(parts.path)).resolve()
            if parts.path and not target.exists():
                broken.append(f"{html_file.relative_to(hostile_site)} -> {link}")
    assert broken == []


READING_HOSTS = {"doi.org", "jmlr.org"}  # references the methodology links to; followed only on a click


def test_built_site_loads_nothing_from_the_network(hostile_site):
    external = set()
    for html_file in sorted(hostile_site.rglob("*.html")):
        collector = _Collector()
        collector.feed(html_file.read_text(encoding="utf-8"))
        external |= {
            link
            for link in collector.links
            if link.startswith(("http:", "https:", "//"))
            and urlsplit(link).netloc not in {"github.com", "squidfunk.github.io", "www.mkdocs.org"}
            and not (link in collector.anchors and urlsplit(link).netloc in READING_HOSTS)
        }
    assert external == set()
    assert (hostile_site / "assets" / "plotly.min.js").read_bytes() == plotly_bundle().read_bytes()  # no CDN


def test_with_no_results_yet_the_site_still_builds_and_says_so(tmp_path):
    render_site(results_dir=tmp_path / "results", out=tmp_path / "site" / "docs")
    home = (tmp_path / "site" / "docs" / "index.md").read_text()
    assert "No results yet" in home and "make run" in home
    mkdocs_build(tmp_path / "site" / "mkdocs.yml", tmp_path / "html")
    assert (tmp_path / "html" / "index.html").exists()


def test_methodology_quotes_library_docstrings_and_names_what_is_missing(tmp_path):
    from benchmarks.render.definitions import read_package

    lib = tmp_path / "tycheon" / "metrics"
    lib.mkdir(parents=True)
    (lib / "point.py").write_text(
        'def mase(*, y, f):\n    """Mean absolute scaled error.\n\n    .. math:: q = e / s\n    """\n\n'
        'def _hidden():\n    """private"""\n'
    )
    found = read_package(tmp_path, "tycheon.metrics")
    assert [(d.module, d.name, d.signature) for d in found.definitions] == [
        ("tycheon.metrics.point", "mase", "mase(*, y, f)")
    ]
    assert ".. math:: q = e / s" in found.definitions[0].doc and found.note is None
    missing = read_package(tmp_path, "tycheon.stats")
    assert missing.definitions == () and "does not exist" in missing.note


def test_data_warnings_come_from_the_dataset_flags_even_when_the_harness_wrote_none(tmp_path):
    data = _fixture()
    data["datasets"][1]["redistributable"] = False  # m3_monthly, which carries no such warning
    assert not any(w["kind"] == "not_redistributable" for w in data["warnings"])
    _write(tmp_path / "results", data)
    out = tmp_path / "site" / "docs"
    render_site(results_dir=tmp_path / "results", out=out)
    page = (out / "benchmarks/small/m3_monthly/rolling_origin/series/all-mase.md").read_text()
    assert "<strong>not redistributable</strong> (m3_monthly)" in page
    home = (out / "index.md").read_text()
    assert "&mdash; failed on synthetic_marketplace (rolling origin): time budget of 120 s exceeded" in home
