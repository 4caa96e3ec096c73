"""Data layer: the validated panel, dataset loaders, the synthetic generator and the manifest."""

from tycheon.data.panel import DenseView, Panel, PanelValidationError

__all__ = ["DenseView", "Panel", "PanelValidationError"]
