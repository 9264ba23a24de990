"""The shapes lab in Jupyter, in-process (attention_lab/shapes_lab.py): the controls are ipywidgets,
``lab.result`` is the core's answer for what they mean, whatever the moves."""

from __future__ import annotations

import random

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("anywidget")

from attention_lab.core import general_attention  # noqa: E402
from attention_lab.shapes import CELL_RANGES, EXAMPLES, LIMITS, compute  # noqa: E402
from attention_lab.shapes_lab import MAX_SHAPE, ShapesLab  # noqa: E402


def expected(lab):
    """The core's answer, from the controls' values read here (not through the lab's own state)."""
    v = {name: c.value for name, c in lab.controls.items()}
    n, d, dk, dv = v["n"], v["d_model"], v["d_k"], v["d_v"]
    cross = v["mode"] == "cross"
    m = v["m"] if cross else n

    def table(t, rows, cols):
        return np.array([[v[f"{t}[{i},{j}]"] for j in range(cols)] for i in range(rows)], dtype=float)

    return general_attention(table("X", n, d), table("Wq", d, dk), table("Wk", d, dk), table("Wv", d, dv),
                             source=table("Xs", m, d) if cross else None,
                             causal=bool(v["causal"]) and not cross, pad=min(v["pad"], m - 1))


def assert_same(result, want):
    for name in ("Q", "K", "V", "S", "A", "O"):
        np.testing.assert_allclose(getattr(result, name), getattr(want, name), rtol=1e-12, atol=1e-12, err_msg=name)


def test_random_control_moves_keep_the_result_equal_to_the_core():
    rng = random.Random(20)
    lab = ShapesLab()
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
        assert lab.result.S.shape == (lab.controls["n"].value,
                                      lab.controls["m"].value if lab.controls["mode"].value == "cross" else lab.controls["n"].value)


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
