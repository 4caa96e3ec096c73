"""Published competition results as cited data, and their comparison with a run's competition tables."""
