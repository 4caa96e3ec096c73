"""A leaderboard page's panels: one page per cell (dataset, protocol, unit, demand class), one panel per metric.

The page a reader opens shows the panel of the cell's headline metric as plain HTML (it reads without a
script, and its first screen is the ranked table). The other metrics' panels are the same template's HTML,
shipped in one ``<script type="application/octet-stream">`` element as a gzip-compressed JSON object
``{metric: panel HTML}`` in base64; ``templates/assets/tycheon.js`` unpacks it (``DecompressionStream``) and
swaps a panel in when a reader picks its metric or opens a link to it (``...leaderboard-all.html#crps``).

Why: a cell's panels repeat one another's markup (links, column heads, the reading guide) and differ in
their numbers, so the ten panels of a cell compress to about the size of one; a page per metric carried
the theme's frame and that markup ten times (911 pages, 35 MB of the site's 56 MB).

One writer of each encoding: :func:`pack` here, ``unpackPanels`` in ``tycheon.js``; :func:`unpack` and
:func:`panels_of` read them back for the tests that read every panel of every built page.
"""

from __future__ import annotations

import base64
import gzip
import json
import re

from .fmt import slugify

__all__ = ["PACK_ID", "gzip_bytes", "pack", "panel_id", "panels_of", "unpack"]

PACK_ID = "tyc-panels"  # the id of the script element holding a leaderboard page's packed panels
_DEFAULT = re.compile(r'<div class="tyc-panel" id="tyc-panel" data-metric="([^"]+)">')
_PACKED = re.compile(r'<script type="application/octet-stream" id="' + PACK_ID + r'"[^>]*>([^<]*)</script>')


def panel_id(metric: str) -> str:
    """The fragment naming a metric's panel in its page's URL (``crps_band`` -> ``crps_band``)."""
    return slugify(metric)


def pack(panels: dict[str, str]) -> str:
    """``{metric: html}`` as base64 of gzip-compressed JSON, the same text on every render (no time stamp)."""
    raw = json.dumps(panels, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    return base64.b64encode(gzip_bytes(raw)).decode("ascii")


def gzip_bytes(data: bytes) -> bytes:
    """``data`` gzip-compressed, the same bytes on every render (no file name, no time stamp); the site's
    downloads are written with it too."""
    return gzip.compress(data, compresslevel=9, mtime=0)


def unpack(text: str) -> dict[str, str]:
    """The inverse of :func:`pack`."""
    panels = json.loads(gzip.decompress(base64.b64decode(text.strip())).decode("ascii"))
    if not isinstance(panels, dict):
        raise ValueError("packed panels are not a JSON object")
    return panels


def panels_of(page: str) -> dict[str, str]:
    """Every panel of a leaderboard page (rendered markdown or built HTML), ``{metric: html}``, the shown
    one first; ``{}`` for a page without panels."""
    shown = _DEFAULT.search(page)
    if shown is None:
        return {}
    packed = _PACKED.search(page, shown.end())  # written after the shown panel on every leaderboard page
    if packed is None:
        raise ValueError(f"a leaderboard page without its {PACK_ID} element after the shown panel")
    end = page.rfind("</div>", shown.end(), packed.start())
    return {shown.group(1): page[shown.end() : end], **unpack(packed.group(1))}
