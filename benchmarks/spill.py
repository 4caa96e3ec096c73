"""Columns of a score-set table held on disk while stages that do not read them run.

At M5 size the table of a run is 2.2 GB and every statistics stage works beside it, though none reads
every column. The leaderboards and interval tables read the keys, points, scales and bands
(:func:`tycheon.analysis.leaderboard.columns_read`), not the publication dates, weights, season lengths
or, unless a table ranks CRPS, the models' quantiles (0.7 GB); and they are the only readers of the
conformal bands and quantiles (``lo80 .. hi95``, ``q<level>``: 56 bytes of a row's ~150, 0.8 GB): the
analyses read the point forecasts (:data:`tycheon.analysis.prepared.READ_COLUMNS`), the replay neither
bands nor quantiles (its served combination has none), and the sensitivity audit runs its own
backtests. So the pipeline (:func:`benchmarks.pipeline._rolling_part`) puts each stage's unread columns
in a temporary folder (``.npy`` files, exact bytes) while it runs; they come back, in their places,
before the sidecar frame is built from the table: the sidecar's bytes, and so its hash, are those of a
table that never left memory.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

import numpy as np
import pandas as pd

from tycheon._frames import drop_columns

__all__ = ["SpilledColumns", "spillable"]


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
    categorical or object column is refused (:func:`spillable` picks the others).
    """

    def __init__(self, table: pd.DataFrame, columns: Sequence[str]) -> None:
        self.table = table
        names = list(table.columns)
        self._spilled: list[tuple[int, str, Path]] = []
        self._dir: Path | None = None
        wanted = [c for c in names if c in set(columns)]
        for c in wanted:
            if not _exact_on_disk(table[c].dtype):
                raise TypeError(
                    f"column {c!r} has dtype {table[c].dtype}; only numeric, bool and datetime columns are spilled"
                )
        if not wanted or not len(table):
            return
        self._dir = Path(tempfile.mkdtemp(prefix="tycheon-spill-"))
        # never left behind: removed when this object goes, even if it is never restored (a failed run)
        self._finalizer = weakref.finalize(self, shutil.rmtree, str(self._dir), True)
        try:
            for i, c in enumerate(wanted):
                path = self._dir / f"{i}.npy"
                np.save(path, table[c].to_numpy(), allow_pickle=False)
                self._spilled.append((names.index(c), c, path))
        except BaseException:
            self._cleanup()
            raise
        drop_columns(table, wanted)  # no copy of the columns that stay

    @property
    def columns(self) -> list[str]:
        """The spilled columns (empty once restored, or where none was asked for)."""
        return [c for _, c, _ in self._spilled]

    def restore(self) -> pd.DataFrame:
        """Put every spilled column back at its place in the table (in place) and remove the folder."""
        try:
            for position, name, path in self._spilled:  # ascending positions: each lands where it was
                self.table.insert(position, name, np.load(path, allow_pickle=False))
        finally:
            self._spilled = []
            self._cleanup()
        return self.table

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
