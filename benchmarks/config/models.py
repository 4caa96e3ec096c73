"""The model config schema: one :class:`ModelConfig` per file under ``benchmarks/models/``, as
contributors submit it. Field types and patterns live here; what a forecaster may be given is checked by
the gate (:mod:`benchmarks.config.gate`) after the schema accepts the file.
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, Literal

import pydantic
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr

from benchmarks.config.gate import check_display_name, check_model_id

__all__ = ["NAME", "SLUG", "ModelConfig", "ParamValue", "Scalar", "SktimeSource", "TycheonSource"]

SLUG = r"^[a-z0-9][a-z0-9_\-]{0,63}$"
# A registered id or a class name: letters, digits, '_' and '-' only. No '.', ':', '/', so never a path.
NAME = r"^[A-Za-z][A-Za-z0-9_\-]{0,99}$"

Scalar = StrictBool | StrictInt | StrictFloat | StrictStr
ParamValue = Scalar | list[Scalar] | dict[str, Scalar | list[Scalar]]


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
        return check_model_id(model_id)

    @pydantic.field_validator("display_name")
    @classmethod
    def _visible(cls, name: str) -> str:
        return check_display_name(name)

    def factory_spec(self) -> tuple[str, dict[str, Any]]:
        """``(forecaster_id, params)`` for :func:`tycheon.backtest.engine.forecaster_factory`."""
        if isinstance(self.source, SktimeSource):
            return "sktime", {"estimator": self.source.estimator, "params": dict(self.params)}
        return self.source.forecaster, dict(self.params)

    def sha256(self) -> str:
        """Hash of the validated config (canonical JSON); part of the cache key."""
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()
