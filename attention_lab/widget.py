"""The lab's view in Jupyter: the site's renderer, run by anywidget, reading the controls' models.

One view for both places.  On the website ``app.js`` mounts the view of ``render.js`` (with
``attention.js`` for the maths, formats and the worked text) and feeds it its controls' values;
here :class:`LabView` ships the very same files as one ES module (``_esm``: ``attention.js`` +
``render.js`` + the thin glue ``widget.js``) and the same stylesheet (``_css``: ``lab.css``).
The glue holds references to the ipywidgets controls' models (trait ``controls``) and redraws
from their values in the browser, with ``attention.js``, at once on every change, exactly as
on the site.  Nothing the view shows waits for the kernel.

Traits (all synced):

``config``
    Sent once: :func:`attention_lab.web.lab_config` (names, ranges, d_k stops, tokens, strings).
``controls``
    ``{parameter name: control widget, "row": the row toggle}`` (empty: the view shows
    ``config["start"]`` on its own).
``kernel_notes``
    ``[{"name": control name or None, "value": the value the note is about, "text": note}]``:
    what only the kernel knows (a value set from code was clamped or refused, set_params
    refused a change).  The view shows a control's note while that control still holds
    ``value``; the status messages (a range end, d_k, the mask) it works out itself.
``beside_px``, ``scroll_into_view``
    Layout: the width from which S, A, O stand beside the sliders; scroll the view's cell to
    the top once, on its first drawing (the projector page).
"""

from __future__ import annotations

import math
from functools import lru_cache
from importlib import resources

import anywidget
import traitlets
from ipywidgets import widget_serialization

from .web import lab_config

__all__ = ["LabView", "view_state", "esm_source", "css_source"]

#: Package data files joined into the widget's ES module, in load order.
ESM_FILES = ("attention.js", "render.js", "jupyter_glue.js", "widget.js")
CSS_FILES = ("lab.css",)


def _static(name: str) -> str:
    return resources.files(__package__).joinpath("static", "attention-lab", name).read_text("utf-8")


@lru_cache(maxsize=None)
def esm_source() -> str:
    """The widget's ES module: the site's own files, then the anywidget glue (``export default``).

    ``attention.js`` and ``render.js`` are classic scripts that register
    ``window.AttentionLabCore`` / ``window.AttentionLabRender``; inside a module they run the same.
    """
    return "\n".join(f"/* ---- {name} ---- */\n{_static(name)}" for name in ESM_FILES)


@lru_cache(maxsize=None)
def css_source() -> str:
    return "\n".join(_static(name) for name in CSS_FILES)


def _cells(table) -> list[list[float | None]]:
    """Rows of floats; -inf (masked) and anything else non-finite become None."""
    return [[v if math.isfinite(v) else None for v in row] for row in table.tolist()]


def view_state(params: dict, result, row: int, notes: list[str]) -> dict:
    """One state of the lab as the view shows it: ``{params, result, row, notes}``, the tables
    as rows of floats with masked cells (-inf) as None (plain JSON), plus raw scores and d_k.
    For notebook code and tests (:attr:`AttentionLab.state`); the view computes its own."""
    res = {name: _cells(getattr(result, name)) for name in ("Q", "K", "V", "S", "A", "O")}
    res["raw_scores"] = _cells(result.raw_scores)
    res["d_k"] = float(result.d_k)
    return {"params": dict(params), "result": res, "row": int(row), "notes": list(notes)}


class LabView(anywidget.AnyWidget):
    """The heatmaps (S, A, O, Q, K, V), the worked text and the notes, drawn by ``render.js``
    from the values of the controls it is given (``AttentionLab`` keeps them as ipywidgets)."""

    _esm = esm_source()
    _css = css_source()

    config = traitlets.Dict().tag(sync=True)
    controls = traitlets.Dict().tag(sync=True, **widget_serialization)
    kernel_notes = traitlets.List().tag(sync=True)
    beside_px = traitlets.Int(560).tag(sync=True)
    scroll_into_view = traitlets.Bool(False).tag(sync=True)

    def __init__(self, params: dict | None = None, row: int = 1, **kwargs):
        kwargs.setdefault("config", lab_config(params, row))
        super().__init__(**kwargs)
