"""Competition tables use the competitions' own definitions: checked against plain loops."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchmarks.competition import competition_table


def _table(rng: np.random.Generator) -> pd.DataFrame:
    rows = []
    for model in ("naive", "ses"):
        for s in range(5):
            scale = 1.0 + s
            for k in range(1, 5):
                y = 10.0 + s + k
                rows.append({"model": model, "unit": "series", "series_id": f"S{s}", "step": k, "actual": y,
                             "point": y + rng.normal(0, 2), "scale_mae": scale})
    return pd.DataFrame(rows)


def _loop(table: pd.DataFrame, model: str, metric: str) -> float:
    per_series = []
    for _, g in table[table["model"] == model].groupby("series_id"):
        terms = []
        for y, f in zip(g["actual"], g["point"], strict=True):
            if metric == "smape":
                terms.append(200.0 * abs(y - f) / (abs(y) + abs(f)))
            elif metric == "mape":
                terms.append(100.0 * abs(y - f) / abs(y))
            else:
                terms.append(abs(y - f) / g["scale_mae"].iloc[0])
        per_series.append(sum(terms) / len(terms))
    return sum(per_series) / len(per_series)


@pytest.mark.parametrize("metric", ["smape", "mape", "mase"])
def test_competition_metric_matches_a_plain_loop(metric):
    table = _table(np.random.default_rng(5))
    out = competition_table(table, dataset="m3_monthly", competition="M3", metric=metric, horizon=4,
                            statuses={"naive": "ran", "ses": "ran", "chronos_bolt": "skipped"}, display={})
    values = {r["model"]: r["value"] for r in out["rows"]}
    for model in ("naive", "ses"):
        assert values[model] == pytest.approx(_loop(table, model, metric), rel=1e-12)
    assert out["protocol"] == "competition" and out["rows"][-1] == {
        "rank": None, "model": "chronos_bolt", "display_name": "chronos_bolt", "value": None, "n_series": 0,
        "status": "skipped"}
    assert [r["rank"] for r in out["rows"][:2]] == [1, 2]


def test_mape_leaves_out_series_with_a_zero_actual_and_counts_the_rest():
    table = _table(np.random.default_rng(1))
    table.loc[(table["series_id"] == "S0") & (table["step"] == 2), "actual"] = 0.0
    out = competition_table(table, dataset="t", competition="Tourism", metric="mape", horizon=4,
                            statuses={"naive": "ran", "ses": "ran"}, display={})
    assert {r["n_series"] for r in out["rows"]} == {4}
