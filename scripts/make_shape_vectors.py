"""Test vectors for the shapes lab's JavaScript core (attention.js ``generalAttention``), made by
the Python core (:func:`attention_lab.core.general_attention`).

Many shapes (n, m 1..6; d_model, d_k, d_v 1..4), self and cross, causal (bottom-right aligned
when n != m) and padded (the last ``pad`` keys).  Each vector: the input tables ``X``, ``Xs``
(``None`` in self mode), ``Wq``, ``Wk``, ``Wv``, ``causal``, ``pad``, every result table
``Q K V M S A O`` (``-inf`` as the string ``"-Infinity"``), ``raw_scores``, ``d_k``, and
Python's worked text for every row (:func:`attention_lab.worked.worked_text`: ``TOKENS`` for the
queries, ``SOURCE_TOKENS`` for the keys in cross mode, the padded keys' ``masked_pad`` lines).
``heads``: cases of h = 2..4 heads (:func:`attention_lab.core.multi_head_attention`, Wo included):
the whole-width ``Q K V O Y``, each head's ``S A O raw_scores``, and for every row the worked text of
every head and the projection's lines (:func:`attention_lab.shapes.projection_steps`).  Regenerated at test time (tests/test_shapes_core.py); run alone to look:

    python scripts/make_shape_vectors.py [out.json]      # default: stdout
"""

from __future__ import annotations

import json
import sys

import numpy as np

from attention_lab.core import AttentionInputError, general_attention, multi_head_attention
from attention_lab.shapes import projection_steps
from attention_lab.worked import worked_text

MASKED = "-Infinity"
TOKENS = ("甲", "乙", "丙", "丁", "戊", "己")
SOURCE_TOKENS = ("子", "丑", "寅", "卯", "辰", "巳")


def _table(a) -> list:
    return [[MASKED if np.isneginf(v) else float(v) for v in row] for row in np.asarray(a)]


def cases(n_random: int = 60, seed: int = 20) -> list[dict]:
    """Random shapes and small values (halves), self and cross, causal (only n <= m: with n > m
    the first n - m queries may read nothing, a refusal kept as one vector) and padded; plus the edges."""
    rng = np.random.default_rng(seed)
    out = []
    fixed = [(1, 1, 1, 1, 1, False, False, 0), (6, 6, 4, 4, 4, False, True, 0), (6, 6, 4, 4, 4, False, True, 5),
             (3, 4, 2, 2, 3, True, False, 1), (1, 6, 3, 2, 1, True, True, 0), (6, 1, 2, 3, 4, True, False, 0), (5, 2, 2, 2, 2, True, True, 0),
             (2, 5, 1, 4, 2, True, True, 4), (4, 4, 2, 1, 3, False, False, 3)]
    for n, m, d_model, d_k, d_v, cross, causal, pad in fixed:
        out.append(dict(n=n, m=m, d_model=d_model, d_k=d_k, d_v=d_v, cross=cross, causal=causal, pad=pad))
    for _ in range(n_random):
        cross = bool(rng.integers(2))
        n = int(rng.integers(1, 7))
        m = int(rng.integers(1, 7)) if cross else n
        out.append(dict(n=n, m=m, d_model=int(rng.integers(1, 5)), d_k=int(rng.integers(1, 5)),
                        d_v=int(rng.integers(1, 5)), cross=cross, causal=n <= m and bool(rng.integers(2)),
                        pad=int(rng.integers(0, m))))
    for c in out:
        def table(rows, cols, scale):
            return (rng.integers(-6, 7, size=(rows, cols)) * scale).tolist()
        c["X"] = table(c["n"], c["d_model"], 0.5)
        c["Xs"] = table(c["m"], c["d_model"], 0.5) if c["cross"] else None
        c["Wq"] = table(c["d_model"], c["d_k"], 0.25)
        c["Wk"] = table(c["d_model"], c["d_k"], 0.25)
        c["Wv"] = table(c["d_model"], c["d_v"], 1.0)
    return out


def vector(c: dict) -> dict:
    v = {k: c[k] for k in ("X", "Xs", "Wq", "Wk", "Wv", "causal", "pad")}
    try:
        r = general_attention(c["X"], c["Wq"], c["Wk"], c["Wv"], source=c["Xs"], causal=c["causal"], pad=c["pad"])
    except AttentionInputError as e:  # causal with n > m: the first n - m queries may read nothing
        v["error"] = e.kind
        return v
    v.update({name: _table(getattr(r, name)) for name in ("Q", "K", "V", "M", "S", "A", "O")})
    v["raw_scores"] = _table(r.raw_scores)
    v["d_k"] = r.d_k
    keys = SOURCE_TOKENS if c["cross"] else TOKENS
    v["worked"] = [worked_text(r, i, TOKENS, keys, c["pad"]) for i in range(c["n"])]
    return v


def head_cases(n_random: int = 24, seed: int = 31) -> list[dict]:
    """h = 2..4 heads: random shapes (h·d_k and h·d_v equal to d_model or not), self and cross, causal
    and padded, values as in :func:`cases`; Wo [h·d_v, d_model] in quarters."""
    rng = np.random.default_rng(seed)
    out = [dict(n=3, m=3, d_model=4, d_k=2, d_v=2, h=2, cross=False, causal=True, pad=0),
           dict(n=6, m=6, d_model=4, d_k=4, d_v=4, h=4, cross=True, causal=False, pad=2),
           dict(n=2, m=5, d_model=3, d_k=1, d_v=3, h=3, cross=True, causal=True, pad=1)]
    for _ in range(n_random):
        cross = bool(rng.integers(2))
        n = int(rng.integers(1, 7))
        m = int(rng.integers(1, 7)) if cross else n
        out.append(dict(n=n, m=m, d_model=int(rng.integers(1, 5)), d_k=int(rng.integers(1, 5)), d_v=int(rng.integers(1, 5)),
                        h=int(rng.integers(2, 5)), cross=cross, causal=n <= m and bool(rng.integers(2)), pad=int(rng.integers(0, m))))
    for c in out:
        def table(rows, cols, scale):
            return (rng.integers(-6, 7, size=(rows, cols)) * scale).tolist()
        h = c["h"]
        c["X"] = table(c["n"], c["d_model"], 0.5)
        c["Xs"] = table(c["m"], c["d_model"], 0.5) if c["cross"] else None
        c["Wq"] = table(c["d_model"], h * c["d_k"], 0.25)
        c["Wk"] = table(c["d_model"], h * c["d_k"], 0.25)
        c["Wv"] = table(c["d_model"], h * c["d_v"], 1.0)
        c["Wo"] = table(h * c["d_v"], c["d_model"], 0.25)
    return out


def head_vector(c: dict) -> dict:
    v = {k: c[k] for k in ("X", "Xs", "Wq", "Wk", "Wv", "Wo", "h", "causal", "pad")}
    r = multi_head_attention(c["X"], c["Wq"], c["Wk"], c["Wv"], Wo=c["Wo"], h=c["h"], source=c["Xs"],
                             causal=c["causal"], pad=c["pad"])
    v.update({name: _table(getattr(r, name)) for name in ("Q", "K", "V", "O", "Y")})
    v["heads"] = [{name: _table(getattr(head, name)) for name in ("S", "A", "O", "raw_scores")} for head in r.heads]
    keys = SOURCE_TOKENS if c["cross"] else TOKENS
    v["worked"] = [[worked_text(head, i, TOKENS, keys, c["pad"]) for head in r.heads] for i in range(c["n"])]
    v["projection"] = ["\n".join(line["text"] for line in projection_steps(r, i, TOKENS)) for i in range(c["n"])]
    return v


#: Values typed into the shape boxes (as a reader types them; the number box of a browser hands
#: "" for text it cannot read as a number), each with the value the box held and, for pad, the keys.
SHAPE_INPUTS = [
    ("n", "4", 2, None), ("n", "", 3, None), ("n", "1e999", 2, None), ("n", "-", 2, None), ("n", "e", 2, None),
    ("n", "0", 2, None), ("n", "10000", 2, None), ("n", "-3", 4, None), ("n", "2.5", 2, None), ("n", "3.5", 2, None),
    ("m", "６", 2, None), ("d_model", "1,5", 2, None), ("d_k", "4.4", 2, None), ("d_v", "nan", 3, None),
    ("h", "5", 1, None), ("h", "inf", 1, None), ("h", " 2 ", 1, None), ("pad", "3", 0, 2), ("pad", "1", 0, 2),
    ("pad", "-1", 1, 4), ("pad", "0.5", 0, 3), ("pad", "", 1, 3), ("pad", "99", 0, 6),
]


def shape_cases() -> list[dict]:
    from attention_lab.shapes import LIMITS, coerce_shape

    out = []
    for name, raw, current, keys in SHAPE_INPUTS:
        value, note = coerce_shape(name, raw, current, keys=keys)
        limits = [0, keys - 1] if name == "pad" else list(LIMITS[name])
        out.append({"name": name, "raw": raw, "current": current, "limits": limits, "value": value, "note": note})
    return out


def document() -> dict:
    return {"tokens": list(TOKENS), "source_tokens": list(SOURCE_TOKENS), "vectors": [vector(c) for c in cases()],
            "heads": [head_vector(c) for c in head_cases()], "coerce_shape": shape_cases()}


if __name__ == "__main__":
    text = json.dumps(document(), ensure_ascii=False, indent=1)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w", encoding="utf-8") as f:
            f.write(text)
    else:
        print(text)
