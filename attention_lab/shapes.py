"""The shapes lab (形状实验台): n queries, m keys, d_model, d_k ≠ d_v, self or cross attention,
a causal and a padding mask.  Its names, limits, defaults, ready examples and typed-value rules,
and the HTML root the site's ``static/attention-lab/shapes.js`` turns into the lab.

The mathematics is :func:`attention_lab.core.general_attention` (Python) and attention.js
``generalAttention`` (the site); the drawing is the one view, render.js.  One state, plain data::

    {"n": 2, "m": 2, "d_model": 2, "d_k": 2, "d_v": 2, "mode": "self", "causal": True, "pad": 0,
     "tables": {"X": [[1, 1], [1, -1]], "Xs": [[...]], "Wq": ..., "Wk": ..., "Wv": ...},
     "tokens": ["我", "爱"], "source_tokens": [...], "row": 1}

``Xs`` (the source side, m rows) is used in cross mode only (K and V come from it, Q from X);
in self mode m = n.  ``causal`` is the reader's causal box: it applies in self mode only (cross
attention reads the whole source, as the chapter says); cross mode leaves it as it is, so going
back to self mode brings the mask back as it was (site, Jupyter and :func:`resized` alike).  Cell values are named as the controls: ``X[0,1]``, ``Xs[2,0]``, ``Wv[1,2]``.
"""

from __future__ import annotations

import html
import json
import re
from urllib.parse import quote

from .core import BASELINE, TOKENS, general_attention
from .worked import worked_steps
from .params import RANGES, coerce as _coerce_2x2
from .web import START_SCRIPT, noscript, strings

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
#: A token's name: at most this many characters (the site's boxes have maxlength 8).
TOKEN_MAX = 8

#: Where the book's shapes lab is on the web: the GitHub Pages address of ``repository.url`` in
#: _config.yml (https://github.com/f11-attention/f11-attention-book; tests/test_shapes_lab.py
#: checks that the two agree).  A copy hosted elsewhere passes its own: ``ShapesLab(link_base=...)``.
SITE_SHAPES_PAGE = "https://f11-attention.github.io/f11-attention-book/book/shapes.html"


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


def coerce_token(raw, default: str) -> tuple[str, str | None]:
    """A token's name as the reader typed it: control characters dropped, spaces trimmed, an ASCII
    comma (the address's separator of names) made "，", at most :data:`TOKEN_MAX` characters; an
    empty name goes back to ``default``.  (value, note or None); shapes.js ``coerceToken`` is the
    same rule with the same notes.

    >>> coerce_token("  苹果 ", "我"), coerce_token("", "读")[0], coerce_token("一二三四五六七八九", "我")[0]
    (('苹果', None), '读', '一二三四五六七八')
    """
    ss = strings()["shapes"]
    text = re.sub(r"[\x00-\x1f\x7f-\x9f]", "", "" if raw is None else str(raw)).strip()
    if not text:
        return default, ss["token_empty"].replace("{value}", default)
    if "," in text:
        value, note = coerce_token(text.replace(",", "，"), default)
        return value, note or ss["token_comma"].replace("{raw}", text).replace("{value}", value)
    if len(text) > TOKEN_MAX:
        value = text[:TOKEN_MAX]
        shown = text if len(text) <= 24 else text[:24] + "…"
        return value, ss["token_long"].replace("{max}", str(TOKEN_MAX)).replace("{raw}", shown).replace("{value}", value)
    return text, None


def _js_number(x: float) -> str:
    """``String(x)`` of JavaScript for a table value (shapes.js writes the address with it)."""
    x = float(x)
    if x == 0:
        return "0"
    if x.is_integer() and abs(x) < 1e21:
        return str(int(x))
    text = repr(x)
    if "e" in text:  # 1e-07 -> 1e-7, 1e+21 stays
        mantissa, exponent = text.split("e")
        sign = "-" if exponent.startswith("-") else "+"
        text = f"{mantissa}e{sign}{int(exponent.lstrip('+-'))}"
    return text


def to_query(state: dict) -> str:
    """The address's query for ``state``, character for character as shapes.js ``toQuery`` writes
    it (n, mode and m, d_model, d_k, d_v, causal, pad, the tables row by row, row, tok, src)."""
    parts = [f"n={state['n']}"]
    cross = state["mode"] == "cross"
    if cross:
        parts += ["mode=cross", f"m={state['m']}"]
    parts += [f"d_model={state['d_model']}", f"d_k={state['d_k']}", f"d_v={state['d_v']}"]
    if not cross or not state["causal"]:
        parts.append(f"causal={1 if state['causal'] else 0}")
    parts.append(f"pad={state['pad']}")
    for t in TABLES:
        if t != "Xs" or cross:
            parts.append(t + "=" + ",".join(_js_number(v) for row in state["tables"][t] for v in row))
    parts.append(f"row={state['row']}")

    def names(tokens):
        return ",".join(quote(str(t), safe="-_.!~*'()") for t in tokens)

    parts.append("tok=" + names(state["tokens"]))
    if cross:
        parts.append("src=" + names(state["source_tokens"]))
    return "&".join(parts)


def link(state: dict, base: str = SITE_SHAPES_PAGE) -> str:
    """The site's address that opens ``state`` in the shapes lab (``base`` + ``?`` + :func:`to_query`,
    the lab's anchor ``#shapes-lab``), as the site's 复制链接 gives it."""
    return f"{base}?{to_query(state)}#shapes-lab"


def compute(state: dict):
    """The state's attention (:func:`attention_lab.core.general_attention`).  ``causal`` is the
    reader's causal box: applied in self mode only (cross-attention reads the whole source)."""
    t = state["tables"]
    return general_attention(t["X"], t["Wq"], t["Wk"], t["Wv"], source=t["Xs"] if state["mode"] == "cross" else None,
                             causal=bool(state["causal"]) and state["mode"] == "self", pad=int(state["pad"]))


def worked(state: dict, row: int | None = None) -> list[dict]:
    """The worked lines of query ``row`` (default: the state's row) as the lab shows them:
    :func:`attention_lab.worked.worked_steps` with the state's tokens, the source side's tokens for
    the keys in cross mode, and the padded keys' own line (``masked_pad``), as attention.js
    ``workedSteps`` writes them on the site and in Jupyter."""
    keys = state["source_tokens"] if state["mode"] == "cross" else state["tokens"]
    return worked_steps(compute(state), state["row"] if row is None else row, state["tokens"], keys, int(state["pad"]))


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
        f"{noscript(config['strings'])}</div><script>{start}</script>"
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
