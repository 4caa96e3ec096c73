"""The pieces the metric registry's formulas are written with: the per-step terms a formula reads
(:class:`BlockTerms` per block, :class:`StepTerms` per step) and the shapes most entries share (a block mean
of a term, divided by a scale column or not; a ratio of sums). Declared here so that
:mod:`tycheon.metrics.registry` holds the entries themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class BlockTerms:
    """Per-block aggregates of the per-step terms, aligned ``[block]``.

    ``mean[t]`` / ``total[t]`` are the block mean / sum of term ``t``; ``scale[c]`` is the block's value
    of scale column ``c`` with zero or NaN scales already set to NaN (the zero-scale rule).
    """

    mean: Mapping[str, np.ndarray]
    total: Mapping[str, np.ndarray]
    scale: Mapping[str, np.ndarray]


@dataclass(frozen=True)
class StepTerms:
    """Per-step terms and the row's scales (zero or NaN scales already NaN), aligned ``[row]``."""

    term: Mapping[str, np.ndarray]
    scale: Mapping[str, np.ndarray]


def ratio_of_sums(b: BlockTerms) -> np.ndarray:
    den = b.total["abs_y"]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, b.total["abs_err"] / np.where(den > 0, den, np.nan), np.nan)


def mean_of(term: str, scale: str | None = None) -> Callable[[BlockTerms], np.ndarray]:
    """Block mean of ``term``, divided by the block's ``scale`` column when given."""

    def block(b: BlockTerms) -> np.ndarray:
        return b.mean[term] if scale is None else b.mean[term] / b.scale[scale]

    return block


def term_of(term: str, scale: str | None = None) -> Callable[[StepTerms], np.ndarray]:
    """Per-step ``term``, divided by the row's ``scale`` column when given."""

    def step(s: StepTerms) -> np.ndarray:
        return s.term[term] if scale is None else s.term[term] / s.scale[scale]

    return step


def scaled_loss(term: str, scale: str = "scale_mae") -> dict[str, Any]:
    """The block, step and step-loss formulas of a metric that is the mean of ``term`` over the ``scale``
    column (MSIS, the scaled pinball losses, the band CRPS)."""
    return {"block": mean_of(term, scale), "step": term_of(term, scale), "step_loss": term_of(term, scale)}
