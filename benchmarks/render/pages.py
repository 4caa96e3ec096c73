"""What the pages of the site share: indexes over all validated runs, page paths, and the blocks several
pages show (warnings, skipped models, provenance, verdict counts).

A page is a docs-relative path, a template and its context (:class:`Page`, declared with its types in
:mod:`benchmarks.render.builders.registry`). This module decides what the site shows; it computes no
statistic. Orderings follow the
results file (datasets, units and metrics in config order; demand classes in a fixed order) or are sorted,
so the same inputs always give the same page list.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any

from benchmarks.results_model import (
    Leaderboard,
    LeaderboardRow,
    ModelEntry,
    RunWarning,
    TableKey,
)

from . import charts
from .builders.registry import NavNode, Page, page_path
from .fmt import reader_text, reason_line, slugify
from .load import Run
from .panels import panel_id

CLASS_ORDER = ("all", "smooth", "erratic", "intermittent", "lumpy", "undefined")
VERDICTS = ("beats", "indistinguishable", "worse")
MODEL_WARNING = "model"  # the schema's warning kind for a skipped or failed model run

__all__ = [
    "CLASS_ORDER",
    "MODEL_WARNING",
    "VERDICTS",
    "NavNode",
    "Page",
    "SiteModel",
    "named",
    "null_notes",
    "reader_reason",
]


def named(text: str, names: dict[str, str]) -> str:
    """``text`` with every model id in ``names`` (id -> display name) written as its display name.

    An id counts only as a whole token (``ses`` in "uses" is left alone); longer ids go first, so
    ``ses_classic`` is never read as ``ses``.
    """
    for mid in sorted(names, key=len, reverse=True):
        if mid != names[mid]:
            text = re.sub(rf"(?<![\w-]){re.escape(mid)}(?![\w-])", lambda _, n=names[mid]: n, text)
    return text


def reader_reason(reason: str | None, traceback: str | None, names: dict[str, str]) -> str:
    """Why a model did not run, as a page shows it: one line (:func:`~.fmt.reason_line`), no machine,
    repository-file or internal-document note (:func:`~.fmt.reader_text`), display names for model ids."""
    return named(reader_text(reason_line(reason, traceback)), names)


_NULL_CELLS = (  # (column, value shown, reason the schema records when that value is null, column label)
    ("dm", "dm_p_bh", "dm_reason", "DM p against the production baseline"),
    ("verdict", "verdict_vs_rw", "verdict_reason", "verdict against the random walk"),
)


def null_notes(rows: list[LeaderboardRow]) -> dict[str, Any]:
    """Footnotes for a leaderboard's empty DM p and verdict cells, from the reasons the results file records.

    One note per (column, reason), numbered in row order, naming every model it applies to; reasons that
    differ only by the model's own id (``no losses for croston``) are one note, the id read as "this model"
    and other ids as display names; notes about machines or internal documents are left out
    (:func:`~.fmt.reader_text`).
    ``marks`` maps ``(model, column)`` to the note's number. A null without a recorded reason (older results
    files, where the fields are optional) gets no note.
    """
    notes: list[dict[str, Any]] = []
    numbers: dict[tuple[str, str], int] = {}
    marks: dict[tuple[str, str], int] = {}
    names = {r.model: r.display_name for r in rows}
    for row in rows:
        for column, value_key, reason_key, label in _NULL_CELLS:
            reason = getattr(row, reason_key)
            if getattr(row, value_key) is not None or not reason:
                continue
            reason = re.sub(rf"(?<![\w-]){re.escape(row.model)}(?![\w-])", "this model", reason)
            reason = named(reader_text(reason), names)
            if (column, reason) not in numbers:
                numbers[(column, reason)] = len(notes) + 1
                notes.append({"number": len(notes) + 1, "label": label, "reason": reason, "models": []})
            number = numbers[(column, reason)]
            notes[number - 1]["models"].append(row.display_name)
            marks[(row.model, column)] = number
    return {"notes": notes, "marks": marks}


class SiteModel:
    """Indexes over all runs that several pages share (latest version, model styles, page paths)."""

    def __init__(self, runs: list[Run]):
        self.by_name: dict[str, list[Run]] = defaultdict(list)
        for run in runs:
            self.by_name[run.name].append(run)
        for versions in self.by_name.values():
            versions.sort(key=lambda r: r.version)
        self.names = sorted(self.by_name)
        model_ids = sorted({m.id for run in runs for m in run.data.models})
        self.styles = {mid: charts.style_for(i) for i, mid in enumerate(model_ids)}
        self.model_ids = model_ids

    def latest(self, name: str) -> Run:
        return self.by_name[name][-1]

    @staticmethod
    def models(run: Run) -> dict[str, ModelEntry]:
        return {m.id: m for m in run.data.models}

    @staticmethod
    def display_names(run: Run) -> dict[str, str]:
        """Model id -> display name, for every model of the run."""
        return {m.id: m.display_name for m in run.data.models}

    # Paths: each a page type's path (:func:`~.builders.registry.page_path`) ---------------------------
    @staticmethod
    def bench_page(name: str) -> str:
        return page_path("benchmark", name=name)

    @staticmethod
    def history_page(name: str) -> str:
        return page_path("history", name=name)

    @staticmethod
    def dataset_page(name: str, dataset: str) -> str:
        return page_path("dataset", name=name, dataset=dataset)

    @staticmethod
    def unit_page(name: str, dataset: str, protocol: str, unit: str) -> str:
        return page_path("unit", name=name, dataset=dataset, protocol=protocol, unit=unit)

    @staticmethod
    def cell_page(name: str, key: TableKey) -> str:
        """The leaderboard page of ``key``'s cell (dataset, protocol, unit, demand class): one page holds
        every metric's table of the cell, one panel each (:mod:`~.panels`); ``key.metric`` is not used."""
        return page_path(
            "leaderboard",
            name=name,
            dataset=key.dataset,
            protocol=key.protocol,
            unit=key.unit,
            demand_class=key.demand_class,
        )

    @classmethod
    def leaderboard_page(cls, name: str, key: TableKey) -> str:
        """The link to one leaderboard: its cell's page, at the panel of its metric (``...#mase``)."""
        return f"{cls.cell_page(name, key)}#{panel_id(key.metric)}"

    @staticmethod
    def intervals_page(name: str, dataset: str) -> str:
        return page_path("intervals", name=name, dataset=dataset)

    @staticmethod
    def replay_page(name: str, dataset: str) -> str:
        return page_path("replay", name=name, dataset=dataset)

    @staticmethod
    def sensitivity_page(name: str, dataset: str) -> str:
        return page_path("sensitivity", name=name, dataset=dataset)

    @staticmethod
    def competition_page(name: str, dataset: str) -> str:
        return page_path("competition", name=name, dataset=dataset)

    @staticmethod
    def model_page(model_id: str) -> str:
        return page_path("model", model=model_id)

    @staticmethod
    def results_download(name: str, version: str) -> str:
        """Where the site ships a gzip-compressed copy of a benchmark's latest results JSON (a download, not a
        page): byte-for-byte the results file once unpacked."""
        return f"downloads/{slugify(name)}-{version}.json.gz"

    @staticmethod
    def leaderboards_download(name: str, version: str) -> str:
        """Where the site ships every leaderboard of a benchmark's latest version as one CSV, gzip-compressed:
        each row a model in one table (dataset, protocol, unit, demand class, metric), numbers at full
        precision. Each table's own CSV, as the page shows it, is written in the reader's browser."""
        return f"downloads/{slugify(name)}-{version}-leaderboards.csv.gz"

    # Shared blocks ---------------------------------------------------------------------------------
    def leaderboards(self, run: Run) -> list[Leaderboard]:
        """The run's leaderboards in display order: dataset, protocol, unit, class, metric."""
        data = run.data
        metrics = data.config.get("metrics", [])
        order: dict[str, dict[str, int]] = {  # display position of each value, per TableKey field
            "dataset": {v: i for i, v in enumerate(dict.fromkeys(d.name for d in data.datasets))},
            "protocol": {v: i for i, v in enumerate(p.id for p in data.protocols)},
            "unit": {v: i for i, v in enumerate(dict.fromkeys(u for d in data.datasets for u in d.units))},
            "demand_class": {v: i for i, v in enumerate(CLASS_ORDER)},
            "metric": {
                v: i for i, v in enumerate(dict.fromkeys(map(str, metrics if isinstance(metrics, list) else [])))
            },
        }

        def key(lb: Leaderboard) -> tuple[tuple[int, str], ...]:
            return tuple((order[f].get(v, len(order[f])), v) for f, v in lb.key._asdict().items())

        return sorted(data.leaderboards, key=key)

    def not_scored(self, run: Run, *, dataset: str, protocol: str, present: set[str]) -> list[dict[str, Any]]:
        """Models that would have appeared in a (dataset, protocol) table but did not, with the reason in one
        line (:func:`reader_reason`; a traceback stays in the results file)."""
        names = self.display_names(run)
        rows = []
        for model in sorted(run.data.models, key=lambda m: m.id):
            if model.id in present:
                continue
            runs = [r for r in model.runs if r.dataset == dataset and r.protocol == protocol]
            if not runs:
                status, reason = "not run", "not configured for this dataset and protocol"
            else:
                status = runs[0].status
                reason = reader_reason(runs[0].reason, runs[0].traceback, names) or (
                    "ran, but scored no block in this table" if status == "ran" else "no reason recorded"
                )
            rows.append({"model": model.id, "display_name": model.display_name, "status": status, "reason": reason})
        return rows

    def warnings_for(self, run: Run, dataset: str | None) -> list[RunWarning]:
        """Data warnings about this dataset plus run-wide ones (dataset null).

        Only facts about the data are kept: warnings of kind ``model`` (the schema's kind for a skipped or
        failed model) repeat ``models[].runs`` one line per dataset and protocol, and the pages show those
        runs grouped per model instead (:meth:`not_ran`). The dataset's own ``synthetic`` /
        ``redistributable`` flags are shown too when the harness wrote no warning of that kind, so a page
        can never omit them. Messages read as a reader should meet them: model ids as display names, no
        machine or internal-document note (:func:`~.fmt.reader_text`).
        """
        names = SiteModel.display_names(run)
        found = [
            w.model_copy(update={"message": named(reader_text(w.message), names)})
            for w in run.data.warnings
            if w.dataset in (dataset, None) and w.kind != MODEL_WARNING
        ]
        info = next((d for d in run.data.datasets if d.name == dataset), None)
        kinds = {w.kind for w in found if w.dataset == dataset}
        if info is not None and info.synthetic and "synthetic" not in kinds:
            found.append(RunWarning(dataset=dataset, kind="synthetic", message="the dataset is flagged synthetic"))
        if info is not None and not info.redistributable and "not_redistributable" not in kinds:
            found.append(
                RunWarning(
                    dataset=dataset,
                    kind="not_redistributable",
                    message="the dataset is flagged not redistributable: do not publish its values",
                )
            )
        return found

    def run_warnings(self, run: Run) -> list[RunWarning]:
        """Data warnings of the whole run: run-wide ones, then each dataset's (see :meth:`warnings_for`)."""
        found = [w for w in self.warnings_for(run, None) if w.dataset is None]
        names = list(
            dict.fromkeys(
                [d.name for d in run.data.datasets] + [w.dataset for w in run.data.warnings if w.dataset is not None]
            )
        )
        for name in names:
            found.extend(w for w in self.warnings_for(run, name) if w.dataset is not None)
        return found

    @staticmethod
    def not_ran(run: Run, *, dataset: str | None = None) -> list[dict[str, Any]]:
        """Skipped and failed runs, one entry per model and (status, reason), optionally for one dataset.

        Each entry lists where it happened as clauses of datasets that share the same protocols, in the
        results file's order: ``[{"datasets": ["m3", "tourism"], "protocols": ["rolling_origin",
        "competition"]}, ...]``, so three unavailable models give three lines, not one per dataset and
        protocol. The reason is one line (:func:`reader_reason`; a traceback stays in the results file).
        """
        names = SiteModel.display_names(run)
        entries = []
        for model in sorted(run.data.models, key=lambda m: m.id):
            outcomes: dict[tuple[str, str], dict[str, list[str]]] = {}
            for r in model.runs:
                if r.status == "ran" or (dataset is not None and r.dataset != dataset):
                    continue
                key = (r.status, reader_reason(r.reason, r.traceback, names) or "no reason recorded")
                outcomes.setdefault(key, {}).setdefault(r.dataset, []).append(r.protocol)
            for (status, reason), where in outcomes.items():
                clauses: dict[tuple[str, ...], list[str]] = {}
                for name, protocols in where.items():
                    clauses.setdefault(tuple(dict.fromkeys(protocols)), []).append(name)
                entries.append(
                    {
                        "model": model.id,
                        "display_name": model.display_name,
                        "status": status,
                        "reason": reason,
                        "where": [
                            {"datasets": names, "protocols": list(protocols)} for protocols, names in clauses.items()
                        ],
                    }
                )
        return entries

    @staticmethod
    def provenance(run: Run) -> dict[str, Any]:
        prov = run.data.provenance
        return {
            "name": run.name,
            "version": run.version,
            "file": f"benchmarks/results/{run.name}/{run.version}.json",
            "download": SiteModel.results_download(run.name, run.version),
            "prov": prov,
            "sidecar": SiteModel.stored_sidecar(run),
            "runtime": prov.timings.get("runtime_seconds"),
            "packages": sorted(prov.environment.packages.items()),
            "seeds": sorted(prov.seeds.items()),
        }

    @staticmethod
    def stored_sidecar(run: Run) -> dict[str, Any]:
        """Where the run's scores are stored now, for the provenance table: ``path`` (relative to the
        results folder: the sidecar file, a migrated sidecar's manifest, or the version's JSON, whose
        ``scores`` block lists the parts), ``n_rows``, ``sha256`` (the sidecar's, if the version records
        one), and ``n_parts`` / ``bytes`` when the scores are parts (:func:`benchmarks.score_source.score_source`
        finds them)."""
        from benchmarks.results_io import ResultsValidationError
        from benchmarks.score_source import migration_manifest_path, score_source

        data = run.data
        side = data.sidecar
        out: dict[str, Any] = {
            "path": side.path if side else run.path.name,
            "n_rows": side.n_rows if side else data.scores.n_rows if data.scores else 0,
            "sha256": side.sha256 if side else None,
            "n_parts": None,
        }
        try:
            source = score_source(run.path, data)
        except ResultsValidationError:
            return out  # nothing found: the recorded block as it is (validation names what is missing)
        if source.manifest is not None:
            out.update(n_parts=len(source.manifest.parts), bytes=source.manifest.total_bytes())
        if source.sidecar is not None:
            out["path"] = source.sidecar.relative_to(run.path.parent).as_posix()
        elif source.kind == "migrated" and side is not None:
            out["path"] = migration_manifest_path("", side.sha256).as_posix()
        return out

    @staticmethod
    def verdict_counts(lb: Leaderboard) -> dict[str, int]:
        counts = Counter(r.verdict_vs_rw for r in lb.rows if not r.is_random_walk)
        return {v: counts.get(v, 0) for v in (*VERDICTS, None)}

    @staticmethod
    def dm_counts(lb: Leaderboard) -> dict[str, int]:
        counts = Counter(r.dm_direction for r in lb.rows if not r.is_baseline)
        return {"better": counts.get("better", 0), "worse": counts.get("worse", 0), "none": counts.get("none", 0)}

    @staticmethod
    def cell_ok(lb: Leaderboard) -> bool:
        """Whether the table reaches the minimum cell; tables written before the rule count as reaching it."""
        return lb.tests.cell_ok is not False

    @staticmethod
    def baseline_row(lb: Leaderboard) -> LeaderboardRow | None:
        return next((r for r in lb.rows if r.is_baseline), None)

    @staticmethod
    def rw_row(lb: Leaderboard) -> LeaderboardRow | None:
        return next((r for r in lb.rows if r.is_random_walk), None)
