"""The markdown summary of a submission: where each submitted model placed, its verdict against the random
walk, and every dataset it did not run on, with the reason. Read from the results document only (the
summary never recomputes a statistic)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchmarks.results_model import ModelRun, ResultsDocument
from benchmarks.submit.validate import Verdict
from tycheon.textsafe import markdown_text

__all__ = ["Escape", "model_failures", "rejection_summary", "results_summary", "scored_anywhere"]

# How text a contributor wrote (a display name, a file name, a reason quoting them) enters the report:
# markdown_text for the step summary (no image, link or HTML can come from it), str for the terminal
# (whose sink escapes control characters).
Escape = Callable[[str], str]

_VERDICT = {
    "beats": "beats the random walk",
    "worse": "worse than the random walk",
    "indistinguishable": "indistinguishable from the random walk",
    None: "not computable",
}


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _num(value: Any) -> str:
    return "n/a" if value is None else f"{value:.4g}"


def rejection_summary(verdicts: list[Verdict], *, escape: Escape = markdown_text) -> str:
    """Markdown listing every reason a submitted file was rejected; ``escape`` writes the file names and
    reasons (they quote what the contributor wrote)."""
    lines = ["## Submission check: rejected", ""]
    for v in verdicts:
        path = escape(str(v.path))
        if v.accepted:
            lines.append(f"- {path}: valid")
        for reason in v.reasons:
            text = escape(_cell(reason))
            lines.append(f"- {text}" if reason.startswith(str(v.path)) else f"- {path}: {text}")
    return "\n".join(lines) + "\n"


def model_failures(doc: ResultsDocument, model_id: str) -> list[ModelRun]:
    """The runs of ``model_id`` that did not produce scores (skipped or failed), with their reasons."""
    entry = next((m for m in doc.models if m.id == model_id), None)
    return [] if entry is None else [r for r in entry.runs if r.status != "ran"]


def scored_anywhere(doc: ResultsDocument, model_id: str) -> bool:
    """Whether ``model_id`` ran *and* forecast at least one scored series somewhere (support > 0); a model
    that ran but abstained everywhere (e.g. a window longer than every history) has nothing to rank."""
    entry = next((m for m in doc.models if m.id == model_id), None)
    return entry is not None and any(r.status == "ran" and r.support > 0 for r in entry.runs)


def _placements(doc: ResultsDocument, model_id: str) -> list[str]:
    rows = []
    for lb in doc.leaderboards:
        if lb.demand_class != "all":
            continue
        mine = next((r for r in lb.rows if r.model == model_id), None)
        if mine is None:
            continue
        dm = "baseline" if mine.is_baseline else (f"{mine.dm_direction or 'n/a'} (BH p = {_num(mine.dm_p_bh)})")
        rows.append(
            f"| {_cell(lb.dataset)} | {_cell(lb.unit)} | {lb.metric} | {mine.rank} of "
            f"{len(lb.rows)} | {_num(mine.mean)} | {_VERDICT.get(mine.verdict_vs_rw, 'n/a')} | {dm} |"
        )
    if not rows:
        return ["No leaderboard ranks this model (it produced no scores)."]
    return [
        "| dataset | unit | metric | place | mean | vs random walk | DM vs production baseline |",
        "|---|---|---|---|---|---|---|",
        *rows,
    ]


def _competition(doc: ResultsDocument, model_id: str) -> list[str]:
    rows = []
    for table in doc.competition:
        mine = next((r for r in table.rows if r.model == model_id), None)
        if mine is None:
            continue
        ranked = sum(1 for r in table.rows if r.rank is not None)
        place = f"{mine.rank} of {ranked}" if mine.rank is not None else mine.status
        rows.append(f"| {_cell(table.dataset)} | {table.competition} | {table.metric} | {place} | {_num(mine.value)} |")
    if not rows:
        return []
    return [
        "",
        "Competition protocol:",
        "",
        "| dataset | competition | metric | place | value |",
        "|---|---|---|---|---|",
        *rows,
    ]


def results_summary(
    doc: ResultsDocument,
    model_ids: list[str],
    *,
    accepted: bool,
    results_path: str,
    site_path: str,
    escape: Escape = markdown_text,
) -> str:
    """Markdown for the step summary and the terminal: placement, verdict and failures per submitted model;
    ``escape`` writes the submitted models' display names and ids and the reasons a run failed."""
    status = "accepted" if accepted else "rejected"
    lines = [
        f"## Submission check: {status}",
        "",
        f"Benchmark `{doc.name}` {doc.version}: `{results_path}`; site: `{site_path}`.",
        f"Random walk: `{doc.config['random_walk']}`; production baseline: "
        f"`{doc.config['production_baseline']}`. The verdict needs both one-sided tests (squared error "
        f"and CRPS) below {doc.config['alpha']:g} (ADR-0006 decision 6).",
        "",
    ]
    names = {m.id: m.display_name for m in doc.models}
    for model_id in model_ids:
        lines += [f"### {escape(_cell(names.get(model_id, model_id)))} ({escape(model_id)})", ""]
        lines += _placements(doc, model_id)
        lines += _competition(doc, model_id)
        failures = model_failures(doc, model_id)
        if failures:
            lines += ["", "Did not run:", ""]
            lines += [f"- {_cell(r.dataset)} ({r.protocol}): {r.status}: {escape(_cell(r.reason))}" for r in failures]
        lines.append("")
    return "\n".join(lines)
