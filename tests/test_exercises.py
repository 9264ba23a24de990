"""The exercises a reader writes (book/exercises.md, 你来写; issue 28, item 2).

The checks of ``attention_lab.exercises`` run against a right answer and against answers with
one known mistake each (no √d_k, d_k for √d_k, √d_model for the head's √d_k, softmax along the
queries, a transposed output, no mask, heads split or merged by reshape alone ...): every wrong
one must be told its own Chinese sentence, not only "wrong".  The solutions folded on the page
must pass, and the page's own cells, run in order as the build runs them, must show "还没有写".

Pure Python, the quick tier (no torch imported: that takes seconds), except the one test that
reads the built page.  The torch checks against torch itself are in tests/test_exercises_torch.py;
the sentences for a missing or too old torch are tested here, everywhere.
"""

from __future__ import annotations

import ast
import itertools
import math
import re
import types
from pathlib import Path

import numpy as np
import pytest

from attention_lab import exercises
from attention_lab.exercises import (
    SPACES,
    answer_with,
    attention_cases,
    check_attention,
    check_multihead,
    check_torch_attention,
    check_torch_multihead,
    core_answer,
    multihead_cases,
)
from attention_lab.strings import strings

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "book" / "exercises.md").read_text(encoding="utf-8")


# ---------------------------------------------------------------------- answers, right and wrong

def softmax_rows(S, axis=-1):
    S = S - S.max(axis=axis, keepdims=True)
    return np.exp(S) / np.exp(S).sum(axis=axis, keepdims=True)


def attention_written(root=lambda d: math.sqrt(d), axis=-1, mask=True, transpose=False, mix=True):
    """A reader's my_attention, with the mistake given by the arguments (the defaults are right)."""
    def my_attention(Q, K, V, M):
        S = Q @ K.T / root(Q.shape[-1]) + (M if mask else 0)
        A = softmax_rows(S, axis)
        if not mix:
            return A
        return (A @ V).T if transpose else A @ V
    return my_attention


def split(T, h, transpose=True):
    b, rows, w = T.shape
    return T.reshape(b, rows, h, w // h).transpose(0, 2, 1, 3) if transpose else T.reshape(b, h, rows, w // h)


def multihead_written(root="head", axis=-1, mask=True, split_by="transpose", merge="transpose"):
    """A reader's my_multihead, with the mistake given by the arguments (the defaults are right)."""
    def my_multihead(Q, K, V, M, h):
        if split_by == "none":
            q, k, v = Q[:, None], K[:, None], V[:, None]
        else:
            q, k, v = (split(T, h, split_by == "transpose") for T in (Q, K, V))
        d = {"head": q.shape[-1] if split_by != "none" else Q.shape[-1] // h, "model": Q.shape[-1]}[root]
        S = q @ k.swapaxes(-1, -2) / math.sqrt(d) + (M if mask else 0)
        O = softmax_rows(S, axis) @ v
        b, heads, n, d_v = O.shape
        if merge == "none":
            return O
        return (O.transpose(0, 2, 1, 3) if merge == "transpose" else O).reshape(b, n, heads * d_v)
    return my_multihead


def run_cell(cell: str) -> tuple[str, str | None]:
    """A code cell as (its statements but the last expression, that expression or None), as Jupyter
    shows the value of a cell's last expression."""
    tree = ast.parse(cell)
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        return ast.unparse(ast.Module(tree.body[:-1], [])), ast.unparse(tree.body[-1])
    return cell, None


def solutions(torch=None, F=None) -> dict:
    """The reference answers folded on the page (its ```python blocks inside dropdowns), defined."""
    namespace = {"np": np, "math": math, "torch": torch, "F": F}
    for block in re.findall(r":::\{dropdown\} 参考答案\n```python\n(.*?)```", PAGE, re.S):
        exec(block, namespace)
    return namespace


WRONG_ATTENTION = {
    "no_scaling": attention_written(root=lambda d: 1.0),
    "scaled_by_d_k": attention_written(root=lambda d: d),
    "softmax_axis": attention_written(axis=0),
    "shape_transposed": attention_written(transpose=True),
    "no_mask": attention_written(mask=False),
    "shape_shares": attention_written(mix=False),
}

WRONG_MULTIHEAD = {
    "scaled_by_d_model": multihead_written(root="model"),
    "split_by_reshape": multihead_written(split_by="reshape"),
    "merge_by_reshape": multihead_written(merge="reshape"),
    "no_heads": multihead_written(split_by="none"),
    "shape_unmerged": multihead_written(merge="none"),
    "no_mask": multihead_written(mask=False),
    "softmax_axis": multihead_written(axis=1),
}


# --------------------------------------------------------------------------------------- tests

def test_the_mistakes_are_the_cores_answer_with_one_thing_changed():
    """With no mistake put in, answer_with is the core's answer (scaled_dot_product_attention, head by
    head), so every named mistake is measured from the core itself."""
    for case in attention_cases() + attention_cases(d_k_under_root=True) + multihead_cases():
        np.testing.assert_allclose(answer_with(case), core_answer(case), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("exercise", sorted(SPACES))
def test_no_two_combinations_of_mistakes_give_the_same_numbers(exercise):
    """The cases tell every combination apart, so the one named is the only one that fits."""
    cases = {"attention": attention_cases(), "multihead": multihead_cases(),
             "torch_attention": attention_cases(d_k_under_root=True),
             "torch_multihead": multihead_cases(unmasked=False)}[exercise]
    cases = [c for c in cases if not c.large]
    outputs = [(combo, [answer_with(c, **combo) for c in cases]) for combo in exercises._combinations(SPACES[exercise])]
    for (a, out_a), (b, out_b) in itertools.combinations(outputs, 2):
        assert not all(exercises._close(x, y) for x, y in zip(out_a, out_b)), (a, b)


def test_a_stub_that_returns_none_is_told_it_is_not_written_yet():
    def my_attention(Q, K, V, M):
        return None

    verdict = check_attention(my_attention)
    assert not verdict.ok and verdict.kinds == ("not_written",)
    assert verdict.text.startswith("还没有写") and "my_attention" in verdict.text
    assert repr(verdict) == verdict.text  # the check cell shows the sentence, not a quoted string


def test_the_right_answer_passes_and_says_it_matches_the_core():
    verdict = check_attention(attention_written())
    assert verdict.ok and verdict.kinds == ()
    assert verdict.text.startswith("通过") and "scaled_dot_product_attention" in verdict.text
    assert check_multihead(multihead_written()).ok


def test_the_solutions_folded_on_the_page_pass_their_checks():
    found = solutions()
    assert check_attention(found["my_attention"]).ok, check_attention(found["my_attention"])
    assert check_multihead(found["my_multihead"]).ok, check_multihead(found["my_multihead"])


@pytest.mark.parametrize("kind", sorted(WRONG_ATTENTION))
def test_each_wrong_attention_is_told_what_is_wrong(kind):
    verdict = check_attention(WRONG_ATTENTION[kind])
    assert not verdict.ok and verdict.kinds == (kind,), verdict


@pytest.mark.parametrize("kind", sorted(WRONG_MULTIHEAD))
def test_each_wrong_multihead_is_told_what_is_wrong(kind):
    verdict = check_multihead(WRONG_MULTIHEAD[kind])
    assert not verdict.ok and verdict.kinds == (kind,), verdict


def test_each_kind_of_mistake_gets_its_own_sentence_in_chinese():
    """Not one "wrong" for all: the sentences differ, each names its mistake in the chapter's terms."""
    texts = {kind: check_attention(fn).text for kind, fn in WRONG_ATTENTION.items()}
    texts.update({f"multihead {kind}": check_multihead(fn).text for kind, fn in WRONG_MULTIHEAD.items()})
    assert len(set(texts.values())) == len(texts)
    must_say = {"no_scaling": "没有缩放", "scaled_by_d_k": "平方根", "softmax_axis": "axis=0",
                "shape_transposed": "转置", "no_mask": "掩码", "shape_shares": "A @ V",
                "multihead scaled_by_d_model": "√d_model", "multihead split_by_reshape": "transpose(0, 2, 1, 3)",
                "multihead merge_by_reshape": "合并", "multihead no_heads": "没有分头",
                "multihead shape_unmerged": "(2, 2, 3, 3)", "multihead softmax_axis": "头那一维"}
    for kind, text in texts.items():
        assert re.search(r"[\u4e00-\u9fff]", text) and must_say.get(kind, "") in text, (kind, text)
    # The transposed output says what the right shape is, and the one it got.
    assert "得到 (2, 3)，应为 (3, 2)" in texts["shape_transposed"]


def test_two_mistakes_are_both_named():
    verdict = check_attention(attention_written(root=lambda d: 1.0, mask=False))
    assert verdict.kinds == ("no_scaling", "no_mask")
    assert "2 处" in verdict.text and "（1）" in verdict.text and "（2）" in verdict.text


def test_a_softmax_that_does_not_subtract_the_maximum_overflows_on_large_scores():
    def my_attention(Q, K, V, M):
        S = Q @ K.T / np.sqrt(Q.shape[-1]) + M
        return np.exp(S) / np.exp(S).sum(axis=-1, keepdims=True) @ V

    assert max(float(np.max(c.Q @ c.K.T)) / 2 for c in attention_cases() if c.large) > 710  # exp overflows
    verdict = check_attention(my_attention)
    assert verdict.kinds == ("overflow",) and "最大值" in verdict.text


def test_a_mask_multiplied_instead_of_added_is_told_about_nan():
    def my_attention(Q, K, V, M):
        return softmax_rows(Q @ K.T / np.sqrt(Q.shape[-1]) * M) @ V

    verdict = check_attention(my_attention)
    assert verdict.kinds == ("nan",) and "S + M" in verdict.text


def test_an_error_is_reported_with_its_message_and_k_t_on_four_axes_gets_a_hint():
    def my_multihead(Q, K, V, M, h):
        q, k = split(Q, h), split(K, h)
        return q @ k.T  # .T reverses all four axes

    verdict = check_multihead(my_multihead)
    assert verdict.kinds == ("error",) and "ValueError" in verdict.text and "swapaxes(-1, -2)" in verdict.text
    assert "例子 1（Q (2, 3, 8)" in verdict.text


def test_numbers_that_match_no_known_mistake_point_at_the_first_wrong_cell():
    verdict = check_attention(lambda Q, K, V, M: attention_written()(Q, K, V, M) + 1)
    assert verdict.kinds == ("wrong_values",) and "O[0, 0]" in verdict.text


def test_not_a_function_and_not_a_table_are_said_so():
    assert check_attention("my_attention").kinds == ("not_callable",)
    assert check_attention(lambda Q, K, V, M: "O").kinds == ("not_array",)


def test_the_pages_cells_run_as_built_show_not_written_yet(monkeypatch):
    """The build runs every cell (a stub that raised would break it): each check cell then shows
    "还没有写", or, for the torch ones where torch is absent (as here), how to install it; with
    torch, tests/test_exercises_torch.py runs the same cells."""
    monkeypatch.setattr(exercises, "torch_or_none", lambda: (None, None))
    cells = re.findall(r"```\{code-cell\} ipython3\n(.*?)```", PAGE, re.S)
    namespace: dict = {}
    shown = []
    for cell in cells:
        body, last = run_cell(cell)
        exec(body, namespace)
        if last and last.startswith("check_"):  # a check cell's last line is what the page shows
            shown.append(eval(last, namespace))
        elif last:
            exec(last, namespace)
    assert [v.kinds for v in shown] == [("not_written",), ("shape_transposed",), ("not_written",),
                                        ("no_torch",), ("no_torch",)]


def test_without_torch_the_check_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(exercises, "torch_or_none", lambda: (None, None))
    for check in (check_torch_attention, check_torch_multihead):
        verdict = check(lambda *args: None)
        assert verdict.kinds == ("no_torch",) and "%pip install torch" in verdict.text and "重启内核" in verdict.text


def test_a_torch_without_scale_is_asked_to_upgrade(monkeypatch):
    old = types.SimpleNamespace(__version__="2.0.1+cpu")
    monkeypatch.setattr(exercises, "torch_or_none", lambda: (old, None))
    verdict = check_torch_attention(lambda *args: None)
    assert verdict.kinds == ("old_torch",) and "2.0.1+cpu" in verdict.text and "scale=" in verdict.text


def test_every_sentence_the_checks_use_is_in_the_strings_table():
    table = strings()["exercises"]
    source = (ROOT / "attention_lab" / "exercises.py").read_text(encoding="utf-8")
    used = set(re.findall(r'say\("(\w+)"', source)) | set(exercises.FAULT_KINDS.values())
    assert used <= set(table), used - set(table)
    assert not re.search(r"[\u4e00-\u9fff]", source.split('"""', 2)[2].replace("你来写", "")), \
        "Chinese text belongs in strings_zh.json"
    for words in table["words"].values():
        assert set(words) == set(table["words"]["attention"])


# -------------------------------------------------------------------------------- the built page

def test_the_built_page_shows_the_empty_exercises_their_checks_and_folded_answers(built_site):
    html = (built_site / "book" / "exercises.html").read_text(encoding="utf-8")
    assert html.count("还没有写：my_attention 返回了 None") == 1
    assert "形状不对：得到 (2, 3)，应为 (3, 2)" in html  # the deliberately wrong example
    assert "还没有写：my_multihead 返回了 None" in html
    torch_said = re.findall(r"还没有写：torch_\w+ 返回了 None|这一题要用 PyTorch", html)
    assert len(torch_said) == 2, torch_said
    answers = re.findall(r"<details\b[^>]*>(.*?)</details>", html, re.S)
    assert len(answers) == 4 and not re.search(r"<details\b[^>]*\bopen", html), "answers start folded"
    assert all("参考答案" in a for a in answers) and "scaled_dot_product_attention" in answers[2]
    assert "Traceback" not in html and "NotImplementedError" not in html


def test_the_landing_page_and_the_chapter_lead_to_the_exercises(built_site):
    index = (built_site / "book" / "index.html").read_text(encoding="utf-8")
    assert 'href="exercises.html"' in index and 'href="../_notebooks/exercises.ipynb"' in index
    assert (built_site / "_notebooks" / "exercises.ipynb").exists()
    chapter = (built_site / "book" / "f11-attention.html").read_text(encoding="utf-8")
    assert 'href="exercises.html"' in chapter
