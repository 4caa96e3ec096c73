"""Command line: ``tycheon datasets list | describe NAME | hash NAME...``.

``datasets list`` loads every dataset of the manifest (default ``benchmarks/datasets.toml`` relative to
the current directory), verifies its content hash, and prints one line per dataset: series count,
length range, frequency and the demand-class mix (ADI/CV² classes of each full series, in %). Without
a manifest file at the default path it lists the catalogue unverified and says so on stderr.

In ``list``, a dataset that fails its manifest check (content hash, frequency, season length or
synthetic flag) is still listed, its row marked ``MISMATCH`` (hash) or ``INVALID`` (the other fields),
with the reason on stderr; the other datasets are listed as usual.

Exit codes: 0 success, 1 a dataset failing its manifest check in ``list``, 2 bad input (unknown
dataset, bad manifest, loader options a loader refuses, bad arguments), with the message on stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

import numpy as np

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
from tycheon.data.panel import Panel, PanelValidationError
from tycheon.data.synthetic import SyntheticConfigError

__all__ = ["main", "class_mix"]

# The command line runs from a checkout; the library itself names no manifest.
DEFAULT_MANIFEST = Path("benchmarks") / "datasets.toml"

# Everything a user can get wrong: the dataset name, the manifest, or the loader options it passes.
_BAD_INPUT: tuple[type[Exception], ...] = (
    UnknownDatasetError,
    DatasetOptionError,
    ManifestError,
    PanelValidationError,
    SyntheticConfigError,
    Fpp3DatasetError,
    CompetitionSubsetError,
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


def _cmd_list(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    manifest_path = Path(args.manifest) if args.manifest else DEFAULT_MANIFEST
    if args.manifest is None and not manifest_path.is_file():
        print(f"tycheon: no manifest at {manifest_path}; listing the catalogue without hash checks", file=err)
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
            print(f"tycheon: {exc}", file=err)
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
    out.write("\n".join(lines) + "\n")
    return 0


def _cmd_hash(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    manifest_path = Path(args.manifest) if args.manifest else DEFAULT_MANIFEST
    manifest = read_manifest(manifest_path) if manifest_path.is_file() else None
    for name in args.names:
        options = manifest[name].options if manifest is not None and name in manifest else {}
        out.write(f"{content_hash(load(name, **options))}  {name}\n")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tycheon", description="tycheon: honest forecasting benchmarks")
    sub = parser.add_subparsers(dest="command", required=True)
    datasets = sub.add_parser("datasets", help="list, describe and hash the benchmark datasets")
    dsub = datasets.add_subparsers(dest="action", required=True)
    p_list = dsub.add_parser("list", help="one line per dataset: series, lengths, frequency, class mix")
    p_desc = dsub.add_parser("describe", help="details of one dataset")
    p_desc.add_argument("name")
    p_hash = dsub.add_parser("hash", help="sha256 of the canonical content (for the manifest)")
    p_hash.add_argument("names", nargs="+", metavar="NAME")
    for p in (p_list, p_desc, p_hash):
        p.add_argument("--manifest", default=None, help=f"manifest path (default {DEFAULT_MANIFEST})")
    p_list.set_defaults(handler=_cmd_list)
    p_desc.set_defaults(handler=_cmd_describe)
    p_hash.set_defaults(handler=_cmd_hash)
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
    except _BAD_INPUT as exc:
        print(f"tycheon: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
