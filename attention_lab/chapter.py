"""Small helpers that chapter F11 shows, and that ``scripts/verify_concepts.py`` re-uses.

Pure numpy on top of :mod:`attention_lab.core` (which holds the mathematics);
nothing here draws (the figures are :mod:`attention_lab.plotting` and
:mod:`attention_lab.dataflow`) or keeps state.  The chapter calls these functions in its
executed cells, so the examples on the page and the numbers the checker
recomputes come from the same definitions.
"""

from __future__ import annotations

import numpy as np

from .core import (BASELINE, AttentionResult, SoftmaxSteps, attention, baseline, scaled_dot_product_attention,
                   softmax_steps)  # noqa: F401  (SoftmaxSteps, softmax_steps: part of this module's API)

__all__ = [
    "CROSS_EXAMPLE",
    "MATMUL_EXAMPLE",
    "MULTIHEAD_EXAMPLE",
    "SoftmaxSteps",
    "chapter_numbers",
    "compare_tables",
    "cross_attention_example",
    "dot_product_spread",
    "identity_qk_example",
    "mha_like_torch",
    "mha_recipe",
    "multihead_example",
    "pytorch_facts",
    "sdpa_like_torch",
    "self_check_cases",
    "LAB_SATURATED",
    "LAB_WQ",
    "SATURATION_FACTORS",
    "SPREAD_DIMS",
    "kv_cache_example",
    "lab_experiments",
    "saturated_example",
    "softmax_steps",
]

#: The chapter's cross-attention example: 3 target positions (e.g. a translation being
#: generated) read 2 source positions.  ``Q = X_tgt @ Wq``, ``K = X_src @ Wk``,
#: ``V = X_src @ Wv``.  X_src, Wq, Wk are the chapter's baseline X, Wq, Wk, so the keys are
#: the familiar 我/爱 rows; X_tgt is chosen so that Q = [[1,0],[0,1],[1,1]]; Wv has a
#: third column that makes V's last column constant (1, 1).  "Q", "K", "V" hold the
#: projected tables (derived, for display).
_CROSS_TABLES = {
    "X_tgt": ((1.0, -1.0), (1.0, 1.0), (2.0, 0.0)),
    "X_src": BASELINE["X"],
    "Wq": BASELINE["Wq"],
    "Wk": BASELINE["Wk"],
    "Wv": ((5.0, 10.0, 1.0), (5.0, -10.0, 0.0)),
}
_ct = {k: np.array(v, dtype=float) for k, v in _CROSS_TABLES.items()}
CROSS_EXAMPLE = {
    **_CROSS_TABLES,
    "Q": tuple(map(tuple, (_ct["X_tgt"] @ _ct["Wq"]).tolist())),
    "K": tuple(map(tuple, (_ct["X_src"] @ _ct["Wk"]).tolist())),
    "V": tuple(map(tuple, (_ct["X_src"] @ _ct["Wv"]).tolist())),
}
del _ct


#: The matrix-product reminder (F07): the row ``[1, 2]`` times this table is ``[13, 16]``.
MATMUL_EXAMPLE = {"row": (1.0, 2.0), "table": ((3.0, 4.0), (5.0, 6.0))}


def compare_tables(before: AttentionResult, after: AttentionResult,
                   names=("Q", "K", "V", "S", "A", "O")) -> dict[str, bool]:
    """Which tables are unchanged (exactly equal, ``-inf`` included) between two runs.

    >>> r = attention(**baseline())
    >>> compare_tables(r, attention(**baseline("only_wv")))["A"]
    True
    """
    return {name: bool(np.array_equal(getattr(before, name), getattr(after, name))) for name in names}


# --------------------------------------------------------------------------- cross-attention

def cross_attention_example() -> AttentionResult:
    """Cross-attention, projected: ``Q = X_tgt @ Wq``, ``K = X_src @ Wk``, ``V = X_src @ Wv``.

    No mask: every target position may read the whole source (it is already
    complete).  ``n = 3`` queries, ``m = 2`` keys, ``d_k = 2``, ``d_v = 3``; V's
    last column is constant, so O's last column is that constant in every row
    (each row of A sums to 1).
    """
    t = {name: np.array(CROSS_EXAMPLE[name], dtype=float) for name in ("X_tgt", "X_src", "Wq", "Wk", "Wv")}
    return scaled_dot_product_attention(t["X_tgt"] @ t["Wq"], t["X_src"] @ t["Wk"], t["X_src"] @ t["Wv"])


# ----------------------------------------------------------------- Wq = Wk = I ("compare X itself")

def identity_qk_example(causal: bool = True) -> AttentionResult:
    """The baseline with ``Wq = Wk = I``: scores compare X with itself.

    ``QKᵀ = XXᵀ`` is symmetric and its diagonal holds ``‖x_i‖²``; ``Wv`` stays
    the baseline's.
    """
    t = baseline()
    eye = np.eye(t["X"].shape[1])
    return attention(t["X"], eye, eye, t["Wv"], causal=causal)


# ------------------------------------------------------------------ multi-head (d_model=4, h=2)

#: A multi-head shape example: 3 positions, ``d_model = 4``, 2 heads of width 2.
#: Head ``h`` uses columns ``2h, 2h+1`` of Wq, Wk, Wv (as PyTorch splits
#: ``in_proj_weight``); ``Wo`` mixes the concatenated heads back to width 4.
MULTIHEAD_EXAMPLE = {
    "X": ((1.0, 0.0, 1.0, 0.0), (0.0, 1.0, 0.0, 1.0), (1.0, 1.0, 0.0, 0.0)),
    "Wq": ((1.0, 0.0, 0.0, 1.0), (0.0, 1.0, 1.0, 0.0), (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 1.0, 0.0)),
    "Wk": ((1.0, 0.0, 0.0, 0.0), (0.0, 1.0, 0.0, 1.0), (0.0, 0.0, 1.0, 0.0), (0.0, 1.0, 1.0, 0.0)),
    "Wv": ((2.0, 0.0, 0.0, 4.0), (0.0, 2.0, 4.0, 0.0), (2.0, 2.0, 0.0, 0.0), (0.0, 0.0, 2.0, 2.0)),
    "Wo": ((0.5, 0.0, 0.5, 0.0), (0.0, 0.5, 0.0, 0.5), (0.5, 0.0, -0.5, 0.0), (0.0, 0.5, 0.0, -0.5)),
    "h": 2,
}


def multihead_example(causal: bool = True) -> dict:
    """Run :data:`MULTIHEAD_EXAMPLE`: each head is the chapter's single-head attention.

    Returns ``X, Wq, Wk, Wv, Wo`` (arrays), ``h``, ``d_model``, ``d_head``, ``n``,
    ``heads`` (one :class:`AttentionResult` per head, ``d_k = d_head``),
    ``concat`` (the heads' O side by side, ``[n, d_model]``) and ``output``
    (``concat @ Wo``, ``[n, d_model]``).
    """
    t = {k: np.array(v, dtype=float) for k, v in MULTIHEAD_EXAMPLE.items() if k != "h"}
    h = int(MULTIHEAD_EXAMPLE["h"])
    n, d_model = t["X"].shape
    if d_model % h:
        raise ValueError(f"d_model={d_model} is not a multiple of h={h}")
    d_head = d_model // h
    heads = []
    for k in range(h):
        cols = slice(k * d_head, (k + 1) * d_head)
        heads.append(scaled_dot_product_attention(
            t["X"] @ t["Wq"][:, cols], t["X"] @ t["Wk"][:, cols], t["X"] @ t["Wv"][:, cols], causal=causal))
    concat = np.concatenate([r.O for r in heads], axis=1)
    return {**t, "h": h, "n": n, "d_model": d_model, "d_head": d_head,
            "heads": heads, "concat": concat, "output": concat @ t["Wo"]}


# ------------------------------------------------------ PyTorch's two interfaces, modelled in numpy

def _softmax_like_torch(scores: np.ndarray) -> np.ndarray:
    """Row softmax as PyTorch computes it: a row of only ``-inf`` gives NaN (core.softmax refuses)."""
    with np.errstate(invalid="ignore"):
        top = np.max(scores, axis=-1, keepdims=True)
        exps = np.exp(scores - top)
        return exps / np.sum(exps, axis=-1, keepdims=True)


def _additive(mask, shape, true_means: str) -> np.ndarray:
    if mask is None:
        return np.zeros(shape)
    mask = np.asarray(mask)
    if mask.dtype == bool:
        blocked = ~mask if true_means == "attend" else mask
        return np.where(blocked, -np.inf, 0.0)
    return mask.astype(float)  # a float mask is added, like the chapter's M


def sdpa_like_torch(Q, K, V, attn_mask=None):
    """``torch.nn.functional.scaled_dot_product_attention`` in numpy: returns ``(O, A)``.

    A boolean ``attn_mask`` means True = **may attend**; a float mask is added to the scores.
    """
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    S = Q @ K.T / np.sqrt(Q.shape[1]) + _additive(attn_mask, (Q.shape[0], K.shape[0]), "attend")
    A = _softmax_like_torch(S)
    return A @ V, A


def mha_like_torch(query, key, value, in_proj_weight, out_proj_weight, num_heads=1, attn_mask=None):
    """``torch.nn.MultiheadAttention`` (``bias=False``, ``batch_first=True``, one batch) in numpy.

    ``in_proj_weight`` is ``[3E, E]`` in PyTorch's ``[out, in]`` convention and is applied to
    query, key and value **inside**; ``out_proj_weight`` ``[E, E]`` is always applied.  A boolean
    ``attn_mask`` means True = **masked** (not allowed); a float mask is added.  Returns ``(O, A)``,
    ``A`` averaged over heads as PyTorch returns it.
    """
    query, key, value = (np.asarray(a, dtype=float) for a in (query, key, value))
    W = np.asarray(in_proj_weight, dtype=float)
    E = query.shape[1]
    if W.shape != (3 * E, E):
        raise ValueError(f"in_proj_weight must be [3E, E] = [{3 * E}, {E}]; got {W.shape}")
    if E % num_heads:
        raise ValueError(f"embed_dim {E} is not a multiple of num_heads {num_heads}")
    Q, K, V = query @ W[:E].T, key @ W[E:2 * E].T, value @ W[2 * E:].T
    hd = E // num_heads
    add = _additive(attn_mask, (Q.shape[0], K.shape[0]), "masked")
    outs, shares = [], []
    for k in range(num_heads):
        c = slice(k * hd, (k + 1) * hd)
        A = _softmax_like_torch(Q[:, c] @ K[:, c].T / np.sqrt(hd) + add)
        outs.append(A @ V[:, c])
        shares.append(A)
    return np.concatenate(outs, axis=1) @ np.asarray(out_proj_weight, dtype=float).T, np.mean(shares, axis=0)


def mha_recipe(Wq, Wk, Wv) -> dict:
    """What reproduces the chapter's O with ``nn.MultiheadAttention(E, 1, bias=False, batch_first=True)``.

    ``in_proj_weight = concat(Wqᵀ, Wkᵀ, Wvᵀ)`` (``[3E, E]``), ``out_proj.weight = I``, and the
    causal mask as a boolean with True = masked (``triu(ones, 1)``).
    """
    Wq, Wk, Wv = (np.asarray(a, dtype=float) for a in (Wq, Wk, Wv))
    E = Wq.shape[0]
    return {"in_proj_weight": np.concatenate([Wq.T, Wk.T, Wv.T], axis=0), "out_proj_weight": np.eye(E),
            "attn_mask": np.triu(np.ones((E, E), dtype=bool), 1), "num_heads": 1}


def pytorch_facts() -> dict:
    """The chapter's PyTorch claims, computed on the baseline (numpy models of the two interfaces).

    ``repro_O``: MHA fed ``X`` three times with :func:`mha_recipe`; ``double_O``: the mistake of
    self-check 7, ``query = X @ Wq`` (key = value = X) so in_proj multiplies by Wq again;
    ``double3_O``: all three pre-projected; ``sdpa_tril_O``: SDPA with ``tril`` (True = attend);
    ``mha_tril_O/A``: the same ``tril`` given to MHA (True = masked): NaN rows;
    ``float_O``: SDPA with the chapter's additive M as a float mask.
    """
    t = baseline()
    X = t["X"]
    n = X.shape[0]
    r = attention(**t)
    recipe = mha_recipe(t["Wq"], t["Wk"], t["Wv"])
    W, Wo, mask = recipe["in_proj_weight"], recipe["out_proj_weight"], recipe["attn_mask"]
    repro_O, _ = mha_like_torch(X, X, X, W, Wo, attn_mask=mask)
    double_O, double_A = mha_like_torch(X @ t["Wq"], X, X, W, Wo, attn_mask=mask)
    double3_O, _ = mha_like_torch(X @ t["Wq"], X @ t["Wk"], X @ t["Wv"], W, Wo, attn_mask=mask)
    tril = np.tril(np.ones((n, n), dtype=bool))
    sdpa_O, sdpa_A = sdpa_like_torch(r.Q, r.K, r.V, attn_mask=tril)
    mha_tril_O, mha_tril_A = mha_like_torch(X, X, X, W, Wo, attn_mask=tril)
    float_O, float_A = sdpa_like_torch(r.Q, r.K, r.V, attn_mask=r.M)
    nan_rows = [int(i) for i in np.flatnonzero(np.isnan(mha_tril_O).any(axis=1))]
    return {"result": r, "recipe": recipe, "tril": tril,
            "repro_O": repro_O, "repro_maxdiff": float(np.max(np.abs(repro_O - r.O))),
            "double_O": double_O, "double_A": double_A, "double3_O": double3_O,
            "sdpa_tril_O": sdpa_O, "sdpa_tril_A": sdpa_A,
            "mha_tril_O": mha_tril_O, "mha_tril_A": mha_tril_A, "mha_nan_rows": nan_rows,
            "float_O": float_O, "float_A": float_A}


# --------------------------------------------------------------- why divide by √d_k: the spread

#: The widths the chapter's spread cell tries (small, a head's typical width, a large one).
SPREAD_DIMS = (2, 64, 512)


def dot_product_spread(dims=SPREAD_DIMS, pairs: int = 10_000, seed: int = 0) -> dict[int, tuple[float, float]]:
    """The standard deviation of ``q·k`` for random ``q, k`` (entries independent, mean 0, variance 1).

    For each width ``d``: ``pairs`` random pairs from ``np.random.default_rng(seed)`` (drawn in
    the order of ``dims``, as the chapter's visible cell does), and ``d -> (std of q·k,
    std of q·k / √d)``.  The first grows like ``√d``; the second stays near 1.

    >>> spread = dot_product_spread()
    >>> [round(scaled) for _raw, scaled in spread.values()]
    [1, 1, 1]
    """
    rng = np.random.default_rng(seed)
    out = {}
    for d in dims:
        q = rng.standard_normal((pairs, d))
        k = rng.standard_normal((pairs, d))
        dots = (q * k).sum(axis=1)
        out[int(d)] = (float(dots.std()), float((dots / np.sqrt(d)).std()))
    return out


# ------------------------------------------------------------------------- self-check questions

def self_check_cases() -> dict[str, AttentionResult]:
    """The computing questions of 课后自检 (each changes one thing from the baseline).

    ``x1_20``: X's row 1 becomes [2, 0]; ``nomask``: no causal mask; ``dk8``: d_k = 8 in the root only.
    """
    t = baseline()
    t_x = {**t, "X": np.array([t["X"][0], [2.0, 0.0]])}
    return {"x1_20": attention(**t_x), "nomask": attention(**t, causal=False), "dk8": attention(**t, d_k=8)}


# ------------------------------------------------------------------------------ glue contract

def chapter_numbers() -> dict:
    """Every number the chapter glues from this module (name -> float or int).

    The chapter's hidden cell runs ``for k, v in chapter_numbers().items(): glue(k, v, display=False)``;
    ``scripts/verify_concepts.py`` reads the same dict.
    """
    out: dict = {"euler": float(np.e)}  # e, the base of exp, recalled in the softmax recap
    rb = attention(**baseline("only_wq"))
    out["wq_raw10"], out["wq_raw11"] = float(rb.raw_scores[1, 0]), float(rb.raw_scores[1, 1])
    re_ = identity_qk_example()
    for i in range(2):
        for j in range(2):
            out[f"eye_raw{i}{j}"] = int(round(re_.raw_scores[i, j]))
    out["eye_s11"] = float(re_.S[1, 1])
    out["eye_a10"], out["eye_a11"] = float(re_.A[1, 0]), float(re_.A[1, 1])
    out["eye_o10"], out["eye_o11"] = float(re_.O[1, 0]), float(re_.O[1, 1])
    r = attention(**baseline())
    out["raw00"], out["raw01"] = float(r.raw_scores[0, 0]), float(r.raw_scores[0, 1])
    rc = cross_attention_example()
    out["cross_a20"], out["cross_a21"] = float(rc.A[2, 0]), float(rc.A[2, 1])
    for i, c in ((0, 0), (0, 2), (1, 2), (2, 2)):
        out[f"cross_o{i}{c}"] = float(rc.O[i, c])
    mh = multihead_example()
    out.update(mh_n=mh["n"], mh_d_model=mh["d_model"], mh_h=mh["h"], mh_d_head=mh["d_head"],
               mh_o00=float(mh["output"][0, 0]))
    f = pytorch_facts()
    out["mha_double_o10"], out["mha_double_o11"] = float(f["double_O"][1, 0]), float(f["double_O"][1, 1])
    out["mha_double_a10"], out["mha_double_a11"] = float(f["double_A"][1, 0]), float(f["double_A"][1, 1])
    out["mha_double3_o10"], out["mha_double3_o11"] = float(f["double3_O"][1, 0]), float(f["double3_O"][1, 1])
    out["mha_repro_maxdiff"] = f["repro_maxdiff"]
    out["bm_sdpa_a10"] = float(f["sdpa_tril_A"][1, 0])
    # SDPA returns only O (never the shares): the warning quotes 爱's output row.
    out["bm_sdpa_o10"], out["bm_sdpa_o11"] = float(f["sdpa_tril_O"][1, 0]), float(f["sdpa_tril_O"][1, 1])
    out["bm_float_o10"], out["bm_float_o11"] = float(f["float_O"][1, 0]), float(f["float_O"][1, 1])
    out["bm_mha_a00"], out["bm_mha_a01"] = float(f["mha_tril_A"][0, 0]), float(f["mha_tril_A"][0, 1])
    out["bm_mha_nan_rows"] = len(f["mha_nan_rows"])
    out["bm_mha_nan_row"] = f["mha_nan_rows"][0]
    out["bm_float_a10"] = float(f["float_A"][1, 0])
    sc = self_check_cases()
    x, nm, d8 = sc["x1_20"], sc["nomask"], sc["dk8"]
    out["sc_x_a10"], out["sc_x_a11"] = float(x.A[1, 0]), float(x.A[1, 1])
    out["sc_x_o10"], out["sc_x_o11"] = float(x.O[1, 0]), float(x.O[1, 1])
    out["sc_nomask_a00"], out["sc_nomask_a01"] = float(nm.A[0, 0]), float(nm.A[0, 1])
    out["sc_nomask_o00"], out["sc_nomask_o01"] = float(nm.O[0, 0]), float(nm.O[0, 1])
    out["sc_dk8_s10"], out["sc_dk8_a10"], out["sc_dk8_a11"] = float(d8.S[1, 0]), float(d8.A[1, 0]), float(d8.A[1, 1])
    return out


# ------------------------------------------------------------------------- the lab page's experiments

#: book/lab.md's experiment 3: Wq scaled 6 × the baseline, so that 爱's softmax saturates, and a
#: counter-example with entries just as large where q₁ = 0, so nothing saturates.
LAB_WQ = {
    "wq6": tuple(tuple(6.0 * v for v in row) for row in BASELINE["Wq"]),
    "wq0": ((3.0, 3.0), (3.0, 3.0)),
}


#: Experiment 3 pushed further (book/lab.md, issue 28): X and Wk at the ends of their sliders as
#: well, so that 爱's scores are [324/√2, 0] and its small share, about 3.2×10⁻¹⁰⁰, rounds to 0 at
#: ten decimals although it is not 0 (the worked text writes its power of ten instead).
LAB_SATURATED = {"X": ((3.0, 3.0), (3.0, -3.0)), "Wq": LAB_WQ["wq6"], "Wk": ((3.0, 3.0), (3.0, -3.0))}


def saturated_example(causal: bool = False) -> AttentionResult:
    """:data:`LAB_SATURATED` over the baseline's Wv (row 爱 reads both positions either way)."""
    tables = {**baseline(), **{k: np.array(v) for k, v in LAB_SATURATED.items()}}
    return attention(**tables, causal=causal)


def lab_experiments() -> dict[str, AttentionResult]:
    """Every configuration book/lab.md's experiments quote (name -> result; baseline unless said).

    ``base``; ``dk1`` / ``dk64``: d_k at the ends of the lab's slider; ``nomask``: causal off;
    ``wq6`` / ``wq0``: :data:`LAB_WQ`; ``only_wq``: contrast 2.
    """
    from .params import RANGES

    t = baseline()
    return {
        "base": attention(**t),
        "dk1": attention(**t, d_k=RANGES["d_k"].min),
        "dk64": attention(**t, d_k=RANGES["d_k"].max),
        "nomask": attention(**t, causal=False),
        "wq6": attention(**{**t, "Wq": np.array(LAB_WQ["wq6"])}),
        "wq0": attention(**{**t, "Wq": np.array(LAB_WQ["wq0"])}),
        "only_wq": attention(**baseline("only_wq")),
    }


def kv_cache_example() -> AttentionResult:
    """Generation with a KV cache: the newest position alone (n = 1) reads the cached keys.

    Its one output row equals the last row of the full causal computation, so a query
    table of one row against m cached keys is the same attention (here m = 2).
    """
    full = attention(**baseline())
    return scaled_dot_product_attention(full.Q[-1:], full.K, full.V)


# --------------------------------------------------- saturation: the softmax's slope A(1 − A)

#: The factors the chapter multiplies 爱's scaled scores by, to show the softmax's slope A(1 − A)
#: shrinking as the scores move apart (its visible cell types them; verify_concepts holds the prose
#: and the glued slopes to these).
SATURATION_FACTORS = (1, 2, 4, 8)
