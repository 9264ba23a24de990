"""A phone's finger and typed values on the lab page (issue 29), in headless Chromium.

Touch with real touch events (CDP ``Input.dispatchTouchEvent``: touchStart, touchMoves,
touchEnd), so Chromium itself decides what the finger does: on a 360x640 phone a vertical
swipe that starts on a slider's track scrolls the page and leaves every value as it was (the
controls, the cells, the address), however it starts; a sideways drag moves the slider under
the finger; a tap is a click, but not the tap that stops a scrolling page.  Typing with real
key presses: what is typed into a number box is never dropped: ↑/↓ step from it (taken as Enter
takes it, with its note), Tab and a click elsewhere take it.  One page per room (a phone, a
desktop), reloaded between tests.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_twin_browser import LAB_PAGE, Twin, assert_cells_equal_python, query  # noqa: E402  (its page readers)

from attention_lab.params import coerce, default_params

pytestmark = pytest.mark.browser

STATE = "() => Object.assign({}, document.querySelector('[data-attention-lab]').__attentionLab.state.params)"
#: The lab's state and where slider ``name``'s thumb is.
STATE_AND_THUMB = """name => [Object.assign({}, document.querySelector('[data-attention-lab]').__attentionLab.state.params),
  Number(document.querySelector(`input[type=range][data-param="${name}"]`).value)]"""


class Room:
    """One page in one browser context, kept for the module; ``fresh()`` reloads the lab."""

    def __init__(self, browser, url: str, **context):
        self.context = browser.new_context(**context)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.url = url
        self.cdp = self.context.new_cdp_session(self.page)

    def fresh(self) -> Twin:
        twin = Twin(SimpleNamespace(page=self.page), self.url)
        self.page.evaluate("() => window.scrollTo(0, 0)")
        return twin

    def touch(self, points: list, pause_ms: int = 0, probe=None) -> list:
        """One finger: down at points[0], through the others, lifted at the last; ``probe()``'s
        results while the finger is down (after it lands, and after its second move)."""
        send = lambda kind, pts: self.cdp.send("Input.dispatchTouchEvent", {  # noqa: E731
            "type": kind, "touchPoints": [{"x": x, "y": y, "id": 1} for x, y in pts]})
        seen = []
        send("touchStart", points[:1])
        if probe:
            seen.append(probe())
        for k, p in enumerate(points[1:]):
            send("touchMove", [p])
            if pause_ms:
                self.page.wait_for_timeout(pause_ms)
            if probe and k == 1:
                seen.append(probe())
        send("touchEnd", [])
        return seen

    def settle_scroll(self) -> float:
        """scrollY once a swipe's fling has stopped."""
        last = None
        for _ in range(40):
            self.page.wait_for_timeout(60)
            y = self.page.evaluate("() => scrollY")
            if y == last:
                return y
            last = y
        return last


@pytest.fixture(scope="module")
def phone(browser, site_url):
    room = Room(browser, site_url + LAB_PAGE, viewport={"width": 360, "height": 640}, has_touch=True,
                is_mobile=True, device_scale_factor=2)
    yield room
    room.context.close()


@pytest.fixture(scope="module")
def desktop(browser, site_url):
    room = Room(browser, site_url + LAB_PAGE, viewport={"width": 1280, "height": 900})
    yield room
    room.context.close()


def track_point(twin, name: str, far: bool = True):
    """A point on slider ``name``'s track, as far from its thumb as the track allows (far=False: the thumb)."""
    slider = twin.control(name)
    slider.evaluate("e => e.scrollIntoView({block: 'center', behavior: 'instant'})")
    box = slider.bounding_box()
    lo, hi = float(slider.get_attribute("min")), float(slider.get_attribute("max"))
    at = (float(slider.input_value()) - lo) / (hi - lo)
    frac = (0.1 if at > 0.5 else 0.9) if far else at
    x, y = box["x"] + 8 + (box["width"] - 16) * frac, box["y"] + box["height"] / 2
    hit = twin.page.evaluate("([x, y]) => { const e = document.elementFromPoint(x, y); return e && e.dataset.param; }", [x, y])
    assert hit == name, f"the finger would land on {hit!r}, not on {name}'s track"
    return x, y


def test_a_vertical_swipe_over_a_slider_scrolls_and_changes_no_value(phone):
    """Five ways a finger scrolls past the sliders (up, down, with a sideways first move, slanted,
    slowly), each starting on a track far from its thumb, where Chromium puts the value at touchstart:
    the page scrolls, and every value, cell and the address stay the baseline's, even for a moment
    (nothing moves while the finger is down: no jump of the thumb and back)."""
    twin = phone.fresh()
    page = twin.page
    base = default_params()
    swipes = [
        ("up", "Wq[0,0]", lambda x, y: [(x, y - 14 * k) for k in range(16)], 0),
        ("down", "Wv[0,0]", lambda x, y: [(x, y + 14 * k) for k in range(16)], 0),
        ("a sideways first move", "X[1,1]", lambda x, y: [(x, y), (x + 3, y - 1)] + [(x + 3, y - 14 * k) for k in range(1, 16)], 0),
        ("slanted", "Wk[0,1]", lambda x, y: [(x + 7 * k, y - 14 * k) for k in range(16)], 0),
        ("slowly", "Wq[1,1]", lambda x, y: [(x, y - 4 * k) for k in range(40)], 16),
    ]
    for how, name, path, pause in swipes:
        x, y = track_point(twin, name)  # in the middle of the screen: room to scroll either way
        before = phone.settle_scroll()
        seen = phone.touch(path(x, y), pause, probe=lambda: page.evaluate(STATE_AND_THUMB, name))
        after = phone.settle_scroll()
        assert seen == [[base, base[name]]] * 2, f"swipe {how} on {name}: a value moved while the finger was down"
        assert after != before, f"swipe {how} on {name}'s track did not scroll the page"
        assert page.evaluate(STATE) == base, f"swipe {how} on {name} changed the lab's state"
        assert twin.params() == base, f"swipe {how} on {name} changed a control"
        assert "?" not in page.url, f"swipe {how} on {name} wrote the address"
    assert_cells_equal_python(twin.cells(), base, "after five vertical swipes")
    assert phone.errors == []


def test_a_sideways_drag_moves_the_slider_under_the_finger(phone):
    """From the thumb or from anywhere on the track, a finger going sideways moves the slider (the
    value where the finger is, the box and the cells following); the page stays put; let go, the
    address holds the value."""
    twin = phone.fresh()
    page = twin.page
    params = default_params()
    for name, far, dx in (("X[0,0]", False, -70), ("Wk[1,1]", True, 40)):
        x, y = track_point(twin, name, far)
        box = twin.control(name).bounding_box()
        dx = dx if x < box["x"] + box["width"] / 2 else -dx  # towards the middle
        page.wait_for_timeout(100)
        before = page.evaluate("() => scrollY")
        phone.touch([(x + dx * k / 10, y + (k % 2)) for k in range(11)])
        page.wait_for_timeout(100)
        slider = twin.control(name)
        box = slider.bounding_box()
        lo, hi, step = (float(slider.get_attribute(a)) for a in ("min", "max", "step"))
        finger = min(hi, max(lo, lo + (x + dx - box["x"] - 8) / (box["width"] - 16) * (hi - lo)))
        value = twin.params()[name]
        assert abs(value - finger) <= step * 1.01, f"{name} = {value}, the finger at {finger:.3f}"
        assert value != default_params()[name] and page.evaluate(STATE)[name] == value
        assert page.evaluate("() => scrollY") == before, f"a sideways drag on {name} scrolled the page"
        params[name] = value
    assert_cells_equal_python(twin.cells(), params, "after two sideways drags")
    assert page.evaluate("() => location.search") == "?" + query(params)
    assert phone.errors == []


def test_a_tap_on_a_track_sets_the_value_there_but_not_the_tap_that_stops_a_scrolling_page(phone):
    """A tap on a still page is a click (the value where it landed); a tap while the page still
    moves is the finger stopping a fling (here the page scrolls a pixel every 10 ms) and sets nothing."""
    twin = phone.fresh()
    page = twin.page
    x, y = track_point(twin, "Wv[1,1]")
    page.wait_for_timeout(200)
    phone.touch([(x, y)])
    slider = twin.control("Wv[1,1]")
    box = slider.bounding_box()
    lo, hi, step = (float(slider.get_attribute(a)) for a in ("min", "max", "step"))
    finger = lo + (x - box["x"] - 8) / (box["width"] - 16) * (hi - lo)
    tapped = twin.params()["Wv[1,1]"]
    assert abs(tapped - finger) <= step * 1.01 and page.evaluate(STATE)["Wv[1,1]"] == tapped
    params = {**default_params(), "Wv[1,1]": tapped}
    x, y = track_point(twin, "Wk[1,0]")
    page.evaluate("() => { window.__scroller = setInterval(() => window.scrollBy(0, 1), 10); }")
    page.wait_for_timeout(100)
    phone.touch([(x, y + 1)])
    page.evaluate("() => clearInterval(window.__scroller)")
    page.wait_for_timeout(100)
    assert twin.params() == params and page.evaluate(STATE) == params
    assert_cells_equal_python(twin.cells(), params, "a tap, then a tap on a moving page")
    assert phone.errors == []


def type_into(twin, name: str, text: str):
    box = twin.root.locator(f'input[data-param-text="{name}"]')
    box.evaluate("e => { e.focus(); e.select(); }")
    twin.page.keyboard.type(text)
    return box


def test_arrow_keys_step_from_the_typed_value(desktop):
    """Type 2 into Wq[0,0]'s box without Enter and press ↑: 2.05, not the old 0.5 + 0.05; the same
    for ↓, PageUp and d_k's powers of two; the cells and (after its short rest) the address follow."""
    twin = desktop.fresh()
    page = twin.page
    params = default_params()
    for name, typed, key, want in (("Wq[0,0]", "2", "ArrowUp", 2.05), ("X[1,1]", "-1.5", "ArrowDown", -1.6),
                                   ("Wv[0,1]", "3", "PageUp", 8.0), ("d_k", "3", "ArrowUp", 4.0)):
        type_into(twin, name, typed)
        page.keyboard.press(key)
        params[name] = want
        assert twin.params()[name] == pytest.approx(want), f"{typed!r} then {key} in {name}'s box"
        assert page.evaluate(STATE)[name] == pytest.approx(want)
    assert_cells_equal_python(twin.cells(), params, "typed, then stepped")
    page.wait_for_function("q => location.search === q", arg="?" + query(params), timeout=5000)
    assert desktop.errors == []


def test_a_refused_typed_value_keeps_its_note_and_the_arrow_steps_from_the_value_there(desktop):
    twin = desktop.fresh()
    type_into(twin, "Wk[0,0]", "abc")
    twin.page.keyboard.press("ArrowUp")
    value, note = coerce("Wk[0,0]", "abc", current=0.5)
    assert value == 0.5 and note
    assert twin.params()["Wk[0,0]"] == pytest.approx(0.55)
    assert note in twin.notes()
    twin.page.keyboard.press("ArrowUp")  # the next press is a plain step: the note has done its work
    assert twin.params()["Wk[0,0]"] == pytest.approx(0.6) and note not in twin.notes()


def test_a_typed_value_left_by_tab_or_a_click_elsewhere_is_taken(desktop):
    """Tab, a click outside the lab, and the case no change event reports: a value typed over what
    an arrow key had put in the box, back to the value the box had when it got the focus."""
    twin = desktop.fresh()
    page = twin.page
    params = default_params()
    type_into(twin, "Wv[1,0]", "2.5")
    page.keyboard.press("Tab")
    params["Wv[1,0]"] = 2.5
    assert twin.params() == params and page.evaluate(STATE) == params
    type_into(twin, "X[0,1]", "−0.5")  # the shared grammar: a typographic minus
    page.mouse.click(640, 5)  # the page's header, outside the lab
    params["X[0,1]"] = -0.5
    assert twin.params() == params and page.evaluate(STATE) == params
    type_into(twin, "Wq[1,1]", "2")
    page.keyboard.press("ArrowUp")  # 2.05, set in the box by the key
    page.keyboard.press("Control+a")
    page.keyboard.type("0.5")  # the box's value when it got the focus
    page.keyboard.press("Tab")
    params["Wq[1,1]"] = 0.5
    assert twin.params() == params and page.evaluate(STATE) == params
    assert_cells_equal_python(twin.cells(), params, "typed, then left")
    assert desktop.errors == []
