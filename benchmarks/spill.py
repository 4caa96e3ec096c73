"""Columns of a score-set table held on disk while stages that do not read them run.

At M5 size the table of a run takes gigabytes, and every statistics stage works beside it, though none
reads every column. The leaderboards and interval tables read the keys, points, scales and bands
(:func:`tycheon.analysis.leaderboard.columns_read`), not the publication dates, weights, season lengths
or, unless a table ranks CRPS, the models' quantiles; and they are the only readers of the conformal
bands and quantiles (``lo80 .. hi95``, ``q<level>``: 56 bytes of a row's ~150): the analyses read the
point forecasts (:data:`tycheon.analysis.prepared.READ_COLUMNS`), the replay neither bands nor quantiles
(its served combination has none), and the sensitivity audit runs its own backtests. So the pipeline
(:func:`benchmarks.dataset_part.rolling_part`) runs them as a :class:`Stages` plan: each stage names the
columns it reads, and the others wait in a temporary folder (raw column files, exact bytes, written
past the page cache by :mod:`benchmarks.column_file`) while it runs. Every column comes back, in its
place, when the plan ends, before the sidecar frame is built from the table: the sidecar's bytes, and
so its hash, are those of a table that never left memory. Measured peaks: benchmarks/perf/MEASUREMENTS.md.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

import numpy as np
import pandas as pd

from benchmarks.column_file import ColumnFile, read_column, write_column
from tycheon._frames import drop_columns
from tycheon.backtest.scoreset import SORT_KEYS, concat_in_key_order

__all__ = ["SpilledColumns", "Stages", "concat_parked", "spillable"]


def spillable(table: pd.DataFrame, columns: Sequence[str]) -> list[str]:
    """Those of ``columns`` :class:`SpilledColumns` can hold (numeric, bool and datetime ones)."""
    return [c for c in columns if _exact_on_disk(table[c].dtype)]


def _exact_on_disk(dtype: object) -> bool:
    """A numpy dtype without Python objects: ``np.save`` / ``np.load`` give its bytes back as they were."""
    return isinstance(dtype, np.dtype) and not dtype.hasobject


class SpilledColumns:
    """``columns`` of ``table`` moved to disk (dropped from the frame in place) until :meth:`restore`.

    Use as a context manager: leaving the block restores the columns (also on an error, so the frame is
    whole again) and removes the folder. Only numeric, bool and datetime (numpy) columns are spilled; a
    categorical or object column is refused (:func:`spillable` picks the others). A column comes back at
    its place among the columns present then (the order the frame had when it was spilled).
    """

    def __init__(self, table: pd.DataFrame, columns: Sequence[str], *, order: Sequence[str] | None = None) -> None:
        self.table = table
        names = list(table.columns)
        # the frame's whole column order, which restored columns take their places in (``order``: that of a
        # frame whose other columns are parked here later, see :func:`concat_parked`)
        self._order = {c: i for i, c in enumerate(names if order is None else order)}
        self._spilled: list[tuple[str, ColumnFile]] = []
        self._dir: Path | None = None
        wanted = [c for c in names if c in set(columns)]
        for c in wanted:
            if not _exact_on_disk(table[c].dtype):
                raise TypeError(
                    f"column {c!r} has dtype {table[c].dtype}; only numeric, bool and datetime columns are spilled"
                )
        if not wanted or not len(table):
            return
        for c in wanted:
            self.park(c, table[c].to_numpy())
        drop_columns(table, wanted)  # no copy of the columns that stay

    @property
    def columns(self) -> list[str]:
        """The spilled columns (empty once restored, or where none was asked for)."""
        return [c for c, _ in self._spilled]

    @property
    def order(self) -> list[str]:
        """The frame's whole column order (spilled columns included)."""
        return list(self._order)

    def park(self, name: str, values: np.ndarray) -> None:
        """Hold ``values`` on disk as the column ``name`` (one of the frame's whole order) until
        :meth:`restore`; the caller drops its own reference."""
        if name not in self._order:
            raise KeyError(f"column {name!r} has no place in the frame's columns {list(self._order)}")
        if self._dir is None:
            self._dir = Path(tempfile.mkdtemp(prefix="tycheon-spill-"))
            # never left behind: removed when this object goes, even if it is never restored (a failed run)
            self._finalizer = weakref.finalize(self, shutil.rmtree, str(self._dir), True)
        try:
            # past the page cache where the file system allows (benchmarks.column_file): a cached copy
            # would keep the bytes in memory, and was the slow path on the benchmark VM
            stored = write_column(self._dir / f"{self._order[name]}.col", values)
        except BaseException:  # nothing half-held: the folder goes, with every column parked so far
            self._spilled = []
            self._cleanup()
            raise
        self._spilled.append((name, stored))

    def load(self, name: str) -> np.ndarray:
        """A spilled column's values, read back without putting them in the frame (it stays spilled)."""
        return read_column(dict(self._spilled)[name])

    def put(self, name: str, values: np.ndarray) -> None:
        """Insert ``values`` as the column ``name`` of the table, at its place among the columns present
        (the frame's whole column order)."""
        place = self._order[name]
        present = [c for c in self.table.columns if self._order.get(c, len(self._order)) < place]
        self.table.insert(len(present), name, values)

    def restore(self, *, keep: Collection[str] = ()) -> pd.DataFrame:
        """Put every spilled column but ``keep`` back at its place in the table (in place); the folder is
        removed once nothing is left in it."""
        back = sorted((c for c, _ in self._spilled if c not in set(keep)), key=self._order.__getitem__)
        try:
            for name in back:
                self.put(name, self.load(name))
        finally:
            self._spilled = [(c, p) for c, p in self._spilled if c not in set(back)]
            if not self._spilled:
                self._cleanup()
        return self.table

    def discard(self) -> None:
        """Forget every spilled column (their files go; the frame is left as it is)."""
        self._spilled = []
        self._cleanup()

    def _cleanup(self) -> None:
        if self._dir is not None:
            self._finalizer()  # removes the folder, once
            self._dir = None

    def __enter__(self) -> SpilledColumns:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.restore()


def concat_parked(parked: Sequence[SpilledColumns], *, keep: Collection[str]) -> tuple[pd.DataFrame, SpilledColumns]:
    """The parked tables (each spilled whole, as the pipeline parks a finished model's table) concatenated
    in key order (:func:`tycheon.backtest.scoreset.concat_in_key_order`) with only the columns ``keep``
    (and the key columns, and those that cannot be spilled) in memory; every other column is joined from
    the parts' files, put in the table's row order and parked again, in the :class:`SpilledColumns`
    returned beside the table, whose :meth:`~SpilledColumns.restore` completes the table in its column
    order. Tables whose columns differ are restored whole and joined as
    :func:`~tycheon.backtest.scoreset.concat_tables` joins them.

    Memory: only the key columns of every part come back at once (to read the order from); every other
    column is then built one at a time, each part's values read back and copied into their stretches of
    one new column (:meth:`~tycheon.backtest.scoreset.RowOrder.gather`), so the peak is the table's
    ``keep`` columns plus one column and one part's column. Restoring every part before joining held the
    whole table and more; restoring every part's ``keep`` columns before joining them held each of them
    twice, and made twice the new memory, whose pages are slow to make on the benchmark VM (both
    measured in benchmarks/perf/MEASUREMENTS.md).
    """
    if not parked:
        raise ValueError("no parked tables to concatenate")
    whole = parked[0].order
    if any(p.order != whole for p in parked):
        for p in parked:
            p.restore()
        table, _ = concat_in_key_order([p.table for p in parked], release=True)
        return table, SpilledColumns(table, [], order=whole)
    # the key columns are read back and joined first (the order is read from them); every other spilled
    # column then passes through one at a time: each part's values read back in turn and copied into
    # their stretches of the result (RowOrder.gather), into the table if ``keep`` has it, else to disk
    for p in parked:
        p.restore(keep=[c for c in p.columns if c not in SORT_KEYS])
    table, rows = concat_in_key_order([p.table for p in parked], release=True)
    out = SpilledColumns(table, [], order=whole)
    for name in whole:
        if name in table.columns or not any(name in p.columns for p in parked):
            continue

        def part(i: int, name: str = name) -> np.ndarray:
            p = parked[i]
            return p.load(name) if name in p.columns else p.table[name].to_numpy()

        values = rows.gather(part) if rows is not None else np.concatenate([part(i) for i in range(len(parked))])
        if name in keep:
            out.put(name, values)
        else:
            out.park(name, values)
        del values
    for p in parked:
        p.discard()
    return table, out


class Stages:
    """A table's columns through the stages that read it: in memory only what the running stage reads.

    Each stage names the columns it reads (:meth:`stage`); on entering it, the table's other columns go to
    disk (those :func:`spillable` picks: keys and categoricals stay) and the ones it reads that were on
    disk come back, in their places. ``parked`` holds the columns already on disk when the plan starts
    (those :func:`concat_parked` left there). Leaving the plan (a ``with`` block, also on an error) puts
    every column back, so the table is whole again, in its column order, with its bytes unchanged::

        with Stages(table, parked=run.parked) as plan:
            with plan.stage(reads=columns_read()):
                leaderboards = leaderboard_tables(table, ...)
            with plan.stage(reads=()):  # reads none of the table
                audit = ...
    """

    def __init__(self, table: pd.DataFrame, *, parked: SpilledColumns | None = None) -> None:
        self.table = table
        self._order = list(table.columns) if parked is None else parked.order
        # the columns on disk, each group as it went there (every group places its columns in ``_order``)
        self._disk: list[SpilledColumns] = [parked] if parked is not None and parked.columns else []

    @property
    def columns(self) -> list[str]:
        """The table's whole column order (those on disk included)."""
        return list(self._order)

    @property
    def on_disk(self) -> list[str]:
        """The columns on disk now, in the table's column order."""
        away = {c for group in self._disk for c in group.columns}
        return [c for c in self._order if c in away]

    @contextmanager
    def stage(self, *, reads: Collection[str] | None) -> Iterator[pd.DataFrame]:
        """Run the block with the table holding the columns ``reads`` (``None``: every column) and no other
        column that can wait on disk. The columns stay so when the block ends: the next stage, or the end
        of the plan, moves them. The unread columns leave first, so the peak is the smaller table."""
        wanted = set(self._order) if reads is None else set(reads)
        away = spillable(self.table, [c for c in self.table.columns if c not in wanted])
        if away:
            self._disk.append(SpilledColumns(self.table, away, order=self._order))
        for group in self._disk:
            group.restore(keep=[c for c in group.columns if c not in wanted])
        self._disk = [group for group in self._disk if group.columns]
        yield self.table

    def restore(self) -> pd.DataFrame:
        """Put every column on disk back in its place (in place); the table is whole again."""
        groups, self._disk = self._disk, []
        try:
            for group in groups:
                group.restore()
        finally:
            for group in groups:  # the files of any group a failed restore left behind
                group.discard()
        return self.table

    def __enter__(self) -> Stages:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.restore()
