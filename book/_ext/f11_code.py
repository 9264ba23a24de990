"""Code listings with fewer elements: names and punctuation as plain text (issue 29).

Pygments wraps every token of a listing in a <span>; in the chapter 979 of its 1,769 code spans
are plain names (``.n``) and punctuation (``.p``), which the theme's Pygments colours give exactly
the colour of the listing itself (``.highlight``: #080808 light, #F8F8F2 dark).  Sphinx lets a
project choose its HTML formatter (``PygmentsBridge.html_formatter``, "set these attributes if you
want to have different Pygments formatters"); this one writes those two token types without a span,
and f11-site.css gives a highlighted listing's <pre> the listing's colour (the theme gives <pre> the
text colour), so every character keeps its colour and a phone lays out about 1,000 elements fewer.
Names with a kind of their own (built-ins, functions, classes: ``.nb``, ``.nf``, ``.nc``) keep theirs.
"""

from __future__ import annotations

from pygments.formatters import HtmlFormatter
from pygments.token import Name, Punctuation
from sphinx.highlighting import PygmentsBridge

class PlainNamesFormatter(HtmlFormatter):
    """HtmlFormatter, but Name and Punctuation themselves (not their subtypes) get no class, so no span."""

    def _get_css_classes(self, ttype):
        if ttype is Name or ttype is Punctuation:
            return ""
        return super()._get_css_classes(ttype)


def setup(app):
    PygmentsBridge.html_formatter = PlainNamesFormatter
    return {"parallel_read_safe": True, "parallel_write_safe": True}
