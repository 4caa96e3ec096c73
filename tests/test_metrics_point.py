"""Point metrics and per-block aggregation: pinned against utilsforecast 0.2.17, plain loops, properties."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tycheon.errors import InputError
from tycheon.metrics import (
    ScaleMismatchError,
    ZeroScaleError,
    bias,
    block_scores,
    mae,
    mape,
    mase,
    rmse,
    rmsse,
    scale_column,
    scaled_bias,
    smape,
    step_scores,
    summarize,
    wape,
)
from tycheon.metrics.scale import seasonal_naive_scales

SEASON = 4
H = 3


def _panel(n_series: int = 4, length: int = 30, seed: int = 0) -> tuple[pd.DatetimeIndex, np.ndarray]:
    rng = np.random.default_rng(seed)
    periods = pd.date_range("2020-01-01", periods=length, freq="MS")
    t = np.arange(length)
    y = 50 + 10 * np.sin(2 * np.pi * t / SEASON)[None, :] + rng.gamma(2.0, 3.0, size=(n_series, length))
    return periods, y  # [series, time]


def _scoreset_table(models: dict[str, float], origins: tuple[int, ...] = (20, 23, 26), seed: int = 0) -> pd.DataFrame:
    """Score-set-like rows: every model is the seasonal naive plus model-specific noise."""
    periods, y = _panel(seed=seed)
    rng = np.random.default_rng(seed + 1)
    rows = []
    for i in origins:
        s_mae, s_rmse, _ = seasonal_naive_scales(y[:, :i], np.ones((y.shape[0], i), bool), SEASON)
        for name, noise in models.items():
            for s in range(y.shape[0]):
                for h in range(1, H + 1):
                    j = i + h - 1
                    point = y[s, j - SEASON * ((h - 1) // SEASON + 1)] + noise * rng.normal()
                    rows.append(
                        {
                            "model": name, "unit": "series", "series_id": f"s{s}", "origin": periods[i],
                            "step": h, "target_period": periods[j], "actual": y[s, j], "point": point,
                            "scale_mae": s_mae[s], "scale_rmse": s_rmse[s], "season_length": SEASON,
                            "demand_class": "smooth", "weight": 1.0,
                            "lo80": point - 5, "hi80": point + 5, "lo95": point - 9, "hi95": point + 9,
                        }
                    )  # fmt: skip
    return pd.DataFrame(rows)


def test_when_scored_per_block_then_mase_and_rmsse_match_utilsforecast():
    from utilsforecast.losses import mase as uf_mase
    from utilsforecast.losses import rmsse as uf_rmsse

    periods, y = _panel()
    table = _scoreset_table({"m1": 3.0, "m2": 6.0})
    blocks = block_scores(table, metrics=("mase", "rmsse"))
    # utilsforecast convention: the cutoff is the last training timestamp (ds <= cutoff) and the scale is
    # the in-sample seasonal-naive MAE / MSE on that window, the same as tycheon.metrics.scale.
    wide = table.pivot_table(index=["series_id", "origin", "target_period", "actual"], columns="model", values="point")
    wide = wide.reset_index().rename(columns={"series_id": "unique_id", "target_period": "ds", "actual": "y"})
    wide["cutoff"] = wide["origin"] - pd.DateOffset(months=1)
    wide = wide.drop(columns="origin")
    train = pd.DataFrame(
        {"unique_id": np.repeat([f"s{s}" for s in range(y.shape[0])], y.shape[1]),
         "ds": np.tile(periods, y.shape[0]), "y": y.ravel()}
    )  # fmt: skip
    for fn, metric in ((uf_mase, "mase"), (uf_rmsse, "rmsse")):
        ref = fn(wide, ["m1", "m2"], SEASON, train).melt(id_vars=["cutoff", "unique_id"], var_name="model")
        ref["origin"] = ref["cutoff"] + pd.DateOffset(months=1)
        merged = blocks.merge(ref, left_on=["model", "series_id", "origin"], right_on=["model", "unique_id", "origin"])
        assert len(merged) == len(blocks) == 2 * 4 * 3
        np.testing.assert_allclose(merged[metric], merged["value"], rtol=1e-12)


def test_when_smape_and_wape_are_scored_then_they_match_utilsforecast_conventions():
    from utilsforecast.losses import smape as uf_smape
    from utilsforecast.losses import wape as uf_wape

    rng = np.random.default_rng(3)
    y = np.r_[rng.gamma(2.0, 2.0, 11), 0.0]
    f = np.r_[rng.gamma(2.0, 2.0, 11), 0.0]  # last step 0/0 counts as a perfect forecast in both
    df = pd.DataFrame({"unique_id": "a", "y": y, "m": f})
    # utilsforecast's smape has no factor 2 (range [0, 1]); ours is the M4 fraction in [0, 2].
    assert smape(actual=y, point=f) == pytest.approx(2 * uf_smape(df, ["m"])["m"].iloc[0], rel=1e-12)
    assert wape(actual=y, point=f) == pytest.approx(uf_wape(df, ["m"])["m"].iloc[0], rel=1e-12)


def test_when_computed_by_plain_loops_then_block_scores_agree():
    table = _scoreset_table({"a": 2.0, "b": 5.0})
    table.loc[0, "actual"] = 0.0  # one block with an undefined MAPE
    blocks = block_scores(table, metrics=("mae", "rmse", "mase", "rmsse", "wape", "smape", "mape", "bias",
                                           "scaled_bias", "msis80", "coverage95", "width80"))  # fmt: skip
    for (model, sid, origin), g in table.groupby(["model", "series_id", "origin"]):
        got = blocks[(blocks.model == model) & (blocks.series_id == sid) & (blocks.origin == origin)].iloc[0]
        yy, ff = g["actual"].to_numpy(), g["point"].to_numpy()
        s_mae, s_rmse = g["scale_mae"].iloc[0], g["scale_rmse"].iloc[0]
        errs = [p - a for a, p in zip(yy, ff, strict=False)]
        assert got["mae"] == pytest.approx(sum(abs(e) for e in errs) / len(errs))
        assert got["rmse"] == pytest.approx((sum(e * e for e in errs) / len(errs)) ** 0.5)
        assert got["mase"] == pytest.approx(mase(actual=yy, point=ff, scale=s_mae))
        assert got["rmsse"] == pytest.approx(rmsse(actual=yy, point=ff, scale=s_rmse))
        assert got["wape"] == pytest.approx(sum(abs(e) for e in errs) / sum(abs(a) for a in yy))
        assert got["smape"] == pytest.approx(smape(actual=yy, point=ff))
        assert got["bias"] == pytest.approx(sum(errs) / len(errs))
        assert got["scaled_bias"] == pytest.approx(scaled_bias(actual=yy, point=ff, scale=s_mae))
        if (yy == 0).any():
            assert np.isnan(got["mape"]) and not got["mape_defined"]
        else:
            assert got["mape"] == pytest.approx(mape(actual=yy, point=ff))
        score80 = [
            (h - lo) + 10 * (max(lo - a, 0) + max(a - h, 0)) for a, lo, h in zip(yy, g.lo80, g.hi80, strict=False)
        ]
        assert got["msis80"] == pytest.approx(sum(score80) / len(yy) / s_mae)
        assert got["coverage95"] == pytest.approx(
            np.mean([lo <= a <= h for a, lo, h in zip(yy, g.lo95, g.hi95, strict=False)])
        )
        assert got["width80"] == pytest.approx(10.0)


def test_when_a_blend_is_scored_through_the_table_then_rmsse_uses_the_rmse_scale():
    # Paper section 11: the blend's RMSSE was divided by the seasonal-naive MAE instead of the RMSE.
    table = _scoreset_table({"a": 2.0, "b": 5.0})
    a, b = table[table.model == "a"], table[table.model == "b"]
    blend = a.assign(model="blend", point=(a["point"].to_numpy() + b["point"].to_numpy()) / 2)
    blocks = block_scores(pd.concat([table, blend], ignore_index=True), metrics=("rmsse",))
    right = blend.groupby(["series_id", "origin"]).apply(
        lambda g: np.sqrt(np.mean((g.point - g.actual) ** 2)) / g.scale_rmse.iloc[0], include_groups=False
    )
    wrong = blend.groupby(["series_id", "origin"]).apply(
        lambda g: np.sqrt(np.mean((g.point - g.actual) ** 2)) / g.scale_mae.iloc[0], include_groups=False
    )
    got = blocks[blocks.model == "blend"].set_index(["series_id", "origin"])["rmsse"].sort_index()
    np.testing.assert_allclose(got.to_numpy(), right.sort_index().to_numpy(), rtol=1e-12)
    ratio = (wrong / right).sort_index()
    scales = blend.groupby(["series_id", "origin"])[["scale_rmse", "scale_mae"]].first().sort_index()
    np.testing.assert_allclose(ratio.to_numpy(), (scales.scale_rmse / scales.scale_mae).to_numpy())
    assert (ratio > 1).all()  # the wrong denominator inflates every block
    assert scale_column("rmsse") == "scale_rmse" and scale_column("mase") == "scale_mae"


def test_when_a_blend_carries_the_wrong_denominator_then_the_table_is_refused():
    table = _scoreset_table({"a": 2.0, "b": 5.0})
    a, b = table[table.model == "a"], table[table.model == "b"]
    # the section-11 error in record form: the blend's RMSE scale replaced by the MAE scale
    blend = a.assign(model="blend", point=(a["point"].to_numpy() + b["point"].to_numpy()) / 2,
                     scale_rmse=a["scale_mae"])  # fmt: skip
    with pytest.raises(ScaleMismatchError, match="scale_rmse"):
        block_scores(pd.concat([table, blend], ignore_index=True), metrics=("rmsse",))
    with pytest.raises(InputError, match="not a scaled metric"):
        scale_column("mae")


def test_when_scale_is_zero_then_error_or_documented_exclusion_never_inf():
    y = np.array([[1.0, 2.0, 3.0], [4.0, 4.0, 5.0]])
    f = np.array([[1.5, 2.0, 2.0], [4.0, 5.0, 5.0]])
    with pytest.raises(ZeroScaleError, match="zero or missing"):
        mase(actual=y, point=f, scale=[1.0, 0.0])
    out = mase(actual=y, point=f, scale=[1.0, 0.0], zero_scale="exclude")
    assert out[0] == pytest.approx(0.5) and np.isnan(out[1])
    table = _scoreset_table({"a": 2.0})
    first = (table.series_id == "s0") & (table.origin == table.origin.min())
    table.loc[first, ["scale_mae", "scale_rmse"]] = 0.0
    blocks = block_scores(table, metrics=("mase", "rmsse", "mae"))
    assert blocks["zero_scale"].sum() == 1
    assert np.isfinite(blocks.loc[~blocks.zero_scale, ["mase", "rmsse"]]).all().all()
    assert not np.isinf(blocks[["mase", "rmsse"]].to_numpy()).any()
    summ = summarize(blocks, metrics=("mase", "mae"))
    assert summ["n_zero_scale"].iloc[0] == 1 and summ["n_blocks"].iloc[0] == 12
    assert summ["mase_mean"].iloc[0] == pytest.approx(blocks.loc[~blocks.zero_scale, "mase"].mean())
    steps = step_scores(table)
    assert (steps["n_zero_scale"] == 1).all() and np.isfinite(steps["rmsse_mean"]).all()


def test_when_inputs_are_bad_then_errors_say_what():
    with pytest.raises(InputError, match="non-finite"):
        mae(actual=[1.0, np.nan], point=[1.0, 2.0])
    with pytest.raises(InputError, match="shapes must match"):
        rmse(actual=[1.0, 2.0], point=[1.0])
    with pytest.raises(InputError, match="undefined where an actual is zero"):
        mape(actual=[0.0, 1.0], point=[1.0, 1.0])
    with pytest.raises(InputError, match="all zero"):
        wape(actual=[0.0, 0.0], point=[1.0, 1.0])
    with pytest.raises(InputError, match="non-negative"):
        mase(actual=[1.0], point=[2.0], scale=-1.0)
    with pytest.raises(InputError, match="unknown metric"):
        block_scores(_scoreset_table({"a": 1.0}), metrics=("mse",))


def test_when_summarized_then_mean_and_median_per_step_and_model():
    table = _scoreset_table({"a": 2.0, "b": 5.0})
    steps = step_scores(table)
    assert set(steps["step"]) == {1, 2, 3} and len(steps) == 6
    sub = table[(table.model == "a") & (table.step == 2)]
    assert steps.query("model == 'a' and step == 2")["mase_median"].iloc[0] == pytest.approx(
        np.median(np.abs(sub.point - sub.actual) / sub.scale_mae)
    )
    assert bias(actual=[1.0, 2.0], point=[2.0, 4.0]) == pytest.approx(1.5)


@settings(max_examples=40, deadline=None)
@given(
    c=st.floats(min_value=1e-3, max_value=1e3),
    seed=st.integers(0, 2**16),
)
def test_property_mase_and_rmsse_are_scale_invariant(c, seed):
    rng = np.random.default_rng(seed)
    train = rng.normal(10, 3, size=(3, 16))
    y = rng.normal(10, 3, size=(3, 4))
    f = rng.normal(10, 3, size=(3, 4))
    obs = np.ones_like(train, dtype=bool)
    s1, s2, _ = seasonal_naive_scales(train, obs, SEASON)
    t1, t2, _ = seasonal_naive_scales(c * train, obs, SEASON)
    np.testing.assert_allclose(mase(actual=c * y, point=c * f, scale=t1), mase(actual=y, point=f, scale=s1), rtol=1e-9)
    np.testing.assert_allclose(
        rmsse(actual=c * y, point=c * f, scale=t2), rmsse(actual=y, point=f, scale=s2), rtol=1e-9
    )


def test_every_public_statistic_documents_its_formula_and_reference():
    import inspect

    import tycheon.metrics as metrics_pkg
    import tycheon.stats as stats_pkg

    helpers = {
        "scale_column",
        "pooled_layout",
        "panel_layout",
        "seasonal_naive_scales",
        "get_metric",
        "glossary",
        "metric_names",
    }  # lookups, not statistics
    undocumented = []
    for pkg in (metrics_pkg, stats_pkg):
        for name in pkg.__all__:
            obj = getattr(pkg, name)
            if inspect.isfunction(obj) and name not in helpers:
                doc = obj.__doc__ or ""
                if ".. math::" not in doc or "References" not in doc:
                    undocumented.append(f"{pkg.__name__}.{name}")
    assert undocumented == []


def test_when_zero_scale_option_is_misspelt_then_it_is_refused_even_with_good_scales():
    from tycheon.metrics import msis

    with pytest.raises(InputError, match="zero_scale must be 'raise' or 'exclude'"):
        mase(actual=[1.0, 2.0], point=[2.0, 2.0], scale=1.0, zero_scale="typo")
    with pytest.raises(InputError, match="zero_scale must be"):
        msis(actual=[1.0], lower=[0.0], upper=[2.0], alpha=0.2, scale=1.0, zero_scale="Exclude")
