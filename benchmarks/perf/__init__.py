"""Performance comparisons (issue 9): tycheon against its peers in the same process, with agreement checks.

``python -m benchmarks.perf`` runs every comparison and prints one line per comparison,
``<name>: tycheon=<s>s peer=<s>s speedup=<peer/tycheon>``, then the peak RSS. ``--quick`` uses a small
panel. Timings are medians of ``--repeats`` runs after one warm-up run of each side (JIT compilation
excluded); tycheon and the peer alternate within a repeat so that background load hits both.

Modules: :mod:`.common` (timing, panel, RSS), :mod:`.backtest` (statsforecast ``cross_validation``),
:mod:`.sktime_peer` (sktime ``evaluate``, extrapolated), :mod:`.stats_scale` (DM, Friedman/Nemenyi, BH),
:mod:`.memory` (peak RSS of a backtest in a clean subprocess), :mod:`.end_to_end` (README command 1).
None of this is part of the unit tests: timings are noisy.
"""
