"""The README's Python example runs as printed, and the sentence under it is what it prints."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pandas as pd

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_readme_python_example_runs_and_its_claim_holds():
    code = re.search(r"## In five lines of Python\s+```python\n(.*?)```", README.read_text(), re.S).group(1)
    namespace: dict[str, object] = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 - our own README
    summary = namespace["tycheon"].metrics.summarize(namespace["blocks"], metrics=("rmsse",))
    wide = summary.pivot(index="model", columns="unit", values="rmsse_mean")
    assert isinstance(wide, pd.DataFrame)
    # "the seasonal naive with momentum has the lowest RMSSE at the market total and the highest per series"
    assert wide["total"].idxmin() == "snaive_momentum" and wide["series"].idxmax() == "snaive_momentum"
