r"""A numpydoc/reST docstring as readable HTML, offline and without a math renderer.

The methodology page quotes the library's docstrings. Shown raw they read as markup (``.. math::``,
``:func:`x```, "References" over a row of dashes); this module turns them into paragraphs, lists,
formulas in plain Unicode monospace (``\frac{a}{b}`` -> ``(a)/(b)``, ``\hat y`` -> ``ŷ``, ``\sum`` -> ``Σ``)
and a reference list whose DOIs and URLs are links. Everything is escaped before any markup is added, so
a docstring can never inject HTML. It reads text only: nothing is imported or evaluated.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from markupsafe import Markup

_SYMBOLS = {
    r"\cdot": "·",
    r"\times": "×",
    r"\le": "≤",
    r"\leq": "≤",
    r"\ge": "≥",
    r"\geq": "≥",
    r"\ne": "≠",
    r"\neq": "≠",
    r"\infty": "∞",
    r"\alpha": "α",
    r"\beta": "β",
    r"\gamma": "γ",
    r"\delta": "δ",
    r"\Delta": "Δ",
    r"\sigma": "σ",
    r"\mu": "μ",
    r"\tau": "τ",
    r"\rho": "ρ",
    r"\lambda": "λ",
    r"\epsilon": "ε",
    r"\varepsilon": "ε",
    r"\omega": "ω",
    r"\theta": "θ",
    r"\phi": "φ",
    r"\Phi": "Φ",
    r"\pi": "π",
    r"\chi": "χ",
    r"\nu": "ν",
    r"\eta": "η",
    r"\sum": "Σ",
    r"\prod": "Π",
    r"\int": "∫",
    r"\sqrt": "√",
    r"\pm": "±",
    r"\approx": "≈",
    r"\to": "→",
    r"\in": "∈",
    r"\dots": "…",
    r"\ldots": "…",
    r"\cdots": "⋯",
    r"\lceil": "⌈",
    r"\rceil": "⌉",
    r"\lfloor": "⌊",
    r"\rfloor": "⌋",
    r"\mid": "|",
    r"\{": "{",
    r"\}": "}",
    r"\quad": "  ",
    r"\qquad": "   ",
    r"\,": " ",
    r"\;": " ",
    r"\!": "",
    r"\left": "",
    r"\right": "",
    r"\log": "log",
    r"\exp": "exp",
    r"\min": "min",
    r"\max": "max",
    r"\mathbb 1": "1",
    r"\mathbb{1}": "1",
    r"\lvert": "|",
    r"\rvert": "|",
    r"\|": "‖",
}
_ACCENTS = {"hat": "\u0302", "bar": "\u0304", "tilde": "\u0303", "overline": "\u0304"}
_SUPERSCRIPT = str.maketrans("0123456789+-n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻ⁿ")


def _sup(m: re.Match[str]) -> str:
    inner = m.group(1)
    return inner.translate(_SUPERSCRIPT) if re.fullmatch(r"[0-9+\-n]+", inner) else "^" + _wrap(inner)


def _wrap(term: str) -> str:
    """``term`` as it can stand beside an operator: bare when one token, else in parentheses."""
    term = term.strip()
    return term if re.fullmatch(r"[\w.]+", term) else f"({term})"


def plain_math(tex: str) -> str:
    """LaTeX as readable plain text: fractions, roots, accents and symbols spelled in Unicode."""
    text = tex.strip()
    for name in ("mathrm", "operatorname", "text", "mathit", "mathbf", "textrm", "mathsf"):
        text = re.sub(rf"\\{name}\s*\{{([^{{}}]*)\}}", r"\1", text)
    for name, mark in _ACCENTS.items():
        text = re.sub(rf"\\{name}\s*\{{([^{{}}]*)\}}", lambda m, mark=mark: m.group(1) + mark, text)
        text = re.sub(rf"\\{name}\s+(\\?[A-Za-z])", lambda m, mark=mark: m.group(1) + mark, text)
    for _ in range(5):  # innermost first, so nested fractions and roots unfold
        text = re.sub(
            r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}", lambda m: f"{_wrap(m.group(1))}/{_wrap(m.group(2))} ", text
        )
        text = re.sub(r"\\[dt]?frac\s*(\w)\s*(\w)", r"\1/\2", text)
        text = re.sub(r"\^\{([^{}]*)\}", _sup, text)
        text = re.sub(r"_\{([^{}]*)\}", lambda m: "_" + _wrap(m.group(1)), text)
        text = re.sub(r"\\sqrt\s*\{([^{}]*)\}", r"√(\1)", text)
    for key in sorted(_SYMBOLS, key=len, reverse=True):
        pattern = re.escape(key) + (r"(?![A-Za-z])" if key[-1].isalpha() else "")
        text = re.sub(pattern, lambda _m, k=key: _SYMBOLS[k], text)
    text = re.sub(r"\^([0-9n])", lambda m: m.group(1).translate(_SUPERSCRIPT), text)
    return re.sub(r"[ \t]+", " ", text).strip()


_ROLE = re.compile(r":(?:func|class|meth|attr|mod|data|obj|exc|py:\w+):`~?([^`]+)`")
_MATH_ROLE = re.compile(r":math:`([^`]+)`")
_LINK = re.compile(
    r"(https?://[^\s<>)\]]+[^\s<>)\].,;:])|\bdoi:\s*(10\.\d{4,9}/[^\s<>)\]]+[^\s<>)\].,;:])"
    r"|\b(10\.\d{4,9}/[^\s<>)\]]+[^\s<>)\].,;:])"
)


def inline(text: str) -> Markup:
    """One paragraph's inline markup (roles, literals, math, links) as escaped HTML."""
    pieces: list[str] = []
    pos = 0
    pattern = re.compile(_MATH_ROLE.pattern + "|" + _ROLE.pattern + r"|``([^`]+)``|`([^`]+)`|\*\*([^*]+)\*\*")
    for m in pattern.finditer(text):
        pieces.append(_links(text[pos : m.start()]))
        if m.group(1) is not None:
            pieces.append(f'<code class="tyc-math">{html.escape(plain_math(m.group(1)))}</code>')
        elif m.group(5) is not None:
            pieces.append(f"<strong>{html.escape(m.group(5))}</strong>")
        else:
            target = m.group(2) or m.group(3) or m.group(4)
            if m.group(2) is not None:
                target = target.split(".")[-1] if m.group(0).split("`")[1].startswith("~") else target
            pieces.append(f"<code>{html.escape(target)}</code>")
        pos = m.end()
    pieces.append(_links(text[pos:]))
    return Markup("".join(pieces))


def _links(text: str) -> str:
    out, pos = [], 0
    for m in _LINK.finditer(text):
        out.append(html.escape(text[pos : m.start()]))
        url = m.group(1) or f"https://doi.org/{m.group(2) or m.group(3)}"
        out.append(f'<a href="{html.escape(url)}">{html.escape(m.group(0))}</a>')
        pos = m.end()
    out.append(html.escape(text[pos:]))
    return "".join(out)


@dataclass(frozen=True)
class Block:
    kind: str  # "p", "math", "list", "heading", "code"
    html: Markup


_HIDDEN = {
    "Parameters",
    "Returns",
    "Yields",
    "Raises",
    "Attributes",
    "Examples",
    "Warns",
    "Other Parameters",
    "See Also",
}
_SECTION = re.compile(r"^(" + "|".join(sorted(_HIDDEN | {"Notes", "References"})) + r")$")


def blocks(doc: str) -> list[Block]:
    """The docstring's prose, formulas and references as blocks; argument sections are left out (the
    signature is shown beside it)."""
    lines = doc.splitlines()
    out: list[Block] = []
    section = None
    para: list[str] = []
    items: list[str] = []
    fresh = True

    def flush() -> None:
        if para:
            out.append(Block("p", inline(" ".join(s.strip() for s in para))))
            para.clear()
        if items:
            lis = "".join(f"<li>{inline(i)}</li>" for i in items)
            out.append(Block("list", Markup(f"<ul>{lis}</ul>")))
            items.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if _SECTION.match(stripped) and i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}:
            flush()
            section, fresh = stripped, True
            if section not in _HIDDEN:
                out.append(Block("heading", Markup(html.escape(section))))
            i += 2
            continue
        if section in _HIDDEN:
            i += 1
            continue
        if stripped.startswith(".. math::"):
            flush()
            indent = len(line) - len(line.lstrip())
            formula = [stripped[len(".. math::") :].strip()]
            i += 1
            if not formula[0]:  # the formula is the indented block below the directive
                while i < len(lines) and not lines[i].strip():
                    i += 1
            while i < len(lines) and lines[i].strip() and len(lines[i]) - len(lines[i].lstrip()) > indent:
                if not lines[i].strip().startswith(":"):  # directive options such as :label:
                    formula.append(lines[i].strip())
                i += 1
            text = plain_math(" ".join(f for f in formula if f))
            out.append(Block("math", Markup(f'<pre class="tyc-math">{html.escape(text)}</pre>')))
            continue
        if section == "References":  # one item per paragraph, blank lines between items
            if not stripped:
                fresh = True
            elif fresh or not items:
                items.append(re.sub(r"^(- |\* |\.\. )", "", stripped))
                fresh = False
            else:
                items[-1] += " " + stripped
            i += 1
            continue
        if not stripped:
            flush()
        elif stripped.startswith(("- ", "* ")):
            if para:
                flush()
            items.append(stripped[2:])
        elif items and line.startswith((" ", "\t")):
            items[-1] += " " + stripped
        else:
            para.append(line)
        i += 1
    flush()
    return out
