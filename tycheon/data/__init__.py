"""Data layer: the validated panel, dataset loaders, the synthetic generator and the manifest."""

from tycheon.data.datasets import available_datasets, load
from tycheon.data.panel import DenseView, Panel, PanelValidationError
from tycheon.data.synthetic import generate_marketplace
from tycheon.data.userfile import load_user_file

__all__ = [
    "DenseView",
    "Panel",
    "PanelValidationError",
    "available_datasets",
    "generate_marketplace",
    "load",
    "load_user_file",
]
