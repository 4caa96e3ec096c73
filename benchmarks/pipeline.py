"""The benchmark pipeline: config -> guarded engine per (dataset, model) -> tables -> results document.

Its parts, each one job:

* :mod:`benchmarks.run_inputs`: the resolved config (:class:`RunInputs`), datasets loaded through the
  manifest's hash check (:func:`load_dataset`) and the rolling-origin protocol;
* :mod:`benchmarks.model_run`: one model on one (dataset, protocol), from the cache or computed under
  its hard limits (:func:`contributed` models in an isolated process);
* :mod:`benchmarks.roster_run`: the roster on one (dataset, protocol), its run records and its tables
  joined once;
* :mod:`benchmarks.dataset_part`: what a dataset or competition entry adds to the document (tables,
  analyses, replay, sensitivity audit), its stages run as a column plan (:mod:`benchmarks.spill`);
* :mod:`benchmarks.document`: the results document and the sidecar frame (:func:`build_results`).

This module names the pipeline's entry points for its callers (``benchmarks.run``, ``evaluate``,
``submit``, ``perf``). A test that replaces one of them patches it in the module that uses it
(:mod:`benchmarks.model_run` for ``contributed``), not here.
"""

from __future__ import annotations

from benchmarks.dataset_part import DatasetPart as DatasetPart
from benchmarks.document import _model_warnings as _model_warnings
from benchmarks.document import build_results
from benchmarks.model_run import contributed
from benchmarks.roster_run import ProtocolRun as ProtocolRun
from benchmarks.roster_run import _run_record as _run_record
from benchmarks.roster_run import run_models
from benchmarks.run_inputs import MANIFEST, LoadedDataset, RunInputs, load_dataset, rolling_protocol, subsample

# also re-exported, under the names tests/test_harness_analyses.py and benchmarks/perf/analyses.py import:
# DatasetPart, ProtocolRun, _model_warnings, _run_record and run_models as _run_models
_run_models = run_models

__all__ = [
    "MANIFEST",
    "LoadedDataset",
    "RunInputs",
    "build_results",
    "contributed",
    "load_dataset",
    "rolling_protocol",
    "subsample",
]
