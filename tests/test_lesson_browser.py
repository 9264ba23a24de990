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
from test_twin_browser import LAB_PAGE, Twin, boxes, python_result, query  # noqa: E402  (its page readers)

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
           (1920, 990, 1.25), (1920, 990, 1.5)]


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


def test_a_big_screen_grows_the_tables_and_their_text(new_page, site_url):
    small = open_lab(new_page, site_url, 1024, 658).root.evaluate(TEXT_SIZES)
    big_twin = open_lab(new_page, site_url, 1920, 1080)
    big = big_twin.root.evaluate(TEXT_SIZES)
    assert min(big["values"]) >= 44, big["values"]
    assert min(big["text"].values()) > min(small["text"].values()) * 1.4
    # ... and the page uses the width: the lab spans the window, not the theme's 60em column.
    left, _, right, _ = boxes(big_twin, ":scope")[0]
    assert right - left >= 1920 * 0.95
