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
"""

from __future__ import annotations

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


__all__ = ["FORMATS", "IN_BOOK_TOOLS", "Shown", "glue", "shown_texts"]
