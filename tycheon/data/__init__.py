"""Data layer: the validated panel, dataset loaders, the synthetic generator and the manifest.

The names below load on first use, so that importing the panel (or anything under ``tycheon.data``) does not
import every loader and the synthetic generator.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tycheon.data.datasets import available_datasets, load
    from tycheon.data.panel import DenseView, Panel, PanelValidationError
    from tycheon.data.synthetic import generate_marketplace
    from tycheon.data.userfile import load_user_file

_LAZY = {
    "DenseView": "tycheon.data.panel",
    "Panel": "tycheon.data.panel",
    "PanelValidationError": "tycheon.data.panel",
    "available_datasets": "tycheon.data.datasets",
    "generate_marketplace": "tycheon.data.synthetic",
    "load": "tycheon.data.datasets",
    "load_user_file": "tycheon.data.userfile",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    try:
        module = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'tycheon.data' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
