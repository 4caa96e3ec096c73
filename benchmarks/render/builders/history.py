"""A benchmark's version history: every version's counts, and what changed between consecutive versions in
terms a reader cares about (verdicts, rank moves, DM p-values crossing alpha, models joining or leaving);
nothing is recomputed."""

from __future__ import annotations

from typing import Any

from benchmarks.results_model import Leaderboard, ResultsDocument

from ..fmt import plain, pshort
from ..history import statistics_history
from ..load import Run
from ..pages import Page, SiteModel
from .models import runs_of
from .registry import Built, in_nav, page_type


def _crossed(before: float | None, after: float | None, alpha: float) -> bool:
    """Whether a p-value moved across ``alpha`` (significant on one side, not on the other)."""
    return before is not None and after is not None and (before < alpha) != (after < alpha)


def _table_changes(old_lb: Leaderboard, new_lb: Leaderboard) -> list[dict[str, Any]]:
    """What a reader would notice in one table: verdicts that changed, rank moves of more than one place,
    DM p-values against the baseline that crossed alpha, models that joined or left the table."""
    before = {r.model: r for r in old_lb.rows}
    after = {r.model: r for r in new_lb.rows}
    alpha = new_lb.tests.alpha
    changes = []
    for model in sorted(set(before) | set(after)):
        b, a = before.get(model), after.get(model)
        name = (a or b).display_name
        if b is None or a is None:
            changes.append(
                {
                    "model": model,
                    "display_name": name,
                    "what": "joined the table" if b is None else "left the table",
                    "detail": f"rank {a.rank}" if a is not None else f"was rank {b.rank}",
                }
            )
            continue
        if b.verdict_vs_rw != a.verdict_vs_rw:
            changes.append(
                {
                    "model": model,
                    "display_name": name,
                    "what": "verdict against the random walk",
                    "detail": f"{b.verdict_vs_rw or 'none'} \u2192 {a.verdict_vs_rw or 'none'}",
                }
            )
        if abs(b.rank - a.rank) > 1:
            changes.append(
                {"model": model, "display_name": name, "what": "rank", "detail": f"{b.rank} \u2192 {a.rank}"}
            )
        if _crossed(b.dm_p_bh, a.dm_p_bh, alpha):
            changes.append(
                {
                    "model": model,
                    "display_name": name,
                    "what": f"DM p against the baseline crossed {plain(alpha)}",
                    "detail": f"{pshort(b.dm_p_bh)} \u2192 {pshort(a.dm_p_bh)}",
                }
            )
    return changes


def _diff(old: Run, new: Run) -> dict[str, Any]:
    """What changed between two consecutive versions in terms a reader cares about (nothing recomputed)."""
    old_lbs = {lb.key: lb for lb in old.data.leaderboards}
    new_lbs = {lb.key: lb for lb in new.data.leaderboards}
    tables = []
    for key in sorted(set(old_lbs) & set(new_lbs)):
        grouped: dict[tuple[str, str], list[str]] = {}  # the same change of several models is one line
        for c in _table_changes(old_lbs[key], new_lbs[key]):
            grouped.setdefault((c["what"], c["detail"]), []).append(c["display_name"])
        if grouped:
            tables.append(
                {
                    "key": key,
                    "changes": [{"what": w, "detail": d, "models": names} for (w, d), names in grouped.items()],
                }
            )
    old_models, new_models = SiteModel.models(old), SiteModel.models(new)
    status_changes = []
    for mid in sorted(set(old_models) & set(new_models)):
        o = {(r.dataset, r.protocol): r.status for r in runs_of(old_models.get(mid))}
        n = {(r.dataset, r.protocol): r.status for r in runs_of(new_models.get(mid))}
        for k in sorted(set(o) | set(n)):
            if o.get(k) != n.get(k):
                status_changes.append(
                    {
                        "model": mid,
                        "display_name": new_models[mid].display_name,
                        "dataset": k[0],
                        "protocol": k[1],
                        "before": o.get(k, "absent"),
                        "after": n.get(k, "absent"),
                    }
                )
    added_models = [new_models[m] for m in sorted(set(new_models) - set(old_models))]
    removed_models = [old_models[m] for m in sorted(set(old_models) - set(new_models))]
    added, removed = sorted(set(new_lbs) - set(old_lbs)), sorted(set(old_lbs) - set(new_lbs))
    changed = bool(tables or status_changes or added_models or removed_models or added or removed)
    return {
        "old": old.version,
        "new": new.version,
        "tables": tables,
        "changed": changed,
        "added": added,
        "removed": removed,
        "added_models": added_models,
        "removed_models": removed_models,
        "status_changes": status_changes,
        "config_changed": old.data.provenance.config_sha256 != new.data.provenance.config_sha256,
        "code_changed": old.data.provenance.code_sha256 != _computing_code(new.data),
    }


def _computing_code(doc: ResultsDocument) -> str:
    """sha256 of the code that computed a version's tables: a restatement keeps its source run's
    ``code_sha256`` (the code that made the scores) and records the restating code apart."""
    restated = doc.provenance.restated_from
    return doc.provenance.code_sha256 if restated is None else restated.code_sha256


def history_page(site: SiteModel, name: str) -> Page:
    runs = site.by_name[name]
    versions = []
    for run in reversed(runs):
        statuses = [r.status for m in run.data.models for r in m.runs]
        versions.append(
            {
                "run": run,
                "prov": run.data.provenance,
                "ran": statuses.count("ran"),
                "skipped": statuses.count("skipped"),
                "failed": statuses.count("failed"),
                "n_leaderboards": len(run.data.leaderboards),
            }
        )
    diffs = [_diff(old, new) for old, new in zip(runs[:-1], runs[1:], strict=False)][::-1]
    return Page(
        path=site.history_page(name),
        template="history.md.j2",
        title="Version history",
        context={
            "name": name,
            "versions": versions,
            "diffs": diffs,
            "statistics": statistics_history(runs),
            "lb_paths": {lb.key: site.leaderboard_page(name, lb.key) for lb in site.latest(name).data.leaderboards},
        },
    )


@page_type("history", path="benchmarks/{name}/history.md", scope="benchmark", order=20)
def _history(site: SiteModel, run: Run) -> Built:
    return in_nav(history_page(site, run.name))
