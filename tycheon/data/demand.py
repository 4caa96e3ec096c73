"""Demand classes from ADI and CV² (Syntetos, Boylan & Croston 2005), vectorised over series.

For the observed part of a window of series ``y`` (zeros are periods without demand):

- **ADI**, the average inter-demand interval: the mean of the intervals between successive non-zero
  demands, the first interval counted from the start of the window,

  .. math:: \\mathrm{ADI} = \\frac{1}{k}\\sum_{j=1}^{k} (t_j - t_{j-1}) = \\frac{t_k}{k},

  with :math:`t_1 < \\dots < t_k` the 1-based positions of the :math:`k` non-zero demands and
  :math:`t_0 = 0` (the convention of Croston's interval initialisation; trailing zeros after the last
  demand do not enter, as no interval has closed).
- **CV²**, the squared coefficient of variation of the non-zero demand sizes
  :math:`z_1..z_k`: :math:`(s_z / \\bar z)^2` with the sample standard deviation (ddof = 1); 0 when
  :math:`k = 1`.

A consequence of the convention worth knowing: zeros after the last demand are not counted, so a buyer
that bought once and then lapsed (``[5, 0, 0, ...]``) has ADI 1 and CV² 0 and is classed Smooth within that
window. The alternative ``n / k`` (periods per demand) would call it Intermittent; we keep the
inter-demand-interval definition the taxonomy is stated in, and the engine reports abstention and demand
class side by side so such cases stay visible.

Classes with the cut-offs 1.32 and 0.49 (Syntetos et al. 2005, as used in the evaluation-choices paper,
section 2): Smooth (ADI < 1.32, CV² < 0.49), Erratic (ADI < 1.32, CV² >= 0.49), Intermittent
(ADI >= 1.32, CV² < 0.49), Lumpy (both at or above). A window with no non-zero demand is ``undefined``.

References
----------
Syntetos, A. A., Boylan, J. E. and Croston, J. D. (2005). On the categorization of demand patterns.
Journal of the Operational Research Society 56(5), 495-503.
"""

from __future__ import annotations

import numpy as np

from tycheon._typing import BoolArray, FloatArray

__all__ = ["ADI_CUTOFF", "CV2_CUTOFF", "CLASSES", "adi_cv2", "class_codes", "classify", "demand_classes"]

ADI_CUTOFF = 1.32
CV2_CUTOFF = 0.49
CLASSES = ("smooth", "erratic", "intermittent", "lumpy", "undefined")


def adi_cv2(values: FloatArray, observed: BoolArray | None = None) -> tuple[FloatArray, FloatArray]:
    """ADI and CV² per series of a ``[series, time]`` window (NaN where no demand occurred).

    Observed cells are taken left-aligned: ragged starts are skipped, so positions count from each
    series' first observation in the window.
    """
    y = np.asarray(values, dtype=np.float64)
    obs = np.isfinite(y) if observed is None else np.asarray(observed, dtype=bool) & np.isfinite(y)
    demand = obs & (y != 0)  # [series, time]
    k = demand.sum(axis=1)
    # 1-based position of each observed cell counted from the series' first observation
    pos = np.cumsum(obs, axis=1)
    last_pos = np.where(demand, pos, 0).max(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        adi = np.where(k > 0, last_pos / np.maximum(k, 1), np.nan)
        z = np.where(demand, y, 0.0)
        mean = z.sum(axis=1) / np.maximum(k, 1)
        ss = np.where(demand, (y - mean[:, None]) ** 2, 0.0).sum(axis=1)
        var = np.where(k > 1, ss / np.maximum(k - 1, 1), 0.0)
        cv2 = np.where(k > 0, np.where(mean != 0, var / mean**2, np.nan), np.nan)
    return adi, cv2


def class_codes(adi: FloatArray, cv2: FloatArray) -> np.ndarray:
    """Class of each ADI/CV² pair as an ``int8`` index into :data:`CLASSES` (4, ``undefined``, where
    either is NaN)."""
    adi = np.asarray(adi, dtype=np.float64)
    cv2 = np.asarray(cv2, dtype=np.float64)
    idx = (adi >= ADI_CUTOFF).astype(np.int8) * 2 + (cv2 >= CV2_CUTOFF).astype(np.int8)
    return np.where(np.isnan(adi) | np.isnan(cv2), np.int8(4), idx).astype(np.int8)


def classify(adi: FloatArray, cv2: FloatArray) -> np.ndarray:
    """Class names for ADI and CV² arrays (``undefined`` where either is NaN)."""
    return np.asarray(CLASSES, dtype=object)[class_codes(adi, cv2)]


def demand_classes(values: FloatArray, observed: BoolArray | None = None) -> np.ndarray:
    """Demand class of each series of a ``[series, time]`` window."""
    return classify(*adi_cv2(values, observed))
