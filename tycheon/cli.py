"""Command line: ``tycheon datasets list | describe NAME | hash NAME... [--entry]`` and ``tycheon evaluate FILE``.

``evaluate FILE`` runs a user's own long-format CSV/parquet file through the published benchmark's
pipeline (see :mod:`tycheon.evaluation` for the plan, ``benchmarks/evaluate.py`` for what is written): it
prints the plan first (what was inferred, the origins, what the data are too short for, the expected cost
of slow models), runs every model with a named progress bar on a terminal, writes a results version and
the built site into ``--out`` (default ``./tycheon-results``) and prints per demand class the winner per
metric and the models that beat the random walk.

``datasets list`` loads every dataset of the manifest (default ``benchmarks/datasets.toml`` relative to
the current directory), verifies its content hash, and prints one line per dataset: series count,
length range, frequency and the demand-class mix (ADI/CV² classes of each full series, in %). Without
a manifest file at the default path it lists the catalogue unverified and says so on stderr.

``datasets hash NAME...`` prints each dataset's content sha256 (loaded with the manifest's options when
the manifest lists it); with ``--entry`` it prints the dataset's whole ``[datasets.NAME]`` table for the
manifest instead: description, frequency, season length and synthetic flag from the catalogue
(:mod:`tycheon.data.datasets`, which reads them from the loader's own table), source, licence and
redistributable from the loaded panel, its sha256 and options. A panel that disagrees with the
catalogue (an option that changes its frequency, say) is bad input.

In ``list``, a dataset that fails its manifest check (content hash, frequency, season length or
synthetic flag) is still listed, its row marked ``MISMATCH`` (hash) or ``INVALID`` (the other fields),
with the reason on stderr; the other datasets are listed as usual.

Exit codes: 0 success, 1 a dataset failing its manifest check in ``list``, a site build that failed, or
an ``evaluate`` run that cannot rank (its random walk or production baseline failed, e.g. out of
``--time-budget``: nothing is written, as in ``python -m benchmarks.run``), 2 bad input (unknown dataset,
bad manifest, loader options a loader refuses, bad arguments, a user file that cannot become a panel, too
few origins, an unknown model, an ``--out`` that is a file, holds files tycheon did not write, is locked by
another run, is read-only or full), with a one-line message on stderr; ``--debug`` shows the traceback
instead. Every message that quotes user-given text (file names, ids, columns) is printed through
:func:`tycheon.textsafe.for_terminal`, so it cannot carry a terminal escape sequence.

``evaluate`` checks ``--freq``, ``--units`` and ``--time-budget`` (finite, at least
:data:`MIN_TIME_BUDGET` seconds) before reading the file; ``--out`` is tycheon's own folder (see
``benchmarks/evaluate.py``): created by it, or empty, or holding its marker, and locked for the run.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn, TextIO

import numpy as np
import pandas as pd

from tycheon._harness import HarnessUnavailableError
from tycheon.data.competitions import CompetitionSubsetError
from tycheon.data.datasets import DatasetOptionError, UnknownDatasetError, available_datasets, load, spec
from tycheon.data.demand import CLASSES, demand_classes
from tycheon.data.fpp3 import Fpp3DatasetError
from tycheon.data.manifest import (
    ManifestError,
    ManifestHashError,
    content_hash,
    load_verified,
    read_manifest,
)
from tycheon.data.panel import EDGE_NAN, NAN_POLICIES, Panel, PanelValidationError
from tycheon.data.synthetic import SyntheticConfigError
from tycheon.data.userfile import DEFAULT_MAX_ROWS, UserFileError, file_sha256, read_user_file
from tycheon.evaluation import (
    MIN_TIME_BUDGET,
    DataSpec,
    EvaluationError,
    load_panel,
    plan_evaluation,
    probe_seconds_per_fit,
)
from tycheon.textsafe import for_terminal

__all__ = ["class_mix", "main"]

# The command line runs from a checkout; the library itself names no manifest.
DEFAULT_MANIFEST = Path("benchmarks") / "datasets.toml"


# The unit forms the benchmark config accepts (benchmarks/config.py UNIT), checked here so that a typo is
# reported against --units before the file is read
_UNIT = re.compile(r"(series|total|level:[A-Za-z0-9_]+|groups:[1-9][0-9]*|groups_random:[1-9][0-9]*)")
_FREQ = re.compile(r"[0-9]*[A-Za-z]+(-[A-Za-z]+)?")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")

# Everything a user can get wrong: the dataset name, the manifest, or the loader options it passes.
_BAD_INPUT: tuple[type[BaseException], ...] = (
    UnknownDatasetError,
    DatasetOptionError,
    ManifestError,
    PanelValidationError,
    SyntheticConfigError,
    Fpp3DatasetError,
    CompetitionSubsetError,
    UserFileError,
    EvaluationError,
)

_SHORT = {
    "smooth": "smooth",
    "erratic": "erratic",
    "intermittent": "intermit",
    "lumpy": "lumpy",
    "undefined": "undef",
}


def class_mix(panel: Panel) -> dict[str, float]:
    """Share (%) of series in each demand class, computed on each series' full observed history."""
    view = panel.dense()
    classes = demand_classes(view.values, view.observed)
    n = max(len(classes), 1)
    return {c: 100.0 * float(np.sum(classes == c)) / n for c in CLASSES}


def _mix_text(mix: dict[str, float]) -> str:
    shown = [c for c in CLASSES if c != "undefined" or mix[c] > 0]
    return " ".join(f"{_SHORT[c]} {mix[c]:5.1f}%" for c in shown)


def _summary_line(name: str, panel: Panel, status: str) -> str:
    lengths = panel.lengths()
    return (
        f"{name:<22} {panel.n_series:>6} series  length {int(lengths.min()):>3}-{int(lengths.max()):<4} "
        f"{panel.freq:<3} m={panel.season_length:<3} {status:<10} {_mix_text(class_mix(panel))}"
    )


def _say(stream: TextIO, text: str) -> None:
    """Print a line that may hold user-given text (file names, ids, columns): control characters and
    bidirectional overrides are shown escaped, never sent to the terminal raw."""
    print(for_terminal(text), file=stream)


def _cmd_list(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    manifest_path = Path(args.manifest) if args.manifest else DEFAULT_MANIFEST
    if args.manifest is None and not manifest_path.is_file():
        _say(err, f"tycheon: no manifest at {manifest_path}; listing the catalogue without hash checks")
        for name in available_datasets():
            out.write(_summary_line(name, load(name), "unverified") + "\n")
        return 0
    manifest = read_manifest(manifest_path)
    failures = 0
    for name in manifest.names():
        try:
            panel = load_verified(name, manifest_path=manifest_path)
            status = "sha256 ok"
        except ManifestError as exc:  # the data loaded but disagrees with its manifest entry
            _say(err, f"tycheon: {exc}")
            status = "MISMATCH" if isinstance(exc, ManifestHashError) else "INVALID"
            panel = load(name, **manifest[name].options)
            failures += 1
        out.write(_summary_line(name, panel, status) + "\n")
    return 1 if failures else 0


def _cmd_describe(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    entry_options: dict = {}
    manifest_path = Path(args.manifest) if args.manifest else DEFAULT_MANIFEST
    if manifest_path.is_file():
        manifest = read_manifest(manifest_path)
        if args.name in manifest:
            entry_options = manifest[args.name].options
    spec(args.name)  # unknown names fail here with the list of known ones
    panel = load(args.name, **entry_options)
    info = panel.describe()
    lines = [
        f"name            {info['name']}",
        f"description     {spec(args.name).description}",
        f"series          {info['n_series']}",
        f"observations    {info['n_observations']}",
        f"length          {info['length_min']}-{info['length_max']}",
        f"frequency       {info['freq']} (season length {info['season_length']})",
        f"span            {info['start']} .. {info['end']}",
        f"synthetic       {info['synthetic']}",
        f"redistributable {info['redistributable']}",
        f"source          {panel.meta.get('source', '')}",
        f"licence         {panel.meta.get('licence', '')}",
        f"sha256          {content_hash(panel)}",
        f"demand classes  {_mix_text(class_mix(panel))}",
    ]
    for level in panel.levels:
        lines.append(f"level {level:<9} {panel.attributes[level].nunique()} values")
    if "horizon" in panel.attributes:
        horizons = sorted(int(h) for h in panel.attributes["horizon"].unique())
        lines.append(f"horizon         {horizons} (published); test part = last n_test observations")
    for warning in panel.warnings:
        lines.append(f"warning         {warning}")
    out.write(for_terminal("\n".join(lines)) + "\n")
    return 0


def _toml_value(value: Any) -> str:
    """A manifest value as TOML, written as the committed manifest writes it (inline tables spaced)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        items = ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items())
        return f"{{ {items} }}" if items else "{}"
    raise ManifestError(f"cannot write {value!r} ({type(value).__name__}) into a manifest entry")


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key, ensure_ascii=False)


def _entry_text(name: str, fields: dict[str, Any]) -> str:
    """A ``[datasets.NAME]`` table of the manifest, one ``key = value`` line per field in the given order."""
    lines = [f"[datasets.{_toml_key(name)}]", *(f"{key} = {_toml_value(v)}" for key, v in fields.items())]
    return "\n".join(lines) + "\n"


def _entry(name: str, panel: Panel, options: dict[str, Any]) -> dict[str, Any]:
    """The manifest entry of a loaded dataset: what it is from the catalogue, provenance from the loader."""
    declared = spec(name).manifest_fields()
    synthetic = bool(panel.meta.get("synthetic", False))
    loaded = {"frequency": panel.freq, "season_length": panel.season_length, "synthetic": synthetic}
    for key, got in loaded.items():
        if declared[key] != got:
            raise ManifestError(
                f"{name}: the loaded panel's {key} is {got!r} but the catalogue declares {declared[key]!r} "
                "(a manifest entry must agree with the catalogue; are its options changing it?)"
            )
    return {
        "description": declared["description"],
        "source": str(panel.meta.get("source", "")),
        "licence": str(panel.meta.get("licence", "")),
        "frequency": declared["frequency"],
        "season_length": declared["season_length"],
        "synthetic": declared["synthetic"],
        "redistributable": bool(panel.meta.get("redistributable", True)),
        "sha256": content_hash(panel),
        "options": options,
    }


def _cmd_hash(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    manifest_path = Path(args.manifest) if args.manifest else DEFAULT_MANIFEST
    manifest = read_manifest(manifest_path) if manifest_path.is_file() else None
    entries = []
    for name in args.names:
        options = manifest[name].options if manifest is not None and name in manifest else {}
        panel = load(name, **options)
        if args.entry:
            entries.append(_entry_text(name, _entry(name, panel, options)))
        else:
            out.write(f"{content_hash(panel)}  {name}\n")
    if entries:
        out.write(for_terminal("\n".join(entries)))
    return 0


def _cmd_evaluate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from tycheon._harness import load_harness

    path = Path(args.file)
    frame = read_user_file(path, id_col=args.id, max_rows=args.max_rows)
    data = DataSpec(
        id_col=args.id,
        time_col=args.time,
        target_col=args.target,
        level_cols=None if args.levels is None else tuple(c for c in args.levels.split(",") if c),
        freq=args.freq,
        season_length=args.season,
        nan_policy=args.nan_policy,
        edge_nan=args.edge_nan,
        static_universe=args.static_universe,
        redistributable=args.redistributable,
        licence=args.licence,
        name=path.stem,
        max_rows=args.max_rows,
    )
    panel = load_panel(frame, data, source=f"file {path.name}", file={"name": path.name, "sha256": file_sha256(path)})
    unknown = [u for u in args.units if u.startswith("level:") and u.split(":", 1)[1] not in panel.levels]
    if unknown:  # said now, against the option, not as every model failing after the run
        raise EvaluationError(
            f"--units {unknown[0]!r}: {unknown[0].split(':', 1)[1]!r} is not a level of {path.name}; "
            f"accepted levels: {list(panel.levels)} (columns constant per series; see --levels)"
        )
    plan = plan_evaluation(
        panel,
        horizon=args.horizon,
        n_origins=args.origins,
        min_history=args.min_history,
        models=args.models,
        units=args.units,
        n_jobs=args.jobs,
        time_budget=args.time_budget,
    )
    levels = panel.levels
    harness = load_harness()
    per_fit = dict(harness.seconds_per_fit())  # measured in the published benchmarks
    for model in plan.slow_models:
        if model not in per_fit:  # not on record: a few fits on this data say it
            per_fit[model] = probe_seconds_per_fit(panel, plan, model)
    del frame, panel  # the pipeline reads the file itself; keep the peak memory to one copy of the data
    for line in plan.lines(seconds_per_fit={m: v for m, v in per_fit.items() if v}):
        _say(err, f"tycheon: {line}")
    progress = err.isatty() if args.progress is None else args.progress
    try:
        written = harness.run_file(
            path,
            data=data,
            levels=levels,
            plan=plan,
            out=Path(args.out),
            build_site=not args.no_site,
            progress=progress,
            echo=lambda line: _say(err, f"tycheon: {line}"),
        )
    except harness.BAD_INPUT as exc:
        raise EvaluationError(str(exc)) from exc
    except harness.RUN_FAILED as exc:  # the run failed, not the input: exit 1 as python -m benchmarks.run
        if args.debug:
            raise
        _say(err, f"tycheon: error: {_one_line(exc)}")
        return 1
    _say(out, f"summary ({', '.join(plan.settings.units[:1])}; verdicts against the random walk):")
    for line in written.summary:
        _say(out, f"  {line}")
    _say(out, f"results: {written.results}")
    if written.site is not None:
        _say(out, f"site: {written.site / 'index.html'}")
    return 0


def _time_budget(text: str) -> float:
    """``--time-budget``: finite seconds, at least :data:`MIN_TIME_BUDGET`."""
    accepted = f"accepted: a finite number of seconds >= {MIN_TIME_BUDGET:g}"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number; {accepted}") from None
    if not math.isfinite(value) or value < MIN_TIME_BUDGET:
        raise argparse.ArgumentTypeError(f"{text!r} is not a usable budget per model; {accepted}")
    return value


def _max_rows(text: str) -> int:
    """``--max-rows``: a whole number of rows, at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; accepted: rows >= 1") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: accepted: rows >= 1")
    return value


def _units(text: str) -> tuple[str, ...]:
    """``--units``: comma-separated unit forms (see :data:`_UNIT`)."""
    units = tuple(u.strip() for u in text.split(",") if u.strip())
    bad = [u for u in units if not _UNIT.fullmatch(u)]
    if bad or not units:
        raise argparse.ArgumentTypeError(
            f"{(bad[0] if bad else text)!r} is not a unit; accepted: comma-separated series, total, "
            "level:COLUMN (a column of letters, digits and _), groups:K or groups_random:K (K >= 1)"
        )
    return units


def _freq(text: str) -> str:
    """``--freq``: a pandas frequency alias."""
    try:
        ok = _FREQ.fullmatch(text) is not None and pd.tseries.frequencies.to_offset(text) is not None
    except ValueError:
        ok = False
    if not ok:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a pandas frequency alias; accepted: a period-start alias such as MS, QS, YS, W, "
            "D or h, with an optional multiple (2MS) or anchor (W-MON)"
        )
    return text


def _evaluate_parser(sub: Any) -> None:
    p = sub.add_parser(
        "evaluate",
        help="your own data: backtest the roster on a CSV/parquet file",
        description="Backtest the roster on your own long-format file through the benchmark's "
        "pipeline; writes a results version and a site into --out.",
    )
    p.add_argument("file", help="CSV or parquet, long format: one row per (series, period)")
    p.add_argument("--id", default="unique_id", help="series id column (default unique_id)")
    p.add_argument("--time", default="ds", help="period column, the start of each period (default ds)")
    p.add_argument("--target", default="y", help="value column (default y)")
    p.add_argument(
        "--levels",
        default=None,
        help="comma-separated hierarchy columns (default: every other column constant per series)",
    )
    p.add_argument("--freq", type=_freq, default=None, help="pandas alias such as MS, QS, W (default: inferred)")
    p.add_argument("--season", type=int, default=None, help="season length (default: from the frequency)")
    p.add_argument("--horizon", type=int, default=None, help="steps per origin (default by frequency, 6 monthly)")
    p.add_argument("--origins", type=int, default=None, help="number of origins (default: as many as fit, <= 12)")
    p.add_argument("--min-history", type=int, default=None, help="periods before an origin (default 2 seasons)")
    p.add_argument("--units", type=_units, default="series", help="series,total,level:COL,groups:K (default series)")
    p.add_argument("--models", default="default", help="default | all | comma-separated forecaster ids")
    p.add_argument(
        "--nan-policy",
        default="raise",
        choices=NAN_POLICIES,
        help="raise (default): name the first NaN; zero: NaN is zero demand; drop_series: drop and list",
    )
    p.add_argument(
        "--edge-nan",
        default="policy",
        choices=EDGE_NAN,
        help="'unlisted': leading/trailing NaN are not-yet-listed/delisted periods, not zeros",
    )
    p.add_argument(
        "--static-universe",
        action="store_true",
        help="the series are the entities alive at a snapshot (adds the survivorship warning)",
    )
    p.add_argument("--redistributable", action="store_true", help="the data may be published (default: not)")
    p.add_argument("--licence", default=None)
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: cores, at most 8)")
    p.add_argument(
        "--time-budget",
        type=_time_budget,
        default=None,
        help=f"soft seconds per model, at least {MIN_TIME_BUDGET:g} (a run whose random walk runs out of "
        "time writes nothing and exits 1)",
    )
    p.add_argument(
        "--max-rows",
        type=_max_rows,
        default=DEFAULT_MAX_ROWS,
        metavar="N",
        help=f"refuse a file of more rows before loading it (default {DEFAULT_MAX_ROWS:,}; raise it for a "
        "larger panel that fits in memory)",
    )
    p.add_argument("--out", default="tycheon-results", help="output folder (default ./tycheon-results)")
    p.add_argument("--no-site", action="store_true", help="write results only, do not render or build the site")
    p.add_argument(
        "--progress",
        dest="progress",
        action="store_true",
        default=None,
        help="progress bars (default: on when stderr is a terminal)",
    )
    p.add_argument("--no-progress", dest="progress", action="store_false")
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show the traceback of an error")
    p.set_defaults(handler=_cmd_evaluate)


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors (which quote the user's argument) reach the terminal escaped."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {for_terminal(message, keep_newlines=False)}\n")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tycheon", description="tycheon: honest forecasting benchmarks")
    sub = parser.add_subparsers(dest="command", required=True)
    datasets = sub.add_parser("datasets", help="list, describe and hash the benchmark datasets")
    dsub = datasets.add_subparsers(dest="action", required=True)
    p_list = dsub.add_parser("list", help="one line per dataset: series, lengths, frequency, class mix")
    p_desc = dsub.add_parser("describe", help="details of one dataset")
    p_desc.add_argument("name")
    p_hash = dsub.add_parser("hash", help="sha256 of the canonical content (for the manifest)")
    p_hash.add_argument("names", nargs="+", metavar="NAME")
    p_hash.add_argument(
        "--entry", action="store_true", help="print the whole manifest entry (catalogue fields, provenance, sha256)"
    )
    for p in (p_list, p_desc, p_hash):
        p.add_argument("--manifest", default=None, help=f"manifest path (default {DEFAULT_MANIFEST})")
    p_list.set_defaults(handler=_cmd_list)
    p_desc.set_defaults(handler=_cmd_describe)
    p_hash.set_defaults(handler=_cmd_hash)
    _evaluate_parser(sub)
    parser.add_argument("--debug", action="store_true", help="show the traceback of an error")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (2 for bad input, with the message on stderr)."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse reports usage errors by exiting with 2
        return int(exc.code) if isinstance(exc.code, int) else 2
    try:
        return int(args.handler(args, sys.stdout, sys.stderr))
    except _BAD_INPUT + (HarnessUnavailableError,) as exc:
        if args.debug:
            raise
        _say(sys.stderr, f"tycheon: error: {_one_line(exc)}")
        return 2
    except subprocess.CalledProcessError as exc:
        if args.debug:
            raise
        _say(sys.stderr, f"tycheon: error: the site build failed ({_one_line(exc)})")
        return 1


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


if __name__ == "__main__":
    raise SystemExit(main())
