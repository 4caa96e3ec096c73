"""The built-in roster; importing this package registers every built-in forecaster."""

from tycheon.forecasters.roster import baselines, intermittent, statistical  # noqa: F401  (registration)
