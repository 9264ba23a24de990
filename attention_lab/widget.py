"""The lab's view in Jupyter: the site's renderer, run by anywidget.

One view for both places.  On the website ``app.js`` mounts the view of
``render.js`` (with ``attention.js`` for formats and the worked text) and feeds it
the JavaScript twin's results; here :class:`LabView` ships the very same files as
one ES module (``_esm``: ``attention.js`` + ``render.js`` + the thin glue
``widget.js``) and the same stylesheet (``_css``: ``lab.css``), and feeds the view
the *kernel's* results through one synced trait, ``state``.  No picture is drawn in
the kernel; a change sends about 2 KB of numbers.

``state`` (set by :class:`attention_lab.lab.AttentionLab`, one message per change)::

    {"params": {name: value},            # every control's value (params.PARAM_NAMES)
     "result": {"Q": [[..]], ..., "O": [[..]], "raw_scores": [[..]], "d_k": 2.0},
                                          # masked cells (-inf) as None: JSON has no infinity
     "row": 0 | 1,                        # the query row the worked text explains
     "notes": ["..."]}                    # what the lab says now (refusals, clamping, d_k, causal)

``config`` is sent once: :func:`attention_lab.web.lab_config` (names, ranges, strings).
"""

from __future__ import annotations

import math
from functools import lru_cache
from importlib import resources

import anywidget
import traitlets

from .web import lab_config

__all__ = ["LabView", "view_state", "esm_source", "css_source"]

#: Package data files joined into the widget's ES module, in load order.
ESM_FILES = ("attention.js", "render.js", "widget.js")
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
    """What the view is given for one state of the lab (see the module docstring)."""
    res = {name: _cells(getattr(result, name)) for name in ("Q", "K", "V", "S", "A", "O")}
    res["raw_scores"] = _cells(result.raw_scores)
    res["d_k"] = float(result.d_k)
    return {"params": dict(params), "result": res, "row": int(row), "notes": list(notes)}


class LabView(anywidget.AnyWidget):
    """The heatmaps (S, A, O, Q, K, V), the worked text and the notes, drawn by ``render.js``.

    The controls are not part of it: ``AttentionLab`` keeps them as ipywidgets sliders.
    """

    _esm = esm_source()
    _css = css_source()

    config = traitlets.Dict().tag(sync=True)
    state = traitlets.Dict().tag(sync=True)

    def __init__(self, params: dict | None = None, row: int = 1, **kwargs):
        config = lab_config(params, row)
        kwargs.setdefault("config", config)
        if "state" not in kwargs:  # on its own, the view shows the start values' tables
            from .core import attention
            from .params import tables_from_params

            start = config["start"]
            kwargs["state"] = view_state(start, attention(**tables_from_params(start)), row, [])
        super().__init__(**kwargs)
