"""attention_lab.chapter: the examples the chapter glues hold the facts its prose states."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from attention_lab import attention, baseline, scaled_dot_product_attention
from attention_lab.chapter import (
    CROSS_EXAMPLE,
    chapter_numbers,
    cross_attention_example,
    identity_qk_example,
    kv_cache_example,
    lab_experiments,
    mha_like_torch,
    multihead_example,
    pytorch_facts,
    sdpa_like_torch,
    softmax_steps,
)


def test_with_wq_equal_wk_the_raw_scores_are_symmetric_and_self_scores_are_squared_lengths():
    for r in (identity_qk_example(), attention(**baseline("only_wq"))):
        raw = r.raw_scores
        np.testing.assert_allclose(raw, raw.T)
        np.testing.assert_allclose(np.diag(raw), (r.Q ** 2).sum(axis=1))
    numbers = chapter_numbers()
    assert numbers["eye_raw00"] == numbers["eye_raw11"] == 2 and numbers["eye_raw01"] == numbers["eye_raw10"] == 0


def test_the_masked_cell_held_row_0s_highest_raw_score():
    r = attention(**baseline())
    assert np.isneginf(r.S[0, 1])
    assert int(np.argmax(r.raw_scores[0])) == 1
    assert chapter_numbers()["raw01"] > chapter_numbers()["raw00"]


def test_cross_attention_is_projected_and_a_constant_value_column_comes_out_unchanged():
    r = cross_attention_example()
    ex = {k: np.array(v) for k, v in CROSS_EXAMPLE.items()}
    np.testing.assert_array_equal(r.Q, ex["X_tgt"] @ ex["Wq"])
    np.testing.assert_array_equal(r.K, ex["X_src"] @ ex["Wk"])
    np.testing.assert_array_equal(r.V, ex["X_src"] @ ex["Wv"])
    assert r.A.shape == (3, 2) and r.O.shape == (3, 3)
    assert np.all(r.V[:, -1] == r.V[0, -1])
    np.testing.assert_allclose(r.O[:, -1], r.V[0, -1])
    assert not np.isneginf(r.S).any()  # no mask: the source is complete


def test_multihead_example_heads_are_single_head_attention_and_shapes_chain():
    mh = multihead_example()
    assert (mh["n"], mh["d_model"], mh["h"], mh["d_head"]) == (3, 4, 2, 2)
    for k, head in enumerate(mh["heads"]):
        cols = slice(2 * k, 2 * k + 2)
        ref = attention(mh["X"], mh["Wq"][:, cols], mh["Wk"][:, cols], mh["Wv"][:, cols])
        np.testing.assert_allclose(head.O, ref.O)
        assert head.O.shape == (3, 2)
    assert mh["concat"].shape == (3, 4) and mh["output"].shape == (3, 4)
    np.testing.assert_allclose(mh["output"], mh["concat"] @ mh["Wo"])
    assert chapter_numbers()["mh_o00"] == pytest.approx(mh["output"][0, 0])


def test_kv_cache_one_query_gives_the_last_row_of_the_full_computation():
    kv = kv_cache_example()
    assert kv.Q.shape[0] == 1
    np.testing.assert_allclose(kv.O[0], attention(**baseline()).O[-1])


def test_numpy_models_of_pytorch_follow_each_interfaces_mask_meaning():
    facts = pytorch_facts()
    np.testing.assert_allclose(facts["repro_O"], facts["result"].O)
    assert facts["mha_nan_rows"] == [1]
    np.testing.assert_allclose(facts["mha_tril_A"][0], [0.0, 1.0])  # row 0 reads only the future
    np.testing.assert_allclose(facts["sdpa_tril_O"], facts["result"].O)
    r = facts["result"]
    # Self-check 7's mistake: row 1's two scores tie, so o₁ is the plain average of v₀ and v₁ ([5, 10]).
    np.testing.assert_allclose(facts["double_A"][1], [0.5, 0.5])
    np.testing.assert_allclose(facts["double_O"][1], r.V.mean(axis=0))
    keep = np.tril(np.ones((2, 2), dtype=bool))
    np.testing.assert_allclose(sdpa_like_torch(r.Q, r.K, r.V, attn_mask=keep)[0],
                               scaled_dot_product_attention(r.Q, r.K, r.V, causal=True).O)
    with pytest.raises(ValueError, match="in_proj_weight"):
        mha_like_torch(r.Q, r.K, r.V, np.eye(2), np.eye(2))


def test_every_glued_number_is_a_plain_int_or_float():
    numbers = chapter_numbers()
    assert len(numbers) >= 40
    assert all(type(v) in (int, float) and np.isfinite(v) for v in numbers.values()), numbers


def test_lab_experiments_saturate_and_counter_example_ties():
    e = lab_experiments()
    assert e["wq6"].A[1].max() > 0.98
    np.testing.assert_allclose(e["wq0"].Q[1], [0.0, 0.0])
    np.testing.assert_allclose(e["wq0"].A[1], [0.5, 0.5])
    assert e["dk1"].d_k == 1 and e["dk64"].d_k == 64


def test_softmax_steps_are_an_ordinary_record_hasattr_copy_and_pickle_work():
    steps = softmax_steps(attention(**baseline()).S[1])
    np.testing.assert_allclose(steps.shares, attention(**baseline()).A[1], atol=1e-15)
    assert steps.total == pytest.approx(float(np.exp(steps.shifted).sum()))
    assert hasattr(steps, "shares") and not hasattr(steps, "no_such_step")
    with pytest.raises(AttributeError):
        steps.no_such_step
    for twin in (copy.copy(steps), copy.deepcopy(steps), pickle.loads(pickle.dumps(steps))):
        np.testing.assert_array_equal(twin.exps, steps.exps)
    with pytest.raises(ValueError, match="one row of scores"):
        softmax_steps([[0.0, 0.0]])
