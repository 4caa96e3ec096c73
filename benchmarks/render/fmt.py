"""Formatting helpers shared by every page: numbers, safe path segments, safe labels and relative links.

Nothing here reads a results file; each function is a pure map from a value to the text a page shows.
"""

from __future__ import annotations

import hashlib
import math
import posixpath
import re
from decimal import Decimal

_SLUG_BAD = re.compile(r"[^a-z0-9_]+")
_LABEL_BAD = re.compile(r"[^A-Za-z0-9 _.,:+()/\-]")


def slugify(value: str) -> str:
    """Map any string to a path segment of ``[a-z0-9_-]``, readable and stable.

    A clean slug maps to itself and the unit forms map readably (``"groups:5"`` -> ``"groups-5"``,
    ``"level:region"`` -> ``"level-region"``). Any other string keeps a readable stem and gains an 8-hex
    suffix of its sha256, so ``"A/B"`` and ``"a-b"`` never share a page. The one readable mapping that is
    not one-to-one (``:`` and ``-``) cannot meet a collision in practice (a unit is never a plain
    ``level-region``), and the renderer refuses two pages on one path rather than overwrite one.
    """
    readable = value.replace(":", "-")
    stem = _SLUG_BAD.sub("-", readable.lower()).strip("-") or "x"
    if stem == readable:
        return stem
    digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:8]
    return f"{stem[:48]}-{digest}"


def safe_label(value: str) -> str:
    """A label for navigation titles and markdown headings, where HTML is not escaped by the theme.

    Characters outside a conservative set are replaced by ``?``; the exact string is always shown
    escaped inside an HTML element on the page itself.
    """
    return _LABEL_BAD.sub("?", value)[:80]


def num(value: float | None, digits: int = 3) -> str:
    """Fixed-point text, or an en dash for a missing value (NaN is written as null in results files)."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "\u2013"
    return f"{value:,.{digits}f}"


def pct(value: float | None, digits: int = 1) -> str:
    """A share as a percentage (0.547 -> ``54.7%``), or an en dash for a missing value."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "\u2013"
    return f"{100.0 * value:,.{digits}f}%"


def integer(value: int | None) -> str:
    return "\u2013" if value is None else f"{value:,d}"


def pvalue(value: float | None) -> str:
    """p-values as the paper prints them: four decimals, and ``<0.0001`` below that."""
    if value is None:
        return "\u2013"
    if value < 1e-4:
        return "<0.0001"
    return f"{value:.4f}"


def pcompare(value: float | None) -> str:
    """A p-value as the comparison a note beside a verdict prints: ``=0.003``, ``=0.21``, ``<0.001``, ``=–``.

    Two significant digits: the note explains a verdict, the exact value is in the results file.
    """
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "=\u2013"
    if value < 1e-3:
        return "<0.001"
    return f"={_positional(f'{value:.2g}')}"


def pshort(value: float | None) -> str:
    """A p-value in running text: three significant digits, ``< 0.001`` below that, an en dash when missing.

    >>> pshort(4.21e-08), pshort(0.1187), pshort(0.05021), pshort(None)
    ('< 0.001', '0.119', '0.0502', '–')
    """
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "\u2013"
    if value < 1e-3:
        return "< 0.001"
    return _positional(f"{value:.3g}")


def plain(value: float) -> str:
    """A number as Python writes it most briefly, but never in scientific notation (``1e-05`` -> ``0.00001``)."""
    return _positional(repr(float(value)))


def _positional(text: str) -> str:
    """A number Python wrote with ``g`` or ``repr`` (``1e-07``, ``1.2e+04``) without its exponent."""
    if "e" not in text and "E" not in text:
        return text
    plain = format(Decimal(text), "f")
    return plain.rstrip("0").rstrip(".") if "." in plain else plain


def sort_key(value: float | int | str | None) -> str:
    """The ``data-sort`` attribute the table sorter reads: a plain number, or empty for a missing value."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _positional(f"{value:.10g}")
    return str(value)


def relurl(from_page: str, to_page: str) -> str:
    """Relative URL of one generated page from another, both given as docs-relative ``.md`` paths (the
    target may end in a ``#fragment``).

    Links live inside raw HTML, which mkdocs does not rewrite, so they point at the built ``.html``
    directly (the site is built with ``use_directory_urls: false`` and so also opens from ``file://``).
    A test walks every link in the built site, so a broken one fails the suite.
    """
    start = posixpath.dirname(from_page) or "."
    path, hash_, fragment = to_page.partition("#")  # a panel or a heading of the page: kept as it is
    target = path[: -len(".md")] + ".html" if path.endswith(".md") else path
    return posixpath.relpath(target, start) + hash_ + fragment


def duration(seconds: float | None) -> str:
    """A run time for people: ``"–"`` when unknown, milliseconds under a second, seconds above."""
    if seconds is None or not math.isfinite(seconds):
        return "\u2013"
    if seconds < 0.01:
        return f"{seconds * 1000:.1f} ms"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    return f"{seconds:,.2f} s"


# --- text from results files, as a reader reads it ------------------------------------------------------------

_TRACEBACK_HINT = re.compile(r"Traceback \(most recent call last\)|^\s*File \"", re.M)
_EXCEPTION_PATH = re.compile(r"^(?:[A-Za-z_]\w*\.)+(?=[A-Za-z_]\w*:)")
_CITED = (  # the project's internal documents cited by number (the References page cites them for readers)
    r"\b(?:the\s+)?(?:WP26|ADR-\d+)(?:\s+(?:evaluation\s+)?protocol)?"
    r"(?:,?\s+(?:(?:sections?|decisions?)\s+)?\d+(?:\.\d+)*(?:\s*(?:-|and|,)\s*\d+(?:\.\d+)*)*)?"
)
_CITATION_BEFORE = re.compile(_CITED + r"\s*[,;](?!\s*(?:sections?\b|decisions?\b|\d))\s*")  # "(WP26 4.1, Politis)"
_CITATION = re.compile(r"(?:[,;]\s*|\s+)?" + _CITED)
_FILE_NOTE = re.compile(r"(?:[,;]\s*|\s+)?(?:see\s+)?\b[\w./-]+\.(?:py|toml|md)\b")
_SCIENTIFIC = re.compile(r"(?<![\w.])\d+(?:\.\d+)?[eE][-+]?\d+(?![\w.])")
_MACHINE_NOTE = re.compile(
    r"\s+on\s+\d+\s+(?:CPU\s+)?cores?\b"  # "too slow on 2 cores"
    r"|[,;]\s*(?:one|\d+)\s+(?:CPU\s+)?cores?\b"  # "(measured on 20 series, one core)"
    r"|[,;][^,;()]*\bbudget\b[^,;()]*"  # ", which the 2-hour budget cannot hold ..."
    r"|[,;][^,;()]*\b\d+(?:\.\d+)?\s*(?:GiB|GB|MiB|MB)\s+(?:of\s+)?(?:RAM|memory)\b[^,;()]*",
    re.I,
)


def reader_text(text: str | None) -> str:
    """A sentence from a results file as a reader should meet it: without notes about the machine that ran
    the benchmark (cores, time or memory budgets), about repository files (``see benchmarks/README.md``) or
    internal documents cited by number (``WP26 section 6``, ``ADR-0006 decision 7``), and with numbers in
    scientific notation written out (``1e-4`` -> ``0.0001``); the results file keeps the full text.

    >>> reader_text("11 blocks, fewer than the minimum cell of 30 (WP26 section 6)")
    '11 blocks, fewer than the minimum cell of 30'
    >>> reader_text("too slow on 2 cores (measured on 20 series, one core) (see benchmarks/README.md)")
    'too slow (measured on 20 series)'
    >>> reader_text("fits the weight in [1e-4, 1]")
    'fits the weight in [0.0001, 1]'
    """
    if not text:
        return ""
    out = _MACHINE_NOTE.sub("", text)
    out = _FILE_NOTE.sub("", out)
    out = _CITATION.sub("", _CITATION_BEFORE.sub("", out))
    out = re.sub(r"\(\s*[,;]?\s*\)", "", out)  # parentheses left empty
    out = re.sub(r"\(\s*[,;]\s*", "(", out)
    out = re.sub(r"\s*[,;]\s*\)", ")", out)
    out = re.sub(r"\s+([,;.:)])", r"\1", out)
    out = re.sub(r"[,;:]\s*$", "", out.strip())
    out = _SCIENTIFIC.sub(lambda m: _positional(m.group(0)), out)
    return re.sub(r"\s{2,}", " ", out)


def reason_line(reason: str | None, traceback: str | None = None) -> str:
    """Why a model did not run, in one line: the recorded reason, or the exception's last line when only a
    traceback was recorded (or the reason holds one); the exception's module path dropped
    (``tycheon.forecasters.base.ForecasterError: ...`` -> ``ForecasterError: ...``). The traceback itself
    stays in the results file.
    """
    text = (reason or "").strip() or (traceback or "").strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    line = lines[-1] if _TRACEBACK_HINT.search(text) else lines[0]
    return _EXCEPTION_PATH.sub("", line)
