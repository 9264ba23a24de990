"""Independent cross-check of the core against PyTorch's scaled_dot_product_attention.

PyTorch is a test-only dependency (requirements-test.txt, CPU wheel).  Its
``is_causal`` mask is the lower-triangular one the chapter uses; its default
scale is 1/sqrt(width of Q), which ``scale=`` overrides for other d_k.
"""

import numpy as np
import pytest

from attention_lab import attention, baseline, scaled_dot_product_attention

torch = pytest.importorskip("torch", reason="torch==2.13.0 comes with requirements-test.txt")
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
