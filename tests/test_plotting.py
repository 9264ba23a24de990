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


# ---------------------------------------------------------------- the vector plane (issue 25)

from attention_lab.plotting import (PLANE_COLOURS, PLANE_MUTED, TEXT_SCALE, PANEL_SIZE, FONT_SIZE,  # noqa: E402
                                    format_value, plane_figure)
from attention_lab.strings import strings  # noqa: E402


def _by_hand(X, Wq, Wk, Wv, d_k, causal):
    """The attention of one head in a few lines of numpy, apart from attention_lab.core."""
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    raw = Q @ K.T
    S = raw / np.sqrt(d_k)
    if causal:
        S = np.where(np.tril(np.ones(S.shape, dtype=bool)), S, -np.inf)
    e = np.exp(S - S.max(axis=1, keepdims=True))
    A = e / e.sum(axis=1, keepdims=True)
    return {"Q": Q, "K": K, "V": V, "raw": raw, "S": S, "A": A, "O": A @ V}


def _random_tables(rng):
    t = baseline()
    for key in ("X", "Wq", "Wk", "Wv"):
        lo, hi = (-20, 20) if key == "Wv" else (-3, 3)
        t[key] = np.round(rng.uniform(lo, hi, size=(2, 2)), 1)
    return t


def test_the_plane_figure_draws_the_numbers_of_the_computation():
    """Points, arrow tips, feet, drops, hull, o, and the written scores and shares read back from the
    figure's artists equal an attention computed by hand, at the baseline and in random states."""
    rng = np.random.default_rng(25)
    cases = [(baseline(), 2.0, True, 1)] + [(_random_tables(rng), float(rng.integers(1, 65)),
                                             bool(rng.integers(0, 2)), int(rng.integers(0, 2))) for _ in range(8)]
    plane = strings()["view"]["plane"]
    for t, d_k, causal, row in cases:
        want = _by_hand(t["X"], t["Wq"], t["Wk"], t["Wv"], d_k, causal)
        fig = plane_figure(attention(**t, d_k=d_k, causal=causal), row=row, X=t["X"])
        for kind, table in (("x", t["X"]), ("o", want["O"])):
            for i in range(2):
                assert fig.points[(kind, i)].get_xydata()[0] == pytest.approx(table[i]), (kind, i)
        for kind in ("q", "k", "v"):
            for i in range(2):
                assert fig.arrows[(kind, i)].xy == pytest.approx(tuple(want[kind.upper()][i])), (kind, i)
                assert fig.arrows[(kind, i)].xyann == (0.0, 0.0)  # from the origin
        q = want["Q"][row]
        for j in range(2):
            k = want["K"][j]
            foot = (q @ k) / (q @ q) * q
            assert fig.feet[j].get_xydata()[0] == pytest.approx(foot, abs=1e-9)
            assert fig.drops[j].get_xydata() == pytest.approx(np.array([k, foot]), abs=1e-9)
            # q·k is the foot's signed length along q times |q|.
            along = np.sign(foot @ q) * np.linalg.norm(foot)
            assert along * np.linalg.norm(q) == pytest.approx(want["raw"][row, j], abs=1e-9)
            text = fig.score_texts[j].get_text().replace("\n", "")
            assert f"= {format_value(want['raw'][row, j])}，" in text
            assert f"÷ √{format_value(d_k)} = {format_value(want['raw'][row, j] / np.sqrt(d_k))}" in text
            masked = np.isneginf(want["S"][row, j])
            share = plane["weight_masked"] if masked else f"×{format_value(want['A'][row, j])}"
            assert fig.share_texts[j].get_text() == share
        readable = want["V"][np.isfinite(want["S"][row])]
        drawn = fig.hull.get_xydata()
        assert sorted(map(tuple, drawn.round(9))) == sorted(map(tuple, readable.round(9)))
        o = want["O"][row]
        if len(readable) == 2:  # o lies on the segment between the two values, at the shares
            a, b = readable
            d, e = b - a, o - a
            assert d[0] * e[1] - d[1] * e[0] == pytest.approx(0, abs=1e-6 * (1 + np.abs(d).max() ** 2))
            assert -1e-9 <= (o - a) @ (b - a) <= (b - a) @ (b - a) + 1e-9
        else:
            assert o == pytest.approx(readable[0])


def test_a_masked_key_is_greyed_and_its_value_is_left_out_of_the_hull():
    t = baseline()
    fig = plane_figure(attention(**t), row=0, X=t["X"])  # 我 may not read 爱
    assert fig.hull.get_xydata() == pytest.approx(attention(**t).V[:1])
    assert fig.share_texts[1].get_text() == strings()["view"]["plane"]["weight_masked"]
    assert "已挡住" in fig.score_texts[1].get_text()
    for kind in ("k", "v"):
        props = fig.arrows[(kind, 1)].arrow_patch
        assert to_rgb(props.get_edgecolor()) == pytest.approx(to_rgb(PLANE_MUTED))
        assert props.get_linestyle() != "-"
    assert to_rgb(fig.arrows[("k", 0)].arrow_patch.get_edgecolor()) == pytest.approx(to_rgb(PLANE_COLOURS["k"]))


def test_the_plane_figure_uses_the_labs_colour_for_each_kind_of_vector():
    css = (ROOT / "attention_lab" / "static" / "attention-lab" / "lab.css").read_text("utf-8")
    # The first rule that sets them is the light theme's (html[data-theme="dark"] follows it).
    first = re.search(r"\{[^{}]*--al-c-x:[^{}]*\}", css).group(0)
    light = dict(re.findall(r"--al-c-(\w+):\s*(#[0-9a-fA-F]{3,6})", first))
    assert {k: to_rgb(v) for k, v in light.items()} == {k: to_rgb(v) for k, v in PLANE_COLOURS.items()}
    t = baseline()
    fig = plane_figure(attention(**t), row=1, X=t["X"])
    for kind in ("q", "k", "v"):
        assert to_rgb(fig.arrows[(kind, 1)].arrow_patch.get_edgecolor()) == pytest.approx(to_rgb(PLANE_COLOURS[kind]))
    for kind in ("x", "o"):
        assert to_rgb(fig.points[(kind, 1)].get_color()) == pytest.approx(to_rgb(PLANE_COLOURS[kind]))
    assert to_rgb(fig.hull.get_color()) == pytest.approx(to_rgb(PLANE_COLOURS["o"]))
    assert fig.hull.get_linestyle() != "-" and fig.drops[0].get_linestyle() != "-"


def test_the_plane_figure_reads_on_a_phone_like_the_heatmaps():
    """As wide as the chapter's heatmaps (two panels of PANEL_SIZE), so a 360 px phone scales both
    alike; no text under the axes' size; in random states nothing leaves the figure or its panel,
    and no glyph is missing (₀ ₁ come from DejaVu Sans, Chinese from the CJK font)."""
    import warnings

    rng = np.random.default_rng(7)
    heatmap = plot_attention(attention(**baseline()))
    smallest = FONT_SIZE * TEXT_SCALE["axis"]
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*[Gg]lyph.*missing.*")
        for k in range(8):
            t = baseline() if k == 0 else _random_tables(rng)
            fig = plane_figure(attention(**t, causal=bool(k % 3)), row=k % 2, X=t["X"])
            assert fig.figure.get_figwidth() == pytest.approx(heatmap.figure.get_figwidth()) == 2 * PANEL_SIZE
            texts = [a for a in fig.figure.findobj(lambda a: hasattr(a, "get_fontsize") and hasattr(a, "get_text"))
                     if a.get_text().strip()]
            assert min(a.get_fontsize() for a in texts) >= smallest - 1e-9
            assert _inside_figure(fig.figure) == []  # (drawn: a missing glyph would warn here)
    svg = plane_figure(attention(**baseline()), X=baseline()["X"]).to_svg()
    joined = "".join(re.findall(r"<text\b[^>]*>(.*?)</text>", svg, re.S))
    for word in ("打分", "混合", "q₁·k₀", "÷ √2 = 0.707", "×0.67", "o₁ 爱"):
        assert word in joined, word
    assert all("Noto Sans CJK SC" in f and f.endswith("sans-serif") for f in re.findall(r"font-family: ([^;\"]+)", svg))


def test_the_plane_figure_refuses_vectors_that_are_not_two_wide():
    from attention_lab.chapter import cross_attention_example

    with pytest.raises(ValueError, match="two numbers wide; got widths Q 2, K 2, V 3"):
        plane_figure(cross_attention_example())
    with pytest.raises(ValueError, match="row must be 0 to 1"):
        plane_figure(attention(**baseline()), row=2)


def test_a_share_too_small_for_a_cell_shows_its_bound_and_a_masked_one_0():
    """Issue 28: the figure's A cells write a saturated share as the lab's do (<0.001, >0.999), never 0."""
    X = np.array([[3.0, 3.0], [3.0, -3.0]])
    Wq, Wk, Wv = np.array([[3.0, 3.0], [-3.0, 3.0]]), np.array([[3.0, 3.0], [3.0, -3.0]]), np.array([[5.0, 10.0], [5.0, -10.0]])
    open_row = AttentionFigure(attention(X, Wq, Wk, Wv, d_k=2, causal=False))
    assert [t.get_text() for t in open_row._texts["A"][1]] == [">0.999", "<0.001"]
    masked = AttentionFigure(attention(X, Wq, Wk, Wv, d_k=2, causal=True))
    assert masked._texts["A"][0][1].get_text().startswith("0\n")  # masked: exactly 0, with its label


@pytest.mark.parametrize("make", ["attention", "plane", "data_flow"])
def test_the_same_figure_rendered_twice_is_byte_identical_without_date_or_random_ids(make):
    """Two builds of one commit give the same chapter SVGs (issue 26, item 10): matplotlib's
    svg.hashsalt makes the clip-path ids from the content, metadata Date=None drops the date."""
    from attention_lab.dataflow import plot_data_flow

    def render():
        if make == "attention":
            return plot_attention(attention(**baseline())).to_svg()
        if make == "plane":
            return plane_figure(attention(**baseline()), X=baseline()["X"]).to_svg()
        return plot_data_flow().to_svg()

    first, second = render(), render()
    assert first == second
    assert "<dc:date>" not in first
