"""Independent cross-check of the core against PyTorch's scaled_dot_product_attention.

PyTorch is an optional test extra (the torch group, requirements-torch.txt): scripts/test.sh
installs it where pip takes a CPU build of it (macOS, Windows, a local CPU wheel) and
otherwise says why not, in $F11_TORCH_SKIPPED, which becomes these tests' skip reason
(skipped, never passed).  Its ``is_causal`` mask is the lower-triangular one the chapter
uses; its default scale is 1/sqrt(width of Q), which ``scale=`` overrides for other d_k.
"""

import os

import numpy as np
import pytest

from attention_lab import attention, baseline, scaled_dot_product_attention

torch = pytest.importorskip("torch", reason=os.environ.get("F11_TORCH_SKIPPED") or (
    "torch is not installed: the PyTorch cross-check needs requirements-torch.txt "
    "(scripts/test.sh installs it where a CPU build of torch is available)"))
F = torch.nn.functional


def torch_sdpa(Q, K, V, causal, d_k=None):
    q, k, v = (torch.tensor(a, dtype=torch.float64) for a in (Q, K, V))
    scale = None if d_k is None else 1.0 / np.sqrt(d_k)
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale).numpy()


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("seed", range(12))
def test_general_form_matches_pytorch_on_random_cases(seed, causal):
    rng = np.random.default_rng(1000 + seed)
    n = int(rng.integers(1, 6))
    m = n if causal else int(rng.integers(1, 6))
    d_k, d_v = int(rng.integers(1, 5)), int(rng.integers(1, 6))
    Q, K, V = rng.normal(size=(n, d_k)) * 2, rng.normal(size=(m, d_k)) * 2, rng.normal(size=(m, d_v))
    ours = scaled_dot_product_attention(Q, K, V, causal=causal)
    np.testing.assert_allclose(ours.O, torch_sdpa(Q, K, V, causal), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("d_k", [1, 2, 7.5, 64])
def test_self_attention_with_any_scaling_matches_pytorch(d_k):
    rng = np.random.default_rng(int(d_k * 10))
    X = rng.normal(size=(4, 3))
    Wq, Wk, Wv = rng.normal(size=(3, 2)), rng.normal(size=(3, 2)), rng.normal(size=(3, 5))
    ours = attention(X, Wq, Wk, Wv, d_k=d_k)
    np.testing.assert_allclose(ours.O, torch_sdpa(X @ Wq, X @ Wk, X @ Wv, True, d_k), atol=1e-12)


def test_chapter_baseline_matches_pytorch():
    tables = baseline()
    ours = attention(**tables)
    theirs = torch_sdpa(ours.Q, ours.K, ours.V, causal=True)
    np.testing.assert_allclose(ours.O, theirs, atol=1e-12)


def test_pytorch_linear_stores_out_by_in_and_describes_the_same_map():
    # The chapter's note: nn.Linear keeps weight as [out, in] and computes x @ weight.T.
    Wq = baseline()["Wq"]  # [in, out] in the chapter's convention
    linear = torch.nn.Linear(2, 2, bias=False, dtype=torch.float64)
    with torch.no_grad():
        linear.weight.copy_(torch.tensor(Wq.T))
    X = baseline()["X"]
    np.testing.assert_allclose(linear(torch.tensor(X)).detach().numpy(), X @ Wq, atol=1e-15)


# ------------------------------------------------ the chapter's PyTorch facts (attention_lab.chapter)

from attention_lab.chapter import (  # noqa: E402
    chapter_numbers,
    mha_like_torch,
    mha_recipe,
    multihead_example,
    pytorch_facts,
    sdpa_like_torch,
)


def t64(a):
    return torch.tensor(np.asarray(a), dtype=torch.float64)


def torch_mha(query, key, value, in_proj_weight, out_proj_weight, num_heads=1, attn_mask=None):
    """Real nn.MultiheadAttention (bias=False, batch_first=True) with the given weights: (O, A)."""
    E = np.asarray(query).shape[1]
    mha = torch.nn.MultiheadAttention(E, num_heads, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(t64(in_proj_weight))
        mha.out_proj.weight.copy_(t64(out_proj_weight))
    mask = None if attn_mask is None else torch.tensor(np.asarray(attn_mask))
    out, weights = mha(t64(query)[None], t64(key)[None], t64(value)[None], attn_mask=mask)
    return out[0].detach().numpy(), weights[0].detach().numpy()


def test_multihead_attention_with_the_chapters_recipe_reproduces_O():
    t = baseline()
    r = attention(**t)
    recipe = mha_recipe(t["Wq"], t["Wk"], t["Wv"])
    assert recipe["in_proj_weight"].shape == (6, 2)  # [3E, E]
    X = t["X"]
    out, _ = torch_mha(X, X, X, recipe["in_proj_weight"], recipe["out_proj_weight"], attn_mask=recipe["attn_mask"])
    np.testing.assert_allclose(out, r.O, atol=1e-12)
    assert chapter_numbers()["mha_repro_maxdiff"] <= 1e-12


def test_double_projection_mistake_gives_the_glued_numbers():
    t = baseline()
    X, recipe = t["X"], mha_recipe(t["Wq"], t["Wk"], t["Wv"])
    W, Wo, mask = recipe["in_proj_weight"], recipe["out_proj_weight"], recipe["attn_mask"]
    numbers = chapter_numbers()
    # Self-check 7: only the query pre-projected; in_proj multiplies it by Wq again.
    out, weights = torch_mha(X @ t["Wq"], X, X, W, Wo, attn_mask=mask)
    np.testing.assert_allclose(out[1], [numbers["mha_double_o10"], numbers["mha_double_o11"]], atol=1e-12)
    np.testing.assert_allclose(weights[1], [numbers["mha_double_a10"], numbers["mha_double_a11"]], atol=1e-12)
    assert not np.allclose(out, attention(**t).O)  # the mistake really changes the output
    # All three pre-projected.
    out3, _ = torch_mha(X @ t["Wq"], X @ t["Wk"], X @ t["Wv"], W, Wo, attn_mask=mask)
    np.testing.assert_allclose(out3[1], [numbers["mha_double3_o10"], numbers["mha_double3_o11"]], atol=1e-12)


def test_sdpa_boolean_mask_true_means_may_attend():
    r = attention(**baseline())
    tril = np.tril(np.ones((2, 2), dtype=bool))
    out = F.scaled_dot_product_attention(t64(r.Q), t64(r.K), t64(r.V), attn_mask=torch.tensor(tril)).numpy()
    np.testing.assert_allclose(out, r.O, atol=1e-12)
    np.testing.assert_allclose(out, sdpa_like_torch(r.Q, r.K, r.V, attn_mask=tril)[0], atol=1e-12)
    assert chapter_numbers()["bm_sdpa_a10"] == pytest.approx(r.A[1, 0], abs=1e-15)


def test_multihead_boolean_mask_true_means_masked_so_sdpas_tril_gives_nan_rows():
    facts = pytorch_facts()
    t = baseline()
    X, recipe = t["X"], facts["recipe"]
    out, weights = torch_mha(X, X, X, recipe["in_proj_weight"], recipe["out_proj_weight"], attn_mask=facts["tril"])
    nan_rows = [int(i) for i in np.flatnonzero(np.isnan(out).any(axis=1))]
    assert nan_rows == facts["mha_nan_rows"] == [chapter_numbers()["bm_mha_nan_row"]]
    # Row 0 ("我") may read only what tril marks False: the later position.
    np.testing.assert_allclose(weights[0], [chapter_numbers()["bm_mha_a00"], chapter_numbers()["bm_mha_a01"]])
    np.testing.assert_allclose(out[0], facts["mha_tril_O"][0], atol=1e-12)


def test_with_need_weights_false_the_fully_masked_row_is_silently_zero_not_nan():
    """The chapter's warning: the NaN row appears with the default need_weights=True; with
    need_weights=False (PyTorch's fast path) the same mistake gives a row of zeros."""
    facts = pytorch_facts()
    X, recipe = baseline()["X"], facts["recipe"]
    mha = torch.nn.MultiheadAttention(2, 1, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(t64(recipe["in_proj_weight"]))
        mha.out_proj.weight.copy_(t64(recipe["out_proj_weight"]))
        out, _ = mha(t64(X)[None], t64(X)[None], t64(X)[None], attn_mask=torch.tensor(facts["tril"]),
                     need_weights=False)
    row = facts["mha_nan_rows"][0]
    assert not np.isnan(out[0].numpy()).any()
    np.testing.assert_array_equal(out[0, row].numpy(), np.zeros(X.shape[1]))


def test_with_a_kv_cache_the_causal_mask_must_be_aligned_bottom_right():
    """The chapter's warning: tril(ones(n, m)) and is_causal=True align top-left; for the
    newest query (n = 1) against m cached keys only diagonal=m-n gives the chapter's row."""
    r = attention(**baseline())
    q, K, V = t64(r.Q[-1:]), t64(r.K), t64(r.V)
    n, m = 1, r.K.shape[0]
    top_left = torch.tril(torch.ones(n, m, dtype=torch.bool))
    bottom_right = torch.tril(torch.ones(n, m, dtype=torch.bool), diagonal=m - n)
    right = F.scaled_dot_product_attention(q, K, V, attn_mask=bottom_right).numpy()
    np.testing.assert_allclose(right[0], r.O[-1], atol=1e-12)
    for wrong in (F.scaled_dot_product_attention(q, K, V, attn_mask=top_left).numpy(),
                  F.scaled_dot_product_attention(q, K, V, is_causal=True).numpy()):
        assert not np.allclose(wrong[0], r.O[-1])


def test_float_mask_is_added_to_the_scores_like_M():
    r = attention(**baseline())
    out = F.scaled_dot_product_attention(t64(r.Q), t64(r.K), t64(r.V), attn_mask=t64(r.M)).numpy()
    np.testing.assert_allclose(out, r.O, atol=1e-12)
    np.testing.assert_allclose(out, pytorch_facts()["float_O"], atol=1e-12)


def test_two_head_example_equals_pytorch_multihead_attention():
    mh = multihead_example()
    W = np.concatenate([mh["Wq"].T, mh["Wk"].T, mh["Wv"].T])
    mask = np.triu(np.ones((mh["n"], mh["n"]), dtype=bool), 1)
    out, _ = torch_mha(mh["X"], mh["X"], mh["X"], W, mh["Wo"].T, num_heads=mh["h"], attn_mask=mask)
    np.testing.assert_allclose(out, mh["output"], atol=1e-12)
    assert mh["concat"].shape == (mh["n"], mh["d_model"]) and mh["heads"][0].O.shape == (mh["n"], mh["d_head"])


@pytest.mark.parametrize("seed", range(3))
def test_numpy_models_of_both_interfaces_match_pytorch_on_random_masks(seed):
    rng = np.random.default_rng(500 + seed)
    n, m, E, h = 3, 4, 4, 2
    q, k, v = rng.normal(size=(n, E)), rng.normal(size=(m, E)), rng.normal(size=(m, E))
    W, Wo = rng.normal(size=(3 * E, E)), rng.normal(size=(E, E))
    mask = rng.random((n, m)) < 0.4
    mask[:, 0] = False  # every row keeps one readable key, so no NaN
    ours, ours_A = mha_like_torch(q, k, v, W, Wo, num_heads=h, attn_mask=mask)
    theirs, theirs_A = torch_mha(q, k, v, W, Wo, num_heads=h, attn_mask=mask)
    np.testing.assert_allclose(ours, theirs, atol=1e-12)
    np.testing.assert_allclose(ours_A, theirs_A, atol=1e-12)
    keep = ~mask  # SDPA: True = attend
    o_sdpa = F.scaled_dot_product_attention(t64(q), t64(k), t64(v), attn_mask=torch.tensor(keep)).numpy()
    np.testing.assert_allclose(sdpa_like_torch(q, k, v, attn_mask=keep)[0], o_sdpa, atol=1e-12)


# ------------------------------------------------ several heads in the shapes lab (issue 31)

from attention_lab.core import causal_mask, multi_head_attention, padding_mask  # noqa: E402
from attention_lab.shapes import EXAMPLES, compute  # noqa: E402


def lab_mask(n, m, causal, pad):
    """The shapes lab's additive mask: padding, and causal aligned bottom-right (core.general_attention)."""
    M = padding_mask(n, m, pad)
    return M + causal_mask(n, m, diagonal=m - n) if causal else M


def random_heads(rng, h, cross, causal, d_model=None, d_k=None, d_v=None):
    n = int(rng.integers(1, 7))
    m = int(rng.integers(n if causal else 1, 7)) if cross else n  # causal needs n <= m (bottom-right)
    d_model = d_model or int(rng.integers(1, 5))
    d_k = d_k or int(rng.integers(1, 5))
    d_v = d_v or int(rng.integers(1, 5))
    X, Xs = rng.normal(size=(n, d_model)), rng.normal(size=(m, d_model)) if cross else None
    W = [rng.normal(size=(d_model, h * w)) for w in (d_k, d_k, d_v)]
    return dict(X=X, source=Xs, Wq=W[0], Wk=W[1], Wv=W[2], Wo=rng.normal(size=(h * d_v, d_model)), h=h,
                causal=causal, pad=int(rng.integers(0, m)))


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("cross", [False, True])
@pytest.mark.parametrize("h", [1, 2, 4])
def test_heads_with_d_model_divisible_equal_pytorch_multihead_attention(h, cross, causal):
    """nn.MultiheadAttention (bias off, batch_first) with in_proj_weight = [Wqᵀ; Wkᵀ; Wvᵀ] and
    out_proj = Woᵀ: its output is Y and its per-head weights (average_attn_weights=False) are each
    head's A, for self and cross attention, causal (bottom-right) and padded keys."""
    rng = np.random.default_rng(100 * h + 10 * cross + causal)
    for _ in range(4):
        d_head = int(rng.integers(1, 3))
        c = random_heads(rng, h, cross, causal, d_model=h * d_head, d_k=d_head, d_v=d_head)
        ours = multi_head_attention(**c)
        X = c["X"]
        src = X if c["source"] is None else c["source"]
        n, m, E = X.shape[0], src.shape[0], X.shape[1]
        mha = torch.nn.MultiheadAttention(E, h, bias=False, batch_first=True, dtype=torch.float64)
        with torch.no_grad():
            mha.in_proj_weight.copy_(t64(np.concatenate([c["Wq"].T, c["Wk"].T, c["Wv"].T])))
            mha.out_proj.weight.copy_(t64(c["Wo"].T))
        padded = t64(padding_mask(1, m, c["pad"]))  # key_padding_mask, additive as attn_mask (one kind for both)
        mask = lab_mask(n, m, causal, 0)
        out, weights = mha(t64(X)[None], t64(src)[None], t64(src)[None], attn_mask=t64(mask),
                           key_padding_mask=padded, average_attn_weights=False)
        np.testing.assert_allclose(out[0].detach().numpy(), ours.Y, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(weights[0].detach().numpy(), ours.A, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_heads_of_any_width_equal_pytorch_sdpa_on_the_reshaped_tables(seed):
    """h·d_k ≠ d_model (which nn.MultiheadAttention cannot hold): the library's reshape,
    (L, h·d_k) -> (h, L, d_k), then F.scaled_dot_product_attention per head (its scale 1/√d_k of
    one head's width), the heads back side by side and times Wo, is the lab's Y."""
    rng = np.random.default_rng(700 + seed)
    h = int(rng.integers(2, 5))
    c = random_heads(rng, h, cross=bool(seed % 2), causal=seed % 3 == 0)
    ours = multi_head_attention(**c)
    X = c["X"]
    src = X if c["source"] is None else c["source"]
    n, m = X.shape[0], src.shape[0]

    def split(table, width):  # (L, h·width) -> (h, L, width)
        return t64(table).reshape(table.shape[0], h, width).transpose(0, 1)

    d_k, d_v = c["Wq"].shape[1] // h, c["Wv"].shape[1] // h
    q, k, v = split(X @ c["Wq"], d_k), split(src @ c["Wk"], d_k), split(src @ c["Wv"], d_v)
    o = F.scaled_dot_product_attention(q, k, v, attn_mask=t64(lab_mask(n, m, c["causal"], c["pad"])))
    concat = o.transpose(0, 1).reshape(n, h * d_v).numpy()
    np.testing.assert_allclose(concat, ours.O, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(concat @ c["Wo"], ours.Y, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["two_heads", "heads_narrow"])
def test_the_ready_head_examples_equal_pytorch(name):
    state = EXAMPLES[name]
    t, h = state["tables"], state["h"]
    ours = compute(state)
    X = np.array(t["X"])
    n, d_k, d_v = X.shape[0], state["d_k"], state["d_v"]
    q = t64(X @ np.array(t["Wq"])).reshape(n, h, d_k).transpose(0, 1)
    k = t64(X @ np.array(t["Wk"])).reshape(n, h, d_k).transpose(0, 1)
    v = t64(X @ np.array(t["Wv"])).reshape(n, h, d_v).transpose(0, 1)
    o = F.scaled_dot_product_attention(q, k, v, is_causal=bool(state["causal"])).transpose(0, 1).reshape(n, h * d_v)
    np.testing.assert_allclose(o.numpy() @ np.array(t["Wo"]), ours.Y, atol=1e-12)


# ------------------------------------------- the chapter's strong-course points (issue 28, item 3)

def test_sdpa_attends_over_the_last_two_axes_of_batched_heads():
    """(N, h, L, E), (N, h, S, E), (N, h, S, Ev) -> (N, h, L, Ev); each (sentence, head) is the core's."""
    rng = np.random.default_rng(28)
    N, h, L, S, E, Ev = 2, 3, 4, 5, 6, 7
    q, k, v = rng.normal(size=(N, h, L, E)), rng.normal(size=(N, h, S, E)), rng.normal(size=(N, h, S, Ev))
    out = F.scaled_dot_product_attention(t64(q), t64(k), t64(v)).numpy()
    assert out.shape == (N, h, L, Ev)
    for b in range(N):
        for t in range(h):
            np.testing.assert_allclose(out[b, t], scaled_dot_product_attention(q[b, t], k[b, t], v[b, t]).O, atol=1e-12)


def test_sdpa_scale_is_the_factor_the_d_k_slider_sets():
    r = attention(**baseline(), d_k=8)  # the lab's d_k = 8: only the number under the root changes
    default = F.scaled_dot_product_attention(t64(r.Q), t64(r.K), t64(r.V), attn_mask=t64(r.M)).numpy()
    scaled = F.scaled_dot_product_attention(t64(r.Q), t64(r.K), t64(r.V), attn_mask=t64(r.M),
                                            scale=1 / np.sqrt(8)).numpy()
    np.testing.assert_allclose(scaled, r.O, atol=1e-12)
    np.testing.assert_allclose(default, attention(**baseline()).O, atol=1e-12)  # 1/√E, E = Q's width


@pytest.mark.parametrize("batch_first", [True, False])
def test_multihead_attention_returns_output_and_shares_averaged_over_heads_by_default(batch_first):
    N, L, S, E, h = 2, 4, 5, 6, 3
    mha = torch.nn.MultiheadAttention(E, h, batch_first=batch_first, dtype=torch.float64).eval()
    x, src = torch.randn(N, L, E, dtype=torch.float64), torch.randn(N, S, E, dtype=torch.float64)
    if not batch_first:
        x, src = x.transpose(0, 1), src.transpose(0, 1)
    with torch.no_grad():
        result = mha(x, src, src)
        per_head = mha(x, src, src, average_attn_weights=False)[1]
        quiet = mha(x, src, src, need_weights=False)
    assert isinstance(result, tuple) and len(result) == 2
    out, weights = result
    assert out.shape == ((N, L, E) if batch_first else (L, N, E))
    assert weights.shape == (N, L, S) and per_head.shape == (N, h, L, S)
    torch.testing.assert_close(weights, per_head.mean(dim=1))
    assert quiet[1] is None


def test_sdpa_drops_shares_whenever_dropout_p_is_set_but_multihead_attention_only_in_training():
    r = attention(**baseline())
    q, k, v = (t64(a).expand(64, 2, 2) for a in (r.Q, r.K, r.V))
    torch.manual_seed(0)
    dropped = F.scaled_dot_product_attention(q, k, v, attn_mask=t64(r.M), dropout_p=0.5)  # no train/eval here
    assert not torch.allclose(dropped, t64(r.O).expand(64, 2, 2))
    off = F.scaled_dot_product_attention(q, k, v, attn_mask=t64(r.M), dropout_p=0)
    np.testing.assert_allclose(off[0].numpy(), r.O, atol=1e-12)
    mha = torch.nn.MultiheadAttention(2, 1, dropout=0.5, batch_first=True, dtype=torch.float64)
    x = t64(baseline()["X"])[None].expand(64, 2, 2)
    torch.manual_seed(0)
    assert not torch.equal(mha(x, x, x)[0], mha(x, x, x)[0])  # training mode: shares dropped at random
    mha.eval()
    with torch.no_grad():
        assert torch.equal(mha(x, x, x)[0], mha(x, x, x)[0])  # eval: no dropout


def test_a_fully_masked_row_is_nan_in_softmax_zero_in_sdpa_and_refused_by_the_core():
    """The masking box and the 进阶 box (checked on PyTorch 2.13, CPU)."""
    from attention_lab.core import AttentionInputError, softmax

    row = torch.tensor([[-np.inf, -np.inf]], dtype=torch.float64)
    assert torch.isnan(torch.softmax(row, dim=-1)).all()
    with pytest.raises(AttentionInputError) as refused:
        softmax(row.numpy())
    assert refused.value.kind == "all_masked"
    r = attention(**baseline())
    blocked = torch.tensor([[False, False], [True, True]])  # SDPA: True = may attend; row 0 reads nothing
    out = F.scaled_dot_product_attention(t64(r.Q), t64(r.K), t64(r.V), attn_mask=blocked).numpy()
    np.testing.assert_array_equal(out[0], np.zeros(2))
    np.testing.assert_allclose(out[1], r.O[1], atol=1e-12)


def test_is_causal_and_attn_mask_cannot_be_given_together():
    r = attention(**baseline())
    with pytest.raises(RuntimeError, match="attn_mask"):
        F.scaled_dot_product_attention(t64(r.Q), t64(r.K), t64(r.V), attn_mask=t64(r.M), is_causal=True)


def test_padding_with_the_causal_mask_as_the_chapter_computes_it():
    """Padding at the end: the filler's own row still has an output (the core's, with torch's
    key_padding_mask); at the front with the causal mask, row 0 reads nothing: NaN in nn.MultiheadAttention."""
    from attention_lab.core import general_attention
    from attention_lab.chapter import mha_recipe

    t = baseline()
    Xp = np.vstack([t["X"], np.zeros((1, 2))])
    ours = general_attention(Xp, t["Wq"], t["Wk"], t["Wv"], causal=True, pad=1)
    recipe = mha_recipe(t["Wq"], t["Wk"], t["Wv"])
    mha = torch.nn.MultiheadAttention(2, 1, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(t64(recipe["in_proj_weight"]))
        mha.out_proj.weight.copy_(t64(recipe["out_proj_weight"]))
        causal = torch.triu(torch.ones(3, 3, dtype=torch.bool), diagonal=1)
        end = mha(t64(Xp)[None], t64(Xp)[None], t64(Xp)[None], attn_mask=causal,
                  key_padding_mask=torch.tensor([[False, False, True]]))
        Xl = np.vstack([np.zeros((1, 2)), t["X"]])
        front = mha(t64(Xl)[None], t64(Xl)[None], t64(Xl)[None], attn_mask=causal,
                    key_padding_mask=torch.tensor([[True, False, False]]))
    np.testing.assert_allclose(end[0][0].numpy(), ours.O, atol=1e-12)
    np.testing.assert_allclose(end[1][0].numpy(), ours.A, atol=1e-12)
    assert np.isfinite(end[0][0, 2].numpy()).all()
    assert torch.isnan(front[0][0, 0]).all() and not torch.isnan(front[0][0, 1:]).any()
