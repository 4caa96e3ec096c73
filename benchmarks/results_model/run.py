"""The run's records in a results document: provenance, protocols, datasets, model runs, the stored score
set (sidecar or parts), warnings and the metric glossary."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from benchmarks.results_model.base import Sha256, Slug, Status, Version, WarningKind, _Model, portable_paths


class Environment(_Model):
    python: str
    platform: str
    cpu_count: int | None = None
    packages: dict[str, str | None]


class HistoryEntry(_Model):
    """One earlier version of the same benchmark as a later version found it when it was written."""

    version: Version
    sha256: Sha256 = Field(description="sha256 of that version's JSON file bytes.")
    statistics_version: int = Field(ge=1, description="The statistics version that computed its tables.")


class RestatedFrom(_Model):
    """The version a restatement recomputed its tables from (:mod:`benchmarks.restat`): same score set,
    tables recomputed by the current statistics."""

    version: Version
    sha256: Sha256 = Field(description="sha256 of the restated version's JSON file bytes.")
    statistics_version: int = Field(ge=1, description="The statistics version that computed its tables.")
    git_commit: str | None = Field(description="HEAD commit of the code that restated it; null outside git.")
    git_dirty: bool | None
    code_sha256: Sha256 = Field(description="sha256 over the sources of the code that restated it.")
    table_settings: dict[str, Any] = Field(
        default_factory=dict,
        description="Table settings of the config (metrics, inventory policy) the restatement changed, "
        "setting -> [old, new], read from config_file (restat --tables-config); the score set is the same.",
    )
    config_file_sha256: Sha256 | None = Field(
        default=None, description="sha256 of the config file whose table settings the restatement applied."
    )
    carried_over: list[str] = Field(
        default_factory=list,
        description="Tables copied from the restated version unchanged, each with why (they need backtests "
        "that the score set does not hold: the aggregation dial's own units, the spikiness sweep's other "
        "settings, the protocol-sensitivity audit).",
    )


class Provenance(_Model):
    tycheon_version: str
    git_commit: str | None = Field(description="HEAD commit, null outside a git checkout.")
    git_dirty: bool | None
    config_sha256: Sha256 = Field(description="sha256 of the benchmark config file bytes.")
    model_configs_sha256: dict[str, Sha256] = Field(default_factory=dict)
    manifest_sha256: Sha256 | None = Field(description="sha256 of the dataset manifest; null if absent.")
    code_sha256: Sha256 = Field(
        description="sha256 over the tycheon package sources and the harness; part of the cache key."
    )
    environment: Environment
    seeds: dict[str, int]
    cache: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Informational: which (dataset, protocol, model) work came from the cache. Excluded from the "
            "determinism comparison along with timings."
        ),
    )
    timings: dict[str, float | str | None] = Field(
        description="Wall-clock facts; excluded from the determinism comparison."
    )
    statistics_version: int | None = Field(
        default=None,
        ge=1,
        description="The statistics version (tycheon._version.STATISTICS_VERSION) that computed the tables; "
        "absent in files written before schema 1.7.0, which version 1 computed.",
    )
    tables_sha256: Sha256 | None = Field(
        default=None,
        description="sha256 of the canonical JSON of the published tables (leaderboards, intervals, competition, "
        "analyses, replay, sensitivity; benchmarks.history.tables_sha256).",
    )
    history: list[HistoryEntry] = Field(
        default_factory=list,
        description="Every earlier version of the same benchmark when this one was written, oldest first, with "
        "the sha256 of its file: a version computed by an older statistics version is verified by these "
        "hashes instead of being recomputed. Excluded from the determinism comparison (it says where the "
        "version sits, as its version number does).",
    )
    restated_from: RestatedFrom | None = Field(
        default=None,
        description="Set when this version restates an earlier one: the same score set, its tables recomputed "
        "by the current statistics (python -m benchmarks.restat).",
    )


class Protocol(_Model):
    id: Slug = Field(description="Referenced by every table entry (e.g. rolling_origin, competition).")
    kind: Literal["rolling_origin", "competition"]
    horizon: int = Field(ge=1)
    stride: int | None = Field(default=None, ge=1)
    n_origins: int | None = Field(default=None, ge=1)
    embargo: int | None = Field(default=None, ge=0)
    min_history: int | None = Field(default=None, ge=1)
    origins: dict[str, list[str]] = Field(default_factory=dict, description="Origin dates per dataset (ISO).")
    quantile_levels: list[Annotated[float, Field(gt=0, lt=1)]] = Field(default_factory=list)
    n_calibration_origins: int | None = Field(
        default=None,
        ge=0,
        description=(
            "Unscored calibration origins (stride 1, before the first scored origin) whose scaled residuals, "
            "pooled per (model, unit, step), calibrate every model's conformal bands (WP26 section 3.6)."
        ),
    )
    description: str


class EngineFacts(_Model):
    """Engine facts for one dataset, summed over the models that ran; empty when none ran."""

    abstained: dict[str, dict[str, dict[str, int]]] = Field(
        default_factory=dict, description="Blocks the engine abstained on: unit -> origin -> reason -> count."
    )
    guard_checks: dict[str, int] = Field(
        default_factory=dict, description="Look-ahead guard checks passed, by guard point."
    )
    overlap_lag: int | None = Field(default=None, ge=0)


class DatasetInfo(_Model):
    name: str
    content_hash: Sha256
    description: str
    options: dict[str, Any] = Field(default_factory=dict)
    n_series: int = Field(ge=1)
    n_series_total: int | None = Field(
        default=None, description="Series in the source before any documented subsample."
    )
    freq: str
    season_length: int = Field(ge=1)
    start: str | None = None
    end: str | None = None
    synthetic: bool
    redistributable: bool
    warnings: list[str] = Field(description="The dataset's warning messages (typed in the top-level list).")
    units: list[str]
    engine: EngineFacts = Field(
        default_factory=EngineFacts,
        description=("Engine facts for this dataset: guard_checks, abstained counts, overlap lag."),
    )


class ModelRun(_Model):
    dataset: str
    protocol: Slug
    status: Status
    reason: str | None
    traceback: str | None = Field(description="Short traceback (last frames) for failures.")
    support: int = Field(ge=0, description="Blocks (series x origin, all units) scored.")
    timings: dict[str, float | None] = Field(
        description="The cost record (fit_seconds, predict_seconds); excluded from the determinism comparison."
    )

    @field_validator("traceback", mode="after")
    @classmethod
    def _portable(cls, value: str | None) -> str | None:
        return None if value is None else portable_paths(value)

    failed_units: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Units of analysis a model that ran failed on (unit -> reason): those units have no rows of it, "
            "its other units are scored."
        ),
    )
    isolation: dict[str, str] | None = Field(
        default=None,
        description=(
            "For a model run in an isolated process: each layer that kept it in (seccomp, landlock, nproc) and "
            "what it had in place on that machine; a machine fact, left out of run comparisons like timings."
        ),
    )


class ModelSource(_Model):
    kind: Literal["tycheon", "sktime"]
    forecaster: str | None = None
    estimator: str | None = None


class ModelEntry(_Model):
    id: Slug
    display_name: str = Field(max_length=80)
    family: str
    source: ModelSource
    params: dict[str, Any]
    tags: list[str]
    licence: str
    contributor: str
    config_sha256: Sha256
    roles: list[Literal["random_walk", "production_baseline", "scale_reference"]]
    runs: list[ModelRun]


class Sidecar(_Model):
    path: str = Field(
        description="Where the sidecar is stored, relative to the results JSON's folder: "
        "sidecars/<sha256>.parquet, one file per content hash shared by every version with equal scores "
        "(written before that store: vNNNN-<sha256>.parquet beside the JSON). Readers find it by sha256."
    )
    sha256: Sha256
    format: Literal["parquet"]
    n_rows: int = Field(ge=0)
    columns: list[str] = Field(default_factory=list)


class ScorePart(_Model):
    """One stored part of a score set (:mod:`benchmarks.score_parts`)."""

    sha256: Sha256 = Field(description="sha256 of the part's bytes; the file is parts/<sha256>.parquet.")
    bytes: int = Field(ge=0)
    rows: int = Field(ge=0)
    kind: Literal["facts", "actuals", "bands", "model"]
    dataset: str
    protocol: str
    model: str | None = None
    url: str | None = Field(
        default=None,
        description="Where the part can be fetched when it is not stored beside the results (a large study's "
        "parts kept outside git); the sha256 is checked after the download.",
    )
    private: Literal[True] | None = Field(
        default=None,
        description="The part belongs to a dataset that is not redistributable: it is kept in private-parts/ "
        "on the machine that ran it, never committed or published (absent: a public part in parts/).",
    )


class ScoreParts(_Model):
    """The score set of a version as parts, in table order."""

    format: Literal["tycheon-parts/1"]
    columns: list[str]
    dtypes: dict[str, str]
    n_rows: int = Field(ge=0)
    parts: list[ScorePart]

    def to_json(self) -> dict[str, Any]:
        """The block as written in a results file or a migration manifest (unset URLs left out)."""
        return self.model_dump(mode="json", exclude_none=True)

    @classmethod
    def from_json(cls, block: Any) -> ScoreParts:
        """The block read back (raises ``pydantic.ValidationError``, a ``ValueError``, when it is not one)."""
        return cls.model_validate(block)

    def chunks(self) -> list[tuple[str, str]]:
        """The (dataset, protocol) pairs in table order."""
        return list(dict.fromkeys((p.dataset, p.protocol) for p in self.parts))

    def total_bytes(self) -> int:
        return sum(p.bytes for p in self.parts)


class RunWarning(_Model):
    dataset: str | None
    kind: WarningKind
    message: str


class MetricGlossaryEntry(_Model):
    """One metric as the library's registry declares it (``tycheon.metrics.registry.glossary()``)."""

    name: str = Field(description='Registry key, as written in configs and tables ("mase").')
    display_name: str = Field(description='As printed on pages ("MASE").')
    kind: Literal["point", "interval", "probabilistic"]
    lower_is_better: bool = Field(description="Direction of a loss; false for a statistic that is not one.")
    ranked: bool = Field(description="Whether a leaderboard ranks models on it.")
    scale_column: str | None = Field(description="The score-set scale column that divides it, if any.")
    definition: str = Field(description="One line: formula and plain meaning.")
    elicits: str | None = Field(
        default=None, description="The functional of the predictive distribution the metric is consistent for."
    )
    rank_by: str | None = Field(default=None, description="How a table of it ranks: gmean_rel_rw, pooled, abs_mean.")
