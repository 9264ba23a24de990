"""The shapes lab (形状实验台): n queries, m keys, d_model, d_k ≠ d_v, self or cross attention,
a causal and a padding mask.  Its names, limits, defaults, ready examples and typed-value rules,
and the HTML root the site's ``static/attention-lab/shapes.js`` turns into the lab.

The mathematics is :func:`attention_lab.core.general_attention` (Python) and attention.js
``generalAttention`` (the site); the drawing is the one view, render.js.  One state, plain data::

    {"n": 2, "m": 2, "d_model": 2, "d_k": 2, "d_v": 2, "mode": "self", "causal": True, "pad": 0,
     "tables": {"X": [[1, 1], [1, -1]], "Xs": [[...]], "Wq": ..., "Wk": ..., "Wv": ...},
     "tokens": ["我", "爱"], "source_tokens": [...], "row": 1}

``Xs`` (the source side, m rows) is used in cross mode only (K and V come from it, Q from X);
in self mode m = n.  Cell values are named as the controls: ``X[0,1]``, ``Xs[2,0]``, ``Wv[1,2]``.
"""

from __future__ import annotations

import html
import json

from .core import BASELINE, TOKENS, general_attention
from .params import RANGES, coerce as _coerce_2x2
from .web import START_SCRIPT, strings

#: The shapes lab's files in load order (the 2x2 lab's app.js is not among them), as _config.yml lists them.
SHAPES_JS = ("attention.js", "render.js", "shapes.js")
SHAPES_CSS = ("lab.css", "shapes.css")

#: Shape controls and their limits (inclusive).  pad runs 0..m-1 (one key always readable).
LIMITS = {"n": (1, 6), "m": (1, 6), "d_model": (1, 4), "d_k": (1, 4), "d_v": (1, 4)}
SHAPE_KEYS = ("n", "m", "d_model", "d_k", "d_v")
TABLES = ("X", "Xs", "Wq", "Wk", "Wv")
#: A cell's range and step: the 2x2 lab's (Xs as X).
CELL_RANGES = {t: RANGES["X" if t == "Xs" else t] for t in TABLES}

#: Query-side tokens for new rows (the chapter's 我, 爱 first), and the source side's in cross mode.
DEFAULT_TOKENS = ("我", "爱", "读", "这", "本", "书")
DEFAULT_SOURCE_TOKENS = ("我", "爱", "读", "这", "本", "书")
DEFAULT_TARGET_TOKENS = ("I", "love", "to", "read", "this", "book")


def table_shape(name: str, state: dict) -> tuple[int, int]:
    """(rows, columns) of input table ``name`` in ``state``."""
    return {"X": (state["n"], state["d_model"]), "Xs": (state["m"], state["d_model"]),
            "Wq": (state["d_model"], state["d_k"]), "Wk": (state["d_model"], state["d_k"]),
            "Wv": (state["d_model"], state["d_v"])}[name]


def default_value(name: str, i: int, j: int) -> float:
    """What a new cell starts from, never random: the chapter's number where the 2x2 baseline has
    one (Xs: the chapter's X, as its cross-attention example), otherwise a small integer:
    X, Xs: ``(i + 2j) mod 3 - 1`` (-1, 0 or 1); Wq, Wk, Wv: 1 on the diagonal, 0 elsewhere.

    >>> default_value("X", 1, 1), default_value("Wv", 0, 1), default_value("X", 2, 0), default_value("Wk", 3, 3)
    (-1.0, 10.0, 1.0, 1.0)
    """
    base = BASELINE["X" if name == "Xs" else name]
    if i < 2 and j < 2:
        return float(base[i][j])
    if name in ("X", "Xs"):
        return float((i + 2 * j) % 3 - 1)
    return 1.0 if i == j else 0.0


def default_state() -> dict:
    """The 2x2 baseline: the chapter's tables, self-attention, causal on."""
    state = {"n": 2, "m": 2, "d_model": 2, "d_k": 2, "d_v": 2, "mode": "self", "causal": True, "pad": 0,
             "tokens": list(TOKENS), "source_tokens": list(DEFAULT_SOURCE_TOKENS[:2]), "row": 1}
    state["tables"] = {t: [[default_value(t, i, j) for j in range(table_shape(t, state)[1])]
                           for i in range(table_shape(t, state)[0])] for t in TABLES}
    return state


def _apple(tokens, X) -> dict:
    # Features (d_model = 3), chosen by hand, not learned: 0 食物, 1 科技, 2 "needs context".
    # Wq turns "needs context" into a query for food and tech alike; Wk and Wv read food and tech.
    return {"n": 3, "m": 3, "d_model": 3, "d_k": 2, "d_v": 2, "mode": "self", "causal": False, "pad": 0,
            "tokens": list(tokens), "source_tokens": list(DEFAULT_SOURCE_TOKENS[:3]), "row": 0,
            "tables": {"X": X, "Xs": [[1.0, 1.0, -1.0], [1.0, -1.0, 0.0], [0.0, 1.0, 1.0]],
                       "Wq": [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]],
                       "Wk": [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]],
                       "Wv": [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]}}


#: The ready examples (buttons on the page): the chapter's 2x2 baseline, and the chapter's opening
#: question, the same 苹果 in two encoder sentences (self-attention, no causal mask).  In the two
#: sentences 苹果 has the same features and the same Wq, Wk, Wv; only its neighbours differ.
EXAMPLES = {
    "baseline": default_state(),
    "apple_food": _apple(("苹果", "很", "好吃"), [[0.5, 0.5, 1.0], [0.0, 0.0, 0.0], [3.0, 0.0, 0.0]]),
    "apple_tech": _apple(("苹果", "发布了", "电脑"), [[0.5, 0.5, 1.0], [0.0, 1.0, 0.0], [0.0, 3.0, 0.0]]),
}


def coerce(name: str, raw, current=None) -> tuple[float, str | None]:
    """A typed cell value, as the 2x2 lab's :func:`attention_lab.params.coerce` (same grammar, ranges,
    clamping and notes), for any cell name ``X[i,j]``, ``Xs[i,j]``, ``Wq[i,j]``...

    >>> coerce("Xs[5,3]", "4")
    (3.0, 'Xs[5,3] 的范围是 −3 到 3，4 已改为 3')
    """
    table = name.split("[", 1)[0]
    if table not in TABLES:
        raise ValueError(f"unknown cell {name!r}; expected a cell of {', '.join(TABLES)}")
    proxy = ("X" if table == "Xs" else table) + "[0,0]"
    value, note = _coerce_2x2(proxy, raw, current if current is not None else 0.0)
    return value, note if note is None else name + note[len(proxy):]


def compute(state: dict):
    """The state's attention (:func:`attention_lab.core.general_attention`)."""
    t = state["tables"]
    return general_attention(t["X"], t["Wq"], t["Wk"], t["Wv"], source=t["Xs"] if state["mode"] == "cross" else None,
                             causal=bool(state["causal"]) and state["mode"] == "self", pad=int(state["pad"]))


def shapes_config(state: dict | None = None) -> dict:
    """Everything the site's shapes.js needs: limits, cell ranges, the default rules' tokens,
    the examples, the start state and the strings table."""
    return {
        "limits": {k: list(v) for k, v in LIMITS.items()},
        "ranges": {t: {"min": r.min, "max": r.max, "step": r.step} for t, r in CELL_RANGES.items()},
        # Every cell's start value at the largest shape (default_value), so new cells in the browser
        # start exactly where Python's would.
        "defaults": {t: [[default_value(t, i, j) for j in range(4)] for i in range(6 if t in ("X", "Xs") else 4)]
                     for t in TABLES},
        "default_tokens": list(DEFAULT_TOKENS),
        "default_source_tokens": list(DEFAULT_SOURCE_TOKENS),
        "default_target_tokens": list(DEFAULT_TARGET_TOKENS),
        "examples": EXAMPLES,
        "start": state or default_state(),
        "strings": strings(),
    }


def shapes_html(state: dict | None = None) -> str:
    """The shapes lab's root on the site: ``[data-attention-lab][data-shapes-lab]`` with its config
    as inert JSON (``data-shapes-lab-config``: the 2x2 lab's app.js leaves the root alone)."""
    config = shapes_config(state)
    fallback = html.escape(config["strings"]["twin"]["fallback"])
    failed = html.escape(config["strings"]["faults"]["load_failed"], quote=True)
    data = json.dumps(config, ensure_ascii=False, allow_nan=False).replace("<", "\\u003c")
    start = START_SCRIPT.replace("AttentionLab", "AttentionShapesLab")
    return (
        '<div class="attention-lab-static" data-attention-lab data-shapes-lab>'
        f'<script type="application/json" data-shapes-lab-config>{data}</script>'
        f'<p class="al-fallback" data-failed="{failed}" data-attention-lab-fallback>{fallback}</p>'
        f"</div><script>{start}</script>"
    )


class ShapesLabHTML:
    """What a page cell shows: the shapes lab's root as ``text/html``."""

    def __init__(self, state: dict | None = None):
        self.state = state

    def _repr_html_(self) -> str:
        return shapes_html(self.state)


def resized(state: dict, **change) -> dict:
    """``state`` with shapes/mode/pad changed as the controls change them: cells that remain keep
    their values, new cells and tokens take the defaults (as shapes.js ``fit``)."""
    out = {**state, **change, "tables": {}}
    m_keys = out["m"] if out["mode"] == "cross" else out["n"]
    for t in TABLES:
        old = state["tables"].get(t) or []
        rows, cols = table_shape(t, out)
        out["tables"][t] = [[old[i][j] if i < len(old) and j < len(old[i]) else default_value(t, i, j)
                             for j in range(cols)] for i in range(rows)]
    out["tokens"] = (list(state["tokens"]) + list(DEFAULT_TOKENS[len(state["tokens"]):]))[:out["n"]]
    src = list(state["source_tokens"])
    out["source_tokens"] = (src + list(DEFAULT_SOURCE_TOKENS[len(src):]))[:out["m"]]
    out["pad"] = min(out["pad"], m_keys - 1)
    out["row"] = min(out["row"], out["n"] - 1)
    if out["mode"] == "cross":
        out["causal"] = False
    return out


def walkthrough() -> list[dict]:
    """The page's suggested experiments, one after another from the 2x2 baseline (book/shapes.md
    quotes their shapes; scripts/verify_concepts.py and the browser test check them): a third
    token; d_v = 3; cross-attention with m = 4; the last key padded."""
    s1 = resized(default_state(), n=3, m=3)
    s2 = resized(s1, d_v=3)
    s3 = resized(s2, mode="cross", m=4)
    s4 = resized(s3, pad=1)
    return [s1, s2, s3, s4]
