"""The HTML that the static website shows for a lab cell: the JavaScript twin's root.

The kernel lab's display bundle carries this as ``text/html`` next to the widget
view; Jupyter shows the widget, the website (myst-nb's mime priority) shows this,
and ``book/_static/attention-lab/*.js`` turns it into a working lab in the browser.
"""

from __future__ import annotations

import html
import json
from importlib import resources

from .params import PARAM_NAMES, RANGES, default_params


def strings() -> dict:
    """The Chinese UI strings table (``strings_zh.json``)."""
    return json.loads(resources.files(__package__).joinpath("strings_zh.json").read_text("utf-8"))


def lab_config(params: dict | None = None) -> dict:
    """Everything the twin needs: parameter names, ranges, baseline, start values, strings."""
    return {
        "names": list(PARAM_NAMES),
        "ranges": {k: {"min": r.min, "max": r.max, "step": r.step} for k, r in RANGES.items()},
        "baseline": default_params(),
        "start": dict(params) if params is not None else default_params(),
        "strings": strings(),
    }


def lab_html(params: dict | None = None) -> str:
    """Root element of the static twin, with its configuration as inert JSON."""
    config = json.dumps(lab_config(params), ensure_ascii=False).replace("</", "<\\/")
    return (
        '<div class="attention-lab-static" data-attention-lab>'
        f'<script type="application/json" data-attention-lab-config>{config}</script>'
        f'<noscript>{html.escape("这个实验台需要浏览器启用 JavaScript。")}</noscript>'
        "</div>"
    )
