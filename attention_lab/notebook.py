"""Plumbing for the book's notebooks: the numbers the prose shows, on the site and in Jupyter.

The prose writes a computed number as MyST's inline ``{eval}`name``` role, which both readers
of the chapter understand: myst-nb evaluates ``name`` in the build's kernel (the pages set
``mystnb: execution_mode: inline``), and jupyterlab-myst evaluates it in the reader's kernel
when the markdown cell is run (JupyterLab, Notebook 7, Binder).  Both accept a bare variable
name only, so the value must already be formatted:

:func:`glue` ``(key, value)`` publishes ``value`` into the notebook's namespace as :class:`Shown`
texts (a ``str`` whose repr is the text itself, so ``text/plain`` shows no quotes), one name per
way the prose writes numbers (:data:`FORMATS`)::

    key        format(value, "g")      1.41421, -1, 0.5
    key_1d     one decimal             0.5   (also key_3d, key_6d)
    key_4d     four decimals           0.3302
    key_10d    ten decimals            0.6697615585

In the book build it also hands the raw value to myst-nb's own ``glue`` (kept for tools that
read glued data); without myst-nb (Binder, a downloaded notebook) that part is skipped.
``IN_BOOK_TOOLS`` says whether myst-nb is there.

The chapter shows the core's own code the same way: :func:`show_code` (an excerpt of a function,
as a Python code block) and :func:`show_code_folded` (whole functions in a folded box) return
Markdown that a hidden cell displays.  myst-nb renders it on the site and jupyterlab-myst in
Jupyter (a ``{literalinclude}`` shows nothing there: it cannot read files), and the code is
read from the function with :mod:`inspect` when the cell runs, never re-typed.
"""

from __future__ import annotations

import functools
import inspect
import textwrap

try:
    from myst_nb import glue as _myst_glue

    IN_BOOK_TOOLS = True
except ImportError:
    _myst_glue = None
    IN_BOOK_TOOLS = False

#: name suffix -> format spec; ``{eval}`a10_4d``` shows format(a10, ".4f").
FORMATS = {"": "g", "_1d": ".1f", "_3d": ".3f", "_4d": ".4f", "_6d": ".6f", "_10d": ".10f"}


class Shown(str):
    """A number as the prose shows it: the text itself, also as its repr (no quotes in Jupyter)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str.__str__(self)

    def _repr_pretty_(self, p, cycle) -> None:  # IPython's pretty printer
        p.text(str.__str__(self))


def shown_texts(key: str, value) -> dict[str, Shown]:
    """Every name the prose may use for ``value`` (see :data:`FORMATS`), with its text.

    >>> shown_texts("a10", 0.66976155849)["a10_4d"]
    0.6698
    """
    if not key.isidentifier() or not key[0].isalpha():
        raise ValueError(f"{key!r} cannot be an {{eval}} name (letters, digits, _; a letter first)")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{key!r}: only numbers are shown in the prose, not {type(value).__name__}")
    return {key + suffix: Shown(format(value, spec)) for suffix, spec in FORMATS.items()}


def glue(name: str, variable, display: bool = True, namespace: dict | None = None) -> None:
    """Make ``variable`` (a number) readable by the prose's ``{eval}`` roles under ``name`` + suffix.

    ``namespace`` defaults to the running IPython kernel's user namespace (where both myst-nb and
    jupyterlab-myst evaluate the roles); outside IPython nothing is published.  ``display``
    shows the raw value, as myst-nb's ``glue`` does.
    """
    texts = shown_texts(name, variable)
    if namespace is None:
        try:
            from IPython import get_ipython
        except ImportError:  # pragma: no cover - notebooks always have IPython
            get_ipython = None
        shell = get_ipython() if get_ipython else None
        namespace = shell.user_ns if shell is not None else None
    if namespace is not None:
        namespace.update(texts)
    if _myst_glue is not None:
        _myst_glue(name, variable, display=display)
    elif display:
        from IPython.display import display as show

        show(variable)


def source_excerpt(function, start_at: str | None = None, end_at: str | None = None,
                   leave_out: tuple[str, ...] = ()) -> str:
    """The source of ``function`` (dedented), or a part of it.

    ``start_at`` / ``end_at``: the excerpt runs from the first line containing ``start_at`` to the
    first line from there on containing ``end_at`` (both kept), as Sphinx's ``literalinclude`` cuts;
    ``leave_out``: lines containing any of these strings are dropped (an input check between two
    lines that teach).  Raises ``ValueError`` when a marker is not found or nothing is left, so an
    edit of the quoted code that moves the excerpt fails the build instead of showing the wrong lines.

    >>> from attention_lab.core import softmax
    >>> print(source_excerpt(softmax, "exps = np.exp", "return exps"))
    exps = np.exp(scores - row_max)
    return exps / np.sum(exps, axis=axis, keepdims=True)
    """
    lines = inspect.getsource(function).splitlines()
    name = getattr(function, "__qualname__", repr(function))
    if start_at is not None:
        starts = [i for i, line in enumerate(lines) if start_at in line]
        if not starts:
            raise ValueError(f"{name}: no line contains {start_at!r}")
        lines = lines[starts[0]:]
    if end_at is not None:
        ends = [i for i, line in enumerate(lines) if end_at in line]
        if not ends:
            raise ValueError(f"{name}: no line after the start contains {end_at!r}")
        lines = lines[:ends[0] + 1]
    lines = [line for line in lines if not any(word in line for word in leave_out)]
    text = textwrap.dedent("\n".join(lines)).strip("\n")
    if not text.strip():
        raise ValueError(f"{name}: the excerpt is empty")
    return text


def _fenced(code: str) -> str:
    fence = "```"
    while fence in code:
        fence += "`"
    return f"{fence}python\n{code}\n{fence}"


def show_code(function, start_at: str | None = None, end_at: str | None = None,
              leave_out: tuple[str, ...] = ()):
    """:func:`source_excerpt` as Markdown (a Python code block) for a cell to display."""
    from IPython.display import Markdown

    return Markdown(_fenced(source_excerpt(function, start_at, end_at, leave_out)))


def show_code_folded(summary: str, intro: str, *functions, css_class: str = "f11-full-code"):
    """Whole functions in a MyST dropdown titled ``summary``, after the paragraph ``intro``.

    The cell that displays it needs ``mystnb: markdown_format: myst`` in its metadata: myst-nb
    renders text/markdown outputs as CommonMark unless told, and the dropdown is a directive.
    In a notebook downloaded from the site (its first cell sets ``F11_MARKDOWN=plain``: Colab,
    VS Code, a Jupyter without jupyterlab-myst) the box is an HTML ``<details>`` block instead.
    """
    import os

    from IPython.display import Markdown

    blocks = "\n\n".join(_fenced(source_excerpt(f)) for f in functions)
    if os.environ.get("F11_MARKDOWN") == "plain":
        return Markdown(f"<details>\n<summary>{summary}</summary>\n\n{intro}\n\n{blocks}\n\n</details>\n")
    return Markdown(f":::{{dropdown}} {summary}\n:class-container: {css_class}\n\n{intro}\n\n{blocks}\n:::\n")


__all__ = ["FORMATS", "IN_BOOK_TOOLS", "Shown", "figure_caption", "glue", "show_code", "show_code_folded",
           "shown_texts", "source_excerpt"]


@functools.lru_cache(maxsize=8)
def _figures(path: str, mtime: float) -> list[dict]:
    """The numbered figures of a MyST notebook, in order: each code cell's ``mystnb.figure`` with a caption
    (Sphinx's numfig numbers exactly those, 1, 2, ... per page).  Read once per version of the file
    (``mtime``), not once per caption."""
    import jupytext

    notebook = jupytext.read(path)
    return [cell.metadata["mystnb"]["figure"] for cell in notebook.cells
            if cell.cell_type == "code" and (cell.metadata.get("mystnb") or {}).get("figure", {}).get("caption")]


def figure_caption(name: str, page: str = "f11-attention.md"):
    """The caption the site writes under figure ``name`` (``图 2 …``), as Markdown for a hidden cell after it.

    jupyterlab-myst shows no caption for a figure a code cell draws (jupyterlab-myst issue 176), so in
    Jupyter a cell tagged ``remove-cell`` (the site has the caption already) displays this one, read
    from the figure cell's own ``mystnb.figure`` metadata in the page's source and numbered as the
    site numbers it: never typed twice.  ``page`` is found beside the running notebook (Jupyter and
    the build run it in ``book/``), else in the checkout's ``book/``.
    """
    from pathlib import Path

    from IPython.display import Markdown

    from .strings import text

    path = Path(page)
    if not path.is_file():
        path = Path(__file__).resolve().parents[1] / "book" / page
    if not path.is_file():
        raise FileNotFoundError(f"figure_caption: the caption of {name} is read from {page}, "
                                f"which is neither in {Path.cwd()} nor in {path.parent}")
    for number, figure in enumerate(_figures(str(path), path.stat().st_mtime), 1):
        if figure.get("name") == name:
            caption = " ".join(str(figure["caption"]).split())
            return Markdown(f"**{text('figures.caption_number', n=number)}** {caption}")
    raise KeyError(f"figure_caption: {path} has no numbered figure named {name!r}")
