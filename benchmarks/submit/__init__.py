"""The contribution flow: ``python -m benchmarks.submit check benchmarks/models/<id>.toml`` does exactly what
the submission workflow does on a pull request (validate, run the benchmark for the submitted models,
write a new results version, render the site, summarise)."""

from benchmarks.submit.bench import SubmissionRun, WorkDirError, extend_config, run_benchmark
from benchmarks.submit.changes import ChangeSet, changed_model_configs
from benchmarks.submit.validate import Verdict, validate_submission

__all__ = [
    "ChangeSet",
    "SubmissionRun",
    "Verdict",
    "WorkDirError",
    "changed_model_configs",
    "extend_config",
    "run_benchmark",
    "validate_submission",
]
