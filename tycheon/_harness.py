"""The one hand-over from the library to the benchmark harness (``benchmarks/``, not installed).

The library never imports the harness at module level: writing a results version and building the
static site belong to ``benchmarks/``, which exists only in a source checkout of tycheon (an editable
install, ``pip install -e .``). :func:`load_harness` is the single place that reaches it, lazily, when
``tycheon evaluate`` or :meth:`tycheon.evaluation.Evaluation.to_results` / ``.to_site`` ask for it, and
turns its absence into a one-line :class:`HarnessUnavailableError`.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

from tycheon.errors import TycheonError

__all__ = ["HARNESS_MODULE", "HarnessUnavailableError", "load_harness"]

HARNESS_MODULE = "benchmarks.evaluate"
_CHECKOUT = Path(__file__).resolve().parent.parent  # the folder holding tycheon/ (and benchmarks/ in a clone)


class HarnessUnavailableError(TycheonError, RuntimeError):
    """The benchmark harness is not next to this tycheon (an installed wheel, not a source checkout)."""


def load_harness() -> ModuleType:
    """``benchmarks.evaluate`` of the source checkout this ``tycheon`` is imported from.

    Raises
    ------
    HarnessUnavailableError
        When ``benchmarks/evaluate.py`` is not beside the ``tycheon`` package (the message says how to
        get it), or when a different ``benchmarks`` package shadows it.
    """
    target = _CHECKOUT / "benchmarks" / "evaluate.py"
    if not target.is_file():
        raise HarnessUnavailableError(
            f"writing results and building the site need the benchmark harness (benchmarks/evaluate.py) of a "
            f"tycheon source checkout, which is not beside this installation ({_CHECKOUT}); clone the "
            "repository and `pip install -e '.[site]'` there (the leaderboard()/verdicts() API works without it)"
        )
    if str(_CHECKOUT) not in sys.path:
        sys.path.insert(0, str(_CHECKOUT))
    module = importlib.import_module(HARNESS_MODULE)
    if Path(module.__file__ or "").resolve() != target:
        raise HarnessUnavailableError(
            f"the imported {HARNESS_MODULE} ({module.__file__}) is not the checkout's {target}; another "
            "'benchmarks' package shadows it on sys.path"
        )
    return module
