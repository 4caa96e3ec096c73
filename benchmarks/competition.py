"""Competition protocol: score M1, M3 and Tourism exactly as those competitions did.

Every series is fitted on its published training part and forecast once over the published horizon;
the competition panels right-align every series so that the published test parts occupy the last ``h``
columns (:mod:`tycheon.data.competitions`), so this is one rolling origin with ``horizon = h`` at column
``T - h``. Scores use the competitions' own definitions, computed by :mod:`tycheon.metrics.point`:

- **M3** (Makridakis & Hibon 2000): sMAPE, :math:`\\frac{200}{h}\\sum_h |y_h-\\hat y_h|/(|y_h|+|\\hat y_h|)`
  in percent, averaged over series;
- **Tourism** (Athanasopoulos et al. 2011): MAPE in percent, and MASE scaled by the in-sample
  seasonal-naive MAE of the training part (the score set's ``scale_mae``), averaged over series;
- **M1** (Makridakis et al. 1982): MAPE in percent, averaged over series.

Each table says which protocol produced it (``protocol = "competition"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from tycheon.backtest.protocol import RollingOrigin
from tycheon.data.panel import Panel
from tycheon.metrics import point as point_metrics
from tycheon.metrics.errors import MetricInputError

__all__ = ["DEFINITIONS", "REFERENCES", "competition_protocol", "competition_table"]

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


def competition_protocol(panel: Panel) -> RollingOrigin:
    """One origin at the published hold-out: the test part is the last ``horizon`` columns."""
    horizons = sorted(set(int(h) for h in panel.attributes["horizon"]))
    if len(horizons) != 1:
        raise ValueError(f"{panel.name}: the competition protocol needs one published horizon, got {horizons}")
    h = horizons[0]
    return RollingOrigin(horizon=h, stride=h, n_origins=1, mode="benchmark")


def _per_series(table: pd.DataFrame, metric: str) -> pd.Series:
    wide_y = table.pivot_table(index="series_id", columns="step", values="actual", aggfunc="first")
    wide_f = table.pivot_table(index="series_id", columns="step", values="point", aggfunc="first")
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
        scale = table.groupby("series_id")["scale_mae"].first().reindex(wide_y.index).to_numpy()
        values = point_metrics.mase(actual=y, point=f, scale=scale, zero_scale="exclude")
    return pd.Series(np.asarray(values, dtype=np.float64) * _PERCENT[metric], index=wide_y.index)


def competition_table(
    table: pd.DataFrame,
    *,
    dataset: str,
    competition: str,
    metric: str,
    horizon: int,
    statuses: dict[str, str],
    display: dict[str, str],
) -> dict[str, Any]:
    """One competition table: mean over series of the competition metric per model, ranked."""
    values: dict[str, tuple[float, int]] = {}
    for model, part in table[table["unit"] == "series"].groupby("model", sort=True):
        try:
            per = _per_series(part, metric)
        except MetricInputError:
            values[model] = (float("nan"), 0)
            continue
        values[model] = (float(per.mean()), int(per.notna().sum()))
    ordered = sorted(values, key=lambda m: (np.isnan(values[m][0]), values[m][0], m))
    rows = []
    for pos, model in enumerate(ordered, 1):
        v, n = values[model]
        rows.append({"rank": None if np.isnan(v) else pos, "model": model, "display_name": display.get(model, model),
                     "value": v, "n_series": n, "status": "ran"})
    for model in sorted(set(statuses) - set(values)):
        rows.append({"rank": None, "model": model, "display_name": display.get(model, model), "value": None,
                     "n_series": 0, "status": statuses[model]})
    return {"dataset": dataset, "protocol": "competition", "competition": competition, "horizon": horizon,
            "metric": metric, "metric_definition": DEFINITIONS[metric], "reference": REFERENCES[competition],
            "rows": rows}
