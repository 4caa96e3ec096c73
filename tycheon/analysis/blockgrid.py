"""Block scores as a ``[(series, origin), model]`` frame, by one scatter instead of a group-by.

The leaderboards (``pivot_table``, Friedman/Nemenyi) and the analyses (``set_index(...).unstack``) read
block scores as one row per (series, origin) block and one column per model. At M5 size those pandas
reshapes hash 2.5 million text keys, seconds per table set (benchmarks/perf/MEASUREMENTS.md).
:func:`block_grid` builds the same frame from the categoricals' codes: the blocks' (series, origin) pairs
are coded in sorted label order (:func:`tycheon._codes.factorize_sorted`,
:func:`~tycheon._codes.unique_inverse`) and each score is written into its cell. It answers None where the
reshape would do something the scatter does not (a key that is not a categorical with sorted categories, a
missing key, two rows of one block), and the caller then runs the reshape itself.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from tycheon._codes import factorize_sorted, unique_inverse

__all__ = ["block_grid"]


def block_grid(blocks: pd.DataFrame, metric: str, *, categorical: bool) -> pd.DataFrame | None:
    """``[(series_id, origin), model]`` frame of ``blocks[metric]``, or None where the scatter would not
    give the reshape's frame.

    Parameters
    ----------
    blocks : DataFrame
        Block scores with categorical ``series_id`` and ``model`` (sorted categories), ``origin``.
    metric : str
        The column to spread.
    categorical : bool
        True: the frame of ``pivot_table(index=["series_id", "origin"], columns="model", values=metric,
        aggfunc="first", observed=True)``, whose labels stay categoricals (None where a value is NaN:
        "first" skips NaN and ``dropna`` drops all-NaN rows). False: the frame of
        ``set_index(["series_id", "origin", "model"])[metric].unstack("model")`` on the labels as values
        (object text; NaN values kept).

    Returns
    -------
    DataFrame or None
        Rows: the (series, origin) pairs present, in sorted label order; columns: the models present,
        sorted; NaN where a model has no score for a block.
    """
    sid, model = blocks["series_id"], blocks["model"]
    if not all(isinstance(c.dtype, pd.CategoricalDtype) for c in (sid, model)):
        return None
    values = blocks[metric].to_numpy(dtype=np.float64)
    if categorical and np.isnan(values).any():
        return None
    s_codes, s_labels = factorize_sorted(sid)
    m_codes, m_labels = factorize_sorted(model)
    o_codes, origins = factorize_sorted(blocks["origin"].to_numpy())
    if len(values) and min(int(s_codes.min()), int(m_codes.min()), int(o_codes.min())) < 0:
        return None
    n_o, n_m = len(origins), len(m_labels)
    uniq, row = unique_inverse(s_codes * n_o + o_codes, size=len(s_labels) * n_o)
    taken = np.zeros((len(uniq), n_m), dtype=bool)
    taken[row, m_codes] = True
    if int(np.count_nonzero(taken)) != len(values):
        return None  # a block with two rows: the reshape picks one ("first") or refuses (unstack)
    del taken
    grid = np.full((len(uniq), n_m), np.nan)
    grid[row, m_codes] = values
    if categorical:
        series_level = pd.CategoricalIndex(s_labels, dtype=sid.dtype)
        columns = pd.CategoricalIndex(m_labels, dtype=model.dtype, name="model")
    else:
        series_level = pd.Index(s_labels, dtype=object)
        columns = pd.Index(m_labels, dtype=object, name="model")
    # the levels and codes the reshapes' index has (the stubs type them as plain sequences)
    index = pd.MultiIndex(
        levels=[series_level, pd.DatetimeIndex(origins)],  # type: ignore[list-item]
        codes=[uniq // n_o, uniq % n_o],  # type: ignore[list-item]
        names=["series_id", "origin"],
    )
    return pd.DataFrame(grid, index=index, columns=columns)
