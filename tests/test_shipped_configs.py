"""Every shipped benchmark config can run: its protocol fits its datasets, checked without running a model.

For each file in ``benchmarks/configs/`` the config and its models are resolved as the runner resolves
them, each dataset is loaded through the manifest as the pipeline loads it, and the library's own
protocol code places the rolling origins (:meth:`RollingOrigin.origins`, which raises
:class:`ProtocolError` when fewer than ``n_origins`` leave a full horizon and the minimum history), the
calibration origins (:func:`calibration_plan`: every one asked for must be usable), every unit of
analysis, the dial's units and the sweep's variants (:func:`build_unit`), and each competition block's
hold-out (:meth:`CompetitionHoldout.from_panel`), and the protocols of the sensitivity audit where the
config runs one. A config that would stop at once, or silently score
fewer origins than it says, fails here instead of after hours of model fits.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks.analyses import dial_unit_names
from benchmarks.config import CONFIGS_DIR, BenchmarkConfig, DatasetEntry, resolve_benchmark_config
from benchmarks.pipeline import MANIFEST, load_dataset, rolling_protocol
from benchmarks.replay_audit import audit_protocols, sensitivity_datasets
from tycheon.backtest.calibration import calibration_min_history
from tycheon.backtest.competition import CompetitionHoldout
from tycheon.backtest.protocol import calibration_plan
from tycheon.backtest.units import build_unit

CONFIGS = sorted(CONFIGS_DIR.glob("*.toml"))


def _load(name: str, options: dict, subsample: int | None, **where: Path | None):  # noqa: ANN202
    """``load_dataset`` as the pipeline calls it, once per dataset and options across the configs (the
    configs share datasets; the checks only read the panel)."""
    return _load_once(name, json.dumps(options, sort_keys=True), subsample, tuple(sorted(where.items())))


@functools.cache
def _load_once(name: str, options: str, subsample: int | None, where: tuple):  # noqa: ANN202
    return load_dataset(name, json.loads(options), subsample, manifest=MANIFEST, **dict(where))


def check_rolling_dataset(cfg: BenchmarkConfig, entry: DatasetEntry, config_dir: Path) -> None:
    """Raise (ProtocolError, ValueError, AssertionError) when ``entry`` cannot run as ``cfg`` asks."""
    loaded = _load(entry.name, dict(entry.options), entry.subsample, file=entry.file, config_dir=config_dir)
    panel = loaded.panel
    rolling = rolling_protocol(cfg)
    min_history = entry.min_history or cfg.min_history
    origins = rolling.origins(panel, min_history=min_history)
    assert len(origins) == cfg.n_origins, f"{entry.key}: {len(origins)} origins, n_origins={cfg.n_origins}"
    if cfg.n_calibration_origins:
        cal_min = calibration_min_history(min_history, panel.season_length)
        plan = calibration_plan(rolling, panel, min_history=min_history, calibration_min_history=cal_min)
        assert len(plan.used) == cfg.n_calibration_origins, (
            f"{entry.key}: only {len(plan.used)} of {cfg.n_calibration_origins} calibration origins are usable "
            f"(history {cal_min}); columns skipped: {list(plan.skipped)}"
        )
    dial = dial_unit_names(entry.dial, panel.n_series, leaderboard_units=entry.units) if entry.dial else []
    first_fit_end = origins[0].fit_end
    for unit in [*entry.units, *dial]:
        data = build_unit(panel, unit, first_fit_end=first_fit_end, seed=cfg.seed)
        scoreable = data.observed[:, :first_fit_end].sum(axis=1) >= min_history
        assert scoreable.any(), f"{entry.key}: unit {unit} has no series with {min_history} periods at the first origin"
    if entry.key in sensitivity_datasets(cfg):  # the audit's protocols too (it was skipped on m5scale at 73 months)
        protocols = audit_protocols(cfg, rolling, panel, min_history=min_history)
        for name, protocol in protocols.items():
            assert protocol.origins(panel, min_history=min_history), (
                f"{entry.key}: audit protocol {name} places no origin"
            )
    for setting in entry.sweep:
        variant = _load(entry.name, {**dict(entry.options), "spikiness": float(setting)}, entry.subsample)
        assert len(rolling.origins(variant.panel, min_history=min_history)) == cfg.n_origins


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_every_rolling_dataset_of_a_shipped_config_fits_its_protocol(path):
    _, cfg, models = resolve_benchmark_config(path)
    assert set(models) == set(cfg.models)
    for entry in cfg.datasets:
        check_rolling_dataset(cfg, entry, path.parent)


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_every_competition_block_of_a_shipped_config_scores_its_published_hold_out(path):
    _, cfg, _ = resolve_benchmark_config(path)
    for centry in cfg.competition:
        panel = _load(centry.dataset, dict(centry.options), centry.subsample).panel
        assert panel.meta["competition"]["name"] == centry.competition, (
            f"{centry.key} is not a {centry.competition} panel"
        )
        holdout = CompetitionHoldout.from_panel(panel)
        assert (panel.attributes["n_test"] == holdout.horizon).all()
        (origin,) = holdout.origins(panel, min_history=1)
        train = panel.dense().observed[:, : origin.fit_end].sum(axis=1)
        assert int(np.min(train)) >= 1, f"{centry.key}: a series has no training part"


def test_the_check_refuses_a_config_whose_origins_do_not_fit(tmp_path):
    # the shape of the failure the issue reports: 8 origins asked where only 7 leave 24 periods
    from benchmarks.config import load_benchmark_config
    from tycheon.backtest.protocol import ProtocolError

    small = (CONFIGS_DIR / "small.toml").read_text()
    cfg = load_benchmark_config(CONFIGS_DIR / "small.toml")
    path = tmp_path / "broken.toml"
    path.write_text(small.replace(f"n_origins = {cfg.n_origins}", "n_origins = 400", 1))
    broken = load_benchmark_config(path)
    assert broken.n_origins == 400
    with pytest.raises(ProtocolError, match=r"origin\(s\)"):
        check_rolling_dataset(broken, broken.datasets[0], CONFIGS_DIR)


@pytest.mark.parametrize(
    "skip, message",
    [
        ('{ prophet = "slow" }', r"skip_models \['prophet'\] are not models of this config"),
        ('{ naive = "slow" }', r"skip_models \['naive'\]: the random walk and the production baseline run"),
    ],
)
def test_when_a_dataset_skips_an_unknown_or_mandatory_model_then_the_config_is_refused(tmp_path, skip, message):
    from benchmarks.config import ConfigError, load_benchmark_config

    text = (CONFIGS_DIR / "small.toml").read_text()
    path = tmp_path / "skips.toml"
    path.write_text(text.replace("[[datasets]]\n", f"[[datasets]]\nskip_models = {skip}\n", 1))
    with pytest.raises(ConfigError, match=message):
        load_benchmark_config(path)
