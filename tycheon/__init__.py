"""tycheon: honest walk-forward forecasting benchmarks."""

from tycheon._version import __version__

__all__ = ["__version__"]
