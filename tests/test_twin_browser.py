"""The static twin on the built website, driven in headless Chromium as a reader would.

Against the built site (``site_url``): the chapter page and the lab page.  Sliders
are moved with the keyboard, values typed, buttons clicked, links opened; every
cell shown (``data-value``) and the worked text are compared with the Python core.
Screenshots (desktop and phone, light and dark) go to ``$TWIN_SHOT_DIR`` if set.
"""

from __future__ import annotations

import math
import os
from html import escape
import sys
from pathlib import Path
from urllib.parse import quote

import pytest

from attention_lab.core import attention
from attention_lab.params import PARAM_NAMES, coerce, default_params, tables_from_params
from attention_lab.plotting import format_value
from attention_lab.web import strings
from attention_lab.worked import worked_steps, worked_text

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import make_vectors  # noqa: E402

pytestmark = pytest.mark.browser

CHAPTER = "/book/f11-attention.html"
LAB_PAGE = "/book/lab.html"
TABLES = ("Q", "K", "V", "S", "A", "O")
TOL = 1e-9
STRINGS = strings()

READ_CELLS = """root => {
  const out = {};
  for (const td of root.querySelectorAll("td[data-matrix]")) {
    const m = td.dataset.matrix;
    out[m] = out[m] || [[null, null], [null, null]];
    out[m][Number(td.dataset.row)][Number(td.dataset.col)] = td.dataset.value;
  }
  return out;
}"""
READ_WORKED = """root => [...root.querySelectorAll("[data-lab-worked] > p")].map(p => p.textContent).join("\\n")"""
READ_CONTROLS = """root => Object.fromEntries([...root.querySelectorAll("input[data-param]")].map(
  i => [i.dataset.param, i.type === "checkbox" ? i.checked
        : i.dataset.scale === "log2" ? 2 ** Number(i.value) : Number(i.value)]))"""


def query(params: dict, row: int = 1) -> str:
    """The link format app.js writes (repr gives the same shortest digits as JavaScript's String)."""
    parts = [f"{t}=" + ",".join(repr(float(params[f"{t}[{i},{j}]"])) .removesuffix(".0")
                                for i in range(2) for j in range(2)) for t in ("X", "Wq", "Wk", "Wv")]
    parts += [f"d_k={float(params['d_k']):g}", f"causal={int(bool(params['causal']))}", f"row={row}"]
    return "&".join(parts)


def python_result(params: dict):
    t = tables_from_params(params)
    return attention(t["X"], t["Wq"], t["Wk"], t["Wv"], d_k=t["d_k"], causal=t["causal"])


def assert_cells_equal_python(shown: dict, params: dict, label: str = "") -> None:
    r = python_result(params)
    for name in TABLES:
        want = getattr(r, name)
        assert name in shown, f"{label}: no cells for {name}"
        for i in range(2):
            for j in range(2):
                got = float(shown[name][i][j])
                w = float(want[i, j])
                if math.isinf(w):
                    assert got == w, f"{label}: {name}[{i},{j}] shows {got}, expected masked"
                else:
                    assert abs(got - w) <= TOL, f"{label}: {name}[{i},{j}] shows {got}, Python {w}"


class Twin:
    """One twin on a page: its root element and readers for what it shows."""

    def __init__(self, recorder, url: str):
        self.rec = recorder
        self.page = recorder.page
        self.page.goto(url)
        self.page.wait_for_selector("[data-attention-lab][data-lab-ready='true'] td[data-matrix='O'][data-value]",
                                    timeout=15000)
        self.root = self.page.locator("[data-attention-lab]").first

    def cells(self) -> dict:
        return self.root.evaluate(READ_CELLS)

    def worked(self) -> str:
        return self.root.evaluate(READ_WORKED)

    def controls(self) -> dict:
        return self.root.evaluate(READ_CONTROLS)

    def control(self, name: str):
        return self.root.locator(f'input[data-param="{name}"]')

    def params(self) -> dict:
        """The parameters the page shows in its controls (the number boxes hold exact values), read at once."""
        out, texts = self.root.evaluate(f"""root => [({READ_CONTROLS})(root), Object.fromEntries(
            [...root.querySelectorAll("input[data-param-text]")].map(i => [i.dataset.paramText, i.value]))]""")
        for name in PARAM_NAMES[:-1]:
            out[name] = float(texts[name])
        return out

    def notes(self) -> str:
        """Everything in the view's fixed note area (typed-value notes, link notes, messages)."""
        return self.root.locator("[data-lab-notes]").inner_text().strip()


@pytest.fixture
def chapter(new_page, site_url):
    return lambda q="", **kw: Twin(new_page(**kw), site_url + CHAPTER + (("?" + q) if q else ""))


def test_chapter_shows_the_twin_at_the_baseline(chapter):
    twin = chapter()
    base = default_params()
    assert twin.controls() == {k: (v if k == "causal" else float(v)) for k, v in base.items()}
    assert_cells_equal_python(twin.cells(), base, "baseline")
    shown = twin.cells()
    assert shown["S"][0][1] == "-Infinity" and float(shown["A"][0][1]) == 0.0
    assert twin.worked() == worked_text(python_result(base), 1)
    assert twin.root.locator("input[data-param]").count() == len(PARAM_NAMES)


def test_keyboard_moves_a_slider_and_every_cell_follows_python(chapter):
    twin = chapter()
    slider = twin.control("Wq[0,0]")
    slider.focus()
    for _ in range(3):
        twin.page.keyboard.press("ArrowRight")
    params = {**default_params(), "Wq[0,0]": 0.65}
    assert twin.params() == params
    assert_cells_equal_python(twin.cells(), params, "Wq[0,0] +3 steps")
    assert twin.worked() == worked_text(python_result(params), 1)

    twin.page.keyboard.press("End")
    params["Wq[0,0]"] = 3.0
    assert_cells_equal_python(twin.cells(), params, "Wq[0,0] End")
    assert "Wq[0,0]" not in twin.notes()  # a range end is a legal value: no note (issue 17)
    twin.page.keyboard.press("Home")
    params["Wq[0,0]"] = -3.0
    assert_cells_equal_python(twin.cells(), params, "Wq[0,0] Home")

    twin.control("X[1,1]").focus()
    twin.page.keyboard.press("ArrowLeft")
    params["X[1,1]"] = -1.1
    assert_cells_equal_python(twin.cells(), params, "X[1,1] -1 step")


def test_d_k_and_causal_by_keyboard_with_the_plain_warning(chapter):
    twin = chapter()
    assert twin.notes() == ""
    twin.control("d_k").focus()
    twin.page.keyboard.press("ArrowLeft")
    params = {**default_params(), "d_k": 1.0}
    assert_cells_equal_python(twin.cells(), params, "d_k=1")
    assert "宽度是 2" in twin.notes() and "d_k=1" in twin.notes()
    twin.control("causal").focus()
    twin.page.keyboard.press("Space")
    params["causal"] = False
    assert twin.controls()["causal"] is False
    assert_cells_equal_python(twin.cells(), params, "causal off")
    assert "-Infinity" not in str(twin.cells()["S"])
    # Row choice: explain 我 instead of 爱.
    twin.root.locator('input[data-lab-row="0"]').check()
    assert twin.worked() == worked_text(python_result(params), 0)


def test_typed_values_are_exact_or_clamped_with_the_kernel_labs_note(chapter):
    twin = chapter()
    box = twin.root.locator('input[data-param-text="Wv[0,0]"]')
    box.fill("7.25")
    box.press("Enter")
    params = {**default_params(), "Wv[0,0]": 7.25}
    assert twin.params()["Wv[0,0]"] == 7.25
    assert_cells_equal_python(twin.cells(), params, "typed 7.25")
    box.fill("99")
    box.press("Enter")
    value, note = coerce("Wv[0,0]", "99")
    params["Wv[0,0]"] = value
    assert_cells_equal_python(twin.cells(), params, "typed 99")
    assert note in twin.notes()
    # One note for it, as in the kernel lab: not a second one saying it is at its range end.
    assert sum("Wv[0,0]" in line for line in twin.notes().splitlines()) == 1, twin.notes()


@pytest.mark.parametrize("action, contrast", [("only_wv", "only_wv"), ("only_wq", "only_wq"), ("reset", None)])
def test_buttons_give_the_chapters_cases(chapter, action, contrast):
    twin = chapter("X=0.5,0.5,0.5,0.5&d_k=9&causal=0")
    twin.root.locator(f'button[data-lab-action="{action}"]').click()
    params = default_params(contrast)
    assert twin.params() == params
    assert_cells_equal_python(twin.cells(), params, action)


def vector_cases():
    # Three random cases here (the Node twin tests take all the vectors); the named ones all.
    named = [c for c in make_vectors.cases(n_random=3) if not c[0].startswith("random")]
    return named + [c for c in make_vectors.cases(n_random=3) if c[0].startswith("random")]


@pytest.mark.parametrize("label, params", vector_cases(), ids=[c[0] for c in vector_cases()])
def test_vectors_opened_as_links_equal_python(lab_page, label, params):
    # The lab page: the same lab as the chapter's (test_chapter_shows_the_twin_at_the_baseline and the
    # copied-link round trip open the chapter), a third of its load.
    twin = lab_page(query(params, row=1))
    assert STRINGS["twin"]["link_note_head"] not in twin.notes()  # the link is used as it is
    assert twin.params() == {k: (bool(v) if k == "causal" else float(v)) for k, v in params.items()}
    assert_cells_equal_python(twin.cells(), params, label)
    # '=' versus '≈' is decided on the shown decimals (worked.py), so even random cases agree exactly.
    assert twin.worked() == worked_text(python_result(params), 1)


def test_copy_link_round_trip_restores_the_configuration(chapter, new_page, site_url):
    twin = chapter()
    twin.control("X[0,1]").focus()
    twin.page.keyboard.press("ArrowLeft")
    twin.page.keyboard.press("ArrowLeft")
    twin.control("causal").click()
    twin.root.locator('input[data-lab-row="0"]').check()
    box = twin.root.locator('input[data-param-text="Wk[1,0]"]')
    box.fill("0.123")
    box.press("Enter")
    before = twin.params()
    twin.root.locator('button[data-lab-action="copy_link"]').click()
    link = twin.root.locator("[data-lab-link]").input_value()
    assert link.startswith(site_url + CHAPTER + "?") and "Wk=" in link
    assert twin.page.url == link  # the address bar holds the same link
    other = Twin(new_page(), link)
    assert other.params() == before
    assert other.root.locator('input[data-lab-row="0"]').is_checked()
    assert other.cells() == twin.cells()
    assert STRINGS["twin"]["link_note_head"] not in other.notes()


HOSTILE = ("X=%3Cscript%3Ewindow.__pwned%3D1%3C%2Fscript%3E,1.5,abc,0x10"
           "&%3Cimg%20src%3Dx%20onerror%3Dwindow.__pwned%3D2%3E=1"
           "&Wq=" + "9" * 300 + ",1,1,1"
           "&d_k=1e9&causal=%22%3E%3Csvg%20onload%3Dwindow.__pwned%3D3%3E&row=javascript:alert(1)&Wv=1,2")


def test_hostile_link_is_ignored_with_a_visible_note_and_nothing_injected(chapter):
    twin = chapter(HOSTILE)
    notes = twin.notes()
    assert notes, "a visible note is expected"
    assert "<script>" in notes or "X[0,0]" in notes  # shown as text, not markup
    assert twin.page.evaluate("() => window.__pwned") is None
    lab = twin.root
    assert lab.locator("script").count() == 1  # only the config
    # Nothing injected: the only SVG is the view's own vector plane (two panels).
    assert lab.locator("img, iframe, object, svg:not(.al-plane-svg)").count() == 0
    assert lab.locator("svg.al-plane-svg").count() == 2
    assert twin.page.locator("img[src='x'], svg[onload]").count() == 0
    params = twin.params()
    assert params["X[0,0]"] == default_params()["X[0,0]"]
    assert params["X[0,1]"] == 1.5  # the one usable value is used
    assert params["d_k"] == 64.0  # clamped, with a note
    assert params["causal"] is True
    assert_cells_equal_python(twin.cells(), params, "hostile")
    assert twin.rec.console_errors == [] and twin.rec.page_errors == []


def test_overlong_link_is_ignored_whole_with_a_note(chapter):
    twin = chapter("X=" + "1," * 4000)
    assert twin.notes()
    assert twin.params() == default_params()
    assert twin.rec.console_errors == [] and twin.rec.page_errors == []


@pytest.mark.parametrize("path", [CHAPTER, LAB_PAGE])
def test_page_gets_the_twin_with_no_outside_requests_and_no_console_errors(new_page, site_url, path):
    rec = new_page(fresh=True)  # an empty cache: every request seen
    rec.page.goto(site_url + path)
    rec.page.wait_for_load_state("networkidle")
    assert rec.page.locator("[data-attention-lab]").count() >= 1, f"{path} has no static lab"
    rec.page.wait_for_selector("[data-attention-lab] td[data-matrix='A'][data-value]")
    slider = rec.page.locator('[data-attention-lab] input[data-param="Wk[0,0]"]').first
    slider.focus()
    rec.page.keyboard.press("ArrowRight")
    assert rec.external_requests() == []
    assert rec.console_errors == [] and rec.page_errors == []
    # No dead ipywidgets view next to the twin.
    assert rec.page.locator(".jupyter-widgets, .widget-container").count() == 0
    # The static fallback text (for viewers without the twin's scripts) is in the page's HTML
    # and gone once the twin has built itself.
    html = rec.page.request.get(site_url + path).text()
    fallback = STRINGS["twin"]["fallback"]
    assert f"data-attention-lab-fallback>{escape(fallback)}</p>" in html
    assert fallback.startswith("实验台正在加载")  # it says the lab is loading, not that JavaScript is off
    assert rec.page.locator("[data-attention-lab-fallback]").count() == 0


@pytest.mark.parametrize("width, scheme", [(1280, "light"), (1280, "dark"), (375, "light"), (375, "dark")])
def test_desktop_and_phone_light_and_dark(chapter, width, scheme):
    twin = chapter(width=width, height=900, color_scheme=scheme)
    page = twin.page
    box = twin.root.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5, f"lab sticks out: {box}"
    assert twin.root.evaluate("r => r.scrollWidth - r.clientWidth") <= 0, "lab scrolls sideways"
    # Nothing of the lab makes the page wider than the screen (the chapter's own text is
    # the chapter's business; this checks every element the twin draws).
    wide = twin.root.evaluate("""(r, w) => [...r.querySelectorAll("*")]
        .filter(e => e.getBoundingClientRect().right > w + 0.5).map(e => e.tagName + "." + e.className)""", width)
    assert wide == [], f"lab elements beyond {width}px: {wide[:5]}"
    # The theme's mode reaches the lab: background luminance low in dark, high in light.
    rgb = twin.root.evaluate("""r => getComputedStyle(r).backgroundColor.match(/[\\d.]+/g).slice(0, 3).map(Number)""")
    luminance = (0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]) / 255
    assert (luminance < 0.35) if scheme == "dark" else (luminance > 0.8), f"{scheme}: lab background {rgb}"
    if scheme == "dark":
        # No light frame from the theme's HTML-output backdrop around the lab.
        frame = twin.root.evaluate("r => getComputedStyle(r.parentElement).backgroundColor")
        assert frame in ("rgba(0, 0, 0, 0)", "transparent"), f"lab sits on a {frame} frame"
    text = twin.root.evaluate("r => getComputedStyle(r).color.match(/[\\d.]+/g).slice(0, 3).map(Number)")
    assert abs(sum(text) - sum(rgb)) > 300, f"text {text} on background {rgb} lacks contrast"
    # Large enough to read (the projector page has its own test for 28 px).
    size = twin.root.locator("td[data-matrix='A']").first.evaluate("td => parseFloat(getComputedStyle(td).fontSize)")
    assert size >= (15 if width > 600 else 12.5)
    shots = os.environ.get("TWIN_SHOT_DIR")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
        twin.root.scroll_into_view_if_needed()
        page.screenshot(path=str(Path(shots) / f"twin-{width}-{scheme}.png"), full_page=False)
        twin.root.screenshot(path=str(Path(shots) / f"twin-lab-{width}-{scheme}.png"))


def test_every_control_has_a_label_for_screen_readers(chapter):
    twin = chapter()
    unlabelled = twin.root.evaluate("""r => [...r.querySelectorAll("input, button")].filter(i => {
        if (i.type === "hidden") return false;
        const label = (i.labels && [...i.labels].map(l => l.textContent).join("").trim())
          || i.getAttribute("aria-label") || (i.tagName === "BUTTON" && i.textContent.trim());
        return !label;
      }).map(i => i.outerHTML)""")
    assert unlabelled == []
    masked = twin.root.locator('td[data-matrix="S"][data-row="0"][data-col="1"]')
    assert STRINGS["view"]["masked_label"] in masked.text_content()  # labelled, not only hatched
    # Words a screen reader reads well, not "X[0,1]".
    assert twin.control("X[0,1]").get_attribute("aria-label") == "X 第 0 行第 1 列"
    assert twin.root.locator('input[data-param-text="X[0,1]"]').get_attribute("aria-label") == STRINGS["twin"]["exact_value"].replace(
        "{name}", "X 第 0 行第 1 列")  # the one Tab stop of X[0,1]: says it takes typing and arrows


def test_arrow_keys_in_a_number_box_step_by_the_sliders_step_and_apply_at_once(chapter):
    twin = chapter()
    box = twin.root.locator('input[data-param-text="Wq[0,0]"]')
    box.focus()
    box.press("ArrowUp")
    params = {**default_params(), "Wq[0,0]": 0.55}  # baseline 0.5, step 0.05
    assert twin.params()["Wq[0,0]"] == pytest.approx(0.55)
    assert_cells_equal_python(twin.cells(), params, "number box ArrowUp")


# ---------------------------------------------------------------- issue 7: projector, controls, phone, print

LINKED = """root => [...root.querySelectorAll("[data-linked]")].map(e =>
  e.dataset.matrix ? e.dataset.matrix + "," + e.dataset.row + "," + e.dataset.col
  : e.dataset.labSource ? "src:" + e.dataset.labSource
  : e.dataset.vector ? "vec:" + e.dataset.vector + ":" + e.dataset.row
  : e.classList.contains("al-foot") ? "foot:" + e.dataset.key
  : "line:" + e.dataset.line + (e.dataset.j ? ":" + e.dataset.j : "") + (e.dataset.c ? ":" + e.dataset.c : "")).sort()"""
BOX = "e => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; }"


@pytest.fixture
def lab_page(new_page, site_url):
    return lambda q="", **kw: Twin(new_page(**kw), site_url + LAB_PAGE + (("?" + q) if q else ""))


def boxes(twin, selector):
    return twin.root.locator(selector).evaluate_all(f"els => els.map({BOX})")


def test_projector_page_shows_every_control_and_s_a_o_at_28px_on_1024x768(lab_page):
    twin = lab_page(width=1024, height=768)
    page = twin.page
    assert page.evaluate("() => window.scrollY") == 0
    assert twin.root.get_attribute("data-layout") == "wide"
    wanted = ("input[data-param]", "input[data-param-text]", "input[data-lab-row]", "button",
              "td[data-matrix='S'], td[data-matrix='A'], td[data-matrix='O']")
    for selector in wanted:
        for left, top, right, bottom in boxes(twin, selector):
            assert left >= 0 and top >= 0 and right <= 1024 and bottom <= 768, f"{selector} at {(left, top, right, bottom)}"
    sizes = twin.root.locator("td[data-matrix='S'], td[data-matrix='A'], td[data-matrix='O']").evaluate_all(
        "els => els.map(td => parseFloat(getComputedStyle(td.querySelector('.al-v')).fontSize))")
    assert min(sizes) >= 28
    # The worked text is below the controls; scrolled to, the tables stay in view (sticky).
    twin.root.locator("[data-lab-worked]").scroll_into_view_if_needed()
    assert page.evaluate("() => window.scrollY") > 0
    for left, top, right, bottom in boxes(twin, "td[data-matrix='S'], td[data-matrix='A'], td[data-matrix='O']"):
        assert top >= 0 and bottom <= 768
    # A note (typed value out of range, d_k != 2) never moves the tables.
    page.evaluate("() => window.scrollTo(0, 0)")
    before = boxes(twin, "td[data-matrix]")
    box = twin.root.locator('input[data-param-text="d_k"]')
    box.fill("99")
    box.press("Enter")
    assert "d_k" in twin.notes()
    after = boxes(twin, "td[data-matrix]")
    assert all(abs(a - b) <= 1.5 for x, y in zip(after, before) for a, b in zip(x, y)), (before, after)


@pytest.mark.parametrize("path, width", [(CHAPTER, 1024), (CHAPTER, 1366), (LAB_PAGE, 1024)])
def test_every_slider_track_is_at_least_120px_wide(new_page, site_url, path, width):
    twin = Twin(new_page(width=width, height=800), site_url + path)
    widths = twin.root.locator("input[type='range']").evaluate_all("els => els.map(e => e.getBoundingClientRect().width)")
    assert len(widths) == 17 and min(widths) >= 120, widths


def test_d_k_is_reached_by_mouse_at_every_power_of_two(lab_page):
    twin = lab_page(width=1024, height=768)
    slider = twin.control("d_k")
    box = slider.bounding_box()
    thumb = 16  # Chromium's range thumb: its centre travels from box.x + 8 to box.x + width - 8
    for k, dk in enumerate((1, 2, 4, 8, 16, 32, 64)):
        x = box["x"] + thumb / 2 + (box["width"] - thumb) * k / 6
        twin.page.mouse.click(x, box["y"] + box["height"] / 2)
        params = {**default_params(), "d_k": float(dk)}
        assert twin.params()["d_k"] == dk, f"clicked the mark of {dk}"
        assert_cells_equal_python(twin.cells(), params, f"d_k={dk} by mouse")


@pytest.mark.parametrize("name, typed", [("X[0,1]", "−0.5"), ("Wv[1,0]", "１．５"), ("d_k", "1,5"), ("Wq[0,0]", "0x10"),
                                         ("d_k", "８"), ("Wk[1,1]", "1.2.3")])
def test_typed_numbers_follow_the_shared_grammar(lab_page, name, typed):
    twin = lab_page()
    before = twin.params()
    box = twin.root.locator(f'input[data-param-text="{name}"]')
    box.fill(typed)
    box.press("Enter")
    value, note = coerce(name, typed, current=before[name])
    params = {**before, name: value}
    assert twin.params() == params
    assert_cells_equal_python(twin.cells(), params, f"typed {typed!r}")
    if note:
        assert note in twin.notes()
    if typed in ("0x10", "1.2.3"):
        assert value == before[name] and note  # refused: the value stays, a note says so
    assert box.get_attribute("type") == "text" and box.get_attribute("inputmode") == "decimal"


def test_the_address_follows_every_change_and_reset_clears_it(lab_page):
    twin = lab_page()
    page = twin.page
    assert "?" not in page.url
    entries = page.evaluate("() => history.length")
    twin.control("Wk[0,1]").focus()
    page.keyboard.press("ArrowRight")
    first = twin.params()
    assert "Wk=0.5,0.55," in page.url
    twin.control("causal").click()
    twin.root.locator('input[data-lab-row="0"]').check()
    latest = twin.params()
    assert "causal=0" in page.url and "row=0" in page.url
    assert page.evaluate("() => history.length") == entries  # replaceState: no history entries
    page.reload()
    again = Twin(twin.rec, page.url)
    assert again.params() == latest != first  # the state on screen, never an older one
    assert again.root.locator('input[data-lab-row="0"]').is_checked()
    again.root.locator('button[data-lab-action="reset"]').click()
    assert "?" not in page.url
    page.reload()
    assert Twin(twin.rec, page.url).params() == default_params()


def test_a_long_drag_writes_the_address_when_let_go_and_a_reload_shows_the_final_state(lab_page):
    twin = lab_page()
    page = twin.page
    # Count the address writes: a drag is many input events but one settled value.
    page.evaluate("""() => { const h = history, f = h.replaceState.bind(h); window.__writes = 0;
      h.replaceState = function () { window.__writes++; return f.apply(null, arguments); }; }""")
    box = twin.control("X[0,0]").bounding_box()
    y, left, width = box["y"] + box["height"] / 2, box["x"] + 8, box["width"] - 16
    page.mouse.move(left + width / 2, y)
    page.mouse.down()
    for k in range(80):  # to and fro across the track, about 80 input events
        page.mouse.move(left + width * abs(((k * 0.05) % 2) - 1), y)
    page.mouse.move(left + width * 0.2, y)
    events = page.evaluate("() => window.__writes")
    page.mouse.up()
    final = twin.params()
    assert final["X[0,0]"] != default_params()["X[0,0]"]
    assert events <= 2, f"{events} address writes during one drag"
    assert page.evaluate("() => location.search") == "?" + query(final)  # the address holds the final state
    page.reload()
    again = Twin(twin.rec, page.url)
    assert again.params() == final
    assert_cells_equal_python(again.cells(), final, "reloaded after a drag")



def test_a_drag_leaves_the_worked_text_below_the_fold_current_when_scrolled_to_and_when_let_go(lab_page):
    """During a drag the worked text, below the fold on the projector page, is not rebuilt every
    frame (render.js: workedSeen); it must still show the current state as soon as it comes into
    view, and after the let-go wherever it is."""
    twin = lab_page(width=1280, height=900)
    page = twin.page
    assert page.evaluate("() => document.querySelector('[data-lab-worked]').getBoundingClientRect().top") > 900 * 1.25
    box = twin.control("X[0,0]").bounding_box()
    y, left, width = box["y"] + box["height"] / 2, box["x"] + 8, box["width"] - 16
    page.mouse.move(left + width / 2, y)
    page.mouse.down()
    for k in range(12):  # sent without waiting for each update
        page.mouse.move(left + width * (0.5 + 0.03 * k), y)
    during = twin.params()
    assert during["X[0,0]"] != default_params()["X[0,0]"]
    page.evaluate("() => document.querySelector('[data-lab-worked]').scrollIntoView({block: 'center'})")
    page.wait_for_function("""want => [...document.querySelectorAll("[data-lab-worked] > p")].map(p => p.textContent)
                              .join("\\n") === want""", arg=worked_text(python_result(during), 1), timeout=3000)
    page.evaluate("() => scrollTo(0, 0)")
    page.wait_for_timeout(100)  # the observer has seen it go
    for k in range(12):
        page.mouse.move(left + width * (0.2 + 0.02 * k), y)
    page.mouse.up()
    final = twin.params()
    assert final != during
    assert twin.worked() == worked_text(python_result(final), 1)
    assert_cells_equal_python(twin.cells(), final, "after the drag")

def run_axe_colour_contrast(page) -> list:
    axe = Path(os.environ.get("F11_AXE_JS", str(ROOT / "node_modules" / "axe-core" / "axe.min.js")))
    if not axe.exists():
        pytest.fail(f"axe-core not found at {axe}: scripts/test.sh installs it (npm axe-core@4) and sets F11_AXE_JS")
    page.add_script_tag(path=str(axe))
    return page.evaluate("""async () => {
      const r = await axe.run(document.querySelector("[data-attention-lab]"),
                              { runOnly: { type: "rule", values: ["color-contrast"] } });
      return r.violations.flatMap(v => v.nodes.map(n => n.target.join(" ") + ": " + n.failureSummary));
    }""")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_lab_has_no_colour_contrast_violations(lab_page, scheme):
    twin = lab_page("X=3,-3,0.5,0&Wq=3,-3,3,0.2&Wk=-3,3,1,0.1&Wv=20,-20,0,7&d_k=1&causal=1&row=0",
                    width=1024, height=768, color_scheme=scheme)
    twin.root.locator('button[data-lab-action="only_wv"]').click()  # changed cells with their marks
    twin.root.locator("td[data-matrix='O']").first.hover()  # linked cells and an explanation
    assert run_axe_colour_contrast(twin.page) == []


def test_phone_keeps_a_and_o_in_view_while_any_control_is(chapter):
    twin = chapter(width=375, height=812)
    page = twin.page
    assert twin.root.get_attribute("data-layout") == "phone"
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 375
    controls = twin.root.locator(".al-controls input[data-param], .al-controls input[data-param-text],"
                                 " .al-controls button")
    n = controls.count()
    for k in range(n):
        control = controls.nth(k)
        if not control.is_visible():  # the copied link's close button, while there is no link box
            continue
        control.evaluate("e => e.scrollIntoView({block: 'end'})")  # just in view, at the bottom
        top = control.evaluate(BOX)[1]
        assert 0 <= top < 812
        for left, t, right, bottom in boxes(twin, "td[data-matrix='A'], td[data-matrix='O']"):
            assert 0 <= t and bottom <= top and 0 <= left and right <= 375, "A/O hidden while a control is in view"
    # Tab to a control: it scrolls out from under the sticky results.
    twin.control("Wv[1,1]").focus()
    top = twin.control("Wv[1,1]").evaluate(BOX)[1]
    assert top >= max(b[3] for b in boxes(twin, "td[data-matrix='O']"))


def test_print_is_a_static_coloured_snapshot_in_one_piece(lab_page):
    twin = lab_page("Wv=1,0,0,1")
    before = twin.cells()
    colour = twin.root.locator("td[data-matrix='O']").first.evaluate("td => getComputedStyle(td).backgroundColor")
    twin.page.emulate_media(media="print")
    style = twin.root.evaluate("""r => ({adjust: getComputedStyle(r).printColorAdjust,
        brk: getComputedStyle(r).breakInside,
        // A second page only between its parts: each part is kept whole, but the worked text, which
        // may go on between its lines (each line whole).
        parts: [...r.querySelectorAll(".al-sao, .al-qkv, .al-plane, .al-worked-lines p")].map(e => getComputedStyle(e).breakInside),
        worked: getComputedStyle(r.querySelector(".al-worked")).breakInside,
        // No control on paper; the row headers of S, A, O (buttons on screen) print as labels.
        shown: [...r.querySelectorAll("input, button:not(.al-rowpick), .al-controls")]
            .filter(e => e.getClientRects().length).length,
        position: getComputedStyle(r.querySelector(".al-results")).position})""")
    assert len(style["parts"]) > 5 and set(style.pop("parts")) == {"avoid"}, style
    assert style == {"adjust": "exact", "brk": "auto", "worked": "auto", "shown": 0, "position": "static"}
    assert twin.root.locator("td[data-matrix='O']").first.evaluate("td => getComputedStyle(td).backgroundColor") == colour
    assert twin.cells() == before and twin.root.locator("td[data-matrix='O']").first.is_visible()
    assert twin.root.locator("[data-lab-worked]").is_visible()


def test_skip_link_jumps_from_the_controls_to_the_results(lab_page):
    twin = lab_page()
    skip = twin.root.locator("a.al-skip")
    skip.focus()
    assert skip.is_visible()
    twin.page.keyboard.press("Enter")
    assert twin.page.evaluate("() => document.activeElement.classList.contains('al-results')")
    twin.page.keyboard.press("Tab")  # on into the results: S's first row header (it chooses the row)
    assert twin.page.evaluate("() => document.activeElement.closest('.al-results') !== null")
    assert twin.page.evaluate("() => document.activeElement.dataset.labRowPick") == "0"
    twin.page.keyboard.press("Tab")  # then S's cells
    assert twin.page.evaluate("() => document.activeElement.dataset.matrix") == "S"


# ---------------------------------------------------------------- issue 8: where every number comes from

def expected_linked(name: str, i: int, j: int, r, row: int) -> set:
    """What a cell is computed from, and the worked lines (of the explained row) that compute it,
    and the vectors of the plane it comes from (issue 25)."""
    return expected_cells_and_lines(name, i, j, r, row) | expected_vectors(name, i, j, row)


def expected_vectors(name: str, i: int, j: int, row: int) -> set:
    """S[i,j]: q_i and k_j (and k_j's foot on q's line in the explained row); A[i,j]: q_i and every k;
    O[i,·]: every v and o_i; a row of Q, K or V: its arrow and the point x it comes from."""
    if name == "S":
        return {f"vec:q:{i}", f"vec:k:{j}"} | ({f"foot:{j}"} if i == row else set())
    if name == "A":
        return {f"vec:q:{i}", "vec:k:0", "vec:k:1"}
    if name == "O":
        return {"vec:v:0", "vec:v:1", f"vec:o:{i}"}
    return {f"vec:{name.lower()}:{i}", f"vec:x:{i}"}


def expected_cells_and_lines(name: str, i: int, j: int, r, row: int) -> set:
    masked = lambda a, b: math.isinf(r.S[a, b])  # noqa: E731
    cells = lambda m, pick: {f"{m},{a},{b}" for a in range(2) for b in range(2) if pick(a, b)}  # noqa: E731
    if name == "S":
        out = cells("Q", lambda a, b: a == i) | cells("K", lambda a, b: a == j)
        if masked(i, j):
            out.add("src:causal")
        if i == row:  # scored, scaled, masked: the masked key's q·k line too, and its mask note
            out |= {f"line:dot:{j}", "line:scaled", "line:add_mask"} | ({f"line:mask_hides:{j}"} if masked(i, j) else set())
    elif name == "A":
        out = cells("S", lambda a, b: a == i) | ({"line:shares"} if i == row else set())
    elif name == "O":
        out = cells("A", lambda a, b: a == i) | cells("V", lambda a, b: b == j)
        if i == row:
            out.add(f"line:out_cell:{j}")
    else:
        w = {"Q": "Wq", "K": "Wk", "V": "Wv"}[name]
        out = {f"src:X[{i},0]", f"src:X[{i},1]", f"src:{w}[0,{j}]", f"src:{w}[1,{j}]"}
        if name == "Q" and i == row:
            out.add("line:receiver")
        if name != "Q":
            out.add(f"line:{'masked_pos' if masked(row, i) else 'readable'}:{i}")
    return out


def expected_explanation(name: str, i: int, j: int, r, params: dict) -> str:
    """The explanation text, built here from Python's numbers and the strings table; "=" only
    where the shown numbers give the shown (unrounded) result, else "≈" (the chapter's rule)."""
    e, tok, f = STRINGS["view"]["explain"], STRINGS["tokens"], format_value
    factor = lambda x: f"({f(x)})" if f(x).startswith("−") else f(x)  # noqa: E731
    shown = lambda x: float(f(x).replace("−", "-"))  # noqa: E731

    def eq(from_shown: float, x: float) -> str:
        tol = 1e-12 * max(1.0, abs(x))
        return "=" if abs(shown(x) - x) <= tol and abs(from_shown - shown(x)) <= tol else "≈"

    col = tok[j] if name in ("S", "A") else STRINGS["twin"]["cell"].replace("{c}", str(j))
    fill = {"cell": f"{name}[{tok[i]},{col}]", "value": f(getattr(r, name)[i, j]), "d_k": f"{params['d_k']:g}",
            "row_tok": tok[i], "col_tok": tok[j], "i": str(i), "j": str(j)}
    if name == "S":
        fill.update(qi="q" + "₀₁"[i], kj="k" + "₀₁"[j],
                    expr=" + ".join(f"{factor(r.Q[i, p])}×{factor(r.K[j, p])}" for p in range(2)))
    if name == "S" and math.isinf(r.S[i, j]):
        # The worked text's story: the raw score, scaled, then the mask's −∞.
        template = e["S_masked"]
        raw, scaled = r.raw_scores[i, j], r.raw_scores[i, j] / math.sqrt(params["d_k"])
        fill.update(raw=f(raw), eq_raw=eq(sum(shown(r.Q[i, p]) * shown(r.K[j, p]) for p in range(2)), raw),
                    scaled=f(scaled), eq_scaled=eq(shown(raw) / math.sqrt(params["d_k"]), scaled))
    elif name == "S":
        template = e["S"]
        fill.update(eq=eq(sum(shown(r.Q[i, p]) * shown(r.K[j, p]) for p in range(2)) / math.sqrt(params["d_k"]),
                          r.S[i, j]))
    elif name == "A" and math.isinf(r.S[i, j]):
        template = e["A_masked"]
    elif name == "A":
        template = e["A"]
        readable = [s for s in r.S[i] if not math.isinf(s)]
        fill.update(s=f(r.S[i, j]), sum=" + ".join(f"exp({f(s)})" for s in readable),
                    eq=eq(math.exp(shown(r.S[i, j])) / sum(math.exp(shown(s)) for s in readable), r.A[i, j]))
    elif name == "O":
        template = e["O"]
        fill["expr"] = " + ".join(f"{f(r.A[i, k])}×{factor(r.V[k, j])}" for k in range(2))
        hand = sum(shown(r.A[i, k]) * shown(r.V[k, j]) for k in range(2))
        fill["eq"] = eq(hand, r.O[i, j])
        fill["hand"] = f(hand)
        if fill["hand"] != f(r.O[i, j]):  # by hand the shown shares give another number: say both
            template = e["O_rounded"]
    else:
        w = {"Q": "Wq", "K": "Wk", "V": "Wv"}[name]
        template = e["QKV"]
        fill.update(w=w, expr=" + ".join(f"{factor(params[f'X[{i},{p}]'])}×{factor(params[f'{w}[{p},{j}]'])}"
                                         for p in range(2)),
                    eq=eq(sum(shown(params[f"X[{i},{p}]"]) * shown(params[f"{w}[{p},{j}]"]) for p in range(2)),
                          getattr(r, name)[i, j]))
    for key, value in fill.items():
        template = template.replace("{" + key + "}", value)
    return template


def test_a_cell_explanation_writes_approx_where_its_rounded_numbers_do_not_add_up(lab_page):
    """At the baseline, O[爱,第 1 格] reads 0.67×0 + 0.33×20 = 6.6 by hand, and says the table's 6.605 is from
    the unrounded shares (issue 17: "≈ 6.605" read wrong by hand), while
    Q[我,第 0 格] = 1×0.5 + 1×(−0.5) = 0 is exact, and A[我,我] = 1 (one readable position)."""
    twin = lab_page()
    explain = twin.root.locator("[data-lab-explain]")
    texts = {}
    for code in ("O11", "Q00", "A00", "A10"):
        twin.root.locator(f'td[data-matrix="{code[0]}"][data-row="{code[1]}"][data-col="{code[2]}"]').hover()
        texts[code] = explain.text_content()
    assert "0.67×0 + 0.33×20 = 6.6（" in texts["O11"] and "6.605" in texts["O11"] and "≈" not in texts["O11"], texts
    assert texts["Q00"].endswith("1×0.5 + 1×(−0.5) = 0"), texts
    assert texts["A00"].endswith("exp(0) ÷ (exp(0)) = 1"), texts
    assert "≈ 0.67" in texts["A10"] and "{" not in texts["A10"], texts


SATURATED = "X=3,3,3,-3&Wq=3,3,-3,3&Wk=3,3,3,-3&Wv=5,10,5,-10&d_k=2&causal={causal}&row=1"


def test_a_share_too_small_for_the_table_is_said_as_tiny_and_only_a_masked_one_as_0(lab_page):
    """Issue 28: softmax saturated (A[爱,爱] = exp(−229.1)/… ≈ 3.2×10⁻¹⁰⁰) is not "= 0": the cell shows
    its bound, its explanation the power of ten with "≈", O's explanation mixes with those shares;
    a masked share is exactly 0 and says why."""
    twin = lab_page(SATURATED.format(causal=0))
    explain = twin.root.locator("[data-lab-explain]")
    cell = lambda m, i, j: twin.root.locator(f'td[data-matrix="{m}"][data-row="{i}"][data-col="{j}"]')  # noqa: E731
    assert cell("A", 1, 1).locator(".al-v").text_content() == "<0.001"
    assert cell("A", 1, 0).locator(".al-v").text_content() == ">0.999"
    cell("A", 1, 1).hover()
    text = explain.text_content()
    assert text.endswith("≈ 3.2×10⁻¹⁰⁰") and "= 0" not in text, text
    cell("O", 1, 0).hover()
    text = explain.text_content()
    assert "(1 − 3.2×10⁻¹⁰⁰)×" in text and "(3.2×10⁻¹⁰⁰)×" in text and "≈ 30" in text, text
    masked = lab_page(SATURATED.format(causal=1))
    m_explain = masked.root.locator("[data-lab-explain]")
    a01 = masked.root.locator('td[data-matrix="A"][data-row="0"][data-col="1"]')
    assert a01.locator(".al-v").text_content() == "0"
    a01.hover()
    assert m_explain.text_content().startswith("A[我,爱] = 0：") and "挡住" in m_explain.text_content()


def random_states(n: int, seed: int) -> list[tuple[dict, int]]:
    return [(c[1], k % 2) for k, c in enumerate(make_vectors.cases(n_random=n)) if c[0].startswith("random")][:n] + \
        [(default_params(), 0)]


def test_hover_and_focus_mark_exactly_what_a_cell_comes_from_with_the_numbers(lab_page):
    for params, row in random_states(2, 0):
        twin = lab_page(query(params, row))
        r = python_result(params)
        explain = twin.root.locator("[data-lab-explain]")
        explain_id = explain.get_attribute("id")
        for name in TABLES:
            for i in range(2):
                for j in range(2):
                    cell = twin.root.locator(f'td[data-matrix="{name}"][data-row="{i}"][data-col="{j}"]')
                    cell.hover()
                    where = f"{name}[{i},{j}] row {row} {params}"
                    assert set(twin.root.evaluate(LINKED)) == expected_linked(name, i, j, r, row), where
                    assert explain.text_content() == expected_explanation(name, i, j, r, params), where
                    assert cell.get_attribute("aria-describedby") == explain_id
        # Keyboard: Tab reaches a cell, arrow keys move between cells, the same sets follow.
        twin.page.mouse.move(0, 0)
        twin.root.locator('td[data-matrix="S"][data-row="0"][data-col="0"]').focus()
        twin.page.keyboard.press("ArrowDown")
        twin.page.keyboard.press("ArrowRight")
        assert twin.page.evaluate("() => [document.activeElement.dataset.matrix, document.activeElement.dataset.row,"
                                  " document.activeElement.dataset.col]") == ["S", "1", "1"]
        assert set(twin.root.evaluate(LINKED)) == expected_linked("S", 1, 1, r, row)
        assert explain.text_content() == expected_explanation("S", 1, 1, r, params)
        twin.page.keyboard.press("ArrowRight")  # past S's edge: on into A
        assert twin.page.evaluate("() => document.activeElement.dataset.matrix + document.activeElement.dataset.row"
                                  " + document.activeElement.dataset.col") == "A10"
        assert set(twin.root.evaluate(LINKED)) == expected_linked("A", 1, 0, r, row)


def pending_cells(twin) -> set:
    return set(twin.root.evaluate("""r => [...r.querySelectorAll("td[data-pending]")].map(
        td => td.dataset.matrix + td.dataset.row + td.dataset.col)"""))


def test_step_through_reveals_the_row_one_stage_at_a_time(lab_page):
    twin = lab_page()
    step = twin.root.locator('button[data-lab-action="step"]')
    assert step.text_content() == STRINGS["view"]["buttons"]["step"]
    current_line = {1: "raw_scores", 2: "scaled", 3: "add_mask", 4: "shares", 5: "output"}
    row = 1
    for stage in range(1, 6):
        step.click()
        assert twin.root.get_attribute("data-step") == str(stage)
        want = ({f"A{row}0", f"A{row}1"} if stage < 4 else set()) | ({f"O{row}0", f"O{row}1"} if stage < 5 else set())
        assert pending_cells(twin) == want, stage
        for code in want:
            assert not any(ch.isdigit() for ch in twin.root.locator(
                f'td[data-matrix="{code[0]}"][data-row="{code[1]}"][data-col="{code[2]}"] .al-v').text_content())
        # S's row shows the stage's numbers: raw q·k, then ÷ √d_k, then S (+ M).
        r = python_result(default_params() if stage < 2 else {**default_params(), "Wv[0,0]": 5.5})
        stage_row = {1: r.raw_scores[row], 2: r.raw_scores[row] / math.sqrt(2)}.get(stage, r.S[row])
        assert twin.root.locator(f'td[data-matrix="S"][data-row="{row}"] .al-v').all_text_contents() == [
            format_value(float(x)) for x in stage_row], stage
        assert twin.root.locator("[data-lab-worked] > p[data-current]").evaluate_all(
            "ps => ps.map(p => p.dataset.line)") == [current_line[stage]]
        if stage == 2:
            # A control change keeps the stage and recomputes.
            twin.control("Wv[0,0]").focus()
            twin.page.keyboard.press("ArrowRight")
            assert twin.root.get_attribute("data-step") == "2" and pending_cells(twin) == want
            assert_cells_equal_python(twin.cells(), {**default_params(), "Wv[0,0]": 5.5}, "during step 2")
    step.click()
    assert twin.root.get_attribute("data-step") == "0" and pending_cells(twin) == set()
    assert twin.root.locator("[data-lab-worked] > p[data-current], [data-lab-worked] > p[data-pending]").count() == 0


SHOWN_LINES = """r => [...r.querySelectorAll("[data-lab-worked] > p:not([data-pending])")].map(p => p.textContent)"""


@pytest.mark.parametrize("row", [0, 1])
def test_step_through_shows_each_stages_lines_as_python_writes_them(lab_page, row):
    """At stage k the lab shows worked.py's lines of stages 0..k, under the label of stage k: for 我,
    the masked 爱's q₀·k₁ = 1 and 1/√2 at stages 1 and 2, its −∞ only from stage 3 ("+ M")."""
    params = default_params()
    twin = lab_page(query(params, row))
    steps = worked_steps(python_result(params), row)
    step = twin.root.locator('button[data-lab-action="step"]')
    label = twin.root.locator(".al-stage")
    ordinal = "一二三四五"
    for stage in range(1, 6):
        step.click()
        want = [s["text"] for s in steps if s["stage"] <= stage]
        assert twin.root.evaluate(SHOWN_LINES) == want, stage
        assert want[-1] != steps[-1]["text"] or stage == 5
        heading = next(s["text"] for s in steps if s["key"] == f"step{stage}")
        assert heading.startswith(f"第{ordinal[stage - 1]}步")
        assert label.text_content() == STRINGS["view"]["stage_label"].replace("{n}", str(stage)).replace(
            "{text}", STRINGS["view"]["stages"][stage - 1])
        shown = "\n".join(want)
        if row == 0:
            assert ("−∞" in shown) == (stage >= 3), stage
            assert "q₀·k₁ = 0×0+1×1 = 1" in shown and "1/√2" in (shown if stage >= 2 else "1/√2")


def changed_cells(twin) -> dict:
    return twin.root.evaluate("""r => Object.fromEntries([...r.querySelectorAll("td[data-changed]")].map(
        td => [td.dataset.matrix + td.dataset.row + td.dataset.col, td.querySelector(".al-d").textContent]))""")


def expected_changes(old: dict, new: dict) -> dict:
    a, b = python_result(old), python_result(new)
    out = {}
    for name in TABLES:
        for i in range(2):
            for j in range(2):
                x, y = float(getattr(a, name)[i, j]), float(getattr(b, name)[i, j])
                if x != y:
                    if math.isinf(b.S[i, j]) and name in ("S", "A"):
                        mark = ""  # masked now: the cell shows its label 已挡住 (and the frame)
                    elif math.isinf(x):
                        mark = STRINGS["view"]["changed_mask"]
                    else:
                        d = format_value(abs(y - x))
                        mark = ("▲" if y > x else "▼") + ("<0.001" if d == "0" else d)
                    out[f"{name}{i}{j}"] = mark
    return out


def test_changed_cells_are_marked_with_the_change_and_nothing_else(lab_page):
    twin = lab_page()
    assert changed_cells(twin) == {}
    twin.control("Wv[0,1]").focus()
    twin.page.keyboard.press("ArrowLeft")
    old, new = default_params(), {**default_params(), "Wv[0,1]": 9.5}
    got = changed_cells(twin)
    assert got == expected_changes(old, new) and got and all(k[0] in "VO" for k in got)
    for action in ("only_wv", "only_wq", "reset"):
        # A contrast marks what it changes from the baseline (issue 29); 恢复基准 what it undoes.
        old, new = new if action == "reset" else default_params(), default_params(None if action == "reset" else action)
        twin.root.locator(f'button[data-lab-action="{action}"]').click()
        assert changed_cells(twin) == expected_changes(old, new), action
    # 对照一 leaves S and A untouched and changes V and O: exactly its lesson.
    twin.root.locator('button[data-lab-action="only_wv"]').click()
    assert {k[0] for k in changed_cells(twin)} == {"V", "O"}


def test_predict_hides_a_and_o_until_reveal(lab_page):
    twin = lab_page()
    twin.root.locator('button[data-lab-action="predict"]').click()
    assert twin.root.get_attribute("data-predict") == "true"
    texts = twin.root.locator("td[data-matrix='A'], td[data-matrix='O']").evaluate_all("els => els.map(e => e.innerText)")
    assert texts and all(t.strip() == "?" for t in texts)
    worked = twin.root.locator("[data-lab-worked]").inner_text()
    assert format_value(python_result(default_params()).O[1, 0]) not in worked  # the output line is hidden too
    twin.control("Wk[0,0]").focus()
    twin.page.keyboard.press("ArrowRight")  # the controls keep working
    params = {**default_params(), "Wk[0,0]": 0.55}
    assert all(t.strip() == "?" for t in twin.root.locator("td[data-matrix='O']").evaluate_all(
        "els => els.map(e => e.innerText)"))
    twin.root.locator('button[data-lab-action="reveal"]').click()
    assert twin.root.get_attribute("data-predict") is None
    assert_cells_equal_python(twin.cells(), params, "revealed")
    r = python_result(params)
    shown = twin.root.locator("td[data-matrix='O'] .al-v").evaluate_all("els => els.map(e => e.textContent)")
    assert shown == [format_value(r.O[i, j]) for i in range(2) for j in range(2)]


def test_view_drawn_from_python_json_shows_the_same_cells_and_text(lab_page):
    """The contract the Jupyter widget uses: mountView + update with a result from Python's JSON
    (masked cells as null), no controls: the same markup, numbers and worked text."""
    params = {**default_params(), "Wv[1,1]": -3.5, "d_k": 3.0}
    r = python_result(params)
    result = {n: [[None if math.isinf(v) else float(v) for v in row] for row in getattr(r, n)] for n in TABLES}
    twin = lab_page()
    shown = twin.page.evaluate("""([params, result]) => {
        const host = document.createElement("div");
        document.body.appendChild(host);
        const config = document.querySelector("[data-attention-lab]").__attentionLab.config;
        const view = AttentionLabRender.mountView(host, { strings: config.strings, ranges: config.ranges, colours: config.colours });
        view.update({ params, result, row: 0, notes: ["一条说明"] });
        const cells = {};
        for (const td of host.querySelectorAll("td[data-matrix]")) {
          cells[td.dataset.matrix] = cells[td.dataset.matrix] || [[null, null], [null, null]];
          cells[td.dataset.matrix][+td.dataset.row][+td.dataset.col] = td.dataset.value;
        }
        return { cells, ready: host.dataset.labReady, lab: host.hasAttribute("data-attention-lab"),
                 worked: [...host.querySelectorAll("[data-lab-worked] > p")].map(p => p.textContent).join("\\n"),
                 notes: host.querySelector("[data-lab-notes]").textContent,
                 controls: host.querySelectorAll("input").length };
    }""", [params, result])
    assert shown["ready"] == "true" and shown["lab"] and shown["controls"] == 0
    assert_cells_equal_python(shown["cells"], params, "view from Python JSON")
    assert shown["cells"]["S"][0][1] == "-Infinity"
    assert shown["worked"] == worked_text(r, 0)
    assert shown["notes"] == "一条说明"


def test_clicking_or_pressing_a_row_header_chooses_that_row(lab_page):
    """The row headers of S, A and O (我, 爱) are buttons: a click, Enter or Space chooses that row
    as the 解释哪一行 radios do (worked text, radio, address); each is in the Tab order with a
    Chinese name, and the chosen row's headers are pressed."""
    params = default_params()
    r = python_result(params)
    twin = lab_page(query(params, row=0), width=1024, height=768)
    page = twin.page
    tokens = STRINGS["tokens"]

    def pressed():
        return twin.root.locator("button[data-lab-row-pick]").evaluate_all(
            "bs => bs.map(b => [b.closest('[data-matrix-table]').dataset.matrixTable, b.dataset.labRowPick,"
            " b.getAttribute('aria-pressed')])")

    def chosen(row):
        assert twin.worked() == worked_text(r, row)
        assert twin.root.locator(f'input[data-lab-row="{row}"]').is_checked()
        assert pressed() == [[m, str(i), "true" if i == row else "false"] for m in "SAO" for i in range(2)]

    picks = twin.root.locator("button[data-lab-row-pick]")
    names = picks.evaluate_all("bs => bs.map(b => [b.textContent, b.getAttribute('aria-label'), b.tabIndex])")
    assert names == [[tokens[i], STRINGS["view"]["row_pick"].format(i=i, tok=tokens[i]), 0]
                     for _ in "SAO" for i in range(2)]
    chosen(0)
    # The mouse: S's second row header (爱).
    twin.root.locator('[data-matrix-table="S"] button[data-lab-row-pick="1"]').click()
    chosen(1)
    assert "row=" not in page.url  # back at the baseline (row 1): the address loses its query
    # The keyboard: Tab reaches a header (after the cell before it), Enter and Space choose.
    twin.root.locator('td[data-matrix="A"][data-row="0"][data-col="0"]').focus()
    page.keyboard.press("Shift+Tab")
    assert page.evaluate("() => document.activeElement.dataset.labRowPick") == "0"
    page.keyboard.press("Enter")
    chosen(0)
    assert "row=0" in page.url
    twin.root.locator('[data-matrix-table="O"] button[data-lab-row-pick="1"]').focus()
    page.keyboard.press("Space")
    chosen(1)
    assert run_axe_colour_contrast(page) == []


def test_tapping_a_cell_on_a_touch_phone_explains_it(lab_page):
    """Phones have no mouse: a tap on a cell shows where its number comes from, as the hint says."""
    twin = lab_page(width=375, height=812, has_touch=True, is_mobile=True)
    explain = twin.root.locator("[data-lab-explain]")
    assert explain.inner_text().startswith("点一下任一格")
    twin.root.locator('td[data-matrix="O"][data-row="1"][data-col="0"]').tap()
    text = explain.inner_text()
    assert text.startswith("O[爱,") and "×" in text, text
    # The cells it comes from are marked: A's row 爱 (the shares) and V's column 0 (the values).
    assert twin.root.locator('td[data-matrix="O"][data-row="1"][data-col="0"][data-active]').count() == 1
    linked = twin.root.locator("td[data-linked]").evaluate_all(
        "els => els.map(td => td.dataset.matrix + td.dataset.row + td.dataset.col).sort()")
    assert linked == ["A10", "A11", "V00", "V10"], linked


@pytest.mark.parametrize("width", [320, 375])
def test_on_a_phone_long_values_never_push_a_table_over_another_or_the_page_sideways(lab_page, width):
    """Values such as −39.513 in O and −10.734 in S (sliders near their ends) on a 320/375 px
    phone: each table stays in its own column, the page does not scroll sideways, and when the
    three tables need more room than the screen, their strip scrolls in its own box."""
    twin = lab_page(width=width, height=812)
    for name, value in (("Wv[0,0]", "-19.5"), ("Wv[0,1]", "-19.5"), ("Wv[1,0]", "-19.5"), ("Wv[1,1]", "-19.5"),
                        ("X[1,1]", "2.9"), ("Wq[0,0]", "-2.95"), ("Wk[0,0]", "2.95")):
        box = twin.root.locator(f'input[data-param-text="{name}"]')
        box.fill(value)
        box.press("Enter")
    twin.page.wait_for_function("() => document.querySelector('td[data-matrix=\"O\"][data-row=\"1\"]')"
                                ".dataset.value.startsWith('-39')")
    geometry = twin.page.evaluate("""() => {
        const sao = document.querySelector('[data-attention-lab] .al-sao');
        const r = (n) => n.getBoundingClientRect();
        return { page: document.documentElement.scrollWidth - innerWidth,
                 tables: [...sao.querySelectorAll('table')].map(t => [r(t).left, r(t).right]),
                 strip: [sao.scrollWidth, sao.clientWidth, getComputedStyle(sao).overflowX] };
    }""")
    assert geometry["page"] <= 0, geometry
    tables = sorted(geometry["tables"])
    assert all(left_next >= right for (_, right), (left_next, _) in zip(tables, tables[1:])), tables
    scroll_width, client_width, overflow = geometry["strip"]
    assert scroll_width <= client_width or overflow in ("auto", "scroll"), geometry


@pytest.mark.parametrize("width, height", [(1024, 768), (375, 812)])
def test_the_explanation_box_shows_its_hint_whole(lab_page, width, height):
    """The box under the buttons holds two whole lines: the hint is never cut off."""
    twin = lab_page(width=width, height=height)
    explain = twin.root.locator("[data-lab-explain]")
    assert explain.evaluate("p => p.scrollHeight <= p.clientHeight"), explain.evaluate(
        "p => [p.scrollHeight, p.clientHeight]")
