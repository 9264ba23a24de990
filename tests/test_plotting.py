"""The chapter's heatmaps: one picture language with the lab (fixed scales, legends,
hatched and labelled masked cells, readable text), sharp on screen and paper."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from matplotlib.colors import to_rgb

from attention_lab import attention, baseline
from attention_lab.plotting import (MASKED_LABEL, PNG_SCALE, SCALES, AttentionFigure, contrast_ratio,
                                    plot_attention)

ROOT = Path(__file__).resolve().parents[1]


def _cell_text(figure: AttentionFigure, name: str, i: int, j: int) -> str:
    return figure._texts[name][i][j].get_text()


def test_masked_cells_are_hatched_and_labelled_and_no_other_cell_is():
    result = attention(**baseline())  # causal: row 0 may not read column 1
    figure = plot_attention(result, tables=("S", "A", "O"))
    for name in ("S", "A"):
        for i in range(2):
            for j in range(2):
                patch = figure._masks[name][i][j]
                masked = bool(np.isneginf(result.S[i, j]))
                assert patch.get_visible() == masked
                assert (MASKED_LABEL in _cell_text(figure, name, i, j)) == masked
                if masked:
                    assert patch.get_hatch() and "/" in patch.get_hatch()
    assert _cell_text(figure, "S", 0, 1) == f"−∞\n{MASKED_LABEL}"
    assert _cell_text(figure, "A", 0, 1) == f"0\n{MASKED_LABEL}"
    assert not any(p.get_visible() for row in figure._masks["O"] for p in row)
    # Without the mask nothing is hatched, and the figure updates in place.
    tables = baseline()
    tables["causal"] = False
    figure.update(attention(**tables))
    assert not any(p.get_visible() for name in ("S", "A") for row in figure._masks[name] for p in row)
    assert MASKED_LABEL not in _cell_text(figure, "S", 0, 1)


def test_each_kind_of_table_keeps_one_fixed_colour_scale_with_a_colour_bar():
    first = attention(**baseline())
    tables = baseline()
    tables["X"] = tables["X"] * 3  # much larger scores and outputs
    second = attention(**tables)
    figure = plot_attention(first, tables=("Q", "K", "V", "S", "A", "O"))
    before = {n: (figure._images[n].norm.vmin, figure._images[n].norm.vmax) for n in figure.tables}
    figure.update(second)
    for name in figure.tables:
        norm = figure._images[name].norm
        assert (norm.vmin, norm.vmax) == before[name] == SCALES[name], name
        assert figure._images[name].colorbar is not None, f"{name} has no colour bar"
    # The same value gets the same colour in any figure of the same kind of table.
    other = plot_attention(second, tables=("S",))
    assert figure.cell_colour("S", 0.5) == other.cell_colour("S", 0.5)


def test_python_figures_and_the_lab_use_the_same_scales():
    js = (ROOT / "attention_lab" / "static" / "attention-lab" / "render.js").read_text("utf-8")
    body = re.search(r"var SCALES = \{([^}]*)\}", js).group(1)
    in_js = {name: (float(lo), float(hi)) for name, lo, hi in
             re.findall(r"(\w+): \[(-?[\d.]+), (-?[\d.]+)\]", body)}
    assert in_js == SCALES


def test_every_value_is_readable_on_its_cell_at_wcag_aa():
    rng = np.random.default_rng(11)
    figure = plot_attention(attention(**baseline()), tables=("Q", "K", "V", "S", "A", "O"))
    worst = 21.0
    for _ in range(40):
        tables = baseline()
        for key in ("X", "Wq", "Wk", "Wv"):
            tables[key] = tables[key] + rng.normal(0, 2.5, size=tables[key].shape)
        tables["causal"] = bool(rng.integers(0, 2))
        figure.update(attention(**tables))
        for name in figure.tables:
            for i, row in enumerate(figure._texts[name]):
                for j, text in enumerate(row):
                    if figure._masks[name][i][j].get_visible():
                        back = (1.0, 1.0, 1.0)  # the label's white box over the hatching
                    else:
                        back = figure.cell_colour(name, float(figure._images[name].get_array()[i, j]))
                    worst = min(worst, contrast_ratio(to_rgb(text.get_color()), back))
    print(f"\nlowest text contrast over 40 random cases: {worst:.2f}:1")
    assert worst >= 4.5


def test_svg_keeps_chinese_as_text_with_font_fallbacks():
    svg = plot_attention(attention(**baseline())).to_svg()
    texts = re.findall(r"<text\b[^>]*>(.*?)</text>", svg, re.S)
    joined = "".join(texts)
    for word in ("S 分数表", "A 份额表", MASKED_LABEL, "−∞"):
        assert word in joined or all(part in joined for part in word.split()), word
    families = set(re.findall(r"font-family: ([^;\"]+)", svg))
    assert families and all("Noto Sans CJK SC" in f and "Microsoft YaHei" in f and f.endswith("sans-serif")
                            for f in families)
    # Text is not turned into glyph outlines (matplotlib would define them as <path id="Font-xx">).
    assert not re.search(r'<path id="[A-Za-z]+(?:-[A-Za-z]+)*-[0-9a-f]+"', svg)


def test_png_is_drawn_at_twice_the_shown_size():
    import io

    from PIL import Image

    figure = plot_attention(attention(**baseline()))
    width_px = figure.figure.get_figwidth() * figure.figure.dpi
    image = Image.open(io.BytesIO(figure.to_png()))
    assert image.width == pytest.approx(width_px * PNG_SCALE, abs=2)


def _inside_figure(figure) -> list[str]:
    """Texts of a matplotlib figure that reach past its edge (drawn, so sizes are final)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)  # the figure is made without pyplot: draw it on a canvas here
    canvas.draw()
    renderer = canvas.get_renderer()
    box = figure.bbox
    out = []
    for text in figure.findobj(lambda a: hasattr(a, "get_text") and hasattr(a, "get_window_extent")):
        if not text.get_visible() or not text.get_text().strip():
            continue
        e = text.get_window_extent(renderer)
        if e.x0 < box.x0 - 1 or e.x1 > box.x1 + 1 or e.y0 < box.y0 - 1 or e.y1 > box.y1 + 1:
            out.append(text.get_text())
    return out


def test_three_tables_are_drawn_two_then_one_in_the_middle_for_a_phone():
    """Two panels per row (a row of three, scaled into a 360 px phone's column, left labels at
    4-6 px): S and A side by side, O centred under them, each the same size; no text leaves
    the figure."""
    figure = plot_attention(attention(**baseline()), tables=("S", "A", "O"))
    assert figure.columns == 2
    s, a, o = (ax.get_position() for ax in figure.axes)
    assert s.y0 == pytest.approx(a.y0) and o.y1 < s.y0, "S and A are not one row above O"
    assert s.x1 <= a.x0 and (o.x0 + o.x1) / 2 == pytest.approx(0.5, abs=0.02), "O is not in the middle"
    assert o.width == pytest.approx(s.width, rel=0.02) and a.width == pytest.approx(s.width, rel=0.02)
    assert _inside_figure(figure.figure) == []
    # One table alone, and all six (three per row), also keep every text inside.
    assert plot_attention(attention(**baseline()), tables=("S",)).columns == 1
    six = plot_attention(attention(**baseline()), tables=("Q", "K", "V", "S", "A", "O"))
    assert six.columns == 3 and _inside_figure(six.figure) == []
    row = plot_attention(attention(**baseline()), columns=3)
    assert len({round(ax.get_position().y0, 3) for ax in row.axes}) == 1


def test_a_bad_layout_is_refused_with_a_clear_message():
    result = attention(**baseline())
    with pytest.raises(ValueError, match="columns must be 1 to 3 for 3 tables"):
        plot_attention(result, columns=4)
    with pytest.raises(ValueError, match="columns must be 1 to 3"):
        plot_attention(result, columns=0)
    with pytest.raises(ValueError, match="tables is empty"):
        plot_attention(result, tables=())
    with pytest.raises(ValueError, match="unknown table"):
        plot_attention(result, tables=("S", "X"))


@pytest.mark.build
def test_chapter_heatmaps_on_the_site_are_svg_and_captions_never_say_grey(built_site):
    html = (built_site / "book" / "f11-attention.html").read_text("utf-8")
    figures = re.findall(r"<figure[^>]*>.*?</figure>", html, re.S)
    heatmaps = [f for f in figures if re.search(r'alt="[^"]*热力图', f)]
    assert len(heatmaps) >= 3, "the chapter's heatmap figures were not found"
    for figure in heatmaps:
        src = re.search(r'<img[^>]+src="([^"]+)"', figure).group(1)
        assert src.endswith(".svg"), f"heatmap is not SVG: {src}"
        svg = (built_site / "book" / src).resolve().read_text("utf-8")
        assert "<text" in svg
        caption = re.sub(r"<[^>]+>", "", re.search(r"<figcaption>(.*?)</figcaption>", figure, re.S).group(1))
        alt = re.search(r'alt="([^"]*)"', figure).group(1)
        assert "灰" not in caption + alt, f"a caption still calls masked cells grey: {caption} / {alt}"
