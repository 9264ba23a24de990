"""The core computation: the draft's numbers, softmax properties, clear errors.

Expected values below are the draft's printed numbers (10 decimals) or exact
integers from its hand computation; the checks allow 1e-10, the draft's rounding.
"""

import math

import numpy as np
import pytest

from attention_lab import (
    attention,
    baseline,
    causal_mask,
    scaled_dot_product_attention,
    softmax,
)

DRAFT_TOL = 1e-10  # the draft prints 10 decimals


@pytest.fixture
def base():
    return attention(**baseline())


def test_projections_match_the_hand_computation(base):
    # q0=[0,1] k0=[1,0] v0=[10,0] q1=[1,0] k1=[0,1] v1=[0,20]
    np.testing.assert_array_equal(base.Q, [[0, 1], [1, 0]])
    np.testing.assert_array_equal(base.K, [[1, 0], [0, 1]])
    np.testing.assert_array_equal(base.V, [[10, 0], [0, 20]])


def test_raw_scores_of_ai_are_one_and_zero(base):
    np.testing.assert_array_equal(base.raw_scores[1], [1, 0])
    np.testing.assert_array_equal(base.raw_scores, [[0, 1], [1, 0]])


def test_scaled_scores_of_ai_divide_by_root_two(base):
    assert base.d_k == 2 and base.scale == pytest.approx(math.sqrt(2))
    assert base.S[1, 0] == pytest.approx(0.7071067812, abs=DRAFT_TOL)
    assert base.S[1, 1] == 0


def test_softmax_steps_of_ai_match_the_draft(base):
    shifted = base.S[1] - base.S[1].max()
    np.testing.assert_allclose(shifted, [0, -0.7071067812], atol=DRAFT_TOL)
    exps = np.exp(shifted)
    np.testing.assert_allclose(exps, [1, 0.4930686914], atol=DRAFT_TOL)
    assert exps.sum() == pytest.approx(1.4930686914, abs=DRAFT_TOL)
    np.testing.assert_allclose(base.A[1], [0.6697615493, 0.3302384507], atol=DRAFT_TOL)


def test_output_of_ai_is_the_share_weighted_values(base):
    np.testing.assert_allclose(base.O[1], [6.6976154933, 6.6047690135], atol=DRAFT_TOL)
    np.testing.assert_allclose(base.O[1], base.A[1] @ base.V, atol=1e-15)


def test_matrix_form_tables_match_the_draft(base):
    assert base.S[0, 0] == 0 and base.S[0, 1] == -np.inf
    np.testing.assert_allclose(base.A, [[1, 0], [0.6697615493, 0.3302384507]], atol=DRAFT_TOL)
    np.testing.assert_allclose(base.O, [[10, 0], [6.6976154933, 6.6047690135]], atol=DRAFT_TOL)
    np.testing.assert_array_equal(base.M, [[0, -np.inf], [0, 0]])


def test_row_zero_reads_only_itself_so_its_output_is_its_value(base):
    assert base.A[0, 1] == 0.0  # exactly zero, not tiny
    np.testing.assert_array_equal(base.O[0], base.V[0])


def test_only_wv_changed_keeps_scores_and_shares_but_changes_output(base):
    changed = attention(**baseline("only_wv"))
    np.testing.assert_array_equal(changed.S, base.S)
    np.testing.assert_array_equal(changed.A, base.A)
    assert not np.allclose(changed.V, base.V)
    assert not np.allclose(changed.O, base.O)


def test_only_wq_changed_changes_shares_but_not_values(base):
    changed = attention(**baseline("only_wq"))
    np.testing.assert_array_equal(changed.V, base.V)
    np.testing.assert_array_equal(changed.K, base.K)
    assert not np.allclose(changed.S[1], base.S[1])
    assert not np.allclose(changed.A[1], base.A[1])
    # Wq equal to Wk swaps the two shares of 爱 in this example.
    np.testing.assert_allclose(changed.A[1], base.A[1][::-1], atol=1e-15)


def test_unknown_contrast_is_refused():
    with pytest.raises(ValueError, match="unknown contrast"):
        baseline("only_wz")


def test_baseline_returns_fresh_copies():
    first = baseline()
    first["X"][0, 0] = 99
    assert baseline()["X"][0, 0] == 1


def test_d_k_none_means_width_of_q_and_d_k_one_means_no_scaling():
    tables = baseline()
    assert attention(**tables).d_k == 2
    unscaled = attention(**tables, d_k=1)
    np.testing.assert_array_equal(unscaled.S[1], [1, 0])


# --- properties -----------------------------------------------------------

RNG = np.random.default_rng(20261129)


@pytest.mark.parametrize("seed", range(20))
def test_rows_of_shares_sum_to_one_and_masked_shares_are_exactly_zero(seed):
    rng = np.random.default_rng(seed)
    n, d = rng.integers(1, 7), rng.integers(1, 5)
    X = rng.normal(size=(n, d)) * 3
    Ws = [rng.normal(size=(d, d)) for _ in range(2)] + [rng.normal(size=(d, d + 1))]
    r = attention(X, *Ws)
    np.testing.assert_allclose(r.A.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(r.A[np.triu_indices(n, 1)] == 0.0)
    assert np.all(np.isneginf(r.S[np.triu_indices(n, 1)]))
    assert r.O.shape == (n, d + 1)


def test_adding_a_constant_to_a_row_of_scores_leaves_shares_unchanged():
    S = RNG.normal(size=(4, 5))
    shifted = S + np.array([[3.0], [-100.0], [0.5], [1e4]])
    np.testing.assert_allclose(softmax(S), softmax(shifted), atol=1e-12)


def test_huge_scores_give_no_nan():
    S = np.array([[1e6, -1e6, 0.0], [-1e6, -1e6, -1e6], [1e6, 1e6, -np.inf]])
    A = softmax(S)
    assert np.all(np.isfinite(A))
    np.testing.assert_allclose(A, [[1, 0, 0], [1 / 3, 1 / 3, 1 / 3], [0.5, 0.5, 0]])


def test_huge_inputs_through_attention_give_no_nan():
    X = np.array([[1e3, -1e3], [-1e3, 1e3]])
    r = attention(X, np.eye(2), np.eye(2), np.eye(2), causal=False)
    assert np.all(np.isfinite(r.A)) and np.all(np.isfinite(r.O))


def test_d_v_differs_from_d_k_and_n_differs_from_m():
    rng = np.random.default_rng(7)
    Q, K, V = rng.normal(size=(3, 2)), rng.normal(size=(5, 2)), rng.normal(size=(5, 4))
    r = scaled_dot_product_attention(Q, K, V)
    assert r.S.shape == (3, 5) and r.A.shape == (3, 5) and r.O.shape == (3, 4)
    # Reference written out with explicit loops, independent of the vectorised code.
    for i in range(3):
        scores = [sum(Q[i, c] * K[j, c] for c in range(2)) / math.sqrt(2) for j in range(5)]
        exps = [math.exp(s - max(scores)) for s in scores]
        shares = [e / sum(exps) for e in exps]
        for c in range(4):
            assert r.O[i, c] == pytest.approx(sum(shares[j] * V[j, c] for j in range(5)), abs=1e-12)


def test_causal_mask_for_rectangular_tables_lets_query_i_read_keys_up_to_i():
    M = causal_mask(2, 3)
    np.testing.assert_array_equal(M, [[0, -np.inf, -np.inf], [0, 0, -np.inf]])


# --- bad input --------------------------------------------------------------


def test_a_row_with_every_position_masked_raises_instead_of_nan():
    with pytest.raises(ValueError, match="every position masked"):
        softmax([[0.0, 1.0], [-np.inf, -np.inf]])
    Q = K = V = np.eye(2)
    with pytest.raises(ValueError, match="every position masked"):
        scaled_dot_product_attention(Q, K, V, mask=[[0, 0], [-np.inf, -np.inf]])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(Wq=np.ones((3, 2))), r"X is \(2, 2\), Wq is \(3, 2\)"),
        (dict(Wk=np.ones((2, 3))), r"Wq is \(2, 2\), Wk is \(2, 3\)"),
        (dict(Wv=np.ones((1, 2))), r"X is \(2, 2\), Wv is \(1, 2\)"),
        (dict(X=np.ones(2)), r"X must be 2-D.*\(2,\)"),
        (dict(X=[[1, "a"], [1, 1]]), "X must be a table of numbers"),
        (dict(X=[[1, np.nan], [1, 1]]), "finite"),
        (dict(d_k=0), "d_k must be a positive number"),
        (dict(d_k=-2), "d_k must be a positive number"),
        (dict(d_k="two"), "d_k must be a positive number"),
    ],
)
def test_bad_inputs_raise_clear_errors_naming_the_shapes(kwargs, message):
    tables = baseline()
    tables.update({k: v for k, v in kwargs.items() if k != "d_k"})
    with pytest.raises(ValueError, match=message):
        attention(**tables, **{k: v for k, v in kwargs.items() if k == "d_k"})


def test_general_form_names_shapes_on_mismatch():
    with pytest.raises(ValueError, match=r"Q is \(2, 3\), K is \(4, 2\)"):
        scaled_dot_product_attention(np.ones((2, 3)), np.ones((4, 2)), np.ones((4, 5)))
    with pytest.raises(ValueError, match=r"K is \(4, 2\), V is \(3, 5\)"):
        scaled_dot_product_attention(np.ones((2, 2)), np.ones((4, 2)), np.ones((3, 5)))
    with pytest.raises(ValueError, match=r"mask must have shape \(2, 4\)"):
        scaled_dot_product_attention(np.ones((2, 2)), np.ones((4, 2)), np.ones((4, 5)), mask=np.zeros((2, 2)))
