"""A user's own data (CSV or parquet) mapped onto a panel.

User data is never assumed redistributable: the panel is marked ``redistributable = False`` and says
so in ``meta["warnings"]``, which travel into every result built from it. A *static universe* (the
series are today's customers or products, looked at backwards) suffers survivorship bias: entities
that left before the snapshot are missing, which flatters every method; a panel declared
``static_universe=True`` carries that warning too.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tycheon._typing import NanPolicy
from tycheon.data.panel import Panel

__all__ = ["load_user_file", "UserFileError", "SURVIVORSHIP_WARNING"]

SURVIVORSHIP_WARNING = (
    "survivorship: the series form a static universe (entities present at the snapshot, looked at "
    "backwards); entities that exited earlier are missing, so accuracy is likely overstated"
)
_READERS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


class UserFileError(ValueError):
    """Raised when a user file cannot be read or lacks a mapped column."""


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
        Passed to :meth:`Panel.from_long` (inferred when omitted).
    level_cols : sequence of str
        Static columns that are hierarchy levels (constant within a series).
    weight_col : str, optional
        Static per-series weight column (stored as attribute ``weight``).
    static_universe : bool
        True when the file lists only entities alive at a snapshot: adds the survivorship warning.
    nan_policy : {"raise", "zero"}
        See :mod:`tycheon.data.panel`.

    Raises
    ------
    UserFileError
        Missing file, unknown suffix, unreadable file, a mapped column absent, or a level/weight column
        that varies within a series.
    PanelValidationError
        When the mapped table fails panel validation.
    """
    path = Path(path)
    kind = _READERS.get(path.suffix.lower())
    if kind is None:
        raise UserFileError(
            f"{path}: unknown file type {path.suffix!r}; accepted suffixes: {sorted(_READERS)}"
        )
    if not path.is_file():
        raise UserFileError(f"{path}: no such file")
    try:
        frame = pd.read_csv(path) if kind == "csv" else pd.read_parquet(path)
    except (OSError, ValueError, pd.errors.ParserError) as err:
        raise UserFileError(f"{path}: cannot be read as {kind}") from err

    level_cols = list(level_cols)
    static_cols = level_cols + ([weight_col] if weight_col else [])
    wanted = [series_col, period_col, value_col, *static_cols]
    if available_at_col:
        wanted.append(available_at_col)
    missing = [c for c in wanted if c not in frame.columns]
    if missing:
        raise UserFileError(f"{path}: missing column(s) {missing}; the file has {list(frame.columns)}")

    attrs = None
    if static_cols:
        keyed = frame[[series_col, *static_cols]].assign(**{series_col: frame[series_col].astype(str)})
        varying = keyed.groupby(series_col)[static_cols].nunique(dropna=False).gt(1)
        if varying.any().any():
            cols = list(varying.columns[varying.any()])
            ids = list(varying.index[varying.any(axis=1)][:5])
            raise UserFileError(
                f"{path}: static column(s) {cols} vary within series {ids}; levels and weights must be "
                "constant per series"
            )
        attrs = keyed.drop_duplicates(series_col).set_index(series_col)
        if weight_col:
            attrs = attrs.rename(columns={weight_col: "weight"})
        attrs.index.name = "series_id"

    warnings = [f"{name}: user data from {path.name}; not redistributable, do not publish raw values"]
    if static_universe:
        warnings.append(f"{name}: {SURVIVORSHIP_WARNING}")
    meta = {
        "synthetic": False,
        "redistributable": False,
        "source": f"user file {path.name}",
        "licence": "user data (not redistributable)",
        "static_universe": bool(static_universe),
        "warnings": warnings,
    }
    return Panel.from_long(
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
        meta=meta,
    )
