"""Citations written so that JupyterLab shows them too: ``[[VSP+17]](#f11-references)``.

jupyterlab-myst reads no ``.bib`` file, so a ``{cite}`key``` role shows "Citation Not Found" in
Jupyter and Binder.  The pages therefore write each citation as a Markdown link whose text
is the citation's label, as the site prints it, pointing to the chapter's "参考资料" section
(where the same label stands next to each work's title; other pages write
``[[PyTorch25d]](f11-attention.md#f11-references)``): JupyterLab shows the label and goes there.

On the site, this turns every such link into the citation sphinxcontrib-bibtex's ``{cite}``
role would have made (the same ``pending_xref``, noted in the bibtex domain), so the page
looks as before: the label links to its entry in the ``{bibliography}``, with the entry as
its tooltip.  The label of each entry is computed from ``bibtex_bibfiles`` with the
configured pybtex style; a link text that is no entry's label is a warning (an error under
``-W``), so the labels typed in the chapter cannot drift from the ones the site prints.
"""

from __future__ import annotations

import re
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: The section every citation link points to (its label in the chapter).
TARGET = "f11-references"
_LABEL = re.compile(r"^\[([^\[\]]+)\]$")


def bib_labels(bibfiles: list[Path], style: str = "alpha") -> dict[str, str]:
    """label -> key for every entry of ``bibfiles``, as pybtex's ``style`` labels them (``VSP+17``)."""
    from pybtex.database import parse_file
    from pybtex.plugin import find_plugin

    entries = [entry for path in bibfiles for entry in parse_file(str(path)).entries.values()]
    labels = find_plugin("pybtex.style.formatting", style)().format_labels(entries)
    return {label: entry.key for label, entry in zip(labels, entries)}


def link_citations(app, doctree) -> None:
    """Each ``[[LABEL]](#f11-references)`` of the page becomes a ``{cite}`` of LABEL's entry."""
    from sphinxcontrib.bibtex.citation_target import CitationTarget
    from sphinxcontrib.bibtex.roles import CitationRef

    env = app.env
    labels = env.temp_data.get("f11_bib_labels")
    if labels is None:
        files = [Path(app.srcdir) / name for name in app.config.bibtex_bibfiles]
        labels = env.temp_data["f11_bib_labels"] = bib_labels(files, app.config.bibtex_default_style)
    domain = env.get_domain("cite")
    def is_citation_link(node) -> bool:
        # [[L]](#f11-references) on the chapter (myst-parser: a reference to "#f11-references", given
        # its refid by myst-parser's ResolveAnchorIds before doctree-read);
        # [[L]](f11-attention.md#f11-references) elsewhere (a pending_xref to that document's id).
        if isinstance(node, addnodes.pending_xref):
            return node.get("reftype") == "myst" and node.get("reftargetid") == TARGET
        return isinstance(node, nodes.reference) and (node.get("refuri") == "#" + TARGET
                                                      or node.get("refid") == TARGET)

    for ref in list(doctree.findall(is_citation_link)):
        m = _LABEL.match(ref.astext())
        if not m:
            continue
        key = labels.get(m.group(1))
        if key is None:
            logger.warning(f"[{m.group(1)}] is not the label of an entry in {', '.join(app.config.bibtex_bibfiles)} "
                           f"(labels: {', '.join(sorted(labels))})", location=ref)
            continue
        cite = addnodes.pending_xref(f"{{cite}}`{key}`", refdomain="cite", reftype="p", reftarget=key,
                                     refdoc=env.docname, refexplicit=False, refwarn=False)
        cite += nodes.inline(key, key, classes=["xref", "cite", "cite-p"])
        cite.source, cite.line = ref.source, ref.line
        doctree.note_explicit_target(cite, cite)  # an id, for the entry's back-references
        domain.citation_refs.append(CitationRef(citation_ref_id=cite["ids"][0], docname=env.docname,
                                                line=ref.line or 0, targets=[CitationTarget(key, "", "")]))
        ref.replace_self(cite)


def setup(app):
    # Before sphinxcontrib-bibtex reads the domain's citation references (env-updated).
    app.connect("doctree-read", link_citations)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
