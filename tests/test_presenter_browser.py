"""A presenter's page (issue 29), in headless Chromium on the built site.

A clicker sends PageDown/PageUp (some send →/←): on the projector page they step the step-through
forward and back whenever the focus is not in a control that owns those keys (a number box, a
slider, the row's radio buttons, a table's cells, a plane point); in the chapter only once the lab
has been pressed or has the focus (elsewhere the chapter scrolls as usual).  A hint beside 逐步
says so.  Keys are pressed one after another without waiting for the page in between.  The
keyboard: one Tab stop per parameter table (roving tabindex, ←/→ inside it), so 逐步 is at most 12
Tab presses from the first control, and what is typed is still taken.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_lesson_browser import open_lab  # noqa: E402  (the lab page in a projector window)
from test_twin_browser import CHAPTER, Twin, assert_cells_equal_python  # noqa: E402

from attention_lab.params import RANGES, default_params
from attention_lab.web import strings

pytestmark = pytest.mark.browser
STRINGS = strings()
STEP = "() => document.querySelector('[data-attention-lab]').dataset.step"
ACTIVE = """() => { const a = document.activeElement;
  return a.dataset.paramText || a.dataset.labAction || a.dataset.param || (a.dataset.matrix ? 'cell:' + a.dataset.matrix : a.tagName); }"""


def test_a_clickers_keys_step_forward_and_back_on_the_projector_page(new_page, site_url):
    twin = open_lab(new_page, site_url, 1024, 768)
    page, root = twin.page, twin.root
    hint = root.locator("[data-lab-keys-hint]")
    assert hint.is_visible() and hint.inner_text() == STRINGS["twin"]["keys_hint_page"]
    box = hint.bounding_box()
    assert box["y"] + box["height"] <= 768 and hint.evaluate("e => e.scrollWidth <= e.clientWidth + 1")  # whole
    page.locator("body").click(position={"x": 5, "y": 760})  # nothing focused
    for key in ("PageDown", "PageDown", "PageDown"):
        page.keyboard.press(key)
    assert page.evaluate(STEP) == "3"
    assert root.locator(".al-stage").inner_text().startswith("第 3 步") and not hint.is_visible()
    for key in ("ArrowRight", "ArrowRight", "PageUp", "ArrowLeft", "ArrowLeft", "ArrowLeft", "ArrowLeft", "PageUp"):
        page.keyboard.press(key)
    assert page.evaluate(STEP) == "0" and hint.is_visible()
    assert page.evaluate("() => scrollY") == 0  # the keys stepped; the page did not scroll
    # The clicker after a click on 逐步 (the focus on a button): still the step-through.
    root.locator("button[data-lab-action='step']").click()
    page.keyboard.press("PageDown")
    page.keyboard.press("ArrowRight")
    assert page.evaluate(STEP) == "3"
    page.keyboard.press("PageUp")
    assert page.evaluate(STEP) == "2"
    # A control's own keys stay its own: PgDn in a box steps its value ten steps, → in S moves to the next cell.
    root.locator("input[data-param-text='Wv[0,0]']").focus()
    page.keyboard.press("PageDown")
    page.keyboard.press("ArrowRight")  # the whole text selected: on to Wv[0,1]'s box
    params = {**default_params(), "Wv[0,0]": default_params()["Wv[0,0]"] - 10 * RANGES["Wv"].step}
    assert page.evaluate(STEP) == "2" and twin.params() == params and page.evaluate(ACTIVE) == "Wv[0,1]"
    root.locator("td[data-matrix='S'][data-row='0'][data-col='0']").focus()
    page.keyboard.press("ArrowRight")
    assert page.evaluate(STEP) == "2" and page.evaluate(ACTIVE) == "cell:S"
    assert_cells_equal_python(twin.cells(), params, "after the clicker and the controls' own keys")
    assert twin.rec.page_errors == []


def test_the_chapter_steps_with_a_clicker_only_once_its_lab_is_pressed(new_page, site_url):
    twin = Twin(new_page(width=1280, height=800), site_url + CHAPTER)
    page, root = twin.page, twin.root
    hint = root.locator("[data-lab-keys-hint]")
    assert hint.inner_text() == STRINGS["twin"]["keys_hint_embedded"]
    page.keyboard.press("PageDown")  # the chapter is read: it scrolls
    page.wait_for_function("() => scrollY > 100")
    assert page.evaluate(STEP) == "0"
    root.locator("[data-lab-explain]").click()  # the lab pressed (on no control)
    y = page.evaluate("() => scrollY")
    page.keyboard.press("PageDown")
    page.keyboard.press("PageDown")
    page.keyboard.press("ArrowLeft")
    assert page.evaluate(STEP) == "1"
    assert hint.is_hidden()
    page.wait_for_timeout(150)
    # Not scrolled by the keys (two PageDowns would move ~1,400 px); a few pixels' scroll anchoring
    # while something above settles is not a PageDown.
    assert abs(page.evaluate("() => scrollY") - y) < 100
    page.locator("article p").first.click()  # back to the text: the keys are the page's again
    y = page.evaluate("() => scrollY")
    page.keyboard.press("PageDown")
    page.wait_for_function(f"() => scrollY > {y} + 100")
    assert page.evaluate(STEP) == "1"
    assert twin.rec.page_errors == []


def test_step_is_at_most_12_tab_presses_from_the_first_control_one_stop_per_table(new_page, site_url):
    twin = open_lab(new_page, site_url, 1024, 768)
    page, root = twin.page, twin.root
    root.locator("input[data-param-text='X[0,0]']").focus()
    stops = []
    for _ in range(12):
        page.keyboard.press("Tab")
        stops.append(page.evaluate(ACTIVE))
        if stops[-1] == "step":
            break
    assert stops[-1] == "step", stops
    assert stops[:4] == ["Wq[0,0]", "Wk[0,0]", "Wv[0,0]", "d_k"], stops
    # Inside a table: →/← from box to box (from a whole selection, or from the caret at that end).
    page.keyboard.press("Shift+Tab")
    root.locator("input[data-param-text='Wk[0,0]']").focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert page.evaluate(ACTIVE) == "Wk[1,0]"
    page.keyboard.type("1.5")  # the whole text selected: typed over
    page.keyboard.press("ArrowLeft")  # the caret after "1.5": ← edits
    assert page.evaluate(ACTIVE) == "Wk[1,0]"
    page.keyboard.press("End")
    page.keyboard.press("ArrowRight")  # the caret at the end: on to Wk[1,1], taking 1.5
    assert page.evaluate(ACTIVE) == "Wk[1,1]"
    page.keyboard.press("ArrowUp")  # ↑ still steps the value
    params = {**default_params(), "Wk[1,0]": 1.5, "Wk[1,1]": round(default_params()["Wk[1,1]"] + RANGES["Wk"].step, 10)}
    assert twin.params() == params
    # The table's Tab stop is now the box last used: Tab leaves for Wv, Shift+Tab comes back to it.
    page.keyboard.press("Tab")
    assert page.evaluate(ACTIVE) == "Wv[0,0]"
    page.keyboard.press("Shift+Tab")
    assert page.evaluate(ACTIVE) == "Wk[1,1]"
    tab_stops = root.locator(".al-fieldset").evaluate_all(
        "fs => fs.map(f => [...f.querySelectorAll('input[data-param-text]')].filter(b => b.tabIndex === 0).length)")
    assert tab_stops == [1, 1, 1, 1, 1], tab_stops
    assert_cells_equal_python(twin.cells(), params, "typed, then moved on with →")


# ---------------------------------------------------------------- issue 29's smaller things

CHANGED_TABLES = "r => [...new Set([...r.querySelectorAll('td[data-changed]')].map(td => td.dataset.matrix))].sort()"


def test_contrast_one_after_contrast_two_marks_only_v_and_o(new_page, site_url):
    """对照一 is the baseline with only Wv changed: after 对照二 (no 恢复基准 between) its marks still
    say what the chapter says: Q, K, S and A stay, V and O change."""
    twin = open_lab(new_page, site_url, 1024, 768)
    twin.root.locator("button[data-lab-action='only_wq']").click()
    assert twin.root.evaluate(CHANGED_TABLES) == ["A", "O", "Q", "S"]
    twin.root.locator("button[data-lab-action='only_wv']").click()
    assert twin.root.evaluate(CHANGED_TABLES) == ["O", "V"]


def test_a_typed_d_k_between_two_powers_puts_the_thumb_between_their_marks(new_page, site_url):
    twin = open_lab(new_page, site_url, 1024, 768)
    box, slider = twin.root.locator("input[data-param-text='d_k']"), twin.control("d_k")
    marks = twin.root.locator(".al-dk-marks span")
    centre = lambda e: e["x"] + e["width"] / 2  # noqa: E731
    box.fill("3")
    box.press("Enter")
    thumb = slider.evaluate("""s => { const r = s.getBoundingClientRect(), f = (s.value - s.min) / (s.max - s.min);
      return r.left + 8 + (r.width - 16) * f; }""")  # Chromium's 16 px thumb
    assert centre(marks.nth(1).bounding_box()) + 10 < thumb < centre(marks.nth(2).bounding_box()) - 10
    page = twin.page
    page.keyboard.press("ArrowUp")  # on to the next power: the thumb on its mark again
    assert twin.params()["d_k"] == 4 and slider.input_value() == "2"
    assert_cells_equal_python(twin.cells(), {**default_params(), "d_k": 4.0}, "d_k 3 then ↑")


def test_the_clamped_value_typed_again_takes_its_note_away(new_page, site_url):
    twin = open_lab(new_page, site_url, 1024, 768)
    box = twin.root.locator("input[data-param-text='d_k']")
    box.fill("100")
    box.press("Enter")
    assert "100 已改为 64" in twin.notes()
    box.fill("64")  # what the box shows, typed: a valid value
    box.press("Enter")
    assert "已改为" not in twin.notes() and twin.params()["d_k"] == 64
    box.fill("100")
    box.press("Tab")
    box.focus()
    box.fill("8")
    box.press("Tab")
    assert "已改为" not in twin.notes() and twin.params()["d_k"] == 8


@pytest.mark.parametrize("width, height", [(360, 640), (375, 812)])
def test_phone_number_boxes_are_16px_and_row_buttons_and_taps_32px(new_page, site_url, width, height):
    """iOS zooms into a text field under 16 px; a finger needs >= 32 px."""
    twin = Twin(new_page(width=width, height=height, has_touch=True, is_mobile=True), site_url + "/book/lab.html")
    assert twin.root.get_attribute("data-layout") == "phone"
    fields = twin.root.locator("input[data-param-text]").evaluate_all("es => es.map(e => parseFloat(getComputedStyle(e).fontSize))")
    assert len(fields) == 17 and min(fields) >= 16, fields
    taps = twin.root.locator("button.al-rowpick, .al-controls button, .al-toolbar button, input[data-param-text]").evaluate_all(
        "es => es.filter(e => e.getClientRects().length).map(e => [e.textContent || e.dataset.paramText, e.getBoundingClientRect().width, e.getBoundingClientRect().height])")
    assert len(taps) > 20 and not [t for t in taps if min(t[1], t[2]) < 32], [t for t in taps if min(t[1], t[2]) < 32]
    assert twin.page.evaluate("() => document.documentElement.scrollWidth") <= width


def test_printed_marks_show_every_difference_from_the_baseline_and_the_screen_keeps_the_last_change(new_page, site_url):
    """Issue 29: the print line lists every difference from the baseline; the ▲/▼ marks on paper
    now mark every cell that differs from it too (on screen they stay the last change's)."""
    import io
    import re
    from collections import Counter

    from pypdf import PdfReader
    from test_twin_browser import changed_cells, expected_changes, query

    start = {**default_params(), "Wv[0,0]": 10.0, "d_k": 8.0}
    twin = open_lab(new_page, site_url, 1280, 900, q=query(start))
    twin.root.locator("input[data-param-text='X[1,0]']").focus()
    twin.page.keyboard.press("ArrowUp")  # the last change: X[1,0] one step up
    final = {**start, "X[1,0]": round(start["X[1,0]"] + RANGES["X"].step, 10)}
    last = changed_cells(twin)
    assert last == expected_changes(start, final)
    pages = PdfReader(io.BytesIO(twin.page.pdf(format="A4", print_background=True))).pages
    text = "".join(p.extract_text() for p in pages)
    flat = re.sub(r"\s+", "", text)
    on_paper = re.findall(r"[▲▼]", flat)
    every = [v for v in expected_changes(default_params(), final).values() if v[:1] in "▲▼"]
    assert len(every) > len([v for v in last.values() if v[:1] in "▲▼"])  # more than the last change
    assert len(on_paper) >= len(every) and all(flat.count(m) >= n for m, n in Counter(every).items()), (flat, every)
    # The snapshot with its marks and notes stays on page 1 (it once went whole to page 2, a page 1
    # with only the title): S, A, O and Q, K, V there on A4 and on the shorter Letter alike.
    letter = _pdf_text(twin.page.pdf(format="Letter", print_background=True), pages=1)[0]
    for paper, first in (("A4", re.sub(r"\s+", "", pages[0].extract_text())), ("Letter", letter)):
        missing = [t for t in ("课堂实验台", "分数表", "份额表", "输出表", "查询表", "▲") if t not in first]
        assert not missing, (paper, missing, first[:200])
    twin.page.wait_for_timeout(100)
    assert changed_cells(twin) == last  # the screen after printing: the last change's marks again


# ---------------------------------------------------------------- handouts and the way to the lab (issue 29)

def _pdf_text(pdf: bytes, pages=None) -> list[str]:
    import io
    import re
    import unicodedata

    from pypdf import PdfReader

    read = PdfReader(io.BytesIO(pdf)).pages
    return [re.sub(r"\s+", "", unicodedata.normalize("NFKC", p.extract_text())) for p in read][:pages]



@pytest.mark.parametrize("script", ["late", "run", "off"])
def test_the_worksheet_button_keeps_its_room_until_shown_so_the_phone_chapter_does_not_jump(new_page, site_url, script):
    """On a phone the chapter's bar wraps its worksheet button onto a line of its own: the bar is as
    tall before f11-print.js shows the button (held back here) as after (it pushed the page down 52
    px, a layout shift Lighthouse counted), and without JavaScript the hidden button takes no room."""
    rec = new_page(width=412, height=823, fresh=True, java_script_enabled=script != "off")
    page = rec.page
    if script == "late":
        page.route("**/_static/f11-print.js*", lambda route: route.abort())
    page.goto(site_url + CHAPTER, wait_until="load")
    bar = page.locator("nav.f11-handout").first
    button = bar.locator("[data-f11-worksheet]")
    links = bar.locator("a").evaluate_all("els => Math.max(...els.map(a => a.getBoundingClientRect().bottom))")
    top = bar.evaluate("b => b.getBoundingClientRect().top")
    shown = button.is_visible()
    height = bar.bounding_box()["height"]
    if script == "run":
        assert shown and button.bounding_box()["y"] >= links - 1  # on its own line: the case this is about
    else:
        assert not shown
    if script == "off":
        assert height == pytest.approx(links - top, abs=2), "without JavaScript the button's room is left empty"
    else:
        again = new_page(width=412, height=823)
        again.page.goto(site_url + CHAPTER, wait_until="load")
        full = again.page.locator("nav.f11-handout").first.bounding_box()["height"]
        assert height == pytest.approx(full, abs=0.5), f"the bar is {height} px before the button shows, {full} px after"

def test_the_worksheet_prints_the_self_checks_without_answers_and_the_lab_in_predict_mode(new_page, site_url):
    """The chapter's first screen (1280x800) links to its lab and offers the worksheet; its button
    prints the self-checks' questions without their answers and the lab with A and O covered, and
    afterwards the page is as it was (a plain print still has every answer: test_site_reading)."""
    import re
    import unicodedata

    twin = Twin(new_page(width=1280, height=800), site_url + CHAPTER)
    page, root = twin.page, twin.root
    handout = STRINGS["handout"]
    to_lab = page.locator("nav.f11-handout a.f11-to-lab")
    button = page.locator("nav.f11-handout [data-f11-worksheet]")
    assert to_lab.inner_text() == handout["to_lab"] and button.inner_text() == handout["worksheet"]
    for shown in (to_lab, button):
        box = shown.bounding_box()
        assert box and box["y"] + box["height"] <= 800, box  # on the first screen
    # What the answers say that the rest of the page does not (so their absence on paper means something).
    answers, questions = page.evaluate("""() => {
      const sec = document.getElementById('f11-selfcheck'), runs = t => t.match(/[\\u4e00-\\u9fff，。：；“”、（）]{10,}/g) || [];
      const drop = [...sec.querySelectorAll('details.sd-dropdown .sd-summary-content')];
      const rest = document.querySelector('article').cloneNode(true);
      rest.querySelectorAll('#f11-selfcheck details.sd-dropdown').forEach(d => d.remove());
      const other = rest.textContent.replace(/\\s+/g, '');
      return [drop.map(d => runs(d.textContent.replace(/\\s+/g, '')).filter(r => !other.includes(r))),
              [...sec.querySelectorAll(':scope > p')].filter(p => /^\\d+\\.$/.test((p.querySelector('strong') || {}).textContent))
                .map(p => runs(p.textContent.replace(/\\s+/g, ''))[0]).filter(Boolean)]; }""")
    assert len(answers) >= 9 and all(answers), answers  # every answer has prose of its own
    page.evaluate("() => { window.__printed = 0; window.print = () => { window.__printed += 1; }; }")
    button.click()
    assert page.evaluate("() => [window.__printed, document.documentElement.classList.contains('f11-worksheet')]") == [1, True]
    assert root.get_attribute("data-predict") == "true"
    text = "".join(_pdf_text(page.pdf(format="A4", print_background=True)))
    norm = lambda s: unicodedata.normalize("NFKC", s)  # noqa: E731
    # (PDF text gives some ideographs as radicals outside NFKC's reach: a radical may stand for any ideograph.)
    found = lambda run: re.search("".join(f"(?:{re.escape(c)}|[\u2e80-\u2fdf])" if "\u4e00" <= c <= "\u9fff" else re.escape(c)  # noqa: E731
                                          for c in norm(run)), text)
    printed = [r for runs in answers for r in runs if found(r)]
    assert printed == [], printed[:3]
    assert len(questions) >= 9 and all(found(q) for q in questions), [q for q in questions if not found(q)][:3]
    assert re.search(r"份额表.{0,40}\?", text)  # the lab's A covered
    # After printing (page.pdf sends afterprint): the chapter and its lab as they were.
    page.wait_for_timeout(100)
    assert page.evaluate("() => document.documentElement.classList.contains('f11-worksheet')") is False
    assert root.get_attribute("data-predict") is None
    assert_cells_equal_python(twin.cells(), default_params(), "after the worksheet")
    # The link takes the reader to the lab.
    to_lab.click()
    page.wait_for_function("() => { const r = document.querySelector('[data-attention-lab]').getBoundingClientRect(); return r.top >= 0 && r.top < innerHeight / 2; }")
    assert twin.rec.page_errors == []


def test_the_chapters_lab_at_1024_wide_shows_values_at_24px_and_every_label_at_14px(new_page, site_url):
    """Issue 29: embedded in the chapter at 1024 wide, 已挡住 was 9.9 px, the legends 11.5 px and the
    values 18.4 px.  Now S, A, O's values >= 24 px and every label, mark and legend >= 14 px, with
    no value leaving its cell (the widest the ranges give, in a link)."""
    widest = {**default_params(), **{f"Wv[{i},{j}]": RANGES["Wv"].min for i in range(2) for j in range(2)},
              "X[0,0]": RANGES["X"].min}
    from test_twin_browser import query

    twin = Twin(new_page(width=1024, height=768), site_url + CHAPTER + "?" + query(widest))
    root = twin.root
    root.scroll_into_view_if_needed()
    assert root.get_attribute("data-layout") == "narrow"
    sizes = root.evaluate("""r => {
      const px = e => parseFloat(getComputedStyle(e).fontSize);
      const shown = s => [...r.querySelectorAll(s)].filter(e => e.getClientRects().length && e.textContent.trim());
      return { values: shown('.al-sao td.al-cell').map(px),
               labels: shown('.al-label, .al-sao .al-col, .al-sao .al-row, .al-rowpick, .al-legend, .al-legend-end, .al-m, .al-d, .al-dk-marks span, .al-caption').map(px),
               masked: shown('.al-sao .al-m').map(e => e.textContent),
               overflow: shown('.al-sao td.al-cell').filter(td => td.scrollWidth > td.clientWidth + 1).map(td => td.textContent) }; }""")
    assert len(sizes["values"]) == 12 and min(sizes["values"]) >= 24, sizes["values"]
    assert len(sizes["labels"]) > 30 and min(sizes["labels"]) >= 14, sorted(sizes["labels"])[:5]
    assert sizes["masked"] and all(STRINGS["view"]["masked_label"] in m for m in sizes["masked"]), sizes["masked"]
    assert sizes["overflow"] == [] and root.evaluate("r => r.scrollWidth <= r.clientWidth + 1")
    assert twin.rec.page_errors == []


def test_every_figure_draws_its_chinese_from_its_own_font_where_the_reader_has_no_cjk_font(new_page, site_url):
    """Issue 29: a figure shown as <img> can use only the reader's system fonts; without a CJK one
    its Chinese was boxes.  Each built SVG carries a subset of the build's CJK font: with every
    system CJK family taken out of its font lists (a reader who has none of them), Chromium draws
    each Chinese text from that embedded font (CSS.getPlatformFontsForNode), never a system one."""
    import re
    import urllib.request

    from attention_lab.fonts import CJK_FONT_CANDIDATES
    from attention_lab.plotting import EMBEDDED_CJK

    rec = new_page(width=1280, height=800)
    rec.page.goto(site_url + CHAPTER, wait_until="networkidle")
    urls = rec.page.evaluate("""() => [...document.querySelectorAll('article img[src$=".svg"]')]
        .filter(i => !i.closest('.header-article-items, .dropdown-launch-buttons')).map(i => i.src)""")
    assert len(urls) >= 5, urls
    cdp = rec.page.context.new_cdp_session(rec.page)
    for url in urls:
        svg = urllib.request.urlopen(url).read().decode("utf-8")
        assert svg.count("@font-face") == 1 and EMBEDDED_CJK in svg, url
        for name in CJK_FONT_CANDIDATES:  # the reader has none of these
            svg = svg.replace(f"'{name}', ", "").replace(f", '{name}'", "")
        svg = re.sub(r"<\?xml[^>]*>|<!DOCTYPE[^>]*>", "", svg)
        rec.page.set_content(f"<!doctype html><html><body>{svg}</body></html>")
        rec.page.evaluate("() => document.fonts.ready")
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
        ids = cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": "svg text"})["nodeIds"]
        chinese = 0
        for node in ids:
            text = cdp.send("DOM.getOuterHTML", {"nodeId": node})["outerHTML"]
            if not re.search(r">[^<]*[\u4e00-\u9fff]", text):
                continue
            chinese += 1
            fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
            system_cjk = [f["familyName"] for f in fonts if not f["isCustomFont"] and re.search(r"CJK|Han|Hei|YaHei|PingFang", f["familyName"])]
            assert any(f["isCustomFont"] for f in fonts) and not system_cjk, (url, text[:80], fonts)
        assert chinese >= 2, url
