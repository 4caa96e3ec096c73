"""The public surface of ``import tycheon``: pinned, loadable, and cheap to import."""

from __future__ import annotations

import subprocess
import sys

import tycheon

EXPECTED = [
    "Evaluation",
    "EvaluationError",
    "InputError",
    "LeaderboardSpec",
    "LookaheadError",
    "Panel",
    "RollingOrigin",
    "ScoreSet",
    "StaticSplit",
    "TycheonError",
    "TycheonWarning",
    "__version__",
    "analysis",
    "available_datasets",
    "available_forecasters",
    "evaluate",
    "forecaster_factory",
    "leaderboard_tables",
    "load",
    "metrics",
    "run",
    "same_targets",
    "stats",
]


def test_all_is_pinned():
    assert sorted(tycheon.__all__) == sorted(EXPECTED)


def test_every_public_name_resolves_to_the_library_object():
    from tycheon.backtest.engine import run
    from tycheon.errors import TycheonError

    for name in tycheon.__all__:
        assert getattr(tycheon, name) is not None, name
    assert tycheon.run is run and tycheon.TycheonError is TycheonError


def test_every_error_tycheon_raises_on_bad_input_is_a_tycheon_error():
    from tycheon.errors import InputError, MetricInputError, StatisticInputError

    assert issubclass(MetricInputError, tycheon.TycheonError) and issubclass(StatisticInputError, InputError)
    try:
        tycheon.metrics.mase(actual=[1.0, 2.0], point=[1.0], scale=1.0)
    except tycheon.TycheonError as err:
        assert "shapes must match" in str(err)
    else:
        raise AssertionError("a shape mismatch was accepted")


def test_importing_tycheon_loads_no_engine_statistics_or_pandas():
    code = "import sys, tycheon; print(sorted(m for m in sys.modules if m.startswith(('tycheon.', 'pandas'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['tycheon._version']"


def test_evaluate_is_the_function_even_after_its_module_is_imported():
    import tycheon.evaluation  # noqa: F401 - importing the module must not hide the function

    assert callable(tycheon.evaluate) and tycheon.evaluate.__name__ == "evaluate"
