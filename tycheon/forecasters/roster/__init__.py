"""The built-in roster; importing this package registers every built-in forecaster."""

from tycheon.forecasters.roster import (  # noqa: F401  (registration)
    baselines,
    classical,
    foundation,
    global_ml,
    intermittent,
    sktime_adapter,
    statistical,
)
from tycheon.forecasters.roster._common import NumericalWarning

__all__ = ["NumericalWarning"]
