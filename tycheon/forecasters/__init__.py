"""Forecasters: the interface, the registry and the roster."""

from tycheon.forecasters.base import Availability, Capabilities, Forecast, Forecaster, History, LocalForecaster
from tycheon.forecasters.registry import available, create, get, register

__all__ = [
    "Availability",
    "Capabilities",
    "Forecast",
    "Forecaster",
    "History",
    "LocalForecaster",
    "available",
    "create",
    "get",
    "register",
]
