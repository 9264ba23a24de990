"""The vector plane (issue 25), in headless Chromium on the built site.

Every vector of the 2x2 lab is two wide, so render.js draws X's rows as points, q, k, v as
arrows and o as points in [data-plane] (each row an element with data-vector, data-row and
data-value="a,b").  Here: what it draws equals a reference computed in this file with plain
numpy (not the lab's core) for states typed into the boxes; it sits on the projector's first
screen beside S, A, O; a mouse drag and a finger's drag of a point change that row of X, with
the boxes, the cells and the plane agreeing; a vertical swipe over the plane scrolls and changes
nothing; hovering links cells and arrows both ways; the step-through shows the stage's part;
print keeps it; the shapes lab draws it where every width is 2 and says why not elsewhere.
"""

from __future__ import annotations

import math
import random
import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_twin_browser import LAB_PAGE, Twin, assert_cells_equal_python  # noqa: E402  (its page readers)

from attention_lab.params import PARAM_NAMES, RANGES, default_params
from attention_lab.web import strings

pytestmark = pytest.mark.browser
PLANE = strings()["view"]["plane"]

READ_PLANE = """root => {
  const out = {};
  for (const g of root.querySelectorAll("[data-plane] [data-vector]")) {
    (out[g.dataset.vector] = out[g.dataset.vector] || {})[g.dataset.row] = g.dataset.value.split(",").map(Number);
  }
  out.feet = [...root.querySelectorAll("[data-plane] .al-foot")].map(g => g.dataset.value.split(",").map(Number));
  return out;
}"""
#: Where an element of the plane is on the screen: a point's dot; for an arrow, the first place
#: along its shaft (from the middle out) where it is the topmost thing, so the mouse meets it.
SCREEN_AT = """(g) => {
  const svg = g.ownerSVGElement, m = svg.getScreenCTM();
  const at = (x, y) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f];
  const dot = g.querySelector('.al-dot');
  if (dot) return at(+dot.getAttribute('cx'), +dot.getAttribute('cy'));
  const l = g.querySelector('.al-shaft'), p = ['x1', 'y1', 'x2', 'y2'].map(a => +l.getAttribute(a));
  for (const t of [0.5, 0.6, 0.4, 0.7, 0.3, 0.8, 0.2, 0.9]) {
    const [x, y] = at(p[0] + t * (p[2] - p[0]), p[1] + t * (p[3] - p[1]));
    const hit = document.elementFromPoint(x, y);
    if (hit && hit.closest('[data-vector]') === g) return [x, y];
  }
  return at((p[0] + p[2]) / 2, (p[1] + p[3]) / 2);
}"""
UNDER_RESULTS = """() => {
  const top = document.querySelector('[data-plane-panel="score"]').getBoundingClientRect().top;
  window.scrollBy({top: top - document.querySelector('.al-results').getBoundingClientRect().bottom - 8, behavior: 'instant'});
}"""
LINKED = """root => [...root.querySelectorAll("[data-linked]")].map(e =>
  e.dataset.matrix ? e.dataset.matrix + "," + e.dataset.row + "," + e.dataset.col
  : e.dataset.labSource ? "src:" + e.dataset.labSource
  : e.dataset.vector ? "vec:" + e.dataset.vector + ":" + e.dataset.row
  : e.classList.contains("al-foot") ? "foot:" + e.dataset.key : "line:" + e.dataset.line).sort()"""


def reference(params: dict) -> dict:
    """The computation written out with numpy alone: Q, K, V, the scores, shares and output."""
    t = {name: np.array([[params[f"{name}[{i},{j}]"] for j in range(2)] for i in range(2)], dtype=float)
         for name in ("X", "Wq", "Wk", "Wv")}
    Q, K, V = t["X"] @ t["Wq"], t["X"] @ t["Wk"], t["X"] @ t["Wv"]
    raw = Q @ K.T
    S = raw / math.sqrt(params["d_k"])
    if params["causal"]:
        S[0, 1] = -np.inf
    E = np.exp(S - S.max(axis=1, keepdims=True))
    A = E / E.sum(axis=1, keepdims=True)
    return {"x": t["X"], "q": Q, "k": K, "v": V, "o": A @ V, "raw": raw, "S": S, "A": A}


def assert_plane_equals(shown: dict, ref: dict, row: int, where: str) -> None:
    for kind in ("x", "q", "k", "v", "o"):
        for i in range(2):
            got = shown[kind][str(i)]
            assert np.allclose(got, ref[kind][i], rtol=1e-12, atol=1e-9), f"{where}: {kind}{i} {got} vs {ref[kind][i]}"
    for j in range(2):  # the feet of the explained row: q·k and ÷ √d_k
        dot, scaled = shown["feet"][j]
        assert math.isclose(dot, ref["raw"][row, j], rel_tol=1e-12, abs_tol=1e-9), where
        assert math.isclose(scaled, ref["raw"][row, j] / math.sqrt(ref_dk(ref)), rel_tol=1e-12, abs_tol=1e-9), where


def ref_dk(ref: dict) -> float:
    return ref["dk"]


def random_params(r: random.Random) -> dict:
    p = {}
    for name in PARAM_NAMES[:-2]:
        rng = RANGES[name.split("[")[0]]
        steps = round((rng.max - rng.min) / rng.step)
        p[name] = round(rng.min + r.randint(0, steps) * rng.step, 10)
    p["d_k"], p["causal"] = float(r.choice([1, 2, 3, 5, 16, 64])), r.random() < 0.5
    return p


def type_params(twin: Twin, params: dict) -> None:
    """Set a state the way a reader types it: each number box filled, then Enter."""
    for name in PARAM_NAMES[:-1]:
        box = twin.root.locator(f'input[data-param-text="{name}"]')
        text = repr(float(params[name])).removesuffix(".0")
        if box.input_value() != text:
            box.fill(text)
            box.press("Enter")
    causal = twin.root.locator('input[data-param="causal"]')
    if causal.is_checked() != params["causal"]:
        causal.click()


@pytest.fixture
def lab(new_page, site_url):
    return lambda q="", **kw: Twin(new_page(**kw), site_url + LAB_PAGE + (("?" + q) if q else ""))


def test_plane_draws_what_an_independent_computation_gives_for_typed_states(lab):
    twin = lab(width=1024, height=768)
    r = random.Random(2025)
    for k, params in enumerate([default_params()] + [random_params(r) for _ in range(4)]):
        type_params(twin, params)
        row = k % 2
        twin.root.locator(f'input[data-lab-row="{row}"]').check()
        ref = {**reference(params), "dk": params["d_k"]}
        shown = twin.root.evaluate(READ_PLANE)
        assert_plane_equals(shown, ref, row, f"state {k} {params}")
        assert_cells_equal_python(twin.root.evaluate("""root => { const out = {};
          for (const td of root.querySelectorAll("td[data-matrix]")) {
            const m = td.dataset.matrix; out[m] = out[m] || [[null, null], [null, null]];
            out[m][+td.dataset.row][+td.dataset.col] = td.dataset.value; } return out; }"""), params, f"state {k}")
        # The score lines say q·k and ÷ √d_k with the lab's numbers; a masked key says so.
        lines = twin.root.locator("[data-plane] .al-score").all_text_contents()
        assert all("÷ √" in t for t in lines) or "(0, 0)" in lines[0], lines
        if params["causal"] and row == 0:
            assert "已挡住" in lines[1], lines


def test_plane_sits_on_the_projectors_first_screen_beside_s_a_o_and_prints_with_the_tables(lab):
    twin = lab(width=1024, height=768)
    page = twin.page
    boxes = twin.root.locator("[data-plane] svg").evaluate_all(
        "els => els.map(e => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; })")
    assert len(boxes) == 2
    for left, top, right, bottom in boxes:
        assert right - left >= 200 and bottom - top >= 120, boxes
        assert left >= 0 and top >= 0 and right <= 1024 and bottom <= 768, boxes
    cells = twin.root.locator("td[data-matrix='O']").evaluate_all(
        "els => els.map(e => e.getBoundingClientRect().bottom)")
    assert max(cells) <= 768
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 1024
    # On paper: the plane is there, after the tables, with its points and arrows.
    page.emulate_media(media="print")
    shown = twin.root.locator("[data-plane]").evaluate(
        "e => [getComputedStyle(e).display, e.getBoundingClientRect().height, e.querySelectorAll('[data-vector]').length]")
    assert shown[0] != "none" and shown[1] > 100 and shown[2] == 10, shown


def test_on_paper_the_plane_is_redrawn_for_the_page_and_nothing_on_page_one_is_under_9_pt(lab):
    """A real print (page.pdf, A4): no ResizeObserver runs for the print layout, so the plane is
    redrawn when the print media query changes; else the screen's viewBox (wider than the paper's
    panel) is shrunk onto the page with its labels (7.7 pt, ticks 6.5 pt).  Every text run on page 1
    (parameters, S, A, O, the plane, Q, K, V) is at least 9 pt; the screen gets its drawing back."""
    import io

    from pypdf import PdfReader

    twin = lab(width=1280, height=900)
    page = twin.page
    screen = twin.root.locator("[data-plane] svg").evaluate_all("els => els.map(e => e.getAttribute('viewBox'))")
    page.evaluate("""() => { window.__printBoxes = [];
      matchMedia('print').addEventListener('change', e => { if (e.matches) window.__printBoxes =
        [...document.querySelectorAll('[data-plane] svg')].map(s => { const b = s.getBoundingClientRect();
          return [s.getAttribute('viewBox'), b.width, b.height]; }); }); }""")
    pdf = PdfReader(io.BytesIO(page.pdf(format="A4", print_background=True)))
    printed = page.evaluate("() => window.__printBoxes")
    assert len(printed) == 2, printed
    for box, width, height in printed:  # drawn at the paper's size, not scaled from the screen's
        w, h = map(float, box.split()[2:])
        assert abs(w - width) <= 1.5 and abs(h - height) <= 1.5, printed
    sizes = []

    def size(text, cm, tm, font, fs):  # a run's height on paper: the font size through both matrices
        c, d = tm[2] * cm[0] + tm[3] * cm[2], tm[2] * cm[1] + tm[3] * cm[3]
        if text.strip():
            sizes.append((round(fs * (c * c + d * d) ** 0.5, 2), text.strip()))

    first = re.sub(r"\s+", "", pdf.pages[0].extract_text(visitor_text=size))
    assert all(t in first for t in ("S分数表", "A份额表", "O输出表", "打分", "混合", "Q查询表")), first[:300]
    plane_runs = [t for _, t in sizes if any(ch in t for ch in "₀₁")]
    assert plane_runs, sizes[:20]
    assert min(sizes)[0] >= 9, sorted(sizes)[:8]
    # Back on the screen, the screen's drawing.
    page.wait_for_function("(want) => JSON.stringify([...document.querySelectorAll('[data-plane] svg')].map(e => e.getAttribute('viewBox'))) === JSON.stringify(want)", arg=screen)


def test_a_mouse_drag_of_a_point_changes_that_row_of_x_and_everything_follows(lab):
    twin = lab(width=1024, height=768)
    page = twin.page
    point = twin.root.locator('[data-plane] [data-vector="x"][data-row="1"]')
    x, y = point.evaluate(SCREEN_AT)
    x0, _ = twin.root.locator('[data-plane] [data-vector="x"][data-row="0"]').evaluate(SCREEN_AT)
    # The scale from the picture itself: x我 = (1, 1) and x爱 = (1, −1) are 2 apart vertically.
    _, y0 = twin.root.locator('[data-plane] [data-vector="x"][data-row="0"]').evaluate(SCREEN_AT)
    per_unit = (y - y0) / 2
    page.mouse.move(x, y)
    page.mouse.down()
    for k in range(1, 13):  # sent without waiting for each update
        page.mouse.move(x - k * per_unit * 0.1, y - k * per_unit * 0.05)
    page.mouse.up()
    step = RANGES["X"].step
    got = [float(twin.root.locator(f'input[data-param-text="X[1,{c}]"]').input_value()) for c in range(2)]
    assert abs(got[0] - (1 - 1.2)) <= step + 1e-9 and abs(got[1] - (-1 + 0.6)) <= step + 1e-9, got
    assert all(abs(v / step - round(v / step)) < 1e-9 for v in got), f"not on the sliders' step: {got}"
    params = {**default_params(), "X[1,0]": got[0], "X[1,1]": got[1]}
    ref = {**reference(params), "dk": 2.0}
    assert_plane_equals(twin.root.evaluate(READ_PLANE), ref, 1, "after the drag")
    assert float(twin.root.locator('input[data-param="X[1,0]"]').input_value()) == got[0]  # the slider follows
    assert "X=1,1," in page.evaluate("() => location.search")  # the address once let go
    # The change marks show what the drag changed (O[爱,·] moved).
    assert twin.root.locator('td[data-matrix="O"][data-row="1"][data-changed]').count() >= 1
    # The keyboard: the focused point moves one step per arrow key.
    point.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    after = [float(twin.root.locator(f'input[data-param-text="X[1,{c}]"]').input_value()) for c in range(2)]
    assert after == [round(got[0] + step, 10), round(got[1] + 2 * step, 10)], after
    assert point.get_attribute("data-value") == f"{after[0]:g},{after[1]:g}"


def touch(page, kind: str, x: float, y: float) -> None:
    cdp = page.context.new_cdp_session(page) if not hasattr(page, "_f11_cdp") else page._f11_cdp
    page._f11_cdp = cdp
    points = [] if kind == "touchEnd" else [{"x": x, "y": y, "id": 1}]
    cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})


def test_a_finger_drags_a_point_but_a_swipe_over_the_plane_only_scrolls(lab):
    twin = lab(width=360, height=640, has_touch=True, is_mobile=True)
    page = twin.page
    page.evaluate(UNDER_RESULTS)
    before = {n: twin.root.locator(f'input[data-param-text="{n}"]').input_value() for n in PARAM_NAMES[:-1]}
    # A vertical swipe that starts on the plane's empty background: the page scrolls, no value moves.
    svg = twin.root.locator('[data-plane-panel="score"] svg')
    box = svg.bounding_box()
    sx, sy = box["x"] + 8, box["y"] + box["height"] - 10
    scroll0 = page.evaluate("() => scrollY")
    assert page.evaluate(f"() => {{ const e = document.elementFromPoint({sx}, {sy});"
                         " return !!e.closest('[data-plane]') && !e.closest('[data-plane-handle]'); }")
    touch(page, "touchStart", sx, sy)
    for k in range(1, 10):
        touch(page, "touchMove", sx, sy - 12 * k)
    touch(page, "touchEnd", 0, 0)
    page.wait_for_timeout(300)
    assert {n: twin.root.locator(f'input[data-param-text="{n}"]').input_value() for n in PARAM_NAMES[:-1]} == before
    assert page.evaluate("() => scrollY") > scroll0
    # A finger on x我 drags it (once the swipe's fling has stopped: a touch during it only stops it).
    point = twin.root.locator('[data-plane] [data-vector="x"][data-row="0"]')
    page.wait_for_function("() => new Promise(r => { const y = scrollY; setTimeout(() => r(scrollY === y), 150); })")
    # The plane just under the sticky S, A, O (which cover whatever scrolls beneath them).
    page.evaluate(UNDER_RESULTS)
    x, y = point.evaluate(SCREEN_AT)
    assert page.evaluate(f"() => !!document.elementFromPoint({x}, {y}).closest('[data-plane-handle]')")
    touch(page, "touchStart", x, y)
    for k in range(1, 8):
        touch(page, "touchMove", x - 6 * k, y + 4 * k)
    touch(page, "touchEnd", 0, 0)
    page.wait_for_timeout(200)
    got = [float(twin.root.locator(f'input[data-param-text="X[0,{c}]"]').input_value()) for c in range(2)]
    assert got[0] < 1 and got[1] < 1, got
    params = {**default_params(), "X[0,0]": got[0], "X[0,1]": got[1]}
    assert_plane_equals(twin.root.evaluate(READ_PLANE), {**reference(params), "dk": 2.0}, 1, "after the finger")


#: The baseline's q爱 and k我 are one arrow: a Wk where every arrow stands apart.
APART = "X=1,1,1,-1&Wq=0.5,0.5,-0.5,0.5&Wk=1,0,0.5,1&Wv=5,10,5,-10&d_k=2&causal=1&row=1"


def test_hovering_an_arrow_marks_its_cells_and_a_cell_marks_its_arrows(lab):
    twin = lab(APART, width=1024, height=768)
    page = twin.page
    explain = twin.root.locator("[data-lab-explain]")
    want = {
        ("q", 1): {"Q,1,0", "Q,1,1", "S,1,0", "S,1,1"},
        ("k", 0): {"K,0,0", "K,0,1", "S,1,0", "foot:0"},
        ("v", 1): {"V,1,0", "V,1,1"},
        ("o", 1): {"O,1,0", "O,1,1", "vec:v:0", "vec:v:1"},
        ("x", 0): {"src:X[0,0]", "src:X[0,1]", "Q,0,0", "Q,0,1", "K,0,0", "K,0,1", "V,0,0", "V,0,1",
                   "vec:q:0", "vec:k:0", "vec:v:0"},
    }
    for (kind, row), linked in want.items():
        g = twin.root.locator(f'[data-plane] [data-vector="{kind}"][data-row="{row}"]')
        page.mouse.move(*g.evaluate(SCREEN_AT))
        got = set(twin.root.evaluate(LINKED))
        assert linked <= got, (kind, row, got)
        assert g.get_attribute("data-active") is not None
        assert explain.text_content().startswith(kind + "₀₁"[row]), explain.text_content()
    page.mouse.move(0, 0)
    # A cell marks the arrows it comes from.
    cell_wants = {
        ("S", 1, 0): {"vec:q:1", "vec:k:0", "foot:0"},
        ("A", 1, 1): {"vec:q:1", "vec:k:0", "vec:k:1"},
        ("O", 1, 0): {"vec:v:0", "vec:v:1", "vec:o:1"},
        ("Q", 0, 1): {"vec:q:0", "vec:x:0"},
        ("V", 1, 0): {"vec:v:1", "vec:x:1"},
    }
    for (name, i, j), vectors in cell_wants.items():
        twin.root.locator(f'td[data-matrix="{name}"][data-row="{i}"][data-col="{j}"]').hover()
        got = {s for s in twin.root.evaluate(LINKED) if s.startswith(("vec:", "foot:"))}
        assert got == vectors, (name, i, j, got)


def test_step_through_shows_the_stages_part_of_the_plane(lab):
    twin = lab(width=1024, height=768)
    hidden = """root => ({
      weights: [...root.querySelectorAll('[data-plane] .al-weight')].map(e => e.getAttribute('visibility') === 'hidden'),
      o: root.querySelector('[data-plane] [data-vector="o"][data-row="1"]').getAttribute('visibility') === 'hidden',
      scores: root.querySelector('[data-plane] .al-score').textContent })"""
    step = twin.root.locator('[data-lab-action="step"]')
    seen = []
    for _ in range(5):
        step.click()
        seen.append(twin.root.evaluate(hidden))
    assert seen[0]["scores"].endswith("= 1") and "÷" not in seen[0]["scores"]          # 1: q·k only
    assert "÷ √2 = 0.707" in seen[1]["scores"]                                          # 2: scaled
    assert all(s["weights"] == [True, True] and s["o"] for s in seen[:3])               # 1-3: no shares, no mix
    assert seen[3]["weights"] == [False, False] and seen[3]["o"]                        # 4: the shares
    assert seen[4]["weights"] == [False, False] and not seen[4]["o"]                    # 5: the mix
    step.click()  # back to the whole picture
    assert twin.root.evaluate(hidden)["o"] is False


def test_shapes_lab_draws_the_plane_for_any_n_and_m_where_every_width_is_two(new_page, site_url):
    page = new_page(width=1024, height=768).page
    page.goto(site_url + "/book/shapes.html?n=3&mode=cross&m=4&d_model=2&d_k=2&d_v=2")
    page.wait_for_selector("[data-shapes-lab] [data-plane] [data-vector='o'][data-row='2']", timeout=15000)
    counts = page.evaluate("""() => Object.fromEntries(['x', 'xs', 'q', 'k', 'v', 'o'].map(
      k => [k, document.querySelectorAll(`[data-shapes-lab] [data-plane] [data-vector="${k}"]`).length]))""")
    assert counts == {"x": 3, "xs": 4, "q": 3, "k": 4, "v": 4, "o": 3}, counts
    # Its vectors are the shapes lab's own tables' rows (Q, K, V, O cells).
    for kind, name in (("q", "Q"), ("k", "K"), ("v", "V"), ("o", "O")):
        rows = page.evaluate(f"""() => [...document.querySelectorAll('[data-shapes-lab] [data-plane] [data-vector="{kind}"]')]
          .map(g => g.dataset.value.split(',').map(Number))""")
        cells = page.evaluate(f"""() => {{ const out = [];
          for (const td of document.querySelectorAll('[data-shapes-lab] td[data-matrix="{name}"]'))
            (out[+td.dataset.row] = out[+td.dataset.row] || [])[+td.dataset.col] = Number(td.dataset.value);
          return out; }}""")
        assert np.allclose(rows, cells, rtol=1e-12), (kind, rows, cells)
    # Dragging a source point (Xs) changes that row of Xs.
    g = page.locator('[data-shapes-lab] [data-plane] [data-vector="xs"][data-row="3"]')
    g.focus()
    page.keyboard.press("ArrowLeft")
    before = page.locator('[data-shapes-lab] input[data-param-text="Xs[3,0]"]').input_value()
    assert g.get_attribute("data-value").split(",")[0] == before
    # Other widths: no plane, and the reason.
    page.goto(site_url + "/book/shapes.html?n=2&d_model=3&d_k=2&d_v=2")
    page.wait_for_selector("[data-shapes-lab] [data-plane='none']", timeout=15000)
    text = page.locator("[data-shapes-lab] .al-plane-none").text_content()
    assert "d_model = 3" in text and "2" in text, text
