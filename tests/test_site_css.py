"""The theme's stylesheets, cut and joined at build time (book/_ext/f11_css.py), draw every
page exactly as the theme's original stylesheets do.

Each page is rendered twice in Chromium: as built (one cut stylesheet, f11-theme.css), and
with the original <link>s and files put back from ``_build/css-reference/`` (kept beside
the site by the build).  The screenshots must be the same pixels, on a desktop in light and
dark mode, on a phone with the contents drawer open, as printed, with the header's menu open
and a tooltip showing, and on a search page with results (all drawn by scripts, with classes
that are not in the built HTML).
"""

from __future__ import annotations

import io
import json
import re
import urllib.parse
from pathlib import Path

import pytest

# Renders every page twice in Chromium against the built site: build + browser tiers.
pytestmark = [pytest.mark.build, pytest.mark.browser, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


@pytest.fixture(scope="module")
def reference(built_site) -> dict:
    folder = built_site.parent / "css-reference"
    listing = folder / "bundle.json"
    assert listing.is_file(), f"the build kept no original stylesheets in {folder}"
    info = json.loads(listing.read_text("utf-8"))
    info["folder"] = folder
    return info


def _with_original_stylesheets(page: str, path: str, info: dict) -> str:
    depth = path.count("/")
    up = "../" * depth
    bundle = re.search(rf'\s*<link rel="stylesheet" type="text/css" href="{re.escape(up + info["bundle"])}\?v=[^"]*" />',
                       page)
    assert bundle, f"{path} does not link {info['bundle']}"
    links = "".join(f'\n    <link rel="stylesheet" type="text/css" href="{up}{part}" />' for part in info["parts"])
    return page.replace(bundle.group(0), links, 1)


def _open(new_page, site_url: str, address: str, info: dict, original: bool, **view):
    """The page at ``address`` (a path, maybe with ?query) as built, or with the original stylesheets."""
    path = address.split("?")[0]
    rec = new_page(**view)
    page = rec.page
    if original:
        folder: Path = info["folder"]

        def serve(route):
            url = urllib.parse.urlparse(route.request.url)
            local = urllib.parse.unquote(url.path).lstrip("/")
            kept = folder / local
            if local.endswith(".css") and kept.is_file():
                return route.fulfill(body=kept.read_bytes(), content_type="text/css")
            if local == path:
                response = route.fetch()
                return route.fulfill(response=response,
                                     body=_with_original_stylesheets(response.text(), path, info))
            return route.continue_()

        page.route("**/*", serve)
    page.goto(f"{site_url}/{address}", wait_until="load")
    page.evaluate("document.fonts.ready.then(() => true)")
    if page.query_selector("[data-attention-lab]"):
        page.wait_for_selector('[data-attention-lab][data-lab-ready="true"]')
    page.wait_for_timeout(150)
    return rec


def _png(page, full_page=True) -> bytes:
    return page.screenshot(full_page=full_page, animations="disabled", caret="hide")


def _same(a: bytes, b: bytes, what: str, tmp_path: Path):
    if a == b:
        return
    from PIL import Image, ImageChops

    ia, ib = Image.open(io.BytesIO(a)).convert("RGB"), Image.open(io.BytesIO(b)).convert("RGB")
    if ia.size == ib.size and ImageChops.difference(ia, ib).getbbox() is None:
        return
    name = re.sub(r"\W+", "-", what)
    ia.save(tmp_path / f"{name}-cut.png")
    ib.save(tmp_path / f"{name}-original.png")
    box = ImageChops.difference(ia, ib).getbbox() if ia.size == ib.size else f"sizes {ia.size} vs {ib.size}"
    pytest.fail(f"{what}: the cut stylesheet draws differently from the theme's (differing box {box}; "
                f"pictures in {tmp_path})")


STATES = {
    "desktop, light": dict(width=1280, height=900, color_scheme="light"),
    "desktop, dark": dict(width=1280, height=900, color_scheme="dark"),
    "phone": dict(width=375, height=812, color_scheme="light"),
}


def test_cut_stylesheet_is_a_fraction_of_the_theme_stylesheets(built_site, reference):
    cut = (built_site / reference["bundle"]).stat().st_size
    full = sum((reference["folder"] / p).stat().st_size for p in reference["parts"])
    full += (reference["folder"] / "_static" / "basic.css").stat().st_size  # @import-ed by theme.css
    print(f"\ntheme stylesheets: {full / 1e3:.0f} KB in {len(reference['parts'])} files -> {cut / 1e3:.0f} KB in one")
    assert cut < full / 3
    for part in reference["parts"]:
        assert not (built_site / part).exists(), f"{part} is in the bundle but still published"


@pytest.mark.parametrize("state", list(STATES))
def test_every_page_looks_the_same_with_the_cut_stylesheet(site_pages, site_url, new_page, reference, state,
                                                           tmp_path):
    for path in site_pages:
        shots = [_png(_open(new_page, site_url, path, reference, original, **STATES[state]).page)
                 for original in (False, True)]
        _same(*shots, f"{path} ({state})", tmp_path)


def test_printed_pages_look_the_same_with_the_cut_stylesheet(built_site, site_url, new_page, reference, tmp_path):
    for path in ("book/f11-attention.html", "book/lab.html"):
        shots = []
        for original in (False, True):
            page = _open(new_page, site_url, path, reference, original, width=800, height=1100).page
            page.emulate_media(media="print")
            page.wait_for_timeout(150)
            shots.append(_png(page))
        _same(*shots, f"{path} (print)", tmp_path)


def test_menus_tooltips_drawer_and_search_results_look_the_same_with_the_cut_stylesheet(
        site_url, new_page, reference, tmp_path):
    def menu_and_tooltip(page):
        page.click(".dropdown-download-buttons > button")
        page.wait_for_selector(".dropdown-download-buttons .dropdown-menu.show")
        page.hover(".theme-switch-button")
        page.wait_for_selector(".tooltip.show")

    def drawer(page):
        page.locator(".primary-toggle").locator("visible=true").first.click()
        # The toggle's tooltip (shown on hover and focus) would come and go at its own pace.
        page.mouse.move(370, 800)
        page.evaluate("() => document.activeElement && document.activeElement.blur()")
        page.wait_for_function("() => !document.querySelector('.tooltip')")
        page.wait_for_timeout(400)

    def results(page):
        page.wait_for_selector("#search-results li")

    cases = [
        ("book/f11-attention.html", menu_and_tooltip, dict(width=1280, height=900)),
        ("book/f11-attention.html", drawer, dict(width=375, height=812)),
        ("search.html?q=" + urllib.parse.quote("因果掩码"), results, dict(width=1280, height=900)),
    ]
    for path, act, view in cases:
        shots = []
        for original in (False, True):
            rec = _open(new_page, site_url, path, reference, original, **view)
            act(rec.page)
            shots.append(_png(rec.page, full_page=False))
        _same(*shots, f"{path} ({act.__name__})", tmp_path)

