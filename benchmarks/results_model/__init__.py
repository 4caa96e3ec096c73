"""The results document as typed models: the one definition that writes, validates and reads results.

The pipeline builds a :class:`ResultsBody` from these models, :func:`benchmarks.results_io.write_results`
adds the version and sidecar block to make a :class:`ResultsDocument`, and ``validate``, ``render`` and
``submit`` read files back through :func:`parse_document`. The published JSON Schema
(``benchmarks/schema/results-v1.schema.json``) is generated from these models by
``python -m benchmarks.schema``; a test fails when the committed file is stale.

The models live by job: :mod:`~benchmarks.results_model.base` (the strict base model, shared scalars,
:class:`TableKey`), :mod:`~benchmarks.results_model.run` (provenance, datasets, model runs, the stored score
set, warnings, glossary), :mod:`~benchmarks.results_model.tables` (leaderboards, intervals, competition),
:mod:`~benchmarks.results_model.analyses` and :mod:`~benchmarks.results_model.audits` (replay,
sensitivity). This module assembles the document and re-exports every model, so callers import from
``benchmarks.results_model``.

Fields that version 1 made optional have defaults, and writing drops the fields that were never set
(``exclude_unset``), so files written before these models existed (v0001-v0004) validate, and a field added
later is one edit in its model's module: declare it with a default.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StringConstraints, ValidationError, model_validator

from benchmarks.results_model.analyses import (
    AcrossModelRow,
    AcrossTable,
    Analyses,
    ClassLeaderRow,
    ClassWinnerRow,
    ClassWinnersTable,
    DialCurveRow,
    DialPointRow,
    DialTable,
    HorizonTable,
    InversionColumnRow,
    InversionTable,
    RelativeErrorRow,
    SweepPointRow,
    SweepTable,
    UncertaintyRow,
    UncertaintyTable,
)
from benchmarks.results_model.audits import (
    ReplayChoice,
    ReplayRow,
    ReplayRule,
    ReplayTable,
    SensitivityAggregation,
    SensitivityAttribution,
    SensitivityComparison,
    SensitivityRank,
    SensitivityRun,
    SensitivityStep,
    SensitivityTable,
    SensitivityTost,
)
from benchmarks.results_model.base import (
    DemandClass,
    Slug,
    TableKey,
    WarningKind,
    _Model,
    portable_paths,
)
from benchmarks.results_model.run import (
    DatasetInfo,
    EngineFacts,
    Environment,
    HistoryEntry,
    MetricGlossaryEntry,
    ModelEntry,
    ModelRun,
    ModelSource,
    Protocol,
    Provenance,
    RestatedFrom,
    RunWarning,
    ScorePart,
    ScoreParts,
    Sidecar,
)
from benchmarks.results_model.tables import (
    CompetitionRow,
    CompetitionTable,
    IntervalRow,
    IntervalTable,
    InventoryRow,
    InventoryTable,
    Leaderboard,
    LeaderboardRow,
    LeaderboardTests,
)

__all__ = [
    "SCHEMA_VERSION",
    "AcrossModelRow",
    "AcrossTable",
    "Analyses",
    "ClassLeaderRow",
    "ClassWinnerRow",
    "ClassWinnersTable",
    "CompetitionRow",
    "CompetitionTable",
    "DatasetInfo",
    "DemandClass",
    "DialCurveRow",
    "DialPointRow",
    "DialTable",
    "EngineFacts",
    "Environment",
    "HistoryEntry",
    "HorizonTable",
    "IntervalRow",
    "IntervalTable",
    "InventoryRow",
    "InventoryTable",
    "InversionColumnRow",
    "InversionTable",
    "Leaderboard",
    "LeaderboardRow",
    "LeaderboardTests",
    "MetricGlossaryEntry",
    "ModelEntry",
    "ModelRun",
    "ModelSource",
    "Protocol",
    "Provenance",
    "RelativeErrorRow",
    "ReplayChoice",
    "ReplayRow",
    "ReplayRule",
    "ReplayTable",
    "RestatedFrom",
    "ResultsBody",
    "ResultsDocument",
    "RunWarning",
    "ScorePart",
    "ScoreParts",
    "SensitivityAggregation",
    "SensitivityAttribution",
    "SensitivityComparison",
    "SensitivityRank",
    "SensitivityRun",
    "SensitivityStep",
    "SensitivityTable",
    "SensitivityTost",
    "Sidecar",
    "SweepPointRow",
    "SweepTable",
    "TableKey",
    "UncertaintyRow",
    "UncertaintyTable",
    "WarningKind",
    "document_problems",
    "json_schema",
    "parse_document",
    "portable_paths",
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
