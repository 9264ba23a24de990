"""The theme's stylesheets, cut and joined at build time (book/_ext/f11_css.py), style every
element of every page exactly as the theme's original stylesheets do.

Each page is opened twice in Chromium: as built (one cut stylesheet, f11-theme.css), and with
the original <link>s and files put back from ``_build/css-reference/`` (kept beside the site
by the build, with the selectors the cut left out).  Two checks (``scripts/site_styles.py``):

* **the same computed style** for every element and ``::before``/``::after``/``::marker`` box
  (every property the stylesheets set, as used values) on a desktop, and for what scripts
  draw with classes that are not in the built HTML: the header's menu and a tooltip, the
  phone's contents drawer, search results.  A lost rule, a rule out of order or a broken
  ``url()`` changes a colour, a margin, a display or a width: the test names the box and the
  property;
* **no selector left out matches** anything, in every state the pages reach: light and dark
  mode, printed, a phone's width, the menus, tooltip, drawer and search results open
  (``:hover``, ``:focus``, ``::before`` … are taken off a selector first: it counts if its
  element is there at all).

(These replaced comparing screenshots of whole pages in each state: 25-45 s here instead of
108-145 s; ``scripts/bench_css.py --tests`` times this file.)
"""

from __future__ import annotations

import json
import re
import urllib.parse
from pathlib import Path

import pytest

from site_styles import MATCHING, STYLE_PROPERTIES, STYLE_SIGNATURES, changed_properties, differences

# Opens every page twice in Chromium against the built site: build + browser tiers.
pytestmark = [pytest.mark.build, pytest.mark.browser]

#: Transitions and animations (the theme's tooltip fades in) end at once, so both pages are
#: read at their final styles, not at some point of a fade.
SETTLE = "() => { document.getAnimations().forEach(a => { try { a.finish(); } catch (e) {} }); return true; }"


@pytest.fixture(scope="module")
def reference(built_site) -> dict:
    folder = built_site.parent / "css-reference"
    listing = folder / "bundle.json"
    assert listing.is_file(), f"the build kept no original stylesheets in {folder}"
    info = json.loads(listing.read_text("utf-8"))
    info["folder"] = folder
    return info


def _with_original_stylesheets(page: str, path: str, info: dict) -> str:
    up = "../" * path.count("/")
    bundle = re.search(rf'\s*<link rel="stylesheet" type="text/css" href="{re.escape(up + info["bundle"])}\?v=[^"]*" />',
                       page)
    assert bundle, f"{path} does not link {info['bundle']}"
    links = "".join(f'\n    <link rel="stylesheet" type="text/css" href="{up}{part}" />' for part in info["parts"])
    return page.replace(bundle.group(0), links, 1)


def _open(browser, site_url: str, address: str, info: dict, original: bool, width=1280, height=900):
    """The page at ``address`` (a path, maybe with ?query) as built, or with the original stylesheets."""
    path = address.split("?")[0]
    page = browser.new_context(viewport={"width": width, "height": height}, color_scheme="light").new_page()
    if original:
        folder: Path = info["folder"]

        def serve(route):
            local = urllib.parse.unquote(urllib.parse.urlparse(route.request.url).path).lstrip("/")
            kept = folder / local
            if local.endswith(".css") and kept.is_file():
                return route.fulfill(body=kept.read_bytes(), content_type="text/css")
            if local == path:
                response = route.fetch()
                return route.fulfill(response=response, body=_with_original_stylesheets(response.text(), path, info))
            return route.continue_()

        page.route("**/*", serve)
    page.goto(f"{site_url}/{address}", wait_until="load")
    page.evaluate("document.fonts.ready.then(() => true)")
    if page.query_selector("[data-attention-lab-config]"):
        page.wait_for_selector('[data-attention-lab][data-lab-ready="true"]', state="attached")
    return page


def _same(cut_page, original_page, what: str, within: str | None = None):
    """Fail, naming the boxes and properties, unless both pages style every box alike now
    (every box of the page, or only those in the elements ``within`` selects)."""
    for page in (cut_page, original_page):
        page.evaluate(SETTLE)
    properties = original_page.evaluate(STYLE_PROPERTIES)
    cut = cut_page.evaluate(STYLE_SIGNATURES, [properties, within])
    original = original_page.evaluate(STYLE_SIGNATURES, [properties, within])
    assert original, f"{what}: nothing on the page is in {within}"
    found = differences(original, cut)
    if not found:
        return len(original)
    detail = ""
    for entry, mine in zip(original, cut):
        if entry[:3] == mine[:3] and entry[3] != mine[3]:
            changed = changed_properties(original_page, cut_page, entry[0], entry[1], properties)
            detail = "; first: " + ", ".join(f"{k}: {a!r} in the theme's, {b!r} cut"
                                             for k, (a, b) in list(changed.items())[:6])
            break
    pytest.fail(f"{what}: {len(found)} of {len(original)} boxes are styled differently with the cut stylesheet, "
                f"e.g. {', '.join(found[:5])}{detail}")


def _nothing_left_out_matches(page, dropped: list[str], what: str):
    found, unread = page.evaluate(MATCHING, dropped)
    assert not unread, f"{what}: selectors left out by the cut that Chromium cannot read: {unread[:5]}"
    assert not found, (f"{what}: {len(found)} selectors the cut left out match elements of the page, "
                       f"e.g. {found[:5]}: their rules are missing from f11-theme.css")


#: What each page is read in, one after the other on the same loaded page: the theme's
#: dark mode (as its switch sets it), print, and a phone's width (media queries; the labs
#: pick their phone layout from their width).
STATES = {
    "desktop, light": lambda page: None,
    "desktop, dark": lambda page: page.evaluate("document.documentElement.dataset.theme = 'dark'"),
    "printed": lambda page: (page.evaluate("document.documentElement.dataset.theme = 'light'"),
                             page.emulate_media(media="print")),
    "phone": lambda page: (page.emulate_media(media="screen"), page.set_viewport_size({"width": 375, "height": 812}),
                           page.wait_for_timeout(100)),
}


def test_cut_stylesheet_is_a_fraction_of_the_theme_stylesheets(built_site, reference):
    cut = (built_site / reference["bundle"]).stat().st_size
    full = sum((reference["folder"] / p).stat().st_size for p in reference["parts"])
    full += (reference["folder"] / "_static" / "basic.css").stat().st_size  # @import-ed by theme.css
    print(f"\ntheme stylesheets: {full / 1e3:.0f} KB in {len(reference['parts'])} files -> {cut / 1e3:.0f} KB in one")
    assert cut < full / 3
    for part in reference["parts"]:
        assert not (built_site / part).exists(), f"{part} is in the bundle but still published"


@pytest.fixture(scope="module")
def opened(browser, site_pages, site_url, reference):
    """Each page opened once both ways on a desktop, kept for the tests below: {path: (cut, original)}.
    A test that changes a page's state puts it back (light, screen, 1280x900, menus closed)."""
    pairs = {path: tuple(_open(browser, site_url, path, reference, o) for o in (False, True)) for path in site_pages}
    yield pairs
    for pair in pairs.values():
        for page in pair:
            page.context.close()


def test_every_element_is_styled_as_by_the_theme_stylesheets(opened):
    boxes = sum(_same(cut, original, f"{path} (desktop)") for path, (cut, original) in opened.items())
    print(f"\n{boxes} boxes compared in {len(opened)} pages")


def test_no_selector_left_out_matches_in_any_state(opened, reference):
    dropped = reference["dropped"]
    assert len(dropped) > 1000, "the cut left out almost nothing: is bundle.json's list of selectors complete?"
    for path, (page, _) in opened.items():
        try:
            for state, put in STATES.items():
                put(page)
                _nothing_left_out_matches(page, dropped, f"{path} ({state})")
        finally:
            page.emulate_media(media="screen")
            page.evaluate("document.documentElement.dataset.theme = 'light'")
            page.set_viewport_size({"width": 1280, "height": 900})


def test_the_left_out_check_sees_elements_in_any_state(opened):
    """The check above finds a selector whose element is there, whatever state or box it names."""
    page = opened["book/lab.html"][0]
    present = ["body", ".bd-article a:hover", "a.reference::after", "input:focus-visible", ".al-lab :checked",
               "html[data-theme=light] .bd-article", ":root", "button:-moz-focusring", "td::-webkit-scrollbar-thumb"]
    found, unread = page.evaluate(MATCHING, present + [".no-such-class", "#no-such-id .x", "html[data-theme=dark] p"])
    assert (found, unread) == (present, [])


def test_menus_tooltips_drawer_and_search_results_are_styled_as_by_the_theme_stylesheets(opened, site_url, browser,
                                                                                         reference):
    def menu_and_tooltip(page):
        page.click(".dropdown-download-buttons > button")
        page.wait_for_selector(".dropdown-download-buttons .dropdown-menu.show")
        page.hover(".theme-switch-button")
        page.wait_for_selector(".tooltip.show")

    def drawer(page):
        page.keyboard.press("Escape")
        page.mouse.move(0, 0)
        page.wait_for_function("() => !document.querySelector('.tooltip, .dropdown-menu.show')")
        page.set_viewport_size({"width": 375, "height": 812})
        # The theme's own toggle (the first .primary-toggle) opens the drawer as a modal dialog.
        page.evaluate("document.querySelector('.primary-toggle').click()")
        page.wait_for_function("() => document.querySelector('#pst-primary-sidebar-modal').open")
        page.evaluate("() => document.activeElement && document.activeElement.blur()")

    chapter = opened["book/f11-attention.html"]
    try:
        for act, within in ((menu_and_tooltip, ".dropdown-download-buttons, .theme-switch-button, .tooltip"),
                            (drawer, "#pst-primary-sidebar-modal")):
            for page in chapter:
                act(page)
            _same(*chapter, f"book/f11-attention.html ({act.__name__})", within)
            _nothing_left_out_matches(chapter[0], reference["dropped"], f"book/f11-attention.html ({act.__name__})")
    finally:
        for page in chapter:
            page.keyboard.press("Escape")
            page.set_viewport_size({"width": 1280, "height": 900})
    address = "search.html?q=" + urllib.parse.quote("因果掩码")
    pages = [_open(browser, site_url, address, reference, o) for o in (False, True)]
    for page in pages:
        page.wait_for_selector("#search-results li")
    _same(*pages, f"{address} (results)", "#search-results")
    _nothing_left_out_matches(pages[0], reference["dropped"], f"{address} (results)")
    for page in pages:
        page.context.close()


PLAIN_CODE_JS = """() => {
  // Every character of the chapter's highlighted listings with its colour: the plain text that
  // book/_ext/f11_code.py writes without a span (names, punctuation; whitespace left out) and the
  // theme's own colour for those two token kinds, read off a .n and a .p span made here.
  const out = { plain: {}, spans: 0, n: null, p: null, blocks: 0 };
  for (const pre of document.querySelectorAll('div[class*="highlight-"]:not(.highlight-text):not(.highlight-none) > div.highlight > pre')) {
    out.blocks++;
    const walk = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
    for (let t = walk.nextNode(); t; t = walk.nextNode()) {
      if (!t.data.trim()) continue;
      if (t.parentElement === pre) { const c = getComputedStyle(pre).color; out.plain[c] = (out.plain[c] || 0) + t.data.trim().length; }
      else out.spans++;
    }
    if (out.n === null) {
      const probe = pre.appendChild(document.createElement('span'));
      probe.className = 'n'; out.n = getComputedStyle(probe).color;
      probe.className = 'p'; out.p = getComputedStyle(probe).color;
      probe.remove();
    }
  }
  return out;
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_plain_names_in_listings_keep_the_themes_colour_for_names_and_punctuation(new_page, site_url, scheme):
    """f11_code writes names and punctuation without a span (about 1,000 elements fewer in the chapter):
    they still show in the colour the theme gives .n and .p, not in the page's text colour."""
    page = new_page(color_scheme=scheme).page
    page.goto(site_url + "/book/f11-attention.html")
    got = page.evaluate(PLAIN_CODE_JS)
    assert got["blocks"] >= 20 and got["spans"] > 0, got
    assert got["n"] == got["p"], got  # the theme gives both one colour: the listing's
    assert set(got["plain"]) == {got["n"]}, got  # every plain character in it
    assert sum(got["plain"].values()) > 1000, got  # the names and punctuation are plain text now
    html = (page.content())
    assert '<span class="n">' not in html and '<span class="p">' not in html
