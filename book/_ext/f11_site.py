"""Small Sphinx extension for this book's website.

Jupyter Book 1.x always loads sphinx-thebe, which injects an inline script that
declares ``const THEBE_JS_URL = "https://unpkg.com/..."``.  In this build that
script is added twice, and the second copy throws "Identifier 'THEBE_JS_URL' has
already been declared" in every reader's console.  Thebe (live code via Binder
from a CDN) is switched off here (``launch_buttons.thebe: false``) because
readers behind a firewall cannot load it, so its scripts are dropped from every
page: nothing on the site then refers to a CDN.
"""


def _is_thebe(script) -> bool:
    body = getattr(script, "attributes", {}).get("body", "") or ""
    return "THEBE_JS_URL" in body or "sphinx-thebe." in str(script)


def drop_thebe_scripts(app, pagename, templatename, context, doctree):
    for key in ("script_files", "css_files"):
        if key in context:
            context[key] = [s for s in context[key] if not _is_thebe(s)]


def setup(app):
    app.connect("html-page-context", drop_thebe_scripts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
