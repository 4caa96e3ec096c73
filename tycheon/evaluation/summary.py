"""A short text summary of an evaluation's tables: the winners and verdicts per demand class
(:func:`summary_lines`) and the inventory simulation's outcome (:func:`inventory_lines`); the same lines
for an :class:`~tycheon.evaluation.Evaluation` and for a results file's tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tycheon.analysis.leaderboard import DEMAND_CLASSES

__all__ = ["inventory_lines", "summary_lines"]


def _winner_facts(row: Mapping[str, Any]) -> str:
    """The mean, the share better than the random walk with its interval, and the zero-forecast flag."""
    out = f"mean {row['mean']:.3f}"
    skill, low, high = row.get("skill_rw"), row.get("skill_rw_low"), row.get("skill_rw_high")
    if skill is not None and not row.get("is_random_walk"):
        out += f", {100 * skill:+.1f}% vs the random walk"
        if low is not None and high is not None:
            out += f" [{100 * low:+.1f}%, {100 * high:+.1f}%]"
    if row.get("zero_forecast_flag"):
        out += f", FORECASTS ZERO on {100 * row['zero_forecast_share']:.0f}% of steps with demand"
    return out


def summary_lines(tables: Sequence[Mapping[str, Any]], *, unit: str = "series") -> list[str]:
    """A short text summary of leaderboard tables (as :func:`leaderboard_tables` returns them, or as a
    results file holds them): per demand class, the winner per metric (ranked by each table's rule, with its
    mean, its share better than the random walk with the interval and the zero-forecast flag) and the models
    that beat the random walk (verdict ``beats``)."""
    chosen = [t for t in tables if t["unit"] == unit]
    lines = []
    for dc in DEMAND_CLASSES:
        class_tables = [t for t in chosen if t["demand_class"] == dc]
        if not class_tables:
            continue
        winners = []
        for t in class_tables:
            top = [r for r in t["rows"] if r["rank"] == 1]
            if not top:
                winners.append(f"{t['metric']} no model scored")
            elif t.get("winner") is None and "winner" in t:  # below the minimum cell: ranked, not named
                winners.append(f"{t['metric']} no winner named ({t['tests'].get('cell_reason')})")
            else:
                names = " = ".join(r["display_name"] for r in top)
                winners.append(f"{t['metric']} winner {names} ({_winner_facts(top[0])})")
        rows = class_tables[0]["rows"]
        beats = [r["display_name"] for r in rows if r.get("verdict_vs_rw") == "beats"]
        judged = [r for r in rows if r.get("verdict_vs_rw") is not None]
        if beats:
            rw = f"beat the random walk: {', '.join(beats)}"
        elif judged:
            rw = "no model beats the random walk"
        else:
            rw = "no verdicts against the random walk (see the reasons in the tables)"
        blocks = class_tables[0]["n_blocks_total"]
        zero = max(int(t["tests"].get("n_zero_scale_blocks") or 0) for t in class_tables)
        left_out = f", {zero} left out for a zero scale" if zero else ""
        lines.append(f"{dc} ({blocks} blocks{left_out}): {'; '.join(winners)}; {rw}")
    return lines


def inventory_lines(intervals: Sequence[Mapping[str, Any]], *, unit: str = "series") -> list[str]:
    """Per demand class of ``unit``, the inventory simulation's outcome (as interval tables carry it): the
    model that needs the least stock to reach the target fill rate, that stock, and the fill rate each of the
    top three reaches unshifted."""
    lines = []
    for t in intervals:
        inv = t.get("inventory")
        if t["unit"] != unit or not inv:
            continue
        top = ", ".join(
            f"{r['model']} fill {100 * r['fill_rate']:.1f}%" for r in inv["rows"][:3] if r.get("fill_rate") is not None
        )
        need = inv["rows"][0].get("stock_needed") if inv["rows"] else None
        head = (
            f"least stock for {100 * inv['target']:.0f}%: {inv['winner']} ({need:.2f} periods of demand)"
            if inv.get("winner") and need is not None
            else f"no ranking ({inv.get('cell_reason') or 'no model reaches the target'})"
        )
        lines.append(f"{t['demand_class']} inventory ({inv['policy']}): {head}; unshifted: {top}")
    return lines
