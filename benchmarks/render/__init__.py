"""The leaderboard renderer: results files in, mkdocs-material pages out (``python -m benchmarks.render``)."""

from .load import ResultsFileError, load_results
from .site import RenderTargetError, render_site

__all__ = ["RenderTargetError", "ResultsFileError", "load_results", "render_site"]
