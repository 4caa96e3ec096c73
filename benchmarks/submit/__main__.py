"""``python -m benchmarks.submit``: the contribution flow, locally exactly as on a pull request.

``check FILE [FILE ...]``
    (1) validate each model config strictly (the harness's loader: sktime estimators and their params
    only from the allow-list, params typed, finite and inside ``benchmarks.config.CONTRIBUTED_PARAMS``,
    an id that is its own site page and not a reserved one, a display name in one script; plus: not a
    reference model, and id, page, display name (compared after NFKC, case folding, removal of invisible
    characters and mapping of look-alike characters) and model (defaults filled in, sktime settings equal
    to a tycheon forecaster written as it) not already taken by another file in ``benchmarks/models/``);
    (2) run the benchmark
    config (default ``small``) with the submitted models added to its roster, every other model served
    by the score cache where it can be; (3) write a new results version; (4) render the site;
    (5) print a markdown summary (placement per dataset and unit, verdict vs the random walk, what did
    not run and why). Exit 0: accepted. Exit 1: rejected, with the reasons (a submitted model with no
    scored forecast anywhere, zero support, is rejected). Exit 2: the check itself could not run (bad
    benchmark config, unwritable work folder, a run that cannot rank, render failure).
``changed --base REF [--head REF]``
    Print the model configs a diff adds or changes, one per line (what the workflow passes to ``check``);
    exit 1, with one line per path, if the diff touches anything but ``benchmarks/models/<id>.toml`` (no
    subfolders, regular files only) or a reference model (``naive``, ``snaive_momentum``).

Everything printed passes through :func:`tycheon.textsafe.for_terminal`; text a contributor wrote (ids,
display names, file names, reasons quoting them) is written to the ``--summary`` markdown file through
:func:`tycheon.textsafe.markdown_text`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from benchmarks.cache import CACHE_DIR
from benchmarks.config import BENCHMARKS_DIR, MODELS_DIR, ConfigError
from benchmarks.results_io import RESULTS_DIR
from benchmarks.submit import bench
from benchmarks.submit.changes import GitError, changed_model_configs
from benchmarks.submit.summary import Escape, rejection_summary, results_summary, scored_anywhere
from benchmarks.submit.validate import Verdict, validate_submission
from tycheon.textsafe import for_terminal, markdown_text

ROOT = BENCHMARKS_DIR.parent
WORK_DIR = ROOT / "build" / "submit"
ACCEPTED, REJECTED, ERROR = 0, 1, 2


def _say(text: str, *, err: bool = False) -> None:
    """Print to the terminal: every line goes through :func:`for_terminal`, so an id, a display name or a
    file name from a pull request cannot write the clipboard, clear the screen or reorder the line."""
    print(for_terminal(text), file=sys.stderr if err else sys.stdout)


def _emit(write: Callable[[Escape], str], summary_file: Path | None) -> str:
    """Print the report with contributor text as given (terminal-escaped at the sink) and append it to the
    step summary with contributor text as literal markdown; returns the markdown."""
    _say(write(str))
    markdown = write(markdown_text)
    if summary_file is not None:
        with summary_file.open("a", encoding="utf-8") as fh:
            fh.write(markdown + "\n")
    return markdown


def _validate(files: list[Path], models_dir: Path) -> list[Verdict]:
    verdicts = [validate_submission(f, models_dir=models_dir) for f in files]
    seen: dict[str, Path] = {}
    for v in verdicts:
        if v.config is None:
            continue
        if v.config.id in seen:
            v.reasons.append(
                f"{v.path}: field 'id': {v.config.id!r} is also the id of {seen[v.config.id]} in this submission"
            )
        seen.setdefault(v.config.id, v.path)
    return verdicts


def check(args: argparse.Namespace) -> int:
    files = [Path(f) for f in args.files]
    verdicts = _validate(files, args.models_dir)
    if not all(v.accepted for v in verdicts):
        _emit(lambda esc: rejection_summary(verdicts, escape=esc), args.summary)
        return REJECTED
    submitted = [v.config for v in verdicts if v.config is not None]
    if args.no_run:
        _emit(
            lambda esc: (
                "## Submission check: valid (not run: --no-run)\n\n"
                + "\n".join(f"- {esc(str(v.path))}: {esc(v.config.id)}" for v in verdicts if v.config)
            ),
            args.summary,
        )
        return ACCEPTED
    from tycheon.backtest.guards import LookaheadError

    try:
        work = bench.prepare_work_dir(args.work_dir)
        results_dir = args.results_dir or work / "results"
        if args.results_dir is None:
            bench.seed_results(RESULTS_DIR, results_dir)
        run = bench.run_benchmark(
            config=args.config,
            submitted=submitted,
            models_dir=args.models_dir,
            results_dir=results_dir,
            cache_dir=args.cache_dir,
            work_dir=work,
            progress=args.progress,
        )
    except (ConfigError, bench.WorkDirError, bench.CannotRankError) as err:
        _say(f"submit check could not run: {err}", err=True)
        return ERROR
    except LookaheadError as err:
        leak = str(err)
        _emit(lambda esc: f"## Submission check: rejected\n\nLeakage: {esc(leak)}\n", args.summary)
        return REJECTED
    ran = {m.id: scored_anywhere(run.doc, m.id) for m in submitted}
    try:
        site = bench.render(results_dir=results_dir, site_dir=work / "site", html=args.html)
    except Exception as err:  # noqa: BLE001 - the renderer's errors differ by stage; report any with its cause
        _say(f"submit check: rendering the site failed: {type(err).__name__}: {err}", err=True)
        return ERROR
    accepted = all(ran.values())

    def report(esc: Escape) -> str:
        text = results_summary(
            run.doc,
            [m.id for m in submitted],
            accepted=accepted,
            results_path=str(run.results_path),
            site_path=str(site),
            escape=esc,
        )
        if not accepted:
            text += (
                "\n"
                + "\n".join(
                    f"Rejected: `{m}` produced no scored forecast on any dataset (zero support; reasons above)."
                    for m, ok in ran.items()
                    if not ok
                )
                + "\n"
            )
        return text

    markdown = _emit(report, args.summary)
    (work / "summary.md").write_text(markdown, encoding="utf-8")
    return ACCEPTED if accepted else REJECTED


def changed(args: argparse.Namespace) -> int:
    try:
        changes = changed_model_configs(args.base, args.head, cwd=str(ROOT))
    except GitError as err:
        _say(f"submit changed: {for_terminal(err, keep_newlines=False)}", err=True)
        return ERROR
    for path in changes.to_check:
        _say(path)
    for path in changes.removed:
        _say(f"removed: {path} (its model leaves the roster; nothing to run)", err=True)
    for problem in changes.problems:
        _say(f"rejected: {problem}", err=True)
    return REJECTED if changes.problems else ACCEPTED


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.submit", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check", help="validate, run, write a results version, render, summarise")
    c.add_argument("files", nargs="+", help="benchmarks/models/<id>.toml file(s)")
    c.add_argument("--config", default="small", help="benchmark config name or .toml path (default: small)")
    c.add_argument("--models-dir", type=Path, default=MODELS_DIR, help="the other model configs")
    c.add_argument(
        "--results-dir",
        type=Path,
        default=None,
        help="write the new version here (default: <work-dir>/results, seeded with a copy of "
        "benchmarks/results so the version numbers on from the committed ones)",
    )
    c.add_argument("--cache-dir", type=Path, default=CACHE_DIR, help="score cache to reuse and fill")
    c.add_argument("--work-dir", type=Path, default=WORK_DIR, help="config, results, site and summary.md")
    c.add_argument("--no-run", action="store_true", help="validate only")
    c.add_argument("--html", action="store_true", help="also build the HTML site with mkdocs --strict")
    c.add_argument("--summary", type=Path, default=None, help="append the markdown summary to this file")
    c.add_argument("--progress", action="store_true")
    c.set_defaults(func=check)
    d = sub.add_parser("changed", help="list the model configs a git diff adds or changes")
    d.add_argument("--base", required=True, help="git revision to compare from (e.g. HEAD^1, origin/main)")
    d.add_argument("--head", default="HEAD")
    d.set_defaults(func=changed)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
