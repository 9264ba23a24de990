"""The classroom lab in Jupyter: ipywidgets controls, the site's view, the core's numbers.

A thin layer.  The parameter values live in the controls (one model); every
change goes params -> :func:`attention_lab.core.attention` -> the view's one
synced trait (:class:`attention_lab.widget.LabView`), which draws S, A, O, Q, K, V
and the worked text with the website's own renderer (``render.js``).  No picture
is drawn in the kernel.  Names and ranges are in ``params``, the maths in ``core``.

Contract (tests and the static twin rely on it)::

    lab = AttentionLab()
    lab.controls["Wq[1,0]"].value = 1.5   # a slider move (any value: it is coerced, with a note)
    lab.result                            # the current attention(...) result
    lab.widget                            # the root widget; display(lab) shows it
    lab.view.state                        # what the view is showing (params, result, row, notes)
    lab.set_params({...})                 # several values at once, all or nothing

Bad input never raises from a control: it is clamped or refused through
:func:`attention_lab.params.coerce` (the same rules as the site's number boxes),
and the note saying so stays in ``lab.notes`` until that control takes a new value.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from contextlib import contextmanager

import numpy as np

from .core import TOKENS, attention
from .params import PARAM_NAMES, RANGES, TABLES, coerce, default_params, range_of, refused, tables_from_params
from .web import lab_html, strings
from .widget import LabView, view_state
from .worked import fmt

__all__ = ["AttentionLab", "D_K_PRESETS"]

#: Decimals shown in each slider's readout (enough for every step).
READOUT = {"X": ".1f", "Wq": ".2f", "Wk": ".2f", "Wv": ".1f", "d_k": ".0f"}

#: d_k values one click away (the chapter's experiment drags d_k from 1 to 64).
D_K_PRESETS = (1, 2, 4, 8, 16, 32, 64)

#: Narrowest slider widget (label + track + readout): the track stays >= 120 px.  A table's
#: four sliders sit two by two (as the table's cells do) when there is room, else one a line.
SLIDER_WIDTH = "240px"

#: Width of the sliders' column: two sliders a line (a phone gets all of its width, one a line).
CONTROLS_WIDTH = "524px"

#: Scoped CSS for the ipywidgets controls (the view brings lab.css).  Only affects ``.f11-lab``.
#: ``f11-split`` is set by the view (widget.js) when the whole lab is at least 48rem wide, as on
#: the site's projector page: then the box is a grid, sliders | S, A, O stacked at 28 px, and the
#: rest of the view (its buttons, explanation, notes, Q/K/V, worked text) under both, full width.
#: The view's own wrappers take no box of their own there (display: contents), so its parts
#: become the grid's items.  At 1024x768 with JupyterLab's file browser folded away (Ctrl+B, as
#: lab.md tells the teacher) every slider and S, A, O fit on one screen.
CSS = """
<style>
.f11-lab { gap: 6px 12px; }
.f11-lab > .f11-controls { width: %(controls)s; max-width: 100%%; }
.f11-lab .f11-controls { font-size: 17px; }
.f11-lab .f11-controls .widget-label, .f11-lab .f11-controls .widget-readout,
.f11-lab .f11-controls .widget-toggle-button, .f11-lab .f11-controls .widget-button,
.f11-lab .f11-controls .widget-checkbox label { font-size: 17px !important; }
.f11-lab .f11-controls .widget-readout { min-width: 3.4em; }
.f11-lab .f11-controls .widget-slider .slider-container { flex: 1 1 120px; min-width: 120px; }
.f11-lab .f11-controls .f11-param-d_k { flex-wrap: wrap; height: auto; }
.f11-lab .f11-controls .f11-param-causal, .f11-lab .f11-controls .f11-param-causal label {
  height: auto; white-space: normal; line-height: 1.3; }
.f11-lab .f11-table { border: 1px solid #b9b9b9; border-radius: 6px; padding: 0 6px 2px; margin: 1px 2px; }
.f11-lab .f11-table-title { font-weight: 600; font-size: 17px; margin: 0 0 0 4px; line-height: 1.5; }
.f11-lab .f11-actions { gap: 2px 4px; }
.f11-lab .f11-row { display: flex; align-items: center; }
.f11-lab.f11-split { display: grid; grid-template-columns: auto auto; justify-content: start; align-items: start; }
.f11-lab.f11-split > .lm-Widget:not(.f11-controls),
.f11-lab.f11-split .attention-lab-jupyter.al-lab, .f11-lab.f11-split .al-lab .al-view { display: contents; }
.f11-lab.f11-split .al-lab .al-results { grid-column: 2; grid-row: 1; position: static; }
.f11-lab.f11-split .al-lab .al-main { grid-column: 1 / -1; grid-row: 2; }
.f11-lab.f11-split .al-lab :is(.al-results, .al-main) { background: var(--al-bg); border-radius: 6px; padding: 2px 4px; }
</style>
""" % {"controls": CONTROLS_WIDTH}


def dom_class(name: str) -> str:
    """CSS class of a control in the page: ``"Wq[0,1]"`` -> ``"f11-param-Wq-0-1"`` (for tests, styling)."""
    return "f11-param-" + re.sub(r"[^A-Za-z0-9_]+", "-", name).strip("-")


def _make_control_classes():
    import ipywidgets as widgets
    import traitlets

    class ParamSlider(widgets.FloatSlider):
        """A FloatSlider whose every new value (mouse, keyboard, readout, code) goes through
        :func:`params.coerce`; the value is always a valid float, whatever was given."""

        # Any: so that text, None or NaN reach the validator below instead of raising.
        value = traitlets.Any(0.0, help="Float value").tag(sync=True)

        def __init__(self, name: str, lab: AttentionLab, **kwargs):
            self._param_name = None  # plain clamping while ipywidgets sets min/max/value
            super().__init__(**kwargs)
            self._param_name = name
            self._lab = lab

        @traitlets.validate("value")
        def _validate_value(self, proposal):
            if self._param_name is None:
                return float(min(self.max, max(self.min, proposal["value"])))
            value, note = coerce(self._param_name, proposal["value"], current=self.value)
            # Round away binary noise from the browser's stepping (0.5 + 0.05 -> 0.5499999999999999),
            # so the worked text shows 0.55 exactly; 10 decimals keep any typed value.
            value = round(float(value), 10)
            self._lab._validated(self._param_name, note, changes=value != self.value)
            return value

    class ParamCheckbox(widgets.Checkbox):
        """The causal-mask box: any value given to it goes through :func:`params.coerce` too
        ("off", "0", False...); anything else is refused with a note and the box stays as it was."""

        value = traitlets.Any(True, help="Bool value").tag(sync=True)

        def __init__(self, lab: AttentionLab, **kwargs):
            self._lab = None
            super().__init__(**kwargs)
            self._lab = lab

        @traitlets.validate("value")
        def _validate_value(self, proposal):
            if self._lab is None:
                return bool(proposal["value"])
            value, note = coerce("causal", proposal["value"], current=self.value)
            self._lab._validated("causal", note, changes=value != self.value)
            return value

    return ParamSlider, ParamCheckbox


class AttentionLab:
    """Sliders for X, Wq, Wk, Wv, d_k and the causal mask; the site's view of S/A/O, Q/K/V and
    the worked text.

    ``params``: optional start values (``{name: value}``, names from
    ``params.PARAM_NAMES``); out-of-range values are clamped and unusable ones refused,
    each with a visible note.  ``row``: the query row to explain (0 = 我, 1 = 爱).
    """

    def __init__(self, params: dict | None = None, row: int = 1, tokens=TOKENS):
        import ipywidgets as widgets

        ParamSlider, ParamCheckbox = _make_control_classes()
        self.tokens = tuple(tokens)
        self.strings = strings()
        s_controls = self.strings["controls"]
        self._notes: dict[str, str] = {}  # per control: what was done with its last value
        self._holding = False
        self.update_count = 0

        start = default_params()
        if params is not None and not isinstance(params, Mapping):
            self._notes["?params"] = f"params 需要一个 {{参数名: 值}} 的字典，收到的 {type(params).__name__} 已忽略"
            params = None
        for name, raw in (params or {}).items():
            if name not in PARAM_NAMES:
                self._notes[f"?{name}"] = f"没有名为 {name!r} 的参数，已忽略（参数名见 attention_lab.params.PARAM_NAMES）"
                continue
            start[name], note = coerce(name, raw)
            if note:
                self._notes[name] = note
        if row not in (0, 1):
            self._notes["row"] = f"row 只能是 0（{self.tokens[0]}）或 1（{self.tokens[1]}），{row!r} 已改为 1"
            row = 1

        # --- controls -----------------------------------------------------------------
        self.controls: dict = {}
        table_boxes = []
        for t in (*TABLES, "d_k"):
            r = RANGES[t]
            names = [f"{t}[{i},{j}]" for i in range(2) for j in range(2)] if t != "d_k" else ["d_k"]
            cells = []
            for name in names:
                is_dk = name == "d_k"
                slider = ParamSlider(
                    name, self, value=start[name], min=r.min, max=r.max, step=r.step,
                    description=s_controls["d_k"] if is_dk else name[len(t):],
                    readout=True, readout_format=READOUT[t], continuous_update=True,
                    style={"description_width": "9.5em" if is_dk else "2.6em"},
                    layout=widgets.Layout(width="auto", min_width="0"),
                )
                slider.add_class(dom_class(name))
                self.controls[name] = slider
                cells.append(slider)
            if t == "d_k":
                break
            title = widgets.HTML(f'<div class="f11-table-title">{html.escape(s_controls["table_" + t])}</div>')
            box = widgets.VBox([title, widgets.GridBox(cells, layout=widgets.Layout(
                grid_template_columns=f"repeat(auto-fit, minmax(min(100%, {SLIDER_WIDTH}), 1fr))",
                grid_gap="0 6px"))])
            box.add_class("f11-table")
            table_boxes.append(box)
        d_k = self.controls["d_k"]
        # One click to each power of two (the slider itself reaches every integer 1..64).
        self.d_k_presets = widgets.ToggleButtons(
            options=[(str(v), v) for v in D_K_PRESETS], value=None, tooltips=[f"d_k = {v}" for v in D_K_PRESETS],
            style={"button_width": "3em"}, layout=widgets.Layout(width="auto"))
        self.d_k_presets.add_class("f11-dk-presets")
        self.d_k_presets.observe(self._on_preset, names="value")
        causal = ParamCheckbox(self, value=bool(start["causal"]), description=s_controls["causal"],
                               indent=False, layout=widgets.Layout(width="auto"))
        causal.add_class(dom_class("causal"))
        self.controls["causal"] = causal
        assert tuple(self.controls) == PARAM_NAMES, "controls must follow params.PARAM_NAMES"

        self.row_control = widgets.ToggleButtons(
            options=[(tok, k) for k, tok in enumerate(self.tokens)], value=row,
            description=s_controls["row"], style={"description_width": "5.5em", "button_width": "3.2em"},
            layout=widgets.Layout(width="auto"))
        self.row_control.add_class("f11-row")
        s_buttons = self.strings["buttons"]
        self.buttons = {
            None: widgets.Button(description=s_buttons["reset"], button_style="primary",
                                 layout=widgets.Layout(width="auto")),
            "only_wv": widgets.Button(description=s_buttons["only_wv"], layout=widgets.Layout(width="auto")),
            "only_wq": widgets.Button(description=s_buttons["only_wq"], layout=widgets.Layout(width="auto")),
        }
        for contrast, button in self.buttons.items():
            button.add_class("f11-button-" + (contrast or "reset"))
            button.on_click(lambda _b, c=contrast: self.set_params(default_params(c)))

        # --- the view (the site's renderer, in anywidget) -------------------------------
        self.view = LabView(row=row, state={})  # the state comes from _update below
        self.result = None

        options = widgets.VBox([d_k, self.d_k_presets, causal])
        actions = widgets.HBox([self.row_control, *self.buttons.values()],
                               layout=widgets.Layout(flex_flow="row wrap", align_items="center"))
        actions.add_class("f11-actions")
        controls_box = widgets.VBox([widgets.HTML(CSS), *table_boxes, options, actions],
                                    layout=widgets.Layout(flex="0 1 auto", min_width="0"))
        controls_box.add_class("f11-controls")
        # S, A, O beside the sliders when the lab is wide enough (class f11-split, set by the view:
        # a projector with the file browser folded away), the view under the sliders when not.
        self.view.layout = widgets.Layout(flex="1 1 100%", min_width="0")
        self.widget = widgets.HBox([controls_box, self.view],
                                   layout=widgets.Layout(flex_flow="row wrap", align_items="flex-start"))
        self.widget.add_class("f11-lab")

        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        self.row_control.observe(self._on_change, names="value")
        self._sync_preset()
        self._update()

    # --- state ----------------------------------------------------------------------------
    @property
    def params(self) -> dict:
        """The current values of every control, ``{name: value}``."""
        return {name: c.value for name, c in self.controls.items()}

    @property
    def row(self) -> int:
        return int(self.row_control.value)

    @property
    def notes(self) -> list[str]:
        """What the lab says now (shown in the view): refusals and clamping first, then the
        status messages (a value at its range end, d_k not the width, causal off)."""
        return self._notes_for(self.params)

    def _notes_for(self, params: dict) -> list[str]:
        return list(self._notes.values()) + self._messages(params)

    @contextmanager
    def hold(self):
        """Change several controls, recompute once at the end."""
        self._holding = True
        try:
            yield
        finally:
            self._holding = False
            self._update()

    def set_params(self, params: dict, row: int | None = None) -> None:
        """Set several controls at once (the buttons use this): all or nothing.

        Every name and value is checked first.  An unknown name or a value that cannot be used
        (text that is not a number, NaN, inf) changes nothing: the lab keeps its state, shows
        why, and raises ``ValueError``.  Out-of-range values are clamped with a note, as a slider
        does.
        """
        if not isinstance(params, Mapping):
            raise TypeError(f"set_params 需要一个 {{参数名: 值}} 的字典，收到 {type(params).__name__}")
        problems = []
        for name, raw in params.items():
            if name not in PARAM_NAMES:
                problems.append(f"没有名为 {name!r} 的参数")
            elif refused(name, raw):
                problems.append(coerce(name, raw, current=self.controls[name].value)[1])
        if row is not None and row not in (0, 1):
            problems.append(f"row 只能是 0 或 1，收到 {row!r}")
        if problems:
            message = "set_params 没有改动任何值：" + "；".join(problems)
            self._notes["set_params"] = message
            self._show_notes()  # shows the message; nothing else changed
            raise ValueError(message)
        coerced, notes = {}, {}
        for name, raw in params.items():
            coerced[name], note = coerce(name, raw, current=self.controls[name].value)
            if note:
                notes[name] = note
        self._notes.clear()
        with self.hold():
            for name, value in coerced.items():
                self.controls[name].value = value
            if row is not None:
                self.row_control.value = row
            self._notes.update(notes)

    # --- updates --------------------------------------------------------------------------
    def _validated(self, name: str, note: str | None, changes: bool) -> None:
        """Called by a slider's validator with what coerce said about its new value."""
        before = dict(self._notes)
        self._notes.pop("set_params", None)
        if note:
            self._notes[name] = note
        else:
            self._notes.pop(name, None)  # a later good value replaces the control's earlier note
        if not changes and not self._holding and self._notes != before:
            self._update()  # no change event will come: show the note now (it is never lost)

    def _on_change(self, change) -> None:
        owner = change.get("owner")
        if owner is self.controls["d_k"]:
            self._sync_preset()
        if owner is self.row_control:
            self._notes.pop("set_params", None)
        if not self._holding:
            self._update()

    def _on_preset(self, change) -> None:
        if change["new"] is not None and change["new"] != self.controls["d_k"].value:
            self.controls["d_k"].value = float(change["new"])

    def _sync_preset(self) -> None:
        d_k = self.controls["d_k"].value
        want = int(d_k) if d_k in D_K_PRESETS else None
        if self.d_k_presets.value != want:
            self.d_k_presets.value = want

    def _messages(self, params: dict) -> list[str]:
        s = self.strings["lab"]
        messages = []
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

    def _update(self) -> None:
        """Recompute from the controls' current values and hand the view its new state."""
        params = self.params
        notes = self._notes_for(params)  # one read of the controls per change
        try:
            result = attention(**tables_from_params(params))
            if not all(np.all(np.isfinite(getattr(result, k))) for k in ("Q", "K", "V", "A", "O")):
                raise ValueError("结果中出现了非有限的数")
        except (ValueError, TypeError, FloatingPointError, OverflowError) as exc:
            # Keep the last good tables on screen and say why they did not change.
            notes.insert(0, self.strings["lab"]["error"].replace("{message}", str(exc)))
            self._show_notes(notes)
            return
        self.result = result
        self.view.state = view_state(params, result, self.row, notes)
        self.update_count += 1

    def _show_notes(self, notes: list[str] | None = None) -> None:
        """Give the view new notes and nothing else (the tables it shows stay as they are)."""
        if self.result is not None:
            self.view.state = {**self.view.state, "notes": self.notes if notes is None else notes}

    # --- what is shown (for tests and scripts) -----------------------------------------
    def shown_notes(self) -> str:
        """The notes the view is showing, one per line."""
        return "\n".join(self.view.state.get("notes", []))

    # --- display --------------------------------------------------------------------------
    def _repr_mimebundle_(self, include=None, exclude=None):
        """Widget view for Jupyter, the static twin's HTML for the website, and plain text."""
        data = {}
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude)
        if isinstance(bundle, tuple):
            bundle = bundle[0]
        data.update(bundle or {})
        data["text/html"] = lab_html(self.params, self.row)
        data["text/plain"] = "AttentionLab: " + self.strings["lab"]["title"]
        return data

    def __repr__(self) -> str:
        return f"AttentionLab(row={self.row}, params={self.params!r})"
