"""Pooled scaled-residual bands calibrated on unscored origins (WP26 section 3.6; issue 14)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tycheon.backtest import slices, tasks
from tycheon.backtest.calibration import (
    attach_pooled_bands,
    calibration_min_history,
    pooled_bands,
    scaled_residual,
)
from tycheon.backtest.conformal import conformal_rank
from tycheon.backtest.engine import run
from tycheon.backtest.factories import instance_factory
from tycheon.backtest.guards import LookaheadError
from tycheon.backtest.protocol import RollingOrigin, StaticSplit, calibration_plan
from tycheon.backtest.scoreset import ScoreSet, conform_table
from tycheon.data.panel import Panel
from tycheon.testing.canary import poison_after
from tycheon.testing.toys import (
    GlobalMeanForecaster,
    MeanForecaster,
    NaiveForecaster,
    toy_panel,
)

PANEL = toy_panel(n_series=30, n_periods=60, seed=2)
FACTORIES = {"naive": instance_factory(NaiveForecaster()), "mean": instance_factory(MeanForecaster())}
BAND_COLUMNS = ["lo80", "hi80", "lo95", "hi95", "has_band"]


def _protocol(c: int, **kwargs) -> RollingOrigin:
    return RollingOrigin(horizon=6, stride=6, n_origins=4, n_calibration_origins=c, **kwargs)


def _run(c: int, panel: Panel = PANEL, factories=FACTORIES, **kwargs):
    options = {"units": ("series", "total"), "min_history": 12, **kwargs}
    return run(panel, _protocol(c), factories, **options)


# ---------------------------------------------------------------- the kernel against a plain loop


def _loop_bands(cell, origin, avail, point, actual, scale, target, level, min_origins=0):
    """Plain-loop oracle: per target row, the scores of its cell published by its origin."""
    lo = np.full(len(cell), np.nan)
    hi = np.full(len(cell), np.nan)
    for i in range(len(cell)):
        if not target[i] or not (np.isfinite(scale[i]) and scale[i] > 0):
            continue
        cal = []
        for j in range(len(cell)):
            if (
                cell[j] == cell[i]
                and avail[j] <= origin[i]
                and np.isfinite(scale[j])
                and scale[j] > 0
                and np.isfinite(actual[j])
                and np.isfinite(point[j])
            ):
                cal.append(max((point[j] - actual[j]) / scale[j], (actual[j] - point[j]) / scale[j]))
        cal.sort()
        n = len(cal)
        r = -(-(n + 1) * level // 100)
        if r <= n and n >= min_origins:
            lo[i] = point[i] - cal[r - 1] * scale[i]
            hi[i] = point[i] + cal[r - 1] * scale[i]
    return lo[target], hi[target]


def _loop_counts(cell, origin, avail, point, actual, scale, target):
    """Plain-loop oracle of each target row's calibration set size."""
    counts = []
    for i in np.flatnonzero(target):
        counts.append(
            sum(
                1
                for j in range(len(cell))
                if cell[j] == cell[i]
                and avail[j] <= origin[i]
                and np.isfinite(scale[j])
                and scale[j] > 0
                and np.isfinite(actual[j])
                and np.isfinite(point[j])
            )
        )
    return np.asarray(counts, dtype=np.int64)


def _random_rows(seed: int, n: int = 900):
    rng = np.random.default_rng(seed)
    cell = rng.integers(0, 7, size=n)
    o = rng.integers(0, 12, size=n)
    lag = rng.integers(1, 5, size=n)  # published 1-4 periods after the origin
    base = np.datetime64("2020-01-01", "ns")
    origin = base + o * np.timedelta64(1, "D")
    avail = base + (o + lag) * np.timedelta64(1, "D")
    point = rng.normal(size=n).round(1)
    actual = (point + rng.normal(size=n)).round(1)  # rounding makes ties
    actual[rng.random(n) < 0.05] = np.nan
    scale = rng.choice([0.5, 1.0, 2.0, 0.0, np.nan], p=[0.3, 0.3, 0.3, 0.05, 0.05], size=n)
    target = rng.random(n) < 0.5
    return cell, origin, avail, point, actual, scale, target


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("min_origins", [0, 25])
@pytest.mark.parametrize("spread", [1, 10**9])  # cell codes grouped by the radix sort, and by np.unique
def test_vectorised_pooled_bands_equal_a_plain_loop_with_ties_missing_scales_and_publication_lags(
    seed, min_origins, spread
):
    cell, origin, avail, point, actual, scale, target = _random_rows(seed)
    cell = cell * spread
    bands = pooled_bands(
        cell=cell,
        origin=origin,
        available_at=avail,
        point=point,
        actual=actual,
        lower=scale,
        upper=scale,
        target=target,
        levels_percent=(80, 95),
        min_origins=min_origins,
    )
    for lv, level in enumerate((80, 95)):
        lo, hi = _loop_bands(cell, origin, avail, point, actual, scale, target, level, min_origins)
        assert np.array_equal(bands.lower[lv], lo, equal_nan=True)
        assert np.array_equal(bands.upper[lv], hi, equal_nan=True)
        assert np.isfinite(lo).any() and np.isnan(lo).any()  # both cases exercised
    np.testing.assert_array_equal(bands.n_calibration, _loop_counts(cell, origin, avail, point, actual, scale, target))


def test_asymmetric_score_is_the_larger_of_the_two_scaled_overshoots():
    s = scaled_residual(
        point=np.array([10.0, 10.0, 10.0, 10.0]),
        actual=np.array([4.0, 13.0, 10.0, 1.0]),
        lower=np.array([2.0, 2.0, 1.0, 0.0]),
        upper=np.array([1.0, 3.0, 1.0, 1.0]),
    )
    assert np.array_equal(s, [3.0, 1.0, 0.0, np.nan], equal_nan=True)  # (10-4)/2, (13-10)/3, 0, no scale


def test_with_asymmetric_half_widths_the_band_scales_each_side_by_its_own_width():
    n = 9  # nine residuals of one cell published before the target's origin
    base = np.datetime64("2020-01-01", "ns")
    origin = np.r_[np.zeros(n, dtype=int), 5] * np.timedelta64(1, "D") + base
    avail = np.r_[np.ones(n, dtype=int), 6] * np.timedelta64(1, "D") + base
    point = np.zeros(n + 1)
    actual = np.r_[np.arange(1, n + 1, dtype=float), 0.0]  # scores 1..9 with u = 1
    lower, upper = np.r_[np.ones(n), 2.0], np.r_[np.ones(n), 3.0]
    target = np.r_[np.zeros(n, dtype=bool), True]
    bands = pooled_bands(
        cell=np.zeros(n + 1, dtype=int),
        origin=origin,
        available_at=avail,
        point=point,
        actual=actual,
        lower=lower,
        upper=upper,
        target=target,
        levels_percent=(80,),
    )
    k = 8.0  # ceil(10 * 0.8) = 8th smallest of 1..9
    assert bands.lower[0, 0] == -k * 2.0 and bands.upper[0, 0] == k * 3.0 and bands.n_calibration[0] == n


@pytest.mark.parametrize(("n", "level", "has"), [(3, 80, False), (4, 80, True), (18, 95, False), (19, 95, True)])
def test_when_the_rank_exceeds_the_residuals_then_there_is_no_band(n, level, has):
    base = np.datetime64("2020-01-01", "ns")
    day = np.timedelta64(1, "D")
    origin = np.r_[np.zeros(n, dtype=int), 10] * day + base
    avail = np.r_[np.ones(n, dtype=int), 11] * day + base
    rng = np.random.default_rng(n)
    bands = pooled_bands(
        cell=np.zeros(n + 1, dtype=int),
        origin=origin,
        available_at=avail,
        point=np.zeros(n + 1),
        actual=rng.normal(size=n + 1),
        lower=np.ones(n + 1),
        upper=np.ones(n + 1),
        target=np.r_[np.zeros(n, dtype=bool), True],
        levels_percent=(level,),
    )
    assert conformal_rank(np.array([n]), level)[0] <= n if has else conformal_rank(np.array([n]), level)[0] > n
    assert bool(np.isfinite(bands.lower[0, 0])) is has


def test_when_residuals_are_published_after_the_origin_or_in_another_cell_then_they_do_not_calibrate():
    base = np.datetime64("2020-01-01", "ns")
    day = np.timedelta64(1, "D")
    # cell 0: ten residuals of 1 published at day 1, five of 100 published at day 9 (after origin 5);
    # cell 1: five residuals of 100 published at day 1; the target sits in cell 0 at origin 5
    cell = np.r_[np.zeros(15, dtype=int), np.ones(5, dtype=int), 0]
    origin = np.r_[np.zeros(20, dtype=int), 5] * day + base
    avail = np.r_[np.ones(10, dtype=int), np.full(5, 9), np.ones(5, dtype=int), 6] * day + base
    actual = np.r_[np.ones(10), np.full(10, 100.0), 0.0]
    bands = pooled_bands(
        cell=cell,
        origin=origin,
        available_at=avail,
        point=np.zeros(21),
        actual=actual,
        lower=np.ones(21),
        upper=np.ones(21),
        target=np.r_[np.zeros(20, dtype=bool), True],
        levels_percent=(80,),
    )
    assert bands.n_calibration[0] == 10 and bands.upper[0, 0] == 1.0  # no 100 entered


def test_calibration_min_history_is_the_runs_or_season_plus_one_whichever_is_lower():
    assert calibration_min_history(24, 12) == 13
    assert calibration_min_history(5, 12) == 5
    assert calibration_min_history(13, 12) == 13


# ---------------------------------------------------------------- the engine with calibration origins


def test_calibration_rows_never_enter_the_score_set_and_only_the_bands_change():
    plain, calibrated = _run(0), _run(6)
    assert calibrated.meta["conformal"]["calibration_rows"] > 0
    assert len(plain.table) == len(calibrated.table)
    assert sorted(calibrated.table["origin"].unique()) == sorted(plain.table["origin"].unique())
    others = [c for c in plain.table.columns if c not in BAND_COLUMNS]
    pd.testing.assert_frame_equal(plain.table[others], calibrated.table[others])
    assert calibrated.meta["protocol"]["n_calibration_origins"] == 6
    assert plain.meta["protocol"]["n_calibration_origins"] == 0


def test_with_no_calibration_origins_the_score_set_is_the_per_series_split_conformal_one():
    explicit = _run(0)
    default = run(
        PANEL, RollingOrigin(horizon=6, stride=6, n_origins=4), FACTORIES, units=("series", "total"), min_history=12
    )
    pd.testing.assert_frame_equal(explicit.table, default.table)
    assert explicit.meta["conformal"] == default.meta["conformal"]
    assert "method" not in explicit.meta["conformal"]  # the per-series route, untouched


def test_with_calibration_origins_a_per_series_unit_has_80_and_95_bands_from_the_first_scored_origin():
    scores = _run(1)
    series = scores.table[scores.table["unit"] == "series"]
    first = series["origin"].min()
    at_first = series[(series["origin"] == first) & (series["scale_mae"] > 0)]
    assert len(at_first) > 0
    assert at_first["lo80"].notna().all() and at_first["lo95"].notna().all()
    assert (at_first["lo95"] <= at_first["lo80"]).all() and (at_first["hi80"] <= at_first["hi95"]).all()
    assert (at_first["lo80"] <= at_first["point"]).all() and (at_first["point"] <= at_first["hi80"]).all()
    conformal = scores.meta["conformal"]
    assert conformal["method"] == "pooled scaled residuals, WP26 3.6"
    assert conformal["calibration_origins"] == [str(PANEL.periods[PANEL.periods.get_loc(first) - 6].date())]
    assert conformal["rows_with_band"]["80"] + conformal["rows_without_band"]["80"] == len(scores.table)


def test_the_total_has_a_95_band_only_once_19_residuals_of_its_step_are_published():
    scores = _run(6)  # one series: 6 calibration residuals per step, +1 per earlier scored origin
    total = scores.table[scores.table["unit"] == "total"]
    assert total["lo80"].notna().all()
    assert total["lo95"].isna().all()  # 6 + 3 < 19 at the last of 4 scored origins


def test_guards_apply_to_calibration_origins(monkeypatch):
    first = _protocol(0).origins(PANEL, min_history=12)[0].index
    real = tasks.predict_history

    def leak_at_calibration_origins(data, rows, *, index, origin):
        if index >= first:
            return real(data, rows, index=index, origin=origin)
        h = slices._history(data, np.asarray(rows), index + 1, PANEL.periods[-1])  # one column too many
        return dataclasses.replace(h, as_of=origin)

    monkeypatch.setattr(tasks, "predict_history", leak_at_calibration_origins)
    _run(0)  # the scored origins never leak: no error without calibration origins
    with pytest.raises(LookaheadError, match="published after the origin"):
        _run(3)


def test_guard_checks_are_counted_for_every_calibration_hand_over():
    scores = _run(5)
    checks = scores.meta["conformal"]["calibration_guard_checks"]
    # one predict check per (model, chunk, origin) with series to forecast: 2 models x 2 units x 5 origins
    assert checks["predict"] == 2 * 2 * 5


def test_bands_at_the_first_scored_origin_do_not_move_when_data_after_it_is_poisoned():
    first = _protocol(0).origins(PANEL, min_history=12)[0]
    poisoned = poison_after(PANEL, first.index, seed=4)
    clean, dirty = _run(6), _run(6, panel=poisoned)
    at = clean.table["origin"] == first.timestamp
    for column in ["point", *BAND_COLUMNS, "scale_mae"]:
        a, b = clean.table.loc[at, column].to_numpy(), dirty.table.loc[at, column].to_numpy()
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), column
    assert not np.array_equal(clean.table.loc[at, "actual"], dirty.table.loc[at, "actual"])  # not vacuous
    assert clean.table.loc[at, "has_band"].any()


def test_a_static_split_freezes_one_fit_at_the_earliest_calibration_origin():
    protocol = StaticSplit(horizon=6, boundary=36, stride=6, n_origins=3, n_calibration_origins=4, embargo=1)
    plan = calibration_plan(protocol, PANEL, min_history=12)
    assert plan.used == (27, 28, 29, 30)
    origins = plan.protocol.origins(PANEL, min_history=12)
    assert [o.index for o in origins] == [27, 28, 29, 30]
    assert {o.fit_end for o in origins} == {26}
    scores = run(PANEL, protocol, {"global": instance_factory(GlobalMeanForecaster())}, min_history=12)
    assert scores.table["has_band"].all()


# ---------------------------------------------------------------- coverage by simulation


def _noise_panel(*, sigma: np.ndarray, heavy: np.ndarray, n_periods: int, seed: int) -> Panel:
    """Series ``k``: level ``10 sigma_k`` plus ``sigma_k`` times iid noise, Gaussian or Student-t(3)
    (scaled to unit variance) where ``heavy[k]``."""
    rng = np.random.default_rng(seed)
    n_series = len(sigma)
    periods = pd.date_range("2010-01-01", periods=n_periods, freq="MS")
    noise = np.where(
        heavy[:, None],
        rng.standard_t(3, size=(n_series, n_periods)) / np.sqrt(3.0),
        rng.standard_normal((n_series, n_periods)),
    )
    values = 10.0 * sigma[:, None] + sigma[:, None] * noise
    frame = pd.DataFrame(
        {
            "series_id": np.repeat([f"s{k:04d}" for k in range(n_series)], n_periods),
            "period": np.tile(periods, n_series),
            "value": values.ravel(),
        }
    )
    return Panel.from_long(frame, freq="MS", season_length=1, name="noise")


def _inside(t: pd.DataFrame, level: int) -> pd.Series:
    return (t["actual"] >= t[f"lo{level}"]) & (t["actual"] <= t[f"hi{level}"])


@pytest.mark.parametrize("heteroscedastic", [False, True], ids=["iid", "heteroscedastic"])
def test_pooled_bands_cover_within_two_points_of_nominal(heteroscedastic):
    n_series = 1500
    rng = np.random.default_rng(7)
    # iid: one scale, Gaussian noise; heteroscedastic: scales three orders of magnitude apart, and half
    # the series with heavy-tailed noise
    sigma = 10.0 ** rng.uniform(0.0, 3.0, size=n_series) if heteroscedastic else np.ones(n_series)
    heavy = rng.random(n_series) < 0.5 if heteroscedastic else np.zeros(n_series, dtype=bool)
    panel = _noise_panel(sigma=sigma, heavy=heavy, n_periods=60, seed=8)
    protocol = RollingOrigin(horizon=3, stride=3, n_origins=6, n_calibration_origins=6)
    t = run(panel, protocol, {"mean": instance_factory(MeanForecaster())}, min_history=24).table
    assert t["has_band"].all() and t["lo95"].notna().all()  # every scored row has both bands
    for level in (80, 95):
        assert abs(_inside(t, level).mean() - level / 100) <= 0.02, (level, _inside(t, level).mean())
    if heteroscedastic:  # scaling makes coverage hold across sizes too, not only on average
        size = pd.qcut(np.log(sigma[t["series_id"].str[1:].astype(int).to_numpy()]), 3, labels=False)
        by_size = _inside(t, 80).groupby(size).mean()
        assert (by_size - 0.80).abs().max() <= 0.03, by_size.to_dict()
        # while unscaled residuals pooled the same way cover the small series always, the large rarely
        unscaled = t.assign(scale_mae=1.0)
        attach_pooled_bands(ScoreSet(unscaled), None)  # from the earlier scored origins only
        banded = unscaled["has_band"].to_numpy()
        by_size_unscaled = _inside(unscaled[banded], 80).groupby(size[banded]).mean()
        assert by_size_unscaled.min() < 0.6 and by_size_unscaled.max() > 0.95, by_size_unscaled.to_dict()


def test_calibrated_bands_are_the_same_with_worker_processes():
    sequential = _run(6)
    parallel = _run(6, backend="joblib", n_jobs=2)
    pd.testing.assert_frame_equal(sequential.table, parallel.table)
    untimed = [
        {k: v for k, v in r.meta["conformal"].items() if k != "calibration_models"} for r in (sequential, parallel)
    ]
    assert untimed[0] == untimed[1]
    support = [
        {m: v["support"] for m, v in r.meta["conformal"]["calibration_models"].items()} for r in (sequential, parallel)
    ]
    assert support[0] == support[1] and min(support[0].values()) > 0


def test_a_models_bands_do_not_depend_on_the_other_models_of_the_run():
    together = _run(6).table
    alone = _run(6, factories={"naive": FACTORIES["naive"]}).table  # the harness runs one model at a time
    pd.testing.assert_frame_equal(
        conform_table(together[together["model"] == "naive"].reset_index(drop=True)), alone.reset_index(drop=True)
    )


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-3, 40), max_size=60), st.sampled_from([0, 1 << 16, -(1 << 40)]))
def test_cells_are_grouped_in_input_order_whatever_the_span_of_their_codes(codes, shift):
    """The radix grouping (codes spanning < 65,536 values) and the unique-based one (wider spans) give
    each row its cell's rank among the distinct codes, and each group's rows in input order."""
    from tycheon.backtest.calibration import _cell_groups

    cell = np.asarray(codes, dtype=np.int64)
    if len(cell):
        cell[0] += shift  # a far code widens the span past the radix grouping
    group, starts, by_group = _cell_groups(cell)
    distinct = np.unique(cell)
    np.testing.assert_array_equal(group, np.searchsorted(distinct, cell))
    assert len(starts) == len(distinct) + 1
    for g, code in enumerate(distinct):
        np.testing.assert_array_equal(by_group[starts[g] : starts[g + 1]], np.flatnonzero(cell == code))
