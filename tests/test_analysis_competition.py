"""Competition tables use the competitions' own definitions (checked against plain loops), rank with the
one ranking helper, and the competition hold-out protocol scores the published test part."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tycheon.analysis.competition import competition_table
from tycheon.backtest.competition import CompetitionHoldout
from tycheon.backtest.protocol import ProtocolError, RollingOrigin
from tycheon.data.datasets import load


def _table(rng: np.random.Generator) -> pd.DataFrame:
    rows = []
    for model in ("naive", "ses"):
        for s in range(5):
            scale = 1.0 + s
            for k in range(1, 5):
                y = 10.0 + s + k
                rows.append(
                    {
                        "model": model,
                        "unit": "series",
                        "series_id": f"S{s}",
                        "step": k,
                        "actual": y,
                        "point": y + rng.normal(0, 2),
                        "scale_mae": scale,
                    }
                )
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
    out = competition_table(
        table, competition="M3", metric=metric, statuses={"naive": "ran", "ses": "ran", "chronos_bolt": "skipped"}
    )
    values = {r["model"]: r["value"] for r in out["rows"]}
    for model in ("naive", "ses"):
        assert values[model] == pytest.approx(_loop(table, model, metric), rel=1e-12)
    assert out["competition"] == "M3" and out["rows"][-1] == {
        "rank": None,
        "model": "chronos_bolt",
        "display_name": "chronos_bolt",
        "value": None,
        "n_series": 0,
        "status": "skipped",
    }
    assert [r["rank"] for r in out["rows"][:2]] == [1, 2]


def test_mape_leaves_out_series_with_a_zero_actual_and_counts_the_rest():
    table = _table(np.random.default_rng(1))
    table.loc[(table["series_id"] == "S0") & (table["step"] == 2), "actual"] = 0.0
    out = competition_table(table, competition="Tourism", metric="mape", statuses={"naive": "ran", "ses": "ran"})
    assert {r["n_series"] for r in out["rows"]} == {4}


def test_tied_means_share_the_lower_rank_and_the_next_model_keeps_its_place():
    table = _table(np.random.default_rng(2))
    twin = table[table["model"] == "ses"].assign(model="ses_copy")
    out = competition_table(pd.concat([table, twin]), competition="M3", metric="smape", display_names={"ses": "SES"})
    ranks = {r["model"]: r["rank"] for r in out["rows"]}
    assert ranks["ses"] == ranks["ses_copy"]
    assert sorted(ranks.values()) in ([1, 1, 3], [1, 2, 2])
    assert next(r for r in out["rows"] if r["model"] == "ses")["display_name"] == "SES"


def test_an_unknown_metric_is_refused_naming_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown competition metric 'rmse'; known: \['smape', 'mape', 'mase'\]"):
        competition_table(_table(np.random.default_rng(0)), competition="M3", metric="rmse")


def test_the_holdout_is_one_origin_at_the_published_test_part_with_the_training_part_before_it():
    panel = load("m3_monthly")
    holdout = CompetitionHoldout.from_panel(panel)
    assert holdout.horizon == 18 and holdout.describe()["kind"] == "competition"
    (origin,) = holdout.origins(panel, min_history=1)
    assert origin.index == len(panel.periods) - 18 and origin.fit_end == origin.index
    # the same scored pairs as the rolling origin it is, so the engine's guards apply unchanged
    assert holdout.scored_pairs(panel) == RollingOrigin(horizon=18, stride=18, n_origins=1).scored_pairs(panel)
    test_part = panel.attributes["n_test"].astype(int)
    assert (test_part == 18).all()


def test_a_panel_without_one_published_horizon_is_refused():
    panel = load("synthetic_marketplace", n_entities=4, n_periods=24, seed=1)
    with pytest.raises(ProtocolError, match="needs the published horizon"):
        CompetitionHoldout.from_panel(panel)


def test_the_published_competition_values_are_recomputed_exactly_from_the_committed_sidecar():
    """v0004 (written by the harness's former copy of these tables) against this module: every value and
    count equal; ranks equal except where two means tie exactly, which now share the lower rank."""
    import json
    from pathlib import Path

    from benchmarks.results_io import sidecar_file

    results = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "small"
    doc = json.loads((results / "v0004.json").read_text())
    sidecar = pd.read_parquet(
        sidecar_file(results / "v0004.json", doc["sidecar"]),
        columns=["dataset", "protocol", "model", "unit", "series_id", "step", "actual", "point", "scale_mae"],
    )
    for published in doc["competition"]:
        part = sidecar[(sidecar["dataset"] == published["dataset"]) & (sidecar["protocol"] == "competition")]
        statuses = {
            m["id"]: r["status"]
            for m in doc["models"]
            for r in m["runs"]
            if r["dataset"] == published["dataset"] and r["protocol"] == "competition"
        }
        ours = competition_table(
            part,
            competition=published["competition"],
            metric=published["metric"],
            statuses=statuses,
            display_names={m["id"]: m["display_name"] for m in doc["models"]},
        )
        assert [r["model"] for r in ours["rows"]] == [r["model"] for r in published["rows"]]
        for mine, theirs in zip(ours["rows"], published["rows"], strict=True):
            assert (mine["value"] if mine["value"] is None or np.isfinite(mine["value"]) else None) == theirs["value"]
            assert mine["n_series"] == theirs["n_series"] and mine["status"] == theirs["status"]
            tied = [r for r in published["rows"] if r["value"] is not None and r["value"] == theirs["value"]]
            expected = min(r["rank"] for r in tied) if len(tied) > 1 else theirs["rank"]
            assert mine["rank"] == expected
        assert ours["metric_definition"] == published["metric_definition"]
        assert ours["reference"] == published["reference"]
