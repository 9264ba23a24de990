"""The whole website: builds with -W, Chinese throughout, self-contained, searchable."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.build

PAGES = ["book/index.html", "book/f11-attention.html", "book/lab.html"]


def test_build_log_has_no_warnings_and_no_missing_glyphs(build_log):
    assert build_log, "build log is empty"
    assert "build succeeded" in build_log
    assert not re.search(r"Glyph .* missing", build_log)
    assert "WARNING" not in build_log.replace("[IPKernelApp] WARNING", "")


@pytest.mark.parametrize("page", PAGES)
def test_every_page_is_chinese_and_loads_scripts_only_from_the_site(built_site, page):
    html = (built_site / page).read_text("utf-8")
    assert '<html lang="zh-CN"' in html
    external = re.findall(r'<(?:script|link|img)[^>]+(?:src|href)="((?:https?:)?//[^"]+)"', html)
    assert external == [], f"{page} loads from outside the site: {external}"
    if page == "book/f11-attention.html":
        assert re.search(r'<script[^>]+src="\.\./_static/mathjax/tex-chtml\.js', html)


def test_mathjax_ships_with_the_site(built_site):
    assert (built_site / "_static" / "mathjax" / "tex-chtml.js").stat().st_size > 100_000
    assert (built_site / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").is_dir()


def test_search_index_segments_chinese_words(built_site):
    text = (built_site / "searchindex.js").read_text("utf-8")
    index = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    for word in ("注意力", "份额"):
        assert word in index["terms"], f"{word} is not a search term"


@pytest.mark.browser
def test_search_page_finds_shares_in_the_chapter(site_url, new_page):
    rec = new_page()
    rec.page.goto(f"{site_url}/search.html?q=%E4%BB%BD%E9%A2%9D")  # 份额
    rec.page.wait_for_selector("#search-results li a", timeout=15000)
    links = rec.page.eval_on_selector_all("#search-results li a", "els => els.map(e => e.href)")
    assert any("f11-attention" in href for href in links), links
    assert rec.external_requests() == []


@pytest.mark.browser
@pytest.mark.parametrize("page", PAGES)
def test_pages_render_offline_with_no_console_errors(site_url, new_page, page):
    rec = new_page()
    rec.page.goto(f"{site_url}/{page}", wait_until="networkidle")
    assert rec.external_requests() == []
    assert rec.failed == []
    assert rec.console_errors == [] and rec.page_errors == []
    if page == "book/f11-attention.html":
        # MathJax from _static turned the TeX into rendered math.
        rec.page.wait_for_selector("mjx-container", timeout=15000)


def test_ipynb_versions_are_generated_from_the_md_and_linked(built_site):
    import jupytext
    import nbformat

    index = (built_site / "book" / "index.html").read_text("utf-8")
    for stem in ("f11-attention", "lab"):
        assert f'href="../_notebooks/{stem}.ipynb"' in index
        notebook = nbformat.read(built_site / "_notebooks" / f"{stem}.ipynb", as_version=4)
        nbformat.validate(notebook)
        source = jupytext.read(ROOT / "book" / f"{stem}.md")
        assert [c.source for c in notebook.cells] == [c.source for c in source.cells]
        assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code")


@pytest.mark.browser
@pytest.mark.parametrize("page", PAGES + ["book/notation.html"])
def test_pages_do_not_scroll_sideways_on_a_phone(site_url, new_page, page):
    rec = new_page(width=375, height=800)
    rec.page.goto(f"{site_url}/{page}", wait_until="networkidle")
    rec.page.wait_for_timeout(500)  # MathJax typesets after load
    width = rec.page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 375, f"{page} is {width}px wide at a 375px screen"


@pytest.mark.browser
def test_with_the_network_cut_off_the_chapters_sliders_still_recompute(site_url, new_page):
    rec = new_page()
    # Everything that is not this site fails, as on a school network with no internet.
    rec.page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(site_url)
                   else route.abort("internetdisconnected"))
    rec.page.goto(f"{site_url}/book/f11-attention.html", wait_until="networkidle")
    cell = rec.page.locator('[data-attention-lab] td[data-matrix="A"][data-row="1"][data-col="0"]').first
    before = float(cell.get_attribute("data-value"))
    slider = rec.page.locator('[data-attention-lab] input[data-param="Wq[0,0]"]').first
    slider.focus()
    for _ in range(10):
        slider.press("ArrowRight")  # 0.5 -> 1.0 in steps of 0.05
    from attention_lab import attention, baseline

    tables = baseline()
    tables["Wq"][0, 0] = 1.0
    expected = attention(**tables).A[1, 0]
    after = float(cell.get_attribute("data-value"))
    assert after != before and after == pytest.approx(expected, abs=1e-9)
    assert rec.console_errors == [] and rec.page_errors == []
