"""The core computation: the draft's numbers, softmax properties, clear errors.

Expected values below are the draft's printed numbers (10 decimals) or exact
integers from its hand computation; the checks allow 1e-10, the draft's rounding.
"""

import json
import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from attention_lab import (
    AttentionInputError,
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


# --- refusals: each bad input gets its kind and a message naming it ----------------

BAD_INPUTS = json.loads((Path(__file__).parent / "bad_inputs.json").read_text(encoding="utf-8"))
SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _decode(value):
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, dict):
        if set(value) == {"$"}:
            return SPECIAL[value["$"]]
        return {k: _decode(v) for k, v in value.items()}
    return value


def _run(case):
    """The call a case names: flat lab params, tables, scaled_dot_product_attention or softmax."""
    args = _decode(case["args"])
    base = {name: table.tolist() for name, table in baseline().items()}
    if case["call"] == "params":
        # Flat lab params over the baseline, values taken as they are (not coerced).
        params = {f"{t}[{i},{j}]": base[t][i][j] for t in ("X", "Wq", "Wk", "Wv") for i in range(2) for j in range(2)}
        params.update({"d_k": 2, "causal": True}, **args)
        tables = {t: [[params[f"{t}[{i},{j}]"] for j in range(2)] for i in range(2)]
                  for t in ("X", "Wq", "Wk", "Wv")}
        return attention(**tables, d_k=params["d_k"], causal=params["causal"])
    if case["call"] == "attention":
        return attention(**{**base, **args})
    if case["call"] == "sdpa":
        eye = [[1.0, 0.0], [0.0, 1.0]]
        return scaled_dot_product_attention(args.pop("Q", eye), args.pop("K", eye), args.pop("V", eye), **args)
    if case["call"] == "softmax":
        return softmax(args["scores"])
    raise AssertionError(f"unknown call {case['call']}")


@pytest.mark.parametrize("case", BAD_INPUTS["cases"], ids=[c["label"] for c in BAD_INPUTS["cases"]])
def test_bad_input_is_refused_with_its_kind_and_a_message_naming_it(case):
    if case["kind"] is None:
        result = _run(case)
        shares = result if isinstance(result, np.ndarray) else result.A
        assert np.all(np.isfinite(shares))
        return
    with pytest.raises(AttentionInputError) as info:
        _run(case)
    assert info.value.kind == case["kind"], str(info.value)
    assert case.get("message", "") in str(info.value)


def test_the_table_of_bad_inputs_has_a_case_of_every_kind_of_refusal():
    kinds = {c["kind"] for c in BAD_INPUTS["cases"]}
    for kind in ("type", "nonfinite", "shape", "d_k", "causal", "mask", "all_masked", "overflow", None):
        assert kind in kinds, f"tests/bad_inputs.json has no case of kind {kind}"


@pytest.mark.parametrize("value", [[[1 + 2j, 1], [1, -1]], np.array([[1, 1], [1, -1]], dtype=complex)])
def test_complex_input_is_refused_instead_of_dropping_the_imaginary_part(value):
    with pytest.raises(AttentionInputError, match="real numbers") as info:
        attention(**{**baseline(), "X": value})
    assert info.value.kind == "complex"


@pytest.mark.parametrize("value, kind", [
    (np.array([[True, False], [True, True]]), "type"),
    (np.array([["1", "1"], ["1", "-1"]]), "type"),
    ([[1, 1], [1, None]], "type"),
    ([[1, 1], [1, "-1"]], "type"),
])
def test_numpy_arrays_and_lists_of_non_numbers_are_refused(value, kind):
    with pytest.raises(AttentionInputError) as info:
        attention(**{**baseline(), "X": value})
    assert info.value.kind == kind


def test_numpy_numbers_and_bools_are_accepted_where_they_mean_numbers_and_flags():
    tables = {k: v.astype(np.float32) for k, v in baseline().items()}
    tables["X"] = baseline()["X"].astype(np.int64)
    r = attention(**tables, d_k=np.int64(2), causal=np.bool_(True))
    np.testing.assert_allclose(r.O, attention(**baseline()).O, atol=1e-6)


def test_a_boolean_numpy_mask_is_refused_with_how_to_convert_it():
    allowed = np.tril(np.ones((2, 2), dtype=bool))
    with pytest.raises(AttentionInputError, match=r"np\.where\(allowed, 0\.0, -np\.inf\)") as info:
        scaled_dot_product_attention(np.eye(2), np.eye(2), np.eye(2), mask=allowed)
    assert info.value.kind == "mask"
    converted = scaled_dot_product_attention(np.eye(2), np.eye(2), np.eye(2), mask=np.where(allowed, 0.0, -np.inf))
    np.testing.assert_array_equal(converted.A, scaled_dot_product_attention(np.eye(2), np.eye(2), np.eye(2), causal=True).A)


def test_overflowing_scores_are_reported_as_overflow_not_as_masked_or_nan():
    # Row 1 of S would be -1e400 for both keys: a float gives -inf, which used to read as "masked".
    Q, K = np.array([[1.0, 0.0], [-1e200, 0.0]]), np.array([[1e200, 0.0], [1e200, 0.0]])
    with pytest.raises(AttentionInputError, match=r"scores overflow.*about 1e\+399") as info:
        scaled_dot_product_attention(Q, K, np.eye(2))
    assert info.value.kind == "overflow" and "masked" not in str(info.value)


def test_refusals_are_value_errors_so_existing_callers_still_catch_them():
    assert issubclass(AttentionInputError, ValueError)


# --- hostile inputs: every one refused by name, never a bare numpy or Python error -----------

@pytest.mark.parametrize("d_k", [10**400, -10**400])
def test_a_d_k_too_large_for_a_float_is_refused_as_d_k_not_overflowerror(d_k):
    with pytest.raises(AttentionInputError, match="d_k must be a positive number") as info:
        attention(**baseline(), d_k=d_k)
    assert info.value.kind == "d_k" and "1e+400" in str(info.value)


@pytest.mark.parametrize("table", [[[10**400, 1], [1, -1]], np.array([[1, 1], [1, -10**400]], dtype=object)])
def test_a_whole_number_too_large_for_a_float_in_x_is_named(table):
    with pytest.raises(AttentionInputError, match=r"X\[\d, \d\] is too large for a float: about -?1e\+400") as info:
        attention(**{**baseline(), "X": table})
    assert info.value.kind == "overflow"


def test_a_ragged_mask_list_is_refused_with_its_row_lengths():
    with pytest.raises(AttentionInputError, match=r"mask must have shape \(2, 2\).*different lengths \[2, 1\]") as info:
        scaled_dot_product_attention(np.eye(2), np.eye(2), np.eye(2), mask=[[0.0, -np.inf], [0.0]])
    assert info.value.kind == "shape"


def test_a_mask_mixing_true_with_numbers_is_refused_not_read_as_one():
    # np.asarray([[True, 0], ...]) is an int table with a 1 in it: that was accepted as a score bonus.
    with pytest.raises(AttentionInputError, match="not True/False") as info:
        scaled_dot_product_attention(np.eye(2), np.eye(2), np.eye(2), mask=[[True, 0], [0, 0]])
    assert info.value.kind == "mask"


@pytest.mark.parametrize("scores, message", [
    ([], r"non-empty.*\(0,\)"),
    ([[]], r"non-empty.*\(1, 0\)"),
    (3.0, r"non-empty.*\(\)"),
    ([[1.0, 2.0], [3.0]], "rectangular"),
])
def test_softmax_of_nothing_or_ragged_rows_is_a_shape_refusal(scores, message):
    with pytest.raises(AttentionInputError, match=message) as info:
        softmax(scores)
    assert info.value.kind == "shape"


def test_softmax_on_an_axis_that_does_not_exist_is_a_shape_refusal():
    with pytest.raises(AttentionInputError, match="axis 2 does not exist") as info:
        softmax([[1.0, 2.0]], axis=2)
    assert info.value.kind == "shape"


@pytest.mark.parametrize("where", ["X", "Wv"])
def test_a_masked_array_with_masked_entries_is_refused_not_read_as_its_hidden_values(where):
    # np.asarray drops the mask: the hidden 1e9 would have been computed with, silently.
    hidden = np.ma.masked_array(baseline()[where], mask=[[False, True], [False, False]])
    hidden.data[0, 1] = 1e9
    with pytest.raises(AttentionInputError, match=rf"{where} is a numpy masked array with 1 masked entry.*"
                                                  rf"{where}\.filled\(0\.0\)") as info:
        attention(**{**baseline(), where: hidden})
    assert info.value.kind == "masked"


def test_a_masked_array_as_the_attention_mask_is_refused_with_the_additive_form():
    m = np.ma.masked_array(np.zeros((2, 2)), mask=[[False, True], [False, False]])
    with pytest.raises(AttentionInputError, match=r"np\.where\(m\.mask, -np\.inf, 0\.0\)") as info:
        scaled_dot_product_attention(np.eye(2), np.eye(2), np.eye(2), mask=m)
    assert info.value.kind == "masked"
    with pytest.raises(AttentionInputError) as info:
        softmax(np.ma.masked_array([[0.0, 1.0]], mask=[[True, False]]))
    assert info.value.kind == "masked"


def test_a_masked_array_with_nothing_masked_is_just_its_numbers():
    tables = {k: np.ma.masked_array(v) for k, v in baseline().items()}
    np.testing.assert_array_equal(attention(**tables).O, attention(**baseline()).O)


# Row 1 reads with scores (3, -2.5)/√2: a float sum of the two products near 1.79e+308 rounds
# past the largest float, though O, a weighted average of V's rows, is exactly 1.79e+308.
UNEVEN_Q = [[1.0, 0.0], [3.0, -2.5]]
UNEVEN_K = [[1.0, 0.0], [0.0, 1.0]]


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_o_stays_finite_when_v_holds_the_largest_float(sign):
    big = sign * np.finfo(float).max
    shares = softmax(np.array(UNEVEN_Q) @ np.array(UNEVEN_K).T / np.sqrt(2))
    with np.errstate(over="ignore"):
        assert not np.all(np.isfinite(shares @ np.full((2, 2), big))), "the case no longer overflows a plain A @ V"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning either
        r = scaled_dot_product_attention(UNEVEN_Q, UNEVEN_K, np.full((2, 2), big))
    np.testing.assert_array_equal(r.O, np.full((2, 2), big))  # the exact answer


def test_o_from_huge_values_of_both_signs_stays_within_each_column_of_v():
    big = np.finfo(float).max
    V = np.array([[big, -big], [-big, big]])
    r = scaled_dot_product_attention(UNEVEN_Q, UNEVEN_K, V)
    assert np.all(np.isfinite(r.O)) and np.all(np.abs(r.O) <= big)
    # The weighted averages, computed on the scaled-down table (exact: a power of two).
    np.testing.assert_allclose(r.O / 2.0**1023, r.A @ (V / 2.0**1023), rtol=1e-12)
