"""The results document as typed models: the one definition that writes, validates and reads results.

The pipeline builds a :class:`ResultsBody` from these models, :func:`benchmarks.results_io.write_results`
adds the version and sidecar block to make a :class:`ResultsDocument`, and ``validate``, ``render`` and
``submit`` read files back through :func:`parse_document`. The published JSON Schema
(``benchmarks/schema/results-v1.schema.json``) is generated from these models by
``python -m benchmarks.schema``; a test fails when the committed file is stale.

Every model forbids unknown fields and is strict about types (no string-to-number coercion), as the
hand-written schema of results version 1 was. Fields that version 1 made optional have defaults, and
writing drops the fields that were never set (``exclude_unset``), so files written before these models
existed (v0001-v0004) validate, and a field added here later is one edit: declare it with a default.

Leaderboard tables are identified by :class:`TableKey`, a named (dataset, protocol, unit, demand class,
metric) tuple, never by position.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError, field_validator, model_validator

__all__ = [
    "SCHEMA_VERSION",
    "AcrossTable",
    "Analyses",
    "ClassWinnersTable",
    "DialTable",
    "HorizonTable",
    "InversionTable",
    "SweepTable",
    "UncertaintyTable",
    "CompetitionRow",
    "CompetitionTable",
    "DatasetInfo",
    "DemandClass",
    "EngineFacts",
    "HistoryEntry",
    "IntervalRow",
    "IntervalTable",
    "Leaderboard",
    "LeaderboardRow",
    "LeaderboardTests",
    "ModelEntry",
    "ModelRun",
    "Protocol",
    "Provenance",
    "ResultsBody",
    "ResultsDocument",
    "ScorePart",
    "ScoreParts",
    "Sidecar",
    "TableKey",
    "ReplayChoice",
    "RestatedFrom",
    "ReplayRow",
    "ReplayRule",
    "ReplayTable",
    "RunWarning",
    "SensitivityAttribution",
    "SensitivityComparison",
    "SensitivityRank",
    "SensitivityRun",
    "SensitivityTable",
    "SensitivityTost",
    "WarningKind",
    "document_problems",
    "json_schema",
    "parse_document",
]

SCHEMA_VERSION = "1.9.0"
"""1.9.0: a score part of a dataset that is not redistributable is marked ``private`` and kept out of
``parts/`` (issue 38).
1.8.0: decision metrics (issue 35): leaderboard rows carry the geometric-mean error relative to the random
walk and its skill with a panel-robust interval, the rank by the table's ranking rule (``tests.ranking``)
beside ``rank_mean``, the pooled WAPE, the zero-forecast share and flag; tests carry the runner-up test and
the winner without the largest 1% of blocks; interval tables carry the cell's inventory simulation; the
metric glossary says what each metric elicits. 1.7.0: the provenance records the statistics version that
computed the tables
(``provenance.statistics_version``; absent: version 1), the content hash of those tables
(``provenance.tables_sha256``), the sha256 of every earlier version's file (``provenance.history``, a hash
chain: :mod:`benchmarks.history`) and, for a restatement (:mod:`benchmarks.restat`), the version it
restates (``provenance.restated_from``). 1.6.0: the score set is stored as content-addressed parts
(``scores``, :mod:`benchmarks.score_parts`) instead of one parquet sidecar; versions written before keep
their ``sidecar`` block, and a migrated sidecar is read from the parts its manifest lists. 1.5.0: the
sidecar is a score set of contract 2.0.0 (:data:`tycheon.contract.SCORESET_SCHEMA`: categorical,
dictionary-encoded text columns, int16 ``step`` / ``season_length``, the version in its parquet metadata);
readers accept the 1.x sidecars of earlier versions."""

Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_\-]{0,63}$")]
Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
Num = float | None
Prob = Annotated[float, Field(ge=0, le=1)] | None
Status = Literal["ran", "skipped", "failed"]
DemandClass = Literal["all", "smooth", "erratic", "intermittent", "lumpy", "undefined"]
Direction = Literal["better", "worse", "none"]
Verdict = Literal["beats", "indistinguishable", "worse"]
WarningKind = Literal["synthetic", "not_redistributable", "survivorship", "subsample", "model", "other"]
"""What a warning is about: the data's origin (``synthetic``), its licence (``not_redistributable``), a
survivorship bias, a documented subsample, a model that did not run (``model``), or anything else."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class TableKey(NamedTuple):
    """What identifies a leaderboard within a results version."""

    dataset: str
    protocol: str
    unit: str
    demand_class: str
    metric: str


class Environment(_Model):
    python: str
    platform: str
    cpu_count: int | None = None
    packages: dict[str, str | None]


Version = Annotated[str, StringConstraints(pattern=r"^v[0-9]{4}$")]


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


# An absolute path in a traceback names the machine that ran it (e.g. /work/fullrun/tycheon/...): a published
# document keeps the part a reader can find, the path inside the repository or inside an installed package.
_REPO_PATH = re.compile(r"(?:/[^\s\"'/]+)+?/((?:tycheon|benchmarks|tests)/[^\s\"']+\.py)")
_PACKAGE_PATH = re.compile(r"(?:/[^\s\"'/]+)+/(site-packages|dist-packages)/")
_STDLIB_PATH = re.compile(r"(?:/[^\s\"'/]+)+/lib/(python3\.\d+)/")


def portable_paths(text: str) -> str:
    """``text`` with absolute file paths made machine-free: a repository file as its path from the
    repository root (``tycheon/backtest/tasks.py``), an installed package's as ``<site-packages>/...``, the
    standard library's as ``<python3.X>/...``."""
    text = _PACKAGE_PATH.sub(lambda m: f"<{m.group(1)}>/", text)
    text = _STDLIB_PATH.sub(lambda m: f"<{m.group(1)}>/", text)
    return _REPO_PATH.sub(lambda m: m.group(1), text)


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


class LeaderboardRow(_Model):
    rank: int = Field(
        ge=1,
        description=(
            "Position by the table's ranking rule (tests.ranking; ties share the lower rank): the geometric mean "
            "relative error to the random walk from results schema 1.8.0, the mean before."
        ),
    )
    model: Slug
    display_name: str
    mean: Num
    median: Num
    mean_rank: Num = Field(description="Friedman mean rank over complete blocks (1 = best).")
    beats_baseline_blocks: int | None = Field(
        ge=0,
        description=(
            "Blocks where this model's metric is below the production baseline's; null for the baseline itself."
        ),
    )
    dm_stat: Num
    dm_p: Prob = Field(
        description=("Two-sided DM (HLN, overlap-corrected) p vs the production baseline on pooled per-step losses.")
    )
    dm_p_bh: Prob = Field(description="Benjamini-Hochberg adjusted within this table's family.")
    dm_direction: Direction | None = Field(
        description=("Sign of the DM statistic when dm_p_bh < 0.05, else none; null for the baseline.")
    )
    verdict_vs_rw: Verdict | None = Field(
        description=(
            "ADR-0006 decision 6 (both one-sided tests, squared error and CRPS, vs naive); null for the random "
            "walk itself or when not computable."
        )
    )
    dm_reason: str | None = Field(
        default=None,
        description=(
            "Why dm_stat/dm_p are null (the refusing test's message, or 'is the production baseline'); null "
            "when computed."
        ),
    )
    verdict_p_se: Prob = Field(
        default=None,
        description=(
            "One-sided pooled DM p (challenger's squared error lower than the random walk's) behind the verdict."
        ),
    )
    verdict_p_crps: Prob = Field(
        default=None,
        description=("One-sided pooled DM p on CRPS (own quantiles, else conformal 80% band) behind the verdict."),
    )
    verdict_reason: str | None = Field(
        default=None,
        description=(
            "Why verdict_vs_rw is null (e.g. no CRPS of one kind for both models, too few blocks); null when computed."
        ),
    )
    dm_unscaled_p: Prob = Field(
        default=None,
        description=("The paper's variant of dm_p: two-sided pooled DM on unscaled per-step absolute errors."),
    )
    dm_unscaled_p_bh: Prob = Field(default=None, description="dm_unscaled_p, BH-adjusted within the family.")
    dm_unscaled_direction: Direction | None = Field(default=None, description=("dm_direction of the unscaled variant."))
    verdict_p_se_adj: Prob = Field(
        default=None, description=("verdict_p_se adjusted within the table's family (tests.verdict_adjust).")
    )
    verdict_p_crps_adj: Prob = Field(
        default=None, description=("verdict_p_crps adjusted within the table's family (tests.verdict_adjust).")
    )
    verdict_vs_rw_unscaled: Verdict | None = Field(
        default=None, description=("The verdict rule on unscaled losses (the paper's variant).")
    )
    verdict_p_se_unscaled: Prob = None
    verdict_p_crps_unscaled: Prob = None
    verdict_p_se_adj_unscaled: Prob = None
    verdict_p_crps_adj_unscaled: Prob = None
    verdict_reason_unscaled: str | None = Field(
        default=None, description=("Why verdict_vs_rw_unscaled is null; null when computed.")
    )
    dm_pooled_p: Prob = Field(
        default=None,
        description="The series-independent variant of dm_p (stats.dm.dm_pooled): assumes series independent.",
    )
    dm_pooled_p_bh: Prob = Field(default=None, description="dm_pooled_p, BH-adjusted within the family.")
    dm_pooled_direction: Direction | None = Field(default=None, description="dm_direction of the pooled variant.")
    verdict_vs_rw_pooled: Verdict | None = Field(
        default=None,
        description="The verdict rule on series-independent pooled DM tests (a named variant, never the headline).",
    )
    verdict_p_se_pooled: Prob = None
    verdict_p_crps_pooled: Prob = None
    verdict_p_se_adj_pooled: Prob = None
    verdict_p_crps_adj_pooled: Prob = None
    verdict_reason_pooled: str | None = Field(
        default=None, description="Why verdict_vs_rw_pooled is null; null when computed."
    )
    support: int = Field(ge=0, description="Blocks scored by this model in this table.")
    full_support: bool = Field(
        description=("False: fewer blocks than the most-supported model (the site shows a dagger).")
    )
    is_baseline: bool
    is_random_walk: bool
    rank_mean: int | None = Field(default=None, ge=1, description="Position by the arithmetic mean over blocks.")
    pooled: Num = Field(default=None, description="WAPE pooled over the cell: sum |e| / sum |y| (WAPE tables only).")
    gmean_rel_rw: Num = Field(
        default=None, description="Geometric mean over blocks of the error relative to the random walk's (clipped)."
    )
    skill_rw: Num = Field(default=None, description="1 - gmean_rel_rw: the share better than the random walk.")
    skill_rw_low: Num = Field(default=None, description="Lower end of skill_rw's 95% panel-robust interval.")
    skill_rw_high: Num = Field(default=None, description="Upper end of skill_rw's 95% panel-robust interval.")
    skill_rw_reason: str | None = Field(default=None, description="Why skill_rw has no interval; null when it has.")
    skill_rw_blocks: int | None = Field(default=None, ge=0, description="Blocks compared with the random walk.")
    skill_rw_clipped: int | None = Field(default=None, ge=0, description="Blocks whose relative error was clipped.")
    zero_forecast_share: Num = Field(
        default=None, description="Share of steps of series with positive demand whose point forecast is 0."
    )
    zero_forecast_flag: bool | None = Field(default=None, description="Mostly zero forecasts (share >= 50%).")


class LeaderboardTests(_Model):
    friedman_statistic: Num
    friedman_p: Prob
    nemenyi_cd: Num
    conservative_cd: Num = Field(description="CD on one origin per series (independent blocks).")
    n_blocks: int = Field(ge=0, description="Complete blocks the Friedman test ran on.")
    dropped_blocks: int = Field(ge=0, description="Blocks dropped because some model did not score them.")
    n_models: int = Field(ge=0)
    alpha: float
    dm_loss: str | None = Field(default=None, description="Per-step loss pooled by the DM test (e.g. absolute error).")
    dm_family_size: int | None = Field(default=None, ge=0)
    dm_overlap_lag: int | None = Field(default=None, ge=0)
    friedman_reason: str | None = Field(
        default=None, description=("Why the Friedman/Nemenyi values are null; null when computed.")
    )
    conservative_cd_reason: str | None = Field(
        default=None, description=("Why conservative_cd is null; null when computed.")
    )
    dm_unscaled_loss: str | None = Field(default=None, description="Per-step loss of the dm_unscaled_* columns.")
    verdict_point_loss: str | None = Field(default=None, description="Per-step point loss of the verdict's DM leg.")
    verdict_adjust: Literal["bh", "holm", "none"] | None = Field(
        default=None, description=("Multiplicity adjustment of the verdict p-values within the table's family.")
    )
    crps_kind: str | None = Field(
        default=None,
        description=(
            "CRPS kind of the table (one kind for every model): conformal_band_quantiles or approx_quantiles."
        ),
    )
    crps_levels: list[float] | None = Field(default=None, description="Quantile levels of that CRPS.")
    verdict_crps_kind: str | None = Field(default=None, description="CRPS kind of the verdict's CRPS leg.")
    verdict_crps_levels: list[float] | None = Field(default=None, description="Quantile levels of that CRPS.")
    verdict_crps_scale: str | None = Field(
        default=None, description=("Score-set column that scales the verdict's CRPS (scale_mae: the MASE scale).")
    )
    n_zero_scale_blocks: int | None = Field(
        default=None, ge=0, description=("Blocks left out because their scale is zero.")
    )
    inference: str | None = Field(
        default=None, description="The test behind the verdict and the DM column, and what it assumes independent."
    )
    inference_pooled: str | None = Field(
        default=None, description="The series-independent variant's test (the *_pooled fields) and its assumption."
    )
    n_time_points: int | None = Field(
        default=None, ge=0, description="Scored origins of the (unit, demand class): the robust tests' time points."
    )
    min_time_points: int | None = Field(default=None, ge=0, description="Fewest origins a test over time is run on.")
    time_reason: str | None = Field(
        default=None, description="Why no test over time is run (too few origins); null when they are."
    )
    verdict_cell_count: int | None = Field(
        default=None, ge=0, description="Scored blocks of the (unit, demand class): the verdict's minimum cell count."
    )
    cell_ok: bool | None = Field(
        default=None,
        description=("Whether the table reaches the minimum cell (WP26 section 6); if not, no winner, DM or verdict."),
    )
    cell_count: int | None = Field(default=None, ge=0, description="What the minimum cell counts, counted.")
    cell_counts: str | None = Field(
        default=None, description=("What the minimum cell counts: scored blocks or scored per-step losses.")
    )
    min_cell: int | None = Field(default=None, ge=0, description="The minimum cell (WP26 section 6).")
    cell_reason: str | None = Field(default=None, description="Why the table is below the minimum cell; null if not.")
    ranking: str | None = Field(
        default=None, description="The ranking rule of the rank column: gmean_rel_rw, pooled, abs_mean or mean."
    )
    ranking_text: str | None = Field(default=None, description="Why the table ranks so, as the page states it.")
    relative_text: str | None = Field(
        default=None, description="How gmean_rel_rw, skill_rw and its interval are formed."
    )
    elicits: str | None = Field(default=None, description="The functional the table's metric is consistent for.")
    zero_forecast_text: str | None = Field(default=None, description="What the zero-forecast flag counts.")
    runner_up: Slug | None = Field(default=None, description="The model ranked second when a winner is named.")
    runner_up_p: Prob = Field(
        default=None, description="Two-sided panel-robust DM p of the winner against the runner-up (one test)."
    )
    runner_up_tied: bool | None = Field(default=None, description="runner_up_p >= alpha: the two are not told apart.")
    runner_up_lower_loss: Slug | None = Field(
        default=None, description="Where the two are told apart, the one of them with the lower mean loss."
    )
    runner_up_reason: str | None = Field(default=None, description="Why runner_up_p is null.")
    trim_share: float | None = Field(default=None, description="Share of largest blocks removed for winner_trimmed.")
    trimmed_blocks: int | None = Field(default=None, ge=0, description="Blocks removed for winner_trimmed.")
    winner_trimmed: Slug | None = Field(
        default=None, description="The winner by the same rule without the largest trim_share of blocks."
    )
    winner_trimmed_differs: bool | None = Field(
        default=None, description="Whether a few blocks decide the winner (winner_trimmed differs)."
    )


def _without_nulls(model: type[BaseModel], data: Any) -> Any:
    """``data`` without the null values of ``model``'s optional fields (they default to null)."""
    if not isinstance(data, dict):
        return data
    optional = {k for k, f in model.model_fields.items() if not f.is_required()}
    return {k: v for k, v in data.items() if not (v is None and k in optional)}


class Leaderboard(_Model):
    dataset: str
    protocol: Slug
    unit: str = Field(description="series, total, level:<attr>, groups:<k>, groups_random:<k>.")
    demand_class: DemandClass
    metric: str = Field(description="Ranking metric (mase, rmsse, wape, crps...), lower is better.")
    baseline: Slug = Field(description="Production baseline for the beats / DM columns.")
    random_walk: Slug
    n_blocks_total: int = Field(ge=0)
    winner: Slug | None = Field(
        default=None,
        description=("The model ranked first when the table reaches the minimum cell and its metric ranks; else null."),
    )
    rows: list[LeaderboardRow]
    tests: LeaderboardTests

    @property
    def key(self) -> TableKey:
        return TableKey(self.dataset, self.protocol, self.unit, self.demand_class, self.metric)

    @classmethod
    def from_table(cls, table: dict[str, Any]) -> Leaderboard:
        """A leaderboard from a table as :func:`tycheon.analysis.leaderboard.leaderboard_tables` gives it (JSON
        values), its rows' and tests' optional fields that are null left unset, so a version does not write
        them (the writer writes the fields that were set; a reader gives them their default, null). A table
        of ten metrics wrote mostly nulls: full v0003 was 39 MB with them."""
        rows = [_without_nulls(LeaderboardRow, r) for r in table.get("rows", [])]
        tests = _without_nulls(LeaderboardTests, table.get("tests", {}))
        return cls.model_validate({**table, "rows": rows, "tests": tests})


class IntervalRow(_Model):
    model: Slug
    n_records: int = Field(ge=0)
    coverage80: Prob
    coverage95: Prob
    msis80: Num
    msis95: Num
    rank_point: int | None = None
    rank_interval: int | None = None


class InventoryRow(_Model):
    model: Slug
    fill_rate: Prob = Field(description="Mean over series with demand of the share of demand met from stock.")
    cycle_service_level: Prob = Field(description="Mean over series of the share of review cycles without a stockout.")
    avg_stock: Num = Field(description="Mean over series of average on-hand stock / average demand (periods held).")
    lost_share: Num = Field(description="Mean over series of unmet units / demand.")
    stock_needed: Num = Field(description="avg_stock at the smallest level shift reaching the target fill rate.")
    k_needed: Num = Field(description="That shift, in units of each series' mean demand.")
    stock_needed_reason: str | None = Field(default=None, description="Why stock_needed is null.")
    rank: int | None = Field(default=None, ge=1, description="Position by stock_needed (1 = least stock).")


class InventoryTable(_Model):
    """The inventory outcome of one cell (tycheon.analysis.inventory.inventory_table)."""

    rows: list[InventoryRow]
    random_walk: Slug
    random_walk_row: InventoryRow
    winner: Slug | None = None
    target: float = Field(description="Target service level: the band quantile of the levels and the fill target.")
    lead_time: int = Field(ge=0)
    review_period: int = Field(ge=1)
    protection_periods: int = Field(ge=1)
    policy: Literal["lost sales", "backorders"]
    policy_text: str
    n_models: int = Field(ge=0)
    n_series: int = Field(ge=0)
    n_periods: int = Field(ge=0)
    n_series_periods: int = Field(ge=0)
    n_blocks: int = Field(ge=0)
    shift_bracket: list[float]
    cell_ok: bool | None = None
    cell_count: int | None = Field(default=None, ge=0)
    cell_counts: str | None = None
    min_cell: int | None = Field(default=None, ge=0)
    cell_reason: str | None = None


class IntervalTable(_Model):
    dataset: str
    protocol: Slug
    unit: str
    demand_class: DemandClass
    band: Literal["conformal"] = Field(
        description=("Split-conformal bands built by the engine on each model's own point errors.")
    )
    interval_metric: Literal["msis95", "msis80"] | None = Field(
        default=None, description=("The MSIS level the interval ranking uses: the widest band every ranked model has.")
    )
    point_vs_interval_spearman: Num = None
    point_vs_interval_p: Prob = None
    max_move: int | None = None
    cell_ok: bool | None = Field(
        default=None, description="Whether the cell reaches the minimum cell; if not, no ranking is named."
    )
    cell_count: int | None = Field(default=None, ge=0, description="Scored blocks of the cell.")
    cell_counts: str | None = Field(default=None, description="What the minimum cell counts.")
    min_cell: int | None = Field(default=None, ge=0, description="The minimum cell (WP26 section 6).")
    cell_reason: str | None = Field(default=None, description="Why no ranking is named; null when one is.")
    rows: list[IntervalRow]
    inventory: InventoryTable | None = Field(
        default=None, description="The cell's inventory simulation on the calibrated bands (schema 1.8.0)."
    )
    inventory_reason: str | None = Field(default=None, description="Why inventory is null.")


class CompetitionRow(_Model):
    rank: int | None = Field(ge=1)
    model: Slug
    display_name: str
    value: Num
    n_series: int = Field(ge=0)
    status: Status


class CompetitionTable(_Model):
    dataset: str
    protocol: Slug
    competition: str = Field(description="M1, M3 or Tourism.")
    horizon: int = Field(ge=1)
    metric: str = Field(description="smape (M3), mape or mase (Tourism), ...")
    metric_definition: str
    reference: str | None = Field(default=None, description="Published table this can be held against.")
    rows: list[CompetitionRow]


class InversionColumnRow(_Model):
    """One unit read as a column of the evaluation-choices paper's Table 1 (ranks: 1 = best)."""

    unit: str
    n_series: int = Field(ge=0)
    n_origins: int = Field(ge=0)
    n_models: int = Field(ge=0)
    n_blocks: int = Field(ge=0)
    baseline_rank: dict[str, int | None] = Field(description="Metric -> the production baseline's rank by mean.")
    random_walk_rank: dict[str, int | None]
    n_better: int = Field(ge=0, description="Models significantly better than the baseline (pooled DM, BH).")
    n_worse: int = Field(ge=0)
    n_tested: int = Field(ge=0)
    n_pooled_losses: int = Field(ge=0, description="Per-step losses of the baseline pooled by the DM tests.")
    shared_baseline_rank: dict[str, int | None] = Field(description="Rank on the shared roster and origins.")
    shared_n_models: int = Field(ge=0)
    shared_n_origins: int = Field(ge=0)
    weighted_baseline_rank: dict[str, int | None] = Field(description="Rank on volume-weighted block means.")
    cross_sectional_better: int = Field(ge=0, description="Significantly better by the cross-sectional DM.")
    cross_sectional_worse: int = Field(ge=0)
    cross_sectional_tested: int = Field(ge=0)
    n_periods: int = Field(ge=0)


class InversionTable(_Model):
    """Unit-of-analysis inversion of one dataset (tycheon.analysis.inversion; paper Table 1)."""

    dataset: str
    protocol: Slug
    baseline: Slug
    random_walk: Slug
    metrics: list[str]
    inverted: bool | None = Field(
        description=("Baseline in the top two at the most aggregated unit and bottom three per series (first metric).")
    )
    columns: list[InversionColumnRow]


class DialPointRow(_Model):
    unit: str
    k: int = Field(ge=1)
    series_per_group: float
    n_blocks: int = Field(ge=0)
    n_models: int = Field(ge=0)
    baseline_rank: dict[str, int | None] = Field(description="Convention -> rank (median_wape, mean_rmsse, friedman).")
    smooth_share: Num


class DialCurveRow(_Model):
    kind: Literal["size", "random", "hierarchy"]
    points: list[DialPointRow]
    spearman_log_k: dict[str, Num] = Field(description="Convention -> Spearman of rank vs log k (null: flat).")
    never_improves: dict[str, bool]
    max_rank_change: dict[str, int]


class DialTable(_Model):
    """The aggregation dial of one dataset (tycheon.analysis.dial; paper Table 3, Figure 1)."""

    dataset: str
    protocol: Slug
    baseline: Slug
    n_series: int = Field(ge=1)
    curves: list[DialCurveRow]
    models: list[Slug] | None = Field(
        None, description="The models the dial covers where the config restricts it (analysis_models); absent: all."
    )


class ClassLeaderRow(_Model):
    model: Slug
    value: Num


class ClassWinnerRow(_Model):
    demand_class: DemandClass
    n_blocks: int = Field(ge=0)
    top: list[ClassLeaderRow]
    baseline_rank: int | None
    baseline_value: Num
    n_models: int = Field(ge=0)
    cell_ok: bool | None = Field(
        default=None,
        description="Whether the class reaches the minimum cell (WP26 section 6); if not, top is empty and no "
        "leader or baseline rank is named. Null: written before the rule.",
    )
    cell_count: int | None = Field(default=None, ge=0, description="Scored blocks of the class (what the cell counts).")
    cell_reason: str | None = Field(default=None, description="Why the class names no leader; null if it does.")


class ClassWinnersTable(_Model):
    """Winner per demand class (tycheon.analysis.class_winners; paper Table 4)."""

    dataset: str
    protocol: Slug
    unit: str
    metric: str
    baseline: Slug
    pooled_winner: Slug | None = Field(description="Best mean over every block; null below the minimum cell.")
    pooled_value: Num
    pooled_winner_leads: int = Field(ge=0, description="Classes passing the minimum cell that it leads.")
    n_classes: int = Field(
        ge=0,
        description="Named classes that pass the minimum cell and name a leader (tables without cell_ok: all present).",
    )
    distinct_winners: int = Field(ge=0)
    rows: list[ClassWinnerRow]
    class_counts: dict[str, int]
    adi_cutoff: float
    cv2_cutoff: float
    cell_ok: bool | None = Field(default=None, description="Whether the pooled cell reaches the minimum cell.")
    cell_count: int | None = Field(default=None, ge=0, description="Scored blocks of the pooled cell.")
    cell_counts: str | None = Field(default=None, description="What the minimum cell counts (the counting unit).")
    min_cell: int | None = Field(default=None, ge=0, description="The minimum cell (WP26 section 6).")
    cell_reason: str | None = Field(default=None, description="Why no pooled winner is named; null if it is.")


class UncertaintyRow(_Model):
    model: Slug
    mean: Num
    mean_low: Num
    mean_high: Num
    delta: Num = Field(description="Mean difference to the baseline on the blocks both scored; null for it.")
    delta_low: Num
    delta_high: Num
    delta_p: Prob
    rank: int | None
    keep_fraction: Prob = Field(
        description="Share of resamples (the table's resample design) in which the model keeps its place."
    )
    rank_low: int | None
    rank_high: int | None
    dm_p: Prob = Field(description="DM p-value against the baseline (the table's dm_test; absent: pooled).")
    dm_p_bh: Prob
    dm_p_holm: Prob
    mcs_p: Prob
    in_mcs: bool | None


class UncertaintyTable(_Model):
    """Bootstrap CIs, ranking stability, Holm beside BH and the model confidence set of one leaderboard
    (tycheon.analysis.uncertainty; WP26 section 4.1). Files written before ``dm_test`` was recorded used
    (series, origin) blocks drawn independently, the pooled DM on absolute errors and an MCS on scaled
    absolute (squared for rmsse) errors."""

    dataset: str
    protocol: Slug
    unit: str
    demand_class: DemandClass = "all"
    metric: str
    baseline: Slug
    resample: Literal["block", "series", "origin"] = Field(
        description="origin: circular blocks of ceil(h/stride) origins, each with every series (panel bootstrap); "
        "series / block: whole series or (series, origin) blocks drawn independently (assume series independent)."
    )
    n_resamples: int = Field(ge=1)
    confidence: float
    n_blocks: int = Field(ge=0)
    n_complete_blocks: int = Field(ge=0)
    mcs_size: float
    mcs_n_periods: int = Field(ge=0)
    mcs_reason: str | None
    loss: str | None = Field(
        default=None, description="Registry metric whose per-step loss the DM family and the MCS compare."
    )
    n_origins: int | None = Field(default=None, ge=0, description="Origins with a scored block.")
    block_length: int | None = Field(
        default=None, ge=1, description="Consecutive origins per resampled run (origin); 1 for series / block."
    )
    interval_reason: str | None = Field(
        default=None, description="Why there is no interval, bootstrap p or rank interval (too few origins)."
    )
    dm_test: Literal["panel", "pooled"] | None = Field(
        default=None, description="DM test of the family: panel (over origins; nothing assumed across series)."
    )
    dm_reason: str | None = Field(default=None, description="Why no DM test was run (too few origins).")
    rows: list[UncertaintyRow]


class HorizonTable(_Model):
    """Ranks per horizon step and short vs long agreement (tycheon.analysis.horizon)."""

    dataset: str
    protocol: Slug
    unit: str
    metric: str
    steps: list[int]
    rank_by_step: dict[str, list[int]]
    short_steps: list[int]
    long_steps: list[int]
    rank_short: dict[str, int]
    rank_long: dict[str, int]
    spearman: Num
    spearman_p: Prob
    max_move: int = Field(ge=0)
    max_move_model: Slug | None


class SweepPointRow(_Model):
    spikiness: float
    n_models: int = Field(ge=0)
    total_rank: int | None
    series_rank: int | None
    total_better: int = Field(ge=0)
    series_better: int = Field(ge=0)
    series_smooth_share: Num
    inverted: bool


class SweepTable(_Model):
    """The spikiness sweep of a synthetic dataset (tycheon.analysis.sweep)."""

    dataset: str
    protocol: Slug
    baseline: Slug
    metric: str
    n_entities: int = Field(ge=1)
    points: list[SweepPointRow]
    models: list[Slug] | None = Field(
        None, description="The models the sweep covers where the config restricts it (analysis_models); absent: all."
    )


class RelativeErrorRow(_Model):
    dataset: str
    model: Slug
    gmre: Num = Field(description="Geometric-mean relative error; null below the minimum cell.")
    low: Num
    high: Num
    n_blocks: int = Field(ge=0, description="Paired blocks with both metrics positive (what the cell counts).")
    n_excluded: int = Field(ge=0)
    cell_ok: bool | None = Field(default=None, description="Whether n_blocks reaches the minimum cell.")
    cell_reason: str | None = Field(default=None, description="Why no value is given; null if it is.")


class AcrossModelRow(_Model):
    model: Slug
    n_cells: int = Field(ge=0, description="Cells passing the minimum cell in which the model is scored.")
    wins: int = Field(ge=0)
    win_rate: Num = Field(description="wins / n_cells; null without any such cell.")
    beats_random_walk_cells: int = Field(ge=0)
    verdict_cells: int = Field(ge=0)
    gmre_overall: Num
    gmre: list[RelativeErrorRow]
    n_cells_below_min: int | None = Field(
        default=None, ge=0, description="Cells in which the model is scored that are below the minimum cell."
    )
    ranked: bool | None = Field(
        default=None,
        description="Scored in every eligible cell, so ranked on the common cells; null before the rule (issue 35).",
    )
    rank: int | None = Field(
        default=None, ge=1, description="Rank by cells won or tied among the ranked models; null when not ranked."
    )
    n_eligible: int | None = Field(
        default=None, ge=0, description="Eligible cells: the model's coverage is n_cells of n_eligible."
    )
    reason: str | None = Field(default=None, description="Why the model is not ranked; null when it is.")


class AcrossTable(_Model):
    """Across datasets (tycheon.analysis.across): win rate, verdict cells, relative error vs the random walk."""

    metric: str
    random_walk: Slug
    n_cells: int = Field(
        ge=0,
        description="Cells of the metric that pass the minimum cell (all, before the rule) and score the random walk.",
    )
    datasets: list[str]
    models: list[AcrossModelRow]
    n_cells_below_min: int | None = Field(
        default=None, ge=0, description="Cells of the metric left out: below the minimum cell (WP26 section 6)."
    )
    min_cell: int | None = Field(default=None, ge=0, description="The minimum cell the leaderboard tables recorded.")
    cell_counts: str | None = Field(default=None, description="What the minimum cell counts (the counting unit).")
    missing_cells: str | None = Field(default=None, description="How a cell where a model has no score is treated.")
    n_cells_without_random_walk: int | None = Field(
        default=None, ge=0, description="Cells passing the minimum cell left out: no random-walk score."
    )
    n_ranked_models: int | None = Field(
        default=None, ge=0, description="Models scored in every eligible cell (ranked); null before the rule."
    )
    support: str | None = Field(default=None, description="The cells the ranking is over and the models it ranks.")


class Analyses(_Model):
    """How much the answer moves (issue 16): every analysis is computed by the library from the run's
    score sets; the site only reads these values."""

    inversion: list[InversionTable] = Field(default_factory=list)
    dials: list[DialTable] = Field(default_factory=list)
    class_winners: list[ClassWinnersTable] = Field(default_factory=list)
    uncertainty: list[UncertaintyTable] = Field(default_factory=list)
    horizon: list[HorizonTable] = Field(default_factory=list)
    sweeps: list[SweepTable] = Field(default_factory=list)
    across: AcrossTable | None = None


ReplayVariant = Literal["all_folds", "non_overlapping"]


class ReplayRule(_Model):
    """The selection rule as replayed (evaluation-choices paper, section 7)."""

    metric: str = Field(description="Ranking metric of the rule and of every column of its rows.")
    baseline: Slug = Field(description="The floor: the production baseline, served when nothing survives.")
    min_fold_share: float = Field(gt=0, le=1, description="Support a candidate needs on the available folds.")
    bias_threshold: float = Field(ge=0, description="Largest |mean scaled bias| over the folds.")
    top_k: int = Field(ge=1, description="Survivors averaged and served.")
    min_folds: int = Field(ge=1, description="Earlier published folds a block needs before the rule chooses.")
    oracle: Literal["block", "series"] = Field(description="Ceiling: best single method per block or per series.")
    served_name: str


class ReplayRow(_Model):
    variant: ReplayVariant = Field(
        description=("all_folds, or non_overlapping: origins thinned so no two share a target (production spacing).")
    )
    demand_class: DemandClass
    n_blocks: int = Field(ge=0, description="Replayed (series, origin) blocks with a finite floor, served and oracle.")
    floor: Num = Field(description="Mean metric of always serving the production baseline.")
    served: Num = Field(description="Mean metric of the rule's served combination (scored with the same scales).")
    oracle: Num = Field(description="Mean metric of the best single method with hindsight.")
    gain: Num = Field(description="(floor - served) / floor.")
    wins: int = Field(ge=0, description="Blocks where served < floor.")
    win_share: Prob
    gap_closed: Num = Field(description="(floor - served) / (floor - oracle).")
    champion: str | None = Field(
        description="The one method that, served everywhere (floor where it has no forecast), does best; "
        "null below the minimum cell."
    )
    champion_mean: Num
    champion_gap_closed: Num
    champion_full: str | None = Field(
        description="The best method scored on every block of the row; null below the minimum cell."
    )
    champion_full_gap_closed: Num
    n_fallback: int = Field(ge=0, description="Blocks where no candidate survived and the floor was served.")
    n_zero_scale: int = Field(ge=0, description="Replayable blocks left out for a zero scale.")
    cell_ok: bool | None = Field(
        default=None,
        description="Whether n_blocks reaches the minimum cell (WP26 section 6); if not, no champion is named.",
    )
    cell_reason: str | None = Field(default=None, description="Why no champion is named; null if it is.")


class ReplayChoice(_Model):
    variant: ReplayVariant
    model: str
    share: Prob = Field(description="Share of the variant's blocks where this model was among the served ones.")


class ReplayTable(_Model):
    """The selection-rule replay of one (dataset, protocol, unit): floor, served, oracle per class."""

    dataset: str
    protocol: Slug
    unit: str
    rule: ReplayRule
    rows: list[ReplayRow]
    chosen_share: list[ReplayChoice] = Field(
        description="Per variant whose all-class row reaches the minimum cell: the served models' shares."
    )
    min_cell: int | None = Field(default=None, ge=0, description="The minimum cell (WP26 section 6).")
    cell_counts: str | None = Field(default=None, description="What the minimum cell counts (the counting unit).")


class SensitivityRun(_Model):
    name: str = Field(description="rolling, static, static_boundary<+s>, rolling_embargo1, rolling_refit<-s>.")
    description: str


class SensitivityTost(_Model):
    """TOST of mean between-protocol PSS within +-resolution (audit, section 4.6)."""

    mean: Num
    low: float
    high: float
    p_value: Prob
    equivalent: bool


class SensitivityComparison(_Model):
    kind: Literal["between", "within"]
    protocol: Literal["both", "static", "rolling"]
    reference: str
    run: str
    n_series: int = Field(ge=0, description="Series with a defined PSS.")
    pss_mean: Num = Field(description="Mean per-series PSS (mean over steps of 1 - Kendall tau-b).")
    pss_ci_low: Num
    pss_ci_high: Num
    swap_share: Prob = Field(description="Share of series whose winner changes on most steps.")
    swap_ci_low: Prob
    swap_ci_high: Prob
    panel_pss: Num = Field(description="PSS of the panel-level coordinates (mean loss per step over every series).")
    panel_swap: bool
    n_coords_dropped: int = Field(ge=0, description="(series, step) coordinates where a run tied every candidate.")


class SensitivityAttribution(_Model):
    protocol: Literal["static", "rolling"]
    n_references: int = Field(ge=0)
    n_series: int = Field(ge=0)
    between_mean: Num
    within_mean: Num
    diff_mean: Num = Field(default=None, description="Mean paired difference B_u - N_u,p.")
    diff_ci_low: Num = None
    diff_ci_high: Num = None
    diff_p: Prob = None
    ratio: Num = None
    tost_p: Prob = Field(default=None, description="TOST of the paired difference within +-resolution.")
    tost_equivalent: bool | None = None


class SensitivityRank(_Model):
    model: Slug
    ranks: dict[str, int] = Field(description="Run name -> rank by mean per-step loss (1 = best).")
    mean_rank: float = Field(description="Borda: mean rank over the K runs.")
    borda_rank: int = Field(ge=1)
    reference_rank: int = Field(ge=1, description="Rank under the rolling reference.")
    rank_min: int = Field(ge=1)
    rank_max: int = Field(ge=1)
    keep_share: Prob = Field(description="Share of the K runs that keep the reference rank.")


class SensitivityTable(_Model):
    """The protocol-sensitivity audit of one (dataset, unit): how stable the order is (audit, sections 4-6)."""

    dataset: str
    protocol: Slug = Field(description="The rolling protocol the audit perturbs.")
    unit: str
    metric: str
    n_models: int = Field(ge=0)
    horizon: int = Field(ge=1)
    resolution: float = Field(description="4 / [M (M - 1) H]: the PSS grid step and the TOST margin.")
    runs: list[SensitivityRun]
    tost: SensitivityTost
    comparisons: list[SensitivityComparison]
    attribution: list[SensitivityAttribution]
    ranks: list[SensitivityRank]
    fitted_state: dict[str, bool] = Field(
        default_factory=dict,
        description=(
            "Model -> whether it learns when fitted; a roster of models that do not has PSS 0 by construction."
        ),
    )


class ResultsBody(_Model):
    """A results document as the pipeline builds it: everything but the version and the sidecar block."""

    schema_version: Annotated[str, StringConstraints(pattern=r"^1\.[0-9]+\.[0-9]+$")] = Field(
        description="Semantic version of this schema; major 1."
    )
    name: Slug = Field(description="Benchmark config name (the <name> in benchmarks/results/<name>/).")
    provenance: Provenance
    config: dict[str, Any] = Field(
        description=("The benchmark config exactly as loaded (after validation), for the site to display.")
    )
    protocols: list[Protocol]
    datasets: list[DatasetInfo]
    models: list[ModelEntry]
    warnings: list[RunWarning]
    leaderboards: list[Leaderboard]
    intervals: list[IntervalTable]
    competition: list[CompetitionTable]
    analyses: Analyses = Field(
        default_factory=Analyses,
        description=("Inversion, dial, class winners, uncertainty, horizon, sweep and across-datasets analyses."),
    )
    replay: list[ReplayTable] = Field(
        default_factory=list,
        description=(
            "Selection-rule replays (evaluation-choices paper, section 7), one per (dataset, protocol, unit)."
        ),
    )
    sensitivity: list[SensitivityTable] = Field(
        default_factory=list,
        description=("Protocol-sensitivity audits (how stable is this order), one per audited (dataset, unit)."),
    )
    metric_glossary: list[MetricGlossaryEntry] = Field(
        default_factory=list,
        description=(
            "Every registered metric's display name, direction, scale and definition, for the site's glossary "
            "(empty in files written before schema 1.4.0)."
        ),
    )


class ResultsDocument(ResultsBody):
    """One benchmark run: provenance, the config as run, datasets, per-model status and cost, and every
    table the site shows (ranked leaderboards with tests, interval quality, competition tables).

    Self-contained: the renderer never recomputes a statistic. Every number that depends on the
    evaluation design carries the id of the protocol that produced it. All wall-clock facts live under
    keys named 'timings' (and 'cache'), so two runs with the same config and seeds are identical once
    those keys are removed. NaN is written as null. Schema evolution within major version 1 is additive
    only."""

    version: Annotated[str, StringConstraints(pattern=r"^v[0-9]{4}$")] = Field(
        description=("Append-only run version within the name: v0001, v0002, ...")
    )
    sidecar: Sidecar | None = Field(
        default=None, description="The score set as one parquet file (versions written before schema 1.6.0)."
    )
    scores: ScoreParts | None = Field(
        default=None, description="The score set as content-addressed parts (schema 1.6.0 on)."
    )

    @model_validator(mode="after")
    def _one_score_store(self) -> ResultsDocument:
        if (self.sidecar is None) == (self.scores is None):
            raise ValueError("a results document records its score set once: either 'sidecar' or 'scores'")
        return self

    def model(self, model_id: str) -> ModelEntry | None:
        return next((m for m in self.models if m.id == model_id), None)


def _location(loc: tuple[int | str, ...]) -> str:
    return "/".join(map(str, loc)) or "(root)"


def document_problems(error: ValidationError) -> list[str]:
    """Each problem of a failed validation as ``<json path>: <message> (got <value>)``."""
    out = []
    for e in error.errors(include_url=False):
        got = "" if e["type"] == "missing" else f" (got {e['input']!r:.80})"
        out.append(f"{_location(e['loc'])}: {e['msg']}{got}")
    return out


def parse_document(data: Any) -> ResultsDocument:
    """A results document from decoded JSON (raises :class:`pydantic.ValidationError`)."""
    return ResultsDocument.model_validate(data)


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a results document, as committed under ``benchmarks/schema/``."""
    schema = ResultsDocument.model_json_schema(mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://tycheon.dev/schema/results-v1.schema.json",
        "title": f"tycheon benchmark results, schema version {SCHEMA_VERSION}",
        **{k: v for k, v in schema.items() if k != "title"},
    }
