"""Write .ipynb versions of the book's MyST notebooks (book/*.md), generated, never edited by hand.

For readers on Colab or a JupyterHub without Jupytext: the same cells as the
``.md`` page, without outputs (they run them).  scripts/build.sh calls this after
the build, so the notebooks sit in the site at ``_notebooks/<page>.ipynb``.

Usage: .venv/bin/python scripts/make_notebooks.py [OUTPUT_DIR]   (default _build/html/_notebooks)
"""

from __future__ import annotations

import sys
from pathlib import Path

import jupytext

ROOT = Path(__file__).resolve().parents[1]


def notebook_sources(book: Path = ROOT / "book") -> list[Path]:
    """The ``.md`` files that are notebooks (they carry a jupytext header with a kernel)."""
    sources = []
    for path in sorted(book.glob("*.md")):
        head = path.read_text("utf-8")[:600]
        if head.startswith("---") and "jupytext:" in head and "kernelspec:" in head:
            sources.append(path)
    return sources


def make_notebooks(out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for source in notebook_sources():
        notebook = jupytext.read(source)
        # Opened as .ipynb, it should not ask to be paired back to a .md that is not there.
        notebook.metadata.get("jupytext", {}).pop("text_representation", None)
        notebook.metadata.setdefault("jupytext", {})["notice"] = (
            f"Generated from book/{source.name} by scripts/make_notebooks.py; edit the .md, not this file."
        )
        target = out_dir / f"{source.stem}.ipynb"
        jupytext.write(notebook, target, fmt="ipynb")
        written.append(target)
    return written


def main(argv: list[str]) -> int:
    out_dir = Path(argv[0]) if argv else ROOT / "_build" / "html" / "_notebooks"
    for path in make_notebooks(out_dir):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
