"""The statistics part of a benchmark's version-history page: which statistics version computed each
version, what each statistics version changed, and the verdicts against the random walk that changed
between consecutive versions, and why (:mod:`benchmarks.history` compares them; nothing is recomputed).

:func:`statistics_history` is the page's ``statistics`` context (``templates/history.md.j2``); the rest of
the page (models, statuses, per-table changes) is built by :func:`benchmarks.render.builders.history.history_page`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks.history import (
    VerdictChanges,
    score_set_change,
    statistics_changes,
    statistics_reasons,
    statistics_version_of,
    verdict_changes,
)

from .load import Run
from .pages import named

__all__ = ["statistics_history", "transition"]


def _groups(changes: VerdictChanges, names: dict[str, str]) -> list[dict[str, Any]]:
    """Per transition (most frequent first): its count and its rows grouped by (dataset, unit, demand
    class), each with the models (display names, from ``names``) whose verdict moved that way."""
    out = []
    for (before, after), count in changes.transitions.items():
        cells: dict[tuple[str, str, str], list[str]] = {}
        for (dataset, unit, demand_class, model), b, a in changes.rows:
            if (b, a) == (before, after):
                cells.setdefault((dataset, unit, demand_class), []).append(names.get(model, model))
        out.append(
            {
                "before": before,
                "after": after,
                "count": count,
                "cells": [{"where": " / ".join(k), "models": sorted(v)} for k, v in sorted(cells.items())],
            }
        )
    return out


def transition(old: Run, new: Run) -> dict[str, Any]:
    """What changed from ``old`` to ``new`` (consecutive versions of one benchmark) in verdicts, and why.

    Returns
    -------
    dict
        ``reasons`` (``(version, what it changed)`` for every
        statistics version between them), ``why`` (short reasons: the statistics, the score set, the config
        or the code changed), ``score`` (:class:`benchmarks.history.ScoreSetChange`) and ``score_detail`` (its
        detail with display names for model ids), ``verdicts``
        (:class:`benchmarks.history.VerdictChanges`), ``groups`` (per transition: count and the rows by
        dataset / unit / class) and ``metric_note`` (which metric's tables were read, where a version gave a
        verdict per metric table).
    """
    old_sv, new_sv = statistics_version_of(old.data), statistics_version_of(new.data)
    names = {m.id: m.display_name for run in (old, new) for m in run.data.models}
    verdicts = verdict_changes(old.data, new.data)
    score = score_set_change(old.path, old.data, new.path, new.data)
    reasons = statistics_reasons(old_sv, new_sv)
    why = []
    if old_sv != new_sv:
        why.append(f"the statistics changed (statistics version {old_sv} \u2192 {new_sv})")
    if score.same is False:
        why.append("the score set changed")
    elif score.same is None:
        why.append("the score set may have changed")
    old_prov, new_prov = old.data.provenance, new.data.provenance
    if old_prov.config_sha256 != new_prov.config_sha256:
        why.append("the config changed")
    if old_sv == new_sv and old_prov.code_sha256 != new_prov.code_sha256:
        why.append("the code changed")
    if not why:
        why.append("neither the statistics, the score set, the config nor the code changed")
    per_metric = [
        v for v, flag in ((old.version, verdicts.per_metric_old), (new.version, verdicts.per_metric_new)) if flag
    ]
    metric_note = None
    if per_metric:
        metric_note = (
            f"The verdicts compared are those of the config's first metric "
            f"({verdicts.metric_new or verdicts.metric_old}): {' and '.join(per_metric)} gave a verdict per "
            "metric table (statistics version 1)"
        )
    return {
        "reasons": reasons,
        "why": why,
        "score": score,
        "score_detail": named(score.detail, names),
        "verdicts": verdicts,
        "groups": _groups(verdicts, names),
        "metric_note": metric_note,
        "show": bool(verdicts.n_changed) or old_sv != new_sv,
    }


def statistics_history(runs: Sequence[Run]) -> dict[str, Any]:
    """The ``statistics`` context of a benchmark's history page.

    Parameters
    ----------
    runs : sequence of Run
        Every version of one benchmark, oldest first.

    Returns
    -------
    dict
        ``versions``: version -> the statistics version that computed it; ``legend``: ``(statistics version,
        what it changed)`` for each statistics version that computed a version here; ``transitions``: newer
        version -> :func:`transition` of it and the version before it.
    """
    versions = {r.version: statistics_version_of(r.data) for r in runs}
    changes = statistics_changes()
    legend = [(v, changes.get(v, "(no description recorded)")) for v in sorted(set(versions.values()))]
    transitions = {new.version: transition(old, new) for old, new in zip(runs[:-1], runs[1:], strict=False)}
    return {"versions": versions, "legend": legend, "transitions": transitions}
