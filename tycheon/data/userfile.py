"""A user's own data (CSV, parquet or a DataFrame in long format) mapped onto a panel.

User data is never assumed redistributable: the panel is marked ``redistributable = False`` (unless the
caller says otherwise) and says so in ``meta["warnings"]`` (a typed :class:`~tycheon.data.caveats.Caveat`),
which travel into every result built from it.
A *static universe* (the series are today's customers or products, looked at backwards) suffers
survivorship bias: entities that left before the snapshot are missing, which flatters every method; a
panel declared ``static_universe=True`` carries that warning too. A frequency or season length inferred
from the data is said in a warning as well, so a reader knows it was not declared.

Where the data came from is recorded as the file *name* and its sha256 (``meta["file"]``), never as a
path: results built from a user file must not carry the user's folders.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pandas as pd

from tycheon._typing import EdgeNan, NanPolicy
from tycheon.data.caveats import Caveat
from tycheon.data.panel import DEFAULT_SEASON_LENGTH, Panel
from tycheon.errors import InputError

__all__ = [
    "SURVIVORSHIP_WARNING",
    "UserFileError",
    "file_sha256",
    "load_user_file",
    "panel_from_frame",
    "read_user_file",
]

SURVIVORSHIP_WARNING = (
    "survivorship: the series form a static universe (entities present at the snapshot, looked at "
    "backwards); entities that exited earlier are missing, so accuracy is likely overstated"
)
_READERS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


class UserFileError(InputError):
    """Raised when a user file cannot be read, lacks a mapped column or needs a setting it does not have."""


def file_sha256(path: str | Path) -> str:
    """sha256 (hex) of a file's bytes."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_user_file(path: str | Path) -> pd.DataFrame:
    """Read a ``.csv``, ``.parquet`` or ``.pq`` file (chosen by suffix) as it is.

    Raises
    ------
    UserFileError
        Unknown suffix, missing file, or a file the reader refuses.
    """
    path = Path(path)
    kind = _READERS.get(path.suffix.lower())
    if kind is None:
        raise UserFileError(f"{path.name}: unknown file type {path.suffix!r}; accepted suffixes: {sorted(_READERS)}")
    if not path.is_file():
        raise UserFileError(f"{path}: no such file")
    try:
        return pd.read_csv(path) if kind == "csv" else pd.read_parquet(path)
    except (OSError, ValueError, pd.errors.ParserError) as err:
        raise UserFileError(f"{path.name}: cannot be read as {kind} ({err})") from err


def panel_from_frame(
    frame: pd.DataFrame,
    *,
    series_col: str,
    period_col: str,
    value_col: str,
    available_at_col: str | None = None,
    freq: str | None = None,
    season_length: int | None = None,
    level_cols: tuple[str, ...] | list[str] = (),
    weight_col: str | None = None,
    static_universe: bool = False,
    nan_policy: NanPolicy = "raise",
    edge_nan: EdgeNan = "policy",
    redistributable: bool = False,
    licence: str | None = None,
    source: str = "user data",
    file: dict[str, str] | None = None,
    name: str = "user_file",
) -> Panel:
    """Map a user's long table onto a panel (see :func:`load_user_file` for the parameters).

    ``source`` names the data in messages and warnings (a file name, never a path); ``file`` is recorded
    as ``meta["file"]`` (``{"name", "sha256"}``).
    """
    level_cols = list(level_cols)
    static_cols = level_cols + ([weight_col] if weight_col else [])
    wanted = [series_col, period_col, value_col, *static_cols] + ([available_at_col] if available_at_col else [])
    missing = [c for c in dict.fromkeys(wanted) if c not in frame.columns]
    if missing:
        holder = "the file" if file is not None else "the table"
        raise UserFileError(f"{source}: missing column(s) {missing}; {holder} has {list(frame.columns)}")

    attrs = None
    if static_cols:
        keyed = frame[[series_col, *static_cols]].dropna(subset=[series_col])
        keyed = keyed.assign(**{series_col: keyed[series_col].astype(str)})
        varying = keyed.groupby(series_col, observed=True)[static_cols].nunique(dropna=False).gt(1)
        if varying.any().any():
            cols = list(varying.columns[varying.any()])
            ids = list(varying.index[varying.any(axis=1)][:5])
            raise UserFileError(
                f"{source}: static column(s) {cols} vary within series {ids}; levels and weights must be "
                "constant per series"
            )
        attrs = keyed.drop_duplicates(series_col).set_index(series_col)
        if weight_col:
            attrs = attrs.rename(columns={weight_col: "weight"})
        attrs.index.name = "series_id"

    warnings: list[Caveat | str] = []
    if not redistributable:
        warnings.append(
            Caveat(
                "not_redistributable",
                f"not redistributable: {name} is user data from {source}; do not publish raw values",
            )
        )
    if static_universe:
        warnings.append(Caveat("survivorship", f"{name}: {SURVIVORSHIP_WARNING}"))
    meta: dict[str, Any] = {
        "synthetic": False,
        "redistributable": bool(redistributable),
        "source": source,
        "licence": licence or ("user data (not redistributable)" if not redistributable else "user data"),
        "static_universe": bool(static_universe),
        "warnings": warnings,
    }
    if file is not None:
        meta["file"] = dict(file)
    panel = Panel.from_long(
        frame,
        series_col=series_col,
        period_col=period_col,
        value_col=value_col,
        available_at_col=available_at_col,
        freq=freq,
        season_length=season_length,
        attributes=attrs,
        levels=tuple(level_cols),
        name=name,
        nan_policy=nan_policy,
        edge_nan=edge_nan,
        meta=meta,
    )
    inferred: dict[str, str | int] = {}
    if freq is None:
        inferred["freq"] = panel.freq
    if season_length is None:
        base = panel.freq.split("-")[0]
        if base not in DEFAULT_SEASON_LENGTH:
            raise UserFileError(
                f"{source}: the season length of frequency {panel.freq!r} is ambiguous; pass it "
                f"(--season / season_length); known defaults: {DEFAULT_SEASON_LENGTH}"
            )
        inferred["season_length"] = panel.season_length
    if inferred:
        said = " and ".join(f"{k.replace('_', ' ')} {v!r}" for k, v in inferred.items())
        panel.meta["inferred"] = inferred
        panel.meta["warnings"].append(f"inferred: {said} inferred from the data of {name}, not declared")
    return panel


def load_user_file(
    path: str | Path,
    *,
    series_col: str,
    period_col: str,
    value_col: str,
    available_at_col: str | None = None,
    freq: str | None = None,
    season_length: int | None = None,
    level_cols: tuple[str, ...] | list[str] = (),
    weight_col: str | None = None,
    static_universe: bool = False,
    nan_policy: NanPolicy = "raise",
    edge_nan: EdgeNan = "policy",
    redistributable: bool = False,
    licence: str | None = None,
    name: str = "user_file",
) -> Panel:
    """Read a CSV or parquet file (chosen by suffix) into a panel.

    Parameters
    ----------
    path : str or Path
        ``.csv``, ``.parquet`` or ``.pq`` file.
    series_col, period_col, value_col : str
        Columns holding the series id, the period start stamp and the value.
    available_at_col : str, optional
        Column of publication times; default: each value is available at the end of its period.
    freq, season_length : optional
        Passed to :meth:`Panel.from_long`; inferred when omitted (and then said in a warning). A season
        length is inferred only for frequencies with one conventional cycle (``DEFAULT_SEASON_LENGTH``).
    level_cols : sequence of str
        Static columns that are hierarchy levels (constant within a series).
    weight_col : str, optional
        Static per-series weight column (stored as attribute ``weight``).
    static_universe : bool
        True when the file lists only entities alive at a snapshot: adds the survivorship warning.
    nan_policy : {"raise", "zero", "drop_series"}
    edge_nan : {"policy", "unlisted"}
        See :mod:`tycheon.data.panel`.
    redistributable : bool
        False (default) marks the panel and every result from it as not redistributable.
    licence : str, optional
        The data's licence, recorded in ``meta``.

    Raises
    ------
    UserFileError
        Missing file, unknown suffix, unreadable file, a mapped column absent, a level/weight column
        that varies within a series, or a season length that cannot be inferred.
    PanelValidationError
        When the mapped table fails panel validation.
    """
    path = Path(path)
    frame = read_user_file(path)
    return panel_from_frame(
        frame,
        series_col=series_col,
        period_col=period_col,
        value_col=value_col,
        available_at_col=available_at_col,
        freq=freq,
        season_length=season_length,
        level_cols=level_cols,
        weight_col=weight_col,
        static_universe=static_universe,
        nan_policy=nan_policy,
        edge_nan=edge_nan,
        redistributable=redistributable,
        licence=licence,
        source=f"file {path.name}",
        file={"name": path.name, "sha256": file_sha256(path)},
        name=name,
    )
