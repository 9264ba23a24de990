"""The shapes lab (形状实验台) in Jupyter: ipywidgets controls for the shapes and the values, the
site's view, the core's numbers.  The 2x2 lab's pattern (:mod:`attention_lab.lab`), for n x m.

One model.  The reader's values live in the controls' widget models: sliders for n, m, d_model,
d_k, d_v, h (heads) and pad, a toggle for self / cross, a box for the causal mask, and one number box per
cell of X, Xs, Wq, Wk, Wv, Wo at the largest shape (:data:`attention_lab.shapes.MAX_TABLE`: X 6 x 4,
Wq 4 x 16 for 4 heads of width 4, Wo 16 x 4; the cells outside the current shape are hidden,
keeping their values, so a shape change is never a round trip; Wo only shows with h > 1).  The view
(:class:`ShapesLabView`: the site's ``attention.js`` + ``render.js`` + the glue
``shapes_widget.js``) reads those models in the browser and redraws with attention.js
``generalAttention`` at once; the kernel receives the same values and keeps
:attr:`ShapesLab.result` (:func:`attention_lab.core.general_attention` of :attr:`ShapesLab.state`).

What the controls mean (Python :func:`state_from_values` and the glue's ``stateOf`` alike):
in self mode m = n and Xs is unused; the causal box only applies in self mode (in cross mode it
is hidden and keeps its value, so going back to self mode brings the mask back as it was: the
site's rule, attention_lab.shapes); the effective pad is
``min(pad, keys - 1)`` (one key always readable; the glue also brings the pad slider down when
the keys shrink, as the reader's own change); the row explained is ``min(row, n - 1)``.

Contract::

    lab = ShapesLab()                     # or ShapesLab("apple_food"), ShapesLab(state_dict)
    lab.controls["n"].value = 3           # a control move (values set from code are coerced, with a note)
    lab.controls["Wv[1,2]"].value = 4
    lab.state                             # the effective state (attention_lab.shapes' plain data)
    lab.result                            # general_attention(...) of that state
    lab.notes                             # notes on values set from code that were changed
    lab.load("apple_tech")                # an example (or a state dict), all controls at once
    lab.token_boxes["tokens"][2].value = "苹果"   # a token's name (checked: shapes.coerce_token, with a note)
    lab.link                              # the site's address of this state (shapes.link)
    lab.worked                            # the worked lines of the row explained (shapes.worked)

Token names are text boxes in the rows of X and Xs (as on the site); a name is checked by the
kernel (control characters dropped, at most 8 characters, empty -> the default, each with a
note) and reaches the view through its ``tokens`` / ``source_tokens``.  The link: Jupyter has no
address of its own to put the state in, so 复制链接 shows the site's address of the same state
(the same query as the site's copy link, :func:`attention_lab.shapes.to_query`) in a text box to
copy; its page is ``link_base`` (default :data:`attention_lab.shapes.SITE_SHAPES_PAGE`, the book's
GitHub Pages address; pass your own for a copy of the site hosted elsewhere).
"""

from __future__ import annotations

import copy
import html
import json
import math

import anywidget
import traitlets
from ipywidgets import widget_serialization

from .lab import JUPYTER_DARK, _round, dom_class
from .params import _short, coerce as coerce_2x2
from .shapes import (DEFAULT_SOURCE_TOKENS, DEFAULT_TOKENS, EXAMPLES, LIMITS, MAX_TABLE, SHAPE_KEYS,
                     SITE_SHAPES_PAGE, TABLES, coerce as coerce_cell, coerce_shape, coerce_token, compute, default_state,
                     default_value, link as site_link, shapes_config, shapes_html, table_shape, worked)
from .web import strings
from .widget import _static
from .strings import error_text

__all__ = ["ShapesLab", "ShapesLabView", "state_from_values", "MAX_SHAPE"]

#: Every control table at its largest shape (the number boxes that exist; the shape shows some).
MAX_SHAPE = dict(MAX_TABLE)
#: The controls that set the shape and the masks, in the order shown.
SHAPE_CONTROLS = ("n", "m", "d_model", "d_k", "d_v", "h", "mode", "causal", "pad")
CELL_NAMES = tuple(f"{t}[{i},{j}]" for t in TABLES for i in range(MAX_SHAPE[t][0]) for j in range(MAX_SHAPE[t][1]))

ESM_FILES = ("attention.js", "render.js", "shapes.js", "jupyter_glue.js", "shapes_widget.js")
CSS_FILES = ("lab.css", "shapes.css")


def _css_hiding() -> str:
    """Rules that show only the current shape: the glue sets ``data-rows-X="3"``, ``data-cols-X="2"``,
    ``data-mode`` on the lab's box (in the browser, at once); cells and rows past them are hidden."""
    rules = []
    for t, (rows, cols) in MAX_SHAPE.items():
        for r in range(1, rows):
            rules.append(", ".join(f'.f11-shapes[data-rows-{t}="{r}"] .f11-row-{t}-{i}' for i in range(r, rows)))
        for c in range(1, cols):
            rules.append(", ".join(f'.f11-shapes[data-cols-{t}="{c}"] .f11-col-{t}-{j}' for j in range(c, cols)))
    return ",\n".join(rules) + " { display: none !important; }"


#: Scoped CSS for the ipywidgets controls (the view brings lab.css + shapes.css).  Only affects
#: ``.f11-shapes``: S, A, O (with the view's step/predict buttons) first, as on the site; then the
#: shape controls in one wrapping row, the input tables side by side as many as fit; then the rest
#: of the view (the plane, Q, K, V, the worked text).  The view's wrappers take no box there
#: (display: contents), so its results and its main part are the lab's own rows, ordered around
#: the controls; the results do not stick to the top (in a notebook they would cover the controls
#: scrolled under them).  Q/K/V's change marks are 12 px at least (they were 9.9 px).  Dark:
#: JupyterLab's dark theme (``body[data-jp-theme-light="false"]``) gives the view the site's dark
#: colours, on JupyterLab's own background (--jp-* variables).
CSS = """
<style>
.f11-shapes { display: flex; flex-direction: column; gap: 4px; }
.f11-shapes > .f11-shapes-view, .f11-shapes > .f11-shapes-view > .al-lab,
.f11-shapes > .f11-shapes-view > .al-lab > .al-view { display: contents; }
.f11-shapes > .f11-shapes-view > .al-lab > .al-view > .al-results { order: -1; position: static; }
.f11-shapes > .f11-controls { order: 0; }
.f11-shapes > .f11-shapes-view > .al-lab > .al-view > .al-main { order: 1; }
.f11-shapes .al-lab.al-shapes[data-layout] .al-qkv :is(.al-d, .al-m) { font-size: max(12px, 0.75rem); }
body[data-jp-theme-light="false"] .f11-shapes .al-lab { """ + JUPYTER_DARK + """ }
.f11-shapes .f11-shape-row { flex-flow: row wrap; gap: 2px 12px; align-items: center; }
.f11-shapes .f11-shape-row .widget-slider { width: 15em; min-width: 0; margin: 0; }
.f11-shapes .f11-shape-row .widget-label { width: auto !important; min-width: 0; padding-right: 4px; }
.f11-shapes .f11-tables { flex-flow: row wrap; gap: 4px 10px; align-items: flex-start; }
.f11-shapes .f11-table { border: 1px solid #b9b9b9; border-radius: 6px; padding: 0 4px 2px; }
.f11-shapes .f11-table-title { font-weight: 600; margin: 0 0 0 2px; line-height: 1.4; }
.f11-shapes .f11-cell-row { gap: 2px; margin: 0; }
.f11-shapes .f11-cell { width: 4.2em; margin: 1px 0; }
.f11-shapes .f11-cell input { font-variant-numeric: tabular-nums; text-align: right; }
.f11-shapes .f11-row-label { width: 2.2em; text-align: right; padding-right: 3px; color: #555; }
.f11-shapes .f11-token { width: 5em; margin: 1px 2px 1px 0; }
.f11-shapes .f11-link-row { flex-flow: row wrap; align-items: center; gap: 2px 8px; }
.f11-shapes .f11-link { width: min(100%, 48em); }
.f11-shapes .f11-link input { font-family: monospace; font-size: 0.85em; }
.f11-shapes [data-linked] input { outline: 3px dashed #d0480f; }
.f11-shapes[data-mode="self"] .f11-table-Xs, .f11-shapes[data-mode="self"] .f11-param-m { display: none !important; }
.f11-shapes[data-mode="cross"] .f11-param-causal { display: none !important; }
.f11-shapes[data-heads="1"] .f11-table-Wo { display: none !important; }
""" + _css_hiding() + "\n</style>\n"


def state_from_values(values: dict, tokens=DEFAULT_TOKENS, source_tokens=DEFAULT_SOURCE_TOKENS, row: int = 1) -> dict:
    """The state the controls' values mean (``{control name: value}``): attention_lab.shapes'
    plain data, tables cut to the shape.  The glue's ``stateOf`` (shapes_widget.js) is the same rule."""
    s = {k: int(values[k]) for k in SHAPE_KEYS}
    s["mode"] = "cross" if values["mode"] == "cross" else "self"
    if s["mode"] == "self":
        s["m"] = s["n"]
    s["causal"] = bool(values["causal"])  # the box; applied in self mode only (shapes.compute)
    s["pad"] = max(0, min(int(values["pad"]), s["m"] - 1))
    s["tables"] = {t: [[_round(values[f"{t}[{i},{j}]"]) for j in range(table_shape(t, s)[1])]
                       for i in range(table_shape(t, s)[0])] for t in TABLES}
    s["tokens"] = list(tokens)[:s["n"]]
    s["source_tokens"] = list(source_tokens)[:s["m"]]
    s["row"] = max(0, min(int(row), s["n"] - 1))
    return s


def values_of(state: dict) -> dict:
    """Every control's value for ``state`` (cells outside its shape take the defaults)."""
    values = {k: state.get(k, 1) if k == "h" else state[k] for k in SHAPE_KEYS}
    values.update(mode=state.get("mode", "self"), causal=bool(state.get("causal")), pad=int(state.get("pad", 0)))
    for t in TABLES:
        table = state["tables"].get(t) or []
        for i in range(MAX_SHAPE[t][0]):
            for j in range(MAX_SHAPE[t][1]):
                inside = i < len(table) and j < len(table[i])
                values[f"{t}[{i},{j}]"] = float(table[i][j]) if inside else default_value(t, i, j)
    return values


def _full(tokens, defaults) -> list[str]:
    tokens = [str(t)[:8] for t in tokens][:6]
    return tokens + list(defaults[len(tokens):6])


def coerce_mode(raw, current: str = "self") -> tuple[str, str | None]:
    """The kind of attention set from code: "self" or "cross" (or the buttons' Chinese names);
    anything else is refused with a note and ``current`` kept.

    >>> coerce_mode(" Cross "), coerce_mode("交叉注意力")[0], coerce_mode(5)[0]
    (('cross', None), 'cross', 'self')
    """
    ss = strings()["shapes"]
    text = str(raw).strip() if isinstance(raw, str) else None
    for mode in ("self", "cross"):
        if text is not None and (text.lower() == mode or text in (ss[mode], _short_label(ss[mode]))):
            return mode, None
    return current, ss["mode_refused"].replace("{raw}", _short(raw)).replace("{value}", _short_label(ss[current]))


def _short_label(label: str) -> str:
    """A control's label without its explanation in （…）: "n（查询的个数）" -> "n"."""
    return label.split(strings()["punctuation"]["paren_open"])[0]


def _as_row(raw) -> int:
    """The row explained, from a state: a whole number (the lab keeps it inside the shape), else row 1."""
    try:
        value = float(raw)
    except (TypeError, ValueError, OverflowError):
        return 1
    return int(min(5, max(0, value))) if math.isfinite(value) else 1


def checked_values(values: dict, tokens, source_tokens) -> tuple[dict, list, list, dict]:
    """Every value a state gives the Jupyter lab, through the rules the controls apply when they are
    set (the shapes, then pad within the keys, mode, causal, every cell, the names): returns
    ``(values, tokens, source_tokens, {name: (value, note)})`` with a note for each value refused or
    changed, so ``ShapesLab(state)`` takes a state exactly as ``load`` and the site's link do."""
    out, notes = dict(values), {}
    base = default_state()

    def noted(name, value, note):
        out[name] = value
        if note:
            notes[name] = (value, note)

    for k in SHAPE_KEYS:
        noted(k, *coerce_shape(k, values.get(k, base.get(k, 1)), current=base.get(k, 1)))
    noted("mode", *coerce_mode(values.get("mode", "self")))
    keys = out["m"] if out["mode"] == "cross" else out["n"]
    noted("pad", *coerce_shape("pad", values.get("pad", 0), current=0, keys=keys))
    noted("causal", *coerce_2x2("causal", values.get("causal", True), current=True))
    for name in CELL_NAMES:
        t, (i, j) = name.split("[")[0], map(int, name[name.index("[") + 1:-1].split(","))
        noted(name, *coerce_cell(name, values[name], current=default_value(t, i, j)))
    names = {}
    for side, given, defaults in (("tokens", tokens, DEFAULT_TOKENS), ("source_tokens", source_tokens, DEFAULT_SOURCE_TOKENS)):
        given = list(given or [])[:6]
        names[side] = []
        for i, default in enumerate(defaults):
            if i < len(given):
                value, note = coerce_token(given[i], default)
                if note:
                    notes[f"{side}[{i}]"] = (value, note)
            else:
                value = default
            names[side].append(value)
    return out, names["tokens"], names["source_tokens"], notes


class ShapesLabView(anywidget.AnyWidget):
    """Q, K, V, S, A, O with their shapes, the worked text and the notes, drawn by ``render.js``
    from the values of the controls it is given (:class:`ShapesLab` keeps them as ipywidgets).

    Traits: ``config`` (once: :func:`attention_lab.shapes.shapes_config`), ``controls``
    (``{control name: widget}``), ``tokens`` / ``source_tokens`` (six names each; the shape shows
    the first n / m), ``row`` (the query row explained; a row header clicked in the view sets
    it), ``kernel_notes`` (``[{name, value, text}]``: shown while that control holds ``value``).
    """

    _esm = "\n".join(f"/* ---- {name} ---- */\n{_static(name)}" for name in ESM_FILES)
    _css = "\n".join(_static(name) for name in CSS_FILES)

    config = traitlets.Dict().tag(sync=True)
    controls = traitlets.Dict().tag(sync=True, **widget_serialization)
    tokens = traitlets.List().tag(sync=True)
    source_tokens = traitlets.List().tag(sync=True)
    row = traitlets.Int(1).tag(sync=True)
    kernel_notes = traitlets.List().tag(sync=True)


class ShapesLab:
    """Controls for n, m, d_model, d_k, d_v, h, self / cross, the causal mask, pad and every cell of
    X, Xs, Wq, Wk, Wv, Wo; the site's view of the shapes lab.  ``state``: a name of
    :data:`attention_lab.shapes.EXAMPLES`, a state dict, or None (the 2x2 baseline)."""

    def __init__(self, state: dict | str | None = None, link_base: str = SITE_SHAPES_PAGE):
        import ipywidgets as widgets

        from .web import strings

        self.strings = strings()
        ss = self.strings["shapes"]
        self._notes: dict[str, tuple] = {}
        self._holding = False
        self._loading = False
        self._syncing_tokens = False
        self.result = None
        self.update_count = 0
        self.link_base = link_base
        start = self._start(state)
        # The state's values through the controls' own rules (as load() and the site's link take them).
        values, tokens, source_tokens, self._notes = checked_values(
            values_of(start), start.get("tokens"), start.get("source_tokens"))
        start = {**start, "tokens": tokens, "source_tokens": source_tokens}
        lab = self

        class _Checked:
            """Mixin: a value set from code goes through the lab's rules (a cell: shapes.coerce, the
            2x2 lab's grammar and ranges; a shape: an integer in its limits); the browser's values
            are in range by construction (the sliders' limits; a cell's typed text is taken by the view,
            shapes_widget.js, with the site's coerce, and its note sent: _on_view_msg)."""

            def _checked(self, proposal):
                if getattr(self, "_f11_name", None) is None:
                    return proposal["value"]
                name, raw = self._f11_name, proposal["value"]
                if name == "pad":
                    value, note = coerce_shape(name, raw, self.value, keys=lab._keys())
                elif name in SHAPE_KEYS:
                    value, note = coerce_shape(name, raw, self.value)
                elif name == "causal":
                    value, note = coerce_2x2("causal", raw, current=self.value)
                elif name == "mode":
                    value, note = coerce_mode(raw, self.value)
                else:
                    value, note = coerce_cell(name, raw, current=self.value)
                lab._noted(name, value, note)
                return value

        def checked(base, trait):
            class Control(_Checked, base):
                value = trait.tag(sync=True)

                def __init__(self, name, **kwargs):
                    self._f11_name = None
                    super().__init__(**kwargs)
                    self._f11_name = name

                @traitlets.validate("value")
                def _validate_value(self, proposal):
                    return self._checked(proposal)

            return Control

        class AnyValue(traitlets.Any):
            """Any that sends None to the validator too (as attention_lab.lab's _AnyValue)."""

            allow_none = False

        # A cell is a text box (not BoundedFloatText: its <input type=number> takes no "−0.5" or
        # full-width digits, and ipywidgets clamps or drops what it cannot read without a word);
        # the view reads what is typed as the site does and sets the number on the model.
        Cell = checked(widgets.Text, AnyValue(0.0))
        Slider = checked(widgets.IntSlider, AnyValue(1))
        Flag = checked(widgets.Checkbox, AnyValue(True))
        Mode = checked(widgets.ToggleButtons, AnyValue("self"))

        class Name(widgets.Text):
            """A token's box: whatever code sets is a name (None is an empty one); the lab's
            _on_token then checks it (shapes.coerce_token) and says what it did."""

            value = AnyValue("").tag(sync=True)

            @traitlets.validate("value")
            def _validate_value(self, proposal):
                raw = proposal["value"]
                return "" if raw is None else raw if isinstance(raw, str) else str(raw)

        self.controls: dict = {}
        auto = widgets.Layout(width="auto")
        shape_row = []
        for k in SHAPE_CONTROLS:
            if k == "mode":
                c = Mode(k, options=[(ss["self"], "self"), (ss["cross"], "cross")], value=values[k],
                         style={"button_width": "auto"}, layout=auto)
            elif k == "causal":
                c = Flag(k, value=values[k], description=ss["causal"], indent=False, layout=auto)
            else:
                lo, hi = LIMITS.get(k, (0, 5))
                c = Slider(k, value=values[k], min=lo, max=hi, step=1, description=_short_label(ss[k]) if k != "pad" else "p",
                           tooltip=ss[k], continuous_update=True, style={"description_width": "initial"})
            c.add_class(dom_class(k))
            self.controls[k] = c
            shape_row.append(c)
        table_boxes = []
        self.token_boxes = {"tokens": [], "source_tokens": []}
        full_tokens = {"tokens": _full(start["tokens"], DEFAULT_TOKENS),
                       "source_tokens": _full(start["source_tokens"], DEFAULT_SOURCE_TOKENS)}
        for t in TABLES:
            rows_, cols_ = MAX_SHAPE[t]
            lines = []
            for i in range(rows_):
                if t in ("X", "Xs"):  # the row's token name, editable (as on the site)
                    side = "tokens" if t == "X" else "source_tokens"
                    box_ = Name(value=full_tokens[side][i], continuous_update=False,
                                        tooltip=ss["token_label"].replace("{i}", str(i)),
                                        layout=widgets.Layout(width="5em"))
                    box_.add_class("f11-token")
                    box_.add_class(f"f11-token-{t}-{i}")
                    box_.observe(lambda change, side=side, i=i: self._on_token(side, i, change), names="value")
                    self.token_boxes[side].append(box_)
                    cells = [box_]
                else:
                    cells = [widgets.HTML(f'<div class="f11-row-label">{i}</div>')]
                for j in range(cols_):
                    name = f"{t}[{i},{j}]"
                    c = Cell(name, value=values[name], continuous_update=False,
                             tooltip=name, layout=widgets.Layout(width="4.4em"))
                    c.add_class(dom_class(name))
                    c.add_class("f11-cell")
                    c.add_class(f"f11-col-{t}-{j}")
                    self.controls[name] = c
                    cells.append(c)
                line = widgets.HBox(cells)
                line.add_class("f11-cell-row")
                line.add_class(f"f11-row-{t}-{i}")
                lines.append(line)
            title = widgets.HTML(f'<div class="f11-table-title" data-f11-title="{t}">{html.escape(ss["table_" + t])}</div>')
            box = widgets.VBox([title, *lines])
            box.add_class("f11-table")
            box.add_class(f"f11-table-{t}")
            table_boxes.append(box)
        assert tuple(self.controls) == SHAPE_CONTROLS + CELL_NAMES

        self.buttons = {}
        for key in EXAMPLES:
            b = widgets.Button(description=ss["examples"][key], layout=auto)
            b.add_class(f"f11-example-{key}")
            b.on_click(lambda _b, k=key: self.load(k))
            self.buttons[key] = b

        self.view = ShapesLabView(config=shapes_config(start), controls=dict(self.controls),
                                  tokens=_full(start["tokens"], DEFAULT_TOKENS),
                                  source_tokens=_full(start["source_tokens"], DEFAULT_SOURCE_TOKENS),
                                  row=_as_row(start.get("row")), layout=widgets.Layout(min_width="0"))
        self.view.add_class("f11-shapes-view")
        shapes_box = widgets.HBox(shape_row)
        shapes_box.add_class("f11-shape-row")
        self.link_button = widgets.Button(description=ss["copy_link"], layout=auto)
        self.link_button.add_class("f11-copy-link")
        self.link_button.on_click(lambda _b: self.show_link())
        examples = widgets.HBox([*self.buttons.values(), self.link_button], layout=widgets.Layout(flex_flow="row wrap"))
        self.link_box = widgets.Text(value="", description=ss["link_jupyter"], style={"description_width": "initial"},
                                     layout=widgets.Layout(display="none"))
        self.link_box.add_class("f11-link")
        tables = widgets.HBox(table_boxes)
        tables.add_class("f11-tables")
        controls = widgets.VBox([widgets.HTML(CSS), shapes_box, examples, self.link_box, tables],
                                layout=widgets.Layout(min_width="0"))
        controls.add_class("f11-controls")
        self.widget = widgets.Box([controls, self.view])
        self.widget.add_class("f11-shapes")
        for c in self.controls.values():
            c.observe(self._on_change, names="value")
        self.view.observe(self._on_change, names=["tokens", "source_tokens", "row"])
        self.view.observe(self._sync_token_boxes, names=["tokens", "source_tokens"])
        self.view.on_msg(self._on_view_msg)
        self._update()

    @staticmethod
    def _start(state) -> dict:
        if state is None:
            return default_state()
        if isinstance(state, str):
            if state not in EXAMPLES:
                raise ValueError(f"unknown example {state!r}; expected one of {sorted(EXAMPLES)}")
            return copy.deepcopy(EXAMPLES[state])
        out = copy.deepcopy(state)
        for key, value in default_state().items():
            out.setdefault(key, value)
        return out

    # --- state ----------------------------------------------------------------------------
    @property
    def values(self) -> dict:
        """Every control's value, ``{name: value}``."""
        return {name: c.value for name, c in self.controls.items()}

    @property
    def state(self) -> dict:
        """What the controls mean now (:func:`state_from_values`): the state the view shows."""
        return state_from_values(self.values, self.view.tokens, self.view.source_tokens, self.view.row)

    @property
    def link(self) -> str:
        """The site's address of this state (:func:`attention_lab.shapes.link`, ``link_base``)."""
        return site_link(self.state, self.link_base)

    @property
    def worked(self) -> list[dict]:
        """The worked lines of the row explained, as the view shows them (:func:`attention_lab.shapes.worked`)."""
        return worked(self.state)

    def show_link(self) -> str:
        """复制链接: the link of this state in the text box under the buttons (shown), and returned."""
        url = self.link
        self.link_box.value = url
        self.link_box.layout.display = ""
        return url

    @property
    def notes(self) -> list[str]:
        return [note for _, note in self._notes.values()]

    def load(self, state: dict | str) -> None:
        """Set every control at once to ``state`` (an example's name or a state dict), drawn once."""
        start = self._start(state)
        values = values_of(start)
        self._notes.clear()
        self._holding = True
        try:
            with self.view.hold_sync():
                holds = [c.hold_sync() for c in self.controls.values()]
                for h in holds:
                    h.__enter__()
                try:
                    for name, value in values.items():
                        self.controls[name].value = value
                    _, tokens, source_tokens, checked = checked_values(
                        values, start.get("tokens"), start.get("source_tokens"))
                    self._notes.update({k: v for k, v in checked.items() if k.startswith(("tokens[", "source_tokens["))})
                    self.view.tokens = _full(tokens, DEFAULT_TOKENS)
                    self.view.source_tokens = _full(source_tokens, DEFAULT_SOURCE_TOKENS)
                    self.view.row = _as_row(start.get("row"))
                finally:
                    for h in reversed(holds):
                        h.__exit__(None, None, None)
        finally:
            self._holding = False
        self._update()

    def _keys(self) -> int:
        """How many keys the controls give now (m in cross mode, else n): pad leaves one to read."""
        c = self.controls
        return int(c["m"].value if c["mode"].value == "cross" else c["n"].value)

    # --- updates --------------------------------------------------------------------------
    def _noted(self, name: str, value, note: str | None) -> None:
        if note:
            self._notes[name] = (value, note)
        else:
            self._notes.pop(name, None)

    def _on_view_msg(self, _view, content, _buffers=None) -> None:
        """A message from the view: ``{"typed": {"name", "value", "text"}}``, a value the reader typed
        into a cell (shapes_widget.js took it with the site's coerce, attention.js, and set the
        cell's model to ``value``) and its note: kept and shown while the cell holds that value, as
        a note of a value set from code; ``text`` null: a valid value, the cell's note goes.
        Anything else is ignored."""
        typed = content.get("typed") if isinstance(content, dict) else None
        if not isinstance(typed, dict):
            return
        name, value, text = typed.get("name"), typed.get("value"), typed.get("text")
        if name not in self.controls or "[" not in name or not (text is None or isinstance(text, str)):  # a cell
            return
        value = _round(coerce_cell(name, value, current=self.controls[name].value)[0])
        self._noted(name, value, text[:300] if text else None)
        self._update()

    def _on_change(self, change) -> None:
        if change.get("owner") is not self.view:  # a control moved: a token's note has been read
            for key in [k for k in self._notes if k.startswith(("tokens[", "source_tokens["))]:
                del self._notes[key]
        if not self._holding:
            self._update()

    def _on_token(self, side: str, i: int, change) -> None:
        """A token's box changed: the name checked (shapes.coerce_token), the view given the list."""
        if self._holding or self._syncing_tokens:
            return
        fallback = (DEFAULT_TOKENS if side == "tokens" else DEFAULT_SOURCE_TOKENS)[i]
        value, note = coerce_token(change["new"], fallback)
        for key in [k for k in self._notes if k.startswith(("tokens[", "source_tokens["))]:
            del self._notes[key]  # one token's note at a time: the last name typed
        self._noted(f"{side}[{i}]", value, note)
        names = list(getattr(self.view, side))
        names[i] = value
        self._syncing_tokens = True
        try:
            if self.token_boxes[side][i].value != value:
                self.token_boxes[side][i].value = value
        finally:
            self._syncing_tokens = False
        if getattr(self.view, side) != names:
            setattr(self.view, side, names)  # -> _on_change: the notes and lab.result
        else:
            self._update()

    def _sync_token_boxes(self, change) -> None:
        """The view's names changed (an example, load): the boxes show them."""
        self._syncing_tokens = True
        try:
            for box_, name in zip(self.token_boxes[change["name"]], change["new"]):
                if box_.value != name:
                    box_.value = name
        finally:
            self._syncing_tokens = False

    def _update(self) -> None:
        state = self.state
        try:
            result = compute(state)
        except (ValueError, TypeError, FloatingPointError, OverflowError) as exc:
            message = error_text(exc, self.strings)  # Chinese, by the kind of refusal (strings_zh.json "errors")
            self._notes["error"] = (None, self.strings["shapes"]["error"].replace("{message}", message))
        else:
            self._notes.pop("error", None)
            self.result = result
            self.update_count += 1
        shown = [{"name": key if key in self.controls else None,
                  "value": None if value is None else (value if isinstance(value, (str, bool)) else _round(value)),
                  "text": note} for key, (value, note) in self._notes.items()]
        if self.view.kernel_notes != shown:
            self.view.kernel_notes = shown
        if self.link_box.layout.display != "none":  # a link shown stays the link of what is shown
            url = self.link
            if self.link_box.value != url:
                self.link_box.value = url

    # --- display --------------------------------------------------------------------------
    def _repr_mimebundle_(self, include=None, exclude=None):
        """The widget in Jupyter, the site's twin (text/html) on the website, and plain text."""
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude)
        if isinstance(bundle, tuple):
            bundle = bundle[0]
        data = dict(bundle or {})
        data["text/html"] = shapes_html(self.state)
        data["text/plain"] = "ShapesLab: " + self.strings["shapes"]["title"]
        return data

    def __repr__(self) -> str:
        return f"ShapesLab(state={json.dumps(self.state, ensure_ascii=False)})"
