"""The formulas' MathML (book/_ext/f11_math.py) is latex2mathml's, less the rows that draw nothing.

latex2mathml wraps every formula in one <mrow> (which <math> already is) and puts an <mrow> around
single tokens; f11_math takes those away (issue 29: 557 of the chapter's 8,100 elements).  What must
stay: every other element, attribute and character in the same order (so the drawing is the same;
checked once by eye and by pixels on all 557 formulas: identical screenshots), and the rows that do
group several children (``{a}{b}``, the arguments of \\frac, a fence's contents)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))
import f11_math  # noqa: E402

#: Formulas of the kinds the chapter writes (subscripts, \mathrm words, fractions, roots, fences,
#: matrices, sets, transposes, arrows, text), and a few that must keep their rows.
FORMULAS = [
    r"x_0", r"q_1 \cdot k_0", r"O = \mathrm{softmax}\left(\frac{QK^\top}{\sqrt{d_k}}\right)V",
    r"S_{ij} = \frac{q_i \cdot k_j}{\sqrt{d_k}}", r"A = \mathrm{softmax}(S)", r"\{a\}", r"{a}{b}",
    r"\begin{bmatrix} 1 & 0 \\ 0 & 1 \end{bmatrix}", r"(N, L, h \cdot d_k) \to (N, h, L, d_k)",
    r"\sum_j A_{ij} = 1", r"e^{s - \max_j s_j}", r"\text{分数}", r"-\infty", r"\mathbb{R}^{n \times d}",
]

TAG = re.compile(r"</?mrow>")


def raw(latex: str, display: bool) -> str:
    """What to_mathml wrote before the mrows were taken away (its other steps, the same code path)."""
    saved = f11_math._unwrap_top_mrow, f11_math._LONE_TOKEN
    try:
        f11_math._unwrap_top_mrow = lambda m: m
        f11_math._LONE_TOKEN = re.compile(r"(?!)(a)(b)(c)")  # matches nothing (three groups, as the real one)
        return f11_math.to_mathml(latex, display)
    finally:
        f11_math._unwrap_top_mrow, f11_math._LONE_TOKEN = saved


@pytest.mark.parametrize("latex", FORMULAS)
@pytest.mark.parametrize("display", [False, True])
def test_formulas_lose_only_rows_that_group_nothing(latex, display):
    before, after = raw(latex, display), f11_math.to_mathml(latex, display)
    # Everything but the mrow tags is as latex2mathml wrote it, in order.
    assert TAG.sub("", after) == TAG.sub("", before), (before, after)
    # No row directly under <math> holding the whole formula, none around a lone token.
    body = after[after.index(">") + 1:-len("</math>")]
    assert not re.search(r"<mrow><(mi|mn|mtext)\b[^>]*>[^<]*</\1></mrow>", after), after
    if body.startswith("<mrow>") and body.endswith("</mrow>"):
        # only when that first row closes before the end (two groups side by side)
        depth, first_end = 0, None
        for m in re.finditer(r"<(/?)mrow>", body):
            depth += -1 if m.group(1) else 1
            if depth == 0:
                first_end = m.end()
                break
        assert first_end != len(body), after
    assert after.count("<mrow>") == after.count("</mrow>")


def test_rows_that_group_several_children_stay():
    # {a}{b}: two groups side by side; \frac's arguments; a fence's contents.
    assert f11_math.to_mathml(r"{a b}{c d}", False).count("<mrow>") == 2
    frac = f11_math.to_mathml(r"\frac{a+b}{c}", False)
    assert "<mfrac><mrow><mi>a</mi><mo>+</mo><mi>b</mi></mrow><mi>c</mi></mfrac>" in frac, frac
    fence = f11_math.to_mathml(r"\left(a+b\right)", False)
    assert re.search(r"<mrow><mo[^>]*>\(</mo>.*<mo[^>]*>\)</mo></mrow>", fence), fence


def test_the_chapter_has_fewer_math_elements():
    # The count this protects: one element fewer for every formula (its outer row).
    latex = r"O = \mathrm{softmax}\left(\frac{QK^\top}{\sqrt{d_k}}\right)V"
    assert raw(latex, True).count("<mrow>") - f11_math.to_mathml(latex, True).count("<mrow>") >= 2
