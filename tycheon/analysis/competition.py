r"""Competition tables: each model's mean over series of a competition's own metric, ranked.

Read from the score set of a :class:`tycheon.backtest.competition.CompetitionHoldout` run (one origin,
every step of the published horizon); the per-series values come from :mod:`tycheon.metrics.point`:

- **M3** (Makridakis & Hibon 2000): sMAPE in percent,
  :math:`\frac{200}{h}\sum_{k=1}^{h} \frac{|y_k-\hat y_k|}{|y_k|+|\hat y_k|}`, averaged over series;
- **Tourism** (Athanasopoulos et al. 2011): MAPE in percent,
  :math:`\frac{100}{h}\sum_k |y_k-\hat y_k| / |y_k|`, and MASE scaled by the in-sample seasonal-naive
  MAE of the training part (the score set's ``scale_mae``), each averaged over series;
- **M1** (Makridakis et al. 1982): MAPE in percent, averaged over series.

MAPE is undefined for a series with a zero actual: such a series is left out and the count of series
that entered the mean is reported beside it. Models are ranked by that mean with
:func:`tycheon.stats.ranking.rank_by_mean` (lower is better, tied means share the lower rank); a model
without a finite mean has no rank.

References
----------
Makridakis, S. et al. (1982). The accuracy of extrapolation (time series) methods. J. Forecasting 1(2).
Makridakis, S. & Hibon, M. (2000). The M3-Competition. IJF 16(4).
Athanasopoulos, G., Hyndman, R. J., Song, H. & Wu, D. C. (2011). The tourism forecasting competition.
IJF 27(3).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from tycheon.metrics import point as point_metrics
from tycheon.metrics.errors import MetricInputError
from tycheon.stats.ranking import rank_by_mean

__all__ = ["COMPETITION_METRICS", "DEFINITIONS", "REFERENCES", "competition_table", "per_series"]

DEFINITIONS = {
    "smape": "sMAPE = 200/h * sum_h |y_h - f_h| / (|y_h| + |f_h|), percent, mean over series "
    "(M3, Makridakis & Hibon 2000)",
    "mape": "MAPE = 100/h * sum_h |y_h - f_h| / |y_h|, percent, mean over series (M1; Tourism, "
    "Athanasopoulos et al. 2011)",
    "mase": "MASE = mean_h |y_h - f_h| / in-sample seasonal-naive MAE of the training part, mean over "
    "series (Tourism, Athanasopoulos et al. 2011)",
}
REFERENCES = {
    "M1": "Makridakis et al. (1982), J. Forecasting 1(2): the M1 competition accuracy tables",
    "M3": "Makridakis & Hibon (2000), IJF 16(4): sMAPE tables for the monthly series",
    "Tourism": "Athanasopoulos et al. (2011), IJF 27(3): MAPE and MASE tables for the monthly series",
}
_PERCENT = {"smape": 100.0, "mape": 100.0, "mase": 1.0}
COMPETITION_METRICS = tuple(DEFINITIONS)


def per_series(scores: pd.DataFrame, metric: str) -> pd.Series:
    """One model's competition metric per series (NaN where undefined), indexed by series id.

    ``scores`` holds one model's rows of unit ``series``: ``series_id``, ``step``, ``actual``, ``point``
    and, for MASE, ``scale_mae``.
    """
    if metric not in _PERCENT:
        raise ValueError(f"unknown competition metric {metric!r}; known: {list(COMPETITION_METRICS)}")
    wide_y = scores.pivot_table(index="series_id", columns="step", values="actual", aggfunc="first", observed=True)
    wide_f = scores.pivot_table(index="series_id", columns="step", values="point", aggfunc="first", observed=True)
    y = wide_y.to_numpy(dtype=np.float64)  # [series, horizon]
    f = wide_f.reindex(index=wide_y.index, columns=wide_y.columns).to_numpy(dtype=np.float64)
    if metric == "smape":
        values = point_metrics.smape(actual=y, point=f)
    elif metric == "mape":  # undefined for a series with a zero actual: left out and counted
        values = np.full(len(y), np.nan)
        ok = ~(y == 0).any(axis=1)
        if ok.any():
            values[ok] = point_metrics.mape(actual=y[ok], point=f[ok])
    else:
        scale = scores.groupby("series_id", observed=True)["scale_mae"].first().reindex(wide_y.index).to_numpy()
        values = point_metrics.mase(actual=y, point=f, scale=scale, zero_scale="exclude")
    return pd.Series(np.asarray(values, dtype=np.float64) * _PERCENT[metric], index=wide_y.index)


def competition_table(
    scores: pd.DataFrame,
    *,
    competition: str,
    metric: str,
    statuses: Mapping[str, str] | None = None,
    display_names: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """One competition table: the mean over series of ``metric`` per model, ranked.

    Parameters
    ----------
    scores : DataFrame
        Score-set table of a competition hold-out run (rows of unit ``series`` are read).
    competition : str
        ``M1``, ``M3`` or ``Tourism`` (names the published reference).
    metric : str
        ``smape``, ``mape`` or ``mase``.
    statuses : mapping, optional
        Model -> run status for every model of the run; models without scores are listed unranked with
        their status.
    display_names : mapping, optional
        Model -> name shown.

    Returns
    -------
    dict
        ``competition``, ``metric``, ``metric_definition``, ``reference`` and ``rows`` (``rank``,
        ``model``, ``display_name``, ``value``, ``n_series``, ``status``), ranked models first.
    """
    if metric not in DEFINITIONS:
        raise ValueError(f"unknown competition metric {metric!r}; known: {list(COMPETITION_METRICS)}")
    names = dict(display_names or {})
    means: dict[str, float] = {}
    counts: dict[str, int] = {}
    for key, part in scores[scores["unit"] == "series"].groupby("model", sort=True, observed=True):
        model = str(key)
        try:
            values = per_series(part, metric)
        except MetricInputError:
            means[model], counts[model] = float("nan"), 0
            continue
        means[model], counts[model] = float(values.mean()), int(values.notna().sum())
    ranks = rank_by_mean(means)
    rows = [
        {
            "rank": None if np.isnan(means[m]) else ranks[m],
            "model": m,
            "display_name": names.get(m, m),
            "value": means[m],
            "n_series": counts[m],
            "status": "ran",
        }
        for m in sorted(means, key=lambda m: (ranks[m], m))
    ]
    for model in sorted(set(statuses or {}) - set(means)):
        rows.append(
            {
                "rank": None,
                "model": model,
                "display_name": names.get(model, model),
                "value": None,
                "n_series": 0,
                "status": (statuses or {})[model],
            }
        )
    return {
        "competition": competition,
        "metric": metric,
        "metric_definition": DEFINITIONS[metric],
        "reference": REFERENCES.get(competition),
        "rows": rows,
    }
