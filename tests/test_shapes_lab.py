"""The shapes lab in Jupyter, in-process (attention_lab/shapes_lab.py): the controls are ipywidgets,
``lab.result`` is the core's answer for what they mean, whatever the moves."""

from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("anywidget")

from attention_lab.core import general_attention, multi_head_attention  # noqa: E402
from attention_lab.shapes import (CELL_RANGES, EXAMPLES, LIMITS, SITE_SHAPES_PAGE, compute, default_state,  # noqa: E402
                                  link, resized, worked)
from attention_lab.shapes_lab import MAX_SHAPE, ShapesLab  # noqa: E402


def expected(lab):
    """The core's answer, from the controls' values read here (not through the lab's own state)."""
    v = {name: c.value for name, c in lab.controls.items()}
    n, d, dk, dv, h = v["n"], v["d_model"], v["d_k"], v["d_v"], v["h"]
    cross = v["mode"] == "cross"
    m = v["m"] if cross else n

    def table(t, rows, cols):
        return np.array([[v[f"{t}[{i},{j}]"] for j in range(cols)] for i in range(rows)], dtype=float)

    args = dict(source=table("Xs", m, d) if cross else None, causal=bool(v["causal"]) and not cross, pad=min(v["pad"], m - 1))
    if h > 1:  # h heads: Wq, Wk [d_model, h·d_k], Wv [d_model, h·d_v], Wo [h·d_v, d_model]
        return multi_head_attention(table("X", n, d), table("Wq", d, h * dk), table("Wk", d, h * dk), table("Wv", d, h * dv),
                                    Wo=table("Wo", h * dv, d), h=h, **args)
    return general_attention(table("X", n, d), table("Wq", d, dk), table("Wk", d, dk), table("Wv", d, dv), **args)


def assert_same(result, want):
    names = ("Q", "K", "V", "S", "A", "O") + (("Y",) if hasattr(want, "Y") else ())
    assert type(result) is type(want)
    for name in names:
        np.testing.assert_allclose(getattr(result, name), getattr(want, name), rtol=1e-12, atol=1e-12, err_msg=name)


def test_random_control_moves_keep_the_result_equal_to_the_core():
    rng = random.Random(20)
    lab = ShapesLab()
    seen_heads = set()
    for _ in range(300):
        kind = rng.random()
        if kind < 0.35:
            k = rng.choice(list(LIMITS) + ["pad"])
            lo, hi = LIMITS.get(k, (0, 5))
            lab.controls[k].value = rng.randint(lo, hi)
        elif kind < 0.45:
            lab.controls["mode"].value = rng.choice(["self", "cross"])
        elif kind < 0.5:
            lab.controls["causal"].value = not lab.controls["causal"].value
        else:
            t = rng.choice(list(MAX_SHAPE))
            r = CELL_RANGES[t]
            i, j = rng.randrange(MAX_SHAPE[t][0]), rng.randrange(MAX_SHAPE[t][1])
            lab.controls[f"{t}[{i},{j}]"].value = round(rng.uniform(r.min, r.max) / r.step) * r.step
        assert_same(lab.result, expected(lab))
        n = lab.controls["n"].value
        shape = (n, lab.controls["m"].value if lab.controls["mode"].value == "cross" else n)
        assert lab.result.S.shape == ((lab.controls["h"].value,) + shape if lab.controls["h"].value > 1 else shape)
        seen_heads.add(lab.controls["h"].value)
    assert seen_heads == {1, 2, 3, 4}


def test_a_shape_change_keeps_the_cells_that_remain():
    lab = ShapesLab()
    lab.controls["X[1,0]"].value = 2.5
    lab.controls["n"].value = 1
    assert lab.state["tables"]["X"] == [[1.0, 1.0]]
    lab.controls["n"].value = 3
    assert lab.state["tables"]["X"][1][0] == 2.5
    assert lab.result.S.shape == (3, 3)


def test_examples_load_as_the_site_shows_them():
    lab = ShapesLab()
    for key, state in EXAMPLES.items():
        lab.load(key)
        assert lab.state["tables"] == state["tables"] and lab.state["tokens"] == state["tokens"]
        assert_same(lab.result, compute(state))
        assert_same(lab.result, expected(lab))


def test_a_value_from_code_is_coerced_with_a_note_and_never_raises():
    lab = ShapesLab()
    lab.controls["X[0,0]"].value = "9"
    assert lab.controls["X[0,0]"].value == 3.0 and any("X[0,0]" in n for n in lab.notes)
    lab.controls["n"].value = None
    assert lab.controls["n"].value == 2 and any(n.startswith("n ") for n in lab.notes)
    lab.controls["d_v"].value = 7
    assert lab.controls["d_v"].value == 4 and lab.result.O.shape == (2, 4)
    assert_same(lab.result, expected(lab))


def test_the_site_gets_the_static_twin_and_jupyter_the_widget():
    bundle = ShapesLab("apple_tech")._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "data-shapes-lab" in bundle["text/html"] and "发布了" in bundle["text/html"]


def test_the_causal_box_waits_in_cross_mode_and_comes_back_in_self_mode_as_on_the_site():
    """The same moves as tests/test_shapes_browser.py's site test, against Python's shapes.resized:
    the box stays as it was while cross mode ignores it (before, the site cleared it, Jupyter kept it)."""
    lab = ShapesLab()
    state = default_state()
    moves = [("n", 3, {"n": 3, "m": 3}), ("mode", "cross", {"mode": "cross", "m": 2}), ("m", 4, {"m": 4}),
             ("mode", "self", {"mode": "self"}), ("causal", False, {"causal": False}),
             ("mode", "cross", {"mode": "cross"}), ("mode", "self", {"mode": "self"})]
    for name, value, change in moves:
        lab.controls[name].value = value
        state = resized(state, **change)
        assert lab.state["causal"] == state["causal"] and lab.state["mode"] == state["mode"]
        assert_same(lab.result, compute(state))
        assert_same(lab.result, expected(lab))
    assert lab.controls["causal"].value is False


def test_token_names_are_checked_with_a_note_and_reach_the_view():
    lab = ShapesLab()
    lab.controls["n"].value = 3
    lab.token_boxes["tokens"][2].value = "  苹果 "
    assert lab.token_boxes["tokens"][2].value == "苹果" and lab.state["tokens"] == ["我", "爱", "苹果"]
    assert lab.view.tokens[2] == "苹果" and lab.notes == []
    lab.token_boxes["tokens"][1].value = ""
    assert lab.state["tokens"][1] == "爱" and lab.notes == ["词元的名字不能是空的，已改回“爱”。"]
    lab.token_boxes["tokens"][1].value = "一二三四五六七八九"
    assert lab.state["tokens"][1] == "一二三四五六七八" and "最多 8 个字" in lab.notes[0] and len(lab.notes) == 1
    lab.token_boxes["source_tokens"][0].value = "a,b"
    assert lab.view.source_tokens[0] == "a，b" and "英文逗号" in lab.notes[0]
    lab.controls["X[0,0]"].value = 0.5  # the next move: the note has been read
    assert lab.notes == []
    lab.load("apple_tech")  # an example names the boxes too
    assert [b.value for b in lab.token_boxes["tokens"][:3]] == ["苹果", "发布了", "电脑"]


def test_the_link_is_the_sites_address_of_the_state_and_follows_it():
    import re
    from pathlib import Path

    lab = ShapesLab("apple_food")
    assert not lab.link_box.value and lab.link_box.layout.display == "none"
    url = lab.show_link()
    assert url == link(lab.state) == lab.link_box.value and lab.link_box.layout.display != "none"
    assert url.startswith(SITE_SHAPES_PAGE + "?n=3&") and url.endswith("#shapes-lab")
    lab.controls["d_v"].value = 3
    assert lab.link_box.value == link(lab.state) != url and "d_v=3" in lab.link_box.value
    assert ShapesLab(link_base="http://school.example/f11/book/shapes.html").show_link().startswith("http://school.example/")
    # The page follows the book's repository (_config.yml repository.url, its GitHub Pages address).
    config = (Path(__file__).resolve().parents[1] / "_config.yml").read_text(encoding="utf-8")
    owner, name = re.search(r"url: https://github\.com/([^/\s]+)/([^/\s]+)", config).groups()
    assert SITE_SHAPES_PAGE == f"https://{owner}.github.io/{name}/book/shapes.html"


def test_the_worked_text_tells_a_padded_key_as_the_site_does():
    lab = ShapesLab()
    lab.controls["mode"].value = "cross"
    lab.controls["m"].value = 3
    lab.controls["pad"].value = 1
    lines = lab.worked
    assert [line["text"] for line in lines] == [line["text"] for line in worked(lab.state)]
    pad = [line for line in lines if line["key"] == "masked_pad"]
    assert len(pad) == 1 and pad[0]["j"] == 2 and "填充掩码不许" in pad[0]["text"]
    assert not any(line["key"] == "masked_pos" for line in lines)


def test_heads_and_wo_in_jupyter_are_the_sites_state_link_and_worked_text():
    """h and Wo are controls too (Wo [h·d_v, d_model] number boxes, shown with h > 1); the state, the
    link (h and Wo only with heads) and the worked lines (the explained head's, then the projection)
    are attention_lab.shapes' for it."""
    lab = ShapesLab("two_heads")
    state = EXAMPLES["two_heads"]
    assert lab.state["h"] == 2 and lab.state["tables"]["Wo"] == state["tables"]["Wo"]
    assert_same(lab.result, compute(state))
    assert "&h=2&" in lab.link and "&Wo=1,0,0,0,0,1," in lab.link
    lines = lab.worked
    assert lines[-1]["key"] == "y_output" and [line["text"] for line in lines] == [line["text"] for line in worked(state)]
    lab.controls["Wo[2,0]"].value = 9  # coerced as any cell, with a note
    assert lab.controls["Wo[2,0]"].value == 3.0 and any(n.startswith("Wo[2,0]") for n in lab.notes)
    assert_same(lab.result, expected(lab))
    lab.controls["h"].value = 1  # one head: today's lab, no projection, no h or Wo in the link
    assert type(lab.result).__name__ == "AttentionResult" and "h=" not in lab.link and "Wo=" not in lab.link
    assert_same(lab.result, expected(lab))


def test_a_typed_shape_gives_the_value_and_note_of_the_sites_table():
    """Every case of the site's parity table (scripts/make_shape_vectors.py SHAPE_INPUTS, which the
    Node test holds shapes.js to) set on the Jupyter lab's controls: the same value, the same note."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    from make_shape_vectors import shape_cases

    lab = ShapesLab()
    for case in shape_cases():
        name = case["name"]
        if name == "pad":  # as many keys as the case has, and the pad the box held
            lab.controls["n"].value = case["limits"][1] + 1
        lab.controls[name].value = case["current"]
        lab.controls[name].value = case["raw"]
        assert lab.controls[name].value == case["value"], case
        mine = [n for n in lab.notes if n.startswith(name + " ")]
        assert mine == ([case["note"]] if case["note"] else []), (case, lab.notes)


@pytest.mark.parametrize("key, bad, kept", [("mode", "off", "self"), ("mode", 5, "self"), ("mode", None, "self"),
                                            ("causal", "maybe", True), ("causal", None, True), ("causal", 5, True)])
def test_mode_and_causal_from_code_are_refused_in_chinese_and_never_raise(key, bad, kept):
    lab = ShapesLab()
    lab.controls[key].value = bad
    assert lab.controls[key].value == kept and lab.result is not None
    assert len(lab.notes) == 1 and "没有采用" in lab.notes[0], lab.notes


def test_mode_and_causal_take_what_they_clearly_mean():
    lab = ShapesLab()
    for key, given, value in (("causal", "off", False), ("causal", np.True_, True), ("causal", np.False_, False),
                              ("causal", 1, True), ("mode", " Cross ", "cross"), ("mode", "自注意力", "self")):
        lab.controls[key].value = given
        assert lab.controls[key].value is value or lab.controls[key].value == value, (key, given)
    assert lab.notes == []


def test_a_state_given_to_shapeslab_is_checked_as_load_checks_it():
    """ShapesLab(state) skipped load()'s checks: a NaN cell gave no result, an English note and a link
    with X=nan; n = 10000 and pad = 99 were clamped without a word; a token None raised."""
    state = default_state()
    state["tables"]["X"][0][0] = float("nan")
    lab = ShapesLab(state)
    assert lab.result is not None and "nan" not in lab.link.lower()
    assert lab.notes == ["X[0,0] 需要一个有限的数，“nan”没有采用，仍为 1"], lab.notes
    state = {**default_state(), "n": 10000, "pad": 99, "tokens": [None, 3], "row": "x"}
    lab = ShapesLab(state)
    assert lab.state["n"] == 6 and lab.state["pad"] == 5 and lab.state["tokens"][:2] == ["我", "3"]
    assert "n 只能是 1 到 6 的整数，“10000”已改为 6" in lab.notes
    assert any(n.startswith("pad 只能是 0 到 5 的整数") for n in lab.notes)
    assert "词元的名字不能是空的，已改回“我”。" in lab.notes
    for load in (lambda: lab.load(state), lambda: setattr(lab.token_boxes["tokens"][1], "value", None)):
        load()  # neither raises
    assert lab.view.tokens[1] == "爱" and lab.result is not None


@pytest.mark.parametrize("change", [{"n": 10000}, {"n": 0}, {"n": -3}, {"h": 2.5}, {"mode": "off"}, {"colour": 1}])
def test_resized_refuses_a_shape_outside_the_limits_in_chinese(change):
    with pytest.raises(ValueError, match="只能是|不认识"):
        resized(default_state(), **change)
