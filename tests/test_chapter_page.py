"""The built chapter page: the draft's numbers, the contrasts, figures, no errors, dropdowns."""

from __future__ import annotations

import html as html_lib
import re

import pytest

from attention_lab import attention, baseline
from attention_lab.chapter import cross_attention_example

pytestmark = pytest.mark.build

CHAPTER = "book/f11-attention.html"

#: The values the author's draft prints with ten decimals.
DRAFT_VALUES = ("0.7071067812", "0.4930686914", "1.4930686914", "0.6697615493",
                "0.3302384507", "6.6976154933", "6.6047690135")


def page_html(built_site, page=CHAPTER) -> str:
    return (built_site / page).read_text("utf-8")


def visible_text(html: str) -> str:
    """The page's text as a reader sees it (tags dropped, entities decoded)."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return html_lib.unescape(re.sub(r"<[^>]+>", "", html))


def section(html: str, start_id: str, end_id: str) -> str:
    start = html.index(f'id="{start_id}"')
    return html[start: html.index(f'id="{end_id}"', start)]


@pytest.mark.parametrize("value", DRAFT_VALUES)
def test_chapter_shows_the_drafts_ten_decimal_values(built_site, value):
    assert value in visible_text(page_html(built_site))


def test_glued_numbers_are_rendered_from_execution(built_site):
    html = page_html(built_site)
    pasted = re.findall(r'<span class="pasted-text">([^<]*)</span>', html)
    r = attention(**baseline())
    for value in (r.A[1, 0], r.A[1, 1], r.O[1, 0]):
        assert f"{value:.10f}" in pasted
    assert f"{r.scale:.6f}" in pasted  # √2 ≈ 1.414214


def test_contrasts_show_their_numbers(built_site):
    text = visible_text(page_html(built_site))
    only_wv = attention(**baseline("only_wv"))
    only_wq = attention(**baseline("only_wq"))
    # Contrast one (only Wv): shares as in the baseline, the output changes.
    assert f"{only_wv.A[1, 0]:.10f}" == f"{attention(**baseline()).A[1, 0]:.10f}"
    assert f"{only_wv.O[1, 1]:.10f}" in text
    # Contrast two (only Wq): shares change, V does not, so the output changes.
    for value in (only_wq.A[1, 0], only_wq.A[1, 1], only_wq.O[1, 0], only_wq.O[1, 1]):
        assert f"{value:.10f}" in text
    # The executed cells print which tables stay the same.
    assert "{'Q': True, 'K': True, 'V': False, 'S': True, 'A': True, 'O': False}" in text
    assert "{'Q': False, 'K': True, 'V': True, 'S': False, 'A': False, 'O': False}" in text
    assert "份额不变" in text and "当前这一次注意力分支" in text


def test_cross_attention_example_is_executed_with_its_shapes(built_site):
    text = visible_text(page_html(built_site))
    rc = cross_attention_example()
    assert rc.A.shape == (3, 2) and rc.O.shape == (3, 3)
    assert "A 的形状: (3, 2)" in text and "O 的形状: (3, 3)" in text


def test_no_error_or_stderr_outputs_on_the_page(built_site):
    html = page_html(built_site)
    for marker in ("output error", "output traceback", "output stderr", "Traceback (most recent call last)"):
        assert marker not in html, f"the chapter page shows {marker!r}"


def test_build_log_has_no_missing_glyphs(build_log):
    assert "Glyph" not in build_log


def test_mathjax_is_loaded_from_the_site(built_site):
    html = page_html(built_site)
    scripts = re.findall(r'<script[^>]+src="([^"]*mathjax[^"]*)"', html, flags=re.I)
    assert scripts, "no MathJax script on the chapter page"
    assert all(s.startswith("../_static/mathjax/") for s in scripts), scripts
    assert (built_site / "_static" / "mathjax" / "tex-chtml.js").exists()
    # The formula is there as TeX for MathJax to typeset.
    assert r"\mathrm{softmax}" in html


def test_every_figure_image_is_in_the_site(built_site):
    html = page_html(built_site)
    images = re.findall(r'<img[^>]+src="([^"]+)"', html)
    figures = [src for src in images if src.startswith("../_images/") and src.endswith(".png")]
    # Q/K/V, S/A/O, and S/A/O for each of the two contrasts.
    assert len(figures) >= 4, images
    for src in images:
        assert not src.startswith(("http:", "https:", "//")), src
        path = (built_site / "book" / src.split("?")[0]).resolve()
        assert path.exists() and path.stat().st_size > 1000, f"missing image {src}"


def test_landing_page_links_to_the_chapter(built_site):
    html = page_html(built_site, "book/index.html")
    assert re.search(r'href="f11-attention\.html"', html)
    assert re.search(r'href="lab\.html"', html)


def test_self_check_has_at_least_seven_collapsed_answers(built_site):
    checks = section(page_html(built_site), "f11-selfcheck", "f11-references")
    dropdowns = re.findall(r"<details\b[^>]*>", checks)
    assert len(dropdowns) >= 7
    assert not any(" open" in d for d in dropdowns), "answers must start collapsed"


def test_other_chapters_are_named_without_links(built_site):
    html = page_html(built_site)
    for other in ("F05", "F07", "F09", "F14", "F17", "F18", "Q007"):
        assert other in html
    assert not re.search(r'href="[^"]*(?:F0[579]|F1[2-8]|Q007)[^"]*"', html, flags=re.I)
