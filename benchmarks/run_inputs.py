"""What a benchmark run starts from: its resolved config (:class:`RunInputs`), the score sets computed
before it that it may use in place of runs (:class:`GivenRun`), its datasets as loaded through the
manifest's hash check (:func:`load_dataset`) and its rolling-origin protocol (:func:`rolling_protocol`)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.cache import ScoreCache
from benchmarks.config import BenchmarkConfig, ModelConfig, UserFile
from benchmarks.results_model import ModelRun
from tycheon.backtest.protocol import RollingOrigin
from tycheon.backtest.scoreset import ScoreSet
from tycheon.data import datasets as catalogue
from tycheon.data.caveats import Caveat, dataset_caveats
from tycheon.data.manifest import content_hash, load_verified
from tycheon.data.panel import Panel
from tycheon.data.userfile import load_user_file

__all__ = ["MANIFEST", "GivenRun", "LoadedDataset", "RunInputs", "load_dataset", "rolling_protocol", "subsample"]

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "benchmarks" / "datasets.toml"


@dataclass(frozen=True)
class GivenRun:
    """One model's score set computed before the run, in this process (by :func:`tycheon.evaluate`), with
    what decided its rows that its ``meta`` does not record.

    :func:`benchmarks.model_run.run_model` uses it in place of running the model only where the run it
    would make is the same: the same panel content, model, protocol, units, ``min_history``, quantile
    levels, samples, seed, backend, workers and time budget (:func:`benchmarks.model_run.given_scores`).
    """

    scores: ScoreSet
    dataset: str  # content hash (tycheon.data.manifest.content_hash) of the panel it ran on
    factory: tuple[str, dict[str, Any]]  # (forecaster id, params) it was built from (ModelConfig.factory_spec)
    backend: str
    n_jobs: int
    time_budget: float | None


@dataclass
class RunInputs:
    """A resolved benchmark: its file, validated config and model configs, and where to cache."""

    config_path: Path
    config: BenchmarkConfig
    models: dict[str, ModelConfig]
    cache: ScoreCache = field(default_factory=lambda: ScoreCache(enabled=False))
    progress: bool = False
    manifest: Path = MANIFEST
    dask_client: Any = None  # a distributed.Client for backend = "dask" (benchmarks.cluster.dask_client)
    # called once per finished (dataset, protocol, model) with its label, run record and source
    # ("cache", "given", "computed", "skipped"): the runner prints a progress line from it
    on_model_done: Callable[[str, ModelRun, str], None] | None = None
    # per model id, its score set from a run made before this one (tycheon.evaluate's), used where this
    # run's would be the same (benchmarks.model_run.given_scores); the others run as usual
    given: Mapping[str, GivenRun] = field(default_factory=dict)


def subsample(panel: Panel, n: int) -> Panel:
    """The ``n`` series with the smallest sha256 of their id: deterministic and independent of order."""
    if n >= panel.n_series:
        return panel
    ids = sorted(panel.series_ids, key=lambda s: hashlib.sha256(str(s).encode()).hexdigest())[:n]
    return panel.subset(ids)


@dataclass(frozen=True)
class LoadedDataset:
    """A dataset as the run uses it: the (subsampled) panel, its facts for the ``datasets`` block and its
    caveats, each typed where it was decided."""

    panel: Panel
    info: dict[str, Any]
    caveats: list[Caveat]


def load_dataset(
    name: str,
    options: dict[str, Any],
    n: int | None,
    *,
    manifest: Path,
    file: UserFile | None = None,
    config_dir: Path | None = None,
) -> LoadedDataset:
    """Load a dataset through the manifest's hash check (subsampled if asked) and describe it for the
    results' ``datasets`` block.

    With ``file`` the dataset is a user file instead (``[datasets.file]``, its path relative to
    ``config_dir``): no manifest entry, recorded by file name and sha256 only."""
    if file is not None:
        panel = load_user_file(
            file.resolve(config_dir or Path.cwd()),
            series_col=file.id,
            period_col=file.time,
            value_col=file.target,
            level_cols=tuple(file.levels),
            freq=file.freq,
            season_length=file.season_length,
            static_universe=file.static_universe,
            nan_policy=file.nan_policy,
            edge_nan=file.edge_nan,
            redistributable=file.redistributable,
            licence=file.licence,
            name=name,
            max_rows=file.max_rows,
        )
        options = dict(panel.meta["file"])
        description = f"user file {options['name']} (sha256 {options['sha256']})"
    else:
        panel = load_verified(name, manifest_path=manifest, options=options)
        description = catalogue.spec(name).description
    total = panel.n_series
    caveats = dataset_caveats(panel)
    if n is not None and n < total:
        panel = subsample(panel, n)
        caveats.append(
            Caveat("subsample", f"subsample: {panel.n_series} of {total} series, the smallest sha256 of the series id")
        )
    d = panel.describe()
    info = {
        "content_hash": content_hash(panel),
        "description": description,
        "options": dict(options),
        "n_series": panel.n_series,
        "n_series_total": total,
        "freq": panel.freq,
        "season_length": panel.season_length,
        "start": d["start"],
        "end": d["end"],
        "synthetic": bool(d["synthetic"]),
        "redistributable": bool(d["redistributable"]),
        "warnings": [c.message for c in caveats],
    }
    return LoadedDataset(panel, info, caveats)


def rolling_protocol(cfg: BenchmarkConfig) -> RollingOrigin:
    """The rolling-origin protocol a config asks for (benchmark mode: origins never overlap)."""
    return RollingOrigin(
        horizon=cfg.horizon,
        stride=cfg.stride,
        n_origins=cfg.n_origins,
        embargo=cfg.embargo,
        mode="benchmark",
        n_calibration_origins=cfg.n_calibration_origins,
    )
