"""The chapter's lab within reach and its answer-free worksheet (issue 29), on the site only.

The chapter's lab starts many screens down (section ``f11-try``), and printing the chapter printed
every self-check answer under its question.  On the page that holds both the lab section and the
self-checks (``f11-selfcheck``), this puts

* under the title, a short bar: a link to the chapter's lab, one to the projector page, and
  the worksheet button;
* at the head of the self-checks, the worksheet button again.

The button (``data-f11-worksheet``) starts ``hidden``: ``book/_static/f11-print.js`` shows it and
prints the worksheet (``html.f11-worksheet``: the answers left out, room to write instead, the lab
in its predict mode; ``book/_static/f11-site.css``), so a page without scripts never shows a button
that does nothing.  Jupyter never sees any of this: it is added to the doctree after the notebook
ran (``doctree-resolved``), and the words come from ``strings_zh.json``'s ``handout`` group.
"""

from __future__ import annotations

import html

from docutils import nodes

LAB_SECTION = "f11-try"
SELFCHECK_SECTION = "f11-selfcheck"


def _strings() -> dict:
    from attention_lab.strings import strings

    return strings()["handout"]


def worksheet_button(t: dict) -> str:
    return (f'<button type="button" class="f11-worksheet-button" data-f11-worksheet hidden '
            f'title="{html.escape(t["worksheet_note"])}">{html.escape(t["worksheet"])}</button>')


def add_handout(app, doctree, docname) -> None:
    """The bar under the chapter's title and the button over its self-checks (``doctree-resolved``)."""
    if app.builder.format != "html":
        return
    sections = {i: s for s in doctree.findall(nodes.section) for i in s["ids"]}
    if LAB_SECTION not in sections or SELFCHECK_SECTION not in sections:
        return
    t = _strings()
    top = next(doctree.findall(nodes.section))
    bar = (f'<nav class="f11-handout" aria-label="{html.escape(t["bar_label"])}">'
           f'<a class="f11-to-lab" href="#{LAB_SECTION}">{html.escape(t["to_lab"])}</a>'
           f'<a class="f11-lab-page" href="lab.html">{html.escape(t["lab_page"])}</a>'
           f'{worksheet_button(t)}'
           # Its room is kept until f11-print.js shows it (f11-site.css); without JavaScript, none.
           '<noscript><style>.f11-worksheet-button[hidden]{display:none!important}</style></noscript></nav>')
    title = top.next_node(nodes.title)
    top.insert(top.index(title) + 1, nodes.raw("", bar, format="html"))
    check = sections[SELFCHECK_SECTION]
    title = check.next_node(nodes.title)
    check.insert(check.index(title) + 1, nodes.raw(
        "", f'<p class="f11-handout f11-handout-check">{worksheet_button(t)}'
            f'<span class="f11-worksheet-note" hidden>{html.escape(t["worksheet_note"])}</span></p>', format="html"))


def setup(app):
    app.connect("doctree-resolved", add_handout)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
