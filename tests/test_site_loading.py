"""While a page loads, the lab's mount moves nothing the reader sees (issue 19: CLS <= 0.02).

The lab's scripts are held back (``HOLD_MS``) so the page is surely drawn before the lab is
built, as on a slow phone; Chromium's layout-shift entries that move the lab or anything after
it are summed from navigation until the lab is ready and settled.  Before the mount the lab's root keeps one screen of room
(``book/_static/f11-site.css``); the mounted lab shows itself only once it has its layout.
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.build, pytest.mark.browser]

HOLD_MS = 700
SHIFTS = """
window.__shift = 0; window.__shifts = [];
// A shift counts when it moves the lab or what follows it (the theme's own moves above a
// linked section, as its scripts start, are not the lab's doing).
const byLab = (node) => {
  const root = document.querySelector("[data-attention-lab]");
  return !!(node && root && (root.contains(node) || root.compareDocumentPosition(node) & Node.DOCUMENT_POSITION_FOLLOWING));
};
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if (e.hadRecentInput || !e.sources.some((s) => byLab(s.node))) continue;
    window.__shift += e.value;
    window.__shifts.push([Math.round(e.startTime), e.value.toFixed(4),
      e.sources.map((s) => (s.node ? s.node.nodeName + "#" + (s.node.id || "") + "." + (s.node.className || "") : "?") + " " + Math.round(s.previousRect.y) + "->" + Math.round(s.currentRect.y) + " h" + Math.round(s.previousRect.height) + "->" + Math.round(s.currentRect.height)).join(" | "), Math.round(scrollY)]);
  }
}).observe({type: "layout-shift", buffered: true});
"""


# Prepended to the held script: the root's height at the last moment before the lab mounts
# (the lab may mount while the page is still parsing, when its script comes after the root).
MEASURE = ("(function(){var r=document.querySelector('[data-attention-lab]');"
           "if(window.__room===undefined&&r&&!r.classList.contains('al-lab'))"
           "window.__room=r.getBoundingClientRect().height;})();\n")


def _load_with_late_lab(new_page, site_url, address, width, height):
    rec = new_page(width=width, height=height, fresh=True)  # a first visit: nothing cached
    page = rec.page
    page.add_init_script(SHIFTS)

    def hold(route):
        response = route.fetch()
        page.wait_for_timeout(HOLD_MS)
        # The page is surely drawn with the lab's empty root before the lab's script runs.
        page.wait_for_function("() => !!document.querySelector('[data-attention-lab]')", timeout=30_000)
        route.fulfill(response=response, body=MEASURE + response.text())

    page.route("**/attention-lab/app.js*", hold)
    page.route("**/attention-lab/shapes.js*", hold)
    page.goto(f"{site_url}/{address}", wait_until="commit")
    page.wait_for_selector('[data-attention-lab][data-lab-ready="true"]', state="attached", timeout=30_000)
    page.wait_for_load_state("load")
    page.wait_for_timeout(500)
    room = page.evaluate("window.__room")
    assert room is not None, f"{address}: the lab was mounted before its script ran (no empty root was measured)"
    return page, room


CASES = [
    ("book/lab.html", 1350, 940),   # Lighthouse's desktop
    ("book/lab.html", 412, 823),    # Lighthouse's phone
    ("book/shapes.html", 1280, 900),
    ("book/shapes.html", 412, 823),  # Lighthouse's phone: the strip fitted to the phone layout in the first frame
    ("book/f11-attention.html#f11-try", 412, 823),  # a link straight to the chapter's lab
]


@pytest.mark.parametrize("address,width,height", CASES, ids=[f"{a}@{w}" for a, w, _ in CASES])
def test_the_lab_mounting_moves_nothing_on_screen(new_page, site_url, address, width, height):
    page, room = _load_with_late_lab(new_page, site_url, address, width, height)
    assert room >= height, f"{address} at {width}x{height}: before the mount the lab keeps {room:.0f} px, not a screen"
    shift = page.evaluate("window.__shift")
    assert shift <= 0.02, f"{address} at {width}x{height}: layout shift {shift:.3f}: {page.evaluate('window.__shifts')}"
