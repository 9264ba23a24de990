"""The shapes lab in a real JupyterLab from the Binder env (the ``binder_env`` fixture), driven by
headless Chromium as a reader would: book/shapes.md opened as a notebook and run, n moved by the
keyboard on its slider and a value typed in a cell; every shown cell (the site's view, drawn in
the browser) equals the core for the controls' values, and the kernel's ``lab.result`` agrees."""

from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from binder_env import kernel_json  # scripts/ is on sys.path (tests/conftest.py)

from attention_lab.core import general_attention, multi_head_attention
from attention_lab.lab import dom_class
from attention_lab.shapes import coerce as coerce_cell

ROOT = Path(__file__).resolve().parents[1]
LAB = ".f11-shapes [data-attention-lab]"
SCREENSHOT = os.environ.get("F11_JUPYTER_SCREENSHOT")  # optional path: keep a 1024x768 picture

pytestmark = pytest.mark.browser

KERNEL_STATE = """
import gc, json, math
from attention_lab.shapes_lab import ShapesLab
_f11s = [o for o in gc.get_objects() if isinstance(o, ShapesLab)][-1]
_f11t = lambda a: [[None if not math.isfinite(v) else v for v in r] for r in a.tolist()]
_f11r = _f11s.result
_f11h = getattr(_f11r, "heads", None)
print(json.dumps({"state": _f11s.state, "link": _f11s.link, "notes": _f11s.notes,
      "result": {k: _f11t(getattr(_f11r, k)) for k in (("Q", "K", "V", "O", "Y") if _f11h else ("Q", "K", "V", "S", "A", "O"))},
      "heads": [{k: _f11t(getattr(r, k)) for k in ("S", "A")} for r in _f11h or ()]}))
"""


def core_of(state):
    """The core for a state; its causal box applies in self mode only (the chapter's rule); h > 1
    heads: core.multi_head_attention with Wo."""
    t = state["tables"]
    args = dict(source=t["Xs"] if state["mode"] == "cross" else None, causal=state["causal"] and state["mode"] == "self",
                pad=state["pad"])
    if state.get("h", 1) > 1:
        return multi_head_attention(t["X"], t["Wq"], t["Wk"], t["Wv"], Wo=t["Wo"], h=state["h"], **args)
    return general_attention(t["X"], t["Wq"], t["Wk"], t["Wv"], **args)


def shown(page) -> dict:
    """Every result cell the view shows, {(table, i, j): value}; a head's S and A as "S0", "A1"..."""
    pairs = page.evaluate(
        "(sel) => [...document.querySelectorAll(sel + ' td.al-cell[data-matrix]')].map(t => ["
        "t.dataset.matrix + ((t.dataset.matrix === 'S' || t.dataset.matrix === 'A') && t.dataset.head ? t.dataset.head : ''),"
        " +t.dataset.row, +t.dataset.col, t.dataset.value])", LAB)
    return {(m, i, j): (-math.inf if v == "-Infinity" else float(v)) for m, i, j, v in pairs}


def wanted(result) -> dict:
    heads = getattr(result, "heads", None)
    tables = {name: getattr(result, name) for name in (("Q", "K", "V", "O", "Y") if heads else ("Q", "K", "V", "S", "A", "O"))}
    for t, head in enumerate(heads or ()):
        tables[f"S{t}"], tables[f"A{t}"] = head.S, head.A
    return {(name, i, j): float(v) for name, table in tables.items() for (i, j), v in np.ndenumerate(table)}


def wait_until_kernel_and_view_agree(page, timeout=20):
    """The kernel's state once it has every value, and the view showing the core's cells for it."""
    deadline = page.evaluate("() => Date.now()") + timeout * 1000
    while True:
        k = kernel_json(page, KERNEL_STATE)
        want = wanted(core_of(k["state"]))
        got = shown(page)
        if got.keys() == want.keys() and all(
                (math.isinf(w) and math.isinf(got[key])) or math.isclose(got[key], w, rel_tol=1e-9, abs_tol=1e-9)
                for key, w in want.items()):
            return k, want
        if page.evaluate("() => Date.now()") > deadline:
            raise AssertionError(f"view {got} != core {want} for {k['state']}")
        page.wait_for_timeout(200)


@pytest.fixture(scope="module")
def shapes_page(binder_env, browser, tmp_path_factory):
    root = tmp_path_factory.mktemp("served-shapes")
    shutil.copytree(ROOT / "book", root / "book", ignore=shutil.ignore_patterns("_build", ".ipynb_checkpoints"))
    with binder_env.jupyter("lab", root) as (base, token):
        context = browser.new_context(viewport={"width": 1024, "height": 768})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.set_default_timeout(60_000)
        binder_env.open_and_run(page, base, token, "book/shapes.md", "lab")
        page.wait_for_selector(f'{LAB}[data-lab-ready="true"]')
        page.page_errors = errors
        yield page
        context.close()


#: Where S, A, O, the first shape control and Q/K/V's change marks are, with the notebook's visible area.
FIRST_SCREEN = """() => {
    const box = (n) => { const r = n.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const lab = document.querySelector('.f11-shapes');
    const results = lab.querySelector('.al-results'), style = getComputedStyle(results);
    return {visible: box(document.querySelector('.jp-WindowedPanel-outer')),
            tables: ['S', 'A', 'O'].map(m => box(lab.querySelector(`figure[data-matrix-table="${m}"]`))),
            first_control: box(lab.querySelector('.f11-param-n')), plane_or_qkv: box(lab.querySelector('.al-qkv')),
            marks: [...lab.querySelectorAll('.al-qkv :is(.al-d, .al-m)')].map(d => parseFloat(getComputedStyle(d).fontSize)),
            background: style.backgroundColor, color: style.color};
}"""


def luminance(css_rgb: str) -> float:
    r, g, b = (float(x) / 255 for x in css_rgb[css_rgb.index("(") + 1:css_rgb.index(")")].split(",")[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_shapes_lab_in_jupyterlab_shows_s_a_o_first_and_follows_the_dark_theme(shapes_page):
    """As the site (issue 27, item 7): after Run All, at 1024x768 with the file browser open, S, A and
    O come first, O above the fold, the shape controls under them and Q, K, V after those; Q/K/V's
    change marks are readable (>= 12 px); in JupyterLab Dark the view is dark, not a white panel."""
    page = shapes_page
    page.evaluate("() => { const s = document.querySelector('.jp-WindowedPanel-outer'); s.scrollTop = 0; }")
    page.wait_for_timeout(300)
    seen = page.evaluate(FIRST_SCREEN)
    vl, vt, vr, vb = seen["visible"]
    for left, top, right, bottom in seen["tables"]:
        assert vt <= top and bottom <= min(768, vb) and vl <= left and right <= vr, seen
    assert max(t[3] for t in seen["tables"]) <= seen["first_control"][1] <= seen["plane_or_qkv"][1], seen
    assert seen["marks"] and min(seen["marks"]) >= 12, seen["marks"]
    assert luminance(seen["background"]) > 0.8 and luminance(seen["color"]) < 0.3, seen
    theme = "(name) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: name})"
    try:
        page.evaluate(theme, "JupyterLab Dark")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
        page.wait_for_timeout(300)
        dark = page.evaluate(FIRST_SCREEN)
        assert luminance(dark["background"]) < 0.15 and luminance(dark["color"]) > 0.7, dark
    finally:
        page.evaluate(theme, "JupyterLab Light")
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'")
    assert not page.page_errors, page.page_errors


def test_shapes_lab_in_jupyterlab_follows_n_and_a_typed_value_as_the_core_says(shapes_page):
    page = shapes_page
    k, _ = wait_until_kernel_and_view_agree(page)
    assert k["state"]["n"] == 2 and page.locator(f'{LAB} td.al-cell[data-matrix="S"]').count() == 4

    # n: 2 -> 3 by the keyboard on its slider (the view redraws from the slider's model at once).
    page.locator(f".f11-shapes .{dom_class('n')} .noUi-handle").focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("(sel) => document.querySelectorAll(sel + ' td.al-cell[data-matrix=\"S\"]').length === 9", arg=LAB)
    assert page.locator(f".f11-shapes .{dom_class('X[2,0]')}").is_visible()
    assert not page.locator(f".f11-shapes .{dom_class('X[3,0]')}").is_visible()

    # A value: X[2,1] typed as a reader would (Enter sends it).
    box = page.locator(f".f11-shapes .{dom_class('X[2,1]')} input")
    box.fill("2.5")
    box.press("Enter")
    k, want = wait_until_kernel_and_view_agree(page)
    assert k["state"]["n"] == 3 and k["state"]["tables"]["X"][2][1] == 2.5
    assert len([key for key in want if key[0] == "S"]) == 9
    # The kernel's lab.result is the core's answer for the same state.
    for name in ("S", "A", "O"):
        got = np.array([[-math.inf if v is None else v for v in row] for row in k["result"][name]])
        np.testing.assert_allclose(got, getattr(core_of(k["state"]), name), rtol=1e-12)
    caption = page.locator(f'{LAB} [data-matrix="S"]').first.evaluate(
        "td => td.closest('.al-matrix').querySelector('caption, .al-caption').textContent")
    assert "[3, 3]" in caption
    if SCREENSHOT:
        page.locator(".f11-shapes").screenshot(path=SCREENSHOT)
    assert not page.page_errors, page.page_errors



def test_shapes_lab_in_jupyterlab_takes_a_typed_cell_as_the_site_with_its_note(shapes_page):
    """A cell's box takes what is typed as the site's shapes lab does (shapes.coerce's grammar,
    clamps and refusals, each with its note, in the view and in the kernel's lab.notes), never
    clamped or dropped without a word; ↑ steps from a value typed without Enter."""
    page = shapes_page
    name = "X[1,1]"
    box = page.locator(f".f11-shapes .{dom_class(name)} input")

    def typed(raw: str, key: str = "Enter"):
        before = kernel_json(page, KERNEL_STATE)["state"]["tables"]["X"][1][1]
        box.click()
        box.press("Control+a")
        box.press("Delete")
        page.keyboard.type(raw)  # real key events: "−" and full-width digits as a reader's keyboard gives them
        page.keyboard.press(key)
        return before

    for raw in ("99", "abc", "−0.5", "２", "1,5", "0.53", "", "1e999"):
        before = typed(raw)
        want, note = coerce_cell(name, raw, current=before)
        k, _ = wait_until_kernel_and_view_agree(page)
        page.wait_for_function("([n, w]) => (document.querySelector(n).innerText.includes(w))",
                               arg=[f"{LAB} [data-lab-notes]", note or ""], timeout=10_000)
        assert k["state"]["tables"]["X"][1][1] == want, (raw, k["state"]["tables"]["X"][1][1], want)
        assert box.input_value() == format(want, "g").replace("e+", "e"), raw
        kernel_notes = kernel_json(page, KERNEL_STATE)["notes"]
        assert (note in kernel_notes) if note else not [n for n in kernel_notes if n.startswith(name)], (raw, kernel_notes)
    # The clamped value typed again (3 after "99 … 已改为 3"): valid, its note goes.
    typed("99")
    page.wait_for_function("(n) => document.querySelector(n).innerText.includes('99')", arg=f"{LAB} [data-lab-notes]")
    typed("3")
    page.wait_for_function("(n) => !document.querySelector(n).innerText.includes('99')", arg=f"{LAB} [data-lab-notes]")
    assert not [n for n in kernel_json(page, KERNEL_STATE)["notes"] if n.startswith(name)]
    # ↑ without Enter: a step (X's 0.1) from the typed 2, not from the 3 the cell held.
    typed("2", key="ArrowUp")
    k, _ = wait_until_kernel_and_view_agree(page)
    assert k["state"]["tables"]["X"][1][1] == 2.1 and box.input_value() == "2.1"
    # Five ↑ sent without waiting for each update: every one a step, the kernel ends where the view does.
    for _ in range(5):
        page.keyboard.press("ArrowUp")
    page.wait_for_function("(sel) => document.querySelector(sel).value === '2.6'",
                           arg=f".f11-shapes .{dom_class(name)} input", timeout=10_000)
    k, _ = wait_until_kernel_and_view_agree(page)
    assert k["state"]["tables"]["X"][1][1] == 2.6
    assert not page.page_errors, page.page_errors

def test_shapes_lab_in_jupyterlab_names_tokens_gives_the_link_and_keeps_the_causal_box_for_self_mode(shapes_page):
    """What the site's lab has, in JupyterLab: a token's name typed in X's row (checked, with a note
    for an empty one), 复制链接 (the site's address of the same state, the kernel's lab.link), and
    the causal box hidden in cross mode and back, as it was, in self mode."""
    page = shapes_page
    k, _ = wait_until_kernel_and_view_agree(page)
    if k["state"]["n"] == 2:  # this test alone (or after the heads test): n = 3 by the keyboard, as a reader does
        page.locator(f".f11-shapes .{dom_class('n')} .noUi-handle").focus()
        page.keyboard.press("ArrowRight")
        k, _ = wait_until_kernel_and_view_agree(page)
    assert k["state"]["n"] == 3, k["state"]
    pick = f'{LAB} figure[data-matrix-table="S"] [data-lab-row-pick="2"]'
    # JupyterLab lays out only the cells near the screen (its windowing): bring the row to the screen first.
    page.evaluate("() => document.querySelector('.f11-shapes .f11-token-X-2 input').scrollIntoView({block: 'center'})")
    box = page.locator(f".f11-shapes .f11-token-X-2 input")
    box.fill("苹果")
    box.press("Enter")
    page.wait_for_function("(sel) => document.querySelector(sel)?.textContent === '苹果'", arg=pick)
    box = page.locator(f".f11-shapes .f11-token-X-1 input")
    box.fill("  ")
    box.press("Enter")
    page.wait_for_function("(sel) => document.querySelector(sel + ' [data-lab-notes]').textContent.includes('不能是空的')", arg=LAB)
    k, _ = wait_until_kernel_and_view_agree(page)
    assert k["state"]["tokens"] == ["我", "爱", "苹果"] and k["notes"] == ["词元的名字不能是空的，已改回“爱”。"]
    assert page.locator(".f11-shapes .f11-token-X-1 input").input_value() == "爱"

    page.locator(".f11-shapes .f11-copy-link").click()
    field = page.locator(".f11-shapes .f11-link input")
    field.wait_for(state="visible")
    page.wait_for_function("(el) => el.value.length > 0", arg=field.element_handle())
    k, _ = wait_until_kernel_and_view_agree(page)
    assert field.input_value() == k["link"] and "tok=%E6%88%91,%E7%88%B1,%E8%8B%B9%E6%9E%9C" in k["link"]

    causal = page.locator(f".f11-shapes .{dom_class('causal')}")
    toggle = page.locator(f".f11-shapes .{dom_class('mode')} button")
    assert causal.is_visible() and k["state"]["causal"] is True
    toggle.nth(1).click()  # cross
    page.wait_for_function("() => document.querySelector('.f11-shapes').getAttribute('data-mode') === 'cross'")
    k, want = wait_until_kernel_and_view_agree(page)
    assert k["state"]["mode"] == "cross" and not causal.is_visible()
    assert not any(math.isinf(v) for key, v in want.items() if key[0] == "S")  # no causal triangle
    toggle.nth(0).click()  # self again: the box as it was, the triangle back
    page.wait_for_function("() => document.querySelector('.f11-shapes').getAttribute('data-mode') === 'self'")
    k, want = wait_until_kernel_and_view_agree(page)
    assert causal.is_visible() and causal.locator("input").is_checked() and k["state"]["causal"] is True
    assert want[("S", 0, 1)] == -math.inf and want[("S", 1, 2)] == -math.inf
    assert field.input_value() == k["link"]  # the link shown follows the state
    # S, A and O sized for the window as on the site: nothing leaves its cell or the strip.
    got = page.evaluate("""async (sel) => { for (let k = 0; k < 2; k++) await new Promise(requestAnimationFrame);
        const lab = document.querySelector(sel), sao = lab.querySelector('.al-sao');
        const v = [...sao.querySelectorAll('td.al-cell .al-v')];
        return {value: Math.min(...v.map(e => parseFloat(getComputedStyle(e).fontSize))), strip: [sao.scrollWidth, sao.clientWidth],
          spill: v.filter(e => e.scrollWidth > e.closest('td').clientWidth + 1).length, w: lab.querySelector('.al-sao').style.getPropertyValue('--al-w')}; }""", LAB)
    assert got["w"] and got["value"] >= 18 and got["strip"][0] <= got["strip"][1] + 1 and got["spill"] == 0, got
    if SCREENSHOT:
        page.locator(".f11-shapes").screenshot(path=SCREENSHOT.replace(".png", "-2.png"))
    assert not page.page_errors, page.page_errors


def test_shapes_lab_in_jupyterlab_shows_two_heads_and_goes_back_to_one(shapes_page):
    """Issue 31 in JupyterLab: the 两个头 example (an ipywidgets button) sets h, Wo and every table;
    each head's S and A, the concatenation and Y are the core's, the kernel's lab.result and link
    agree (h and Wo in it); Wo's boxes show only with heads; h back to 1 by the keyboard on its
    slider is the lab of one head again."""
    page = shapes_page
    page.locator(".f11-shapes .f11-example-two_heads").click()
    page.wait_for_function("(sel) => document.querySelectorAll(sel + ' td.al-cell[data-matrix=\"Y\"]').length === 12", arg=LAB)
    k, want = wait_until_kernel_and_view_agree(page)
    assert k["state"]["h"] == 2 and k["state"]["tables"]["Wo"] == [[1.0 if i == j else 0.0 for j in range(4)] for i in range(4)]
    assert {key[0] for key in want} == {"Q", "K", "V", "O", "Y", "S0", "A0", "S1", "A1"}
    np.testing.assert_allclose(np.array(k["result"]["Y"]), core_of(k["state"]).Y, rtol=1e-12)
    assert "&h=2&" in k["link"] and "&Wo=" in k["link"]
    assert page.locator(".f11-shapes .f11-table-Wo").is_visible()
    assert page.locator(f"{LAB} [data-plane]").get_attribute("data-plane") == "none"
    if SCREENSHOT:
        page.screenshot(path=SCREENSHOT.replace(".png", "-heads.png"))
    page.locator(f".f11-shapes .{dom_class('h')} .noUi-handle").focus()
    page.keyboard.press("ArrowLeft")
    page.wait_for_function("(sel) => !document.querySelector(sel + ' td.al-cell[data-matrix=\"Y\"]')", arg=LAB)
    k, want = wait_until_kernel_and_view_agree(page)
    assert k["state"]["h"] == 1 and "h=" not in k["link"] and not page.locator(".f11-shapes .f11-table-Wo").is_visible()
    assert page.locator(f"{LAB} [data-head]").count() == 0
    assert not page.page_errors, page.page_errors
