"""The benchmark config schema: one :class:`BenchmarkConfig` per file under ``benchmarks/configs/`` (its
datasets, protocol, roster, reference models and analyses), with the rules that tie its fields together.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import pydantic
from pydantic import Field, StrictBool, StrictInt

from benchmarks.config.models import SLUG, Scalar, _Strict
from tycheon.data.userfile import DEFAULT_MAX_ROWS
from tycheon.metrics.registry import SCALED_STEP_LOSSES, metric_names

__all__ = [
    "UNIT",
    "BenchmarkConfig",
    "CompetitionEntry",
    "CompetitionMetric",
    "DatasetEntry",
    "ReplayConfig",
    "SensitivityConfig",
    "SkipModels",
    "UserFile",
]

UNIT = r"^(series|total|level:[A-Za-z0-9_]+|groups:[1-9][0-9]*|groups_random:[1-9][0-9]*)$"

CompetitionMetric = Literal["smape", "mape", "mase"]

DEFAULT_STEP_LOSS = "rmsse"
"""The default metric of the selection-rule replay and the protocol-sensitivity audit."""
if DEFAULT_STEP_LOSS not in SCALED_STEP_LOSSES:  # pragma: no cover - a registry edit that drops it
    raise RuntimeError(f"the default step loss {DEFAULT_STEP_LOSS!r} is not in {SCALED_STEP_LOSSES}")
_STEP_LOSS_CHOICES = (DEFAULT_STEP_LOSS, *(m for m in SCALED_STEP_LOSSES if m != DEFAULT_STEP_LOSS))
ScaledStepLoss = Literal[_STEP_LOSS_CHOICES]  # type: ignore[valid-type]
"""A metric the replay and the audit rank on: one of the registry's
:data:`~tycheon.metrics.registry.SCALED_STEP_LOSSES` (derived, never listed here), the default first (the
order a config error lists them in)."""

SkipModels = dict[Annotated[str, Field(pattern=SLUG)], Annotated[str, Field(min_length=1, max_length=300)]]
_SKIP_DESCRIPTION = (
    "models of the roster left out on this dataset, each with the reason (too slow for its size, no seasonal "
    "period for a seasonal method); they are recorded as skipped with that reason, never silently dropped"
)


class UserFile(_Strict):
    """A user's own long-format file as a benchmark dataset (``[datasets.file]`` in a config).

    ``path`` is relative to the config file. Results and pages record the file's *name* and sha256 only
    (the dump of this entry writes ``path`` as the bare file name), never the folder it lives in.
    """

    path: Annotated[str, Field(min_length=1, max_length=400)]
    id: Annotated[str, Field(min_length=1)] = "unique_id"
    time: Annotated[str, Field(min_length=1)] = "ds"
    target: Annotated[str, Field(min_length=1)] = "y"
    levels: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)
    freq: Annotated[str, Field(pattern=r"^[0-9]*[A-Za-z]+(-[A-Za-z]+)?$")] | None = None
    season_length: Annotated[StrictInt, Field(ge=1)] | None = None
    nan_policy: Literal["raise", "zero", "drop_series"] = "raise"
    edge_nan: Literal["policy", "unlisted"] = "policy"
    static_universe: StrictBool = False
    redistributable: StrictBool = False
    licence: Annotated[str, Field(min_length=1, max_length=120)] | None = None
    max_rows: Annotated[StrictInt, Field(ge=1)] = Field(
        DEFAULT_MAX_ROWS,
        exclude=True,  # a guard on reading the file, not part of what was computed
        description="a file of more rows is refused before it is loaded (its size read from the parquet footer "
        "or a streamed count), so a small file that unpacks into millions of rows cannot exhaust memory",
    )

    @pydantic.field_validator("path")
    @classmethod
    def _suffix(cls, value: str) -> str:
        if Path(value).suffix.lower() not in (".csv", ".parquet", ".pq"):
            raise ValueError(f"{value!r}: a user file must be .csv, .parquet or .pq")
        return value

    @pydantic.field_serializer("path", when_used="json")
    def _name_only(self, value: str) -> str:
        return Path(value).name

    def resolve(self, config_dir: Path) -> Path:
        """The file's location: ``path`` relative to the folder of the config that names it."""
        return (config_dir / self.path).resolve()


class DatasetEntry(_Strict):
    """A dataset in a benchmark: a catalogue loader (``name`` + ``options``) or a user file (``file``),
    units of analysis, optional subsample."""

    name: Annotated[str, Field(pattern=SLUG)]
    label: Annotated[str, Field(pattern=SLUG)] | None = None
    options: dict[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")], Scalar] = Field(default_factory=dict)
    file: UserFile | None = None
    units: list[Annotated[str, Field(pattern=UNIT)]] = Field(default_factory=lambda: ["series"], min_length=1)
    subsample: Annotated[int, Field(ge=1)] | None = None
    min_history: Annotated[int, Field(ge=1)] | None = None
    dial: list[Annotated[int, Field(ge=1)]] = Field(
        default_factory=list,
        description=(
            "Group counts k of the aggregation dial (size-sorted and random groups, capped by the number of "
            "series); empty: no dial. Run as extra units, apart from the leaderboard units."
        ),
    )
    sweep: list[Annotated[float, Field(ge=0)]] = Field(
        default_factory=list,
        description=("Spikiness settings of the synthetic marketplace to sweep (units total and series); empty: none."),
    )
    skip_models: SkipModels = Field(default_factory=dict, description=_SKIP_DESCRIPTION)
    analysis_models: list[Annotated[str, Field(pattern=SLUG)]] | None = Field(
        None,
        min_length=1,
        description=(
            "Models the dial's and the sweep's extra backtests refit (each setting refits them on the whole "
            "panel); the dial and sweep tables cover these only and say so. None: the dataset's whole roster. "
            "Must include the random walk and the production baseline."
        ),
    )

    @pydantic.model_validator(mode="after")
    def _check_sweep(self) -> DatasetEntry:
        if self.sweep and (self.name != "synthetic_marketplace" or self.file is not None):
            raise ValueError(f"sweep sets the synthetic marketplace's spikiness; dataset {self.name!r} has none")
        if self.analysis_models is not None and not (self.dial or self.sweep):
            raise ValueError(
                f"dataset {self.key!r}: analysis_models chooses the dial's and the sweep's models; "
                "it has neither (add dial or sweep, or remove analysis_models)"
            )
        return self

    @pydantic.model_validator(mode="after")
    def _known(self) -> DatasetEntry:
        if self.file is not None:
            if self.options:
                raise ValueError(
                    f"dataset {self.name!r}: a user file takes its settings in [datasets.file], "
                    f"not options {sorted(self.options)}"
                )
            return self
        from tycheon.data.datasets import available_datasets

        known = available_datasets()
        if self.name not in known:
            raise ValueError(
                f"unknown dataset {self.name!r}; catalogue datasets: {known}; for your own data add a "
                "[datasets.file] table (path relative to this config, column names id/time/target)"
            )
        return self

    @property
    def key(self) -> str:
        """The dataset's name in results (``label`` when given, else ``name``)."""
        return self.label or self.name


class CompetitionEntry(_Strict):
    """Score one dataset exactly as its competition did: fit on the published training part, forecast
    the published horizon once, score with the competition's metric definitions."""

    dataset: Annotated[str, Field(pattern=SLUG)]
    label: Annotated[str, Field(pattern=SLUG)] | None = None
    competition: Literal["M1", "M3", "Tourism"]
    options: dict[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")], Scalar] = Field(default_factory=dict)
    metrics: list[CompetitionMetric] = Field(min_length=1)
    subsample: Annotated[int, Field(ge=1)] | None = None
    skip_models: SkipModels = Field(default_factory=dict, description=_SKIP_DESCRIPTION)

    @property
    def key(self) -> str:
        return self.label or self.dataset


class ReplayConfig(_Strict):
    """The selection-rule replay run on every rolling dataset's per-series unit (evaluation-choices
    paper, section 7; :class:`tycheon.analysis.replay.ReplaySpec`). The floor is ``production_baseline``."""

    enabled: StrictBool = True
    metric: ScaledStepLoss = DEFAULT_STEP_LOSS
    min_fold_share: Annotated[float, Field(gt=0, le=1)] = 0.5
    bias_threshold: Annotated[float, Field(ge=0)] = 0.5
    top_k: Annotated[StrictInt, Field(ge=1)] = 3
    min_folds: Annotated[StrictInt, Field(ge=1)] = 3
    oracle: Literal["block", "series"] = "block"


class SensitivityConfig(_Strict):
    """Which rolling datasets get a protocol-sensitivity audit (:mod:`tycheon.analysis.sensitivity`):
    the roster backtested again under a static split and the intraprotocol references, per series.

    ``datasets`` None: the first synthetic dataset and the first real one of the config. ``models``
    None: every configured model. An empty ``datasets`` list turns the audit off.
    """

    datasets: list[Annotated[str, Field(pattern=SLUG)]] | None = None
    models: list[Annotated[str, Field(pattern=SLUG)]] | None = None
    metric: ScaledStepLoss = DEFAULT_STEP_LOSS
    static_gap: Annotated[StrictInt, Field(ge=0)] = 3
    boundary_shifts: list[StrictInt] = Field(default_factory=lambda: [-3, -1, 1, 3])
    # the rolling reference with an embargo of this many periods (a name kept from before issue 36, when the
    # engine had no refit calendar and this run stood in for one)
    refit_shift: Annotated[StrictInt, Field(ge=0)] = 2
    # the rolling references with a refit calendar: a refit at every k-th and every (k+1)-th origin
    refit_every: Annotated[StrictInt, Field(ge=2)] = 2
    n_resamples: Annotated[StrictInt, Field(ge=1)] = 2000


class BenchmarkConfig(_Strict):
    """A benchmark: datasets, protocol, roster and the two mandatory reference models."""

    name: Annotated[str, Field(pattern=SLUG)]
    description: str = ""
    seed: StrictInt
    horizon: Annotated[StrictInt, Field(ge=1)]
    stride: Annotated[StrictInt, Field(ge=1)]
    n_origins: Annotated[StrictInt, Field(ge=1)]
    embargo: Annotated[StrictInt, Field(ge=0)] = 0
    n_calibration_origins: Annotated[StrictInt, Field(ge=0)] = Field(
        0,
        description="unscored calibration origins before the first scored origin that calibrate every model's "
        "conformal bands from its pooled scaled residuals (0: bands from earlier scored origins only)",
    )
    min_history: Annotated[StrictInt, Field(ge=1)]
    quantile_levels: list[Annotated[float, Field(gt=0, lt=1)]] = Field(min_length=1)
    n_samples: Annotated[StrictInt, Field(ge=0)] = 0
    metrics: list[str] = Field(
        min_length=1, description="leaderboard metrics: names from tycheon.metrics.registry that rank (a loss)"
    )
    models: list[Annotated[str, Field(pattern=SLUG)]] = Field(min_length=1)
    random_walk: Annotated[str, Field(pattern=SLUG)] = "naive"
    production_baseline: Annotated[str, Field(pattern=SLUG)] = "snaive_momentum"
    alpha: Annotated[float, Field(gt=0, lt=1)] = 0.05
    verdict_adjust: Literal["bh", "holm"] = Field(
        "bh", description="multiplicity adjustment of the verdict's one-sided p-values within a table's family"
    )
    min_cell: Annotated[StrictInt, Field(ge=2)] = Field(
        30,
        description="fewest scored blocks (one series at one origin; an aggregate unit's blocks are its origins) "
        "for a table to name a winner, a ranking or a verdict (WP26 section 6; tycheon.analysis.cell)",
    )
    service_level: Annotated[float, Field(ge=0.5, le=0.975)] = Field(
        0.9,
        description="the inventory simulation's target service level: the order-up-to level is the calibrated "
        "band's quantile at it (tycheon.analysis.inventory)",
    )
    lead_time: Annotated[StrictInt, Field(ge=0, le=52)] = Field(
        0, description="the inventory simulation's lead time in periods (an order arrives this many periods later)"
    )
    review_period: Annotated[StrictInt, Field(ge=1, le=52)] = Field(
        1, description="the inventory simulation's review period in periods"
    )
    lost_sales: StrictBool = Field(
        True, description="the inventory simulation's unmet demand: lost (true) or backordered (false)"
    )
    time_budget_seconds: Annotated[float, Field(gt=0)] | None = None
    n_jobs: Annotated[StrictInt, Field(ge=1)] = 1
    backend: Literal["sequential", "joblib", "dask"] = Field(
        "sequential",
        description="where the engine's tasks run: in process, local joblib processes, or a Dask cluster (a "
        "local one sized to the machine unless `scheduler` names one); results are identical",
    )
    scheduler: str | None = Field(
        None,
        exclude=True,  # where a run computed is not part of its results (the same scores anywhere)
        description="address tcp://HOST:PORT of an existing Dask scheduler for backend = 'dask' (default: start "
        "a local cluster); `benchmarks.run --scheduler` overrides it",
    )
    datasets: list[DatasetEntry] = Field(min_length=1)
    competition: list[CompetitionEntry] = Field(default_factory=list)
    replay: ReplayConfig = Field(default_factory=ReplayConfig)
    sensitivity: SensitivityConfig = Field(default_factory=SensitivityConfig)

    @pydantic.field_validator("scheduler")
    @classmethod
    def _scheduler_address(cls, value: str | None) -> str | None:
        from benchmarks.cluster import parse_scheduler_address

        return None if value is None else parse_scheduler_address(value)

    @pydantic.model_validator(mode="after")
    def _check(self) -> BenchmarkConfig:
        if self.scheduler is not None and self.backend != "dask":
            raise ValueError(f"scheduler = {self.scheduler!r} needs backend = 'dask' (the backend is {self.backend!r})")
        if self.stride < self.horizon:
            raise ValueError(
                f"origins overlap: stride {self.stride} < horizon {self.horizon}; a benchmark requires "
                "non-overlapping origins (stride >= horizon) so that the pooled DM test is valid "
                "(ADR-0006 decision 5)"
            )
        ranked = metric_names(ranked=True)
        unknown = [m for m in self.metrics if m not in ranked]
        if unknown:
            raise ValueError(f"metrics {unknown} are not ranked leaderboard metrics; available: {list(ranked)}")
        levels = list(self.quantile_levels)
        if levels != sorted(set(levels)):
            raise ValueError(f"quantile_levels must be strictly increasing, got {levels}")
        dupes = sorted({m for m in self.models if self.models.count(m) > 1})
        if dupes:
            raise ValueError(f"models lists {dupes} more than once")
        if self.random_walk not in self.models:
            raise ValueError(
                f"the random walk is mandatory: models must include random_walk = {self.random_walk!r} "
                "(ADR-0006: every evaluation reports the random-walk baseline)"
            )
        if self.production_baseline not in self.models:
            raise ValueError(f"production_baseline {self.production_baseline!r} must be one of the models")
        keys = [d.key for d in self.datasets]
        if len(set(keys)) != len(keys):
            raise ValueError(f"dataset names/labels must be unique, got {keys}")
        unknown = sorted(set(self.sensitivity.datasets or ()) - set(keys))
        if unknown:
            raise ValueError(f"sensitivity.datasets {unknown} are not datasets of this config; datasets: {keys}")
        unknown = sorted(set(self.sensitivity.models or ()) - set(self.models))
        if unknown:
            raise ValueError(f"sensitivity.models {unknown} are not models of this config; models: {self.models}")
        entries: list[DatasetEntry | CompetitionEntry] = [*self.datasets, *self.competition]
        for entry in entries:
            unknown = sorted(set(entry.skip_models) - set(self.models))
            if unknown:
                raise ValueError(f"dataset {entry.key!r}: skip_models {unknown} are not models of this config")
            mandatory = sorted(set(entry.skip_models) & {self.random_walk, self.production_baseline})
            if mandatory:
                raise ValueError(
                    f"dataset {entry.key!r}: skip_models {mandatory}: the random walk and the production "
                    "baseline run on every dataset (ADR-0006)"
                )
        for entry in self.datasets:
            if entry.analysis_models is None:
                continue
            dupes = sorted({m for m in entry.analysis_models if entry.analysis_models.count(m) > 1})
            unknown = sorted(set(entry.analysis_models) - set(self.models))
            missing = [m for m in (self.random_walk, self.production_baseline) if m not in entry.analysis_models]
            if dupes or unknown:
                raise ValueError(
                    f"dataset {entry.key!r}: analysis_models {dupes or unknown} "
                    f"{'are listed more than once' if dupes else 'are not models of this config'}; "
                    f"models: {self.models}"
                )
            if missing:
                raise ValueError(
                    f"dataset {entry.key!r}: analysis_models must include the random walk and the production "
                    f"baseline (ADR-0006: the dial and the sweep rank the baseline); missing {missing}"
                )
            skipped = sorted(set(entry.analysis_models) & set(entry.skip_models))
            if skipped:
                raise ValueError(f"dataset {entry.key!r}: analysis_models {skipped} are in its skip_models")
        return self
