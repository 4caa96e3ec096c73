"""Every registered metric, checked from its registry entry alone: no list of metric names is written here, so a
new entry gets every check below without editing this file.

For each metric: a one-step block's value is its per-step value; a scaled metric is unit-free and divided by
its own scale column (to its declared ``scale_power``), an unscaled one is homogeneous (degree 0 or 1) in the
series' units; it has a per-step loss exactly when a test can compare models on it, with the words a table
publishes for it; a leaderboard of it runs and publishes those words; a benchmark config accepts it exactly
when it ranks; the glossary page prints its row with the registry's direction and scale wording.
"""

from __future__ import annotations

import html
import re
import tomllib
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pydantic
import pytest

from tycheon.analysis.horizon import horizon_robustness
from tycheon.analysis.leaderboard import LeaderboardSpec, leaderboard_tables
from tycheon.contract import quantile_column
from tycheon.errors import InputError, MetricInputError
from tycheon.metrics.aggregate import step_scores
from tycheon.metrics.registry import (
    METRICS,
    SCALED_STEP_LOSSES,
    BlockTerms,
    MetricSpec,
    StepTerms,
    glossary,
    metric_names,
    term_values,
)
from tycheon.metrics.scale import SCALE_TEXT

ROOT = Path(__file__).resolve().parents[1]
NAMES = list(METRICS)
LEVELS = (0.1, 0.5, 0.9)
Z = {0.1: -1.2815515655446004, 0.5: 0.0, 0.9: 1.2815515655446004}
N_BLOCKS, N_STEPS = 6, 4


def _arrays(seed: int = 0) -> dict[str, np.ndarray]:
    """Flat ``[row]`` arrays of ``N_BLOCKS`` blocks of ``N_STEPS`` steps: positive actuals, forecasts, both
    bands around the forecast, a positive per-step CRPS, and per-block scales (the two different)."""
    rng = np.random.default_rng(seed)
    n = N_BLOCKS * N_STEPS
    y = rng.gamma(4.0, 5.0, n) + 1.0
    f = y + rng.normal(0.0, 3.0, n)
    half = rng.uniform(1.0, 6.0, n)
    return {
        "actual": y,
        "point": f,
        "lo80": f - half,
        "hi80": f + half,
        "lo95": f - 2.0 * half,
        "hi95": f + 2.0 * half,
        "crps": rng.uniform(0.5, 4.0, n),
        "scale_mae": np.repeat(rng.uniform(1.0, 3.0, N_BLOCKS), N_STEPS),
        "scale_rmse": np.repeat(rng.uniform(4.0, 6.0, N_BLOCKS), N_STEPS),
    }


def _terms(spec: MetricSpec, a: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    bands = {"80": (a["lo80"], a["hi80"]), "95": (a["lo95"], a["hi95"])}
    return term_values(spec.terms, actual=a["actual"], point=a["point"], bands=bands, crps=a["crps"])


def _block_values(spec: MetricSpec, a: dict[str, np.ndarray]) -> np.ndarray:
    """The registry's block formula on blocks ``[block, step]`` of the arrays ``a``."""
    terms = {t: v.reshape(N_BLOCKS, N_STEPS) for t, v in _terms(spec, a).items()}
    scale = {c: a[c].reshape(N_BLOCKS, N_STEPS)[:, 0] for c in SCALE_TEXT}
    return np.asarray(
        spec.block(
            BlockTerms(
                mean={t: v.mean(axis=1) for t, v in terms.items()},
                total={t: v.sum(axis=1) for t, v in terms.items()},
                scale=scale,
            )
        ),
        dtype=np.float64,
    )


def _scaled(a: dict[str, np.ndarray], factor: float, columns: tuple[str, ...]) -> dict[str, np.ndarray]:
    return {k: v * factor if k in columns else v for k, v in a.items()}


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    """A score-set table of three models (random walk ``rw``, baseline ``base``, ``good``), 12 series, 8 origins
    and 2 steps, with both bands and the models' own quantiles at :data:`LEVELS`."""
    rng = np.random.default_rng(7)
    n_series, n_origins, h = 12, 8, 2
    origins = pd.date_range("2022-01-01", periods=n_origins, freq="2MS")
    s, o, k = (x.ravel() for x in np.meshgrid(np.arange(n_series), np.arange(n_origins), np.arange(h), indexing="ij"))
    actual = 20.0 + 5.0 * s + rng.gamma(4.0, 2.0, s.size)
    frames = []
    for model, sd in (("rw", 3.0), ("base", 2.0), ("good", 1.0)):
        point = actual + rng.normal(0.0, sd, s.size)
        frame = pd.DataFrame(
            {
                "model": model,
                "unit": "series",
                "series_id": np.char.add("s", s.astype(str)),
                "origin": origins[o],
                "step": k + 1,
                "target_period": origins[o] + pd.to_timedelta(31 * (k + 1), "D"),
                "actual": actual,
                "point": point,
                "demand_class": "smooth",
                "season_length": 12,
                "weight": 1.0,
                "scale_mae": 1.0 + 0.5 * (s % 3),
                "scale_rmse": 1.5 + 0.25 * (s % 4),
                "lo80": point - 1.3 * sd,
                "hi80": point + 1.3 * sd,
                "lo95": point - 2.0 * sd,
                "hi95": point + 2.0 * sd,
                "has_band": True,
            }
        )
        for q in LEVELS:
            frame[quantile_column(q)] = point + Z[q] * sd
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize("name", NAMES)
def test_a_one_step_block_scores_its_per_step_value(name, table):
    spec = METRICS[name]
    if spec.step is None:  # a metric that is not a mean over steps (a ratio of sums) has no per-step value
        with pytest.raises(MetricInputError, match="per-step"):
            step_scores(table, metrics=[name])
        return
    a = _arrays()
    terms = _terms(spec, a)
    scale = {c: a[c] for c in SCALE_TEXT}
    one_step = spec.block(BlockTerms(mean=terms, total=terms, scale=scale))
    np.testing.assert_allclose(spec.step(StepTerms(terms, scale)), one_step, rtol=1e-12)
    assert np.isfinite(one_step).all()


@pytest.mark.parametrize("name", NAMES)
def test_a_scaled_metric_is_unit_free_and_divided_by_its_own_scale_column(name):
    spec = METRICS[name]
    a = _arrays(seed=1)
    base = _block_values(spec, a)
    assert np.isfinite(base).all() and (base != 0).any()
    in_units = ("actual", "point", "lo80", "hi80", "lo95", "hi95", "crps", *SCALE_TEXT)
    rescaled = _block_values(spec, _scaled(a, 3.7, in_units))  # the series in other units, scales with them
    if spec.scale_column is None:
        # unit-free (a ratio or a share) or in the series' units, nothing else; the scales are not read
        assert np.allclose(rescaled, base, rtol=1e-9) or np.allclose(rescaled, 3.7 * base, rtol=1e-9)
        np.testing.assert_array_equal(_block_values(spec, _scaled(a, 2.0, tuple(SCALE_TEXT))), base)
        return
    np.testing.assert_allclose(rescaled, base, rtol=1e-9)
    halved = base / 2.0**spec.scale_power  # the scale column divides it spec.scale_power times
    np.testing.assert_allclose(_block_values(spec, _scaled(a, 2.0, (spec.scale_column,))), halved, rtol=1e-12)
    others = tuple(c for c in SCALE_TEXT if c != spec.scale_column)
    np.testing.assert_array_equal(_block_values(spec, _scaled(a, 2.0, others)), base)


@pytest.mark.parametrize("name", NAMES)
def test_a_metric_has_a_per_step_loss_exactly_when_a_test_can_compare_models_on_it(name):
    spec = METRICS[name]
    assert (spec.step_loss is not None) == spec.tested
    assert spec.dm_loss_label.strip() and spec.dm_loss_label == spec.dm_loss_label.strip()
    if spec.loss_label is None:
        assert spec.dm_loss_label == f"per-step {spec.display_name}"
    assert spec.scale_column is None or spec.scale_column in SCALE_TEXT
    assert spec.better in ("lower", "closer to 0", "closer to nominal")
    assert (spec.better == "lower") == spec.lower_is_better


@pytest.mark.parametrize("name", NAMES)
def test_a_leaderboard_of_a_ranked_metric_runs_and_publishes_its_loss_words(name, table):
    spec = METRICS[name]
    if not spec.ranked:
        assert name not in metric_names(ranked=True)
        return
    boards = leaderboard_tables(
        table,
        spec=LeaderboardSpec(
            metrics=(name,), baseline="base", random_walk="rw", horizon=2, stride=2, quantile_levels=LEVELS
        ),
    )
    assert [(b["demand_class"], b["metric"]) for b in boards] == [("all", name), ("smooth", name)]
    for board in boards:
        assert board["tests"]["dm_loss"] == spec.dm_loss_label
        assert board["winner"] is not None and {r["model"] for r in board["rows"]} == {"rw", "base", "good"}
        tested = [r["dm_p"] is not None for r in board["rows"] if r["model"] != "base"]
        assert all(tested) if spec.tested else not any(tested)


def _benchmark_config() -> dict:
    return tomllib.loads((ROOT / "benchmarks" / "configs" / "small.toml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", NAMES)
def test_a_benchmark_config_accepts_a_metric_exactly_when_it_ranks(name):
    from benchmarks.config import BenchmarkConfig

    data = {**_benchmark_config(), "metrics": [name]}
    if METRICS[name].ranked:
        assert BenchmarkConfig.model_validate(data).metrics == [name]
    else:
        with pytest.raises(pydantic.ValidationError, match=name):
            BenchmarkConfig.model_validate(data)


@pytest.mark.parametrize("name", NAMES)
def test_the_replay_sensitivity_and_horizon_accept_exactly_the_scaled_per_step_losses(name, table):
    from benchmarks.config import ReplayConfig, SensitivityConfig

    if name in SCALED_STEP_LOSSES:
        assert ReplayConfig(metric=name).metric == name and SensitivityConfig(metric=name).metric == name
        assert horizon_robustness(table, metric=name).metric == name
        return
    for config in (ReplayConfig, SensitivityConfig):
        with pytest.raises(pydantic.ValidationError):
            config(metric=name)
    with pytest.raises(InputError, match="per-step scaled errors"):
        horizon_robustness(table, metric=name)


@pytest.fixture(scope="module")
def glossary_rows() -> dict[str, str]:
    """The glossary page rendered from the registry's records (as a benchmark run stores them): the text of
    each metric's table row, by metric name."""
    from benchmarks.render.builders.reference import glossary_page
    from benchmarks.render.site import environment
    from benchmarks.results_model import MetricGlossaryEntry

    data = SimpleNamespace(
        metric_glossary=[MetricGlossaryEntry.model_validate(g) for g in glossary()], leaderboards=[], datasets=[]
    )
    run = SimpleNamespace(data=data, version="v0001")
    site = SimpleNamespace(names=["toy"], latest=lambda name: run, display_names=lambda run: {})
    page = glossary_page(site, root=ROOT)
    text = environment().get_template(page.template).render(here=page.path, title=page.title, **page.context)
    rows = re.findall(r'<tr id="metric-[^"]*">(.*?)</tr>', text, flags=re.S)
    found = {}
    for row in rows:
        cells = [
            html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)
        ]
        found[html.unescape(re.findall(r"<code>(.*?)</code>", row)[0])] = cells
    return found


@pytest.mark.parametrize("name", NAMES)
def test_the_glossary_page_prints_each_metric_with_the_registry_wording(name, glossary_rows):
    spec = METRICS[name]
    assert list(glossary_rows) == NAMES  # one row per metric, in the registry's order
    _, definition, _, better, divided_by = glossary_rows[name]
    assert definition == spec.definition
    assert better == spec.better + ("" if spec.ranked else " (not ranked)")
    assert divided_by == (
        "nothing: in the series' own units" if spec.scale_column is None else SCALE_TEXT[spec.scale_column]
    )


def test_a_metric_with_an_undeclared_scale_column_is_refused_where_it_is_declared():
    with pytest.raises(MetricInputError, match="scale_median"):
        MetricSpec(
            name="mdase",
            display_name="MdASE",
            kind="point",
            lower_is_better=True,
            scale_column="scale_median",
            definition="-",
            terms=("abs_err",),
            block=lambda b: b.mean["abs_err"] / b.scale["scale_median"],
        )
