"""Forecasters: the interface, the registry and the roster."""

from tycheon.forecasters.base import Availability, Capabilities, Forecast, Forecaster, History, LocalForecaster
from tycheon.forecasters.registry import ForecasterInfo, available, create, get, ids, info, register

__all__ = [
    "Availability",
    "Capabilities",
    "Forecast",
    "Forecaster",
    "ForecasterInfo",
    "History",
    "LocalForecaster",
    "available",
    "create",
    "get",
    "ids",
    "info",
    "register",
]
