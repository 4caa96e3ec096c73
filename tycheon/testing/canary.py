"""The poisoning canary (ADR-0006 decision 4): garbage after an origin must not move earlier forecasts.

:func:`poison_after` replaces every value not yet published at an origin (``available_at > origin``)
with huge nonsense numbers, keeping the grid, the observed mask and ``available_at`` unchanged.
:func:`assert_canary` runs the engine on the clean and the poisoned panel over origins up to and including
that origin and requires the two score sets to agree bit for bit on everything a forecast at those origins
may depend on: point forecasts, quantiles, sample paths, conformal bands (their calibration errors were
published by each origin), demand classes, scales and weights. Only the actuals may differ, and they must
(else the canary poisoned nothing and would pass vacuously).

The guards check what is handed to a model; the canary checks what a model *did*, so it also catches a
model that reaches the future by another route (see :class:`tycheon.testing.cheating.CheatingForecaster`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from tycheon.backtest.engine import run
from tycheon.backtest.factories import Factory, forecaster_factory, instance_factory
from tycheon.backtest.protocol import RollingOrigin
from tycheon.backtest.scoreset import ScoreSet
from tycheon.data.panel import Panel
from tycheon.errors import TycheonError
from tycheon.forecasters.base import Forecaster

__all__ = ["CanaryFailure", "assert_canary", "poison_after"]

_COMPARED = (
    "model",
    "unit",
    "series_id",
    "origin",
    "step",
    "target_period",
    "point",
    "available_at",
    "demand_class",
    "season_length",
    "scale_mae",
    "scale_rmse",
    "weight",
    "lo80",
    "hi80",
    "lo95",
    "hi95",
    "has_band",
    "has_quantiles",
    "has_samples",
)


class CanaryFailure(TycheonError, AssertionError):
    """Forecasts made before an origin changed when only data after it changed: the model sees the future."""


def poison_after(panel: Panel, origin_index: int, *, seed: int = 0) -> Panel:
    """A copy of ``panel`` whose values unpublished at ``periods[origin_index]`` are garbage.

    Garbage is uniform on ``[-1e9, 1e9]`` (finite, NaN-free, absurd for any demand series); the grid,
    which cells are observed and every ``available_at`` stay as they were.
    """
    periods = panel.periods
    if not 0 < origin_index < len(periods):
        raise ValueError(f"origin_index must be in 1..{len(periods) - 1}, got {origin_index}")
    origin = periods[origin_index]
    data = panel.data.copy()
    late = (data["available_at"] > origin).to_numpy()
    rng = np.random.default_rng(seed)
    data.loc[late, "value"] = np.round(rng.uniform(-1e9, 1e9, size=int(late.sum())), 3)
    return Panel.from_long(
        data,
        available_at_col="available_at",
        freq=panel.freq,
        season_length=panel.season_length,
        attributes=panel.attributes,
        levels=panel.levels,
        name=f"{panel.name}-poisoned",
        meta=dict(panel.meta),
    )


def _as_factory(model: str | Forecaster | Factory, params: dict[str, Any] | None) -> Factory:
    if isinstance(model, str):
        return forecaster_factory(model, **(params or {}))
    if params:
        raise ValueError("params are only accepted with a registered forecaster id")
    if isinstance(model, Forecaster):
        return instance_factory(model)
    if callable(model):
        return model
    raise TypeError(f"expected a forecaster id, a Forecaster or a factory, got {type(model).__name__}")


def _equal(a: pd.Series, b: pd.Series) -> bool:
    x, y = a.to_numpy(), b.to_numpy()
    if x.dtype.kind == "f":
        return bool(np.array_equal(x, y, equal_nan=True))
    return bool(np.array_equal(x, y))


def _diff_report(clean: ScoreSet, poisoned: ScoreSet, column: str) -> str:
    a, b = clean.table[column].to_numpy(), poisoned.table[column].to_numpy()
    same = (a == b) | (pd.isna(a) & pd.isna(b))
    k = int(np.argmin(same))
    row = clean.table.iloc[k]
    return (
        f"column {column!r} differs in {int((~same).sum())} of {len(a)} rows, e.g. series "
        f"{row['series_id']!r} origin {pd.Timestamp(row['origin']).date()} step {row['step']}: "
        f"{a[k]!r} (clean) vs {b[k]!r} (poisoned)"
    )


def assert_canary(
    model: str | Forecaster | Factory,
    panel: Panel,
    *,
    origin_index: int,
    horizon: int,
    params: dict[str, Any] | None = None,
    n_origins: int = 3,
    stride: int | None = None,
    units: Sequence[str] = ("series",),
    quantile_levels: Sequence[float] = (0.1, 0.5, 0.9),
    n_samples: int = 0,
    min_history: int = 1,
    seed: int = 0,
    refit_every: int = 1,
) -> dict[str, Any]:
    """Require bit-identical forecasts at origins ``<= origin_index`` on the clean and poisoned panel.

    Parameters
    ----------
    model : str, Forecaster or factory
        A registered forecaster id (built with ``params``), an unregistered forecaster instance, or a
        factory ``(history, fit_time) -> fitted Forecaster``.
    panel : Panel
    origin_index : int
        Column of the last origin compared; every value unpublished there is poisoned.
    horizon : int
    n_origins, stride : int
        Origins ``origin_index - k * stride`` for ``k < n_origins`` (stride defaults to the horizon);
        fewer when the panel is too short for them.
    units, quantile_levels, n_samples, min_history, seed
        Passed to :func:`tycheon.backtest.engine.run` (sequential backend).
    refit_every : int
        The protocol's refit calendar (:class:`~tycheon.backtest.protocol.RollingOrigin`): above 1 the
        origins between refits go through the model's update path, which the canary then covers too.

    Returns
    -------
    dict
        ``rows`` compared, ``origins``, ``guard_checks`` and the model's status.

    Raises
    ------
    CanaryFailure
        When any compared column differs, or when the check would be vacuous (the model did not run or
        forecast nothing, or poisoning changed no actual).
    """
    factory = _as_factory(model, params)
    stride = horizon if stride is None else int(stride)
    first = origin_index - (n_origins - 1) * stride
    while first < max(min_history, 1):
        first += stride
    k = (origin_index - first) // stride + 1
    protocol = RollingOrigin(
        horizon=horizon,
        stride=stride,
        n_origins=k,
        first_origin=first,
        mode="benchmark" if stride >= horizon else "analysis",
        refit_every=refit_every,
    )
    options = dict(
        units=units,
        quantile_levels=quantile_levels,
        n_samples=n_samples,
        min_history=min_history,
        seed=seed,
        backend="sequential",
    )
    clean = run(panel, protocol, {"model": factory}, **options)  # type: ignore[arg-type]
    poisoned = run(poison_after(panel, origin_index, seed=seed + 1), protocol, {"model": factory}, **options)  # type: ignore[arg-type]
    status = clean.meta["models"]["model"]
    if status["status"] != "ran":
        raise CanaryFailure(f"the canary cannot check {model!r}: it did not run on the clean panel ({status})")
    if poisoned.meta["models"]["model"]["status"] != "ran":
        raise CanaryFailure(
            f"{model!r} ran on the clean panel but not on the poisoned one "
            f"({poisoned.meta['models']['model']}): data after the origin changed its behaviour"
        )
    if len(clean.table) == 0:
        raise CanaryFailure(f"the canary is vacuous for {model!r}: it forecast nothing on this panel")
    if len(clean.table) != len(poisoned.table):
        raise CanaryFailure(
            f"{model!r} scored {len(clean.table)} rows on the clean panel and {len(poisoned.table)} on the poisoned one"
        )
    if _equal(clean.table["actual"], poisoned.table["actual"]):
        raise CanaryFailure("the canary is vacuous: poisoning changed no scored actual")
    columns = list(_COMPARED) + [c for c in clean.table.columns if c.startswith("q")]
    for column in columns:
        if not _equal(clean.table[column], poisoned.table[column]):
            raise CanaryFailure(f"{model!r} looks ahead: " + _diff_report(clean, poisoned, column))
    if clean.samples is not None and (
        poisoned.samples is None or not np.array_equal(clean.samples, poisoned.samples, equal_nan=True)
    ):
        raise CanaryFailure(f"{model!r} looks ahead: its sample paths changed")
    return {
        "rows": len(clean.table),
        "origins": clean.meta["origins"],
        "guard_checks": clean.meta["guard_checks"],
        "status": status,
    }
