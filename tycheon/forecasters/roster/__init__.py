"""The built-in roster; importing this package registers every built-in forecaster."""
