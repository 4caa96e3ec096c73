"""The minimum cell (WP26 section 6): one rule for every place that names a winner, a verdict or a ranking.

WP26 section 6 suppresses a cell with fewer than 30 records. Here the record is the **scored block**
(one series at one origin: the unit the block metrics, the Friedman ranks and the bootstraps are built
from), counted the same way for every unit and demand class: an aggregate unit (``total``, a hierarchy
level) is one series, so its blocks are its origins. A cell with fewer than ``min_cell`` blocks names no
winner, no verdict, no class winner, no replay rule, no interval ranking and no across-datasets entry.

The verdict and the DM column rest on tests over **time** (the panel-robust tests of
:func:`tycheon.stats.dm.dm_panel`: the loss differential averaged over series per origin, then tested
over the origins), so they need, besides the blocks, enough time points: at least
:data:`MIN_TIME_POINTS` scored origins and more than :math:`2\\lceil h/\\text{stride}\\rceil` of them
(the DM test's own floor, :func:`tycheon.stats.dm.dm_panel`). The size simulation in
``tests/test_panel_dm.py`` shows the robust test within [3%, 7%] at 6, 8 and 24 origins; below 6 origin
averages the :math:`t` reference has fewer than 5 degrees of freedom even without overlap, and the test
has next to no power against the differences a leaderboard separates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tycheon.contract import overlap_lags
from tycheon.errors import MetricInputError

__all__ = ["BLOCKS", "MIN_TIME_POINTS", "CellCheck", "cell_check", "time_check"]

BLOCKS = "scored blocks (series x origin)"
"""The counting unit of the minimum cell, as pages state it."""

MIN_TIME_POINTS = 6
"""Fewest scored origins on which a panel-robust test (verdict, DM column) is run."""


@dataclass(frozen=True)
class CellCheck:
    """Whether a cell may name a winner (``ok``) and, if not, why (``reason``, a full sentence)."""

    ok: bool
    count: int
    min_cell: int
    reason: str | None
    counts: str = BLOCKS

    def as_tests(self) -> dict[str, Any]:
        """The fields a results table records: ``cell_ok``, ``cell_count``, ``cell_counts``, ``min_cell``,
        ``cell_reason``."""
        return {
            "cell_ok": self.ok,
            "cell_count": int(self.count),
            "cell_counts": self.counts,
            "min_cell": int(self.min_cell),
            "cell_reason": self.reason,
        }


def cell_check(n_blocks: int, *, min_cell: int) -> CellCheck:
    """The minimum cell on ``n_blocks`` scored blocks (WP26 section 6): ``ok`` iff ``n_blocks >= min_cell``."""
    if int(min_cell) != min_cell or min_cell < 2:
        raise MetricInputError(f"min_cell must be an integer of at least 2; got {min_cell!r}")
    n = int(n_blocks)
    if n >= min_cell:
        return CellCheck(True, n, int(min_cell), None)
    # short: a table writes it beside every row it silences (no winner, ranking, test or verdict)
    reason = f"{n} {BLOCKS}, fewer than the minimum cell of {min_cell} (WP26 section 6)"
    return CellCheck(False, n, int(min_cell), reason)


def time_check(n_time_points: int, *, horizon: int, stride: int) -> str | None:
    """None when ``n_time_points`` scored origins carry a panel-robust test; else the reason why not.

    Needs at least :data:`MIN_TIME_POINTS` origins and more than :math:`2(L+1)`, with
    :math:`L = \\lceil h/\\text{stride}\\rceil - 1` the overlap lags (:func:`tycheon.contract.overlap_lags`).
    """
    need = max(MIN_TIME_POINTS, 2 * (overlap_lags(horizon, stride) + 1) + 1)
    if n_time_points >= need:
        return None
    # short: written beside every row it silences; why (series sharing a calendar shock are not independent,
    # so a test over time needs time points) is stated once, on the methodology and glossary pages
    return f"{n_time_points} scored origin(s), fewer than the {need} a test over time needs"
