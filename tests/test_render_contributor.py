"""The contributor's path: the repository URL written once (pyproject) and used by the submit page, and the
submit page's "What CI runs" box read from the repository's own workflow files."""

from __future__ import annotations

import html
import re
import shutil
import tomllib
from pathlib import Path

import yaml

from benchmarks.render.builders.reference import _commands, submit_page
from benchmarks.render.load import ROOT
from benchmarks.render.site import environment

WORKFLOWS = ROOT / ".github" / "workflows"


def _pyproject_repository(root: Path = ROOT) -> str:
    return tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]["Repository"]


def _render_submit(root: Path) -> str:
    page = submit_page(root=root)
    return environment().get_template(page.template).render(here=page.path, title=page.title, **page.context)


def _box(page: str) -> str:
    """The "What CI runs" box as text."""
    box = page.split('<div class="admonition info tyc-ci">', 1)[1].split("</div>", 1)[0]
    return html.unescape(re.sub(r"<[^>]+>", "", box))


def _workflow(name: str, root: Path = ROOT) -> dict:
    return yaml.safe_load((root / ".github" / "workflows" / name).read_text(encoding="utf-8"))


def test_the_submit_page_links_the_repository_pyproject_names(committed_docs):
    url = _pyproject_repository()
    submit = (committed_docs.docs / "submit.md").read_text(encoding="utf-8")
    assert f'href="{url}/new/main/benchmarks/models"' in submit
    assert f'href="{url}/tree/main/benchmarks/models"' in submit


def test_the_ci_box_states_the_submission_and_merge_workflows_as_their_files_declare_them(committed_docs):
    box = _box((committed_docs.docs / "submit.md").read_text(encoding="utf-8"))
    check = _workflow("submission.yml")["jobs"]["check"]
    assert f"GitHub-hosted {check['runs-on']} runner" in box
    assert f"{check['timeout-minutes']} minutes for the job" in box
    small = tomllib.loads((ROOT / "benchmarks" / "configs" / "small.toml").read_text(encoding="utf-8"))
    assert f"{small['time_budget_seconds']:,.0f} s per (dataset, model)" in box
    assert f"with {small['n_jobs']} worker processes" in box
    assert "python -m benchmarks.submit check --config small --html" in box
    merge = _workflow("results.yml")
    assert "python -m benchmarks.run --config small --if-new --verify-cache 0.1" in box
    assert f"(job run, {merge['jobs']['run']['runs-on']}, {merge['jobs']['run']['timeout-minutes']} minutes)" in box
    assert "Not re-run after a merge: full, m5scale" in box  # no workflow names --config full
    pins = [line for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines() if "==" in line]
    assert f"({len(pins)} pins)" in box
    numpy = next(p for p in pins if p.startswith("numpy=="))
    assert numpy in box


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    for folder in (".github/workflows", "benchmarks/configs", "benchmarks/models"):
        shutil.copytree(ROOT / folder, root / folder)
    for file in ("pyproject.toml", "constraints.txt"):
        shutil.copyfile(ROOT / file, root / file)
    return root


def test_the_ci_box_follows_the_workflow_files_when_they_change(tmp_path):
    root = _copy(tmp_path)
    before = _box(_render_submit(root))
    submission = root / ".github" / "workflows" / "submission.yml"
    submission.write_text(
        submission.read_text(encoding="utf-8")
        .replace("runs-on: ubuntu-24.04", "runs-on: ubuntu-22.04-arm")
        .replace("timeout-minutes: 75", "timeout-minutes: 33"),
        encoding="utf-8",
    )
    results = root / ".github" / "workflows" / "results.yml"
    results.write_text(results.read_text(encoding="utf-8").replace("--config small", "--config full"), encoding="utf-8")
    small = root / "benchmarks" / "configs" / "small.toml"
    small.write_text(
        small.read_text(encoding="utf-8").replace("time_budget_seconds = 400.0", "time_budget_seconds = 123.0"),
        encoding="utf-8",
    )
    pyproject = root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text(encoding="utf-8").replace(_pyproject_repository(), "https://github.com/elsewhere/fork"),
        encoding="utf-8",
    )
    page = _render_submit(root)
    after = _box(page)
    assert "GitHub-hosted ubuntu-24.04 runner" in before and "75 minutes for the job" in before
    assert "GitHub-hosted ubuntu-22.04-arm runner" in after and "33 minutes for the job" in after
    assert "400 s per (dataset, model)" in before and "123 s per (dataset, model)" in after
    assert "Not re-run after a merge: full, m5scale" in before
    assert "python -m benchmarks.run --config full --if-new" in after and "Not re-run after a merge: m5scale" in after
    assert 'href="https://github.com/elsewhere/fork/new/main/benchmarks/models"' in page


def test_without_workflow_files_the_submit_page_has_no_ci_box(tmp_path):
    root = _copy(tmp_path)
    shutil.rmtree(root / ".github")
    assert "What CI runs" not in _render_submit(root)


def test_a_benchmark_command_is_read_without_the_interpreter_path_shell_variables_or_redirections():
    script = (
        "if ! .venv/bin/python -m benchmarks.run --config small --if-new \\\n"
        '    --work-dir "$RUNNER_TEMP/x" 2> err; then\n'
        "  exit 1\nfi\n.venv/bin/python -m benchmarks.validate out.json | tee log\n"
    )
    assert _commands(script, "benchmarks.run") == ["python -m benchmarks.run --config small --if-new"]
    assert _commands(script, "benchmarks.") == [
        "python -m benchmarks.run --config small --if-new",
        "python -m benchmarks.validate out.json",
    ]
