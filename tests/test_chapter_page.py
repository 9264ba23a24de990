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
    pasted = re.findall(r'<span class="(?:pasted-text|output text_plain)">([^<]*)</span>', html)
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
    # Printed labels in Chinese take the full-width colon, as the prose does (issue 28).
    assert "A 的形状：(3, 2)" in text and "O 的形状：(3, 3)" in text


def test_no_error_or_stderr_outputs_on_the_page(built_site):
    html = page_html(built_site)
    for marker in ("output error", "output traceback", "output stderr", "Traceback (most recent call last)"):
        assert marker not in html, f"the chapter page shows {marker!r}"


def test_build_log_has_no_missing_glyphs(build_log):
    assert "Glyph" not in build_log


def test_formula_is_rendered_as_mathml_in_the_page(built_site):
    """The chapter's formula arrives as MathML written at build time: no maths script to load."""
    html = page_html(built_site)
    blocks = re.findall(r'<math alttext="([^"]*)"[^>]*display="block"', html)
    assert any(r"\mathrm{softmax}" in tex and r"\sqrt{d_k}" in tex for tex in blocks), blocks
    assert "<merror" not in html, "a formula failed to convert to MathML"
    assert not re.search(r'<script[^>]+src="[^"]*mathjax', html, flags=re.I)


def test_every_figure_image_is_in_the_site(built_site):
    html = page_html(built_site)
    images = re.findall(r'<img[^>]+src="([^"]+)"', html)
    figures = [src for src in images if src.startswith("../_images/") and src.endswith((".svg", ".png"))]
    # Q/K/V, S/A/O, and S/A/O for each of the two contrasts (SVG: sharp, text stays text).
    assert len(figures) >= 4, images
    for src in images:
        assert not src.startswith(("http:", "https:", "//")), src
        path = (built_site / "book" / src.split("?")[0]).resolve()
        assert path.exists() and path.stat().st_size > 1000, f"missing image {src}"


def test_landing_page_links_to_the_chapter(built_site):
    html = page_html(built_site, "book/index.html")
    assert re.search(r'href="f11-attention\.html"', html)
    assert re.search(r'href="lab\.html"', html)


def test_landing_page_lists_every_page_and_every_downloadable_notebook(built_site):
    """The index names each page of the book (the shapes page too) and links each .ipynb the site
    publishes, so none is found only by accident (issue 28: shapes.html and shapes.ipynb were missing)."""
    html = page_html(built_site, "book/index.html")
    for page in ("f11-attention", "notation", "lab", "shapes"):
        assert re.search(rf'href="{page}\.html"', html), page
    notebooks = sorted(p.name for p in (built_site / "_notebooks").glob("*.ipynb"))
    assert "shapes.ipynb" in notebooks, notebooks
    for name in notebooks:
        assert f'href="../_notebooks/{name}"' in html, name


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


def test_readers_see_no_draft_tags_grey_cells_or_corner_quotes(built_site):
    text = visible_text(page_html(built_site))
    for leftover in ("[TR]", "本书之外", "灰色", "「", "」", "位置旋转"):
        assert leftover not in text, f"the chapter still shows {leftover!r}"


def test_origins_cite_bahdanau_and_luong_as_well_as_vaswani(built_site):
    html = page_html(built_site)
    problem = visible_text(section(html, "f11-problem", "f11-x"))
    for name in ("Bahdanau", "Luong", "Vaswani", "缩放点积注意力", "多头注意力"):
        assert name in problem, name
    text = visible_text(html)
    for title in ("Neural Machine Translation by Jointly Learning to Align and Translate",
                  "Effective Approaches to Attention-based Neural Machine Translation",
                  "The Illustrated Transformer", "动手学深度学习"):
        assert title in text, title


def test_the_real_core_code_is_shown_from_core_py(built_site):
    from pathlib import Path

    import attention_lab.core as core

    text = visible_text(page_html(built_site))
    source = Path(core.__file__).read_text("utf-8")
    for line in ("def softmax(", "def scaled_dot_product_attention(",
                 "S = Q @ K.T / np.sqrt(d_k) + M", "exps = np.exp(scores - row_max)"):
        assert line in source and line in text, line
    assert "Wq.T.T" not in text


def test_new_examples_show_their_computed_numbers(built_site):
    from attention_lab.chapter import chapter_numbers

    numbers = chapter_numbers()
    pasted = re.findall(r'<span class="(?:pasted-text|output text_plain)">([^<]*)</span>', page_html(built_site))
    # The double-projection mistake with nn.MultiheadAttention, the Wq = Wk = I variant,
    # the boolean-mask warning and a computing self-check: each shown as computed.
    for key, fmt in (("mha_double_o10", "g"), ("mha_double_o11", "g"), ("eye_a11", ".10f"),
                     ("bm_sdpa_a10", ".10f"), ("sc_dk8_a10", ".4f"), ("mh_d_model", "")):
        assert format(numbers[key], fmt) in pasted, key


def test_data_flow_figure_and_twelve_self_checks(built_site):
    html = page_html(built_site)
    assert 'id="fig-f11-flow"' in html
    checks = section(html, "f11-selfcheck", "f11-further")
    assert len(re.findall(r"<details\b", checks)) >= 12
    assert "先预测" in visible_text(checks) and "揭晓" in visible_text(checks)


def test_notation_and_landing_page_state_the_corrected_facts(built_site):
    notation = visible_text(page_html(built_site, "book/notation.html"))
    assert "KV 缓存" in notation and "注意力权重" in notation and "注意力分数" in notation
    assert "share" not in notation
    index = visible_text(page_html(built_site, "book/index.html"))
    assert "灰色" not in index and "已挡住" in index


@pytest.mark.parametrize("page", [CHAPTER, "book/lab.html", "book/notation.html"])
def test_prose_writes_negative_numbers_with_one_minus_sign(built_site, page):
    """Outside code, a negative number uses U+2212 (−), never the ASCII hyphen."""
    html = re.sub(r"<(pre|code)\b.*?</\1>", " ", page_html(built_site, page), flags=re.S)
    prose = visible_text(html)
    assert not re.findall(r"(?<![\w.])-\d", prose), re.findall(r".{10}(?<![\w.])-\d.{5}", prose)


# ---------------------------------------------------------------- the five figures on a phone and a desktop (issue 17)

#: The chapter's figures, by their ``name:`` (labels the prose refers to).
FIGURES = ("fig-f11-qkv", "fig-f11-sao", "fig-f11-flow", "fig-f11-plane", "fig-f11-only-wv", "fig-f11-only-wq")

#: For each figure as the page shows it: an inlined copy of its SVG, drawn at the size the
#: <img> is shown at, gives every text's size on screen (font-size times the scale of its
#: screen matrix, rotated labels too) and whether it lies inside the picture.
_FIGURE_TEXTS = r"""async (ids) => {
  const out = [];
  for (const id of ids) {
    const fig = document.getElementById(id);
    if (!fig) { out.push({id, missing: true}); continue; }
    fig.scrollIntoView();
    const img = fig.querySelector('img');
    await img.decode().catch(() => null);
    const box = img.getBoundingClientRect();
    const text = await (await fetch(img.currentSrc)).text();
    const holder = document.createElement('div');
    holder.style.cssText = `position:absolute; left:${box.left + scrollX}px; top:${box.top + scrollY}px;` +
                           `width:${box.width}px; height:${box.height}px; visibility:hidden`;
    holder.innerHTML = text.slice(text.indexOf('<svg'));
    document.body.append(holder);
    const svg = holder.querySelector('svg');
    svg.setAttribute('width', box.width); svg.setAttribute('height', box.height);
    const frame = svg.getBoundingClientRect();
    const texts = [...svg.querySelectorAll('text')].map(t => {
      const m = t.getScreenCTM(), r = t.getBoundingClientRect();
      return {text: t.textContent.trim(), px: parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b),
              inside: r.left >= frame.left - 1 && r.right <= frame.right + 1 &&
                      r.top >= frame.top - 1 && r.bottom <= frame.bottom + 1};
    });
    holder.remove();
    out.push({id, texts, shown: box.width, natural: img.naturalWidth, right: box.right,
              column: fig.clientWidth, overflow: fig.scrollWidth - fig.clientWidth});
  }
  return out;
}"""


@pytest.mark.browser
@pytest.mark.parametrize("width, height, smallest", [(360, 640, 12.0), (1024, 768, 14.0), (1920, 1080, 14.0)])
def test_every_label_of_the_five_figures_is_readable_and_inside_the_column(site_url, new_page, width, height,
                                                                           smallest):
    """At 360x640 (a phone) no text of a figure (cell values, titles, ticks, colour-bar ticks,
    已挡住, the data flow's shapes) is under 12 px (issue 29; it was 10.7) and no figure is wider than the screen; on a
    desktop the figures are shown at their own size (neither blown up nor shrunk) with every
    text >= 14 px.  Every text lies inside its picture (nothing cut at the edge)."""
    phone = width < 600
    rec = new_page(width=width, height=height, **({"has_touch": True, "is_mobile": True} if phone else {}))
    rec.page.goto(f"{site_url}/{CHAPTER}", wait_until="networkidle")
    figures = rec.page.evaluate(_FIGURE_TEXTS, list(FIGURES))
    assert [f["id"] for f in figures if f.get("missing")] == []
    report = []
    for f in figures:
        texts = f["texts"]
        small = sorted((round(t["px"], 1), t["text"]) for t in texts)[:3]
        report.append(f"{f['id']}: {len(texts)} texts, smallest {small[0][0]} px, shown {f['shown']:.0f}"
                      f"/{f['natural']} px")
        assert len(texts) >= 20, f"{f['id']}: its SVG text was not found ({len(texts)} texts)"
        assert small[0][0] >= smallest, f"{f['id']} at {width} px: texts under {smallest} px: {small}"
        outside = [t["text"] for t in texts if not t["inside"]]
        assert outside == [], f"{f['id']}: texts cut at the picture's edge: {outside}"
        assert f["overflow"] <= 0 and f["right"] <= width, f"{f['id']} is wider than the screen at {width} px"
        if not phone:
            assert abs(f["shown"] - f["natural"]) <= 1, f"{f['id']}: shown at {f['shown']} of {f['natural']} px"
    print(f"\n{width}x{height}: " + "; ".join(report))
    assert rec.page.evaluate("document.documentElement.scrollWidth") <= width
    # The masked cells' label and the data flow's shapes are among the measured texts.
    every = [t["text"] for f in figures for t in f["texts"]]
    assert any("已挡住" in t for t in every) and "S [n, m]" in every and "≤−20" in every
