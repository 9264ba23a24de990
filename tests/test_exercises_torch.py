"""The torch exercises of book/exercises.md against PyTorch itself (``F.scaled_dot_product_attention``).

Their checks (attention_lab.exercises.check_torch_attention, check_torch_multihead) run the reader's
function on torch tensors; these tests give them right answers and answers with one known mistake
each, and each wrong one must be told its own sentence.  PyTorch is optional, as in
tests/test_torch_crosscheck.py: without it these tests are skipped, with the reason
($F11_TORCH_SKIPPED from scripts/test.sh, else "not installed"), never passed.
"""

from __future__ import annotations

import ast
import math
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from attention_lab.exercises import check_torch_attention, check_torch_multihead

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_exercises import run_cell  # noqa: E402  (the page's cells, run as Jupyter runs them)

torch = pytest.importorskip("torch", reason=os.environ.get("F11_TORCH_SKIPPED") or (
    "torch is not installed: the torch exercises' checks need requirements-torch.txt "
    "(scripts/test.sh installs it where a CPU build of torch is available)"))
F = torch.nn.functional

PAGE = (Path(__file__).resolve().parents[1] / "book" / "exercises.md").read_text(encoding="utf-8")


def solutions(torch, F) -> dict:
    """The reference answers folded on the page (its ```python blocks inside dropdowns), defined."""
    namespace = {"np": np, "math": math, "torch": torch, "F": F}
    for block in re.findall(r":::\{dropdown\} 参考答案\n```python\n(.*?)```", PAGE, re.S):
        exec(block, namespace)
    return namespace


def sdpa_written(scale="right", mask="float"):
    def torch_attention(Q, K, V, M, d_k):
        kwargs = {"scale": {"right": 1 / math.sqrt(d_k), "times": math.sqrt(d_k), "default": None}[scale]}
        if mask != "none":
            kwargs["attn_mask"] = {"float": M, "bool": M == 0, "inverted": M != 0}[mask]
        return F.scaled_dot_product_attention(Q, K, V, **kwargs)
    return torch_attention


def test_the_torch_solutions_folded_on_the_page_pass_their_checks():
    found = solutions(torch, F)
    assert check_torch_attention(found["torch_attention"]).ok, check_torch_attention(found["torch_attention"])
    assert check_torch_multihead(found["torch_multihead"]).ok, check_torch_multihead(found["torch_multihead"])
    assert check_torch_attention(sdpa_written(mask="bool")).ok  # True = may read


@pytest.mark.parametrize("kind, fn, says", [
    ("scale_not_given", sdpa_written(scale="default"), "scale=1 / math.sqrt(d_k)"),
    ("scale_inverted", sdpa_written(scale="times"), "倒数"),
    ("mask_inverted", sdpa_written(mask="inverted"), "True 表示允许读取"),
    ("no_mask", sdpa_written(mask="none"), "attn_mask"),
])
def test_each_wrong_torch_attention_is_told_what_is_wrong(kind, fn, says):
    verdict = check_torch_attention(fn)
    assert not verdict.ok and verdict.kinds == (kind,), verdict
    assert says in verdict.text, verdict


def test_torch_multihead_without_heads_or_with_the_full_width_root_is_told_so():
    def no_heads(Q, K, V, M, h):
        return F.scaled_dot_product_attention(Q, K, V, attn_mask=M)

    def full_root(Q, K, V, M, h):
        b, n, _ = Q.shape
        q, k, v = (T.view(b, T.shape[1], h, -1).transpose(1, 2) for T in (Q, K, V))
        O = F.scaled_dot_product_attention(q, k, v, attn_mask=M, scale=1 / math.sqrt(Q.shape[-1]))
        return O.transpose(1, 2).reshape(b, n, -1)

    assert check_torch_multihead(no_heads).kinds == ("no_heads",)
    verdict = check_torch_multihead(full_root)
    assert verdict.kinds == ("scaled_by_d_model",) and "√d_model" in verdict.text


def test_the_pages_torch_cells_run_as_built_show_not_written_yet():
    """With torch installed the build's torch stubs are checked too: "还没有写", not an install note."""
    cells = re.findall(r"```\{code-cell\} ipython3\n(.*?)```", PAGE, re.S)
    namespace: dict = {}
    shown = []
    for cell in cells:
        body, last = run_cell(cell)
        exec(body, namespace)
        if last and last.startswith("check_torch_"):
            shown.append(eval(last, namespace))
        elif last and not last.startswith("check_"):  # the numpy checks are tests/test_exercises.py's
            exec(last, namespace)
    assert [v.kinds for v in shown] == [("not_written",)] * 2
    assert namespace["torch"] is torch and namespace["F"] is F
