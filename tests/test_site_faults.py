"""The site when something fails: a lab file, the browser, the clipboard, the theme's CSS, a link.

The lab must never leave the reader with "实验台正在加载……" forever or an English TypeError:
it says in Chinese what happened, and the chapter's own text stays readable.  Failures are
made for real in Chromium (``page.route`` answers 404, an init script removes BigInt or breaks
the clipboard).  The start values of ``web.lab_config`` go through ``params.coerce`` (no
browser needed for those).
"""

from __future__ import annotations

import json
import math
import re

import pytest

from attention_lab.params import default_params
from attention_lab.web import lab_config, lab_html, standalone_html, strings

STRINGS = strings()
FAULTS = STRINGS["faults"]
CHAPTER = "/book/f11-attention.html"
LAB_JS = ("attention.js", "render.js", "app.js")
READY = "[data-attention-lab][data-lab-ready='true'] td[data-matrix='O'][data-value]"


# --- web.lab_config / lab_html: start values coerced as typed ones are ------------------------

def test_start_values_are_coerced_as_typed_values_are():
    config = lab_config({"causal": "no", "X[0,0]": 99, "Wq[0,0]": math.nan, "d_k": 10**400})
    start = config["start"]
    assert start["causal"] is False  # bool("no") was True
    assert start["X[0,0]"] == 3.0  # 99 went through unclamped
    assert start["Wq[0,0]"] == default_params()["Wq[0,0]"]  # NaN keeps the baseline
    assert start["d_k"] == 64.0
    assert config["noted"] == ["X[0,0]", "Wq[0,0]", "d_k"]
    assert [n.split(" ", 1)[0] for n in config["notes"]] == ["X[0,0]", "Wq[0,0]", "d_k"]
    assert "99 已改为 3" in config["notes"][0]


def test_start_values_that_need_no_change_give_no_notes():
    config = lab_config({"X[0,1]": 2, "causal": 0, "d_k": 4}, row=0)
    assert config["notes"] == [] and config["noted"] == []
    assert config["start"]["X[0,1]"] == 2.0 and config["start"]["causal"] is False and config["row"] == 0


@pytest.mark.parametrize("row", [True, "1", 2, None])
def test_a_row_that_is_not_0_or_1_is_refused(row):
    with pytest.raises(ValueError, match="row must be 0 or 1"):
        lab_config(row=row)


def test_the_page_config_is_strict_json_even_for_nan_and_inf_start_values():
    page = lab_html({"Wv[0,0]": math.nan, "Wv[0,1]": math.inf, "X[1,1]": "abc"})
    inside = page.split("data-attention-lab-config>", 1)[1].split("</script>", 1)[0]

    def refuse(word):
        raise AssertionError(f"{word} in the page's JSON")

    config = json.loads(inside, parse_constant=refuse)
    assert config["start"]["Wv[0,0]"] == 5.0 and len(config["notes"]) == 3


def test_the_fallback_carries_the_load_failure_sentence_for_the_inline_start_script():
    page = lab_html()
    assert f'data-failed="{FAULTS["load_failed"]}" data-attention-lab-fallback>' in page
    assert 'getAttribute("data-failed")' in page.rsplit("<script>", 1)[1]


# --- lab files that fail to load -----------------------------------------------------------------

def fail(page, names):
    """Answer 404 for the lab's files named in ``names``."""
    pattern = re.compile(r"/_static/attention-lab/(" + "|".join(re.escape(n) for n in names) + r")(\?|$)")
    page.route(pattern, lambda route: route.fulfill(status=404, body="not found"))


def open_chapter(new_page, site_url, names=(), init=None, query=""):
    rec = new_page()
    if names:
        fail(rec.page, names)
    if init:
        rec.page.add_init_script(init)
    rec.page.goto(site_url + CHAPTER + query, wait_until="load")
    return rec


def assert_said_and_readable(rec, sentence: str):
    page = rec.page
    root = page.locator("[data-attention-lab]").first
    page.wait_for_function("s => document.querySelector('[data-attention-lab]').textContent.includes(s)",
                           arg=sentence, timeout=10000)
    text = root.inner_text()
    assert sentence in text
    assert root.bounding_box()["height"] < page.viewport_size["height"] / 3  # no blank screen kept for the lab
    assert "实验台正在加载" not in text
    assert root.locator("input, button, table").count() == 0, "a half-built lab was left on the page"
    assert not [e for e in rec.page_errors if "Cannot read properties" in e or "TypeError" in e], rec.page_errors
    # The chapter around the lab is there and readable.
    assert page.locator("article h1").first.is_visible()
    assert "注意力" in page.locator("article").first.inner_text()


@pytest.mark.parametrize("names", [LAB_JS, ("app.js",), ("app.js", "render.js")],
                         ids=["all lab scripts", "app.js", "app.js and render.js"])
def test_when_app_js_never_comes_loading_becomes_a_chinese_sentence(new_page, site_url, names):
    rec = open_chapter(new_page, site_url, names)
    assert_said_and_readable(rec, FAULTS["load_failed"])


@pytest.mark.parametrize("missing", ["render.js", "attention.js"])
def test_when_one_lab_file_is_missing_the_lab_says_so_in_chinese(new_page, site_url, missing):
    rec = open_chapter(new_page, site_url, (missing,))
    assert_said_and_readable(rec, FAULTS["load_failed"])


def test_a_browser_without_bigint_is_told_what_it_lacks(new_page, site_url):
    rec = open_chapter(new_page, site_url, init="delete window.BigInt")
    sentence = FAULTS["browser_lacks"].replace("{what}", "BigInt")
    assert_said_and_readable(rec, sentence)


#: What the labs use beyond ES5 (attention.js browserLacks), as an older browser lacks them.
OLD_BROWSER = {"BigInt": "window.BigInt", "Array.from": "Array.from", "Object.assign": "Object.assign",
               "Object.is": "Object.is", "Math.log10": "Math.log10", "Array.fill": "Array.prototype.fill",
               "String.repeat": "String.prototype.repeat"}


def test_an_older_browser_is_told_what_it_lacks_on_every_lab_page(new_page, site_url):
    """Both labs (the shapes lab too, whose S, A, O were left empty) say the same sentence, and
    name every missing feature; nothing half-built is left."""
    rec = new_page()
    stacks = []  # Sphinx's doctools.js and the theme's script fail there too: only the lab's files count
    rec.page.on("pageerror", lambda e: stacks.append(e.stack or str(e)))
    rec.page.add_init_script("; ".join(f"delete {where}" for where in OLD_BROWSER.values()))
    sentence = FAULTS["browser_lacks"].replace("{what}", "、".join(OLD_BROWSER))
    for path in ("/book/shapes.html", "/book/lab.html"):
        rec.page.goto(site_url + path, wait_until="load")
        roots = rec.page.locator("[data-attention-lab]")
        assert roots.count() >= 1, path
        for k in range(roots.count()):
            root = roots.nth(k)
            assert root.inner_text().strip() == sentence, (path, root.inner_text())
            assert root.locator("input, button, table").count() == 0, f"a half-built lab on {path}"
            assert root.get_by_role("alert").count() == 1, path
            # No room kept for a lab that will not come: the page's text follows the sentence.
            assert root.bounding_box()["height"] < rec.page.viewport_size["height"] / 3, path
    assert not [e for e in stacks if "/attention-lab/" in e], stacks


def test_with_javascript_off_every_lab_page_says_the_lab_needs_it_and_links_the_static_tables(new_page, site_url):
    rec = new_page(java_script_enabled=False)
    links = {k: v for k, v in FAULTS["no_js_links"].items() if not k.startswith("_")}
    said = FAULTS["no_js"]
    for key, (title, _) in links.items():
        said = said.replace("{" + key + "}", title)
    hrefs = set()
    for path in ("/book/f11-attention.html", "/book/lab.html", "/book/shapes.html"):
        rec.page.goto(site_url + path)
        roots = rec.page.locator("[data-attention-lab]")
        assert roots.count() >= 1, path
        for k in range(roots.count()):
            shown = roots.nth(k).inner_text().strip()
            assert shown == said, (path, shown)  # and not "实验台正在加载……"
            hrefs |= set(roots.nth(k).locator("a").evaluate_all("as => as.map(a => a.href)"))
            assert roots.nth(k).bounding_box()["height"] < rec.page.viewport_size["height"] / 3, path  # no blank screen
        assert rec.page.locator("article h1").first.is_visible(), path  # the page itself reads as usual
    # Every page's links reach the chapter's sections that work the baseline out without JavaScript,
    # and each link's text is that section's title.
    assert len(hrefs) == len(links), hrefs
    for title, href in links.values():
        rec.page.goto(site_url + "/book/" + href)
        section = rec.page.locator(f"section#{href.split('#')[1]}")
        assert section.locator("> h2").inner_text().removesuffix("#").strip() == title, href
        assert section.locator("math, pre").count() > 0, href  # the worked numbers, as text and formulas


# --- the copy button ------------------------------------------------------------------------------

@pytest.mark.parametrize("breakage", [
    "navigator.clipboard.writeText = () => { throw new Error('blocked at once'); }",
    "navigator.clipboard.writeText = () => undefined",
    "navigator.clipboard.writeText = () => Promise.reject(new Error('denied'))",
], ids=["throws", "no promise", "rejects"])
def test_the_copy_button_survives_any_clipboard_failure_and_shows_the_link(new_page, site_url, breakage):
    rec = new_page()
    rec.page.add_init_script(f"window.addEventListener('DOMContentLoaded', () => {{ {breakage}; }})")
    rec.page.goto(site_url + CHAPTER)
    rec.page.wait_for_selector(READY, timeout=15000)
    root = rec.page.locator("[data-attention-lab]").first
    root.locator('button[data-lab-action="copy_link"]').click()
    field = root.locator("[data-lab-link]")
    field.wait_for(state="visible")
    assert field.input_value().startswith(site_url + CHAPTER + "?X=")
    rec.page.wait_for_function("() => document.activeElement && document.activeElement.matches('[data-lab-link]')")
    assert STRINGS["twin"]["link_copied"] not in root.inner_text()
    assert rec.page_errors == [], rec.page_errors
    # The button still works after the failure.
    root.locator('button[data-lab-action="copy_link"]').click()
    assert rec.page_errors == []


# --- the theme's stylesheet missing ---------------------------------------------------------------

def test_the_binder_logo_keeps_a_sane_size_without_the_theme_css(new_page, site_url):
    rec = new_page(fresh=True)
    rec.page.route(re.compile(r"/_static/f11-theme\.css(\?|$)"), lambda route: route.fulfill(status=404, body=""))
    rec.page.goto(site_url + CHAPTER, wait_until="load")
    logo = rec.page.locator('img[src$="logo_binder.svg"]').first
    box = logo.bounding_box()
    assert box is not None and box["width"] <= 48 and box["height"] <= 48, box
    assert any("f11-theme.css" in f for f in rec.failed), "the theme CSS was not actually missing"


# --- links ----------------------------------------------------------------------------------------

def lab_notes(new_page, site_url, query: str) -> list[str]:
    rec = new_page()
    rec.page.goto(site_url + CHAPTER + "?" + query)
    rec.page.wait_for_selector(READY, timeout=15000)
    text = rec.page.locator("[data-attention-lab] [data-lab-notes]").first.inner_text()
    return [line for line in text.splitlines() if line.strip()]


def test_a_clamped_value_from_a_link_gives_one_note(new_page, site_url):
    notes = lab_notes(new_page, site_url, "X=9,1,1,-1")
    about = [n for n in notes if "X[0,0]" in n]
    assert len(about) == 1, notes
    assert "9 已改为 3" in about[0]


def test_a_bad_causal_in_a_link_is_named_as_on_or_off_not_as_a_number(new_page, site_url):
    notes = lab_notes(new_page, site_url, "causal=maybe")
    assert FAULTS["link_causal"] + "maybe" in notes, notes
    assert not any("不是可用的数" in n for n in notes)


def test_repeated_link_keys_are_noted_and_the_last_one_is_used(new_page, site_url):
    rec = new_page()
    rec.page.goto(site_url + CHAPTER + "?d_k=4&d_k=8&d_k=16")
    rec.page.wait_for_selector(READY, timeout=15000)
    root = rec.page.locator("[data-attention-lab]").first
    notes = root.locator("[data-lab-notes]").inner_text()
    assert notes.count(FAULTS["link_repeated"] + "d_k") == 1, notes
    assert root.locator('input[data-param-text="d_k"]').input_value() == "16"


def test_start_values_changed_by_lab_config_are_noted_once_on_the_page(new_page, site_url):
    rec = new_page()
    page_url = site_url + "/f11-start-notes.html"
    html = standalone_html({"X[0,0]": 99, "causal": "no"}, static=site_url + "/_static/attention-lab/")
    rec.page.route(page_url, lambda route: route.fulfill(status=200, content_type="text/html", body=html))
    rec.page.goto(page_url)
    rec.page.wait_for_selector(READY, timeout=15000)
    root = rec.page.locator("[data-attention-lab]").first
    notes = [n for n in root.locator("[data-lab-notes]").inner_text().splitlines() if "X[0,0]" in n]
    assert notes == ["X[0,0] 的范围是 −3 到 3，99 已改为 3"], notes
    assert not root.locator('input[data-param="causal"]').is_checked()
