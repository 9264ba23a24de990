"""The worked arithmetic for one query row, in Chinese: the chapter's hand computation and the lab's.

Text generation: :func:`worked_steps` takes an :class:`~attention_lab.core.AttentionResult`,
a query row and the tokens, and returns the lines as dicts (below); no widgets, no plotting.
The chapter prints one stage per section (:func:`worked_block` wraps :func:`worked_stage` in an
IPython ``Markdown`` block, the only object here that is not a string); the lab shows them (the
view in ``render.js`` asks the JavaScript twin, ``attention.js`` ``workedSteps``, which
reproduces them character for character), so the rules below are a contract.  Keep them stable.

Output of :func:`worked_steps`: a list of ``{"kind": ..., "key": ..., "stage": ..., "text": ...}`` dicts,
``kind`` one of ``"head"`` (a step's title), ``"line"`` (arithmetic) or
``"note"`` (a plain-language remark, e.g. about a masked position); ``key`` the
template's name (``"dot"``, ``"scaled"`` ...); lines about one key position or one
output column also carry ``"j"`` or ``"c"`` (an int).
:func:`worked_text` joins the texts with ``"\\n"``.

Every text comes from a template in ``strings_zh.json`` under ``"worked"``;
``{name}`` placeholders are replaced literally (no format specs).

Five stages, the same five as the lab's step-through (``view.stages``) and the formula
``S = QKᵀ/√d_k + M``: q·k → ÷√d_k → + M → softmax → × V.  A masked key is scored and
scaled like any other (its raw score is a number: for 我, q₀·k₁ = 1); the mask's −∞
first appears at stage 3.  :data:`STAGE` gives each template's stage.  The lines, in
order, for query row ``i`` (token ``T_i``) with keys ``j = 0..m-1``:

0. ``receiver``: once; ``readable`` for every key ``j`` the row may read, else ``note``
   ``masked_pad`` for one of the last ``pad`` keys (the shapes lab's padding mask) or
   ``masked_pos`` (the causal mask); its key is shown: it is still scored.
1. ``head`` ``step1``; ``dot`` per key (masked ones too); ``raw_scores``.
2. ``head`` ``step2``; ``scaled``; if ``d_k == 1`` also ``note`` ``no_scaling``.
3. ``head`` ``step3``; ``add_mask``; then a ``note`` ``mask_hides`` for every masked key,
   or one ``note`` ``mask_none`` when the row's mask is all 0.
4. ``head`` ``step4``; ``sub_max``; ``exp``; ``exp_sum``; ``shares``; then a
   ``note`` ``masked_share`` for every masked key, then a ``note`` ``tiny_share`` for every
   readable key whose share is written as a power of ten (see ``soft`` below).
5. ``head`` ``step5``; ``out_cell`` per output column ``c``; ``output``.

Placeholders:

* ``{tok}`` a token (``我``; on a key's line the key side's, ``key_tokens``, which differ from the
  query side's in cross-attention), ``{row_tok}`` the query row's token;
* ``{i}``, ``{j}``: indices as plain digits; ``{qi}``, ``{kj}``, ``{vj}``, ``{oi}``:
  ``q``/``k``/``v``/``o`` followed by the index in Unicode subscript digits
  (``₀₁₂₃₄₅₆₇₈₉``), e.g. ``q₁``;
* ``{c}``: output column index, plain digits;
* ``{d_k}``: ``fmt(d_k)`` (``2`` in the chapter);
* ``{q}``, ``{k}``, ``{v}``, ``{vec}``: vectors, see ``vec`` below;
* ``{order}``: the key tokens in column order, ``"[" + ", ".join(tokens) + "]"``
  (``[我, 爱]`` in the chapter);
* ``{expr}``, ``{value}``, ``{eq}``: see below.

Number and vector rules (``fmt``, ``factor``, ``vec``, ``eq``):

* ``fmt(x)`` is :func:`attention_lab.formatting.format_number` at its default 10 decimals
  (the figures' cells use the same function at 3): ``-inf`` -> ``"−∞"`` (U+2212), ``+inf`` ->
  ``"+∞"``, NaN -> ``"NaN"``; otherwise round to 10 decimals (Python ``f"{x:.10f}"``; JavaScript
  ``x.toFixed(10)``: the two agree except on exact ties, which lab values cannot
  produce), strip trailing ``0`` then a trailing ``.``, and turn ``"-0"`` into
  ``"0"``.  Negative numbers are written with the minus sign ``−`` (U+2212), the
  chapter's one minus sign.  So ``1.0`` -> ``"1"``, ``0.70710678118654`` ->
  ``"0.7071067812"``, ``-0.5`` -> ``"−0.5"``, ``-1e-12`` -> ``"0"``.
* ``factor(x)``: ``fmt(x)``, wrapped in parentheses when it starts with ``−``:
  ``"(−0.5)"``.
* ``vec(xs)``: ``"[" + ", ".join(fmt(x)) + "]"``, e.g. ``"[0.6697615493, 0.3302384507]"``.
* ``exact(x)``: ``x`` is infinite, or ``fmt(x)`` parses back (``float`` /
  ``parseFloat``, ``−`` read as ``-``) to ``x`` within ``1e-12 * max(1, |x|)`` (float noise): the
  shown text *is* the number.
* ``shown(text)``: the exact rational value of a shown decimal (Python
  ``Fraction``; JavaScript a ``BigInt`` with a decimal scale), no floats involved.
* ``eq`` is ``"="`` only when the line is true as written, at the shown
  precision: the chapter's rule (its arithmetic uses unrounded values, so where
  hand arithmetic on the shown numbers would not give the shown result it writes
  ``"≈"``).  Per line:

  - ``dot``: ``exact(raw)`` and ``Σ shown(q[t])·shown(k[t]) == shown(fmt(raw))``;
  - ``scaled``: for every key ``exact(raw/√d_k)`` and the shown quotient is
    exact: ``shown(raw)² == shown(scaled)²·shown(d_k)`` with the same sign (so
    ``1/√1 = 1`` and ``2/√4 = 1``, but ``1/√2 ≈ 0.7071067812``);
  - ``add_mask``: for every key whose score stays finite, ``shown(scaled) + shown(M) ==
    shown(S)`` (a masked key's ``x + (−∞) = −∞`` always holds; adding 0 changes no digit,
    so ``[0.7071067812, 0] + [0, 0] = [0.7071067812, 0]`` is true as written);
  - ``out_cell``: ``exact(O[c])`` and ``Σ shown(soft(A[j]))·shown(V[j,c]) == shown(fmt(O[c]))``
    (so a saturated row's ``(1 − 3.2×10⁻¹⁰⁰)×30 + (3.2×10⁻¹⁰⁰)×0`` is ``≈ 30``)
    (``0.7310585786×10 + 0.2689414214×0`` is 7.310585786, so it is ``≈ 7.3105857863``);
  - ``output``: ``"="`` only when every ``out_cell`` line above it is ``"="`` (the
    vector is those cells' results; ``exact`` alone would accept 7.3105857863 for
    10e/(e+1) = 7.31058578630005…, whose remainder looks like float noise).
  - ``{eq_q}`` (``receiver``), ``{eq_k}``, ``{eq_v}`` (``readable``): ``exact`` over
    that vector, for templates that write ``{qi}{eq_q}{q}``; templates with a literal
    ``=`` simply do not use them.

The expressions:

* ``dot`` ``{expr}``: ``"+".join(factor(q[t]) + "×" + factor(k[t]))`` over the
  width, no spaces (``1×1+0×0``); ``{value}``: ``fmt(raw score)`` (``raw_scores``,
  i.e. ``Q @ K.T`` before scaling and masking); ``{eq}`` over that raw score.
* ``raw_scores`` ``{vec}``: the raw scores of every key (masked ones too).
* ``scaled`` ``{expr}``: ``"[" + ", ".join(fmt(raw) + "/√" + fmt(d_k)) + "]"``;
  ``{vec}``: the scaled scores ``raw / √d_k`` (``np.sqrt``, as the core divides).
* ``add_mask`` ``{scaled}``: the scaled scores; ``{mask}``: the row of ``M``
  (``result.M``; the JavaScript twin, given a result without ``M``, uses −∞ where ``S``
  is −∞ and 0 elsewhere: the causal mask, all the lab has); ``{vec}``: ``S[i]``.
* ``mask_hides`` ``{value}``: that key's scaled score, ``fmt``.
* ``sub_max`` ``{vec}``: ``S[i] - max(S[i])`` (masked stay ``−∞``); ``exp`` ``{vec}``:
  ``exp`` of those (masked -> ``0``); ``exp_sum`` ``{value}``: their sum (added
  left to right); ``shares`` ``{vec}``: ``A[i]`` from the core; all three as ``soft`` writes
  them (below: a tiny one as its power of ten, not ``0``).
* ``out_cell`` ``{expr}``: ``" + ".join(soft(A[i,j]) + "×" + factor(V[j,c]))`` over
  readable keys only (spaces around ``+``; a share written as a power, in parentheses:
  ``(3.2×10⁻¹⁰⁰)×0``); ``{eq}`` over ``O[i,c]`` with the shares' shown values; ``{value}``:
  ``fmt(O[i,c])``.
* ``tiny_share`` ``{tok}``, ``{j}``: the key; ``{value}``: its share as written (a power).

Softmax texts (``soft``, :func:`softmax_texts`): ``exp`` can be tiny but never 0 on a readable
key, and a share is never 1 while another key is readable, so where ``fmt`` would write one of
those as ``"0"`` or ``"1"`` the line says what it is instead.  With ``LN10 = log(10)`` and
``lse(js) = t + log(Σ exp(shifted[j] − t))`` (``t`` the largest of them, terms added left to
right), computed from the shifted scores so that a number below the smallest float is written too:

* an exponential ``fmt(exp) == "0"`` of a readable key: ``format_power(shifted[j] / LN10)``
  (:func:`attention_lab.formatting.format_power`: ``3.2×10⁻¹⁰⁰``);
* the sum, ``fmt(total) == "1"`` with two or more readable keys: ``"1 + " +
  format_power(lse(others) / LN10)``, the others being the readable keys but the maximum;
* a share ``fmt(A[j]) == "0"`` of a readable key: ``format_power((shifted[j] − log(total)) / LN10)``;
  ``fmt(A[j]) == "1"`` with another readable key: ``"1 − " + format_power((lse(the other
  readable keys) − log(total)) / LN10)``;
* everything else, and every masked key (exactly 0): ``fmt``.
``shown`` reads these texts exactly too (:func:`attention_lab.formatting.power_value`).
* ``output`` ``{eq}`` over the whole row ``O[i]``; ``{vec}``: ``O[i]``.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from functools import lru_cache
from importlib import resources

import numpy as np

from .core import TOKENS, AttentionResult, softmax_steps
from .formatting import WORKED_DIGITS, format_number, format_power, power_value
from .strings import fill

__all__ = ["fmt", "factor", "vec", "exact", "shown", "subscript", "softmax_texts", "share_texts", "worked_steps", "worked_text",
           "worked_stage", "worked_block", "templates", "STAGE"]

_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")

#: The stage (0: the row's objects; 1..5: q·k, ÷√d_k, + M, softmax, × V) each template's line
#: belongs to.  The lab's step-through (render.js ``LINE_STAGE``) uses the same table.
STAGE = {
    "receiver": 0, "readable": 0, "masked_pos": 0,
    "masked_pad": 0,
    "step1": 1, "dot": 1, "raw_scores": 1,
    "step2": 2, "scaled": 2, "no_scaling": 2,
    "step3": 3, "add_mask": 3, "mask_hides": 3, "mask_none": 3,
    "step4": 4, "sub_max": 4, "exp": 4, "exp_sum": 4, "shares": 4, "masked_share": 4, "tiny_share": 4,
    "step5": 5, "out_cell": 5, "output": 5,
}


@lru_cache(maxsize=1)
def templates() -> dict:
    """The ``"worked"`` section of ``strings_zh.json``."""
    table = json.loads(resources.files(__package__).joinpath("strings_zh.json").read_text("utf-8"))
    return table["worked"]


def fmt(x: float) -> str:
    """A number as the worked text shows it: :func:`~attention_lab.formatting.format_number`
    at :data:`~attention_lab.formatting.WORKED_DIGITS` (10) decimals."""
    return format_number(x, WORKED_DIGITS)


def factor(x: float) -> str:
    """``fmt(x)`` in parentheses when negative, for use inside a product."""
    text = fmt(x)
    return f"({text})" if text.startswith("−") else text


def vec(xs) -> str:
    return "[" + ", ".join(fmt(x) for x in xs) + "]"


#: ``fmt(x)`` "stands for exactly x" when it is within this relative distance:
#: float noise (e.g. BLAS fused multiply-adds, or a plain JavaScript loop) must
#: not flip "=" to "≈", and 9.6×(-8.7)+3.15×2.7 = -75.015 is exact in decimals.
EXACT_TOL = 1e-12


def exact(x: float) -> bool:
    """True when ``fmt(x)`` stands for ``x`` up to float noise (``EXACT_TOL``)."""
    x = float(x)
    if math.isinf(x):
        return True
    if math.isnan(x):
        return False
    return abs(float(fmt(x).replace("−", "-")) - x) <= EXACT_TOL * max(1.0, abs(x))


def _eq(xs) -> str:
    return "=" if all(exact(x) for x in xs) else "≈"


def shown(x: float) -> Fraction:
    """The exact value of ``fmt(x)`` (a finite number) as a fraction: what a reader computes with."""
    return Fraction(fmt(x).replace("−", "-"))


def _sum_eq(pairs, result: float) -> str:
    """``"="`` when the shown factors, multiplied and added exactly, give the shown result.

    A factor is a number (shown as ``fmt`` shows it) or the text it is shown as (a share of
    :func:`softmax_texts`), read exactly by :func:`~attention_lab.formatting.power_value`."""
    if not exact(result):
        return "≈"
    value = lambda x: power_value(x) if isinstance(x, str) else shown(x)  # noqa: E731
    total = sum((value(a) * value(b) for a, b in pairs), Fraction(0))
    return "=" if total == shown(result) else "≈"


LN10 = math.log(10)


def _log_sum_exp(values: list[float]) -> float:
    """``log Σ exp(v)`` without underflow: the largest first, the terms added left to right."""
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def softmax_texts(shifted, exps, total: float, shares, readable) -> tuple[list[str], str, list[str]]:
    """The softmax lines' numbers as the worked text writes them: ``(exps, total, shares)``.

    ``fmt``, except for what ``fmt`` would write as ``"0"`` or ``"1"`` while it is not: a readable
    key's exponential or share (never 0: ``exp`` is positive), a share while another key is
    readable (never 1), the sum then (never 1).  Those are written from ``shifted`` (``S − max``)
    in logarithms: ``3.2×10⁻¹⁰⁰``, ``1 − 3.2×10⁻¹⁰⁰``, ``1 + 3.2×10⁻¹⁰⁰``; see the module docstring.
    """
    m = len(shifted)
    live = [j for j in range(m) if readable[j]]
    exp_texts = [fmt(x) for x in exps]
    share_texts = [fmt(x) for x in shares]
    total_text = fmt(total)
    for j in live:
        if exp_texts[j] == "0":
            exp_texts[j] = format_power(shifted[j] / LN10)
    if len(live) > 1:
        log_total = math.log(total)
        if total_text == "1":
            top = next(j for j in live if shifted[j] == 0)
            total_text = "1 + " + format_power(_log_sum_exp([shifted[j] for j in live if j != top]) / LN10)
        for j in live:
            if share_texts[j] == "0":
                share_texts[j] = format_power((shifted[j] - log_total) / LN10)
            elif share_texts[j] == "1":
                rest = _log_sum_exp([shifted[k] for k in live if k != j])
                share_texts[j] = "1 − " + format_power((rest - log_total) / LN10)
    return exp_texts, total_text, share_texts


def share_texts(scores, shares) -> list[str]:
    """A row's shares as the worked text writes them (:func:`softmax_texts`), from that row of ``S``
    (``−inf`` where masked) and of ``A``: what an explanation quotes for a share that its table
    cell (:func:`~attention_lab.formatting.format_share`) shows only as a bound.  JavaScript:
    ``attention.js`` ``shareTexts``.

    >>> share_texts([229.1025971044, 0.0], [1.0, 3.2e-100])
    ['1 − 3.2×10⁻¹⁰⁰', '3.2×10⁻¹⁰⁰']
    """
    readable = [not (math.isinf(s) and s < 0) for s in scores]
    steps = softmax_steps([float(s) for s in scores])
    return softmax_texts(steps.shifted.tolist(), steps.exps.tolist(), steps.total, [float(a) for a in shares], readable)[2]


def _quotient_eq(raw, scaled, d_k: float) -> str:
    """``"="`` when every shown ``raw/√d_k`` is exactly the shown scaled score."""
    root = shown(d_k)
    for r, s in zip(raw, scaled):
        if not exact(s):
            return "≈"
        a, b = shown(r), shown(s)
        if a * a != b * b * root or (a > 0) != (b > 0) or (a < 0) != (b < 0):
            return "≈"
    return "="


def _add_eq(scaled, mask, S) -> str:
    """``"="`` when every finite shown score plus its shown mask entry is the shown ``S``."""
    for x, add, s in zip(scaled, mask, S):
        if math.isinf(s) or add == 0:
            continue  # x + (−∞) = −∞; x + 0 is x, the same shown number on both sides
        if not (exact(x) and exact(add) and exact(s)) or shown(x) + shown(add) != shown(s):
            return "≈"
    return "="


def subscript(i: int) -> str:
    return str(i).translate(_SUBSCRIPTS)


_fill = fill  # the catalog's one filler: literal replacement, as the JavaScript twin's fill


def worked_steps(result: AttentionResult, row: int, tokens=TOKENS, key_tokens=None, pad: int = 0) -> list[dict]:
    """The five stages for query ``row`` of ``result``, as lines (see the module docstring).

    ``result`` is what :func:`~attention_lab.core.attention` (or ``general_attention``) returns;
    ``row`` indexes its queries.  ``tokens`` name the queries, ``key_tokens`` the keys (default:
    ``tokens``, self-attention); ``pad``: the last ``pad`` keys are padding (as
    ``general_attention(pad=...)``), so a masked one of them is told as ``masked_pad``, as
    attention.js ``workedSteps`` does with its result's ``pad``.  Each line is
    ``{"kind", "key", "stage", "text"}`` (plus ``"j"`` or ``"c"``).  Raises ``ValueError`` for a
    row out of range.
    """
    n, m = result.S.shape
    if not 0 <= int(row) < n:
        raise ValueError(f"row must be in 0..{n - 1}; got {row!r}")
    i = int(row)
    t = templates()
    keys = tokens if key_tokens is None else key_tokens

    def tok(j: int, names=None) -> str:
        names = keys if names is None else names
        return names[j] if j < len(names) else str(j)

    q = result.Q[i]
    raw = result.raw_scores[i]
    scaled = raw / np.sqrt(result.d_k)  # as the core divides: S = Q @ K.T / np.sqrt(d_k) + M
    mask = result.M[i]
    S = result.S[i]
    A = result.A[i]
    O = result.O[i]
    readable = [not np.isneginf(S[j]) for j in range(m)]
    d_k = fmt(result.d_k)
    common = {"i": i, "qi": "q" + subscript(i), "oi": "o" + subscript(i), "row_tok": tok(i, tokens), "d_k": d_k}

    lines: list[dict] = []

    def add(kind: str, key: str, **values) -> None:
        line = {"kind": kind, "key": key, "stage": STAGE[key], "text": _fill(t[key], **{**common, **values})}
        for name in ("j", "c"):
            if name in values:
                line[name] = int(values[name])
        lines.append(line)

    # Stage 0: the row's query and the keys (and values) it is scored against.
    add("line", "receiver", tok=tok(i, tokens), q=vec(q), eq_q=_eq(q))
    for j in range(m):
        ctx = {"j": j, "tok": tok(j), "kj": "k" + subscript(j), "vj": "v" + subscript(j),
               "k": vec(result.K[j]), "eq_k": _eq(result.K[j])}
        if readable[j]:
            add("line", "readable", v=vec(result.V[j]), eq_v=_eq(result.V[j]), **ctx)
        else:
            add("note", "masked_pad" if j >= m - int(pad) else "masked_pos", **ctx)

    # Stage 1: q·k for every key, masked or not.
    add("head", "step1")
    for j in range(m):
        expr = "+".join(f"{factor(a)}×{factor(b)}" for a, b in zip(q, result.K[j]))
        add("line", "dot", j=j, tok=tok(j), kj="k" + subscript(j), expr=expr,
            eq=_sum_eq(zip(q, result.K[j]), raw[j]), value=fmt(raw[j]))
    add("line", "raw_scores", vec=vec(raw), order="[" + ", ".join(tok(j) for j in range(m)) + "]")

    # Stage 2: ÷ √d_k.
    add("head", "step2")
    scaled_expr = "[" + ", ".join(f"{fmt(raw[j])}/√{d_k}" for j in range(m)) + "]"
    add("line", "scaled", expr=scaled_expr, eq=_quotient_eq(raw, scaled, result.d_k), vec=vec(scaled))
    if result.d_k == 1:
        add("note", "no_scaling")

    # Stage 3: + M; a masked key's score becomes −∞ here.
    add("head", "step3")
    add("line", "add_mask", scaled=vec(scaled), mask=vec(mask), eq=_add_eq(scaled, mask, S), vec=vec(S))
    for j in range(m):
        if not readable[j]:
            add("note", "mask_hides", j=j, tok=tok(j), value=fmt(scaled[j]))
    if all(v == 0 for v in mask):
        add("note", "mask_none")

    # Stage 4: softmax along the readable keys.
    add("head", "step4")
    steps = softmax_steps([float(S[j]) if readable[j] else -math.inf for j in range(m)])  # core's, one place
    shifted, exps, total = steps.shifted.tolist(), steps.exps.tolist(), steps.total
    exp_texts, total_text, share_texts = softmax_texts(shifted, exps, total, A.tolist(), readable)
    add("line", "sub_max", vec=vec(shifted))
    add("line", "exp", vec="[" + ", ".join(exp_texts) + "]")
    add("line", "exp_sum", value=total_text)
    add("line", "shares", vec="[" + ", ".join(share_texts) + "]")
    for j in range(m):
        if not readable[j]:
            add("note", "masked_share", tok=tok(j), j=j)
    for j in range(m):
        if readable[j] and share_texts[j] != fmt(A[j]) and not share_texts[j].startswith("1 "):
            add("note", "tiny_share", tok=tok(j), j=j, value=share_texts[j])

    # Stage 5: × V.
    add("head", "step5")
    cell_eqs = []
    soft = [f"({text})" if " " in text or "×" in text else text for text in share_texts]
    for c in range(result.V.shape[1]):
        expr = " + ".join(f"{soft[j]}×{factor(result.V[j, c])}" for j in range(m) if readable[j])
        pairs = [(share_texts[j], result.V[j, c]) for j in range(m) if readable[j]]
        cell_eqs.append(_sum_eq(pairs, O[c]))
        add("line", "out_cell", c=c, expr=expr, eq=cell_eqs[-1], value=fmt(O[c]))
    add("line", "output", eq="=" if all(e == "=" for e in cell_eqs) else "≈", vec=vec(O))
    return lines


def worked_text(result: AttentionResult, row: int, tokens=TOKENS, key_tokens=None, pad: int = 0) -> str:
    """:func:`worked_steps` as one string, one line per step line."""
    return "\n".join(line["text"] for line in worked_steps(result, row, tokens, key_tokens, pad))


def worked_stage(result: AttentionResult, row: int, stage: int, tokens=TOKENS, heads: bool = False) -> str:
    """The lines of one stage (0..5) as one string, without the stage's heading unless ``heads``.

    The chapter prints these in its own sections (which carry their own headings), so that
    every number of its hand computation is written here, not typed.
    """
    if not 0 <= int(stage) <= 5:
        raise ValueError(f"stage must be in 0..5; got {stage!r}")
    return "\n".join(line["text"] for line in worked_steps(result, row, tokens)
                     if line["stage"] == stage and (heads or line["kind"] != "head"))


def worked_block(result: AttentionResult, row: int, stage: int, tokens=TOKENS):
    """One stage (:func:`worked_stage`) as a ``text`` code block, for a notebook cell's output.

    The chapter shows its hand computation this way: an IPython ``Markdown`` object holding a
    fenced ``text`` block, which myst-nb renders as the same block as a typed one (and Jupyter
    as a code block), so no computed number of it is typed.
    """
    from IPython.display import Markdown  # only a notebook needs it

    return Markdown("```text\n" + worked_stage(result, row, stage, tokens) + "\n```")
