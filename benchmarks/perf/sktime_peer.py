"""sktime ``evaluate`` on a subsample: measured against tycheon on the same subsample, and extrapolated.

sktime fits one forecaster per series and window (about 0.1 s per series per model here), so running it on
30,490 series x 8 models would take hours. It is timed on ``n_series`` series observed over the whole grid
with two models (``NaiveForecaster(strategy="last")`` and ``Croston(smoothing=0.1)``) and the same design
(expanding window, first origin at column 40, stride 3, horizon 6: 8 windows). Two comparisons come out:

- **measured**: tycheon's engine on exactly that subsample with the same two models (``naive`` and
  ``croston``, whose smoothing is 0.1), median of 3 after a warm-up, against sktime's time: the same work
  on the same machine (at this size tycheon's time is mostly fixed per-run overhead, so the ratio is a
  floor);
- **extrapolated**: the per-(series, model) sktime cost times ``panel series x 8 models`` against tycheon's
  whole-panel time with the whole roster (an extrapolation, stated as such).

Naive forecasts are checked against tycheon's on the subsample (they must agree exactly).
"""

from __future__ import annotations

import contextlib
import io
import time
import warnings

import pandas as pd

from benchmarks.perf.common import HORIZON, N_ORIGINS, STRIDE, Comparison
from tycheon.backtest.scoreset import ScoreSet
from tycheon.data.panel import Panel

__all__ = ["compare_sktime", "time_tycheon_subsample"]


def _full_series(panel: Panel, n_series: int) -> list[str]:
    view = panel.dense()
    full = (view.first == 0) & (view.last == view.shape[1] - 1)
    return sorted(str(s) for s in view.series_ids[full])[:n_series]


def _evaluate(y: pd.Series, forecaster: object) -> pd.DataFrame:
    from sktime.forecasting.model_evaluation import evaluate
    from sktime.split import ExpandingWindowSplitter

    initial = len(y) - HORIZON - STRIDE * (N_ORIGINS - 1)
    cv = ExpandingWindowSplitter(fh=list(range(1, HORIZON + 1)), initial_window=initial, step_length=STRIDE)
    return evaluate(forecaster=forecaster, y=y, cv=cv, strategy="refit", return_data=True)


def time_tycheon_subsample(panel: Panel, ids: list[str], *, repeats: int = 3) -> float:
    """tycheon's median time for ``naive`` and ``croston`` on the series ``ids`` (in process, after a
    warm-up), with the design of the sktime run."""
    from benchmarks.perf.common import median_time, protocol
    from tycheon.backtest.engine import run
    from tycheon.backtest.factories import forecaster_factory

    sub = panel.subset(ids)
    factories = {"naive": forecaster_factory("naive"), "croston": forecaster_factory("croston")}

    def once() -> ScoreSet:
        return run(
            sub,
            protocol(),
            factories,
            units=("series",),
            quantile_levels=(),
            n_samples=0,
            min_history=1,
            backend="sequential",
            seed=0,
        )

    once()
    return median_time(once, repeats=repeats)[0]


def compare_sktime(panel: Panel, scores: ScoreSet, *, tycheon_s: float, n_series: int) -> list[Comparison]:
    """``tycheon_s``: tycheon's median time for the whole panel and roster (from the statsforecast run).

    Returns the measured same-subsample comparison, then the extrapolated whole-panel one.
    """
    from sktime.forecasting.croston import Croston
    from sktime.forecasting.naive import NaiveForecaster

    ids = _full_series(panel, n_series)
    view = panel.dense()
    index = {s: i for i, s in enumerate(view.series_ids)}
    periods = view.periods.to_period("M")
    models = {"naive": lambda: NaiveForecaster(strategy="last"), "croston": lambda: Croston(smoothing=0.1)}
    naive_pred: dict[tuple[str, pd.Timestamp], float] = {}
    # sktime's evaluate re-enables its FutureWarning about remember_data on every internal clone, past
    # warning filters; its text goes to a buffer (exceptions still propagate)
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        _evaluate(
            pd.Series(view.values[index[ids[0]]], index=periods),
            models["naive"]().set_config(warnings="off", remember_data=False),
        )  # warm-up
        t0 = time.perf_counter()
        for sid in ids:
            y = pd.Series(view.values[index[sid]], index=periods)
            for name, make in models.items():
                res = _evaluate(y, make().set_config(warnings="off", remember_data=False))
                if name == "naive":
                    for _, row in res.iterrows():
                        pred = row["y_pred"]
                        for period, value in pred.items():
                            naive_pred[(sid, period.to_timestamp())] = float(value)
        elapsed = time.perf_counter() - t0
    per_series_model = elapsed / (len(ids) * len(models))
    peer_s = per_series_model * panel.n_series * 8
    # the last window holds each target once; compare sktime's naive to tycheon's at the latest origin
    table = scores.table
    latest = table["origin"].max()
    ours = table[(table["model"] == "naive") & (table["series_id"].isin(ids)) & (table["origin"] == latest)]
    diffs = [
        abs(v - naive_pred[(s, pd.Timestamp(t))])
        for s, t, v in zip(ours["series_id"], ours["target_period"], ours["point"], strict=False)
    ]
    ok = bool(diffs) and max(diffs) <= 1e-9
    agree_note = (
        f"naive vs sktime at the latest origin: {len(diffs)} rows, max |diff| "
        f"{max(diffs) if diffs else float('nan'):.1e}"
    )
    sub_s = time_tycheon_subsample(panel, ids)
    measured = Comparison(
        name=f"backtest_vs_sktime[same {len(ids)} series x 2 models, measured]",
        tycheon_s=sub_s,
        peer_s=elapsed,
        ok=ok,
        notes=[
            f"tycheon {sub_s * 1e3:.0f} ms (in process, median of 3) vs sktime evaluate {elapsed:.2f}s on "
            "the same series, models and windows; tycheon's time here is mostly fixed per-run overhead",
            agree_note,
        ],
    )
    return [
        measured,
        Comparison(
            name=f"backtest_vs_sktime[extrapolated from {len(ids)} series x 2 models]",
            tycheon_s=tycheon_s,
            peer_s=peer_s,
            ok=ok,
            notes=[
                f"sktime evaluate: {elapsed:.2f}s for {len(ids)} series x 2 models = "
                f"{per_series_model * 1e3:.0f} ms per series per model; x {panel.n_series} series x 8 models "
                f"= {peer_s:.0f}s (extrapolated, not run)",
                agree_note,
            ],
        ),
    ]
