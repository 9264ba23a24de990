"""The site lab as a component (issue 30): what it adds outside its element it takes away again.

In headless Chromium on the built ``book/lab.html``: every listener the lab's scripts add to the
document or the window (recorded from before the page's scripts run, with the script that added it)
is removed by ``lab.destroy()``; after it no key, press or print reaches the lab, and the root can
be started anew with the same state as a fresh load.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_twin_browser import LAB_PAGE  # noqa: E402

pytestmark = pytest.mark.browser

#: Before any script of the page: record add/removeEventListener on document and window, with the
#: file of the caller (the lab's scripts are under _static/attention-lab/).
RECORD_LISTENERS = """(() => {
  const live = window.__outside = [];  // {target, type, fn, capture, from}
  const capture = opts => !!(opts === true || (opts && opts.capture));
  for (const target of [window, document]) {
    const add = target.addEventListener, remove = target.removeEventListener;
    target.addEventListener = function (type, fn, opts) {
      const from = (new Error().stack.split("\\n").find(l => l.includes("/_static/")) || "").trim();
      if (from.includes("/attention-lab/")) live.push({ target: this, type, fn, capture: capture(opts), from });
      return add.call(this, type, fn, opts);
    };
    target.removeEventListener = function (type, fn, opts) {
      const k = live.findIndex(l => l.target === this && l.type === type && l.fn === fn && l.capture === capture(opts));
      if (k >= 0) live.splice(k, 1);
      return remove.call(this, type, fn, opts);
    };
  }
})();"""
LIVE = """() => window.__outside.map(l => [l.target === window ? "window" : "document", l.type, l.capture].join(" ")
  + " <- " + l.from)"""


def test_destroy_removes_every_listener_the_lab_added_outside_its_element(new_page, site_url):
    page = new_page(width=1280, height=900).page
    page.add_init_script(RECORD_LISTENERS)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(site_url + LAB_PAGE)
    page.wait_for_selector("[data-attention-lab][data-lab-ready='true']")
    # Open and keep the copied-link box (its outside-press listener), then change a value.
    page.locator('[data-attention-lab] input[data-param-text="Wq[0,0]"]').fill("0.75")
    page.keyboard.press("Enter")
    before = page.evaluate(LIVE)
    kinds = {line.split(" <- ")[0] for line in before}
    # What the lab listens to outside: presses and let-gos (the address waits for them), hiding and
    # leaving the page, printing, scrolling, the presenter's keys.
    for want in ("document pointerdown true", "document pointerup true", "document keydown false",
                 "window beforeprint false", "window afterprint false", "window pagehide false"):
        assert want in kinds, (want, before)
    page.evaluate("() => document.querySelector('[data-attention-lab]').__attentionLab.destroy()")
    # Only the loader's own start-up listeners (app.js's startAll on load) may stay.
    left = [line for line in page.evaluate(LIVE) if " load " not in f" {line} " and "readystatechange" not in line]
    assert left == [], left
    root = page.locator("[data-attention-lab]")
    assert root.locator("td[data-matrix]").count() == 0 and root.evaluate("r => !r.classList.contains('al-lab')")
    # Nothing reaches the taken-away lab now (a leftover listener would throw on its view's parts).
    page.mouse.click(5, 5)
    page.keyboard.press("PageDown")
    page.evaluate("() => { dispatchEvent(new Event('beforeprint')); dispatchEvent(new Event('afterprint')); }")
    assert errors == [], errors
    # Started anew: the same state as the page's address gives (the typed 0.75 was written there).
    page.wait_for_function("() => location.search.includes('0.75')", timeout=5000)
    page.evaluate("() => { const r = document.querySelector('[data-attention-lab]'); AttentionLab.start(r, JSON.parse(r.querySelector('script[data-attention-lab-config]').textContent)); }")
    page.wait_for_selector("[data-attention-lab][data-lab-ready='true']")
    assert page.locator('[data-attention-lab] input[data-param-text="Wq[0,0]"]').input_value() == "0.75"
    assert root.locator("td[data-matrix='O']").count() == 4
    again = page.evaluate(LIVE)
    assert len([line for line in again if "pointerdown" in line]) == len([line for line in before if "pointerdown" in line]), again
    assert errors == [], errors
