"""The shapes lab's mathematics: core.general_attention (self/cross, bottom-right causal, padding)
in Python, and attention.js generalAttention against it in Node (tests/js/shapes.test.cjs, vectors
from scripts/make_shape_vectors.py made now)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attention_lab.core import (AttentionInputError, attention, causal_mask, general_attention, padding_mask,
                                scaled_dot_product_attention)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import make_shape_vectors  # noqa: E402


def test_self_attention_with_the_chapter_numbers_is_the_chapters_attention():
    from attention_lab.core import baseline
    b = baseline()
    ours, chapter = general_attention(**b, causal=True), attention(**b)
    for name in "QKVMSAO":
        np.testing.assert_array_equal(getattr(ours, name), getattr(chapter, name))


def test_cross_attention_takes_keys_and_values_from_the_source_table():
    rng = np.random.default_rng(0)
    X, Xs = rng.normal(size=(3, 2)), rng.normal(size=(4, 2))
    Wq, Wk, Wv = rng.normal(size=(2, 3)), rng.normal(size=(2, 3)), rng.normal(size=(2, 1))
    r = general_attention(X, Wq, Wk, Wv, source=Xs)
    expected = scaled_dot_product_attention(X @ Wq, Xs @ Wk, Xs @ Wv)
    np.testing.assert_allclose(r.O, expected.O)
    assert r.S.shape == (3, 4) and r.O.shape == (3, 1) and r.d_k == 3


def test_causal_with_fewer_queries_than_keys_is_aligned_bottom_right():
    r = general_attention(np.ones((2, 1)), [[1.0]], [[1.0]], [[1.0]], source=np.ones((4, 1)), causal=True)
    np.testing.assert_array_equal(r.M, causal_mask(2, 4, diagonal=2))
    assert r.A[1].tolist() == [0.25] * 4 and r.A[0, 3] == 0


def test_padding_masks_the_last_keys_for_every_query_and_keeps_one():
    r = general_attention(np.eye(3), np.eye(3), np.eye(3), np.eye(3), pad=2)
    assert (r.A[:, 1:] == 0).all() and (r.A[:, 0] == 1).all()
    for bad in (3, -1, 1.5, True):
        with pytest.raises(AttentionInputError) as e:
            padding_mask(3, 3, bad)
        assert e.value.kind == "mask"


def test_causal_with_more_queries_than_keys_is_refused_by_name():
    with pytest.raises(AttentionInputError) as e:
        general_attention(np.ones((3, 1)), [[1.0]], [[1.0]], [[1.0]], source=np.ones((2, 1)), causal=True)
    assert e.value.kind == "all_masked"


def test_javascript_general_attention_equals_python_for_many_shapes(tmp_path):
    node = shutil.which("node")
    if node is None:
        pytest.fail("node not found: run scripts/test.sh, which installs Node.js")
    vectors = tmp_path / "shapes.json"
    vectors.write_text(json.dumps(make_shape_vectors.document(), ensure_ascii=False), encoding="utf-8")
    proc = subprocess.run([node, "--test", "--test-reporter=tap", "tests/js/shapes.test.cjs"], cwd=ROOT,
                          capture_output=True, text=True, env={"SHAPE_VECTORS": str(vectors), "PATH": "/usr/bin:/bin"},
                          timeout=120)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert "# pass 8" in proc.stdout


# ------------------------------------------------ several heads (issue 31)

from attention_lab.core import multi_head_attention  # noqa: E402
from attention_lab.shapes import EXAMPLES, compute  # noqa: E402


def test_one_head_without_wo_is_general_attention():
    rng = np.random.default_rng(3)
    X, Xs = rng.normal(size=(3, 2)), rng.normal(size=(4, 2))
    Wq, Wk, Wv = rng.normal(size=(2, 3)), rng.normal(size=(2, 3)), rng.normal(size=(2, 2))
    one, single = multi_head_attention(X, Wq, Wk, Wv, source=Xs, pad=1), general_attention(X, Wq, Wk, Wv, source=Xs, pad=1)
    assert one.h == 1 and one.Y is None
    for name in "QKVO":
        np.testing.assert_array_equal(getattr(one, name), getattr(single, name))
    np.testing.assert_array_equal(one.A[0], single.A)


def test_each_head_reads_its_own_columns_and_y_is_the_concatenation_times_wo():
    rng = np.random.default_rng(4)
    h, d_k, d_v, d_model = 3, 2, 1, 4  # h·d_k = 6 and h·d_v = 3: neither is d_model, and that is allowed
    X = rng.normal(size=(5, d_model))
    Wq, Wk, Wv = rng.normal(size=(d_model, h * d_k)), rng.normal(size=(d_model, h * d_k)), rng.normal(size=(d_model, h * d_v))
    Wo = rng.normal(size=(h * d_v, d_model))
    r = multi_head_attention(X, Wq, Wk, Wv, Wo=Wo, h=h, causal=True)
    for t, head in enumerate(r.heads):
        k, v = slice(t * d_k, (t + 1) * d_k), slice(t * d_v, (t + 1) * d_v)
        alone = general_attention(X, Wq[:, k], Wk[:, k], Wv[:, v], causal=True)
        np.testing.assert_allclose(head.A, alone.A, rtol=1e-15)
        np.testing.assert_allclose(r.O[:, v], alone.O, rtol=1e-15)
        np.testing.assert_allclose(r.Q[:, k], X @ Wq[:, k])
        assert head.d_k == d_k  # √d_k of one head's width, not of h·d_k
    np.testing.assert_allclose(r.Y, r.O @ Wo)
    assert r.S.shape == r.A.shape == (h, 5, 5) and r.Y.shape == (5, d_model)


def test_changing_one_heads_wq_moves_only_that_heads_shares_and_the_output():
    """The issue's 'done when': change head 1's Wq and watch only its A and Y move."""
    state = EXAMPLES["two_heads"]
    before = compute(state)
    changed = {**state, "tables": {**state["tables"], "Wq": [row[:] for row in state["tables"]["Wq"]]}}
    changed["tables"]["Wq"][0][2] = 0.5  # head 1's first column
    after = compute(changed)
    np.testing.assert_array_equal(after.heads[0].A, before.heads[0].A)
    assert not np.allclose(after.heads[1].A, before.heads[1].A)
    assert not np.allclose(after.Y, before.Y)


def test_the_two_heads_example_reads_the_previous_token_and_the_same_word():
    r = compute(EXAMPLES["two_heads"])
    tokens = EXAMPLES["two_heads"]["tokens"]
    for i in (1, 2):  # head 0: mostly the token before; head 1: mostly tokens that are the same word
        assert int(np.argmax(r.heads[0].A[i])) == i - 1
        same = [j for j in range(i + 1) if tokens[j] == tokens[i]]
        assert r.heads[1].A[i, same].sum() > 0.9
    assert EXAMPLES["two_heads"]["h"] * EXAMPLES["two_heads"]["d_k"] == EXAMPLES["two_heads"]["d_model"]
    narrow = EXAMPLES["heads_narrow"]
    assert narrow["h"] * narrow["d_k"] != narrow["d_model"]
    r = compute(narrow)
    assert int(np.argmax(r.heads[1].A[0])) == 2 and r.Y[0, 1] > r.Y[0, 0]  # the tech head reads 电脑


@pytest.mark.parametrize("bad, why", [
    (dict(h=2, Wq=np.ones((2, 3)), Wk=np.ones((2, 3))), "h·d_k"),
    (dict(h=2, Wv=np.ones((2, 3))), "h·d_v"),
    (dict(h=2, Wo=np.ones((2, 3))), "Wo must be"),
    (dict(h=0), "whole number"),
    (dict(h=True), "whole number"),
    (dict(Wk=np.ones((2, 4))), "same width"),
])
def test_heads_that_do_not_fit_the_tables_are_refused_by_name(bad, why):
    args = dict(X=np.ones((2, 2)), Wq=np.ones((2, 2)), Wk=np.ones((2, 2)), Wv=np.ones((2, 2)), Wo=None, h=1)
    args.update(bad)
    with pytest.raises(AttentionInputError) as e:
        multi_head_attention(**args)
    assert e.value.kind == "shape" and why in str(e.value)
