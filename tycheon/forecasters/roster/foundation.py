"""Time-series foundation models (Chronos-Bolt, TimesFM, Moirai): configured, and skipped with a reason.

These models are used zero-shot (evaluation-choices paper, section 3) and need two things this
library cannot provide by itself: their Python package (which brings torch) and pretrained weights
from the Hugging Face hub. :meth:`availability` checks both, without any network access: the package
with ``importlib.util.find_spec`` and the weights in the local Hugging Face cache
(``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else ``~/.cache/huggingface/hub``). When either is missing
the run lists the model as skipped with that precise reason; ``predict`` then raises
:class:`FoundationModelUnavailableError` with the same reason and never produces numbers.

Only Chronos-Bolt has an inference path here (``chronos.BaseChronosPipeline.predict_quantiles``, loaded
with ``local_files_only``); TimesFM and Moirai are configured so that the run can state why they are
absent, and raise even when their package and weights exist, saying that their adapter is not built.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import ClassVar

import numpy as np

from tycheon.errors import TycheonError
from tycheon.forecasters.base import Availability, Capabilities, Forecast, Forecaster, History
from tycheon.forecasters.registry import register

__all__ = [
    "ChronosBoltForecaster",
    "FoundationModelUnavailableError",
    "MoiraiForecaster",
    "TimesFmForecaster",
    "hub_cache_dir",
]


class FoundationModelUnavailableError(TycheonError, RuntimeError):
    """A foundation model was asked to predict where it cannot run (package or weights missing)."""


def hub_cache_dir() -> Path:
    """The local Hugging Face hub cache directory (read from the environment; no network)."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]) / "hub"
    return Path.home() / ".cache" / "huggingface" / "hub"


def _weights_cached(repo_id: str) -> bool:
    snapshots = hub_cache_dir() / f"models--{repo_id.replace('/', '--')}" / "snapshots"
    return snapshots.is_dir() and any(snapshots.iterdir())


class FoundationForecaster(Forecaster):
    """A pretrained zero-shot model from a package (``module``/``distribution``) and hub weights."""

    capabilities: ClassVar[Capabilities] = Capabilities(min_obs=1, quantiles=True)
    module: ClassVar[str] = ""
    distribution: ClassVar[str] = ""
    default_weights: ClassVar[str] = ""

    def __init__(self, *, weights: str | None = None) -> None:
        self.weights = weights

    @classmethod
    def _check(cls, weights: str) -> Availability:
        if importlib.util.find_spec(cls.module) is None:
            return Availability(
                ok=False, reason=f"package '{cls.distribution}' is not installed (module '{cls.module}' not importable)"
            )
        if not _weights_cached(weights):
            return Availability(
                ok=False,
                reason=(
                    f"weights '{weights}' must be downloaded from the Hugging Face hub and are not in the "
                    f"local cache ({hub_cache_dir()}); this environment has no network access"
                ),
            )
        return Availability(ok=True)

    @classmethod
    def availability(cls) -> Availability:
        return cls._check(cls.default_weights)

    def _weights(self) -> str:
        return self.weights or self.default_weights

    def _require(self) -> None:
        status = self._check(self._weights())
        if not status.ok:
            raise FoundationModelUnavailableError(f"{self.forecaster_id}: {status.reason}")

    def _predict(
        self,
        history: History,
        *,
        horizon: int,
        quantile_levels: tuple[float, ...],
        n_samples: int,
        rng: np.random.Generator,
    ) -> Forecast:
        self._require()
        raise FoundationModelUnavailableError(
            f"{self.forecaster_id}: package and weights are present, but tycheon has no inference adapter "
            f"for {type(self).__name__} yet; the model is skipped rather than approximated"
        )


@register("chronos_bolt", cost="foundation")
class ChronosBoltForecaster(FoundationForecaster):
    """Chronos-Bolt (Ansari et al. 2024, "Chronos: Learning the language of time series", TMLR), zero-shot:
    quantiles from the model's quantile head, the point forecast is its median.

    Parameters
    ----------
    weights : str or None
        Hub repository id (default ``amazon/chronos-bolt-small``).
    """

    module = "chronos"
    distribution = "chronos-forecasting"
    default_weights = "amazon/chronos-bolt-small"

    def _predict(
        self,
        history: History,
        *,
        horizon: int,
        quantile_levels: tuple[float, ...],
        n_samples: int,
        rng: np.random.Generator,
    ) -> Forecast:
        self._require()
        import torch  # the chronos package depends on torch
        from chronos import BaseChronosPipeline

        pipeline = BaseChronosPipeline.from_pretrained(self._weights(), device_map="cpu", local_files_only=True)
        context = [torch.tensor(history.series(i)) for i in range(history.n_series)]
        levels = sorted(set(quantile_levels) | {0.5})
        q, _ = pipeline.predict_quantiles(context, prediction_length=horizon, quantile_levels=levels)
        q = np.asarray(q, dtype=np.float64)  # [series, horizon, level]
        point = q[:, :, levels.index(0.5)]
        if not quantile_levels:
            return Forecast(point=point)
        keep = [levels.index(x) for x in quantile_levels]
        return Forecast(point=point, quantile_levels=quantile_levels, quantiles=q[:, :, keep])


@register("timesfm", cost="foundation")
class TimesFmForecaster(FoundationForecaster):
    """TimesFM (Das et al. 2024, "A decoder-only foundation model for time-series forecasting", ICML).

    Parameters
    ----------
    weights : str or None
        Hub repository id (default ``google/timesfm-2.0-500m-pytorch``).
    """

    module = "timesfm"
    distribution = "timesfm"
    default_weights = "google/timesfm-2.0-500m-pytorch"


@register("moirai", cost="foundation")
class MoiraiForecaster(FoundationForecaster):
    """Moirai (Woo et al. 2024, "Unified training of universal time series forecasting transformers",
    ICML), from the ``uni2ts`` package.

    Parameters
    ----------
    weights : str or None
        Hub repository id (default ``Salesforce/moirai-1.1-R-small``).
    """

    module = "uni2ts"
    distribution = "uni2ts"
    default_weights = "Salesforce/moirai-1.1-R-small"
