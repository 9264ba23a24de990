"""The classroom lab: ipywidgets controls wired to the core and the figures.

A thin layer.  The parameter values live in the controls (one model); every
change recomputes with :func:`attention_lab.core.attention` and redraws the
existing figures in place.  The maths is in ``core``, the parameter names and
ranges in ``params``, the drawing in ``plotting``, the worked text in ``worked``.

Contract (tests and the static twin rely on it)::

    lab = AttentionLab()
    lab.controls["Wq[1,0]"].value = 1.5   # a slider move
    lab.result                            # the current attention(...) result
    lab.widget                            # the root widget; display(lab) shows it
"""

from __future__ import annotations

import html
import re
from contextlib import contextmanager

import numpy as np

from .core import TOKENS, attention
from .fastrender import FastRenderer
from .params import PARAM_NAMES, RANGES, TABLES, coerce, default_params, range_of, tables_from_params
from .plotting import AttentionFigure
from .web import lab_html, strings
from .worked import fmt, worked_steps

__all__ = ["AttentionLab"]

#: Decimals shown in each slider's readout (enough for every step).
READOUT = {"X": ".1f", "Wq": ".2f", "Wk": ".2f", "Wv": ".1f"}

#: Scoped CSS: big type for projecting at 1024x768.  Only affects ``.f11-lab``.
CSS = """
<style>
.f11-lab { font-size: 17px; }
.f11-lab .widget-label, .f11-lab .widget-readout, .f11-lab .widget-inline-hbox .widget-label,
.f11-lab .widget-toggle-button, .f11-lab .widget-button, .f11-lab .widget-checkbox label {
  font-size: 17px !important; }
.f11-lab .widget-readout { min-width: 3.4em; }
.f11-lab .f11-table { border: 1px solid #b9b9b9; border-radius: 6px; padding: 2px 6px; margin: 2px; }
.f11-lab .f11-table-title { font-weight: 600; font-size: 17px; margin: 0 0 0 4px; }
.f11-lab .f11-notes { color: #8a3b00; font-size: 16px; min-height: 1.2em; }
.f11-lab .f11-worked { font-family: "Noto Sans Mono CJK SC", "Noto Sans CJK SC", monospace;
  font-size: 16px; line-height: 1.45; white-space: pre-wrap; }
.f11-lab .f11-worked .head { font-weight: 700; margin-top: 4px; }
.f11-lab .f11-worked .note { color: #555; font-style: italic; }
.f11-lab .f11-fig img, .f11-lab img { max-width: 100%; height: auto; }
</style>
"""


def dom_class(name: str) -> str:
    """CSS class of a control in the page: ``"Wq[0,1]"`` -> ``"f11-param-Wq-0-1"`` (for tests, styling)."""
    return "f11-param-" + re.sub(r"[^A-Za-z0-9_]+", "-", name).strip("-")


class _BoundedMixin:
    """Routes every new value through :func:`params.coerce` and reports its note."""

    _param_name = None
    _note_callback = None

    def _coerce_with_note(self, proposal):
        if self._param_name is None:  # during construction: plain clamping
            return min(self.max, max(self.min, proposal["value"]))
        value, note = coerce(self._param_name, proposal["value"])
        if note and self._note_callback is not None:
            self._note_callback(self._param_name, note)
        return value


def _make_slider_classes():
    import ipywidgets as widgets
    from traitlets import validate

    class FloatSlider(_BoundedMixin, widgets.FloatSlider):
        @validate("value")
        def _validate_value(self, proposal):
            # Round away binary noise from the browser's stepping (0.5 + 0.05 -> 0.5499999999999999),
            # so the worked text shows 0.55 exactly; 10 decimals keep any typed value.
            return round(float(self._coerce_with_note(proposal)), 10)

    class IntSlider(_BoundedMixin, widgets.IntSlider):
        @validate("value")
        def _validate_value(self, proposal):
            return int(self._coerce_with_note(proposal))

    return FloatSlider, IntSlider


class AttentionLab:
    """Sliders for X, Wq, Wk, Wv, d_k and the causal mask; S/A/O and Q/K/V heatmaps; worked text.

    ``params``: optional start values (``{name: value}``, names from
    ``params.PARAM_NAMES``); ``row``: the query row to explain (0 = 我, 1 = 爱).
    """

    def __init__(self, params: dict | None = None, row: int = 1, tokens=TOKENS):
        import ipywidgets as widgets

        FloatSlider, IntSlider = _make_slider_classes()
        self.tokens = tuple(tokens)
        self.strings = strings()
        s_controls, s_lab = self.strings["controls"], self.strings["lab"]
        start = default_params()
        start.update(params or {})
        self._notes: dict[str, str] = {}
        self._holding = False
        self.render_count = 0

        # --- controls -----------------------------------------------------------------
        self.controls: dict = {}
        table_boxes = []
        for t in TABLES:
            r = RANGES[t]
            cells = []
            for i in range(2):
                for j in range(2):
                    name = f"{t}[{i},{j}]"
                    slider = FloatSlider(
                        value=start[name], min=r.min, max=r.max, step=r.step,
                        description=f"[{i},{j}]", readout=True, readout_format=READOUT[t],
                        continuous_update=True,
                        style={"description_width": "2.6em"},
                        layout=widgets.Layout(width="190px"),
                    )
                    slider._param_name = name
                    slider.add_class(dom_class(name))
                    slider._note_callback = self._note
                    slider.value = start[name]  # through the validator, now that it is wired
                    self.controls[name] = slider
                    cells.append(slider)
            title = widgets.HTML(f'<div class="f11-table-title">{html.escape(s_controls["table_" + t])}</div>')
            box = widgets.VBox([title, widgets.GridBox(cells, layout=widgets.Layout(
                grid_template_columns="repeat(2, 190px)", grid_gap="0 6px"))])
            box.add_class("f11-table")
            table_boxes.append(box)
        r = RANGES["d_k"]
        d_k = IntSlider(value=int(start["d_k"]), min=int(r.min), max=int(r.max), step=int(r.step),
                        description=s_controls["d_k"], continuous_update=True,
                        style={"description_width": "9.5em"}, layout=widgets.Layout(width="420px"))
        d_k._param_name, d_k._note_callback = "d_k", self._note
        d_k.add_class(dom_class("d_k"))
        self.controls["d_k"] = d_k
        causal = widgets.Checkbox(value=bool(start["causal"]), description=s_controls["causal"],
                                  indent=False, layout=widgets.Layout(width="auto"))
        causal.add_class(dom_class("causal"))
        self.controls["causal"] = causal
        assert tuple(self.controls) == PARAM_NAMES, "controls must follow params.PARAM_NAMES"

        self.row_control = widgets.ToggleButtons(
            options=[(tok, k) for k, tok in enumerate(self.tokens)], value=row,
            description=s_controls["row"], style={"description_width": "5.5em", "button_width": "3.2em"})
        s_buttons = self.strings["buttons"]
        self.buttons = {
            None: widgets.Button(description=s_buttons["reset"], button_style="primary",
                                 layout=widgets.Layout(width="auto")),
            "only_wv": widgets.Button(description=s_buttons["only_wv"], layout=widgets.Layout(width="auto")),
            "only_wq": widgets.Button(description=s_buttons["only_wq"], layout=widgets.Layout(width="auto")),
        }
        for contrast, button in self.buttons.items():
            button.on_click(lambda _b, c=contrast: self.set_params(default_params(c)))

        # --- outputs ------------------------------------------------------------------
        self.notes = widgets.HTML()
        self.notes.add_class("f11-notes")
        self.image_sao = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="900px"))
        self.image_qkv = widgets.Image(format="png", layout=widgets.Layout(width="100%", max_width="900px"))
        self.worked = widgets.HTML()
        self.worked.add_class("f11-worked")
        self.worked_title = widgets.HTML()
        qkv_title = widgets.HTML(f'<div class="f11-table-title">{html.escape(s_lab["qkv_title"])}</div>')

        self.result = attention(**tables_from_params(self.params))
        # Two figures: Q/K/V change only with X and the W tables, S/A/O with everything.
        self.figure_sao = AttentionFigure(self.result, ("S", "A", "O"), self.tokens,
                                          panel_size=3.0, font_size=15, dpi=100)
        self.figure_qkv = AttentionFigure(self.result, ("Q", "K", "V"), self.tokens,
                                          panel_size=3.0, font_size=15, dpi=100)
        self._renderer_sao = FastRenderer(self.figure_sao.figure)
        self._renderer_qkv = FastRenderer(self.figure_qkv.figure)
        for fig in (self.figure_sao, self.figure_qkv):
            for ax in fig.axes:
                for im in ax.images:
                    im.set_interpolation("nearest")  # 2x2 flat cells: same look, cheaper

        options = widgets.HBox([d_k, causal], layout=widgets.Layout(flex_flow="row wrap", align_items="center"))
        actions = widgets.HBox([self.row_control, *self.buttons.values()],
                               layout=widgets.Layout(flex_flow="row wrap", align_items="center"))
        self.widget = widgets.VBox([
            widgets.HTML(CSS),
            # Two tables per row on a projector (1024 px), one per row when narrower.
            widgets.HBox(table_boxes, layout=widgets.Layout(flex_flow="row wrap")),
            options, actions, self.notes,
            self.image_sao,
            self.worked_title, self.worked,
            qkv_title, self.image_qkv,
        ])
        self.widget.add_class("f11-lab")

        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        self.row_control.observe(self._on_change, names="value")
        self._update()

    # --- state ----------------------------------------------------------------------------
    @property
    def params(self) -> dict:
        """The current values of every control, ``{name: value}``."""
        return {name: c.value for name, c in self.controls.items()}

    @contextmanager
    def hold(self):
        """Change several controls, recompute once at the end."""
        self._holding = True
        try:
            yield
        finally:
            self._holding = False
        self._update()

    def set_params(self, params: dict) -> None:
        """Set several controls at once (the buttons use this)."""
        self._notes.clear()
        with self.hold():
            for name, value in params.items():
                self.controls[name].value = value

    @property
    def row(self) -> int:
        return int(self.row_control.value)

    # --- updates --------------------------------------------------------------------------
    def _note(self, name: str, note: str) -> None:
        self._notes[name] = note
        if not self._holding:
            self._show_notes()

    def _on_change(self, change) -> None:
        owner = getattr(change.get("owner"), "_param_name", None)
        if owner is not None and owner in self._notes and change.get("new") is not None:
            # A later move of the same control replaces its earlier note.
            value = change["new"]
            r = range_of(owner) if owner != "causal" and owner in PARAM_NAMES else None
            if r is None or r.min < value < r.max:
                self._notes.pop(owner, None)
        if not self._holding:
            self._update()

    def _messages(self) -> list[str]:
        s = self.strings["lab"]
        messages = list(self._notes.values())
        params = self.params
        for name in PARAM_NAMES[:-2]:
            r = range_of(name)
            value = params[name]
            if name not in self._notes and (value <= r.min or value >= r.max):
                messages.append(s["at_bound"].replace("{name}", name).replace("{value}", fmt(value))
                                .replace("{min}", fmt(r.min)).replace("{max}", fmt(r.max)))
        d_k = params["d_k"]
        if d_k == 1:
            messages.append(s["d_k_one"])
        if d_k != 2:
            messages.append(s["d_k_not_width"].replace("{d_k}", fmt(d_k)))
        if not params["causal"]:
            messages.append(s["causal_off_note"])
        return messages

    def _show_notes(self, extra: list[str] | None = None) -> None:
        messages = (extra or []) + self._messages()
        self.notes.value = "".join(f"<div>{html.escape(m)}</div>" for m in messages)

    def _update(self) -> None:
        """Recompute and redraw everything from the controls' current values."""
        tables = tables_from_params(self.params)
        try:
            result = attention(**tables)
            if not all(np.all(np.isfinite(getattr(result, k))) for k in ("Q", "K", "V", "A", "O")):
                raise ValueError("结果中出现了非有限的数")
        except (ValueError, FloatingPointError) as exc:
            message = self.strings["lab"]["error"].replace("{message}", str(exc))
            self._show_notes([message])
            return
        self.result = result
        for figure, renderer, image in ((self.figure_sao, self._renderer_sao, self.image_sao),
                                        (self.figure_qkv, self._renderer_qkv, self.image_qkv)):
            figure.update(result)
            png = renderer.to_png()  # redraws only the panels whose values changed
            if png is not image.value:
                image.value = png
        tok = self.tokens[self.row]
        self.worked_title.value = ('<div class="f11-table-title">'
                                   + html.escape(self.strings["lab"]["worked_title"].replace("{tok}", tok))
                                   + "</div>")
        self.worked.value = "".join(
            f'<div class="{line["kind"]}">{html.escape(line["text"])}</div>'
            for line in worked_steps(result, self.row, self.tokens))
        self._show_notes()
        self.render_count += 1

    # --- what is shown (for tests and scripts) -----------------------------------------
    def worked_lines(self) -> list[str]:
        """The worked arithmetic currently shown (read back from the widget), one string per line."""
        return [html.unescape(text) for text in re.findall(r'<div class="\w+">(.*?)</div>', self.worked.value)]

    def shown_cells(self) -> dict[str, list[list[str]]]:
        """The text written in every heatmap cell, ``{"S": [[...], [...]], ...}``."""
        out = {}
        for fig in (self.figure_qkv, self.figure_sao):
            for name, ax in zip(fig.tables, fig.axes):
                n_rows, n_cols = getattr(self.result, name).shape
                texts = [t.get_text() for t in ax.texts]
                out[name] = [texts[i * n_cols:(i + 1) * n_cols] for i in range(n_rows)]
        return out

    def shown_notes(self) -> str:
        return html.unescape(self.notes.value)

    # --- display --------------------------------------------------------------------------
    def _repr_mimebundle_(self, include=None, exclude=None):
        """Widget view for Jupyter, the static twin's HTML for the website, and plain text."""
        data = {}
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude)
        if isinstance(bundle, tuple):
            bundle = bundle[0]
        data.update(bundle or {})
        data["text/html"] = lab_html(self.params)
        data["text/plain"] = "AttentionLab: " + self.strings["lab"]["title"]
        return data

    def __repr__(self) -> str:
        return f"AttentionLab(row={self.row}, params={self.params!r})"
