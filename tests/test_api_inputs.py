"""The Python API given what a notebook might pass it (issue 26, items 7-8): the kernel lab's row,
tokens and hostile objects, and the core's helpers beyond their size limits.  Each case is taken,
or refused with a Chinese note or a Chinese-first ValueError; none raises a TypeError, TraitError,
KeyError, MemoryError or runs for seconds."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from attention_lab import AttentionLab
from attention_lab.params import default_params

ROOT = Path(__file__).resolve().parents[1]
STRINGS = json.loads((ROOT / "attention_lab" / "strings_zh.json").read_text(encoding="utf-8"))
CHINESE = re.compile(r"[\u4e00-\u9fff]")


class Unprintable:
    """An object whose __float__, __str__ and __format__ raise (its repr is object's)."""

    def __float__(self):
        raise RuntimeError("no float")

    def __str__(self):
        raise RuntimeError("no str")

    def __format__(self, spec):
        raise RuntimeError("no format")


class BadFloat(float):
    """A float whose __float__ and __format__ raise."""

    def __float__(self):
        raise RuntimeError("no float")

    def __format__(self, spec):
        raise RuntimeError("no format")


@pytest.fixture(scope="module")
def lab():
    return AttentionLab()


@pytest.fixture
def fresh(lab):
    lab.set_params(default_params(), row=1)
    return lab


def kernel_texts(lab) -> str:
    return "\n".join(n["text"] for n in lab.view.kernel_notes)


# --- item 7: the row ------------------------------------------------------------------------
@pytest.mark.parametrize("raw", [None, "x", 5, -1, 1.5, True, math.nan, Unprintable()],
                         ids=["None", "x", "5", "-1", "1.5", "True", "nan", "unprintable"])
def test_a_row_set_from_code_that_names_no_row_is_refused_and_the_lab_still_reads(fresh, raw):
    fresh.row_control.value = 0
    fresh.row_control.value = raw
    assert fresh.row == 0 and fresh.row_control.index == 0
    assert fresh.state["row"] == 0 and repr(fresh).startswith("AttentionLab(row=0,")
    note = [n for n in fresh.notes if n.startswith("row 只能是 0（我）或 1（爱）")]
    assert note and "没有采用，仍为 0（我）" in note[0], fresh.notes
    assert note[0] in kernel_texts(fresh)  # the view is told, too
    fresh.row_control.value = 1  # a good row takes the note away
    assert fresh.row == 1 and not any(n.startswith("row 只能是") for n in fresh.notes)


@pytest.mark.parametrize("raw, want", [(np.int64(0), 0), ("0", 0), (" 1 ", 1), ("我", 0), ("爱", 1), (0.0, 0),
                                       (np.float64(1.0), 1)])
def test_rows_zero_and_one_in_any_spelling_are_taken(fresh, raw, want):
    fresh.row_control.value = 1 - want
    fresh.row_control.value = raw
    assert fresh.row == want and fresh.state["row"] == want
    assert not any(n.startswith("row 只能是") for n in fresh.notes)


@pytest.mark.parametrize("raw", [None, 7, -1, "x"])
def test_a_bad_row_index_or_label_never_raises(fresh, raw):
    fresh.row_control.index = raw
    fresh.row_control.label = raw
    assert fresh.row == 1 and fresh.row_control.label == "爱"
    assert any(n.startswith("row 只能是") for n in fresh.notes)


@pytest.mark.parametrize("raw", ["x", 2, 1.5, True, Unprintable()], ids=["x", "2", "1.5", "True", "unprintable"])
def test_set_params_refuses_a_row_that_names_none_and_changes_nothing(fresh, raw):
    """(row=None means "keep the row", as before.)"""
    with pytest.raises(ValueError, match="^set_params 没有改动任何值：row 只能是 0 或 1"):
        fresh.set_params({"X[0,0]": 1.0}, row=raw)
    assert fresh.row == 1 and fresh.params == default_params()


@pytest.mark.parametrize("row", [None, "x", 5, Unprintable()], ids=["None", "x", "5", "unprintable"])
def test_a_start_row_that_names_none_starts_at_row_one_with_a_note(row):
    lab = AttentionLab(row=row)
    assert lab.row == 1
    assert any(n.startswith("row 只能是") and "改为 1（爱）" in n for n in lab.notes)


# --- item 7: the tokens ---------------------------------------------------------------------
@pytest.mark.parametrize("tokens", [None, 5, ["我"], ["a", "b", "c"], [1, 2], ["猫", "猫"], ["猫", ""], "猫狗",
                                    iter(["猫", "狗"]).__next__],
                         ids=["None", "5", "one", "three", "numbers", "same", "empty", "text", "callable"])
def test_bad_tokens_fall_back_to_the_chapters_words_with_a_note(tokens):
    lab = AttentionLab(tokens=tokens)
    assert lab.tokens == ("我", "爱") and lab.row_control._options_labels == ("我", "爱")
    assert any(n.startswith("tokens 需要两个不同的、非空的词") for n in lab.notes), lab.notes
    assert lab.result is not None and lab.state["row"] == 1


def test_two_words_label_the_row_buttons_and_name_the_rows():
    lab = AttentionLab(tokens=("猫", "狗"), row=0)
    assert lab.row_control._options_labels == ("猫", "狗")
    lab.row_control.value = "狗"
    assert lab.row == 1 and not any(n.startswith("tokens") for n in lab.notes)


# --- item 7: objects whose __float__ / __str__ raise ----------------------------------------
@pytest.mark.parametrize("name", ["X[0,0]", "Wv[1,1]", "d_k", "causal"])
@pytest.mark.parametrize("make", [Unprintable, lambda: BadFloat(1.0)], ids=["unprintable", "bad_float"])
def test_an_object_that_cannot_be_read_is_refused_by_every_control_with_a_note(fresh, name, make):
    before = fresh.params
    fresh.controls[name].value = make()
    assert fresh.params == before
    note = [n for n in fresh.notes if n.startswith(name)]
    assert note and "没有采用" in note[0], fresh.notes
    assert note[0] in kernel_texts(fresh)
    with pytest.raises(ValueError, match=f"^set_params 没有改动任何值：{re.escape(name)} "):
        fresh.set_params({name: make()})
    assert fresh.params == before
    assert AttentionLab(params={name: make()}).params == default_params()


def test_unknown_parameter_names_that_cannot_be_printed_are_named_safely(fresh):
    with pytest.raises(ValueError, match="^set_params 没有改动任何值：没有名为“<Unprintable>”的参数"):
        fresh.set_params({Unprintable(): 1.0})
    assert any("<Unprintable>" in n for n in AttentionLab(params={Unprintable(): 1.0}).notes)


def test_the_labs_notes_on_rows_and_tokens_come_from_the_string_table():
    source = (ROOT / "attention_lab" / "lab.py").read_text(encoding="utf-8")
    code = re.sub(r'"""(.|\n)*?"""|#[^\n]*', "", source)
    assert not CHINESE.search(code.split("CSS = ")[0] + code.split("BESIDE_PX")[1]), "Chinese belongs in strings_zh.json"
    for key in ("row_refused", "row_start", "row_set_params", "tokens_refused"):
        assert CHINESE.search(STRINGS["lab"][key]), key


# --- item 8: the core's helpers have size limits --------------------------------------------
from attention_lab import core, shapes  # noqa: E402
from attention_lab.core import (MAX_CELLS, MAX_POSITIONS, MAX_WIDTH, AttentionInputError, attention,  # noqa: E402
                                causal_mask, general_attention, multi_head_attention, padding_mask,
                                scaled_dot_product_attention, softmax, softmax_steps)

EYE = np.eye(2)
TOO_MANY = MAX_POSITIONS + 1
SIZE_CASES = {
    "attention n": lambda: attention(np.ones((10_000, 2)), EYE, EYE, EYE),
    "attention n as a list": lambda: attention([[1.0, 1.0]] * 10_000, EYE, EYE, EYE),
    "attention d_k": lambda: attention(np.ones((2, 2)), np.ones((2, MAX_WIDTH + 1)), np.ones((2, MAX_WIDTH + 1)), EYE),
    "general_attention m": lambda: general_attention(np.ones((2, 2)), EYE, EYE, EYE, source=np.ones((TOO_MANY, 2))),
    "sdpa m": lambda: scaled_dot_product_attention(np.ones((2, 2)), np.ones((TOO_MANY, 2)), np.ones((TOO_MANY, 2))),
    "multi-head h·n·m": lambda: multi_head_attention(np.ones((1000, 4)), np.ones((4, 4)), np.ones((4, 4)),
                                                     np.ones((4, 4)), h=4),
    "causal_mask 10**9": lambda: causal_mask(10**9),
    "causal_mask m": lambda: causal_mask(2, TOO_MANY),
    "padding_mask n": lambda: padding_mask(10**6, 3, 1),
    "softmax": lambda: softmax(np.zeros((MAX_CELLS + 1,))),
    "softmax_steps": lambda: softmax_steps([0.0] * (MAX_CELLS + 1)),
}


@pytest.mark.parametrize("case", SIZE_CASES, ids=list(SIZE_CASES))
def test_every_public_helper_refuses_a_size_past_its_limit_at_once_chinese_first(case):
    import time

    start = time.perf_counter()
    with pytest.raises(AttentionInputError) as info:
        SIZE_CASES[case]()
    assert time.perf_counter() - start < 1.0
    assert info.value.kind == "size"
    message = str(info.value)
    assert message.startswith(STRINGS["errors"]["size"]), message
    assert re.search(r"上限是 \d+|1 到 \d+ 的整数", message) and "attention_lab.core.MAX_" in message


def test_the_limits_are_documented_and_the_largest_allowed_table_is_computed():
    assert MAX_POSITIONS == 1024 and MAX_WIDTH == 1024 and MAX_CELLS == MAX_POSITIONS**2
    for name in ("MAX_POSITIONS", "MAX_WIDTH", "MAX_CELLS"):
        assert name in core.__doc__
    r = scaled_dot_product_attention(np.ones((MAX_POSITIONS, 2)), np.ones((MAX_POSITIONS, 2)), np.ones((MAX_POSITIONS, 2)))
    assert r.A.shape == (MAX_POSITIONS, MAX_POSITIONS) and np.allclose(r.A.sum(axis=1), 1.0)
    assert causal_mask(MAX_POSITIONS).shape == (MAX_POSITIONS, MAX_POSITIONS)


@pytest.mark.parametrize("n", [None, "3", 2.5, 0, -3, True])
def test_a_mask_size_that_is_no_whole_number_is_a_value_error_not_a_type_error(n):
    with pytest.raises(AttentionInputError, match="must be a whole number from 1 to 1024") as info:
        causal_mask(n)
    assert info.value.kind == "shape"
    with pytest.raises(AttentionInputError):
        padding_mask(n, 2, 0)


def test_overflow_is_sized_without_a_table_of_n_by_d_by_m_logs():
    """The overflow message's size came from an (n, d, m) table of logs: 8 GB at 1024 x 1024 x 1024."""
    big = np.full((MAX_POSITIONS, 4), 1e200)
    with pytest.raises(AttentionInputError, match=r"about 1e\+400") as info:
        scaled_dot_product_attention(big, big, np.ones((MAX_POSITIONS, 1)), d_k=1)
    assert info.value.kind == "overflow"


# --- item 8: shapes' public functions given None, {} or a NaN --------------------------------
STATE_FUNCTIONS = {"to_query": shapes.to_query, "link": shapes.link, "compute": shapes.compute,
                   "worked": shapes.worked, "resized": shapes.resized,
                   "table_shape": lambda s: shapes.table_shape("X", s)}


@pytest.mark.parametrize("state", [None, {}, {"n": 3}, "n=2"], ids=["None", "empty", "partial", "text"])
@pytest.mark.parametrize("function", STATE_FUNCTIONS, ids=list(STATE_FUNCTIONS))
def test_shapes_functions_say_in_chinese_what_state_they_need(function, state):
    with pytest.raises(ValueError) as info:
        STATE_FUNCTIONS[function](state)
    assert type(info.value) is ValueError
    assert str(info.value).startswith(f"shapes.{function} ") and "shapes.default_state()" in str(info.value)


@pytest.mark.parametrize("bad", [math.nan, math.inf, "1", None])
def test_a_link_never_says_nan_a_state_with_a_cell_that_is_no_number_is_refused(bad):
    state = shapes.default_state()
    state["tables"]["Wv"][1][0] = bad
    with pytest.raises(ValueError, match=r"^shapes\.to_query：Wv\[1,0\] 是 "):
        shapes.to_query(state)
    with pytest.raises(ValueError, match=r"^shapes\.link：Wv\[1,0\] 是 "):
        shapes.link(state)


@pytest.mark.parametrize("key, value", [("n", 10_000), ("n", 0), ("d_k", -3), ("n", 2.5), ("pad", 2)])
def test_a_state_with_a_shape_outside_the_limits_is_refused_by_name(key, value):
    state = {**shapes.default_state(), key: value}
    with pytest.raises(ValueError, match=rf"^shapes\.to_query：{key} 只能是 \d 到 \d 的整数"):
        shapes.to_query(state)


# --- item 9: the JS twin's overflow cases are the core's ------------------------------------
OVERFLOW_CASES = json.loads((ROOT / "tests" / "js" / "overflow_cases.json").read_text(encoding="utf-8"))["cases"]


def _decode(table):
    words = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
    return [[words[v] if isinstance(v, str) else v for v in row] for row in table]


REFUSED = [c for c in OVERFLOW_CASES if c["kind"] != "rescaled"]


def test_where_only_rounding_carries_o_past_the_floats_the_core_and_the_twin_give_the_same_o():
    """O = A·V of a V near the largest float overflowed in the twin only (the core rescaled it):
    both now compute it, the same numbers (attention.js run in Node on the same case)."""
    import shutil
    import subprocess

    (case,) = [c for c in OVERFLOW_CASES if c["kind"] == "rescaled"]
    a = case["args"]
    result = scaled_dot_product_attention(a["Q"], a["K"], a["V"])
    with np.errstate(over="ignore"):
        assert not np.isfinite(result.A @ np.asarray(a["V"])).all(), "the case no longer overflows A·V"
    python = result.O
    node = shutil.which("node")
    assert node, "Node.js runs the twin (scripts/test.sh installs it)"
    js = ROOT / "attention_lab" / "static" / "attention-lab" / "attention.js"
    code = (f"const c = require({json.dumps(str(js))}); const a = JSON.parse(process.argv[1]);"
            "console.log(JSON.stringify(c.scaledDotProductAttention(a.Q, a.K, a.V).O));")
    out = subprocess.run([node, "-e", code, json.dumps(a)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    twin = np.array(json.loads(out.stdout))
    assert np.isfinite(python).all() and np.isfinite(twin).all()
    np.testing.assert_allclose(twin, python, rtol=1e-14, atol=0)


@pytest.mark.parametrize("case", REFUSED, ids=[c["label"] for c in REFUSED])
def test_the_python_core_refuses_the_twins_overflow_cases_with_the_same_kind(case):
    """tests/js/overflow.test.cjs holds attention.js to these kinds (run by test_twin_node)."""
    a = case["args"]
    calls = {
        "attention": lambda: attention(_decode(a["X"]), _decode(a["Wq"]), _decode(a["Wk"]), _decode(a["Wv"]),
                                       d_k=a["d_k"], causal=a["causal"]),
        "sdpa": lambda: scaled_dot_product_attention(_decode(a["Q"]), _decode(a["K"]), _decode(a["V"]),
                                                     causal=a.get("causal", False)),
        "softmax": lambda: softmax(_decode(a["scores"])),
        "general": lambda: general_attention(_decode(a["X"]), _decode(a["Wq"]), _decode(a["Wk"]), _decode(a["Wv"]),
                                             source=_decode(a["Xs"])),
    }
    with pytest.raises(AttentionInputError) as info:
        calls[case["call"]]()
    assert info.value.kind == case["kind"].replace("_row_two", "")
