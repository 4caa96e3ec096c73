"""The inventory outcome: the (R, S) simulation against a plain per-series loop and the textbook closed forms
(Normal and Poisson demand), the band-to-level reading, and the inventory table on hand-made cells."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from tycheon.analysis.inventory import inventory_table
from tycheon.errors import InputError, MetricInputError
from tycheon.metrics.inventory import order_up_to_from_band, simulate_order_up_to

FIELDS = ("demand", "served", "short", "mean_on_hand", "cycles", "stockout_cycles", "periods")


def loop_order_up_to(demand, level, valid, lead_time, review_period, lost_sales):
    """One series at a time, one period at a time, orders kept as a list of (due count, quantity).

    Written from the policy statement, not from the kernel: skip invalid periods; count valid periods c;
    review when c % R == 0 (IP = on hand + on order - backorders, order max(0, S - IP), due at count c + L);
    receive what is due at c; serve old backorders first, then the period's demand; the first review
    starts with S on hand.
    """
    out = {f: [] for f in FIELDS}
    for i in range(demand.shape[0]):
        on_hand, backlog, orders = None, 0.0, []
        c, total, served, short, stock, cycles, stockouts, hit = 0, 0.0, 0.0, 0.0, 0.0, 0, 0, False
        for t in range(demand.shape[1]):
            if not valid[i, t]:
                continue
            if c % review_period == 0:
                if hit:
                    stockouts += 1
                hit = False
                cycles += 1
                if on_hand is None:
                    on_hand = level[i, t]
                position = on_hand + sum(q for _, q in orders) - backlog
                orders.append((c + lead_time, max(0.0, level[i, t] - position)))
            on_hand += sum(q for due, q in orders if due == c)
            orders = [(due, q) for due, q in orders if due != c]
            d = demand[i, t]
            if not lost_sales:
                late = min(on_hand, backlog)
                on_hand -= late
                backlog -= late
            now = min(on_hand, d)
            on_hand -= now
            if not lost_sales:
                backlog += d - now
            total += d
            served += now
            short += d - now
            hit = hit or d - now > 0
            stock += on_hand
            c += 1
        stockouts += hit
        for f, v in zip(FIELDS, (total, served, short, stock / c if c else np.nan, cycles, stockouts, c), strict=True):
            out[f].append(v)
    return {f: np.array(v) for f, v in out.items()}


def _random_case(seed, n=40, t=30, integer=True):
    rng = np.random.default_rng(seed)
    mean = rng.gamma(2.0, 5.0, (n, 1))
    demand = rng.poisson(mean, (n, t)).astype(float)
    demand[rng.random((n, t)) < 0.2] = 0.0
    level = np.round(mean * rng.uniform(0.0, 4.0, (n, t)))
    if not integer:
        demand = demand * rng.uniform(0.5, 1.5, (n, t))
        level = level * rng.uniform(0.5, 1.5, (n, t))
    valid = rng.random((n, t)) > 0.2
    valid[0] = False  # a series with no valid period
    valid[1, :5] = False  # one that starts late
    demand[~valid & (rng.random((n, t)) < 0.5)] = np.nan  # not read where invalid
    level[~valid & (rng.random((n, t)) < 0.5)] = np.nan
    return demand, level, valid


@pytest.mark.parametrize("lost_sales", [True, False])
@pytest.mark.parametrize("review_period", [1, 2, 4])
@pytest.mark.parametrize("lead_time", [0, 1, 3])
def test_when_compared_with_a_plain_loop_then_the_vectorised_simulation_is_identical(
    lead_time, review_period, lost_sales
):
    # integer demand and levels: every sum is exact in floating point, so equality is exact (ties included)
    demand, level, valid = _random_case(100 * lead_time + 10 * review_period + lost_sales)
    got = simulate_order_up_to(
        demand, level, lead_time=lead_time, review_period=review_period, lost_sales=lost_sales, valid=valid
    )
    want = loop_order_up_to(demand, level, valid, lead_time, review_period, lost_sales)
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(got, f), want[f], err_msg=f)
    assert (got.stockout_cycles > 0).any() and (got.stockout_cycles < got.cycles).any()  # both kinds of cycle


@pytest.mark.parametrize("lost_sales", [True, False])
@pytest.mark.parametrize(("lead_time", "review_period"), [(0, 1), (1, 2), (3, 4)])
def test_when_values_are_continuous_then_the_simulation_matches_the_loop_to_rounding(
    lead_time, review_period, lost_sales
):
    demand, level, valid = _random_case(7 + lead_time, integer=False)
    got = simulate_order_up_to(
        demand, level, lead_time=lead_time, review_period=review_period, lost_sales=lost_sales, valid=valid
    )
    want = loop_order_up_to(demand, level, valid, lead_time, review_period, lost_sales)
    for f in FIELDS:
        np.testing.assert_allclose(getattr(got, f), want[f], rtol=1e-12, atol=1e-9, err_msg=f)


def test_when_valid_is_not_given_then_nan_demand_or_level_periods_are_skipped():
    demand, level, valid = _random_case(3)
    demand = np.where(valid, demand, np.nan)
    got = simulate_order_up_to(demand, level, lead_time=1, review_period=2)
    want = loop_order_up_to(demand, level, np.isfinite(demand) & np.isfinite(level), 1, 2, True)
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(got, f), want[f], err_msg=f)


def test_when_a_period_is_invalid_then_the_outcome_equals_the_series_without_it():
    rng = np.random.default_rng(5)
    demand = rng.poisson(8.0, (6, 20)).astype(float)
    level = rng.integers(0, 30, (6, 20)).astype(float)
    keep = np.ones(20, dtype=bool)
    keep[[3, 4, 11]] = False
    valid = np.broadcast_to(keep, demand.shape).copy()
    gapped = simulate_order_up_to(demand, level, lead_time=2, review_period=3, valid=valid)
    dropped = simulate_order_up_to(demand[:, keep], level[:, keep], lead_time=2, review_period=3)
    for f in FIELDS:
        np.testing.assert_array_equal(getattr(gapped, f), getattr(dropped, f), err_msg=f)


def _loss(z):
    """Standard normal loss function G(z) = E[(Z - z)^+] = phi(z) - z (1 - Phi(z))."""
    return stats.norm.pdf(z) - z * stats.norm.sf(z)


@pytest.mark.parametrize("lost_sales", [True, False])
@pytest.mark.parametrize("z", [0.5, 1.2816, 2.0])
def test_when_demand_is_normal_and_review_is_every_period_then_service_meets_the_closed_form(z, lost_sales):
    # L = 0, R = 1, S = mu + z sigma: every period starts with S on hand (lost sales and backorders alike), so
    # short = (D - S)^+, end stock = (S - D)^+, a stockout iff D > S (Silver, Pyke & Thomopoulos 2017, 6.7):
    # E short = sigma G(z), fill = 1 - sigma G(z) / mu, CSL = Phi(z), E end stock = sigma (z + G(z)).
    # Demand is clipped at 0 (P(D < 0) = Phi(-5) = 3e-7 changes these by < 1e-8). 4 standard errors.
    mu, sigma, n, t = 100.0, 20.0, 2000, 200
    demand = np.maximum(np.random.default_rng(int(z * 1e4)).normal(mu, sigma, (n, t)), 0.0)
    out = simulate_order_up_to(demand, np.full((n, t), mu + z * sigma), lost_sales=lost_sales)

    def near(per_series, expected):
        se = per_series.std(ddof=1) / np.sqrt(n)
        assert abs(per_series.mean() - expected) < 4 * se + 1e-12, (per_series.mean(), expected, se)

    near(out.short / t, sigma * _loss(z))
    near(out.cycle_service_level, stats.norm.cdf(z))
    near(out.mean_on_hand, sigma * (z + _loss(z)))
    near(out.fill_rate, 1 - sigma * _loss(z) / mu)


def test_when_backordered_with_a_lead_time_then_new_shortage_meets_the_closed_form():
    # L = 1, R = 1, backorders: the inventory position after ordering is S, so the demand of period t left
    # unmet is min(D_t, (D_{t-1} + D_t - S)^+) = (X_2 - S)^+ - (X_1 - S)^+ with X_k the k-period demand
    # (Axsäter 2015, 5.3): E short = sqrt(2) sigma G(z) - sigma G((S - mu) / sigma) for S = 2 mu + z sqrt(2) sigma.
    mu, sigma, z, n, t = 100.0, 20.0, 1.2816, 2000, 200
    demand = np.maximum(np.random.default_rng(11).normal(mu, sigma, (n, t)), 0.0)
    s = 2 * mu + z * np.sqrt(2) * sigma
    out = simulate_order_up_to(demand, np.full((n, t), s), lead_time=1, lost_sales=False)
    per = out.short[:, None] / t
    expected = np.sqrt(2) * sigma * _loss(z) - sigma * _loss((s - mu) / sigma)
    assert abs(per.mean() - expected) < 4 * per.std(ddof=1) / np.sqrt(n) + 0.02 * expected  # + first-period start


@pytest.mark.parametrize("s", [5, 8])
def test_when_demand_is_poisson_then_fill_rate_and_csl_meet_the_closed_form(s):
    # E[(D - S)^+] = sum_{d > S} (d - S) p(d); fill = 1 - E[(D - S)^+] / lambda; CSL = P(D <= S).
    lam, n, t = 5.0, 2000, 100
    d = np.arange(0, 200)
    shortage = float(np.sum(np.maximum(d - s, 0) * stats.poisson.pmf(d, lam)))
    demand = np.random.default_rng(s).poisson(lam, (n, t)).astype(float)
    out = simulate_order_up_to(demand, np.full((n, t), float(s)))
    per_short = out.short / t
    se = per_short.std(ddof=1) / np.sqrt(n)
    assert abs(per_short.mean() - shortage) < 4 * se
    assert abs(out.served.sum() / out.demand.sum() - (1 - shortage / lam)) < 4 * se / lam + 1e-3
    csl = out.cycle_service_level
    assert abs(csl.mean() - stats.poisson.cdf(s, lam)) < 4 * csl.std(ddof=1) / np.sqrt(n)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    lead_time=st.integers(0, 3),
    review_period=st.integers(1, 4),
    lost_sales=st.booleans(),
    extra=st.floats(0.5, 20.0),
)
def test_when_every_level_rises_then_no_series_is_served_less_and_stock_is_not_lower(
    seed, lead_time, review_period, lost_sales, extra
):
    demand, level, valid = _random_case(seed, n=10, t=16)
    kw = {"lead_time": lead_time, "review_period": review_period, "lost_sales": lost_sales, "valid": valid}
    low = simulate_order_up_to(demand, level, **kw)
    high = simulate_order_up_to(demand, level + extra, **kw)
    assert (high.served >= low.served - 1e-9).all()
    has = low.periods > 0
    assert (high.mean_on_hand[has] >= low.mean_on_hand[has] - 1e-9).all()
    assert (low.served + low.short == pytest.approx(low.demand)) and (low.fill_rate[low.demand > 0] <= 1).all()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"demand": np.ones(5), "level": np.ones(5)}, "2-D"),
        ({"level": np.ones((2, 4))}, "shape"),
        ({"lead_time": -1}, "lead_time"),
        ({"review_period": 0}, "review_period"),
        ({"lead_time": 1.5}, "integer"),
        ({"demand": np.array([[1.0, -2.0, 3.0]] * 2)}, "non-negative.*series 0, period 1"),
        ({"level": np.array([[np.nan, 2.0, 3.0], [1.0, 1.0, 1.0]]), "valid": np.ones((2, 3), bool)}, "level"),
        ({"valid": np.ones((2, 3))}, "bool"),
    ],
)
def test_when_input_is_malformed_then_the_error_says_what(kwargs, match):
    args = {"demand": np.ones((2, 3)), "level": np.ones((2, 3)), **kwargs}
    with pytest.raises(MetricInputError, match=match):
        simulate_order_up_to(args.pop("demand"), args.pop("level"), **args)


def test_when_a_level_is_nan_off_review_then_it_is_not_read():
    level = np.array([[5.0, np.nan, 5.0, np.nan]])
    out = simulate_order_up_to(np.full((1, 4), 2.0), level, review_period=2, valid=np.ones((1, 4), bool))
    assert out.served.tolist() == [8.0] and out.cycles.tolist() == [2]


def test_when_the_band_is_read_at_tau_then_grid_points_are_exact_between_linear_and_below_zero_clipped():
    bands = np.array([[1.0, 2.0, 4.0, 8.0, 10.0], [-9.0, -6.0, -3.0, -1.0, 2.0], [1, 2, np.nan, 4, 5]])
    assert order_up_to_from_band(bands, tau=0.9)[:2].tolist() == [8.0, 0.0]
    assert order_up_to_from_band(bands, tau=0.975)[:2].tolist() == [10.0, 2.0]
    assert order_up_to_from_band(bands, tau=0.7)[0] == pytest.approx(6.0)  # halfway from 0.5 (4) to 0.9 (8)
    assert np.isnan(order_up_to_from_band(bands, tau=0.9)[2])
    with pytest.raises(MetricInputError, match="tau"):
        order_up_to_from_band(bands, tau=0.99)


# ----------------------------------------------------------------------------------------------------------


def _cell(levels, demand, *, horizon=2, stride=2, step_values=None):
    """Score-set rows: ``levels`` model -> level [series, period] (the whole band at that value), or
    ``step_values`` model -> {step: value}; origins every ``stride`` periods, ``horizon`` steps each."""
    n_s, n_t = demand.shape
    periods = pd.date_range("2024-01-01", periods=n_t, freq="MS")
    recs = []
    models = levels or step_values
    for model in models:
        for o in range(-1, n_t - 1, stride):
            for h in range(1, horizon + 1):
                t = o + h
                if t >= n_t:
                    continue
                for s in range(n_s):
                    v = step_values[model][h] if step_values else levels[model][s, t]
                    recs.append((model, f"s{s}", periods[0] + pd.DateOffset(months=o), h, periods[t], demand[s, t], v))
    df = pd.DataFrame(recs, columns=["model", "series_id", "origin", "step", "target_period", "actual", "point"])
    for c in ("lo95", "lo80", "hi80", "hi95"):
        df[c] = df["point"]
    df["model"] = df["model"].astype("category")
    return df


def _alternating(n_s=4, n_t=8):
    """Demand 20, 0, 20, 0, ... (mean 10) on each series, phases shifted, plus one series without demand."""
    d = np.array([[20.0 if (t + s) % 2 == 0 else 0.0 for t in range(n_t)] for s in range(n_s)])
    return np.vstack([d, np.zeros((1, n_t))])


def _hand_cell():
    demand = _alternating()
    levels = {"perfect": demand.copy(), "high": np.full(demand.shape, 25.0), "zero": np.zeros(demand.shape)}
    return _cell(levels, demand), demand


def test_when_models_differ_then_fill_rates_and_stock_needed_are_the_hand_computed_ones():
    # lost sales, L = 0, R = 1, target 0.9. "zero" orders nothing: fill 0, lost share 1, stockouts in the 4 of
    # 8 periods with demand (CSL 0.5), and 1 on the demand-free series -> CSL (4 * 0.5 + 1) / 5 = 0.6. Shifted
    # by k mean demands its level is 10k: fill min(10k, 20) / 20 reaches 0.9 at k = 1.8, with 18 then 0 units
    # left -> 0.9 periods of mean demand. "high" (25 throughout) serves everything holding 5 and 25 (1.5), and
    # the same shift structure gives it the same 0.9 (k = -0.7). "perfect" (S = D) needs no stock: rank 1.
    rows, _ = _hand_cell()
    out = inventory_table(rows, random_walk="zero", min_cell=10)
    by = {r["model"]: r for r in out["rows"]}
    assert [r["model"] for r in out["rows"]] == ["perfect", "high", "zero"]
    assert by["zero"]["fill_rate"] == 0.0 and by["zero"]["lost_share"] == 1.0 and by["zero"]["avg_stock"] == 0.0
    assert by["zero"]["cycle_service_level"] == pytest.approx(0.6)
    assert by["high"]["fill_rate"] == 1.0 and by["high"]["avg_stock"] == pytest.approx(1.5)
    assert by["perfect"]["fill_rate"] == 1.0 and by["perfect"]["avg_stock"] == 0.0
    assert by["zero"]["stock_needed"] == pytest.approx(0.9, rel=1e-8)
    assert by["zero"]["k_needed"] == pytest.approx(1.8, rel=1e-8)
    assert by["high"]["stock_needed"] == pytest.approx(0.9, rel=1e-8)
    assert by["high"]["k_needed"] == pytest.approx(-0.7, rel=1e-8)
    assert by["perfect"]["stock_needed"] == pytest.approx(0.0, abs=1e-9)
    assert {m: r["rank"] for m, r in by.items()} == {"perfect": 1, "high": 2, "zero": 2}
    assert out["winner"] == "perfect" and out["random_walk_row"] == by["zero"]
    assert (out["n_series"], out["n_periods"], out["n_series_periods"], out["n_blocks"]) == (5, 8, 40, 20)
    assert out["cell_ok"] is True and out["policy"] == "lost sales"
    json.dumps(out, allow_nan=False)  # JSON-ready: plain numbers, None for NaN


def test_when_the_cell_is_below_the_minimum_then_rows_are_given_without_rank_or_winner():
    rows, _ = _hand_cell()
    out = inventory_table(rows, random_walk="zero", min_cell=30)  # 20 blocks
    assert out["cell_ok"] is False and "fewer than the minimum cell of 30" in out["cell_reason"]
    assert out["winner"] is None and all(r["rank"] is None for r in out["rows"])
    assert {r["model"]: r["stock_needed"] for r in out["rows"]}["zero"] == pytest.approx(0.9, rel=1e-8)


def test_when_one_model_lacks_a_period_then_no_model_is_simulated_on_it():
    # drop "perfect"'s forecast for series 0 at its first period (demand 20): the pair leaves the support of
    # every model, so "zero" stocks out in 3 of 7 periods on series 0 -> CSL (4/7 + 3 * 0.5 + 1) / 5
    rows, _ = _hand_cell()
    gone = (rows["model"] == "perfect") & (rows["series_id"] == "s0") & (rows["target_period"] == "2024-01-01")
    assert gone.sum() == 1
    out = inventory_table(rows[~gone], random_walk="zero", min_cell=10)
    by = {r["model"]: r for r in out["rows"]}
    assert out["n_series_periods"] == 39
    assert by["zero"]["cycle_service_level"] == pytest.approx((4 / 7 + 3 * 0.5 + 1) / 5)
    unknown = rows.copy()
    unknown.loc[(unknown["series_id"] == "s0") & (unknown["target_period"] == "2024-01-01"), "actual"] = np.nan
    assert inventory_table(unknown, random_walk="zero", min_cell=10)["n_series_periods"] == 39


def test_when_origins_overlap_then_the_smallest_step_plans_the_period():
    # every period is covered by two origins: step 1 forecasts the demand exactly, step 2 forecasts 0. If the
    # older (step-2) forecast planned a period, "exact" would serve nothing.
    demand = _alternating()
    exact = _cell({"exact": demand, "zero": np.zeros(demand.shape)}, demand, horizon=2, stride=1)
    exact.loc[(exact["model"] == "exact") & (exact["step"] == 2), ["lo95", "lo80", "point", "hi80", "hi95"]] = 0.0
    by = {r["model"]: r for r in inventory_table(exact, random_walk="zero", min_cell=10)["rows"]}
    assert by["exact"]["fill_rate"] == 1.0 and by["exact"]["avg_stock"] == 0.0


def test_when_protection_spans_two_periods_then_the_level_sums_the_same_origins_quantiles():
    # L = 1, R = 1 (P = 2), origins every 2 periods with steps 1 and 2: a review at a step-1 period has level
    # q1 + q2 (7 + 11 = 18) from its origin; a step-2 period's origin does not reach t + 1, so it is left out.
    rng = np.random.default_rng(4)
    demand = rng.poisson(9.0, (6, 12)).astype(float)
    rows = _cell(None, demand, step_values={"a": {1: 7.0, 2: 11.0}, "rw": {1: 3.0, 2: 4.0}})
    out = inventory_table(rows, random_walk="rw", lead_time=1, min_cell=2)
    assert out["protection_periods"] == 2 and out["n_periods"] == 6 and out["n_series_periods"] == 36
    kept = demand[:, 0::2]
    by = {r["model"]: r for r in out["rows"]}
    for model, level in (("a", 18.0), ("rw", 7.0)):
        sim = simulate_order_up_to(kept, np.full(kept.shape, level), lead_time=1)
        assert by[model]["fill_rate"] == pytest.approx(float(np.mean(sim.fill_rate)), rel=1e-12)
        assert by[model]["avg_stock"] == pytest.approx(float(np.mean(sim.mean_on_hand / sim.mean_demand)), rel=1e-12)
    assert "comonotone" in out["policy_text"] and "upper bound" in out["policy_text"]
    assert "comonotone" not in inventory_table(rows, random_walk="rw", min_cell=2)["policy_text"]


def test_when_backordering_then_the_table_says_so_and_serves_backorders_later():
    rows, _ = _hand_cell()
    out = inventory_table(rows, random_walk="zero", lost_sales=False, min_cell=10)
    assert out["policy"] == "backorders" and "backordered" in out["policy_text"]
    by = {r["model"]: r for r in out["rows"]}
    assert by["zero"]["fill_rate"] == 0.0 and by["perfect"]["fill_rate"] == 1.0


def test_when_the_target_cannot_be_reached_in_the_bracket_then_stock_needed_is_null_with_a_reason():
    # one series, 100 periods, all demand (100) in the last: k = 50 mean demands is a level of 50, fill 0.5
    demand = np.zeros((1, 100))
    demand[0, -1] = 100.0
    rows = _cell({"m": np.zeros((1, 100)), "rw": np.zeros((1, 100))}, demand, horizon=1, stride=1)
    row = inventory_table(rows, random_walk="rw", min_cell=2)["rows"][0]
    assert row["stock_needed"] is None and row["k_needed"] is None and row["rank"] is None
    assert "stays below 0.9" in row["stock_needed_reason"] and "(0.500 there)" in row["stock_needed_reason"]


def test_when_input_is_not_one_valid_cell_then_the_error_names_the_problem():
    rows, _ = _hand_cell()
    with pytest.raises(InputError, match="random_walk 'naive' has no rows"):
        inventory_table(rows, random_walk="naive")
    with pytest.raises(InputError, match="lack the column"):
        inventory_table(rows.drop(columns="hi95"), random_walk="zero")
    with pytest.raises(InputError, match="target"):
        inventory_table(rows, random_walk="zero", target=0.99)
    with pytest.raises(InputError, match="unique"):
        inventory_table(pd.concat([rows, rows.iloc[:1]]), random_walk="zero")
    with pytest.raises(InputError, match="one cell"):
        inventory_table(rows.assign(unit=["a", "b"] * (len(rows) // 2)), random_walk="zero")


def test_when_no_pair_is_common_to_all_models_then_every_value_is_null_and_no_winner_is_named():
    rows, _ = _hand_cell()
    rows.loc[rows["model"] == "high", "hi80"] = np.nan  # "high" has no level anywhere at tau = 0.9
    out = inventory_table(rows, random_walk="zero", min_cell=10)
    assert out["n_series_periods"] == 0 and out["n_blocks"] == 0 and out["cell_ok"] is False
    assert all(r["fill_rate"] is None and r["stock_needed"] is None for r in out["rows"])
    assert out["winner"] is None
    json.dumps(out, allow_nan=False)
