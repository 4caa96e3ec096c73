"""Score-set columns allocated and touched ahead of time, while the engine's tasks run.

At panel scale the score set is the largest object of a run (about 150 bytes per row: 11 million rows
for 30,490 series x 8 origins x 6 steps x 8 models is 1.7 GB), and writing it is dominated not by the
copies but by the first touch of fresh memory (page faults; on a virtual machine each one can also
fault on the host). The main process is mostly idle while the workers forecast, so the engine asks for
the columns before it hands out the tasks: a background thread allocates each column at an upper bound
of the row count and faults every page in (:func:`~tycheon.backtest.heap.touch_pages`, GIL released), and
:func:`~tycheon.backtest.records.build_scoreset` then writes into memory that is already mapped.

The upper bound is exact up to the rows no model keeps: every (series, origin) pair the engine found
eligible times the horizon times the number of models (rows drop out where a target is unobserved, a
model needs more history or fails). When fewer than :data:`MIN_USE` of the rows are used the buffers are
dropped and the builder allocates the exact size itself, so a loose bound never pins much idle memory.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Mapping, Sequence

import numpy as np

from tycheon.backtest.heap import small_page_array, touch_pages
from tycheon.backtest.scoreset import SCORESET_COLUMNS, quantile_column

__all__ = [
    "BAND_COLUMNS",
    "CODE_DTYPES",
    "CONSTANT_COLUMNS",
    "MIN_USE",
    "ColumnBuffers",
    "buffer_dtype",
    "code_dtype",
    "code_dtypes",
    "known_constant",
]

MIN_USE = 0.75

BAND_COLUMNS = ("lo80", "hi80", "lo95", "hi95")
"""The conformal band columns of the score set."""

CONSTANT_COLUMNS = ("unit", "season_length", "weight", "has_quantiles", "has_samples")
"""Score-set columns that often hold one value in a whole run (one unit of analysis, one season length,
equal series weights, no model quantiles or sample paths): the writer keeps such a column as that value
alone (stride 0, read-only, like a band level without bands) and allocates it only when a block writes
another value. Those the run's settings make constant (:func:`known_constant`) are not prepared here."""


def known_constant(*, n_units: int, quantile_levels: Sequence[float], n_samples: int) -> tuple[str, ...]:
    """The :data:`CONSTANT_COLUMNS` that a run's settings alone make one value in every row: ``unit`` with
    one unit of analysis, ``has_quantiles`` when no quantile level is asked for, ``has_samples`` without
    sample paths (at 30,490 series x 8 baselines, 32 MB that no thread needs to touch)."""
    return tuple(
        name
        for name, one in (
            ("unit", n_units == 1),
            ("has_quantiles", not quantile_levels),
            ("has_samples", not n_samples),
        )
        if one
    )


CODE_DTYPES = {"model": "int16", "unit": "int16", "series_id": "int32", "demand_class": "int16"}
"""Dtype of the codes a text (``category``) column is written as when nothing bounds its distinct values
(:func:`code_dtypes` without bounds): series ids can be many, the others few."""


def code_dtype(n_categories: int) -> str:
    """The dtype pandas keeps a categorical's codes in for ``n_categories`` categories (int8 below 127,
    int16 below 32,767, then int32, as ``pandas.core.dtypes.cast.coerce_indexer_dtype``). Codes written
    in it become the table's column as they are; in a wider one pandas copies them into a new array
    when the categorical is made (a second copy of the column at the end of the run)."""
    n = int(n_categories)
    for dtype in ("int8", "int16", "int32"):
        if n < np.iinfo(dtype).max:
            return dtype
    return "int64"


def code_dtypes(bounds: Mapping[str, int] | None = None) -> dict[str, str]:
    """Codes dtype of every text column: :func:`code_dtype` of its bound on the distinct values (the
    engine knows them: its models, units, the demand classes and the series of every unit), else
    :data:`CODE_DTYPES`. A bound above the values actually written is safe: pandas then narrows the
    codes itself (a copy, the values unchanged)."""
    bounds = bounds or {}
    return {name: code_dtype(bounds[name]) if name in bounds else dtype for name, dtype in CODE_DTYPES.items()}


def buffer_dtype(name: str, dtype: str, codes: Mapping[str, str] | None = None) -> str:
    """The dtype a score-set column is written in: its codes' for a text column (``codes``, default
    :data:`CODE_DTYPES`), else its own."""
    return (codes or CODE_DTYPES)[name] if dtype == "category" else dtype


class ColumnBuffers:
    """Columns of ``capacity`` rows for a score set, allocated and touched in a background thread.

    Parameters
    ----------
    capacity : int
        Upper bound of the rows the score set will have.
    quantile_levels : sequence of float
        One float column per level.
    n_samples : int
        Width of the ``[row, sample]`` matrix (0: none).
    band_levels : sequence of int
        Band levels whose ``lo``/``hi`` columns are prepared (those where bands are expected).
    codes : mapping of str to str, optional
        Dtype of each text column's codes (:func:`code_dtypes`; default :data:`CODE_DTYPES`).
    constant : collection of str
        Columns not prepared: those the run holds at one value (:func:`known_constant`).
    """

    def __init__(
        self,
        capacity: int,
        *,
        quantile_levels: Sequence[float] = (),
        n_samples: int = 0,
        band_levels: Sequence[int] = (),
        codes: Mapping[str, str] | None = None,
        constant: Collection[str] = (),
    ) -> None:
        self.capacity = int(capacity)
        # the text columns are written as integer codes (``codes``); the band columns are not prepared
        # (the writer allocates a level's pair only when a band at that level arrives)
        expected = {f"{side}{level}" for level in band_levels for side in ("lo", "hi")}
        specs: list[tuple[str, str, tuple[int, ...]]] = [
            (name, buffer_dtype(name, dtype, codes), (self.capacity,))
            for name, dtype in SCORESET_COLUMNS.items()
            if (name not in BAND_COLUMNS or name in expected) and name not in constant
        ]
        specs += [(quantile_column(float(q)), "float64", (self.capacity,)) for q in quantile_levels]
        if n_samples:
            specs.append(("samples", "float64", (self.capacity, int(n_samples))))
        self._specs = specs
        self._arrays: dict[str, np.ndarray] = {}
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._allocate, name="tycheon-columns", daemon=True)
        self._thread.start()

    def _allocate(self) -> None:
        try:
            for name, dtype, shape in self._specs:
                array = small_page_array(shape, dtype)  # see .heap: huge pages cost seconds to fault in
                touch_pages(array)  # every page faulted in, GIL released
                self._arrays[name] = array
        except MemoryError as err:  # the builder then allocates exact sizes itself
            self._error = err
            self._arrays.clear()

    def take(self, total: int) -> dict[str, np.ndarray]:
        """Views of the first ``total`` rows of every column (waits for the thread), or an empty dict
        when the buffers cannot serve: ``total`` above the capacity, below :data:`MIN_USE` of it, or the
        allocation failed. Each view is handed out once."""
        self._thread.join()
        arrays, self._arrays = self._arrays, {}
        if self._error is not None or not arrays or total > self.capacity or total < MIN_USE * self.capacity:
            return {}
        return {name: array[:total] for name, array in arrays.items()}
