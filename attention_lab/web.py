"""The HTML that the static website shows for a lab cell: the JavaScript twin's root.

The kernel lab's display bundle carries this as ``text/html`` next to the widget
view; Jupyter shows the widget, the website (myst-nb's mime priority) shows this,
and ``attention_lab/static/attention-lab/*.js`` turns it into a working lab in the browser.
"""

from __future__ import annotations

import html
import json
from importlib import resources

import numpy as np

from .core import CONTRASTS
from .params import D_K_POWERS, PARAM_NAMES, RANGES, coerce, default_params
from .plotting import colour_config


def strings() -> dict:
    """The Chinese UI strings table (``strings_zh.json``)."""
    return json.loads(resources.files(__package__).joinpath("strings_zh.json").read_text("utf-8"))


def lab_config(params: dict | None = None, row: int = 1) -> dict:
    """Everything the twin needs: parameter names, ranges, baseline, contrasts,
    start values, the row to explain first, strings.

    ``params`` may be partial; missing names take the baseline value.  Each value goes through
    :func:`attention_lab.params.coerce`, as a typed one does in the labs: ``"no"`` is off, 99 is
    clamped to the range, NaN or text keeps the baseline; what was changed is said in ``notes``
    (Chinese, shown by the twin when it starts; ``noted`` names those values, so a clamped one
    gets no second note that it is at its range end).  Unknown names and a row other than 0/1 raise.
    """
    start = default_params()
    notes, noted = [], []
    if params is not None:
        unknown = set(params) - set(PARAM_NAMES)
        if unknown:
            raise ValueError(f"unknown parameters {sorted(unknown)}; expected names from {PARAM_NAMES}")
        for name in PARAM_NAMES:  # display order, so the notes come in the order of the controls
            if name in params:
                start[name], note = coerce(name, params[name])
                if note:
                    notes.append(note)
                    noted.append(name)
    if isinstance(row, (bool, np.bool_)) or row not in (0, 1):
        raise ValueError(f"row must be 0 or 1; got {row!r}")
    return {
        "names": list(PARAM_NAMES),
        "dk_powers": list(D_K_POWERS),  # the d_k slider's stops, on the site and in Jupyter
        "ranges": {k: {"min": r.min, "max": r.max, "step": r.step} for k, r in RANGES.items()},
        "baseline": default_params(),
        "contrasts": {name: default_params(name) for name in CONTRASTS},
        "start": start,
        "notes": notes,
        "noted": noted,
        "row": int(row),
        "strings": strings(),
        "colours": colour_config(),  # the cells' colormap and contrast rule (render.js reads them)
    }


def lab_html(params: dict | None = None, row: int = 1) -> str:
    """Root element of the static twin, with its configuration as inert JSON.

    Every ``<`` is written ``\\u003c`` inside the JSON so no string in it can close the script
    element; the JSON is data (``type="application/json"``), never executed.
    """
    config = lab_config(params, row)
    # Shown until the lab's JavaScript has built the lab (it says the lab is loading;
    # a notebook viewer without the site's scripts keeps showing it); app.js removes it.
    fallback = html.escape(config["strings"]["twin"]["fallback"])
    # What it says instead when the lab's scripts never came (app.js reads it too, when the
    # config it would take strings from is what is broken).
    failed = html.escape(config["strings"]["faults"]["load_failed"], quote=True)
    no_js = noscript(config["strings"])
    # allow_nan=False: every value is coerced, so a NaN here would be a bug, not a page to ship.
    config = json.dumps(config, ensure_ascii=False, allow_nan=False).replace("<", "\\u003c")
    return (
        '<div class="attention-lab-static" data-attention-lab>'
        f'<script type="application/json" data-attention-lab-config>{config}</script>'
        f'<p class="al-fallback" data-failed="{failed}" data-attention-lab-fallback>{fallback}</p>'
        f"{no_js}</div>"
        # Start the lab as soon as its HTML is parsed (not after the whole page has loaded);
        # when app.js is not there yet, app.js starts it itself once it runs.  If app.js still
        # has not run when the page has loaded (its file failed), "loading" becomes "failed".
        f"<script>{START_SCRIPT}</script>"
    )


def noscript(strings_: dict) -> str:
    """With JavaScript off: the lab says so in Chinese, and links the chapter's sections where the
    baseline's tables are worked out statically (faults.no_js_links; the lab page, the chapter and the
    shapes page are all in book/), instead of "loading" forever (the <style> inside <noscript>
    applies only then)."""
    faults = strings_["faults"]
    text = html.escape(faults["no_js"])
    for key, link in faults["no_js_links"].items():
        if key.startswith("_"):
            continue
        title, href = link
        text = text.replace("{" + key + "}", f'<a href="{html.escape(href, quote=True)}">{html.escape(title)}</a>')
    # The root's room for the lab it would build (f11-site.css: a screen tall) is not needed: the
    # page's own text follows the sentence at once.
    return ('<noscript><style>[data-attention-lab-fallback]{display:none}'
            '.attention-lab-static[data-attention-lab]:not(.al-lab){min-height:0}</style>'
            f'<p class="al-fallback al-error" data-lab-no-js>{text}</p></noscript>')


#: The one inline script after each root (fixed text: nothing from the config or strings).
START_SCRIPT = ("window.AttentionLab?window.AttentionLab.startAll():window.addEventListener(\"load\",function(){"
                "window.AttentionLab||[].forEach.call(document.querySelectorAll(\"[data-attention-lab-fallback]\"),"
                "function(p){p.textContent=p.getAttribute(\"data-failed\");p.parentNode.style.minHeight=\"0\"})})")


#: The twin's files in the order the page must load them (as _config.yml's html_js_files).
TWIN_JS = ("attention.js", "render.js", "app.js")
TWIN_CSS = ("lab.css",)


def standalone_html(params: dict | None = None, row: int = 1, static: str = "attention-lab/",
                    theme: str = "light") -> str:
    """A whole HTML page holding one twin, outside the book (for the benchmark and quick checks).

    ``static`` is the URL folder of ``attention_lab/static/attention-lab/``; ``theme`` sets
    ``<html data-theme>`` as pydata-sphinx-theme does.
    """
    css = "".join(f'<link rel="stylesheet" href="{html.escape(static + f)}">' for f in TWIN_CSS)
    js = "".join(f'<script src="{html.escape(static + f)}"></script>' for f in TWIN_JS)
    return (
        f'<!DOCTYPE html><html lang="zh-CN" data-theme="{html.escape(theme)}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>F11 attention lab</title>{css}{js}</head>"
        f'<body style="margin:0 auto;max-width:72rem;padding:0.5rem">{lab_html(params, row)}</body></html>'
    )
