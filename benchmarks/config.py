"""Strict configs for the harness: one :class:`ModelConfig` per file under ``benchmarks/models/`` and one
:class:`BenchmarkConfig` per file under ``benchmarks/configs/``.

Safety by construction: a model config names either a *registered* tycheon forecaster id or an sktime
estimator *class name* from the reviewed allow-list (:mod:`tycheon.forecasters.roster.sktime_allowlist`,
never sktime's whole registry, whose classes include some that ``eval`` a string parameter), plus
JSON-typed parameters: a tycheon forecaster's are checked against its constructor's signature and then by
constructing it (its own range checks), an sktime estimator's against the allow-list's rules (listed
parameters only, typed, ranged, strings from enumerated choices); the same holds for the params nested in
the ``sktime`` forecaster's ``params``. Non-finite numbers are refused anywhere in ``params``. There is no
field that holds an import path, a module, a callable or code, and names with dots, colons or slashes are
refused by the pattern before any lookup, so a config can never make the runner import or execute
anything beyond the roster and the allow-list.

Files are read with limits: at most :data:`MAX_CONFIG_BYTES`, UTF-8 without a byte-order mark, nested no
deeper than the TOML parser can follow; each limit is a clear :class:`ConfigError`.

Every error is a :class:`ConfigError` whose message names the file and the field.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import math
import tomllib
import typing
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

import pydantic
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
)

from tycheon.data.userfile import DEFAULT_MAX_ROWS
from tycheon.metrics.registry import metric_names
from tycheon.textsafe import for_terminal

__all__ = [
    "BENCHMARKS_DIR",
    "BenchmarkConfig",
    "CompetitionEntry",
    "ConfigError",
    "DatasetEntry",
    "ModelConfig",
    "SktimeSource",
    "TycheonSource",
    "UserFile",
    "load_benchmark_config",
    "load_model_config",
    "load_model_configs",
    "read_toml",
    "resolve_benchmark_config",
]

BENCHMARKS_DIR = Path(__file__).resolve().parent
MODELS_DIR = BENCHMARKS_DIR / "models"
CONFIGS_DIR = BENCHMARKS_DIR / "configs"

SLUG = r"^[a-z0-9][a-z0-9_\-]{0,63}$"
# A registered id or a class name: letters, digits, '_' and '-' only. No '.', ':', '/', so never a path.
NAME = r"^[A-Za-z][A-Za-z0-9_\-]{0,99}$"
MAX_CONFIG_BYTES = 256 * 1024
# Unicode categories that render as nothing or control the terminal: refused in display names.
_INVISIBLE = frozenset({"Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp"})
UNIT = r"^(series|total|level:[A-Za-z0-9_]+|groups:[1-9][0-9]*|groups_random:[1-9][0-9]*)$"


@dataclass(frozen=True)
class Bound:
    """What a contributed config may set one forecaster parameter to: an inclusive range (``int``,
    ``float``) or a list of choices (``str``). A parameter left out keeps the constructor's default."""

    type: Literal["int", "float", "str"]
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()

    def accepted(self) -> str:
        """The accepted values in words, as error messages quote them."""
        if self.type == "str":
            return f"one of {list(self.choices)}"
        kind = "an integer" if self.type == "int" else "a number"
        return f"{kind} in [{self.min:g}, {self.max:g}]"

    def admits(self, value: Any) -> bool:
        if self.type == "str":
            return value in self.choices
        if isinstance(value, bool) or not isinstance(value, int if self.type == "int" else (int, float)):
            return False
        return self.min is not None and self.max is not None and self.min <= value <= self.max


_UNIT = Bound("float", 0.001, 1.0)  # a smoothing weight; the constructors refuse 0, and 0.001 is already flat
_WINDOW = Bound("int", 1, 1000)  # periods of history; longer than the longest series a benchmark loads
# The parameters a contributed config may set on each registered tycheon forecaster, and to what. The
# library accepts any value its constructor does; a pull request's model runs on the project's machine,
# so each number has a ceiling (n_lags = 500000 took the harness past 5 GB). A parameter not listed here
# is refused (a new forecaster's parameters are unreachable from a config until they are listed); the
# sktime adapter's ``estimator`` and ``params`` are bounded by the sktime allow-list instead.
CONTRIBUTED_PARAMS: dict[str, dict[str, Bound]] = {
    "ewma": {"span": Bound("float", 1.0, 1000.0)},
    "lightgbm_global": {
        "n_lags": Bound("int", 1, 400),
        "n_estimators": Bound("int", 1, 2000),
        "learning_rate": _UNIT,
        "num_leaves": Bound("int", 2, 256),
        "min_child_samples": Bound("int", 1, 1000),
        "subsample": Bound("float", 0.1, 1.0),
        "colsample": Bound("float", 0.1, 1.0),
        "seed": Bound("int", 0, 2**31 - 1),
    },
    "median12": {"window": _WINDOW},
    "moving_average": {"window": _WINDOW},
    "ses": {"alpha": _UNIT},
    "ses_classic": {"alpha": _UNIT},
    "theta_classic": {"alpha": _UNIT},
    "snaive_momentum": {
        "k": Bound("int", 1, 52),
        "clip_low": Bound("float", 0.01, 1.0),
        "clip_high": Bound("float", 1.0, 100.0),
    },
    "tsb": {"alpha_d": _UNIT, "alpha_p": _UNIT},
    # the hub repositories the adapters are written for (a path or another repository is not reviewed)
    "chronos_bolt": {"weights": Bound("str", choices=("amazon/chronos-bolt-small",))},
    "moirai": {"weights": Bound("str", choices=("Salesforce/moirai-1.1-R-small",))},
    "timesfm": {"weights": Bound("str", choices=("google/timesfm-2.0-500m-pytorch",))},
}
# The parameters of the ``sktime`` adapter, bounded by the allow-list (class names, each one's parameters).
_ALLOW_LISTED = frozenset({"estimator", "params"})


@dataclass(frozen=True)
class SktimeEquivalent:
    """An sktime estimator setting that is a registered tycheon forecaster's method, so that a config naming
    it is compared with the tycheon model (a duplicate is refused, not ranked as a new model).

    ``fixed``: the estimator's parameters (after its defaults are filled in) that must have these values;
    ``renamed``: estimator parameter -> the tycheon forecaster's parameter that carries the same value.
    """

    estimator: str
    fixed: dict[str, Any]
    forecaster: str
    renamed: dict[str, str] = field(default_factory=dict)


# Small on purpose: only settings whose forecast equals the tycheon forecaster's by definition (same
# formula, same fixed weights). sktime's ThetaForecaster is not here: it fits SES to the deseasonalised
# series, while theta_classic fits it to the theta-2 line, so their forecasts differ (both are shipped).
SKTIME_EQUIVALENTS: tuple[SktimeEquivalent, ...] = (
    SktimeEquivalent("NaiveForecaster", {"strategy": "last", "sp": 1, "window_length": None}, "naive"),
    SktimeEquivalent("NaiveForecaster", {"strategy": "mean", "sp": 1, "window_length": None}, "historic_mean"),
    SktimeEquivalent("NaiveForecaster", {"strategy": "drift", "sp": 1, "window_length": None}, "drift"),
    SktimeEquivalent(
        "NaiveForecaster", {"strategy": "mean", "sp": 1}, "moving_average", renamed={"window_length": "window"}
    ),
    SktimeEquivalent("Croston", {"smoothing": 0.1}, "croston"),
)

Scalar = StrictBool | StrictInt | StrictFloat | StrictStr
ParamValue = Scalar | list[Scalar] | dict[str, Scalar | list[Scalar]]

CompetitionMetric = Literal["smape", "mape", "mase"]

SkipModels = dict[Annotated[str, Field(pattern=SLUG)], Annotated[str, Field(min_length=1, max_length=300)]]
_SKIP_DESCRIPTION = (
    "models of the roster left out on this dataset, each with the reason (too slow for its size, no seasonal "
    "period for a seasonal method); they are recorded as skipped with that reason, never silently dropped"
)


class ConfigError(ValueError):
    """A config file that cannot be used; the message names the file, the field and what is accepted."""


def _shown(path: Path | str) -> str:
    """A file name as an error message prints it: a contributed name may hold terminal escape sequences."""
    return for_terminal(str(path), keep_newlines=False)


@functools.lru_cache(maxsize=1)
def site_pages_under_models() -> frozenset[str]:
    """The pages the renderer writes under ``models/`` besides the model pages (the models index), read
    from the renderer itself: a model whose page path is one of these would overwrite it."""
    from benchmarks.render.build import model_pages
    from benchmarks.render.pages import SiteModel

    pages, _ = model_pages(SiteModel([]), root=BENCHMARKS_DIR.parent)
    return frozenset(p.path for p in pages)


def letter_scripts(text: str) -> list[str]:
    """The Unicode scripts of the letters of ``text`` (sorted; marks, digits, punctuation and spaces are
    script-neutral), from Unicode's own script data as ``confusable_homoglyphs`` ships it."""
    from confusable_homoglyphs import categories

    return sorted({categories.alias(c) for c in text if c.isalpha()} - {"COMMON", "INHERITED"})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False)


class TycheonSource(_Strict):
    """A forecaster registered in :mod:`tycheon.forecasters.registry`."""

    kind: Literal["tycheon"] = Field(description='"tycheon": a forecaster of the tycheon library')
    forecaster: Annotated[
        str,
        Field(
            pattern=NAME,
            description=("its registered id in tycheon.forecasters.registry; letters, digits, _ and - only"),
        ),
    ]


class SktimeSource(_Strict):
    """An sktime forecaster, named by its class name in sktime's registry (never by import path)."""

    kind: Literal["sktime"] = Field(description='"sktime": a forecaster of the sktime library')
    estimator: Annotated[
        str,
        Field(
            pattern=NAME,
            description=("its class name in sktime's registry (never an import path), e.g. ThetaForecaster"),
        ),
    ]


class ModelConfig(_Strict):
    """One model as contributors submit it (``benchmarks/models/<id>.toml``)."""

    id: Annotated[
        str,
        Field(
            pattern=SLUG,
            description=("the file name stem; lower-case letters, digits, _ and -, unique among the models"),
        ),
    ]
    display_name: Annotated[
        str,
        Field(
            min_length=1,
            max_length=80,
            description=("the name the leaderboard shows; 1-80 characters, unique (case-insensitive)"),
        ),
    ]
    family: Annotated[
        str,
        Field(
            pattern=SLUG,
            description=("a slug grouping similar methods: baseline, statistical, intermittent, ml, foundation ..."),
        ),
    ]
    source: Annotated[
        TycheonSource | SktimeSource,
        Field(
            discriminator="kind",
            description=(
                'where the forecaster comes from: {kind = "tycheon", forecaster = ...} or '
                '{kind = "sktime", estimator = ...}'
            ),
        ),
    ]
    params: dict[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")], ParamValue] = Field(
        default_factory=dict,
        description=("constructor parameters as JSON values, checked against the forecaster's signature"),
    )
    tags: list[Annotated[str, Field(pattern=SLUG)]] = Field(default_factory=list, description="optional slugs")
    licence: Annotated[
        str,
        Field(
            min_length=1, max_length=80, description=("licence of the model or adapter you name; at most 80 characters")
        ),
    ]
    contributor: Annotated[
        str,
        Field(
            min_length=1,
            max_length=120,
            description=('who submits it, e.g. "Your Name <you@example.org>"; at most 120 characters'),
        ),
    ]

    @pydantic.field_validator("id")
    @classmethod
    def _own_page(cls, model_id: str) -> str:
        from benchmarks.render.fmt import slugify
        from benchmarks.render.pages import SiteModel

        page = SiteModel.model_page(model_id)
        if slugify(model_id) != model_id:
            raise ValueError(
                f"{model_id!r} would be published as {page}; an id must be its own page name "
                "(no '--', no '-' at the end), so that two ids never share a page"
            )
        if page in site_pages_under_models():
            reserved = sorted(PurePosixPath(p).stem for p in site_pages_under_models())
            raise ValueError(
                f"{model_id!r} is reserved: the site already writes {page} (reserved ids: {reserved}); "
                "choose another id"
            )
        return model_id

    @pydantic.field_validator("display_name")
    @classmethod
    def _visible(cls, name: str) -> str:
        hidden = sorted({f"U+{ord(c):04X}" for c in name if unicodedata.category(c) in _INVISIBLE})
        if hidden:
            raise ValueError(f"contains invisible or control characters ({', '.join(hidden)}); use visible text")
        if not name.strip():
            raise ValueError("is only whitespace; a display name must say what the model is")
        if name != name.strip():
            raise ValueError("starts or ends with whitespace")
        scripts = letter_scripts(name)
        if len(scripts) > 1:
            raise ValueError(
                f"mixes letters of several scripts ({', '.join(scripts)}), the way a look-alike of another "
                "name is made (a Cyrillic 'а' for a Latin 'a'); write it in one script"
            )
        return name

    def factory_spec(self) -> tuple[str, dict[str, Any]]:
        """``(forecaster_id, params)`` for :func:`tycheon.backtest.engine.forecaster_factory`."""
        if isinstance(self.source, SktimeSource):
            return "sktime", {"estimator": self.source.estimator, "params": dict(self.params)}
        return self.source.forecaster, dict(self.params)

    def sha256(self) -> str:
        """Hash of the validated config (canonical JSON); part of the cache key."""
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()


class UserFile(_Strict):
    """A user's own long-format file as a benchmark dataset (``[datasets.file]`` in a config).

    ``path`` is relative to the config file. Results and pages record the file's *name* and sha256 only
    (the dump of this entry writes ``path`` as the bare file name), never the folder it lives in.
    """

    path: Annotated[str, Field(min_length=1, max_length=400)]
    id: Annotated[str, Field(min_length=1)] = "unique_id"
    time: Annotated[str, Field(min_length=1)] = "ds"
    target: Annotated[str, Field(min_length=1)] = "y"
    levels: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)
    freq: Annotated[str, Field(pattern=r"^[0-9]*[A-Za-z]+(-[A-Za-z]+)?$")] | None = None
    season_length: Annotated[StrictInt, Field(ge=1)] | None = None
    nan_policy: Literal["raise", "zero", "drop_series"] = "raise"
    edge_nan: Literal["policy", "unlisted"] = "policy"
    static_universe: StrictBool = False
    redistributable: StrictBool = False
    licence: Annotated[str, Field(min_length=1, max_length=120)] | None = None
    max_rows: Annotated[StrictInt, Field(ge=1)] = Field(
        DEFAULT_MAX_ROWS,
        exclude=True,  # a guard on reading the file, not part of what was computed
        description="a file of more rows is refused before it is loaded (its size read from the parquet footer "
        "or a streamed count), so a small file that unpacks into millions of rows cannot exhaust memory",
    )

    @pydantic.field_validator("path")
    @classmethod
    def _suffix(cls, value: str) -> str:
        if Path(value).suffix.lower() not in (".csv", ".parquet", ".pq"):
            raise ValueError(f"{value!r}: a user file must be .csv, .parquet or .pq")
        return value

    @pydantic.field_serializer("path", when_used="json")
    def _name_only(self, value: str) -> str:
        return Path(value).name

    def resolve(self, config_dir: Path) -> Path:
        """The file's location: ``path`` relative to the folder of the config that names it."""
        return (config_dir / self.path).resolve()


class DatasetEntry(_Strict):
    """A dataset in a benchmark: a catalogue loader (``name`` + ``options``) or a user file (``file``),
    units of analysis, optional subsample."""

    name: Annotated[str, Field(pattern=SLUG)]
    label: Annotated[str, Field(pattern=SLUG)] | None = None
    options: dict[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")], Scalar] = Field(default_factory=dict)
    file: UserFile | None = None
    units: list[Annotated[str, Field(pattern=UNIT)]] = Field(default_factory=lambda: ["series"], min_length=1)
    subsample: Annotated[int, Field(ge=1)] | None = None
    min_history: Annotated[int, Field(ge=1)] | None = None
    dial: list[Annotated[int, Field(ge=1)]] = Field(
        default_factory=list,
        description=(
            "Group counts k of the aggregation dial (size-sorted and random groups, capped by the number of "
            "series); empty: no dial. Run as extra units, apart from the leaderboard units."
        ),
    )
    sweep: list[Annotated[float, Field(ge=0)]] = Field(
        default_factory=list,
        description=("Spikiness settings of the synthetic marketplace to sweep (units total and series); empty: none."),
    )
    skip_models: SkipModels = Field(default_factory=dict, description=_SKIP_DESCRIPTION)
    analysis_models: list[Annotated[str, Field(pattern=SLUG)]] | None = Field(
        None,
        min_length=1,
        description=(
            "Models the dial's and the sweep's extra backtests refit (each setting refits them on the whole "
            "panel); the dial and sweep tables cover these only and say so. None: the dataset's whole roster. "
            "Must include the random walk and the production baseline."
        ),
    )

    @pydantic.model_validator(mode="after")
    def _check_sweep(self) -> DatasetEntry:
        if self.sweep and (self.name != "synthetic_marketplace" or self.file is not None):
            raise ValueError(f"sweep sets the synthetic marketplace's spikiness; dataset {self.name!r} has none")
        if self.analysis_models is not None and not (self.dial or self.sweep):
            raise ValueError(
                f"dataset {self.key!r}: analysis_models chooses the dial's and the sweep's models; "
                "it has neither (add dial or sweep, or remove analysis_models)"
            )
        return self

    @pydantic.model_validator(mode="after")
    def _known(self) -> DatasetEntry:
        if self.file is not None:
            if self.options:
                raise ValueError(
                    f"dataset {self.name!r}: a user file takes its settings in [datasets.file], "
                    f"not options {sorted(self.options)}"
                )
            return self
        from tycheon.data.datasets import available_datasets

        known = available_datasets()
        if self.name not in known:
            raise ValueError(
                f"unknown dataset {self.name!r}; catalogue datasets: {known}; for your own data add a "
                "[datasets.file] table (path relative to this config, column names id/time/target)"
            )
        return self

    @property
    def key(self) -> str:
        """The dataset's name in results (``label`` when given, else ``name``)."""
        return self.label or self.name


class CompetitionEntry(_Strict):
    """Score one dataset exactly as its competition did: fit on the published training part, forecast
    the published horizon once, score with the competition's metric definitions."""

    dataset: Annotated[str, Field(pattern=SLUG)]
    label: Annotated[str, Field(pattern=SLUG)] | None = None
    competition: Literal["M1", "M3", "Tourism"]
    options: dict[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")], Scalar] = Field(default_factory=dict)
    metrics: list[CompetitionMetric] = Field(min_length=1)
    subsample: Annotated[int, Field(ge=1)] | None = None
    skip_models: SkipModels = Field(default_factory=dict, description=_SKIP_DESCRIPTION)

    @property
    def key(self) -> str:
        return self.label or self.dataset


class ReplayConfig(_Strict):
    """The selection-rule replay run on every rolling dataset's per-series unit (evaluation-choices
    paper, section 7; :class:`tycheon.analysis.replay.ReplaySpec`). The floor is ``production_baseline``."""

    enabled: StrictBool = True
    metric: Literal["rmsse", "mase"] = "rmsse"
    min_fold_share: Annotated[float, Field(gt=0, le=1)] = 0.5
    bias_threshold: Annotated[float, Field(ge=0)] = 0.5
    top_k: Annotated[StrictInt, Field(ge=1)] = 3
    min_folds: Annotated[StrictInt, Field(ge=1)] = 3
    oracle: Literal["block", "series"] = "block"


class SensitivityConfig(_Strict):
    """Which rolling datasets get a protocol-sensitivity audit (:mod:`tycheon.analysis.sensitivity`):
    the roster backtested again under a static split and the intraprotocol references, per series.

    ``datasets`` None: the first synthetic dataset and the first real one of the config. ``models``
    None: every configured model. An empty ``datasets`` list turns the audit off.
    """

    datasets: list[Annotated[str, Field(pattern=SLUG)]] | None = None
    models: list[Annotated[str, Field(pattern=SLUG)]] | None = None
    metric: Literal["rmsse", "mase"] = "rmsse"
    static_gap: Annotated[StrictInt, Field(ge=0)] = 3
    boundary_shifts: list[StrictInt] = Field(default_factory=lambda: [-3, -1, 1, 3])
    refit_shift: Annotated[StrictInt, Field(ge=0)] = 2
    n_resamples: Annotated[StrictInt, Field(ge=1)] = 2000


class BenchmarkConfig(_Strict):
    """A benchmark: datasets, protocol, roster and the two mandatory reference models."""

    name: Annotated[str, Field(pattern=SLUG)]
    description: str = ""
    seed: StrictInt
    horizon: Annotated[StrictInt, Field(ge=1)]
    stride: Annotated[StrictInt, Field(ge=1)]
    n_origins: Annotated[StrictInt, Field(ge=1)]
    embargo: Annotated[StrictInt, Field(ge=0)] = 0
    n_calibration_origins: Annotated[StrictInt, Field(ge=0)] = Field(
        0,
        description="unscored calibration origins before the first scored origin that calibrate every model's "
        "conformal bands from its pooled scaled residuals (0: bands from earlier scored origins only)",
    )
    min_history: Annotated[StrictInt, Field(ge=1)]
    quantile_levels: list[Annotated[float, Field(gt=0, lt=1)]] = Field(min_length=1)
    n_samples: Annotated[StrictInt, Field(ge=0)] = 0
    metrics: list[str] = Field(
        min_length=1, description="leaderboard metrics: names from tycheon.metrics.registry that rank (a loss)"
    )
    models: list[Annotated[str, Field(pattern=SLUG)]] = Field(min_length=1)
    random_walk: Annotated[str, Field(pattern=SLUG)] = "naive"
    production_baseline: Annotated[str, Field(pattern=SLUG)] = "snaive_momentum"
    alpha: Annotated[float, Field(gt=0, lt=1)] = 0.05
    verdict_adjust: Literal["bh", "holm"] = Field(
        "bh", description="multiplicity adjustment of the verdict's one-sided p-values within a table's family"
    )
    min_cell: Annotated[StrictInt, Field(ge=2)] = Field(
        30,
        description="fewest scored blocks (one series at one origin; an aggregate unit's blocks are its origins) "
        "for a table to name a winner, a ranking or a verdict (WP26 section 6; tycheon.analysis.cell)",
    )
    service_level: Annotated[float, Field(ge=0.5, le=0.975)] = Field(
        0.9,
        description="the inventory simulation's target service level: the order-up-to level is the calibrated "
        "band's quantile at it (tycheon.analysis.inventory)",
    )
    lead_time: Annotated[StrictInt, Field(ge=0, le=52)] = Field(
        0, description="the inventory simulation's lead time in periods (an order arrives this many periods later)"
    )
    review_period: Annotated[StrictInt, Field(ge=1, le=52)] = Field(
        1, description="the inventory simulation's review period in periods"
    )
    lost_sales: StrictBool = Field(
        True, description="the inventory simulation's unmet demand: lost (true) or backordered (false)"
    )
    time_budget_seconds: Annotated[float, Field(gt=0)] | None = None
    n_jobs: Annotated[StrictInt, Field(ge=1)] = 1
    backend: Literal["sequential", "joblib", "dask"] = Field(
        "sequential",
        description="where the engine's tasks run: in process, local joblib processes, or a Dask cluster (a "
        "local one sized to the machine unless `scheduler` names one); results are identical",
    )
    scheduler: str | None = Field(
        None,
        exclude=True,  # where a run computed is not part of its results (the same scores anywhere)
        description="address tcp://HOST:PORT of an existing Dask scheduler for backend = 'dask' (default: start "
        "a local cluster); `benchmarks.run --scheduler` overrides it",
    )
    datasets: list[DatasetEntry] = Field(min_length=1)
    competition: list[CompetitionEntry] = Field(default_factory=list)
    replay: ReplayConfig = Field(default_factory=ReplayConfig)
    sensitivity: SensitivityConfig = Field(default_factory=SensitivityConfig)

    @pydantic.field_validator("scheduler")
    @classmethod
    def _scheduler_address(cls, value: str | None) -> str | None:
        from benchmarks.cluster import parse_scheduler_address

        return None if value is None else parse_scheduler_address(value)

    @pydantic.model_validator(mode="after")
    def _check(self) -> BenchmarkConfig:
        if self.scheduler is not None and self.backend != "dask":
            raise ValueError(f"scheduler = {self.scheduler!r} needs backend = 'dask' (the backend is {self.backend!r})")
        if self.stride < self.horizon:
            raise ValueError(
                f"origins overlap: stride {self.stride} < horizon {self.horizon}; a benchmark requires "
                "non-overlapping origins (stride >= horizon) so that the pooled DM test is valid "
                "(ADR-0006 decision 5)"
            )
        ranked = metric_names(ranked=True)
        unknown = [m for m in self.metrics if m not in ranked]
        if unknown:
            raise ValueError(f"metrics {unknown} are not ranked leaderboard metrics; available: {list(ranked)}")
        levels = list(self.quantile_levels)
        if levels != sorted(set(levels)):
            raise ValueError(f"quantile_levels must be strictly increasing, got {levels}")
        dupes = sorted({m for m in self.models if self.models.count(m) > 1})
        if dupes:
            raise ValueError(f"models lists {dupes} more than once")
        if self.random_walk not in self.models:
            raise ValueError(
                f"the random walk is mandatory: models must include random_walk = {self.random_walk!r} "
                "(ADR-0006: every evaluation reports the random-walk baseline)"
            )
        if self.production_baseline not in self.models:
            raise ValueError(f"production_baseline {self.production_baseline!r} must be one of the models")
        keys = [d.key for d in self.datasets]
        if len(set(keys)) != len(keys):
            raise ValueError(f"dataset names/labels must be unique, got {keys}")
        unknown = sorted(set(self.sensitivity.datasets or ()) - set(keys))
        if unknown:
            raise ValueError(f"sensitivity.datasets {unknown} are not datasets of this config; datasets: {keys}")
        unknown = sorted(set(self.sensitivity.models or ()) - set(self.models))
        if unknown:
            raise ValueError(f"sensitivity.models {unknown} are not models of this config; models: {self.models}")
        for entry in [*self.datasets, *self.competition]:
            unknown = sorted(set(entry.skip_models) - set(self.models))
            if unknown:
                raise ValueError(f"dataset {entry.key!r}: skip_models {unknown} are not models of this config")
            mandatory = sorted(set(entry.skip_models) & {self.random_walk, self.production_baseline})
            if mandatory:
                raise ValueError(
                    f"dataset {entry.key!r}: skip_models {mandatory}: the random walk and the production "
                    "baseline run on every dataset (ADR-0006)"
                )
        for entry in self.datasets:
            if entry.analysis_models is None:
                continue
            dupes = sorted({m for m in entry.analysis_models if entry.analysis_models.count(m) > 1})
            unknown = sorted(set(entry.analysis_models) - set(self.models))
            missing = [m for m in (self.random_walk, self.production_baseline) if m not in entry.analysis_models]
            if dupes or unknown:
                raise ValueError(
                    f"dataset {entry.key!r}: analysis_models {dupes or unknown} "
                    f"{'are listed more than once' if dupes else 'are not models of this config'}; "
                    f"models: {self.models}"
                )
            if missing:
                raise ValueError(
                    f"dataset {entry.key!r}: analysis_models must include the random walk and the production "
                    f"baseline (ADR-0006: the dial and the sweep rank the baseline); missing {missing}"
                )
            skipped = sorted(set(entry.analysis_models) & set(entry.skip_models))
            if skipped:
                raise ValueError(f"dataset {entry.key!r}: analysis_models {skipped} are in its skip_models")
        return self


# ---------------------------------------------------------------------------------------------- loading
_KINDS = ("tycheon", "sktime")


def _format_errors(path: Path, err: pydantic.ValidationError) -> str:
    lines = []
    for e in err.errors():
        parts = [str(p) for p in e["loc"]]
        # a discriminated union adds the tag to the location (source.tycheon.forecaster): drop it
        parts = [p for i, p in enumerate(parts) if not (i > 0 and parts[i - 1] == "source" and p in _KINDS)]
        loc = ".".join(parts) or "(top level)"
        if e["type"] == "extra_forbidden":
            lines.append(f"unknown field {loc!r}: not part of the schema")
        elif e["type"] == "missing":
            lines.append(f"missing required field {loc!r}")
        else:
            lines.append(f"field {loc!r}: {e['msg']}")
    return f"{_shown(path)}: " + "; ".join(lines)


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a config file with limits: size, encoding (UTF-8, no BOM), nesting depth.

    Raises
    ------
    ConfigError
        Missing, too large, with a byte-order mark, not UTF-8, too deeply nested, or not TOML.
    """
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError as err:
        raise ConfigError(f"{_shown(path)}: no such config file") from err
    except OSError as err:
        raise ConfigError(f"{_shown(path)}: cannot be read: {err}") from err
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{_shown(path)}: larger than {MAX_CONFIG_BYTES} bytes; a config is a short TOML file")
    if data.startswith(b"\xef\xbb\xbf"):
        raise ConfigError(f"{_shown(path)}: starts with a UTF-8 byte-order mark (BOM); save it as UTF-8 without a BOM")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ConfigError(f"{_shown(path)}: not UTF-8 ({err})") from err
    try:
        return tomllib.loads(text)
    except RecursionError as err:
        raise ConfigError(
            f"{_shown(path)}: nested too deeply for a config (arrays or tables inside each other)"
        ) from err
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{_shown(path)}: not valid TOML: {err}") from err


def _constructor(cls: type) -> tuple[dict[str, inspect.Parameter], dict[str, Any]]:
    params = {
        p.name: p
        for p in inspect.signature(cls.__init__).parameters.values()
        if p.name != "self" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)
    }
    try:
        hints = typing.get_type_hints(cls.__init__)
    except Exception:  # noqa: BLE001 - unresolvable annotations: fall back to the defaults' types
        hints = {}
    return params, hints


def _check_param_type(name: str, value: Any, param: inspect.Parameter, hint: Any) -> str | None:
    if hint is not None and hint is not Any:
        try:
            pydantic.TypeAdapter(hint).validate_python(value, strict=True)
        except pydantic.ValidationError:
            return f"parameter {name!r} = {value!r} does not have the constructor's type {hint}"
        except pydantic.PydanticSchemaGenerationError:
            pass
        else:
            return None
    default = param.default
    if default is inspect.Parameter.empty or default is None:
        return None
    ok = isinstance(value, type(default)) or (isinstance(default, float) and type(value) is int)
    if isinstance(default, bool) != isinstance(value, bool):
        ok = False
    if not ok:
        return (
            f"parameter {name!r} = {value!r} has type {type(value).__name__}, "
            f"expected {type(default).__name__} like its default {default!r}"
        )
    return None


def _check_params(path: Path, cls: type, params: dict[str, Any], owner: str) -> None:
    signature, hints = _constructor(cls)
    for name, value in params.items():
        if name not in signature:
            raise ConfigError(
                f"{_shown(path)}: field 'params.{name}': unknown parameter {name!r} for {owner}; "
                f"accepted: {sorted(signature)}"
            )
        problem = _check_param_type(name, value, signature[name], hints.get(name))
        if problem:
            raise ConfigError(f"{_shown(path)}: field 'params.{name}': {problem}")


def _check_finite(path: Path, value: Any, where: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{_shown(path)}: field {where!r}: {value!r} is not a finite number")
    if isinstance(value, dict):
        for k, v in value.items():
            _check_finite(path, v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_finite(path, v, f"{where}[{i}]")


def _check_sktime(path: Path, estimator: Any, params: Any, *, field: str, estimator_field: str) -> None:
    from tycheon.forecasters.roster.sktime_allowlist import SktimeAllowListError, check_params, rules

    try:
        rules(estimator)
    except SktimeAllowListError as err:
        raise ConfigError(f"{_shown(path)}: field {estimator_field!r}: {err}") from err
    if not isinstance(params, dict):
        raise ConfigError(
            f"{_shown(path)}: field {field!r}: must be a table of parameters, got {type(params).__name__}"
        )
    for name, value in params.items():
        try:
            check_params(estimator, {name: value})
        except SktimeAllowListError as err:
            raise ConfigError(f"{_shown(path)}: field '{field}.{name}': {err}") from err


def _check_bounds(path: Path, forecaster: str, params: dict[str, Any]) -> None:
    """Refuse a parameter outside :data:`CONTRIBUTED_PARAMS` (not listed, or out of its range)."""
    bounds = CONTRIBUTED_PARAMS.get(forecaster, {})
    for name, value in params.items():
        if forecaster == "sktime" and name in _ALLOW_LISTED:
            continue
        bound = bounds.get(name)
        if bound is None:
            raise ConfigError(
                f"{_shown(path)}: field 'params.{name}': tycheon forecaster {forecaster!r} takes no {name!r} from "
                f"a contributed config; it may set: {sorted(bounds) or 'nothing'} (leave it out for the default)"
            )
        if not bound.admits(value):
            raise ConfigError(
                f"{_shown(path)}: field 'params.{name}': {value!r} is out of range for tycheon forecaster "
                f"{forecaster!r}; accepted: {bound.accepted()} (leave it out for the default)"
            )


def _construct(path: Path, cls: type, params: dict[str, Any], owner: str) -> None:
    """Build the forecaster once, so that its constructor's own checks (ranges, NaN) run at load time."""
    try:
        cls(**params)
    except (TypeError, ValueError) as err:
        raise ConfigError(f"{_shown(path)}: field 'params': {owner} refuses these parameters: {err}") from err


def load_model_config(path: str | Path) -> ModelConfig:
    """Load and validate one model config; the file stem must equal its ``id``.

    Raises
    ------
    ConfigError
        Unknown or missing field, an id that is no registered forecaster or allow-listed sktime estimator, an
        unknown parameter, one of the wrong type, out of range or non-finite; the message names the file and
        the field.
    """
    path = Path(path)
    raw = read_toml(path)
    try:
        cfg = ModelConfig.model_validate(raw)
    except pydantic.ValidationError as err:
        raise ConfigError(_format_errors(path, err)) from err
    _check_finite(path, cfg.params, "params")
    if path.stem != cfg.id:
        raise ConfigError(f"{_shown(path)}: field 'id': {cfg.id!r} must equal the file name stem {path.stem!r}")
    if isinstance(cfg.source, TycheonSource):
        from tycheon.forecasters import registry

        try:
            cls = registry.get(cfg.source.forecaster)
        except registry.UnknownForecasterError as err:
            raise ConfigError(f"{_shown(path)}: field 'source.forecaster': {err}") from err
        _check_params(path, cls, cfg.params, f"tycheon forecaster {cfg.source.forecaster!r}")
        if cfg.source.forecaster == "sktime":  # the adapter's nested estimator: the same allow-list
            _check_sktime(
                path,
                cfg.params.get("estimator", "NaiveForecaster"),
                cfg.params.get("params") or {},
                field="params.params",
                estimator_field="params.estimator",
            )
        _construct(path, cls, cfg.params, f"tycheon forecaster {cfg.source.forecaster!r}")
        _check_bounds(path, cfg.source.forecaster, cfg.params)
    else:
        _check_sktime(path, cfg.source.estimator, cfg.params, field="params", estimator_field="source.estimator")
    return cfg


def _sktime_defaults(estimator: str) -> dict[str, Any]:
    """The allow-listed parameters' defaults of an sktime estimator (its constructor's), or none when sktime
    is not installed (then only what the configs write is compared)."""
    from tycheon.forecasters.roster.sktime_allowlist import allowed_class, rules

    try:
        cls = allowed_class(estimator)
    except ImportError:
        return {}
    signature, _ = _constructor(cls)
    return {name: p.default for name, p in signature.items() if name in rules(estimator)}


def canonical_spec(cfg: ModelConfig) -> tuple[str, dict[str, Any]]:
    """The model a config runs, written one way: every parameter the config leaves out filled with its
    default, the sktime route and the tycheon ``sktime`` adapter written alike, and the estimator settings
    of :data:`SKTIME_EQUIVALENTS` written as the tycheon forecaster they equal. Two configs with the same
    canonical spec are the same model.

    Returns
    -------
    tuple
        ``(forecaster_id, params)`` for a tycheon forecaster, ``("sktime:<Estimator>", params)`` otherwise;
        an sktime ``season_param`` left out is ``"<season length>"`` (the adapter fills in the data's).
    """
    from tycheon.forecasters import registry
    from tycheon.forecasters.roster.sktime_allowlist import season_param

    forecaster, params = cfg.factory_spec()
    if forecaster != "sktime":
        return forecaster, registry.create(forecaster, **params).get_params()
    estimator = str(params.get("estimator", "NaiveForecaster"))
    given = dict(params.get("params") or {})
    full = {**_sktime_defaults(estimator), **given}
    season = season_param(estimator)
    if season is not None and season not in given:
        full[season] = "<season length>"
    for eq in SKTIME_EQUIVALENTS:
        if eq.estimator == estimator and all(full.get(k, object()) == v for k, v in eq.fixed.items()):
            carried = {eq.renamed[k]: v for k, v in full.items() if k in eq.renamed}
            if set(full) <= set(eq.fixed) | set(eq.renamed):
                return eq.forecaster, registry.create(eq.forecaster, **carried).get_params()
    return f"sktime:{estimator}", dict(sorted(full.items()))


def load_model_configs(ids: list[str], *, models_dir: Path = MODELS_DIR) -> dict[str, ModelConfig]:
    """Load ``<models_dir>/<id>.toml`` for every id, in the given order."""
    out = {}
    for model_id in ids:
        path = models_dir / f"{model_id}.toml"
        if not path.exists():
            known = sorted(p.stem for p in models_dir.glob("*.toml"))
            raise ConfigError(f"unknown model id {model_id!r}: no file {_shown(path)}; known model ids: {known}")
        out[model_id] = load_model_config(path)
    return out


def load_benchmark_config(path: str | Path) -> BenchmarkConfig:
    """Load and validate a benchmark config (without resolving its models; see
    :func:`resolve_benchmark_config`)."""
    path = Path(path)
    raw = read_toml(path)
    try:
        return BenchmarkConfig.model_validate(raw)
    except pydantic.ValidationError as err:
        raise ConfigError(_format_errors(path, err)) from err


def resolve_benchmark_config(
    name_or_path: str | Path, *, models_dir: Path = MODELS_DIR
) -> tuple[Path, BenchmarkConfig, dict[str, ModelConfig]]:
    """Find a config by name (``benchmarks/configs/<name>.toml``) or path, validate it and every model
    it names, and check that the random walk really is the tycheon ``naive`` forecaster."""
    path = Path(name_or_path)
    if path.suffix != ".toml":
        path = CONFIGS_DIR / f"{name_or_path}.toml"
    cfg = load_benchmark_config(path)
    try:
        models = load_model_configs(list(cfg.models), models_dir=models_dir)
    except ConfigError as err:
        raise ConfigError(f"{_shown(path)}: field 'models': {err}") from err
    rw = models[cfg.random_walk]
    if not (isinstance(rw.source, TycheonSource) and rw.source.forecaster == "naive"):
        raise ConfigError(
            f"{_shown(path)}: field 'random_walk': {cfg.random_walk!r} must be the tycheon 'naive' forecaster "
            f"(the random walk), got source {rw.source.model_dump()}"
        )
    return path, cfg, models
