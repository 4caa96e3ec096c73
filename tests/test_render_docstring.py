"""Docstrings as readable HTML: formulas as MathML (plain Unicode as the fallback), roles as code, references as
links, no injection."""

from __future__ import annotations

from benchmarks.render.definitions import registry_glossary
from benchmarks.render.docstring import blocks, inline, plain_math
from benchmarks.render.load import ROOT


def test_plain_math_unfolds_fractions_roots_sums_and_accents():
    adi = plain_math(r"\mathrm{ADI} = \frac{1}{k}\sum_{j=1}^{k} (t_j - t_{j-1})")
    assert adi == "ADI = 1/k Σ_(j=1)^k (t_j - t_(j-1))"
    assert plain_math(r"\sqrt{\frac{1}{n}\sum_{i=1}^{n} (\hat y_i - y_i)^2}") == "√(1/n Σ_(i=1)ⁿ (y\u0302_i - y_i)²)"
    assert plain_math(r"\frac{a + b}{c}") == "(a + b)/c"
    assert plain_math(r"x \le y \cdot \alpha") == "x ≤ y · α"


def test_roles_and_literals_become_code_and_markup_is_escaped():
    html = str(inline("see :func:`tycheon.stats.dm_test`, :class:`~tycheon.errors.InputError` and ``x<y>``"))
    assert "<code>tycheon.stats.dm_test</code>" in html
    assert "<code>InputError</code>" in html
    assert "<code>x&lt;y&gt;</code>" in html
    assert "<script>" not in str(inline("<script>alert(1)</script>"))


def test_sections_math_blocks_and_references():
    doc = """Summary line.

Longer text with :math:`\\hat y`.

.. math:: e = \\hat y - y

Parameters
----------
x : int
    Hidden: the signature is shown instead.

References
----------
Diebold, F. X. and Mariano, R. S. (1995). Comparing predictive accuracy.
doi:10.1080/07350015.1995.10524599

Second, A. (2001). Another. https://example.org/paper
"""
    out = blocks(doc)
    kinds = [b.kind for b in out]
    assert kinds == ["p", "p", "math", "heading", "list"]
    assert '<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">' in str(out[2].html)
    assert "<mo>&#x0005E;</mo>" in str(out[1].html) or "<mover>" in str(out[1].html)  # the hat of :math:`\hat y`
    refs = str(out[-1].html)
    assert refs.count("<li>") == 2
    assert 'href="https://doi.org/10.1080/07350015.1995.10524599"' in refs
    assert 'href="https://example.org/paper"' in refs
    assert "Hidden" not in "".join(str(b.html) for b in out)


def test_registry_fallback_reads_the_literal_specs_of_the_metric_registry():
    found = {g["name"]: g for g in registry_glossary(ROOT)}
    assert {"mae", "rmse", "mase", "rmsse", "crps"} <= set(found)
    assert found["mase"]["display_name"] == "MASE" and found["mase"]["lower_is_better"] is True
    assert "seasonal-naive" in found["mase"]["definition"]
    assert found["bias"]["ranked"] is False
