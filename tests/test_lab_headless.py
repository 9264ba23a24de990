"""The kernel lab driven through its contract, with no browser: set a control's value as a slider
move would, then check what the lab computes and shows against the core, computed independently."""

from __future__ import annotations

import gc
import math
import sys
import tracemalloc

import numpy as np
import pytest

from attention_lab import AttentionLab, attention, baseline
from attention_lab.fastrender import _near_difference
from attention_lab.params import PARAM_NAMES, RANGES, default_params, range_of, tables_from_params
from attention_lab.plotting import format_value
from attention_lab.worked import worked_text

DRAFT = {"S10": 0.7071067812, "A10": 0.6697615493, "A11": 0.3302384507,
         "O10": 6.6976154933, "O11": 6.6047690135}


@pytest.fixture(scope="module")
def lab():
    return AttentionLab()


@pytest.fixture
def fresh(lab):
    lab.set_params(default_params())
    lab.row_control.value = 1
    return lab


def independent(params: dict):
    """The core's answer for these control values, not through the lab."""
    X = np.array([[params[f"X[{i},{j}]"] for j in range(2)] for i in range(2)])
    W = {t: np.array([[params[f"{t}[{i},{j}]"] for j in range(2)] for i in range(2)])
         for t in ("Wq", "Wk", "Wv")}
    return attention(X, W["Wq"], W["Wk"], W["Wv"], d_k=params["d_k"], causal=params["causal"])


def random_value(rng, name):
    if name == "causal":
        return bool(rng.integers(2))
    r = range_of(name)
    k = int(rng.integers(0, round((r.max - r.min) / r.step) + 1))
    value = round(r.min + k * r.step, 10)
    return int(value) if name == "d_k" else value


def assert_shows(lab, expected):
    for name in ("Q", "K", "V", "S", "A", "O"):
        np.testing.assert_allclose(getattr(lab.result, name), getattr(expected, name), rtol=0, atol=1e-12)
    cells = lab.shown_cells()
    for name, rows in cells.items():
        values = getattr(expected, name)
        assert rows == [[format_value(float(v)) for v in row] for row in values], name
    assert lab.worked_lines() == worked_text(expected, lab.row).splitlines()
    assert "NaN" not in "".join(lab.worked_lines()) and "nan" not in lab.shown_notes()


def test_controls_are_named_as_the_contract_says(lab):
    assert tuple(lab.controls) == PARAM_NAMES
    assert lab.controls["d_k"].min == 1 and lab.controls["d_k"].max == 64
    assert lab.controls["causal"].value is True
    for name in PARAM_NAMES[:-2]:
        r = RANGES[name.split("[")[0]]
        control = lab.controls[name]
        assert (control.min, control.max, control.step) == (r.min, r.max, r.step)
        assert control.readout  # the readout can be typed into


def test_random_slider_moves_show_the_cores_numbers(fresh):
    rng = np.random.default_rng(11)
    for _ in range(40):
        name = PARAM_NAMES[int(rng.integers(len(PARAM_NAMES)))]
        fresh.controls[name].value = random_value(rng, name)
        if rng.random() < 0.2:
            fresh.row_control.value = 1 - fresh.row_control.value
        assert_shows(fresh, independent(fresh.params))


def test_the_shown_image_is_what_matplotlib_would_draw(fresh):
    """The fast renderer's picture equals a full matplotlib drawing of the same figure."""
    rng = np.random.default_rng(5)
    for name in rng.choice(PARAM_NAMES, 12):
        fresh.controls[name].value = random_value(rng, name)
    for figure, renderer in ((fresh.figure_sao, fresh._renderer_sao), (fresh.figure_qkv, fresh._renderer_qkv)):
        assert renderer.mode == "cells"  # the fast path is in use
        from io import BytesIO

        from PIL import Image

        shown = np.asarray(Image.open(BytesIO(renderer.to_png())).convert("RGB")).astype(np.int16)
        buffer = BytesIO()
        figure.figure.savefig(buffer, format="png")
        full = np.asarray(Image.open(buffer).convert("RGB")).astype(np.int16)
        assert shown.shape == full.shape
        assert _near_difference(shown, full) < 0.001


def test_baseline_button_gives_the_chapters_numbers(fresh):
    fresh.controls["X[0,0]"].value = -2.0
    fresh.controls["causal"].value = False
    fresh.buttons[None].click()
    r = fresh.result
    assert r.S[1, 0] == pytest.approx(DRAFT["S10"], abs=1e-10)
    assert math.isinf(r.S[0, 1]) and r.S[0, 1] < 0
    assert r.A[1].tolist() == pytest.approx([DRAFT["A10"], DRAFT["A11"]], abs=1e-10)
    assert r.O[1].tolist() == pytest.approx([DRAFT["O10"], DRAFT["O11"]], abs=1e-10)
    assert_shows(fresh, attention(**baseline()))


def test_contrast_one_only_wv_changes_v_and_o_but_keeps_shares(fresh):
    fresh.buttons["only_wv"].click()
    base, r = attention(**baseline()), fresh.result
    np.testing.assert_allclose(r.A, base.A)
    np.testing.assert_allclose(r.V, np.array(baseline()["X"]))  # V = X
    assert not np.allclose(r.O, base.O)
    assert_shows(fresh, attention(**baseline("only_wv")))


def test_contrast_two_only_wq_makes_queries_equal_keys(fresh):
    fresh.buttons["only_wq"].click()
    base, r = attention(**baseline()), fresh.result
    np.testing.assert_allclose(r.Q, r.K)
    np.testing.assert_allclose(r.V, base.V)
    assert not np.allclose(r.A, base.A)
    assert_shows(fresh, attention(**baseline("only_wq")))


def test_row_ai_worked_text_at_the_baseline_shows_the_drafts_values(fresh):
    text = "\n".join(fresh.worked_lines())
    for value in ("0.7071067812", "0.4930686914", "1.4930686914", "0.6697615493", "0.3302384507",
                  "6.6976154933", "6.6047690135"):
        assert value in text
    assert "q₁·k₀ = 1×1+0×0 = 1" in text
    assert "爱" in fresh.worked_title.value


def test_typed_out_of_range_values_are_clamped_with_a_visible_note(fresh):
    fresh.controls["Wq[0,0]"].value = 100
    assert fresh.controls["Wq[0,0]"].value == RANGES["Wq"].max
    assert "Wq[0,0]" in fresh.shown_notes() and "100" in fresh.shown_notes()
    fresh.controls["Wv[1,1]"].value = -1e9
    assert fresh.controls["Wv[1,1]"].value == RANGES["Wv"].min
    assert "Wv[1,1]" in fresh.shown_notes()
    fresh.controls["d_k"].value = 1000
    assert fresh.controls["d_k"].value == 64
    assert "d_k" in fresh.shown_notes()
    assert_shows(fresh, independent(fresh.params))
    # Moving the control back inside its range takes its note away.
    fresh.controls["Wq[0,0]"].value = 0.5
    assert "Wq[0,0]" not in fresh.shown_notes()


def test_d_k_other_than_the_width_is_explained(fresh):
    assert "宽度是 2" not in fresh.shown_notes()
    fresh.controls["d_k"].value = 64
    assert "宽度是 2" in fresh.shown_notes() and "d_k=64" in fresh.shown_notes()
    fresh.controls["d_k"].value = 1
    assert "不缩放" in fresh.shown_notes()


@pytest.mark.parametrize("where", ["min", "max"])
@pytest.mark.parametrize("d_k", [1, 64])
@pytest.mark.parametrize("causal", [True, False])
def test_extremes_never_raise_or_show_nan(fresh, where, d_k, causal):
    params = {name: getattr(range_of(name), where) for name in PARAM_NAMES[:-2]}
    params.update(d_k=d_k, causal=causal)
    fresh.set_params(params)
    for row in (0, 1):
        fresh.row_control.value = row
        assert_shows(fresh, independent(fresh.params))
        assert np.all(np.isfinite(fresh.result.A)) and np.all(np.isfinite(fresh.result.O))
        assert "算不出" not in fresh.shown_notes()


def test_a_failing_computation_shows_a_message_instead_of_raising(fresh, monkeypatch):
    import attention_lab.lab as lab_module

    def broken(**kwargs):
        raise ValueError("softmax: a row has every position masked")

    before = fresh.result
    monkeypatch.setattr(lab_module, "attention", broken)
    fresh.controls["X[0,0]"].value = 0.3  # must not raise
    assert "算不出" in fresh.shown_notes()
    assert fresh.result is before  # the last good picture stays


def test_moving_a_slider_changes_the_image_bytes(fresh):
    before_sao, before_qkv = fresh.image_sao.value, fresh.image_qkv.value
    fresh.controls["Wk[0,0]"].value = 1.25
    assert fresh.image_sao.value != before_sao and fresh.image_qkv.value != before_qkv
    before_qkv = fresh.image_qkv.value
    fresh.controls["d_k"].value = 9  # d_k does not touch Q, K, V
    assert fresh.image_qkv.value == before_qkv


def test_display_bundle_has_the_widget_the_static_html_and_text(fresh):
    bundle = fresh._repr_mimebundle_()
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == fresh.widget.model_id
    assert "data-attention-lab" in bundle["text/html"]
    assert "AttentionLab" in bundle["text/plain"]


def test_memory_stays_flat_over_many_changes(fresh):
    """Each change reuses the figures: no growth over hundreds of changes (a leak of even
    1 KB per change would add up to megabytes in a lesson)."""
    rng = np.random.default_rng(3)
    # A pool of values reused in random order: every change redraws, nothing new to cache.
    pool = [(name, random_value(rng, name)) for name in rng.choice(PARAM_NAMES[:-1], 40)]

    def run(n):
        for k in rng.integers(len(pool), size=n):
            name, value = pool[k]
            fresh.controls[name].value = value

    run(200)  # warm every cache
    gc.collect()
    blocks_before = sys.getallocatedblocks()
    tracemalloc.start()
    try:
        run(50)
        gc.collect()
        start, _ = tracemalloc.get_traced_memory()
        run(400)
        gc.collect()
        end, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    run(600)  # untraced, so quicker: Python objects must not pile up either
    gc.collect()
    assert end - start < 300_000, f"grew by {(end - start) / 1e3:.0f} kB over 400 changes"
    assert sys.getallocatedblocks() - blocks_before < 20_000
    assert_shows(fresh, independent(fresh.params))
