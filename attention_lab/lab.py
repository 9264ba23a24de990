"""The classroom lab in Jupyter: ipywidgets controls, the site's view, the core's numbers.

One model.  The reader's values live in the controls' widget models (ipywidgets sliders, the
mask box, the row buttons).  The view (:class:`attention_lab.widget.LabView`, the website's own
``render.js`` + ``attention.js`` run by anywidget) holds references to those models and redraws
from them *in the browser*, at once, on every slider move: no round trip to the kernel for what
is shown, so a drag over a slow link looks as it does on the site.  The kernel receives the same
values, as every ipywidgets control sends them, and keeps :attr:`AttentionLab.result` (the core's
answer) and :attr:`AttentionLab.notes` for notebook code.  The kernel never "corrects" a value
the browser sent (they are in range by construction): nothing rewinds a slider behind the
reader's back.  Only a value set from code can be clamped or refused; then the kernel tells the
view the note through the view's one kernel-to-browser trait, ``kernel_notes``.

Contract (tests and the static twin rely on it)::

    lab = AttentionLab()
    lab.controls["Wq[1,0]"].value = 1.5   # a slider move (any value: it is coerced, with a note)
    lab.result                            # the current attention(...) result
    lab.notes                             # what the view says (refusals, clamps, status messages)
    lab.state                             # what the view shows: {params, result, row, notes}
    lab.widget                            # the root widget; display(lab) shows it
    lab.set_params({...})                 # several values at once, all or nothing

Bad input never raises from a control: everything given to a control (text, None, NaN, a huge
integer, a NumPy scalar) goes through :func:`attention_lab.params.coerce` (the same rules as the
site's number boxes), and the note saying so stays in ``lab.notes`` until that control takes a
new value.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping
from contextlib import ExitStack, contextmanager

import numpy as np

from .core import TOKENS, AttentionInputError, attention
from .params import D_K_POWERS, PARAM_NAMES, RANGES, TABLES, _short, coerce, default_params, refused, tables_from_params
from .strings import error_text, fill
from .web import lab_html, strings
from .widget import LabView, view_state
from .worked import fmt

__all__ = ["AttentionLab", "dom_class"]

#: Decimals shown in each slider's readout (enough for every step).
READOUT = {"X": ".1f", "Wq": ".2f", "Wk": ".2f", "Wv": ".1f", "d_k": ".0f"}

#: The view's colours in JupyterLab's dark theme (``body[data-jp-theme-light="false"]``; Notebook 7
#: too): the site's dark palette (lab.css ``html[data-theme="dark"] .al-lab``), on JupyterLab's own
#: background and text colours.  Both labs (the shapes lab's CSS uses it as well).
JUPYTER_DARK = (
    "--al-text: var(--jp-content-font-color1, #ced6dd); --al-muted: var(--jp-content-font-color2, #9ca4af);"
    " --al-bg: var(--jp-layout-color0, #14181e); --al-surface: var(--jp-layout-color2, #29313d);"
    " --al-border: var(--jp-border-color1, #48566b); --al-accent: #5fa8f0; --al-masked-bg: #3a3a3a;"
    " --al-masked-text: #ececec; --al-hatch: rgba(255, 255, 255, 0.16); --al-warn-bg: #3b3116;"
    " --al-warn-border: #d9a52b; --al-mark: #ff9b6b; --al-link: #8cc4ff;"
    " --al-c-x: #e6e6e6; --al-c-q: #7ab8ff; --al-c-k: #ffa066; --al-c-v: #6fd08a; --al-c-o: #d3a6ff;"
    " color-scheme: dark;")

#: Scoped CSS for the ipywidgets controls (the view brings lab.css).  Only affects ``.f11-lab``.
#: The lab is one grid: the sliders (four 2x2 tables, d_k, the mask, the row, the buttons) in
#: the first column, S, A, O (values at 28 px) in the second; under the sliders, beside S, A, O,
#: the view's step/predict buttons, its vector plane, the explanation and the notes (so the plane
#: is on screen with S, A, O), and Q/K/V and the worked text under both.  The
#: view's own wrappers take no box there (display: contents), so its parts become the grid's
#: items.  That grid fits the notebook's width with JupyterLab's file browser open at 1024x768
#: (about 600 px for the output), which is how Binder opens a notebook.  Narrower (a phone, a
#: split screen; class f11-stack, set by the view through onLayout) the view goes under the
#: sliders.
CSS = """
<style>
.f11-lab { gap: 2px 10px; --f11-slider-label: 2.5em; }
.f11-lab .f11-controls { font-size: 15px; min-width: 0; }
.f11-lab .f11-controls .widget-label, .f11-lab .f11-controls .widget-readout,
.f11-lab .f11-controls .widget-toggle-button, .f11-lab .f11-controls .widget-button,
.f11-lab .f11-controls .widget-checkbox label { font-size: 15px !important; }
.f11-lab .f11-controls .widget-slider { margin: 0; height: 26px; min-width: 0; }
.f11-lab .f11-controls .widget-slider > .widget-label { margin-right: 4px; }
.f11-lab .f11-controls .widget-readout { min-width: 3.15em; width: 3.15em; margin: 0; padding: 0 1px; text-align: right; overflow: visible; }
.f11-lab .f11-controls .widget-slider .slider-container { flex: 1 1 60px; min-width: 60px; margin-left: 4px; margin-right: 5px; }
.f11-lab .f11-controls .f11-param-causal, .f11-lab .f11-controls .f11-param-causal label {
  height: auto; white-space: normal; line-height: 1.25; margin: 0; }
.f11-lab .f11-table { border: 1px solid #b9b9b9; border-radius: 6px; padding: 0 4px 1px; margin: 0 0 2px; }
.f11-lab .f11-table-title { font-weight: 600; font-size: 15px; margin: 0 0 0 2px; line-height: 1.35; }
.f11-lab .f11-actions { gap: 2px 4px; }
.f11-lab .f11-actions .widget-button { height: 28px; padding: 0 8px; }
.f11-lab .f11-row { display: flex; align-items: center; }
.f11-lab .f11-controls [data-linked] { outline: 4px dashed #d0480f; outline-offset: 1px; border-radius: 3px; }
.f11-lab .f11-row .widget-toggle-button { height: 28px; }
.f11-lab:not(.f11-stack) { display: grid; grid-template-columns: minmax(0, 1fr) auto; align-items: start; }
.f11-lab:not(.f11-stack) > .lm-Widget:not(.f11-controls),
.f11-lab:not(.f11-stack) .attention-lab-jupyter.al-lab, .f11-lab:not(.f11-stack) .al-lab .al-view { display: contents; }
.f11-lab:not(.f11-stack) .al-lab .al-results { grid-column: 2; grid-row: 1 / span 3; position: static; }
.f11-lab:not(.f11-stack) .al-lab .al-main { display: contents; }
.f11-lab:not(.f11-stack) .al-lab .al-main > .al-toolbar { grid-column: 1; grid-row: 2; }
.f11-lab:not(.f11-stack) .al-lab .al-main > .al-info { grid-column: 1; grid-row: 3; margin: 0; --al-plane-h: 8.5rem; }
.f11-lab:not(.f11-stack) .al-lab .al-main > .al-detail { grid-column: 1 / -1; grid-row: 4; }
.f11-lab:not(.f11-stack) .al-lab :is(.al-results, .al-toolbar, .al-info, .al-detail) { background: var(--al-bg); border-radius: 6px; padding: 2px 4px; }
.f11-lab:not(.f11-stack) .al-lab .al-sao .al-cell { width: 3.3em; }
.f11-lab.f11-stack { display: flex; flex-flow: row wrap; }
.f11-lab.f11-stack > .f11-controls { flex: 1 1 100%; }
.f11-lab.f11-stack > .lm-Widget:not(.f11-controls) { flex: 1 1 100%; min-width: 0; }
.f11-lab.f11-stack .f11-param-d_k { flex-wrap: wrap; height: auto; }
.f11-lab.f11-stack .f11-param-d_k .widget-label { flex: 1 0 100%; text-align: left; }
.f11-lab.f11-stack .f11-table .widget-gridbox { grid-template-columns: repeat(auto-fit, minmax(min(100%, 240px), 1fr)) !important; }
body[data-jp-theme-light="false"] .f11-lab .al-lab { """ + JUPYTER_DARK + """ }
</style>
"""

#: Below this width (in px) of the whole lab, the view goes under the sliders (class f11-stack).
BESIDE_PX = 560


def dom_class(name: str) -> str:
    """CSS class of a control in the page: ``"Wq[0,1]"`` -> ``"f11-param-Wq-0-1"`` (for tests, styling)."""
    return "f11-param-" + re.sub(r"[^A-Za-z0-9_]+", "-", name).strip("-")


def _make_control_classes():
    import ipywidgets as widgets
    import traitlets

    class _AnyValue(traitlets.Any):
        """traitlets.Any that sends None to the validators too (Any takes None without asking them,
        and ``allow_none=False`` in its constructor is ignored)."""

        allow_none = False

    class _Coerced:
        """Mixin: every value given to the control (mouse, keyboard, readout, code) goes through
        :func:`params.coerce`.  A value the browser sent is in range, so it comes back unchanged
        (no rounding either: that would send a "correction" that rewinds a fast drag).  The note
        is handed to the lab; the validator changes nothing else."""

        def _coerced(self, proposal):
            if self._lab is None:  # ipywidgets is still setting min/max/value: plain clamping
                return proposal["value"]
            value, note = coerce(self._param_name, proposal["value"], current=self.value)
            self._lab._noted(self._param_name, value, note, changes=value != self.value)
            return value

    class ParamSlider(_Coerced, widgets.FloatSlider):
        """One entry of X, Wq, Wk or Wv."""

        # Any value reaches the validator below instead of raising (text, NaN, huge integers, None).
        value = _AnyValue(0.0, help="Float value").tag(sync=True)

        def __init__(self, name: str, lab: AttentionLab, **kwargs):
            self._lab = None
            self._param_name = name
            super().__init__(**kwargs)
            self._lab = lab

        @traitlets.validate("value")
        def _validate_value(self, proposal):
            return self._coerced(proposal)

    class DKSlider(_Coerced, widgets.FloatLogSlider):
        """d_k on the site's scale: the track stops at the powers of two 1, 2, ..., 64; the
        readout takes any integer 1..64 (typed), as the site's number box does."""

        value = _AnyValue(2.0, help="Float value").tag(sync=True)

        def __init__(self, lab: AttentionLab, **kwargs):
            self._lab = None
            self._param_name = "d_k"
            super().__init__(**kwargs)
            self._lab = lab

        @traitlets.validate("value")
        def _validate_value(self, proposal):
            return self._coerced(proposal)

    class ParamCheckbox(_Coerced, widgets.Checkbox):
        """The causal-mask box: "off", "0", False... are taken; anything else is refused with a note."""

        value = _AnyValue(True, help="Bool value").tag(sync=True)

        def __init__(self, lab: AttentionLab, **kwargs):
            self._lab = None
            self._param_name = "causal"
            super().__init__(**kwargs)
            self._lab = lab

        @traitlets.validate("value")
        def _validate_value(self, proposal):
            return self._coerced(proposal)

    class RowButtons(widgets.ToggleButtons):
        """The query row (0 or 1).  A value or index set from code that is no row (None, "x", 5,
        -1, 1.5, True, an object whose ``__str__`` raises) is refused with a note and the row
        stays as it was (ToggleButtons would raise TraitError, or take None and break
        :attr:`AttentionLab.row`); 0, 1, ``np.int64(0)``, ``"0"``, ``"1"`` and the row's token
        (``"我"``) are taken (the same rule as ``AttentionLab(row=...)`` and ``set_params``)."""

        value = _AnyValue(1, help="Selected value")
        index = _AnyValue(1, help="Selected index").tag(sync=True)
        label = _AnyValue(None, help="Selected label")

        def __init__(self, lab: AttentionLab, **kwargs):
            self._lab = None
            super().__init__(**kwargs)
            self._lab = lab

        def _checked(self, raw):
            if self._lab is None:  # ipywidgets is still setting the options
                return raw
            row = self._lab._row_of(raw)
            if row is None:
                current = self.index if self.index in (0, 1) else 1
                self._lab._row_refused(raw, current)
                return current
            self._lab._notes.pop("row", None)
            return row

        @traitlets.validate("value")
        def _validate_value(self, proposal):
            return self._checked(proposal["value"])

        @traitlets.validate("index")
        def _validate_index(self, proposal):
            return self._checked(proposal["value"])

        @traitlets.validate("label")
        def _validate_label(self, proposal):
            if self._lab is None:
                return proposal["value"]
            return self._options_labels[self._checked(proposal["value"])]

    return ParamSlider, DKSlider, ParamCheckbox, RowButtons


_fill = fill  # the catalog's one filler (attention_lab.strings.fill)


def _tokens_of(tokens) -> tuple[str, str] | None:
    """The row buttons' two labels: two different, non-empty strings; None for anything else."""
    if isinstance(tokens, (str, bytes)) or tokens is None:
        return None
    try:
        items = tuple(tokens)
    except Exception:  # not iterable, or an iterator that raises
        return None
    if len(items) != 2 or not all(isinstance(t, str) and t.strip() for t in items) or items[0] == items[1]:
        return None
    return tuple(str(t) for t in items)


def _round(value):
    """A control's value as the lab computes with it: binary noise of the browser's stepping
    (0.5 + 0.05 -> 0.5499999999999999) rounded away at 10 decimals, as the view does."""
    return value if isinstance(value, bool) else round(float(value), 10)


class AttentionLab:
    """Sliders for X, Wq, Wk, Wv, d_k and the causal mask; the site's view of S/A/O, Q/K/V and
    the worked text.

    ``params``: optional start values (``{name: value}``, names from
    ``params.PARAM_NAMES``); out-of-range values are clamped and unusable ones refused,
    each with a visible note.  ``row``: the query row to explain (0 = 我, 1 = 爱); anything
    else starts at row 1 with a note.  ``tokens``: the rows' two words (two different, non-empty
    strings); anything else (None, one word, three) is replaced by 我, 爱 with a note.
    ``scroll_into_view``: on its first drawing, the view scrolls the lab to the top of the
    notebook (the projector page ``book/lab.md``: after "Run All" the lab is what is on screen).
    """

    def __init__(self, params: dict | None = None, row: int = 1, tokens=TOKENS, scroll_into_view: bool = False):
        import ipywidgets as widgets

        ParamSlider, DKSlider, ParamCheckbox, RowButtons = _make_control_classes()
        self.strings = strings()
        s_lab = self.strings["lab"]
        s_controls = self.strings["controls"]
        #: Per control (or "?name" / "row" / "set_params"): what was done with the last value set
        #: from code, as ``(value it holds, note)``.  The view shows a control's note while the
        #: control still holds that value.
        self._notes: dict[str, tuple] = {}
        self.tokens = _tokens_of(tokens)
        if self.tokens is None:
            self.tokens = tuple(TOKENS)
            self._notes["?tokens"] = (None, _fill(s_lab["tokens_refused"], raw=_short(tokens),
                                                  tok0=TOKENS[0], tok1=TOKENS[1]))
        self._holding = False
        #: The note of the value last typed into a readout, as the view sent it:
        #: ``(name, value, note)`` (shown while that control holds ``value``), or None.
        self._typed: tuple | None = None
        self.update_count = 0
        self.result = None

        start = default_params()
        if params is not None and not isinstance(params, Mapping):
            self._notes["?params"] = (None, _fill(s_lab["params_not_dict"], type=type(params).__name__))
            params = None
        for name, raw in (params or {}).items():
            if name not in PARAM_NAMES:
                self._notes[f"?{_short(name)}"] = (None, _fill(s_lab["unknown_param"], name=_short(name)))
                continue
            start[name], note = coerce(name, raw)
            if note:
                self._notes[name] = (start[name], note)
        if self._row_of(row) is None:
            self._notes["row"] = (None, _fill(s_lab["row_start"], raw=_short(row),
                                              tok0=self.tokens[0], tok1=self.tokens[1]))
            row = 1
        row = self._row_of(row)

        # --- controls -----------------------------------------------------------------
        self.controls: dict = {}
        table_boxes = []
        for t in TABLES:
            r = RANGES[t]
            cells = []
            for name in (f"{t}[{i},{j}]" for i in range(2) for j in range(2)):
                slider = ParamSlider(
                    name, self, value=start[name], min=r.min, max=r.max, step=r.step,
                    description=name[len(t):], readout=True, readout_format=READOUT[t], continuous_update=True,
                    style={"description_width": "var(--f11-slider-label)"},
                    layout=widgets.Layout(width="auto", min_width="0"))
                slider.add_class(dom_class(name))
                self.controls[name] = slider
                cells.append(slider)
            title = widgets.HTML(f'<div class="f11-table-title">{html.escape(s_controls["table_" + t])}</div>')
            box = widgets.VBox([title, widgets.GridBox(cells, layout=widgets.Layout(
                grid_template_columns="repeat(2, minmax(0, 1fr))", grid_gap="0 4px"))])  # the table's shape
            box.add_class("f11-table")
            table_boxes.append(box)
        r = RANGES["d_k"]
        d_k = DKSlider(self, value=start["d_k"], base=2, min=0, max=math.log2(D_K_POWERS[-1]), step=1,
                       description=s_controls["d_k"], readout=True, readout_format=READOUT["d_k"],
                       continuous_update=True, style={"description_width": "initial"},
                       layout=widgets.Layout(width="auto", min_width="0"))
        d_k.add_class(dom_class("d_k"))
        self.controls["d_k"] = d_k
        causal = ParamCheckbox(self, value=bool(start["causal"]), description=s_controls["causal"],
                               indent=False, layout=widgets.Layout(width="auto"))
        causal.add_class(dom_class("causal"))
        self.controls["causal"] = causal
        assert tuple(self.controls) == PARAM_NAMES, "controls must follow params.PARAM_NAMES"

        self.row_control = RowButtons(
            self, options=[(tok, k) for k, tok in enumerate(self.tokens)], value=row,
            description=s_controls["row"], style={"description_width": "initial", "button_width": "2.6em"},
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

        # --- the view (the site's renderer, in anywidget), linked to the controls' models ----
        self.view = LabView(params=start, row=row, controls={**self.controls, "row": self.row_control},
                            beside_px=BESIDE_PX, scroll_into_view=bool(scroll_into_view))

        actions = widgets.HBox([self.row_control, *self.buttons.values()],
                               layout=widgets.Layout(flex_flow="row wrap", align_items="center"))
        actions.add_class("f11-actions")
        controls_box = widgets.VBox([widgets.HTML(CSS), *table_boxes, d_k, causal, actions],
                                    layout=widgets.Layout(min_width="0"))
        controls_box.add_class("f11-controls")
        self.view.layout = widgets.Layout(min_width="0")
        self.widget = widgets.Box([controls_box, self.view])
        self.widget.add_class("f11-lab")

        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        self.row_control.observe(self._on_change, names="value")
        self.view.on_msg(self._on_view_msg)
        self._update()

    # --- state ----------------------------------------------------------------------------
    @property
    def params(self) -> dict:
        """The current values of every control, ``{name: value}``, as the lab computes with them."""
        return {name: _round(c.value) for name, c in self.controls.items()}

    @property
    def row(self) -> int:
        value = self.row_control.value
        return value if value in (0, 1) else 1  # always 0 or 1 (RowButtons refuses anything else)

    @property
    def notes(self) -> list[str]:
        """What the lab says now (shown in the view): refusals and clamping first, then the
        status messages (a value at its range end, d_k not the width, causal off)."""
        return self._notes_for(self.params)

    @property
    def state(self) -> dict:
        """What the view shows now, computed here: ``{params, result, row, notes}`` (see
        :func:`attention_lab.widget.view_state`; masked cells are None)."""
        return view_state(self.params, self.result, self.row, self.notes)

    def _notes_for(self, params: dict) -> list[str]:
        typed = self._typed if self._typed and params.get(self._typed[0]) == self._typed[1] else None
        kept = [note for key, (_, note) in self._notes.items() if not (typed and key == typed[0])]
        return kept + ([typed[2]] if typed else []) + self._messages(params)

    def _on_view_msg(self, _widget, content, _buffers=None) -> None:
        """A message from the view: ``{"typed": {"name", "value", "text"} | None}``, the note of a
        value the reader typed into a readout (the view took the value with the site's coerce and
        set it on the control; its note, if any, is the site's).  Kept for :attr:`notes` while the
        control holds that value; anything else is ignored."""
        if not isinstance(content, Mapping) or "typed" not in content:
            return
        typed = content["typed"]
        if typed is None:
            self._typed = None
            return
        if not isinstance(typed, Mapping):
            return
        name, value, text = typed.get("name"), typed.get("value"), typed.get("text")
        if name not in self.controls or not isinstance(text, str) or refused(name, value):
            return
        self._typed = (name, _round(coerce(name, value)[0]), text[:300])
        if self._notes.pop(name, None) is not None:
            self._publish_notes()  # the view shows the typed note in its place

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
            raise TypeError(_fill(self.strings["lab"]["set_params_not_dict"], type=type(params).__name__))
        s_lab = self.strings["lab"]
        problems = []
        for name, raw in params.items():
            if name not in PARAM_NAMES:
                problems.append(_fill(s_lab["set_params_unknown"], name=_short(name)))
            elif refused(name, raw):
                problems.append(coerce(name, raw, current=self.controls[name].value)[1])
        if row is not None and self._row_of(row) is None:
            problems.append(_fill(s_lab["row_set_params"], raw=_short(row)))
        if problems:
            message = _fill(s_lab["set_params_refused"], problems=self.strings["punctuation"]["semicolon"].join(problems))
            self._notes["set_params"] = (None, message)
            self._publish_notes()  # shows the message; nothing else changed
            raise ValueError(message)
        # The notes of the controls set here go (each gets its own again if coerce has one);
        # another control's note stays until that control takes a new value.  A typed value's
        # note goes, as on the site (a button or an example after it).
        self._typed = None
        for key in [k for k in self._notes if k in params or k not in self.controls]:
            del self._notes[key]
        with self.hold(), ExitStack() as held:
            # Every control's message goes out when all are set, back to back: the view sees one
            # burst and draws it once (its marks then show the whole step, e.g. a button's).
            for control in (*self.controls.values(), self.row_control):
                held.enter_context(control.hold_sync())
            for name, raw in params.items():
                control = self.controls[name]
                value, note = coerce(name, raw, current=control.value)
                if note is None and _round(value) == _round(control.value):
                    # The same value as far as the lab computes (−0.49999999999999956 from the
                    # browser's stepping is −0.5): no change, so nothing is sent back to the
                    # browser, where the reader may already have moved on (a kernel echo over a
                    # slow link would undo fast input).
                    continue
                control.value = raw  # coerced by the control, with its note
            if row is not None:
                self.row_control.value = self._row_of(row)

    # --- the row --------------------------------------------------------------------------
    def _row_of(self, raw) -> int | None:
        """The row ``raw`` names (0 or 1), or None when it names none: 0 and 1 (Python or NumPy
        integers, not True/False; 0.0 and 1.0), the text "0"/"1" and the row's token are rows."""
        if isinstance(raw, (bool, np.bool_)):
            return None
        if isinstance(raw, (int, np.integer)):
            try:
                return int(raw) if int(raw) in (0, 1) else None
            except Exception:  # an int subclass whose __int__ raises
                return None
        if isinstance(raw, (float, np.floating)):
            return int(raw) if raw in (0.0, 1.0) else None  # 1.0 is row 1; 1.5, NaN are none
        if isinstance(raw, str):
            text = raw.strip()
            if text in ("0", "1"):
                return int(text)
            if text in self.tokens:
                return self.tokens.index(text)
        return None

    def _row_refused(self, raw, current: int) -> None:
        """A row set from code that names no row: the row stays ``current``, and the note says so."""
        self._notes.pop("set_params", None)
        self._notes["row"] = (None, _fill(self.strings["lab"]["row_refused"], raw=_short(raw), row=str(current),
                                          tok=self.tokens[current], tok0=self.tokens[0], tok1=self.tokens[1]))
        if not self._holding:
            self._publish_notes()

    # --- updates --------------------------------------------------------------------------
    def _noted(self, name: str, value, note: str | None, changes: bool) -> None:
        """A control's validator says what coerce did with a new value: ``value`` is what the
        control will hold, ``note`` None when the value was taken as it is."""
        self._notes.pop("set_params", None)
        if note:
            self._notes[name] = (value, note)  # shown while the control holds this value
        else:
            self._notes.pop(name, None)  # a later good value replaces the control's earlier note
        if not changes and not self._holding:
            self._publish_notes()  # no change event will come: show the note now (it is never lost)

    def _on_change(self, change) -> None:
        owner = change.get("owner")
        if owner is self.row_control:
            self._notes.pop("set_params", None)
        if not self._holding:
            self._update()

    def _messages(self, params: dict) -> list[str]:
        # A value at a range end is legal: no note (a clamped typed value has its own, from coerce).
        s = self.strings["lab"]
        messages = []
        d_k = params["d_k"]
        if d_k == 1:
            messages.append(s["d_k_one"])
        if d_k != 2:
            messages.append(s["d_k_not_width"].replace("{d_k}", fmt(d_k)))
        if not params["causal"]:
            messages.append(s["causal_off_note"])
        return messages

    def _update(self) -> None:
        """Recompute from the controls' current values (the view has already drawn them)."""
        params = self.params
        try:
            result = attention(**tables_from_params(params))
            if not all(np.all(np.isfinite(getattr(result, k))) for k in ("Q", "K", "V", "A", "O")):
                raise AttentionInputError("overflow", "the result holds a number that is not finite")
        except (ValueError, TypeError, FloatingPointError, OverflowError) as exc:
            # Keep the last good result and say why it did not change.
            # In Chinese, by the kind of refusal (strings_zh.json "errors"), not the core's English.
            self._notes["error"] = (None, self.strings["lab"]["error"].replace("{message}", error_text(exc, self.strings)))
            self._publish_notes()
            return
        self._notes.pop("error", None)
        self.result = result
        self.update_count += 1
        self._publish_notes()

    def _publish_notes(self) -> None:
        """Give the view the notes only the kernel knows (values set from code, set_params, errors),
        each with the value its control holds; the view works out the status messages itself."""
        shown = [{"name": key if key in self.controls else None,
                  "value": None if value is None else _round(value), "text": note}
                 for key, (value, note) in self._notes.items()]
        if self.view.kernel_notes != shown:
            self.view.kernel_notes = shown

    # --- what is shown (for tests and scripts) -----------------------------------------
    def shown_notes(self) -> str:
        """The notes the view shows for the current values, one per line."""
        return "\n".join(self.notes)

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
