"""Formulas rendered to MathML when the book is built: no MathJax on the reader's side.

MathJax costs every page 1.2 MB of script (plus its fonts) and typesets only after
the page's other scripts ran.  Browsers draw MathML Core themselves (Chromium,
Firefox, Safari), so the formulas are converted once, here, with latex2mathml and
written into the HTML; the site's own small maths font (``_static/f11-math.woff``,
made by ``scripts/make_math_font.py``) gives them stretchy brackets and radicals.

Select it with ``html_math_renderer: f11_mathml`` in ``_config.yml``.
A formula latex2mathml cannot read is a build warning (so ``-W`` fails the build)
naming the page and the TeX, never a silently broken formula.
"""

from __future__ import annotations

import html
import re

from docutils import nodes
from sphinx.locale import _
from sphinx.util import logging
from sphinx.util.math import get_node_equation_number

logger = logging.getLogger(__name__)

#: latex2mathml writes TeX's named spaces, which MathML Core does not know.
NAMED_SPACES = {
    "negativeveryverythinmathspace": "-0.0556em",
    "negativeverythinmathspace": "-0.1111em",
    "negativethinmathspace": "-0.1667em",
    "negativemediummathspace": "-0.2222em",
    "negativethickmathspace": "-0.2778em",
    "veryverythinmathspace": "0.0556em",
    "verythinmathspace": "0.1111em",
    "thinmathspace": "0.1667em",
    "mediummathspace": "0.2222em",
    "thickmathspace": "0.2778em",
}
_SPACE = re.compile(r'width="(' + "|".join(NAMED_SPACES) + r')"')
# \mathrm{softmax} comes out as one <mi mathvariant="normal"> per letter; a reader
# (and a screen reader) should meet one word.
_UPRIGHT_RUN = re.compile(r'(?:<mi mathvariant="normal">[^<]</mi>){2,}')
_REF = re.compile(r"&#x([0-9A-Fa-f]+);")
_UPRIGHT_LETTER = re.compile(r'<mi mathvariant="normal">([^<])</mi>')


def to_mathml(latex: str, display: bool) -> str:
    """``latex`` as a ``<math>`` element (block when ``display``), with the TeX as alttext."""
    from latex2mathml.converter import convert

    markup = convert(latex.strip(), display="block" if display else "inline")
    markup = _SPACE.sub(lambda m: f'width="{NAMED_SPACES[m.group(1)]}"', markup)
    markup = _UPRIGHT_RUN.sub(lambda m: "<mi>" + "".join(_UPRIGHT_LETTER.findall(m.group(0))) + "</mi>",
                              markup)
    # latex2mathml writes every operator as a character reference (&#x0003D;): write the
    # character itself (about a third fewer bytes), except the three HTML needs escaped.
    markup = _REF.sub(lambda m: m.group(0) if int(m.group(1), 16) in (0x26, 0x3C, 0x3E)
                      else chr(int(m.group(1), 16)), markup)
    markup = _unwrap_top_mrow(_LONE_TOKEN.sub(r"<\1\2>\3</\1>", markup))
    alt = html.escape(" ".join(latex.split()), quote=True)
    return markup.replace("<math ", f'<math alttext="{alt}" ', 1)


_MROW_TAG = re.compile(r"<(/?)mrow\b[^>]*>")
#: An mrow around a single token (<mi>, <mn>, <mtext>; not <mo>, whose form and spacing depend on its
#: place in its row) draws as the token alone, in every argument position (it is one argument either way).
_LONE_TOKEN = re.compile(r"<mrow><(mi|mn|mtext)\b([^>]*)>([^<]*)</\1></mrow>")


def _unwrap_top_mrow(markup: str) -> str:
    """``<math …><mrow>…</mrow></math>`` as ``<math …>…</math>``: latex2mathml wraps every formula
    in one mrow, which <math> already is (MathML Core: its children form an inferred mrow), so the
    same drawing with one element fewer per formula (issue 29: the chapter's 8,100 elements were
    2,758 of MathML, 619 of them mrows, 557 of those directly under <math>)."""
    head = markup.find(">") + 1
    body, tail = markup[head:], "</math>"
    if not (body.startswith("<mrow>") and body.endswith("</mrow>" + tail)):
        return markup
    depth = 0
    for m in _MROW_TAG.finditer(body):
        depth += -1 if m.group(1) else 1
        if depth == 0:  # the first mrow closes here: only unwrap when that is the end
            if m.end() != len(body) - len(tail):
                return markup
            break
    return markup[:head] + body[len("<mrow>"):-len("</mrow>" + tail)] + tail


def _convert(self, node, latex: str, display: bool) -> str:
    try:
        return to_mathml(latex, display)
    except Exception as error:  # latex2mathml raises many kinds; say which formula failed
        logger.warning("cannot convert formula to MathML (%s): %s", error, latex, location=node)
        return f'<code class="f11-math-error">{html.escape(latex)}</code>'


def visit_math(self, node):
    self.body.append('<span class="math notranslate nohighlight">'
                     + _convert(self, node, node.astext(), display=False) + "</span>")
    raise nodes.SkipNode


def visit_displaymath(self, node):
    latex = node.astext()
    parts = [latex] if node.get("nowrap") else [p for p in latex.split("\n\n") if p.strip()]
    self.body.append(self.starttag(node, "div", CLASS="math notranslate nohighlight f11-display-math"))
    if node.get("number"):  # a labelled equation: its number and link, as Sphinx's own renderers
        self.body.append('<span class="eqno">(%s)' % get_node_equation_number(self, node))
        self.add_permalink_ref(node, _("Link to this equation"))  # locale/zh_CN sphinx.po
        self.body.append("</span>")
    for part in parts:
        self.body.append(_convert(self, node, part, display=True))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def add_math_css(app, pagename, templatename, context, doctree):
    """Only pages with a formula load the maths font's stylesheet (as Sphinx does for MathJax)."""
    if app.builder.format == "html" and app.env.get_domain("math").has_equations(pagename):
        app.add_css_file("f11-math.css")


def setup(app):
    app.connect("html-page-context", add_math_css)
    app.add_html_math_renderer("f11_mathml", (visit_math, None), (visit_displaymath, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
