"""Small Sphinx extension for this book's website.

Jupyter Book 1.x always loads sphinx-thebe, which injects an inline script that
declares ``const THEBE_JS_URL = "https://unpkg.com/..."``.  In this build that
script is added twice, and the second copy throws "Identifier 'THEBE_JS_URL' has
already been declared" in every reader's console.  Thebe (live code via Binder
from a CDN) is switched off here (``launch_buttons.thebe: false``) because
readers behind a firewall cannot load it, so its scripts are dropped from every
page: nothing on the site then refers to a CDN.

myst-nb also embeds the widget state that the build's kernel recorded (for the
ipywidgets HTML manager, which this site does not load: ``nb_ipywidgets_js`` is
empty and the lab cells show the JavaScript twin instead).  That state is dead
weight, about 170 KB of PNGs per page, so it is dropped too.
"""

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
NOTEBOOK_DIR = "_notebooks"


def _is_unused(script) -> bool:
    attributes = getattr(script, "attributes", {})
    body = attributes.get("body", "") or ""
    return (
        "THEBE_JS_URL" in body
        or "sphinx-thebe." in str(script)
        or attributes.get("type") == WIDGET_STATE
    )


def drop_unused_scripts(app, pagename, templatename, context, doctree):
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [s for s in context[key] if not _is_unused(s)]


def write_ipynb(app, exc):
    """After a successful build: ``_notebooks/<page>.ipynb`` for every notebook page.

    For readers on Colab or a JupyterHub without Jupytext: the same cells as the
    ``.md`` page, generated from it on every build (never edited by hand), without
    outputs (the reader runs them).  The pages link to them.
    """
    if exc is not None or app.builder.format != "html":
        return
    from pathlib import Path

    import jupytext

    out_dir = Path(app.outdir) / NOTEBOOK_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    for docname in sorted(app.env.found_docs):
        source = Path(app.env.doc2path(docname))
        head = source.read_text("utf-8")[:600] if source.suffix == ".md" else ""
        if not (head.startswith("---") and "jupytext:" in head and "kernelspec:" in head):
            continue
        notebook = jupytext.read(source)
        # Opened as .ipynb, it must not ask to be paired with a .md that is not there.
        notebook.metadata.get("jupytext", {}).pop("text_representation", None)
        notebook.metadata.setdefault("jupytext", {})["notice"] = (
            f"Generated from {docname}.md when the book was built; edit the .md, not this file."
        )
        jupytext.write(notebook, out_dir / f"{source.stem}.ipynb", fmt="ipynb")


def setup(app):
    app.connect("build-finished", write_ipynb)
    # After myst-nb's own html-page-context handler (priority 500) has added its scripts.
    app.connect("html-page-context", drop_unused_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
