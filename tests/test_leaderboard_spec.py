"""The leaderboard spec is built in one place (``benchmarks.leaderboard_spec``) from a config or a results
document's recorded config: every field round-trips, a version that does not record a setting takes the
config model's default, the library's own builder (``tycheon.evaluation.Settings.spec``) gives the same
spec, and ``benchmarks.verify`` recomputes a run made with Holm and a minimum cell of 40 as it was made."""

from __future__ import annotations

import dataclasses
import json
import tomllib
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchmarks.config import BenchmarkConfig, read_toml
from benchmarks.evaluate import config_text
from benchmarks.leaderboard_spec import CONFIG_DEFAULTS, SPEC_FROM_CONFIG, leaderboard_spec
from benchmarks.results_io import to_json_value
from benchmarks.results_model import IntervalTable, Leaderboard
from benchmarks.verify import recompute_problems
from tycheon.analysis.leaderboard import LeaderboardSpec, leaderboard_and_interval_tables
from tycheon.evaluation import DataSpec, EvaluationPlan, Settings

TINY = Path(__file__).parent / "fixtures" / "tiny_benchmark.toml"

# a value for every config field the spec reads, none of them the default
CHANGED = {
    "metrics": ["rmsse", "wape", "crps"],
    "production_baseline": "ses",
    "random_walk": "seasonal_naive",
    "horizon": 2,
    "stride": 4,
    "alpha": 0.1,
    "seed": 11,
    "quantile_levels": [0.1, 0.5, 0.9],
    "verdict_adjust": "holm",
    "min_cell": 40,
    "service_level": 0.95,
    "lead_time": 1,
    "review_period": 2,
    "lost_sales": False,
}


def _config(**changes) -> BenchmarkConfig:
    return BenchmarkConfig.model_validate({**read_toml(TINY), **changes})


def test_every_spec_field_is_read_from_the_config_and_round_trips():
    assert set(SPEC_FROM_CONFIG) == {f.name for f in dataclasses.fields(LeaderboardSpec)}
    assert set(CHANGED) == set(SPEC_FROM_CONFIG.values())
    cfg = _config(**CHANGED)
    spec = leaderboard_spec(cfg)
    for name, field in SPEC_FROM_CONFIG.items():
        value = getattr(spec, name)
        want = CHANGED[field]
        assert (list(value) if isinstance(value, tuple) else value) == want, name
        assert value != getattr(leaderboard_spec(_config()), name), f"{name} kept the default"
    assert isinstance(spec.metrics, tuple) and isinstance(spec.quantile_levels, tuple)
    # the config a results document records (JSON, written and read back) gives the same spec
    recorded = json.loads(json.dumps(to_json_value(cfg.model_dump(mode="json"))))
    assert leaderboard_spec(recorded) == spec


def test_a_version_without_a_recorded_setting_takes_the_config_models_default():
    recorded = _config(**CHANGED).model_dump(mode="json")
    for field in ("alpha", "verdict_adjust", "min_cell"):
        del recorded[field]
    spec = leaderboard_spec(recorded)
    assert (spec.alpha, spec.verdict_adjust, spec.min_cell) == (0.05, "bh", 30)
    assert {k: CONFIG_DEFAULTS[k] for k in ("alpha", "verdict_adjust", "min_cell")} == {
        "alpha": 0.05,
        "verdict_adjust": "bh",
        "min_cell": 30,
    }
    assert spec.baseline == "ses" and spec.seed == 11  # the recorded fields are kept
    del recorded["horizon"]
    with pytest.raises(KeyError, match="horizon"):
        leaderboard_spec(recorded)


def test_the_librarys_settings_build_the_same_spec_as_the_config_they_write(tmp_path):
    settings = Settings(
        horizon=4,
        n_origins=5,
        min_history=8,
        models=("naive", "snaive_momentum", "ses"),
        alpha=0.1,
        seed=9,
        verdict_adjust="holm",
        min_cell=40,
    )
    plan = EvaluationPlan(
        settings=settings,
        n_series=10,
        n_periods=40,
        freq="MS",
        season_length=12,
        origins=("2020-01-01", "2021-01-01"),
        max_origins=5,
    )
    file = tmp_path / "sales.csv"
    text = config_text(name="sales", file=file, config_dir=tmp_path, data=DataSpec(), levels=(), plan=plan)
    assert leaderboard_spec(tomllib.loads(text)) == settings.spec()


# ---- verify rebuilds the spec from the recorded config: Holm and a minimum cell of 40 -----------------

MODELS = {"naive": 2.0, "snaive_momentum": 1.5, "ses": 1.0, "croston_sba": 3.0}
CLASSES = ("smooth", "erratic", "intermittent", "lumpy")


def _scores(n_series: int = 24, n_origins: int = 6, h: int = 3) -> pd.DataFrame:
    """Model m's point is the truth plus N(0, MODELS[m]); each demand class has n_series / 4 series, so
    36 blocks: above a minimum cell of 30, below one of 40."""
    rng = np.random.default_rng(4)
    origins = pd.date_range("2021-01-01", periods=n_origins, freq=f"{h}MS")
    rows = []
    for s in range(n_series):
        level = rng.uniform(10, 50)
        for o in origins:
            actual = level + rng.normal(0, 2, h)
            for m, sd in MODELS.items():
                point = actual + rng.normal(0, sd, h)
                for k in range(h):
                    rows.append({
                        "dataset": "d", "protocol": "rolling_origin", "model": m, "unit": "series",
                        "series_id": f"S{s:02d}", "origin": o, "step": k + 1,
                        "target_period": o + pd.DateOffset(months=k), "actual": actual[k], "point": point[k],
                        "available_at": o + pd.DateOffset(months=k + 1), "demand_class": CLASSES[s % 4],
                        "season_length": 12, "scale_mae": 2.0, "scale_rmse": 2.5, "weight": 1.0,
                        "lo80": point[k] - 2.5 * sd, "hi80": point[k] + 2.5 * sd,
                        "lo95": point[k] - 4 * sd, "hi95": point[k] + 4 * sd,
                        "has_band": True, "has_quantiles": False, "has_samples": False,
                    })  # fmt: skip
    return pd.DataFrame(rows)


def _doc(config: dict, spec: LeaderboardSpec, table: pd.DataFrame) -> SimpleNamespace:
    """The parts of a results document ``recompute_problems`` reads, its tables computed with ``spec``."""
    rows = table.drop(columns=["dataset", "protocol"])
    boards, bands = leaderboard_and_interval_tables(rows, spec=spec, display_names={}, point_metric="mase")
    tag = {"dataset": "d", "protocol": "rolling_origin"}
    return SimpleNamespace(
        config=config,
        models=[SimpleNamespace(id=m, display_name=m, runs=[]) for m in MODELS],
        competition=[],
        leaderboards=[Leaderboard.model_validate(to_json_value({**tag, **t})) for t in boards],
        intervals=[IntervalTable.model_validate(to_json_value({**tag, **t})) for t in bands],
    )


def test_verify_recomputes_a_run_made_with_holm_and_a_minimum_cell_of_40(tmp_path):
    table = _scores()
    sidecar = tmp_path / "scores.parquet"
    pq.write_table(pa.Table.from_pandas(table, preserve_index=False), sidecar)
    config = {
        "metrics": ["mase", "rmsse"],
        "production_baseline": "snaive_momentum",
        "random_walk": "naive",
        "horizon": 3,
        "stride": 3,
        "seed": 0,
        "quantile_levels": [],
        "datasets": [{"name": "d"}],
        "verdict_adjust": "holm",
        "min_cell": 40,
    }  # no alpha recorded: the config model's default, 0.05
    spec = leaderboard_spec(config)
    assert (spec.verdict_adjust, spec.min_cell, spec.alpha) == ("holm", 40, 0.05)
    doc = _doc(config, spec, table)
    classes = [b for b in doc.leaderboards if b.demand_class != "all"]
    assert classes and all(b.tests.cell_ok is False and b.tests.cell_count == 36 for b in classes)
    assert all(b.tests.verdict_adjust == "holm" for b in doc.leaderboards)
    assert recompute_problems(doc, sidecar) == []  # verify used Holm and 40, as the run did
    # the tables of the pipeline's defaults (BH, 30) are not those of this config: verify tells them apart
    default = _doc(config, dataclasses.replace(spec, verdict_adjust="bh", min_cell=30), table)
    problems = recompute_problems(default, sidecar)
    assert problems and any("cell_ok" in p or "verdict_adjust" in p for p in problems)
