"""Test vectors for the JavaScript twin, computed by the Python core.

Each vector: the lab's flat ``params`` (names as the controls), the ``row``
explained, every table ``Q K V M S A O`` (``-inf`` written as the string
``"-Infinity"``, since JSON has no infinities), ``raw_scores``, ``d_k``, the
Python ``worked`` text for both rows and, per row, each stage's text
(``worked_stages[row][stage]``, :func:`attention_lab.worked.worked_stage` with headings).
The document also carries ``worked_stage``: the stage of every template
(:data:`attention_lab.worked.STAGE`).  The tests regenerate them at test time, so
they never go stale; run alone to look at them:

    python scripts/make_vectors.py [out.json]      # default: stdout
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np

from attention_lab.core import attention
from attention_lab.params import PARAM_NAMES, RANGES, default_params, range_of, tables_from_params

MASKED = "-Infinity"


def _encode(x: float):
    if math.isinf(x):
        if x > 0:
            raise ValueError("the core never yields +inf")
        return MASKED
    return float(x)


def _table(a: np.ndarray) -> list:
    return [[_encode(v) for v in row] for row in a]


def _on_grid(name: str, k: int) -> float:
    """The k-th slider position of control ``name`` (what a range input can reach)."""
    r = range_of(name)
    return float(f"{r.min + k * r.step:.10g}")


def _steps(name: str) -> int:
    r = range_of(name)
    return round((r.max - r.min) / r.step)


def cases(n_random: int = 30, seed: int = 11) -> list[tuple[str, dict]]:
    """(label, params) pairs: baseline, contrasts, causal off, d_k values, random, extremes."""
    out = [("baseline", default_params()),
           ("only_wv", default_params("only_wv")),
           ("only_wq", default_params("only_wq"))]
    for label, p in list(out):
        out.append((label + " causal off", {**p, "causal": False}))
    for d_k in (1.0, 3.0, 7.0, 64.0):
        out.append((f"d_k={d_k:g}", {**default_params(), "d_k": d_k}))
        out.append((f"d_k={d_k:g} causal off", {**default_params(), "d_k": d_k, "causal": False}))
    rng = np.random.default_rng(seed)
    for k in range(n_random):
        p = {name: _on_grid(name, int(rng.integers(0, _steps(name) + 1))) for name in PARAM_NAMES[:-2]}
        p["d_k"] = float(rng.integers(1, 65))
        p["causal"] = bool(rng.integers(0, 2))
        out.append((f"random {k}", p))
    # Extremes: every entry at a range end; softmax saturates (one share is 1 to machine precision).
    hi = {name: range_of(name).max for name in PARAM_NAMES[:-2]}
    lo = {name: range_of(name).min for name in PARAM_NAMES[:-2]}
    out.append(("all max", {**hi, "d_k": 1.0, "causal": False}))
    out.append(("all min", {**lo, "d_k": 1.0, "causal": True}))
    sat = {"X[0,0]": 3.0, "X[0,1]": 3.0, "X[1,0]": 3.0, "X[1,1]": -3.0,
           "Wq[0,0]": 3.0, "Wq[0,1]": 3.0, "Wq[1,0]": -3.0, "Wq[1,1]": 3.0,
           "Wk[0,0]": 3.0, "Wk[0,1]": -3.0, "Wk[1,0]": 3.0, "Wk[1,1]": 3.0,
           "Wv[0,0]": 20.0, "Wv[0,1]": -20.0, "Wv[1,0]": -20.0, "Wv[1,1]": 20.0,
           "d_k": 1.0, "causal": False}  # row 1 scores [324, 0]: shares [1, 1e-141]
    out.append(("saturated", sat))
    # Issue 28's live text: shares [1 − 3.2×10⁻¹⁰⁰, 3.2×10⁻¹⁰⁰] (in floats [1, 3.2e-100]), never "0" and "1".
    issue28 = {**default_params(), "X[0,0]": 3.0, "X[0,1]": 3.0, "X[1,0]": 3.0, "X[1,1]": -3.0,
               "Wq[0,0]": 3.0, "Wq[0,1]": 3.0, "Wq[1,0]": -3.0, "Wq[1,1]": 3.0,
               "Wk[0,0]": 3.0, "Wk[0,1]": 3.0, "Wk[1,0]": 3.0, "Wk[1,1]": -3.0, "causal": False}
    out.append(("saturated, issue 28", issue28))
    # Scores 648 and −648 at d_k = 1: exp(−1296) is 0.0 in floats, still written as 1.4×10⁻⁵⁶³.
    under = {**{name: 3.0 for name in PARAM_NAMES[:-2]}, "X[1,0]": -3.0, "X[1,1]": -3.0, "d_k": 1.0, "causal": False}
    out.append(("exp below the smallest float", under))
    out.append(("all zero", {**{name: 0.0 for name in PARAM_NAMES[:-2]}, "d_k": 64.0, "causal": False}))
    return out


def vector(label: str, params: dict, row: int = 1) -> dict:
    from attention_lab.worked import worked_stage, worked_text  # the lab's worked arithmetic

    t = tables_from_params(params)
    r = attention(t["X"], t["Wq"], t["Wk"], t["Wv"], d_k=t["d_k"], causal=t["causal"])
    out = {"label": label, "params": {k: (bool(v) if k == "causal" else float(v)) for k, v in params.items()},
           "row": row, "d_k": float(r.d_k), "raw_scores": _table(r.raw_scores)}
    for name in ("Q", "K", "V", "M", "S", "A", "O"):
        out[name] = _table(getattr(r, name))
    out["worked"] = [worked_text(r, i) for i in range(2)]
    out["worked_stages"] = [[worked_stage(r, i, stage, heads=True) for stage in range(6)] for i in range(2)]
    return out


def vectors(n_random: int = 30) -> list[dict]:
    return [vector(label, p, row=k % 2) for k, (label, p) in enumerate(cases(n_random))]


#: Typed values (as a reader types them into a number box) for params.coerce.
COERCE_INPUTS = [
    ("X[0,0]", "1.5"), ("X[0,0]", "7"), ("X[0,0]", "-3.5"), ("X[0,1]", "abc"), ("X[1,0]", ""),
    ("Wq[0,0]", "0.123456"), ("Wq[1,1]", "1e3"), ("Wk[0,1]", "nan"), ("Wk[1,0]", "inf"),
    ("Wv[0,0]", "-20"), ("Wv[1,1]", "25.25"), ("Wv[0,1]", " 2 "), ("d_k", "2.5"), ("d_k", "3.5"),
    ("d_k", "0"), ("d_k", "100.7"), ("d_k", "8"), ("causal", "off"), ("causal", "1"), ("causal", "maybe"),
]


def coerce_cases() -> list[dict]:
    from attention_lab.params import coerce

    out = []
    for name, raw in COERCE_INPUTS:
        value, note = coerce(name, raw)
        out.append({"name": name, "raw": raw, "value": value, "note": note})
    return out


def document(n_random: int = 30) -> dict:
    """Everything the JavaScript tests compare against."""
    from attention_lab.web import lab_config  # ranges, baseline and strings exactly as the page gets them
    from attention_lab.worked import STAGE

    return {"vectors": vectors(n_random), "coerce": coerce_cases(), "config": lab_config(), "worked_stage": STAGE}


def main(argv: list[str]) -> int:
    text = json.dumps(document(), ensure_ascii=False, indent=1)
    if len(argv) > 1:
        with open(argv[1], "w", encoding="utf-8") as f:
            f.write(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
