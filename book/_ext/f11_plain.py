"""The downloaded notebooks' Markdown: plain Jupyter, with everything the site resolved written out.

The book's pages are MyST notebooks.  JupyterLab with jupyterlab-myst (Binder) reads them, but
Colab, VS Code and a plain Jupyter show MyST's roles and directives as raw text.  So the
``.ipynb`` files the site offers (``_notebooks/``, written by ``f11_site.write_ipynb``) have
their Markdown cells rewritten here, from what the build resolved, into CommonMark/GFM that any
Jupyter renders:

* ``{eval}`name``` -> the number the site shows: the value the executed notebook glued
  (``jupyter_execute/<doc>.glue.json``), in the format the name asks for
  (``attention_lab.notebook.shown_texts``);
* ``(label)=`` -> an HTML anchor ``<a id="label"></a>``; ``{ref}`label``` / ``{ref}`text <label>```
  -> a Markdown link (``#label`` on the same page, ``page.ipynb#label`` to another notebook,
  the site's page for a page that is not a notebook), with the section's title as its text;
* links to ``page.md`` -> ``page.ipynb`` (a notebook beside it) or the site's page;
* ``:::{admonition} 标题`` -> a blockquote with the title in bold; ``:::{dropdown} 标题`` -> an
  HTML ``<details>`` block with the title as its summary (folded, as on the site);
* ``{list-table}`` -> a Markdown table, after its label and caption as the site numbers it
  (``表 1 …``, from Sphinx's numfig); a figure cell's caption (``mystnb.figure.caption``) -> a
  Markdown cell after it (``图 1 …``);
* ``{bibliography}`` -> the reference list, each entry as the site prints it.

What is left is checked: :func:`leftover_myst` finds any MyST syntax still in a cell, and the
build warns (an error under ``-W``) instead of shipping it.  Code cells are not touched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: MyST syntax that plain Markdown would show as raw text (what :func:`leftover_myst` reports).
MYST_SYNTAX = {
    "role": re.compile(r"\{[a-z][a-z0-9-]*\}`"),
    "directive": re.compile(r"^\s*(?::{3,}|`{3,}|~{3,})\s*\{[a-z][a-z0-9-]*\}", re.M),
    "colon fence": re.compile(r"^\s*:{3,}\s*$", re.M),
    "label": re.compile(r"^\s*\([A-Za-z0-9_.:-]+\)=\s*$", re.M),
    "directive option": re.compile(r"^:[a-z-]+:(\s|$)", re.M),
    "MyST link": re.compile(r"\]\([^)\s]*\.md(#[^)]*)?\)"),
}


def leftover_myst(text: str) -> list[str]:
    """What MyST syntax ``text`` still holds: ``["role: {eval}`", ...]`` (empty when plain).

    Only outside code: fenced code blocks without a ``{directive}`` and inline code are skipped.

    >>> leftover_myst("a {eval}`x` b")
    ['role: {eval}`']
    >>> leftover_myst("```python\\n(x)=\\n```\\nand `{eval}` in code")
    []
    """
    prose = _without_code(text)
    found = []
    for kind, pattern in MYST_SYNTAX.items():
        found += [f"{kind}: {m.group(0).strip()}" for m in pattern.finditer(prose)]
    return found


def _without_code(text: str) -> str:
    out, fence = [], None
    for line in text.splitlines():
        m = re.match(r"\s*(`{3,}|~{3,})(.*)$", line)
        if fence is None and m and not m.group(2).strip().startswith("{"):
            fence = m.group(1)
            continue
        if fence is not None:
            if line.strip().startswith(fence) and not line.strip()[len(fence):].strip():
                fence = None
            continue
        out.append("".join("``" if m.group("code") else m.group(0) for m in _INLINE_TOKENS.finditer(line)))
    return "\n".join(out)


@dataclass
class Context:
    """What the build resolved for one page (see :func:`context_from_sphinx`)."""

    docname: str
    evals: dict[str, str] = field(default_factory=dict)  # {eval} name -> the text the site shows
    labels: dict[str, tuple[str, str]] = field(default_factory=dict)  # label -> (docname, title)
    notebooks: set[str] = field(default_factory=set)  # docnames shipped as .ipynb beside this one
    site: str = ""  # the site's root URL (for pages that are not notebooks), ending in /
    numbers: dict[str, str] = field(default_factory=dict)  # figure/table id -> "图 1", "表 1"
    bibliography: list[tuple[str, str]] = field(default_factory=list)  # (label, entry as the site prints it)


class PlainError(ValueError):
    """A MyST construct this converter cannot write as plain Markdown (a build warning)."""


# --- inline syntax ---------------------------------------------------------------------------

_ROLE = re.compile(r"\{([a-z][a-z0-9-]*)\}`([^`]*)`")


def _target(ctx: Context, docname: str, anchor: str = "") -> str:
    hash_ = f"#{anchor}" if anchor else ""
    if docname == ctx.docname:
        return hash_ or "#"
    if docname in ctx.notebooks:
        return docname.rsplit("/", 1)[-1] + ".ipynb" + hash_
    return f"{ctx.site}{docname}.html{hash_}"


def _inline(text: str, ctx: Context) -> str:
    def role(m):
        name, body = m.group(1), m.group(2)
        if name == "eval":
            if body not in ctx.evals:
                raise PlainError(f"{ctx.docname}: {{eval}}`{body}` has no value in the executed notebook")
            return ctx.evals[body]
        if name == "ref":
            shown = re.match(r"(.*?)\s*<([^<>]+)>$", body, re.S)
            title, label = (shown.group(1), shown.group(2)) if shown else (None, body)
            if label not in ctx.labels:
                raise PlainError(f"{ctx.docname}: {{ref}}`{body}`: no such label")
            docname, section = ctx.labels[label]
            return f"[{title or section}]({_target(ctx, docname, label)})"
        raise PlainError(f"{ctx.docname}: the role {{{name}}} has no plain-Markdown form here")

    def md_link(m):
        page, anchor = m.group(1), (m.group(2) or "")[1:]
        base = ctx.docname.rsplit("/", 1)[0] + "/" if "/" in ctx.docname else ""
        return f"]({_target(ctx, base + page, anchor)})"

    # Read left to right: a role, or an inline code span (left as it is: a role's name in
    # backticks is text), or anything else.
    out = []
    for m in _INLINE_TOKENS.finditer(text):
        if m.group("role"):
            out.append(role(_ROLE.match(m.group(0))))
        elif m.group("code"):
            out.append(m.group(0))
        else:
            out.append(re.sub(r"\]\(([A-Za-z0-9_./-]+)\.md(#[^)\s]*)?\)", md_link, m.group(0)))
    return "".join(out)


_INLINE_TOKENS = re.compile(r"(?P<role>\{[a-z][a-z0-9-]*\}`[^`]*`)|(?P<code>(`+)[^`].*?\3)|(?P<text>[^`{]+|.)", re.S)


# --- blocks ----------------------------------------------------------------------------------

_OPEN = re.compile(r"^(:{3,}|`{3,})\{([a-z][a-z0-9-]*)\}\s*(.*)$")


def _block_end(lines: list[str], start: int, fence: str) -> int:
    """Index of the line closing the directive opened at ``start`` (nested ones skipped)."""
    depth, i = 0, start + 1
    char = fence[0]
    while i < len(lines):
        s = lines[i].strip()
        if _OPEN.match(s) and s.startswith(char):
            depth += 1
        elif re.fullmatch(re.escape(char) + "{3,}", s):
            if depth == 0 and len(s) >= len(fence):
                return i
            depth -= 1
        i += 1
    raise PlainError(f"the directive on line {start + 1} is never closed")


def _options(body: list[str]) -> tuple[dict[str, str], list[str]]:
    options = {}
    while body and re.match(r"^:([a-z-]+):(.*)$", body[0]):
        m = re.match(r"^:([a-z-]+):(.*)$", body[0])
        options[m.group(1)] = m.group(2).strip()
        body = body[1:]
    return options, body


def _quote(text: str) -> str:
    return "\n".join(("> " + line).rstrip() for line in text.split("\n"))


def _list_table(title: str, options: dict, body: list[str], ctx: Context) -> str:
    rows, cell = [], None
    for line in body:
        if not line.strip():
            continue
        m = re.match(r"^\*\s+-\s+(.*)$", line)
        if m:
            rows.append([m.group(1).strip()])
            continue
        m = re.match(r"^\s+-\s+(.*)$", line)
        if m and rows:
            rows[-1].append(m.group(1).strip())
            continue
        if rows and line.startswith("    "):
            rows[-1][-1] += " " + line.strip()
            continue
        raise PlainError(f"{ctx.docname}: list-table line not understood: {line!r}")
    if not rows:
        raise PlainError(f"{ctx.docname}: empty list-table")
    width = max(len(r) for r in rows)
    rows = [[_inline(c, ctx).replace("|", "\\|") for c in r] + [""] * (width - len(r)) for r in rows]
    head = int(options.get("header-rows", "0") or 0)
    if head > 1:
        raise PlainError(f"{ctx.docname}: a list-table with {head} header rows")
    header = rows[0] if head else [""] * width
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * width]
    lines += ["| " + " | ".join(r) + " |" for r in rows[head:]]
    label = ctx.numbers.get(options.get("name", ""), "")
    caption = " ".join(x for x in (f"**{label}**" if label else "", _inline(title, ctx)) if x)
    anchor = f'<a id="{options["name"]}"></a>\n\n' if options.get("name") else ""
    return anchor + (caption + "\n\n" if caption else "") + "\n".join(lines)


def plain_markdown(text: str, ctx: Context) -> str:
    """One MyST Markdown cell as plain Markdown (see the module's docstring)."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        m = _OPEN.match(stripped)
        label = re.fullmatch(r"\(([A-Za-z0-9_.:-]+)\)=", stripped)
        fence = re.match(r"^(`{3,}|~{3,})", stripped)
        if label:
            out.append(f'<a id="{label.group(1)}"></a>')
            out.append("")  # an HTML block ends at a blank line; the heading after it stays a heading
            i += 1
            continue
        if m:
            end = _block_end(lines, i, m.group(1))
            name, title = m.group(2), m.group(3).strip()
            options, body = _options(lines[i + 1:end])
            inner = plain_markdown("\n".join(body).strip("\n"), ctx)
            if name == "admonition":
                out.append(_quote(f"**{_inline(title, ctx)}**\n\n{inner}"))
            elif name in ("note", "warning", "tip", "important", "caution"):
                out.append(_quote(f"**{title or name}**\n\n{inner}"))
            elif name == "dropdown":
                out.append(f"<details>\n<summary>{_inline(title, ctx)}</summary>\n\n{inner}\n\n</details>")
            elif name == "list-table":
                out.append(_list_table(title, options, lines[i + 1:end][len(options):], ctx))
            elif name == "bibliography":
                out.append("\n".join(f'- <a id="cite-{key}"></a>**[{key}]** {entry}' for key, entry in ctx.bibliography))
            else:
                raise PlainError(f"{ctx.docname}: the directive {{{name}}} has no plain-Markdown form here")
            i = end + 1
            continue
        if fence:  # a code block: copied as it is
            end = i + 1
            while end < len(lines) and not lines[end].strip().startswith(fence.group(1)):
                end += 1
            out.extend(lines[i:end + 1])
            i = end + 1
            continue
        out.append(_inline(line, ctx))
        i += 1
    return "\n".join(out)


def caption_cell_source(cell, ctx: Context) -> str | None:
    """The Markdown caption for a code cell whose output is a numbered figure (``图 1 …``), or None."""
    figure = cell.get("metadata", {}).get("mystnb", {}).get("figure", {})
    if not figure.get("caption"):
        return None
    number = ctx.numbers.get(figure.get("name", ""), "")
    anchor = f'<a id="{figure["name"]}"></a>' if figure.get("name") else ""
    text = _inline(str(figure["caption"]).strip(), ctx)
    return f"{anchor}**{number}** {text}" if number else f"{anchor}{text}"


def plain_notebook(notebook, ctx: Context):
    """``notebook`` (nbformat) with plain-Markdown cells and a caption cell after each figure.

    Code cells keep their source; their MyST-only metadata (``mystnb``) goes, their tags and
    ``jupyter`` metadata (``source_hidden``) stay.  Raises :class:`PlainError` on anything left.
    """
    import nbformat

    cells = []
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = plain_markdown(cell.source, ctx)
            cells.append(cell)
            continue
        cells.append(cell)
        caption = caption_cell_source(cell, ctx) if cell.cell_type == "code" else None
        cell.metadata.pop("mystnb", None)
        if caption:
            made = nbformat.v4.new_markdown_cell(caption)
            made.metadata["tags"] = ["f11-caption"]
            cells.append(made)
    notebook.cells = cells
    notebook.metadata.pop("mystnb", None)
    for n, cell in enumerate(notebook.cells):
        if cell.cell_type == "markdown":
            left = leftover_myst(cell.source)
            if left:
                raise PlainError(f"{ctx.docname}: cell {n} still has MyST syntax: {', '.join(left)}")
    return notebook


# --- from the Sphinx build -------------------------------------------------------------------


def eval_texts(glue_json) -> dict[str, str]:
    """Every {eval} name's text from a myst-nb ``.glue.json`` (values glued by attention_lab.notebook)."""
    import ast
    import json
    from pathlib import Path

    from attention_lab.notebook import shown_texts

    texts: dict[str, str] = {}
    path = Path(glue_json)
    if not path.exists():
        return texts
    for key, output in json.loads(path.read_text("utf-8")).items():
        plain = output.get("data", {}).get("text/plain")
        try:
            value = ast.literal_eval(plain) if isinstance(plain, str) else None
        except (ValueError, SyntaxError):
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            texts.update({k: str(v) for k, v in shown_texts(key, value).items()})
    return texts


def context_from_sphinx(app, docname: str, notebooks, site: str) -> Context:
    """The :class:`Context` of ``docname`` from the finished Sphinx build ``app``."""
    from pathlib import Path

    from docutils import nodes

    env = app.env
    labels = {label: (doc, title) for label, (doc, _id, title) in env.domaindata["std"]["labels"].items()}
    numbers = {}
    formats = app.config.numfig_format
    for kind, ids in env.toc_fignumbers.get(docname, {}).items():
        if kind in ("figure", "table"):
            for node_id, number in ids.items():
                numbers[node_id] = formats[kind] % ".".join(map(str, number))
    bibliography = []
    if "{bibliography}" in Path(env.doc2path(docname)).read_text("utf-8"):
        doctree = env.get_and_resolve_doctree(docname, app.builder)
        for citation in doctree.findall(nodes.citation):
            label = citation.next_node(nodes.label)
            text = " ".join(p.astext().replace("\n", " ") for p in citation.findall(nodes.paragraph))
            bibliography.append((label.astext().strip("[]") if label else "", text))
    glue = Path(app.outdir).parent / "jupyter_execute" / f"{docname}.glue.json"
    return Context(docname=docname, evals=eval_texts(glue), labels=labels, notebooks=set(notebooks),
                   site=site, numbers=numbers, bibliography=bibliography)
