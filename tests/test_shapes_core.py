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
    assert "# pass 4" in proc.stdout
