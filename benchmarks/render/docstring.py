r"""A numpydoc/reST docstring as readable HTML, offline and without a script.

The methodology page quotes the library's docstrings. Shown raw they read as markup (``.. math::``,
``:func:`x```, "References" over a row of dashes); this module turns them into paragraphs, lists,
formulas as MathML (converted here, at render time, by ``latex2mathml``; browsers draw MathML natively, so
the site loads no math script) and a reference list whose DOIs and URLs are links. A formula the converter
cannot read falls back to plain Unicode (:func:`plain_math`: ``\frac{a}{b}`` -> ``(a)/(b)``, ``\hat y`` ->
``ŷ``). Everything is escaped before any markup is added, so a docstring can never inject HTML. It reads
text only: nothing is imported or evaluated.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from dataclasses import dataclass

from latex2mathml import exceptions as _tex_errors
from latex2mathml.converter import convert as _to_mathml
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


# What latex2mathml does not read as the docstrings mean it: operator names it would print as a raw
# command, and a sized brace (``\Big\{``) whose delimiter it would leave escaped.
_TEX_REWRITES = (
    (re.compile(r"\\arg\s*\\min"), r"\\operatorname{argmin}"),
    (re.compile(r"\\arg\s*\\max"), r"\\operatorname{argmax}"),
    (re.compile(r"\\argmin(?![A-Za-z])"), r"\\operatorname{argmin}"),
    (re.compile(r"\\argmax(?![A-Za-z])"), r"\\operatorname{argmax}"),
    (re.compile(r"\\arg(?![A-Za-z])"), r"\\operatorname{arg}"),
    (re.compile(r"\\clip(?![A-Za-z])"), r"\\operatorname{clip}"),
)
_BRACE_FIXES = {">\\{<": ">{<", ">\\}<": ">}<", ">\\lbrace<": ">{<", ">\\rbrace<": ">}<"}
_TEX_ERRORS = tuple(e for e in vars(_tex_errors).values() if isinstance(e, type) and issubclass(e, Exception)) + (
    IndexError,
    KeyError,
    ValueError,
    AttributeError,
)
_TEXT_NODE = re.compile(r">([^<]*)<")


def mathml(tex: str, *, display: bool = False) -> Markup:
    """LaTeX as a MathML ``<math>`` element (``display="block"`` for a displayed formula).

    Falls back to :func:`plain_math` in a ``<code>`` (inline) or ``<pre>`` (display) when the converter
    fails or would leave a LaTeX command in the text, so a reader never sees raw LaTeX.
    """
    source = tex.strip()
    for pattern, replacement in _TEX_REWRITES:
        source = pattern.sub(replacement, source)
    try:
        out = _to_mathml(source, display="block" if display else "inline")
    except _TEX_ERRORS:
        out = None
    if out is not None:
        for raw, fixed in _BRACE_FIXES.items():
            out = out.replace(raw, fixed)
        if not any(re.search(r"\\[A-Za-z]", text) for text in _TEXT_NODE.findall(out)):
            return Markup(out)
    tag = "pre" if display else "code"
    return Markup(f'<{tag} class="tyc-math">{html.escape(plain_math(tex))}</{tag}>')


_ROLE = re.compile(r":(?:func|class|meth|attr|mod|data|obj|exc|py:\w+):`~?([^`]+)`")
_MATH_ROLE = re.compile(r":math:`([^`]+)`")
_LINK = re.compile(
    r"(https?://[^\s<>)\]]+[^\s<>)\].,;:])|\bdoi:\s*(10\.\d{4,9}/[^\s<>)\]]+[^\s<>)\].,;:])"
    r"|\b(10\.\d{4,9}/[^\s<>)\]]+[^\s<>)\].,;:])"
)


Links = Mapping[str, "str | tuple[str, str]"]


def inline(text: str, links: Links | None = None) -> Markup:
    """One paragraph's inline markup (roles, literals, math, links) as escaped HTML.

    ``links`` maps phrases of the running text (e.g. ``"ADR-0006"``) to the address they link to, or to
    (address, the words the link shows instead of the phrase).
    """
    pieces: list[str] = []
    pos = 0
    pattern = re.compile(_MATH_ROLE.pattern + "|" + _ROLE.pattern + r"|``([^`]+)``|`([^`]+)`|\*\*([^*]+)\*\*")
    for m in pattern.finditer(text):
        pieces.append(_links(text[pos : m.start()], links))
        if m.group(1) is not None:
            pieces.append(str(mathml(m.group(1))))
        elif m.group(5) is not None:
            pieces.append(f"<strong>{html.escape(m.group(5))}</strong>")
        else:
            target = m.group(2) or m.group(3) or m.group(4)
            if m.group(2) is not None:
                target = target.split(".")[-1] if m.group(0).split("`")[1].startswith("~") else target
            pieces.append(f"<code>{html.escape(target)}</code>")
        pos = m.end()
    pieces.append(_links(text[pos:], links))
    return Markup("".join(pieces))


def _links(text: str, links: Links | None = None) -> str:
    out, pos = [], 0
    for m in _LINK.finditer(text):
        out.append(_phrases(text[pos : m.start()], links))
        url = m.group(1) or f"https://doi.org/{m.group(2) or m.group(3)}"
        out.append(f'<a href="{html.escape(url)}">{html.escape(m.group(0))}</a>')
        pos = m.end()
    out.append(_phrases(text[pos:], links))
    return "".join(out)


def _phrases(text: str, links: Links | None) -> str:
    """``text`` escaped, each phrase of ``links`` in it a link to its address (longest phrase first), showing
    the phrase or the words given for it; a section or decision number right after reworded link text is
    set off by a comma ("ADR-0006 decision 6" -> "the walk-forward record, decision 6")."""
    if not links:
        return html.escape(text)
    pattern = re.compile(r"\b(" + "|".join(re.escape(p) for p in sorted(links, key=len, reverse=True)) + r")\b")
    out, pos = [], 0
    for m in pattern.finditer(text):
        out.append(html.escape(text[pos : m.start()]))
        target = links[m.group(1)]
        href, shown = (target, m.group(1)) if isinstance(target, str) else target
        out.append(f'<a class="tyc-cite" href="{html.escape(href)}">{html.escape(shown)}</a>')
        if shown != m.group(1) and re.match(r"\s+(?:sections?|decisions?)\s+\d", text[m.end() :]):
            out.append(",")
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


def blocks(doc: str, links: Links | None = None) -> list[Block]:
    """The docstring's prose, formulas and references as blocks; argument sections are left out (the
    signature is shown beside it). ``links`` maps phrases of the prose to addresses (:func:`inline`)."""
    lines = doc.splitlines()
    out: list[Block] = []
    section = None
    para: list[str] = []
    items: list[str] = []
    fresh = True

    def flush() -> None:
        if para:
            out.append(Block("p", inline(" ".join(s.strip() for s in para), links)))
            para.clear()
        if items:
            lis = "".join(f"<li>{inline(i, links)}</li>" for i in items)
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
            i, formulas = _math_directive(lines, i)
            for formula in formulas:
                shown = mathml(formula, display=True)
                out.append(Block("math", Markup(f'<div class="tyc-math tyc-math-block">{shown}</div>')))
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


def _math_directive(lines: list[str], i: int) -> tuple[int, list[str]]:
    """The formulas of the ``.. math::`` directive on line ``i`` (one per blank-line-separated group of
    its indented body, as reST reads them) and the index of the first line after it."""
    line = lines[i]
    indent = len(line) - len(line.lstrip())
    groups: list[list[str]] = [[line.strip()[len(".. math::") :].strip()]]
    i += 1
    while i < len(lines):
        if not lines[i].strip():
            nxt = next((j for j in range(i, len(lines)) if lines[j].strip()), None)
            if nxt is None or len(lines[nxt]) - len(lines[nxt].lstrip()) <= indent:
                break
            groups.append([])
            i = nxt
            continue
        if len(lines[i]) - len(lines[i].lstrip()) <= indent:
            break
        if not lines[i].strip().startswith(":"):  # directive options such as :label:
            groups[-1].append(lines[i].strip())
        i += 1
    return i, [" ".join(p for p in g if p) for g in groups if any(g)]
