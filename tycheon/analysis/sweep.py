"""The spikiness sweep (evaluation-choices paper, section 4.2, last paragraph): the synthetic marketplace's
spikiness dial (:mod:`tycheon.data.synthetic`) from smooth to very spiky, everything else fixed, and the
baseline's place at the total and per entity at each setting.

At each setting the score set of that panel is read as Table 1 reads a unit
(:func:`tycheon.analysis.inversion.unit_column`): the baseline's rank by the mean block metric and the
number of methods significantly better than it (pooled DM, BH adjusted) at ``total`` and at ``series``.
A setting shows the inversion when the baseline is in the top two at the total and in the bottom three
per entity; the paper expects the entity half to assemble first as the dial rises from smooth and the
total half to dissolve far above the marketplace setting (the total itself turns spiky).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from tycheon.analysis.inversion import unit_column
from tycheon.analysis.leaderboard import LeaderboardSpec
from tycheon.analysis.prepared import prepared
from tycheon.errors import InputError

__all__ = ["SpikinessSweep", "SweepPoint", "spikiness_sweep"]


@dataclass(frozen=True)
class SweepPoint:
    spikiness: float
    n_models: int
    total_rank: int | None
    series_rank: int | None
    total_better: int
    series_better: int
    series_smooth_share: float
    inverted: bool


@dataclass(frozen=True)
class SpikinessSweep:
    baseline: str
    metric: str
    points: list[SweepPoint]  # by spikiness ascending

    @property
    def inverted_at(self) -> list[float]:
        return [p.spikiness for p in self.points if p.inverted]


def spikiness_sweep(tables: Mapping[float, pd.DataFrame], *, spec: LeaderboardSpec, metric: str) -> SpikinessSweep:
    """The baseline's rank at the total and per entity at each spikiness setting.

    Parameters
    ----------
    tables : mapping of float to DataFrame
        Spikiness setting -> ``ScoreSet.table`` of that panel, with units ``total`` and ``series``.
    spec : LeaderboardSpec
    metric : str
        Block metric the ranks are on.

    References
    ----------
    Evaluation-choices paper, section 4.2 ("Turn it up from smooth and the entity half of the inversion
    assembles first").
    """
    if not tables:
        raise InputError("tables must map at least one spikiness setting to its score set")
    points = []
    for setting in sorted(tables):
        scores = prepared(tables[setting])
        if not {"total", "series"} <= set(scores):
            raise InputError(
                f"spikiness {setting}: the score set needs units 'total' and 'series', has {sorted(scores)}"
            )
        total = unit_column(scores["total"], spec=spec, metrics=(metric,))
        series = unit_column(scores["series"], spec=spec, metrics=(metric,))
        cells = scores["series"].blocks().drop_duplicates(["series_id", "origin"])
        n = max(total.n_models, series.n_models)
        r_t, r_s = total.baseline_rank[metric], series.baseline_rank[metric]
        smooth = float((cells["demand_class"] == "smooth").mean()) if len(cells) else float("nan")
        points.append(
            SweepPoint(
                float(setting),
                n,
                r_t,
                r_s,
                total.n_better,
                series.n_better,
                smooth,
                bool(r_t is not None and r_s is not None and r_t <= 2 and r_s >= series.n_models - 2),
            )
        )
    return SpikinessSweep(spec.baseline, metric, points)
