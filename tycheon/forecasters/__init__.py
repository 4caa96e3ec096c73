"""Forecasters: the interface, the registry and the roster."""

from tycheon.forecasters.base import Capabilities, Forecast, Forecaster, History, LocalForecaster
from tycheon.forecasters.registry import available, create, get, register

__all__ = [
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
