"""Text from a config or a user's file, made safe for the place it is written to.

A model id, a display name, a series id or a file name can come from someone else (a pull request, a
user's CSV). Each sink reads text its own way, so each has its own escape, applied where the text is
written, never earlier (the results JSON keeps the text as it was given):

- a **terminal** (error messages, progress lines) runs escape sequences: ``ESC ] 52`` writes the
  clipboard, ``ESC [ 2 J`` clears the screen, bidirectional overrides reorder what a reader sees.
  :func:`for_terminal` shows every such character as a visible ``\\x1b``-style escape;
- a **spreadsheet** opening a CSV runs a cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a
  carriage return as a formula (``=HYPERLINK(...)``, "CSV injection", OWASP). :func:`csv_cell` prefixes
  such a text cell with a single quote, which spreadsheets show as text; numbers are left as numbers;
- **markdown** (a pull request's step summary, a comment) renders images, links, HTML and tables from
  text. :func:`markdown_text` backslash-escapes every markdown punctuation character, escapes ``<`` and
  ``>`` as HTML entities and puts the text on one line.
"""

from __future__ import annotations

import contextlib
import re
import sys
import unicodedata
from collections.abc import Iterator
from typing import Any, TextIO

__all__ = ["csv_cell", "for_terminal", "markdown_text", "terminal_safe_output"]

# Bidirectional embeddings, overrides and isolates (Trojan Source, CVE-2021-42574) and the line/paragraph
# separators: not control characters by category, but they change what a reader sees.
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029")


def _visible(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def for_terminal(text: object, *, keep_newlines: bool = True) -> str:
    """``text`` with every control character (C0, DEL, C1), bidirectional control and line separator
    written as a visible escape (``\\x1b``, ``\\u202e``), so printing it cannot move the cursor, clear the
    screen, set the clipboard (OSC 52) or reorder the line.

    Newlines and tabs are kept when ``keep_newlines`` (a multi-line message stays multi-line); a carriage
    return is always escaped (it would let a later part overwrite an earlier one).
    """
    keep = "\n\t" if keep_newlines else ""
    out = []
    for char in str(text):
        if char in keep:
            out.append(char)
        elif char in _BIDI or unicodedata.category(char) == "Cc":
            out.append(_visible(char))
        else:
            out.append(char)
    return "".join(out)


class _TerminalSafe:
    """A text stream that writes through :func:`for_terminal` (everything else is the wrapped stream's)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(for_terminal(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def terminal_safe_output() -> Iterator[None]:
    """While open, everything printed to ``sys.stdout`` and ``sys.stderr`` goes through :func:`for_terminal`.

    A command-line entry point wraps its whole run in it, so no message (an error naming a contributor's
    id, a progress line with a model's failure reason) can carry an escape sequence to the terminal,
    whichever function printed it. :func:`for_terminal` is idempotent, so a sink that escapes its own text
    as well does no harm.
    """
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _TerminalSafe(sys.stdout), _TerminalSafe(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A CSV cell that a spreadsheet shows and does not run: a text starting with ``= + - @``, a tab or a
    carriage return gets a leading ``'``; numbers, booleans and None pass unchanged."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


_MARKDOWN_PUNCT = re.compile(r"([\\`*_{}\[\]()#+\-.!|~])")


def markdown_text(text: object) -> str:
    """``text`` as literal inline markdown: on one line, control characters shown as escapes, every
    markdown punctuation character backslash-escaped and ``& < >`` as HTML entities, so no image, link,
    HTML tag, table cell or heading can come from it."""
    flat = " ".join(for_terminal(text, keep_newlines=False).split())
    flat = flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN_PUNCT.sub(r"\\\1", flat)
