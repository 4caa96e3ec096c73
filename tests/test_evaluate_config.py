"""A user file as a dataset of a benchmark config (``[datasets.file]``): path relative to the config, column
mapping and policies; results carry the file's name and sha256 (never its folder) and each warning once."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks.config import ConfigError, load_benchmark_config
from benchmarks.run import main as run_main

HEADER = """name = "mine"
seed = 1
horizon = 3
stride = 3
n_origins = 3
min_history = 12
quantile_levels = [0.1, 0.5, 0.9]
metrics = ["mase"]
models = ["naive", "snaive_momentum", "croston"]
n_jobs = 1
backend = "sequential"
"""


def _parts(path: Path) -> None:
    months = pd.date_range("2021-01-01", periods=30, freq="MS")
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "part": np.repeat(["a", "b", "c", "d"], 30),
            "month": np.tile(months, 4),
            "units_sold": rng.poisson(3, 120).astype(float),
            "plant": np.repeat(["x", "x", "y", "y"], 30),
        }
    )
    frame.loc[frame["part"] == "d", "units_sold"] = frame["units_sold"].where(frame.index != 100)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)


def _config(tmp_path: Path, file_table: str) -> Path:
    config = tmp_path / "configs" / "mine.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        HEADER + '\n[[datasets]]\nname = "parts"\nunits = ["series", "level:plant"]\n\n[datasets.file]\n' + file_table
    )
    return config


def test_a_user_file_in_a_config_runs_and_results_name_the_file_not_its_folder(tmp_path):
    _parts(tmp_path / "data" / "parts.csv")
    config = _config(
        tmp_path,
        'path = "../data/parts.csv"\nid = "part"\ntime = "month"\ntarget = "units_sold"\n'
        'levels = ["plant"]\nnan_policy = "drop_series"\nstatic_universe = true\n',
    )
    assert run_main(["--config", str(config), "--results-dir", str(tmp_path / "results"), "--no-cache"]) == 0
    path = tmp_path / "results" / "mine" / "v0001.json"
    text = path.read_text()
    assert str(tmp_path) not in text and "../data" not in text
    doc = json.loads(text)
    (dataset,) = doc["datasets"]
    assert dataset["options"]["name"] == "parts.csv" and len(dataset["options"]["sha256"]) == 64
    assert dataset["n_series"] == 3 and doc["config"]["datasets"][0]["file"]["path"] == "parts.csv"
    kinds = [w["kind"] for w in doc["warnings"] if w["dataset"] == "parts"]
    assert kinds.count("not_redistributable") == 1 and kinds.count("survivorship") == 1
    messages = [w["message"] for w in doc["warnings"]]
    assert sum(m.startswith("dropped series: 1 series") and m.endswith(": d") for m in messages) == 1
    assert sum(m.startswith("inferred: freq 'MS' and season length 12") for m in messages) == 1
    assert {lb["unit"] for lb in doc["leaderboards"]} == {"series", "level:plant"}


def test_declared_frequency_and_season_are_not_reported_as_inferred(tmp_path):
    _parts(tmp_path / "data" / "parts.csv")
    config = _config(
        tmp_path,
        'path = "../data/parts.csv"\nid = "part"\ntime = "month"\ntarget = "units_sold"\n'
        'levels = ["plant"]\nnan_policy = "zero"\nfreq = "MS"\nseason_length = 12\n'
        'redistributable = true\nlicence = "CC-BY-4.0"\n',
    )
    assert run_main(["--config", str(config), "--results-dir", str(tmp_path / "results"), "--no-cache"]) == 0
    doc = json.loads((tmp_path / "results" / "mine" / "v0001.json").read_text())
    assert not [w for w in doc["warnings"] if w["kind"] in ("not_redistributable", "other")]
    assert doc["datasets"][0]["redistributable"] is True


@pytest.mark.parametrize(
    ("file_table", "message"),
    [
        ('path = "parts.csv"\ncolumn = "x"\n', r"unknown field 'datasets.0.file.column'"),
        ('path = "parts.xlsx"\n', r"a user file must be .csv, .parquet or .pq"),
        ('path = "parts.csv"\nnan_policy = "mean"\n', r"datasets.0.file.nan_policy"),
    ],
)
def test_a_bad_file_table_is_refused_naming_the_field(tmp_path, file_table, message):
    with pytest.raises(ConfigError, match=message):
        load_benchmark_config(_config(tmp_path, file_table))


def test_a_user_file_takes_no_loader_options(tmp_path):
    config = _config(tmp_path, 'path = "parts.csv"\n')
    config.write_text(config.read_text().replace('name = "parts"\n', 'name = "parts"\noptions = { seed = 1 }\n'))
    with pytest.raises(ConfigError, match=r"a user file takes its settings in \[datasets.file\]"):
        load_benchmark_config(config)
