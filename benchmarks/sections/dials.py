"""The aggregation dial of a dataset with level or group units (:mod:`tycheon.analysis.dial`): its own
units (the config's ``dial`` group counts the leaderboards do not score) come from an extra backtest."""

from __future__ import annotations

from collections.abc import Sequence

from benchmarks.results_model.analyses import DialTable
from benchmarks.sections import Carried, DatasetContext, Section, plain
from tycheon.analysis.dial import aggregation_dial
from tycheon.analysis.prepared import PreparedScores


def dial_unit_names(ks: Sequence[int], n_series: int, *, leaderboard_units: Sequence[str]) -> list[str]:
    """Units of the dial's extra backtest: ``groups:k`` and ``groups_random:k`` for each configured ``k``
    below the number of series (``k = 1`` is the total: size groups only), minus units the leaderboard
    backtest already scores."""
    kept = sorted({min(int(k), n_series) for k in ks})
    units = [f"groups:{k}" for k in kept if k < n_series] + [f"groups_random:{k}" for k in kept if 1 < k < n_series]
    if 1 in kept and "total" in leaderboard_units:
        units.remove("groups:1")  # the total is the one-group aggregate
    return [u for u in units if u not in leaderboard_units]


def compute(ctx: DatasetContext) -> list[DialTable] | Carried:
    entry = ctx.entry
    own_units = (
        dial_unit_names(entry.dial, ctx.n_series, leaderboard_units=list(entry.units))
        if entry is not None and entry.dial
        else []
    )
    if own_units and ctx.dial_table is None and ctx.previous is not None:
        return Carried(
            ctx.previous_tables("dials"),
            f"the aggregation dial of {ctx.dataset}: its own units ({', '.join(own_units)}) were scored by a "
            "backtest that the score set does not hold",
        )
    own, ctx.dial_table = ctx.dial_table, None  # released once the dial is computed
    aggregates = [u for u in ctx.units if u.startswith(("level:", "groups"))]
    extra = () if own is None or not len(own) else (own,)
    if not (extra or aggregates):
        return []
    if ctx.dial_models is not None:  # the leaderboard units' rows of the dial's models only
        dial_scores = PreparedScores(ctx.table[ctx.table["model"].isin(ctx.dial_models)]).extended(*extra)
    else:  # the leaderboard units as prepared for the other sections (shared), and the dial's own
        dial_scores = ctx.scores.extended(*extra)
    del own, extra
    dial = ctx.attempt("dial", lambda s=dial_scores: aggregation_dial(s, spec=ctx.spec, n_series=ctx.n_series))
    del dial_scores
    if dial is None:
        return []
    covered = {} if ctx.dial_models is None else {"models": list(ctx.dial_models)}
    return [DialTable.model_validate({**ctx.tag, **plain(dial), **covered})]


SECTION = Section(
    key="dials",
    table=DialTable,
    position=20,
    description="The aggregation dial: the baseline's rank as series are pooled into k size-sorted, random "
    "or hierarchy groups (paper, Table 3 and Figure 1).",
    recompute="own_backtests",
    compute=compute,
    note="dial",
    template="sections/dials.md.j2",
    page_position=20,
    topic="aggregation dial",
)
