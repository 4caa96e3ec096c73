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

import codecs
import hashlib
import itertools
import os
import stat
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from tycheon._typing import EdgeNan, NanPolicy
from tycheon.data.caveats import Caveat
from tycheon.data.panel import DEFAULT_SEASON_LENGTH, Panel
from tycheon.errors import InputError

__all__ = [
    "DEFAULT_MAX_ROWS",
    "SURVIVORSHIP_WARNING",
    "UserFileError",
    "file_sha256",
    "load_user_file",
    "nested_columns",
    "panel_from_frame",
    "read_user_file",
]

SURVIVORSHIP_WARNING = (
    "survivorship: the series form a static universe (entities present at the snapshot, looked at "
    "backwards); entities that exited earlier are missing, so accuracy is likely overstated"
)
_READERS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
#: The most rows :func:`read_user_file` loads unless told otherwise: the size check runs before loading.
DEFAULT_MAX_ROWS = 10_000_000
# pandas' documented default missing-value tokens of ``read_csv`` (its ``na_values`` section), given by
# name to every column but the id when the id is read as text
_NA_TOKENS = (
    "",
    "#N/A",
    "#N/A N/A",
    "#NA",
    "-1.#IND",
    "-1.#QNAN",
    "-NaN",
    "-nan",
    "1.#IND",
    "1.#QNAN",
    "<NA>",
    "N/A",
    "NA",
    "NULL",
    "NaN",
    "None",
    "n/a",
    "nan",
    "null",
)


class UserFileError(InputError):
    """Raised when a user file cannot be read, lacks a mapped column or needs a setting it does not have."""


def file_sha256(path: str | Path) -> str:
    """sha256 (hex) of a file's bytes."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_user_file(
    path: str | Path, *, id_col: str | None = None, max_rows: int | None = DEFAULT_MAX_ROWS
) -> pd.DataFrame:
    """Read a ``.csv``, ``.parquet`` or ``.pq`` file (chosen by suffix) as it is.

    The path is looked at (``stat``) before anything opens it, so a folder, a FIFO or a device is named as
    such and a pipe never blocks the process. The size is checked before the data are loaded: a parquet
    file's row count comes from its footer, a CSV's from its byte size (each row takes at least one byte
    per column) or, when that bound is over the limit, from its newlines counted in blocks.

    Parameters
    ----------
    path : str or Path
        The file.
    id_col : str, optional
        The series id column. In a CSV it is read as text, as written: no type guessing (``007`` and
        ``7`` stay two ids, ``001`` keeps its zeros) and no missing-value tokens (``NA`` is an id; only an
        empty cell is a missing id). The other columns keep pandas' reading (``NA``, ``n/a``, an empty cell
        ... are NaN in the value column).
    max_rows : int or None
        Refuse a file of more rows than this before loading it (default :data:`DEFAULT_MAX_ROWS`);
        None reads any size. The command line's ``--max-rows`` sets it.

    Raises
    ------
    UserFileError
        Missing path, a folder or other non-regular file, unknown suffix, more rows than ``max_rows``,
        a CSV that is not UTF-8, or a file the reader refuses.
    """
    path = Path(path)
    kind = _READERS.get(path.suffix.lower())
    if kind is None and not os.path.lexists(path):  # a missing file of a type we do not read: say the type
        raise UserFileError(f"{path.name}: unknown file type {path.suffix!r}; accepted suffixes: {sorted(_READERS)}")
    _check_regular_file(path)
    if kind is None:
        raise UserFileError(f"{path.name}: unknown file type {path.suffix!r}; accepted suffixes: {sorted(_READERS)}")
    try:
        if kind == "parquet":
            _check_size(path, _parquet_rows(path), max_rows)
            return pd.read_parquet(path)
        columns = list(pd.read_csv(path, nrows=0, encoding="utf-8").columns)
        _check_size(path, _csv_rows(path, n_columns=max(len(columns), 1), max_rows=max_rows), max_rows)
        if id_col is None or id_col not in columns:
            return pd.read_csv(path, encoding="utf-8")
        # keep_default_na=False drops the NA tokens of every column, so the others get them back by name
        na_values = {c: ([""] if c == id_col else list(_NA_TOKENS)) for c in columns}
        return pd.read_csv(path, encoding="utf-8", dtype={id_col: str}, keep_default_na=False, na_values=na_values)
    except UnicodeDecodeError as err:
        raise UserFileError(
            f"{path}: not UTF-8 text ({_first_non_utf8(path)} cannot be decoded); save it as UTF-8 (in Excel: "
            "'CSV UTF-8'), or as parquet"
        ) from err
    except (OSError, ValueError, pd.errors.ParserError, pa.ArrowException) as err:
        raise UserFileError(f"{path.name}: cannot be read as {kind} ({err})") from err


def _check_regular_file(path: Path) -> None:
    """Refuse a missing path, a folder, or a FIFO/socket/device, from ``stat`` alone (nothing is opened)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError as err:
        raise UserFileError(f"{path}: no such file; give a .csv or .parquet file") from err
    except OSError as err:
        raise UserFileError(
            f"{path}: cannot be looked at ({err.strerror}); give a readable .csv or .parquet file"
        ) from err
    if stat.S_ISDIR(mode):
        raise UserFileError(f"{path}: is a folder, not a file; give a .csv or .parquet file")
    if not stat.S_ISREG(mode):
        what = "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket or device"
        raise UserFileError(
            f"{path}: is {what}, not a regular file; save the data to a .csv or .parquet file and give that"
        )


def _first_non_utf8(path: Path) -> str:
    """Where a file stops being UTF-8: ``"byte 0xe9 at offset 17 (line 2)"`` (the reader's own error counts
    from the start of the block it was decoding, not of the file)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset, lines = 0, 1
    with path.open("rb") as fh:
        for block in itertools.chain(iter(lambda: fh.read(1 << 20), b""), [b""]):  # b"": the end (a cut character)
            pending = len(decoder.getstate()[0])  # an unfinished character carried from the last block
            try:
                decoder.decode(block, final=not block)
            except UnicodeDecodeError as err:
                at = offset - pending + err.start
                line = lines + err.object[: err.start].count(b"\n")
                return f"byte 0x{err.object[err.start]:02x} at offset {at} (line {line})"
            offset += len(block)
            lines += block.count(b"\n")
    return "a byte"


def _parquet_rows(path: Path) -> int:
    """Rows of a parquet file, from its footer (no data read)."""
    return int(pq.ParquetFile(path).metadata.num_rows)


def _csv_rows(path: Path, *, n_columns: int, max_rows: int | None) -> int:
    """Rows of a CSV (its newlines less the header), or a bound that is within ``max_rows``.

    A row of ``n_columns`` fields takes at least ``n_columns`` bytes (separators and newline), so a file
    of ``size`` bytes has at most ``size // n_columns`` rows; only when that bound is over the limit are
    the newlines counted, and the count stops once it is over. A quoted field with a newline in it counts
    as one more row, which errs towards refusing.
    """
    bound = path.stat().st_size // n_columns
    if max_rows is None or bound <= max_rows:
        return bound
    lines = 0
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            lines += block.count(b"\n")
            if lines - 1 > max_rows:
                break
    return max(lines - 1, 0)


def _check_size(path: Path, rows: int, max_rows: int | None) -> None:
    if max_rows is not None and rows > max_rows:
        raise UserFileError(
            f"{path.name}: {rows:,} rows or more, over the limit of {max_rows:,} rows checked before loading "
            "(a long table takes memory per row); raise the limit with --max-rows N (max_rows=N in Python), "
            "or evaluate a subset of the series"
        )


def nested_columns(frame: pd.DataFrame, columns: list[str] | tuple[str, ...]) -> list[str]:
    """The ``columns`` of ``frame`` whose values cannot be compared or grouped: dicts, lists or arrays, as
    pandas reads a parquet struct, list or map column. Such a column can be neither an id nor a level."""
    nested = []
    for col in columns:
        if frame[col].dtype != object:
            continue
        try:
            pd.factorize(frame[col])
        except TypeError:
            nested.append(col)
    return nested


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
    nested = nested_columns(frame, static_cols)
    if nested:
        raise UserFileError(
            f"{source}: level/weight column(s) {nested} hold nested values (struct, list or map), not one "
            "value per series; levels and weights must be text or numbers"
        )
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
    max_rows: int | None = DEFAULT_MAX_ROWS,
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
    max_rows : int or None
        A file of more rows is refused before it is loaded (default :data:`DEFAULT_MAX_ROWS`; None: no
        limit). See :func:`read_user_file`, which also says how the id column of a CSV is read (as text).

    Raises
    ------
    UserFileError
        Missing file, a folder or FIFO, unknown suffix, too many rows, a CSV that is not UTF-8, an
        unreadable file, a mapped column absent, a level/weight column that varies within a series, or a
        season length that cannot be inferred.
    PanelValidationError
        When the mapped table fails panel validation.
    """
    path = Path(path)
    frame = read_user_file(path, id_col=series_col, max_rows=max_rows)
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
