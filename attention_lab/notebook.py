"""Plumbing for the book's notebooks, in the book build and outside it.

In the build, :func:`glue` is myst-nb's: it hands a computed number to the website's text
(``{glue:text}`key```).  In a downloaded notebook (Colab, a plain Jupyter) myst-nb is
usually missing; there :func:`glue` only shows the value when asked to, and stores nothing,
so the notebook still runs.  ``IN_BOOK_TOOLS`` says which one is in use.
"""

from __future__ import annotations

try:
    from myst_nb import glue

    IN_BOOK_TOOLS = True
except ImportError:
    IN_BOOK_TOOLS = False

    def glue(name: str, variable, display: bool = True) -> None:
        """Stand-in for ``myst_nb.glue`` outside the book build: shows ``variable`` if asked to."""
        if display:
            from IPython.display import display as show

            show(variable)


__all__ = ["IN_BOOK_TOOLS", "glue"]
