"""What several test modules need and is slow to make, made once per test run and read-only once made.

* :func:`committed_docs` and :func:`committed_site`: the committed results rendered (``render_site``) and
  built (``mkdocs build --strict``), the site a reader gets from ``make run``;
* :func:`hostile_site`: the example results with script-bearing model names, rendered and built;
* :func:`tiny_results`: one ``--no-cache`` run of ``tests/fixtures/tiny_benchmark.toml``.

Consumers read them and never write into them: a test that changes files copies the folder into its own
``tmp_path`` first (``shutil.copytree``). The folders are made read-only where the file system enforces it.

Under pytest-xdist every worker is its own process with its own session (``make test`` hands out whole
modules, ``--dist loadscope``): :func:`built_once` makes each folder once per test run, the first worker to
need it builds it under a lock in the run's shared temporary folder and the others wait for it and then
read it. ``tests/conftest.py`` imports the fixtures, so any
module can ask for them by name.
"""

from __future__ import annotations

import fcntl
import functools
import importlib
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TINY = ROOT / "tests" / "fixtures" / "tiny_benchmark.toml"
EXAMPLE = ROOT / "tests" / "fixtures" / "results_example.json"
HOSTILE_SCRIPT = "<script>window.__xss=1</script>"
HOSTILE_IMG = '<img src=x onerror="window.__xss=2">'


def _run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary folder of this test run: shared by its xdist workers (each has a ``popen-gwN`` folder
    below it), the session's own without xdist."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _read_only(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        if path.is_symlink():
            continue
        mode = path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
        path.chmod(mode)


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder ``build`` fills, built by the first process of this test run that asks for it.

    ``build(folder)`` gets an empty folder. A build that raised leaves no marker, so the next caller
    starts again from an empty folder.
    """
    root = _run_folder(tmp_path_factory)
    folder = root / f"shared-{name}"
    with open(root / f"shared-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if not (folder / ".built").exists():
                if folder.exists():
                    shutil.rmtree(folder)
                folder.mkdir()
                build(folder)
                (folder / ".built").touch()
                _read_only(folder)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
    return folder


def mkdocs_build(config: Path, site_dir: Path) -> None:
    """``mkdocs build --strict`` of a rendered site into ``site_dir``; fails the test with mkdocs' output."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(config), "-d", str(site_dir)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"


# --- the committed site -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CommittedDocs:
    """The committed results rendered: ``docs`` (the markdown pages), ``written`` (what ``render_site``
    returned), ``templates`` (each page's path under ``docs``, ``.md``, to the template it was filled from)."""

    docs: Path
    written: tuple[Path, ...]
    templates: dict[str, str]

    def pages_of(self, template: str) -> dict[str, str]:
        """The markdown of every page filled from ``template``, by its path under ``docs``."""
        return {p: (self.docs / p).read_text(encoding="utf-8") for p, t in self.templates.items() if t == template}

    def leaderboards(self) -> dict[str, str]:
        """Every leaderboard: each metric's panel of each cell's page (the shown one as written, the others
        unpacked: :func:`benchmarks.render.panels.panels_of`), by ``<page path>#<metric>``."""
        from benchmarks.render.panels import panel_id, panels_of

        return {
            f"{path}#{panel_id(metric)}": html
            for path, text in self.pages_of("leaderboard.md.j2").items()
            for metric, html in panels_of(text).items()
        }


def leaderboard_panel(page: Path, metric: str) -> str:
    """One metric's panel of a leaderboard page (``.../series/leaderboard-all.md`` or its built ``.html``):
    the shown panel as written, another unpacked (:func:`benchmarks.render.panels.panels_of`)."""
    from benchmarks.render.panels import panels_of

    return panels_of(page.read_text(encoding="utf-8"))[metric]


@functools.cache
def latest_results() -> dict[str, object]:
    """Each committed benchmark's latest results version, read once per process, by benchmark name."""
    from benchmarks.results_io import RESULTS_DIR, existing_versions, read_results

    return {d.name: read_results(list(existing_versions(d))[-1]) for d in sorted(RESULTS_DIR.iterdir()) if d.is_dir()}


@dataclass(frozen=True)
class CommittedSite:
    """The committed results rendered and built: ``html`` (the site), with :class:`CommittedDocs`."""

    rendered: CommittedDocs
    html: Path

    @property
    def templates(self) -> dict[str, str]:
        """Each built page (path under ``html``) to its template."""
        return {f"{p[: -len('.md')]}.html": t for p, t in self.rendered.templates.items()}


def _render_committed(folder: Path) -> None:
    render = importlib.import_module("benchmarks.render.site")
    from benchmarks.results_io import RESULTS_DIR

    pages: list = []
    real = render.build_pages

    def recording(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        built = real(*args, **kwargs)
        pages.extend(built[0])
        return built

    docs = folder / "site" / "docs"
    with pytest.MonkeyPatch.context() as patch:  # the renderer's own page list: which template made each page
        patch.setattr(render, "build_pages", recording)
        written = render.render_site(results_dir=RESULTS_DIR, out=docs)
    index = {
        "written": [str(p.relative_to(folder)) for p in written],
        "templates": {p.path: p.template for p in pages},
    }
    (folder / "render.json").write_text(json.dumps(index), encoding="utf-8")


@pytest.fixture(scope="session")
def committed_docs(tmp_path_factory: pytest.TempPathFactory) -> CommittedDocs:
    """The committed results rendered once per test run (read-only)."""
    folder = built_once(tmp_path_factory, "committed-docs", _render_committed)
    index = json.loads((folder / "render.json").read_text(encoding="utf-8"))
    return CommittedDocs(
        docs=folder / "site" / "docs",
        written=tuple(folder / p for p in index["written"]),
        templates=index["templates"],
    )


@pytest.fixture(scope="session")
def committed_site(tmp_path_factory: pytest.TempPathFactory, committed_docs: CommittedDocs) -> CommittedSite:
    """The committed results rendered and built once per test run (read-only)."""
    rendered = committed_docs
    folder = built_once(
        tmp_path_factory, "committed-html", lambda out: mkdocs_build(rendered.docs.parent / "mkdocs.yml", out / "html")
    )
    return CommittedSite(rendered=rendered, html=folder / "html")


# --- the hostile example site -------------------------------------------------------------------------------


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
    """The example results (``tests/fixtures/results_example.json``) with two model names that are markup."""
    data = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    _rename(data, "auto_ets", HOSTILE_SCRIPT)
    _rename(data, "croston_sba", HOSTILE_IMG)
    path = results / data["name"] / f"{data['version']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")


def _build_hostile(folder: Path) -> None:
    from benchmarks.render import render_site

    hostile_results(folder / "results")
    render_site(results_dir=folder / "results", out=folder / "site" / "docs")
    mkdocs_build(folder / "site" / "mkdocs.yml", folder / "html")


@pytest.fixture(scope="session")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hostile example results rendered and built once per test run (read-only)."""
    return built_once(tmp_path_factory, "hostile", _build_hostile) / "html"


# --- the tiny benchmark -------------------------------------------------------------------------------------


def run_tiny(folder: Path, *extra: str, config: Path = TINY) -> int:
    """``python -m benchmarks.run`` of ``config`` with results and cache under ``folder``."""
    from benchmarks.run import main as run_main

    args = ["--config", str(config), "--results-dir", str(folder / "results"), "--cache-dir", str(folder / "cache")]
    return run_main([*args, *extra])


def _run_tiny_once(folder: Path) -> None:
    assert run_tiny(folder, "--no-cache") == 0


@pytest.fixture(scope="session")
def tiny_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``results/tiny`` of one ``--no-cache`` run of the tiny benchmark (``v0001.json`` and its parts)."""
    return built_once(tmp_path_factory, "tiny", _run_tiny_once) / "results" / "tiny"


def copy_results(folder: Path, into: Path) -> Path:
    """A writable copy of a shared results folder (``.../results/<name>``) as ``into/results/<name>``."""
    target = into / "results" / folder.name
    shutil.copytree(folder, target, ignore=shutil.ignore_patterns(".lock", "*.tmp"))
    for path in [target, *target.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return target


CHROMIUM = Path("/usr/bin/chromium")  # Debian's chromium (.ci/run installs it); playwright drives it
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def need_chromium() -> None:
    """Skip the calling test unless Debian's Chromium and the playwright package are installed."""
    if not (CHROMIUM.exists() and os.access(CHROMIUM, os.X_OK)):
        pytest.skip(
            f"no Chromium at {CHROMIUM}: install Debian's 'chromium' package (.ci/run does) to run the browser tests"
        )
    pytest.importorskip("playwright.sync_api", reason="the playwright Python package is not installed (dev extra)")


def chromium_browser():  # noqa: ANN201  (a generator for a pytest fixture: ``yield from chromium_browser()``)
    """Chromium under playwright for a module's browser tests; skips them when it cannot be started."""
    from playwright.sync_api import Error, sync_playwright

    with sync_playwright() as p:
        try:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, timeout=30_000)
        except Error as err:
            pytest.skip(f"Chromium at {CHROMIUM} could not be started by playwright: {err}")
        yield browser
        browser.close()
