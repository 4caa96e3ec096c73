"""The gate a contributed model config passes before the runner may build it.

Safety by construction: a model config names either a *registered* tycheon forecaster id or an sktime
estimator *class name* from the reviewed allow-list (:mod:`tycheon.forecasters.roster.sktime_allowlist`,
never sktime's whole registry, whose classes include some that ``eval`` a string parameter), plus
JSON-typed parameters: a tycheon forecaster's are checked against its constructor's signature, then by
constructing it (its own range checks), then against :data:`CONTRIBUTED_PARAMS`; an sktime estimator's
against the allow-list's rules (listed parameters only, typed, ranged, strings from enumerated choices);
the same holds for the params nested in the ``sktime`` forecaster's ``params``. Non-finite numbers are
refused anywhere in ``params``. There is no field that holds an import path, a module, a callable or code,
and names with dots, colons or slashes are refused by the pattern before any lookup
(:data:`benchmarks.config.models.NAME`), so a config can never make the runner import or execute anything
beyond the roster and the allow-list.

Besides the parameters, the gate keeps a model's public face honest: an id may not take a page the site
already writes (:func:`check_model_id`), and a display name may not hide characters or mix scripts the way
a look-alike of another name is made (:func:`check_display_name`). :func:`canonical_spec` writes the model
a config runs one way, so that a duplicate under a new name is recognised.
"""

from __future__ import annotations

import functools
import inspect
import math
import typing
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal

import pydantic

from benchmarks.config.io import BENCHMARKS_DIR, ConfigError, _shown

if TYPE_CHECKING:
    from benchmarks.config.models import ModelConfig

__all__ = [
    "CONTRIBUTED_PARAMS",
    "SKTIME_EQUIVALENTS",
    "Bound",
    "SktimeEquivalent",
    "canonical_spec",
    "check_display_name",
    "check_finite",
    "check_model_id",
    "check_sktime_params",
    "check_tycheon_params",
    "letter_scripts",
    "site_pages_under_models",
]


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
# so each number has a ceiling (an unbounded n_lags grew the harness's memory without limit). A parameter
# not listed here is refused (a new forecaster's parameters are unreachable from a config until they are
# listed); the sktime adapter's ``estimator`` and ``params`` are bounded by the sktime allow-list instead.
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

# Unicode categories that render as nothing or control the terminal: refused in display names.
_INVISIBLE = frozenset({"Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp"})


@functools.lru_cache(maxsize=1)
def site_pages_under_models() -> frozenset[str]:
    """The pages the renderer writes under ``models/`` besides the model pages (the models index), read
    from the renderer itself: a model whose page path is one of these would overwrite it."""
    from benchmarks.render.builders.models import model_pages
    from benchmarks.render.pages import SiteModel

    pages, _ = model_pages(SiteModel([]), root=BENCHMARKS_DIR.parent)
    return frozenset(p.path for p in pages)


def letter_scripts(text: str) -> list[str]:
    """The Unicode scripts of the letters of ``text`` (sorted; marks, digits, punctuation and spaces are
    script-neutral), from Unicode's own script data as ``confusable_homoglyphs`` ships it."""
    from confusable_homoglyphs import categories

    return sorted({categories.alias(c) for c in text if c.isalpha()} - {"COMMON", "INHERITED"})


def check_model_id(model_id: str) -> str:
    """``model_id`` when it is its own page name and no page the site already writes; else a ValueError
    (raised inside the schema's validator, so the message names the field)."""
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
            f"{model_id!r} is reserved: the site already writes {page} (reserved ids: {reserved}); choose another id"
        )
    return model_id


def check_display_name(name: str) -> str:
    """``name`` when every character is visible, it has no outer whitespace and its letters are of one
    script; else a ValueError (raised inside the schema's validator, so the message names the field)."""
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


def check_finite(path: Path, value: Any, where: str) -> None:
    """Refuse a non-finite number anywhere in ``value`` (``where`` names its field)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{_shown(path)}: field {where!r}: {value!r} is not a finite number")
    if isinstance(value, dict):
        for k, v in value.items():
            check_finite(path, v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            check_finite(path, v, f"{where}[{i}]")


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


def check_tycheon_params(path: Path, forecaster: str, params: dict[str, Any]) -> None:
    """Check a tycheon-route model: ``forecaster`` is registered, ``params`` fit its constructor's
    signature (and the allow-list, for the ``sktime`` adapter's nested estimator), the constructor accepts
    them, and each is inside :data:`CONTRIBUTED_PARAMS`.

    Raises
    ------
    ConfigError
        Naming the file and the field (``source.forecaster`` or ``params.<name>``).
    """
    from tycheon.forecasters import registry

    try:
        cls = registry.get(forecaster)
    except registry.UnknownForecasterError as err:
        raise ConfigError(f"{_shown(path)}: field 'source.forecaster': {err}") from err
    owner = f"tycheon forecaster {forecaster!r}"
    _check_params(path, cls, params, owner)
    if forecaster == "sktime":  # the adapter's nested estimator: the same allow-list
        _check_sktime(
            path,
            params.get("estimator", "NaiveForecaster"),
            params.get("params") or {},
            field="params.params",
            estimator_field="params.estimator",
        )
    _construct(path, cls, params, owner)
    _check_bounds(path, forecaster, params)


def check_sktime_params(path: Path, estimator: str, params: dict[str, Any]) -> None:
    """Check an sktime-route model: ``estimator`` is on the allow-list and ``params`` follow its rules.

    Raises
    ------
    ConfigError
        Naming the file and the field (``source.estimator`` or ``params.<name>``).
    """
    _check_sktime(path, estimator, params, field="params", estimator_field="source.estimator")


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
