"""The shapes lab (形状实验台): n queries, m keys, d_model, d_k ≠ d_v, h heads joined by Wo, self or
cross attention, a causal and a padding mask.  Its names, limits, defaults, ready examples and typed-value rules,
and the HTML root the site's ``static/attention-lab/shapes.js`` turns into the lab.

The mathematics is :func:`attention_lab.core.general_attention` (Python) and attention.js
``generalAttention`` (the site); the drawing is the one view, render.js.  One state, plain data::

    {"n": 2, "m": 2, "d_model": 2, "d_k": 2, "d_v": 2, "h": 1, "mode": "self", "causal": True, "pad": 0,
     "tables": {"X": [[1, 1], [1, -1]], "Xs": [[...]], "Wq": ..., "Wk": ..., "Wv": ..., "Wo": ...},
     "tokens": ["我", "爱"], "source_tokens": [...], "row": 1}

``Xs`` (the source side, m rows) is used in cross mode only (K and V come from it, Q from X);
in self mode m = n.  ``causal`` is the reader's causal box: it applies in self mode only (cross
attention reads the whole source, as the chapter says); cross mode leaves it as it is, so going
back to self mode brings the mask back as it was (site, Jupyter and :func:`resized` alike).  Cell values are named as the controls: ``X[0,1]``, ``Xs[2,0]``, ``Wv[1,2]``.

Heads (issue 31), as PyTorch's ``nn.MultiheadAttention`` with head widths d_k and d_v: ``Wq`` and
``Wk`` are [d_model, h·d_k], ``Wv`` [d_model, h·d_v], ``Wo`` [h·d_v, d_model]; head t reads columns
t·d_k … of Q and K (t·d_v … of V), and ``Y = concat(O_0 … O_{h−1}) · Wo``
(:func:`attention_lab.core.multi_head_attention`).  h = 1 is the lab without heads: one head,
no projection, ``Wo`` kept (as ``Xs`` in self mode) but unused and not in the link, so every link
without ``h`` means what it always meant.  Unlike PyTorch, h·d_k need not be d_model.
"""

from __future__ import annotations

import html
import json
import math
import numbers
import re
from collections.abc import Mapping
from urllib.parse import quote

from .core import BASELINE, TOKENS, general_attention, multi_head_attention
from .worked import _fill, _sum_eq, factor, fmt, subscript, vec, worked_steps
from .params import RANGES, _short, coerce as _coerce_2x2, parse_number
from .plotting import colour_config
from .web import START_SCRIPT, noscript, strings

#: The shapes lab's files in load order (the 2x2 lab's app.js is not among them), as _config.yml lists them.
SHAPES_JS = ("attention.js", "render.js", "shapes.js")
SHAPES_CSS = ("lab.css", "shapes.css")

#: Shape controls and their limits (inclusive).  pad runs 0..m-1 (one key always readable).
LIMITS = {"n": (1, 6), "m": (1, 6), "d_model": (1, 4), "d_k": (1, 4), "d_v": (1, 4), "h": (1, 4)}
SHAPE_KEYS = ("n", "m", "d_model", "d_k", "d_v", "h")
TABLES = ("X", "Xs", "Wq", "Wk", "Wv", "Wo")
#: A cell's range and step: the 2x2 lab's (Xs as X; Wo as Wq: it mixes outputs, as Wq mixes features).
CELL_RANGES = {t: RANGES[{"Xs": "X", "Wo": "Wq"}.get(t, t)] for t in TABLES}
#: Every table at the largest shape (rows, columns): h = 4 heads of width 4 make Wq [4, 16].
MAX_TABLE = {"X": (6, 4), "Xs": (6, 4), "Wq": (4, 16), "Wk": (4, 16), "Wv": (4, 16), "Wo": (16, 4)}

#: Query-side tokens for new rows (the chapter's 我, 爱 first), and the source side's in cross mode:
#: a source sentence of its own, so cross-attention never looks like self-attention with the query's
#: names on the keys (issue 29).  As in an English-to-Chinese translation: the decoder writes
#: 我 爱 读 这 本 书 (the queries) while reading the encoder's I love to read this book (the keys).
DEFAULT_TOKENS = ("我", "爱", "读", "这", "本", "书")
DEFAULT_SOURCE_TOKENS = ("I", "love", "to", "read", "this", "book")
#: A token's name: at most this many characters (the site's boxes have maxlength 8).
TOKEN_MAX = 8

#: Where the book's shapes lab is on the web: the GitHub Pages address of ``repository.url`` in
#: _config.yml (https://github.com/f11-attention/f11-attention-book; tests/test_shapes_lab.py
#: checks that the two agree).  A copy hosted elsewhere passes its own: ``ShapesLab(link_base=...)``.
SITE_SHAPES_PAGE = "https://f11-attention.github.io/f11-attention-book/book/shapes.html"


#: What every state holds (``h`` may be missing: one head).
STATE_KEYS = ("n", "m", "d_model", "d_k", "d_v", "mode", "causal", "pad", "tables", "tokens", "source_tokens", "row")
#: What the computation itself reads (names and the row explained are for the text and the link).
COMPUTE_KEYS = STATE_KEYS[:9]


def _api(key: str, **values) -> str:
    return _fill(strings()["api"][key], **values)


#: Between the items of a list in a sentence (strings_zh.json "punctuation").
_LIST = strings()["punctuation"]["list"]


def check_state(state, where: str = "check_state", cells: bool = True, keys=STATE_KEYS) -> dict:
    """``state`` if it is a whole state of the shapes lab, else a clear Chinese ``ValueError``:
    not a dict (None), keys missing (``{}``), a shape outside :data:`LIMITS` (n = 10000), a table
    of the wrong shape, or (``cells``) a cell that is no finite number (NaN would be written into
    a link as "nan").  The public functions that take a state call it first."""
    if not isinstance(state, Mapping):
        raise ValueError(_api("state_type", where=where, type=type(state).__name__))
    missing = [k for k in keys if k not in state]
    if missing:
        raise ValueError(_api("state_missing", where=where, keys=_LIST.join(missing)))
    for key in SHAPE_KEYS:
        value = state.get(key, 1)
        lo, hi = LIMITS[key]
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not lo <= value <= hi:
            raise ValueError(_api("state_shape", where=where, name=key, min=lo, max=hi, raw=_short(value)))
    n_keys = state["m"] if state["mode"] == "cross" else state["n"]
    pad = state["pad"]
    if isinstance(pad, bool) or not isinstance(pad, numbers.Integral) or not 0 <= pad <= n_keys - 1:
        raise ValueError(_api("state_shape", where=where, name="pad", min=0, max=n_keys - 1, raw=_short(pad)))
    tables = state["tables"]
    needed = [t for t in TABLES if (t != "Xs" or state["mode"] == "cross") and (t != "Wo" or state.get("h", 1) > 1)]
    if not isinstance(tables, Mapping) or any(t not in tables for t in needed):
        raise ValueError(_api("state_missing", where=where,
                              keys=_api("tables_missing", names=_LIST.join(
                                  t for t in needed if not isinstance(tables, Mapping) or t not in tables))))
    for t in needed:
        rows, cols = table_shape(t, state)
        table = tables[t]
        if not (isinstance(table, (list, tuple)) and len(table) == rows
                and all(isinstance(r, (list, tuple)) and len(r) == cols for r in table)):
            raise ValueError(_api("state_table", where=where, name=t, rows=rows, cols=cols))
        if cells:
            for i, row in enumerate(table):
                for j, v in enumerate(row):
                    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                        raise ValueError(_api("state_cell", where=where, name=t, i=i, j=j, raw=_short(v)))
    return state


def table_shape(name: str, state: dict) -> tuple[int, int]:
    """(rows, columns) of input table ``name`` in ``state`` (h heads: Wq [d_model, h·d_k]...)."""
    if not isinstance(state, Mapping):
        raise ValueError(_api("state_type", where="table_shape", type=type(state).__name__))
    missing = [k for k in ("n", "m", "d_model", "d_k", "d_v") if k not in state]
    if missing:
        raise ValueError(_api("state_missing", where="table_shape", keys=_LIST.join(missing)))
    h = state.get("h", 1)
    return {"X": (state["n"], state["d_model"]), "Xs": (state["m"], state["d_model"]),
            "Wq": (state["d_model"], h * state["d_k"]), "Wk": (state["d_model"], h * state["d_k"]),
            "Wv": (state["d_model"], h * state["d_v"]), "Wo": (h * state["d_v"], state["d_model"])}[name]


def default_value(name: str, i: int, j: int) -> float:
    """What a new cell starts from, never random: the chapter's number where the 2x2 baseline has
    one (Xs: the chapter's X, as its cross-attention example), otherwise a small integer:
    X, Xs: ``(i + 2j) mod 3 - 1`` (-1, 0 or 1); Wq, Wk, Wv, Wo: 1 on the diagonal, 0 elsewhere
    (so at h = 2 the second head's columns start at 0, and Wo passes the first d_model columns on).

    >>> default_value("X", 1, 1), default_value("Wv", 0, 1), default_value("X", 2, 0), default_value("Wk", 3, 3)
    (-1.0, 10.0, 1.0, 1.0)
    >>> default_value("Wo", 1, 1), default_value("Wq", 0, 2)
    (1.0, 0.0)
    """
    base = BASELINE.get("X" if name == "Xs" else name)
    if base is not None and i < 2 and j < 2:
        return float(base[i][j])
    if name in ("X", "Xs"):
        return float((i + 2 * j) % 3 - 1)
    return 1.0 if i == j else 0.0


def default_state() -> dict:
    """The 2x2 baseline: the chapter's tables, self-attention, causal on."""
    state = {"n": 2, "m": 2, "d_model": 2, "d_k": 2, "d_v": 2, "h": 1, "mode": "self", "causal": True, "pad": 0,
             "tokens": list(TOKENS), "source_tokens": list(DEFAULT_SOURCE_TOKENS[:2]), "row": 1}
    state["tables"] = {t: [[default_value(t, i, j) for j in range(table_shape(t, state)[1])]
                           for i in range(table_shape(t, state)[0])] for t in TABLES}
    return state


def _apple(tokens, X) -> dict:
    # Features (d_model = 3), chosen by hand, not learned: 0 食物, 1 科技, 2 "needs context".
    # Wq turns "needs context" into a query for food and tech alike; Wk and Wv read food and tech.
    return _complete({"n": 3, "m": 3, "d_model": 3, "d_k": 2, "d_v": 2, "h": 1, "mode": "self", "causal": False, "pad": 0,
                      "tokens": list(tokens), "source_tokens": list(DEFAULT_SOURCE_TOKENS[:3]), "row": 0,
                      "tables": {"X": X, "Xs": [[1.0, 1.0, -1.0], [1.0, -1.0, 0.0], [0.0, 1.0, 1.0]],
                                 "Wq": [[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]],
                                 "Wk": [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]],
                                 "Wv": [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]}})


def _complete(state: dict) -> dict:
    """``state`` with every table at its shape: the ones not given (Wo at h = 1) from the defaults."""
    state["tables"] = {t: state["tables"].get(t) or [[default_value(t, i, j) for j in range(table_shape(t, state)[1])]
                                                     for i in range(table_shape(t, state)[0])] for t in TABLES}
    return state


def _two_heads() -> dict:
    """Two heads that read different tokens for a reason on the page: X's four features are chosen
    by hand, 0 猫, 1 狗 (what the token is) and 2, 3 where it is (the points (1, 0), (0, 1), (−1, 0) of a
    circle, a quarter turn apart).  Head 0's Wq and Wk read only the position: Wq turns it a quarter
    back, so q of position i points where position i − 1's k does: it reads the previous token.
    Head 1's read only the content: it reads the tokens that are the same word (猫 both 猫).  Both
    heads' Wv pass the content on; Wo is the identity, so Y is the two outputs side by side."""
    return _complete({
        "n": 3, "m": 3, "d_model": 4, "d_k": 2, "d_v": 2, "h": 2, "mode": "self", "causal": True, "pad": 0,
        "tokens": ["猫", "狗", "猫"], "source_tokens": list(DEFAULT_SOURCE_TOKENS[:3]), "row": 2,
        "tables": {"X": [[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 0.0, -1.0, 0.0]],
                   "Xs": [[default_value("Xs", i, j) for j in range(4)] for i in range(3)],
                   "Wq": [[0.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 2.0], [0.0, -2.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0]],
                   "Wk": [[0.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 2.0], [2.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]],
                   "Wv": [[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]],
                   "Wo": [[1.0 if i == j else 0.0 for j in range(4)] for i in range(4)]}})


def _heads_narrow() -> dict:
    """h·d_k = 2 ≠ d_model = 3 (PyTorch's nn.MultiheadAttention could not hold it): the 苹果 sentence's
    features (0 食物, 1 科技, 2 needs context), two heads of width d_k = d_v = 1.  Both queries come from
    "needs context"; head 0's key reads 食物, head 1's 科技, so head 0 looks for food words and head 1
    for tech words; each passes its own feature on (d_v = 1) and Wo [2, 3] puts them back as 食物 and 科技."""
    return _complete({
        "n": 3, "m": 3, "d_model": 3, "d_k": 1, "d_v": 1, "h": 2, "mode": "self", "causal": False, "pad": 0,
        "tokens": ["苹果", "发布了", "电脑"], "source_tokens": list(DEFAULT_SOURCE_TOKENS[:3]), "row": 0,
        "tables": {"X": [[0.5, 0.5, 1.0], [0.0, 1.0, 0.0], [0.0, 3.0, 0.0]],
                   "Xs": [[1.0, 1.0, -1.0], [1.0, -1.0, 0.0], [0.0, 1.0, 1.0]],
                   "Wq": [[0.0, 0.0], [0.0, 0.0], [2.0, 2.0]],
                   "Wk": [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]],
                   "Wv": [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]],
                   "Wo": [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]}})


#: The ready examples (buttons on the page): the chapter's 2x2 baseline, and the chapter's opening
#: question, the same 苹果 in two encoder sentences (self-attention, no causal mask).  In the two
#: sentences 苹果 has the same features and the same Wq, Wk, Wv; only its neighbours differ.  Then
#: two heads (issue 31): one reading the previous token, one the same word; and two narrow heads
#: (h·d_k ≠ d_model) looking for two kinds of words.
EXAMPLES = {
    "baseline": default_state(),
    "apple_food": _apple(("苹果", "很", "好吃"), [[0.5, 0.5, 1.0], [0.0, 0.0, 0.0], [3.0, 0.0, 0.0]]),
    "apple_tech": _apple(("苹果", "发布了", "电脑"), [[0.5, 0.5, 1.0], [0.0, 1.0, 0.0], [0.0, 3.0, 0.0]]),
    "two_heads": _two_heads(),
    "heads_narrow": _heads_narrow(),
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
    proxy = {"Xs": "X", "Wo": "Wq"}.get(table, table) + "[0,0]"
    value, note = _coerce_2x2(proxy, raw, current if current is not None else 0.0)
    return value, note if note is None else name + note[len(proxy):]


def _note_int(x: int) -> str:
    return str(x).replace("-", "\u2212")


def coerce_shape(name: str, raw, current: int | None = None, keys: int | None = None) -> tuple[int, str | None]:
    """A shape value (n, m, d_model, d_k, d_v, h) or pad as typed or set from code: an integer in its
    limits (pad: 0 to ``keys`` − 1, at least one key left to read).  The number grammar is the cells'
    (full-width digits, a decimal comma); a non-integer goes to the nearest integer (halves to even,
    as d_k and attention.js ``coerceShape``), a value outside the limits to the nearer end, each with
    a note; text that is no number (empty, "-", "e", NaN, 1e999) is refused and ``current`` kept.
    (value, note or None); shapes.js uses the same rule with the same notes.

    >>> coerce_shape("n", "4"), coerce_shape("n", 2.5), coerce_shape("n", "", current=3)
    ((4, None), (2, 'n 只能是 1 到 6 的整数，“2.5”已改为 2'), (3, 'n 需要一个整数，“”没有采用，仍为 3'))
    >>> coerce_shape("pad", 3, keys=2)
    (1, 'pad 只能是 0 到 1 的整数（m = 2，至少留一个键可读），“3”已改为 1')
    """
    ss = strings()["shapes"]
    if name == "pad":
        lo, hi = 0, (5 if keys is None else max(0, int(keys) - 1))
    elif name in LIMITS:
        lo, hi = LIMITS[name]
    else:
        raise ValueError(f"unknown shape {name!r}; expected one of {', '.join(SHAPE_KEYS)} or pad")
    keep = int(default_state()[name] if current is None else current)
    value = parse_number(raw)
    if math.isinf(value) and isinstance(raw, int) and not isinstance(raw, bool):
        value = float(hi if raw > 0 else lo)  # an integer too big for a float: clamped, as 99 is
    if not math.isfinite(value):
        return keep, _fill(ss["shape_refused"], name=name, raw=_short(raw), value=_note_int(keep))
    whole = min(hi, max(lo, int(round(value))))  # halves to even, as attention.js roundHalfEven
    if whole == value:
        return whole, None
    note = ss["link_pad"] if name == "pad" else ss["link_shape"]
    return whole, _fill(note, name=name, min=lo, max=hi, m=hi + 1, raw=_short(raw), value=whole)


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
        value, note = coerce_token(text.replace(",", strings()["punctuation"]["comma"]), default)
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
    it (n, mode and m, d_model, d_k, d_v, h, causal, pad, the tables row by row, row, tok, src).
    h and Wo only when h > 1: an address without them is the lab of one head, as before heads.
    A state that is not whole, or holds a cell that is no finite number, is refused
    (:func:`check_state`): a link never says "nan"."""
    check_state(state, "to_query")
    parts = [f"n={state['n']}"]
    cross = state["mode"] == "cross"
    heads = state.get("h", 1) > 1
    if cross:
        parts += ["mode=cross", f"m={state['m']}"]
    parts += [f"d_model={state['d_model']}", f"d_k={state['d_k']}", f"d_v={state['d_v']}"]
    if heads:
        parts.append(f"h={state['h']}")
    if not cross or not state["causal"]:
        parts.append(f"causal={1 if state['causal'] else 0}")
    parts.append(f"pad={state['pad']}")
    for t in TABLES:
        if (t != "Xs" or cross) and (t != "Wo" or heads):
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
    check_state(state, "link")
    return f"{base}?{to_query(state)}#shapes-lab"


def compute(state: dict):
    """The state's attention (:func:`attention_lab.core.general_attention`; with h > 1 heads
    :func:`attention_lab.core.multi_head_attention`, joined by Wo).  ``causal`` is the reader's
    causal box: applied in self mode only (cross-attention reads the whole source)."""
    check_state(state, "compute", cells=False, keys=COMPUTE_KEYS)  # the core refuses a bad cell with its own kind
    t = state["tables"]
    source = t["Xs"] if state["mode"] == "cross" else None
    causal, pad = bool(state["causal"]) and state["mode"] == "self", int(state["pad"])
    if state.get("h", 1) > 1:
        return multi_head_attention(t["X"], t["Wq"], t["Wk"], t["Wv"], Wo=t["Wo"], h=state["h"], source=source,
                                    causal=causal, pad=pad)
    return general_attention(t["X"], t["Wq"], t["Wk"], t["Wv"], source=source, causal=causal, pad=pad)


def projection_steps(result, row: int, tokens) -> list[dict]:
    """The sixth stage of a multi-head result's query ``row``: the heads' outputs concatenated,
    times Wo, Y (lines as :func:`attention_lab.worked.worked_steps`'; templates: strings_zh.json
    shapes.heads.worked), as attention.js ``projectionSteps`` writes them."""
    t = strings()["shapes"]["heads"]["worked"]
    i = int(row)
    o, y, Wo = result.O[i], result.Y[i], result.Wo
    common = {"i": i, "sub": subscript(i), "row_tok": tokens[i] if i < len(tokens) else str(i), "h": result.h}
    lines = []

    def add(kind, key, **values):
        line = {"kind": kind, "key": key, "stage": 6, "text": _fill(t[key], **{**common, **values})}
        if "c" in values:
            line["c"] = values["c"]
        lines.append(line)

    add("head", "step6")
    add("line", "concat", vec=vec(o))
    eqs = []
    for c in range(len(y)):
        expr = " + ".join(f"{factor(v)}×{factor(Wo[p, c])}" for p, v in enumerate(o))
        eqs.append(_sum_eq([(v, Wo[p, c]) for p, v in enumerate(o)], y[c]))
        add("line", "y_cell", c=c, expr=expr, eq=eqs[-1], value=fmt(y[c]))
    add("line", "y_output", eq="=" if all(e == "=" for e in eqs) else "≈", vec=vec(y))
    return lines


def worked(state: dict, row: int | None = None, head: int = 0) -> list[dict]:
    """The worked lines of query ``row`` (default: the state's row) as the lab shows them:
    :func:`attention_lab.worked.worked_steps` with the state's tokens, the source side's tokens for
    the keys in cross mode, and the padded keys' own line (``masked_pad``), as attention.js
    ``workedSteps`` writes them on the site and in Jupyter.  With h > 1 heads: head ``head``'s
    five stages, then the projection (:func:`projection_steps`)."""
    check_state(state, "worked", cells=False)
    keys = state["source_tokens"] if state["mode"] == "cross" else state["tokens"]
    row = state["row"] if row is None else row
    result = compute(state)
    if state.get("h", 1) > 1:
        return (worked_steps(result.heads[head], row, state["tokens"], keys, int(state["pad"]))
                + projection_steps(result, row, state["tokens"]))
    return worked_steps(result, row, state["tokens"], keys, int(state["pad"]))


def shapes_config(state: dict | None = None) -> dict:
    """Everything the site's shapes.js needs: limits, cell ranges, the default rules' tokens,
    the examples, the start state and the strings table."""
    return {
        "limits": {k: list(v) for k, v in LIMITS.items()},
        "ranges": {t: {"min": r.min, "max": r.max, "step": r.step} for t, r in CELL_RANGES.items()},
        # Every cell's start value at the largest shape (default_value), so new cells in the browser
        # start exactly where Python's would.
        "defaults": {t: [[default_value(t, i, j) for j in range(MAX_TABLE[t][1])] for i in range(MAX_TABLE[t][0])]
                     for t in TABLES},
        "default_tokens": list(DEFAULT_TOKENS),
        "default_source_tokens": list(DEFAULT_SOURCE_TOKENS),
        "examples": EXAMPLES,
        "start": state or default_state(),
        "strings": strings(),
        "colours": colour_config(),  # the cells' colormap and contrast rule (render.js reads them)
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
    check_state(state, "resized", cells=False)
    for key, value in change.items():
        if key in SHAPE_KEYS or key == "pad":
            if isinstance(value, bool) or not isinstance(value, int) or not LIMITS.get(key, (0, 5))[0] <= value <= LIMITS.get(key, (0, 5))[1]:
                lo, hi = LIMITS.get(key, (0, 5))
                raise ValueError(_api("resized_shape", name=key, lo=lo, hi=hi, value=repr(value)))
        elif key == "mode":
            if value not in ("self", "cross"):
                raise ValueError(_api("resized_mode", value=repr(value)))
        elif key not in ("causal", "row"):
            raise ValueError(_api("resized_unknown", keys=", ".join(SHAPE_KEYS), name=repr(key)))
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
