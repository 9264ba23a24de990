"""The lesson as a teacher runs it (issue 17), in headless Chromium on the built site.

A projector window with its browser bars (1024x658, 1280x630, 1366x678), a big screen
(1920x990, 1920x1080), a 1920 screen zoomed to 125 % and 150 % (the CSS viewport is the
window divided by the zoom, the pixels multiplied by it): every control and all of S, A, O on
the first screen, the back row's text sizes, what a drag shows it changed, step-through and
predict without scrolling or leaking, the copy-link box, the keyboard, a phone, print.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_twin_browser import LAB_PAGE, Twin, assert_cells_equal_python, boxes, expected_changes, python_result, query  # noqa: E402  (its page readers)

from attention_lab.params import default_params
from attention_lab.plotting import format_value
from attention_lab.web import strings

pytestmark = pytest.mark.browser
STRINGS = strings()
RESULTS = "td[data-matrix='S'], td[data-matrix='A'], td[data-matrix='O']"
CONTROLS = ("input[data-param]", "input[data-param-text]", "input[data-lab-row]", "button")


def open_lab(new_page, site_url, width, height, zoom=1.0, q=""):
    """The lab page in a window of width x height device pixels at a browser zoom."""
    rec = new_page(width=round(width / zoom), height=round(height / zoom), device_scale_factor=zoom)
    return Twin(rec, site_url + LAB_PAGE + (("?" + q) if q else ""))


WINDOWS = [(1024, 658, 1.0), (1280, 630, 1.0), (1366, 678, 1.0), (1920, 990, 1.0), (1920, 1080, 1.0),
           (1920, 990, 1.25), (1920, 990, 1.5), (1024, 768, 1.25)]  # the last: an 819x614 window


@pytest.mark.parametrize("width, height, zoom", WINDOWS, ids=[f"{w}x{h}@{int(z * 100)}%" for w, h, z in WINDOWS])
def test_projector_window_shows_every_control_and_s_a_o_on_one_screen(new_page, site_url, width, height, zoom):
    twin = open_lab(new_page, site_url, width, height, zoom)
    vw, vh = twin.page.evaluate("() => [innerWidth, innerHeight]")
    assert twin.root.get_attribute("data-layout") == "wide"
    assert twin.page.evaluate("() => window.scrollY") == 0
    assert twin.page.evaluate("() => document.documentElement.scrollWidth") <= vw
    for selector in CONTROLS + (RESULTS,):
        for left, top, right, bottom in boxes(twin, selector):
            assert left >= 0 and top >= 0 and right <= vw and bottom <= vh, f"{selector} at {(left, top, right, bottom)}"
    widths = twin.root.locator("input[type='range']").evaluate_all("els => els.map(e => e.getBoundingClientRect().width)")
    assert min(widths) >= 120, widths


TEXT_SIZES = """root => {
  const sao = root.querySelector('.al-sao'), size = e => parseFloat(getComputedStyle(e).fontSize);
  const texts = [...sao.querySelectorAll('caption, th, button, .al-legend-end, .al-d, .al-m')];
  return {text: Object.fromEntries(texts.map((e, k) => [e.className + ' ' + k + ' ' + e.textContent, size(e)])),
          values: [...sao.querySelectorAll('.al-v')].map(size)};
}"""


@pytest.mark.parametrize("width, height", [(1024, 658), (1280, 630)])
def test_back_row_reads_every_text_of_the_results_column_on_the_projector(new_page, site_url, width, height):
    """Titles, headers, row buttons, legends and the change/masked marks >= 18 px, values >= 28 px."""
    twin = open_lab(new_page, site_url, width, height)
    sizes = twin.root.evaluate(TEXT_SIZES)
    small = {k: v for k, v in sizes["text"].items() if v < 18}
    assert not small, small
    assert min(sizes["values"]) >= 28, sizes["values"]


CONTROL_TEXT_SIZES = """r => [...r.querySelectorAll('.al-main :is(.al-controls, .al-toolbar, .al-info) *')]
    .filter(e => e.getClientRects().length && !e.closest('.al-plane') && (e.matches('input[type=text]')
      || [...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())))
    .map(e => [e.className + ' ' + (e.value || e.textContent).trim().slice(0, 10), parseFloat(getComputedStyle(e).fontSize)])"""


def test_a_1024x768_projector_shows_every_control_text_at_16px_and_values_at_28px_on_one_screen(new_page, site_url):
    """Issue 29: slider labels, number boxes, d_k's marks, legends, the mask and the row, the buttons,
    the keys' hint and the explanation >= 16 px, S/A/O's values >= 28 px, all on the first screen."""
    twin = open_lab(new_page, site_url, 1024, 768)
    sizes = twin.root.evaluate(CONTROL_TEXT_SIZES)
    assert len(sizes) > 50 and not [s for s in sizes if s[1] < 16], [s for s in sizes if s[1] < 16]
    assert min(twin.root.evaluate(TEXT_SIZES)["values"]) >= 28
    for selector in CONTROLS + (RESULTS, ".al-dk-marks span", ".al-explain", "[data-lab-keys-hint]", ".al-plane-svg"):
        for left, top, right, bottom in boxes(twin, selector):
            assert left >= 0 and top >= 0 and right <= 1024 and bottom <= 768, f"{selector} at {(left, top, right, bottom)}"


def test_a_projector_at_125_percent_with_its_bars_shows_os_second_row_and_step_above_the_fold(new_page, site_url):
    """1024x658 at 125 % is an 819x526 window: O's second row and 逐步 (and every slider, the
    buttons over 逐步) on the first screen; values >= 28 px on the screen at that zoom."""
    twin = open_lab(new_page, site_url, 1024, 658, 1.25)
    vw, vh = twin.page.evaluate("() => [innerWidth, innerHeight]")
    assert (vw, vh) == (819, 526) and twin.root.get_attribute("data-layout") == "wide"
    for selector in ("td[data-matrix='O'][data-row='1']", "button[data-lab-action='step']", "input[data-param]",
                     "input[data-param-text]", "button[data-lab-action='reset']", "button[data-lab-action='copy_link']"):
        for left, top, right, bottom in boxes(twin, selector):
            assert left >= 0 and top >= 0 and right <= vw and bottom <= vh, f"{selector} at {(left, top, right, bottom)}"
    assert min(twin.root.evaluate(TEXT_SIZES)["values"]) * 1.25 >= 28
    assert twin.page.evaluate("() => document.documentElement.scrollWidth") <= vw


def test_the_stage_lines_write_four_decimals_where_the_worked_text_writes_ten(new_page, site_url):
    """Issue 29: "0.6697615493×10" on a projector is read as "0.6698×10"; an "=" beside rounded
    numbers becomes "≈"; the worked text under the lab keeps its ten decimals (Python's)."""
    import re

    twin = open_lab(new_page, site_url, 1024, 768)
    step = twin.root.locator("button[data-lab-action='step']")
    seen = []
    for stage in range(1, 6):
        step.click()
        text = twin.root.locator("[data-lab-stage-lines]").inner_text()
        seen.append(text)
        assert not re.search(r"\d\.\d{5,}", text), (stage, text)
    assert "[0.7071, 0] + [0, 0] ≈ [0.7071, 0]" in seen[2]
    assert "除以总和：[0.6698, 0.3302]" in seen[3]
    assert "0.6698×10 + 0.3302×0 ≈ 6.6976" in seen[4]
    assert "0.6697615493×10" in twin.worked()


def test_a_big_screen_grows_the_tables_and_their_text(new_page, site_url):
    small = open_lab(new_page, site_url, 1024, 658).root.evaluate(TEXT_SIZES)
    big_twin = open_lab(new_page, site_url, 1920, 1080)
    big = big_twin.root.evaluate(TEXT_SIZES)
    assert min(big["values"]) >= 44, big["values"]
    assert min(big["text"].values()) > min(small["text"].values()) * 1.4
    # ... and the page uses the width: the lab spans the window, not the theme's 60em column.
    left, _, right, _ = boxes(big_twin, ":scope")[0]
    assert right - left >= 1920 * 0.95


def thumb_x(box, value, lo, hi):
    """Where Chromium's 16 px range thumb sits for a value (its centre travels box.x + 8 .. right - 8)."""
    return box["x"] + 8 + (box["width"] - 16) * (value - lo) / (hi - lo)


MARKS = """r => Object.fromEntries([...r.querySelectorAll("td[data-changed]")].map(
  td => [td.dataset.matrix + td.dataset.row + td.dataset.col, td.querySelector(".al-d").textContent]))"""


def test_a_projector_zoomed_to_150_percent_keeps_s_a_o_on_screen_at_back_row_sizes(new_page, site_url):
    """1024x768 at 150 % (a 683x512 window) is too short for the side-by-side layout: S, A and O stack
    on top, whole on the first screen, values >= 28 px and every other text >= 18 px on the screen,
    nothing wider than the window; a control scrolled into view leaves them where they are."""
    twin = open_lab(new_page, site_url, 1024, 768, 1.5)
    zoom = 1.5
    assert twin.root.get_attribute("data-layout") == "narrow"
    sizes = twin.root.evaluate(TEXT_SIZES)
    small = {k: v * zoom for k, v in sizes["text"].items() if v * zoom < 18}
    assert not small, small
    assert min(sizes["values"]) * zoom >= 28, sizes["values"]
    vw, vh = twin.page.evaluate("() => [innerWidth, innerHeight]")
    assert twin.page.evaluate("() => document.documentElement.scrollWidth") <= vw
    for left, top, right, bottom in boxes(twin, RESULTS):
        assert left >= 0 and top >= 0 and right <= vw and bottom <= vh
    twin.control("Wv[1,1]").evaluate("e => e.scrollIntoView({block: 'end'})")
    for left, top, right, bottom in boxes(twin, RESULTS):
        assert top >= 0 and bottom <= vh, "S/A/O scrolled away with the controls"


@pytest.mark.parametrize("width, height", [(1920, 1080), (1920, 990)])
def test_a_big_screen_grows_the_controls_text_for_the_back_row_too(new_page, site_url, width, height):
    """At 1920 wide the slider labels, number boxes, buttons and the explanation are >= 18 px on
    screen (font size times the column's zoom), and a drag still lands where the mouse lets go."""
    twin = open_lab(new_page, site_url, width, height)
    sizes = twin.root.evaluate("""r => [...r.querySelectorAll('.al-main :is(.al-label, .al-number, .al-button, .al-explain, legend)')]
        .filter(e => e.getClientRects().length)
        .map(e => [e.className + ' ' + e.textContent.trim().slice(0, 8), parseFloat(getComputedStyle(e).fontSize) * e.currentCSSZoom])""")
    assert len(sizes) > 40 and min(v for _, v in sizes) >= 18, [s for s in sizes if s[1] < 18]
    slider = twin.control("Wv[0,0]").bounding_box()
    page = twin.page
    page.mouse.move(slider["x"] + 2, slider["y"] + slider["height"] / 2)
    page.mouse.down()
    page.mouse.move(slider["x"] + slider["width"] + 30, slider["y"] + slider["height"] / 2, steps=8)
    page.mouse.up()
    params = {**default_params(), "Wv[0,0]": float(twin.control("Wv[0,0]").get_attribute("max"))}
    assert twin.params() == params
    assert_cells_equal_python(twin.cells(), params, "a drag to the end of a zoomed slider")


def test_a_mouse_drag_marks_the_change_since_the_drag_began_once_let_go(new_page, site_url):
    twin = open_lab(new_page, site_url, 1024, 658)
    page, box = twin.page, twin.control("Wv[0,0]").bounding_box()
    y = box["y"] + box["height"] / 2
    page.mouse.move(thumb_x(box, 5, -20, 20), y)
    page.mouse.down()
    for k in range(1, 21):
        page.mouse.move(thumb_x(box, 5 + 5 * k / 20, -20, 20), y)
        if k == 10:
            assert twin.root.evaluate(MARKS) == {}, "no marks flicker while the pointer is still down"
    page.mouse.up()
    assert twin.params()["Wv[0,0]"] == 10
    marks = twin.root.evaluate(MARKS)
    assert marks == expected_changes(default_params(), {**default_params(), "Wv[0,0]": 10.0})
    assert marks["V00"] == "▲5" and marks["O00"] == "▲5"  # the whole drag (5 -> 10), not its last step
    # Choosing another row changes no value: the marks stay.
    twin.root.locator('button[data-lab-row-pick="0"]').first.click()
    assert twin.root.evaluate(MARKS) == marks


def test_predict_after_a_change_shows_nothing_about_a_and_o(new_page, site_url):
    twin = open_lab(new_page, site_url, 1024, 658)
    twin.root.locator('button[data-lab-action="predict"]').click()
    twin.control("Wq[1,0]").focus()
    twin.page.keyboard.press("ArrowRight")  # 爱's shares move
    marks = twin.root.evaluate(MARKS)
    assert marks and not [k for k in marks if k[0] in "AO"], marks
    shown = twin.root.locator("td[data-matrix='A'], td[data-matrix='O']").evaluate_all(
        "els => els.map(e => [e.className, e.innerText.trim(), e.hasAttribute('data-changed')])")
    assert all(cls == shown[0][0] and text == "?" and not changed for cls, text, changed in shown), shown
    twin.root.locator('button[data-lab-action="reveal"]').click()
    assert {k[0] for k in twin.root.evaluate(MARKS)} >= {"A", "O"}


def four_decimals(line: str) -> str:
    """A worked line as the stage lines write it (render.js shortNumbers), for the lines of the baseline:
    decimals past the fourth rounded away, "=" after a rounded number written "≈"."""
    import re

    cut = False

    def one(m):
        nonlocal cut
        if m.group(1) is None:
            return m.group(3) + ("≈" if cut else "=") + m.group(4)
        if len(m.group(2)) <= 4:
            return m.group(0)
        cut = True
        return f"{float(m.group(0)):.4f}".rstrip("0").rstrip(".")

    return re.sub(r"(\d+)\.(\d+)|(\s)=(\s)", one, line)


def test_step_through_shows_each_stages_numbers_in_the_tables_beside_its_buttons_with_back_and_esc(new_page, site_url):
    twin = open_lab(new_page, site_url, 1024, 658)
    root, r = twin.root, python_result(default_params())
    step, back = root.locator('button[data-lab-action="step"]'), root.locator('button[data-lab-action="back"]')
    assert back.is_disabled()
    s_row = lambda: root.locator('td[data-matrix="S"][data-row="1"] .al-v').all_text_contents()  # noqa: E731
    for stage, want in ((1, r.raw_scores[1]), (2, r.raw_scores[1] / 2 ** 0.5), (3, r.S[1])):
        step.click()
        assert s_row() == [format_value(float(x)) for x in want], stage
        lines = root.locator("[data-lab-stage-lines]")
        key = {1: "raw_scores", 2: "scaled", 3: "add_mask"}[stage]
        current = root.locator(f'[data-lab-worked] > p[data-line="{key}"]').text_content()
        assert four_decimals(current) in lines.inner_text().split("\n")  # beside the buttons, 4 decimals
        # The buttons and the stage's lines are on screen with the tables, without scrolling.
        for left, top, right, bottom in boxes(twin, "[data-lab-stage-lines], button[data-lab-action='step'], " + RESULTS):
            assert top >= 0 and bottom <= 658, (stage, top, bottom)
    back.click()
    assert root.get_attribute("data-step") == "2" and s_row() == [format_value(float(x)) for x in r.raw_scores[1] / 2 ** 0.5]
    twin.page.keyboard.press("Escape")
    assert root.get_attribute("data-step") == "0" and s_row() == [format_value(float(x)) for x in r.S[1]]
    assert root.locator("[data-lab-stage-lines]").inner_text() == "" and back.is_disabled()


def test_notes_never_clip_and_never_move_the_tables(new_page, site_url):
    twin = open_lab(new_page, site_url, 1024, 658)
    before = boxes(twin, "td[data-matrix]")
    twin.control("d_k").focus()
    twin.page.keyboard.press("ArrowLeft")  # d_k = 1: two notes
    twin.root.locator('input[data-param="causal"]').click()  # the mask off: a third
    notes = twin.root.locator("[data-lab-notes] p")
    assert notes.count() == 3
    clipped = twin.root.locator("[data-lab-notes]").evaluate(
        "n => n.scrollHeight > n.clientHeight + 1 || [...n.children].some(p => p.scrollWidth > p.clientWidth + 1)")
    assert not clipped
    after = boxes(twin, "td[data-matrix]")
    assert all(abs(a - b) <= 1 for x, y in zip(after, before) for a, b in zip(x, y)), (before, after)


def test_a_legal_value_at_a_range_end_gets_no_note(new_page, site_url):
    """The chapter's experiment 3: Wq = [[3, 3], [−3, 3]], all legal values."""
    params = {**default_params(), "Wq[0,0]": 3.0, "Wq[0,1]": 3.0, "Wq[1,0]": -3.0, "Wq[1,1]": 3.0}
    twin = open_lab(new_page, site_url, 1024, 658, q=query(params))
    assert twin.notes() == ""
    assert twin.params()["Wq[1,0]"] == -3


def test_copy_link_then_a_change_takes_the_old_link_away_and_nothing_moves(new_page, site_url):
    twin = open_lab(new_page, site_url, 1024, 658)
    before = boxes(twin, "button:not(.al-link-close), td[data-matrix], input[data-param]")
    twin.root.locator('button[data-lab-action="copy_link"]').click()
    box = twin.root.locator(".al-linkbox")
    assert box.is_visible() and "Wq=" in twin.root.locator("[data-lab-link]").input_value()
    assert boxes(twin, "button:not(.al-link-close), td[data-matrix], input[data-param]") == before  # lies over, moves nothing
    twin.control("Wv[1,1]").focus()
    twin.page.keyboard.press("ArrowRight")
    assert not box.is_visible()  # its link was of the state before


@pytest.mark.parametrize("width, height, zoom", [(1024, 658, 1.0), (1024, 768, 1.25), (1920, 1080, 1.0), (360, 640, 1.0)])
def test_the_copied_link_never_hides_the_class_buttons_and_goes_with_esc_x_or_a_press_elsewhere(
        new_page, site_url, width, height, zoom):
    twin = open_lab(new_page, site_url, width, height, zoom)
    page, copy = twin.page, twin.root.locator('button[data-lab-action="copy_link"]')
    box = twin.root.locator(".al-linkbox")
    copy.scroll_into_view_if_needed()
    copy.click()
    assert box.is_visible()
    for action in ("step", "back", "predict", "reveal", "copy_link", "reset"):
        under = twin.root.locator(f'button[data-lab-action="{action}"]').evaluate("""b => { const r = b.getBoundingClientRect();
            const at = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2); return !!at && b.contains(at); }""")
        assert under, f"the link box hides {action}"
    page.keyboard.press("Escape")  # the focus is in the box (its field, selected) or on the button
    assert not box.is_visible()
    copy.click()
    box.locator(".al-link-close").click()
    assert not box.is_visible()
    copy.click()
    twin.root.locator('button[data-lab-action="step"]').click()  # a press elsewhere: the box goes, 逐步 works
    assert not box.is_visible() and twin.root.get_attribute("data-step") == "1"


def test_no_slider_track_moves_while_dragging_to_the_extreme_values(new_page, site_url):
    """The widest values the ranges allow (O −119.999.., S −647.999..) widen no column."""
    twin = open_lab(new_page, site_url, 1024, 658)
    tracks = "input[type='range']"
    before = boxes(twin, tracks)
    page = twin.page
    for name, lo, hi, to in (("Wv[0,0]", -20, 20, -20), ("Wv[1,0]", -20, 20, 20), ("X[0,0]", -3, 3, 3), ("Wq[0,0]", -3, 3, 3),
                             ("Wk[0,0]", -3, 3, -3)):
        box = twin.control(name).bounding_box()
        y = box["y"] + box["height"] / 2
        page.mouse.move(thumb_x(box, float(twin.params()[name]), lo, hi), y)
        page.mouse.down()
        for k in range(1, 11):
            page.mouse.move(thumb_x(box, float(twin.params()[name]) + (to - float(twin.params()[name])) * k / 10, lo, hi), y)
            assert boxes(twin, tracks) == before, (name, k)
        page.mouse.up()
    widest = max(len(t) for t in twin.root.locator("td[data-matrix] .al-v").all_text_contents())
    assert widest >= 7 and boxes(twin, tracks) == before


def test_tab_reaches_the_skip_link_first_then_the_controls_and_the_results_after_them(new_page, site_url):
    twin = open_lab(new_page, site_url, 1024, 658)
    page = twin.page
    before = boxes(twin, "input[data-param], td[data-matrix]")
    order = []
    page.locator("body").focus()
    for _ in range(80):
        page.keyboard.press("Tab")
        order.append(page.evaluate("""() => { const a = document.activeElement;
          return !a.closest('[data-attention-lab]') ? (a.closest('.bd-article') ? 'text' : 'page')
            : a.classList.contains('al-skip') ? 'skip'
            : a.closest('.al-results') ? 'results' : a.closest('.al-controls') ? 'controls' : 'other'; }"""))
        if order[-1] == "skip":
            assert boxes(twin, "input[data-param], td[data-matrix]") == before  # focused, it moves nothing
    start = order.index("skip")
    assert "text" not in order[:start], order[:start + 1]  # the page's text (shown under the lab) comes after it
    ends = [k for k in range(start, len(order)) if order[k] in ("page", "text")]
    lab = order[start:ends[0]] if ends else order[start:]  # one pass
    assert lab[0] == "skip" and lab[1] == "controls", lab[:3]
    assert "results" in lab and lab.index("results") > max(i for i, k in enumerate(lab) if k == "controls")


def test_each_parameter_table_is_one_tab_stop_whose_boxes_take_the_arrow_keys(new_page, site_url):
    """Four tables and d_k, five stops (a table's number box; the slider is for the mouse; issue 29):
    then the mask, the row, the buttons. ↑/↓ step the box as the slider would (d_k: to the next power
    of two), PgUp/PgDn ten steps."""
    twin = open_lab(new_page, site_url, 1024, 658)
    page = twin.page
    twin.root.locator("a.al-skip").focus()
    stops = []
    for _ in range(40):
        page.keyboard.press("Tab")
        stop = page.evaluate("""() => { const a = document.activeElement;
          return !a.closest('.al-controls') ? null : a.dataset.paramText ? 'box:' + a.dataset.paramText
            : a.type === 'range' ? 'slider:' + a.dataset.param : a.tagName + ':' + (a.name || a.textContent.trim()); }""")
        if stop is None:
            break
        stops.append(stop)
    names = ["X[0,0]", "Wq[0,0]", "Wk[0,0]", "Wv[0,0]", "d_k"]
    assert [s for s in stops if s.startswith(("box:", "slider:"))] == ["box:" + n for n in names], stops
    assert len(stops) <= len(names) + 7, stops  # mask, one row group, the four buttons
    box = twin.root.locator('input[data-param-text="d_k"]')
    box.focus()
    page.keyboard.press("ArrowUp")
    assert twin.params()["d_k"] == 4  # 2 -> the next stop of the slider
    box.fill("3")
    box.press("Enter")
    page.keyboard.press("ArrowDown")
    assert twin.params()["d_k"] == 2
    page.keyboard.press("PageUp")
    assert twin.params()["d_k"] == 8  # two stops
    wv = twin.root.locator('input[data-param-text="Wv[0,0]"]')
    wv.focus()
    page.keyboard.press("PageUp")
    step = twin.root.locator('input[data-param="Wv[0,0]"]').get_attribute("step")
    expected = {**default_params(), "d_k": 8, "Wv[0,0]": round(default_params()["Wv[0,0]"] + 10 * float(step), 10)}
    assert twin.params()["Wv[0,0]"] == pytest.approx(expected["Wv[0,0]"])
    assert float(wv.get_attribute("aria-valuenow")) == pytest.approx(expected["Wv[0,0]"])  # spoken as it shows
    assert_cells_equal_python(twin.cells(), expected, "PgUp on Wv[0,0] with d_k = 8")


@pytest.mark.parametrize("width, height", [(375, 812), (360, 640)])
def test_phone_notes_take_one_line_each_open_whole_and_never_push_the_page_sideways(new_page, site_url, width, height):
    twin = Twin(new_page(width=width, height=height, has_touch=True, is_mobile=True),
                site_url + LAB_PAGE + "?" + query({**default_params(), "d_k": 1.0, "causal": False}))
    page = twin.page
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    notes = twin.root.locator("[data-lab-notes] p")
    assert notes.count() == 3
    heights = notes.evaluate_all("ps => ps.map(p => p.getBoundingClientRect().height)")
    more = twin.root.locator(".al-notes-more")
    more.click()
    opened = notes.evaluate_all("ps => ps.map(p => p.getBoundingClientRect().height)")
    assert max(heights) < 1.6 * min(heights) and sum(opened) > sum(heights) * 1.5, (heights, opened)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width


def test_a_touch_drag_on_d_k_keeps_the_page_still_and_shows_its_notes_once_let_go(new_page, site_url):
    """A finger drags d_k from 2 to 1 on a 360 px phone: while it moves, the page does not scroll and no
    note grows the sticky results; let go, the notes appear and the slider stays under the finger."""
    twin = Twin(new_page(width=360, height=640, has_touch=True, is_mobile=True), site_url + LAB_PAGE)
    page, slider = twin.page, twin.control("d_k")
    slider.evaluate("e => e.scrollIntoView({block: 'center'})")
    page.wait_for_timeout(200)
    box, before = slider.bounding_box(), page.evaluate("() => scrollY")
    touch = page.context.new_cdp_session(page)
    x, y = box["x"] + box["width"] / 6, box["y"] + box["height"] / 2  # the thumb: stop 1 of 0..6 (d_k = 2)
    touch.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    for k in range(1, 11):
        touch.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x - (x - box["x"] + 2) * k / 10, "y": y}]})
        page.wait_for_timeout(20)
    mid = {"scroll": page.evaluate("() => scrollY"), "notes": twin.notes()}
    touch.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    page.wait_for_timeout(200)
    assert mid == {"scroll": before, "notes": ""}, mid
    assert twin.params()["d_k"] == 1
    assert_cells_equal_python(twin.cells(), {**default_params(), "d_k": 1.0}, "touch drag d_k 2 -> 1")
    assert STRINGS["lab"]["d_k_one"] in twin.notes()
    assert abs(slider.bounding_box()["y"] - box["y"]) <= 2  # still under the finger


@pytest.mark.parametrize("width, height", [(360, 640), (375, 812)])
def test_phone_change_marks_and_usual_values_keep_s_a_o_inside_the_screen(new_page, site_url, width, height):
    """After the changes of a lesson (Wq[1,0] = −2.75, Wv[0,0] = −20, X[1,1] = −3) the S/A/O strip needs
    no sideways swipe: a mark is its arrow (the amount stays in the text), A's and O's rows are named
    by S's row buttons beside them; the cells still equal the core."""
    twin = Twin(new_page(width=width, height=height, has_touch=True, is_mobile=True), site_url + LAB_PAGE)
    params = default_params()
    for name, value in (("Wq[1,0]", -2.75), ("Wv[0,0]", -20.0), ("X[1,1]", -3.0)):
        box = twin.root.locator(f'input[data-param-text="{name}"]')
        box.fill(str(value))
        box.press("Enter")
        params[name] = value
        strip = twin.root.locator(".al-sao").evaluate("e => [e.scrollWidth, e.clientWidth]")
        assert strip[0] <= strip[1], (name, strip)
    assert_cells_equal_python(twin.cells(), params, "three changes on a phone")
    marks = twin.root.locator("td[data-changed] .al-d").evaluate_all(
        "ds => ds.map(d => [d.textContent, d.getBoundingClientRect().width <= d.parentElement.getBoundingClientRect().width])")
    assert marks and all(text[:1] in "▲▼" and fits for text, fits in marks), marks
    rows = twin.root.locator('[data-matrix-table="O"] th.al-row').all_text_contents()
    assert rows == list(STRINGS["tokens"]), rows  # still there for screen readers


PHONE_PROBE = """root => {
  const small = [], taps = [], over = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const e = walker.currentNode.parentElement, r = e.getBoundingClientRect(), cs = getComputedStyle(e);
    if (!walker.currentNode.textContent.trim() || !r.width || cs.clipPath !== 'none' && cs.clipPath.includes('inset(50%')) continue;
    if (parseFloat(cs.fontSize) < 14) small.push(e.className + ' ' + cs.fontSize + ' ' + e.textContent.trim().slice(0, 12));
  }
  for (const e of root.querySelectorAll('button, input:not([type=range]), .al-check, .al-radio')) {
    const r = e.getBoundingClientRect();
    if (r.width && (r.width < 24 || r.height < 24)) taps.push(e.className + e.type + ' ' + r.width.toFixed(0) + 'x' + r.height.toFixed(0));
  }
  for (const td of root.querySelectorAll('td.al-cell')) {
    for (const part of td.querySelectorAll('.al-v, .al-d')) {
      const a = part.getBoundingClientRect(), b = td.getBoundingClientRect();
      if (part.textContent && (a.left < b.left - 0.5 || a.right > b.right + 0.5 || part.scrollWidth > part.clientWidth + 1))
        over.push(td.dataset.matrix + ' ' + part.textContent);
    }
  }
  return {small, taps, over, page: document.documentElement.scrollWidth};
}"""


@pytest.mark.parametrize("width, height", [(375, 812), (360, 640)])
def test_phone_lab_text_is_14px_taps_are_24px_and_no_value_leaves_its_cell(new_page, site_url, width, height):
    long = {**default_params(), "X[0,0]": -3.0, "X[1,1]": 3.0, "Wq[0,0]": -3.0, "Wk[0,0]": 3.0,
            "Wv[0,0]": -10.0, "Wv[1,1]": 10.0, "causal": False}
    for params in (default_params(), long):
        twin = Twin(new_page(width=width, height=height, has_touch=True, is_mobile=True),
                    site_url + LAB_PAGE + "?" + query(params))
        if params is long:  # a change mark on every cell of Q, S, A, O
            twin.root.locator("input[data-param-text='Wq[0,0]']").fill("-2.5")
            twin.root.locator("input[data-param-text='Wq[0,0]']").press("Enter")
        seen = twin.root.evaluate(PHONE_PROBE)
        assert twin.root.get_attribute("data-layout") == "phone"
        assert seen["small"] == [] and seen["taps"] == [] and seen["over"] == [], seen
        assert seen["page"] <= width


def test_touch_hint_names_neither_the_mouse_nor_the_tab_key(new_page, site_url):
    touch = Twin(new_page(width=375, height=812, has_touch=True, is_mobile=True), site_url + LAB_PAGE)
    hint = touch.root.locator("[data-lab-explain]").inner_text()
    assert hint == STRINGS["view"]["explain_hint_touch"] and "鼠标" not in hint and "Tab" not in hint
    desk = Twin(new_page(width=1024, height=658), site_url + LAB_PAGE)
    assert desk.root.locator("[data-lab-explain]").inner_text() == STRINGS["view"]["explain_hint"]


@pytest.mark.parametrize("paper", ["A4", "Letter"])
def test_printed_lab_lists_the_parameters_of_the_state_it_shows_and_what_differs(new_page, site_url, paper):
    import io
    import re
    import unicodedata

    from pypdf import PdfReader

    params = {**default_params(), "Wv[0,0]": 10.0, "d_k": 8.0, "causal": False}
    twin = open_lab(new_page, site_url, 1280, 900, q=query(params))
    first = PdfReader(io.BytesIO(twin.page.pdf(format=paper, print_background=True))).pages[0].extract_text()
    text = re.sub(r"\s+", "", unicodedata.normalize("NFKC", first))
    for shown in ("X=[[1,1],[1,−1]]", "Wq=[[0.5,0.5],[−0.5,0.5]]", "Wk=[[0.5,0.5],[0.5,−0.5]]",
                  "Wv=[[10,10],[5,−10]]", "d_k=8", "因果掩码：关", "Wv[0,0]=10（基准5）", "d_k=8（基准2）",
                  "因果掩码=关（基准开）", "分数表", "输出表"):
        assert unicodedata.normalize("NFKC", shown) in text, f"page 1 on {paper} lacks {shown!r}: {text[:300]}"
    assert twin.root.locator("[data-lab-print-params]").is_hidden()  # on screen the controls say it
    twin.page.emulate_media(media="print")
    assert twin.root.locator("[data-lab-print-params]").is_visible()


def test_a_reload_of_the_projector_page_shows_the_lab_from_its_top(new_page, site_url):
    """Issue 29: the browser's scroll restoration put a reloaded lab.html 270-390 px down."""
    twin = open_lab(new_page, site_url, 1024, 658)
    twin.page.mouse.wheel(0, 400)
    twin.page.wait_for_function("() => scrollY > 200")
    twin.page.reload()
    twin.page.wait_for_selector("[data-attention-lab][data-lab-ready='true']")
    twin.page.wait_for_timeout(200)
    assert twin.page.evaluate("() => scrollY") == 0
