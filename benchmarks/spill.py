"""Columns of a score-set table held on disk while stages that do not read them run.

At M5 size the table of a run is 2.2 GB and every statistics stage works beside it. The leaderboards
and interval tables are the only readers of the conformal bands and the models' own quantiles
(``lo80 .. hi95``, ``q<level>``: 56 bytes of a row's ~150, 0.8 GB); the analyses read the point
forecasts (:data:`tycheon.analysis.prepared.READ_COLUMNS`), the replay neither bands nor quantiles
(:data:`tycheon.analysis.replay._READ`: its served combination has none), and the sensitivity audit runs
its own backtests. So after the leaderboards those columns go to a temporary folder (``.npy`` files,
exact bytes) and come back, in their places, before the sidecar frame is built from the table: the
sidecar's bytes, and so its hash, are those of a table that never left memory.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

import numpy as np
import pandas as pd

from tycheon._frames import drop_columns

__all__ = ["SpilledColumns"]


class SpilledColumns:
    """``columns`` of ``table`` moved to disk (dropped from the frame in place) until :meth:`restore`.

    Use as a context manager: leaving the block restores the columns (also on an error, so the frame is
    whole again) and removes the folder. Only numpy-dtype columns are spilled; a column whose dtype is
    an extension type (a categorical) is refused.
    """

    def __init__(self, table: pd.DataFrame, columns: Sequence[str]) -> None:
        self.table = table
        names = list(table.columns)
        self._spilled: list[tuple[int, str, Path]] = []
        self._dir: Path | None = None
        wanted = [c for c in names if c in set(columns)]
        for c in wanted:
            if not isinstance(table[c].dtype, np.dtype):
                raise TypeError(f"column {c!r} has dtype {table[c].dtype}; only numpy-dtype columns are spilled")
        if not wanted or not len(table):
            return
        self._dir = Path(tempfile.mkdtemp(prefix="tycheon-spill-"))
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
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def __enter__(self) -> SpilledColumns:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.restore()
