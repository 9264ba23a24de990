"""The chapter's data-flow figure (attention_lab.dataflow): every step and every arrow's shape is drawn."""

from __future__ import annotations

import re

from attention_lab.dataflow import ARROWS, data_flow_shapes, plot_data_flow


def svg_text(svg: str) -> str:
    """The visible text of an SVG written with svg.fonttype='none' (text stays text)."""
    return " ".join(re.sub(r"<[^>]+>", " ", t) for t in re.findall(r"<text[^>]*>.*?</text>", svg, re.S))


def test_every_step_and_shape_label_is_in_the_svg_as_text():
    svg = plot_data_flow().to_svg()
    text = svg_text(svg)
    for word in ("输入", "点积打分", "缩放", "掩码", "softmax", "加权平均", "输出"):
        assert word in text, word
    plain = [label for _a, _b, label in ARROWS if "d_" not in label]  # labels without subscripts
    assert plain and all(label in text for label in plain), plain
    assert len(re.findall(r"<path[^>]*marker|-\|>|<path", svg)) >= len(ARROWS)


def test_the_footer_states_the_given_sizes():
    text = svg_text(plot_data_flow(n=3, m=5, d_model=4, d_k=2, d_v=3).to_svg())
    assert "n = 3，m = 5" in text
    assert "本章的例子：n = m = 2" in svg_text(plot_data_flow().to_svg())


def test_shapes_with_numbers_follow_the_symbols():
    shapes = data_flow_shapes(n=3, m=2, d_model=4, d_k=2, d_v=3)
    assert shapes["QK->scale"] == "[3, 2]"
    assert shapes["V->mix"] == "V [2, 3]"
    assert shapes["X->Q"] == "[3, 4]"
    assert len(shapes) == len(ARROWS)


def test_the_figure_is_made_without_pyplot_so_a_notebook_shows_it_once():
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    figure = plot_data_flow()
    assert plt.get_fignums() == before
    assert figure._repr_svg_().lstrip().startswith("<?xml")


def test_no_label_reaches_past_the_figures_edge():
    """The labels are sized for a phone (16 pt: >= 12 px when the figure is scaled into a
    360 px screen's column); the longest ones ([n, d_model] at the sides, the footer) still fit."""
    figure = plot_data_flow().figure
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)  # the figure is made without pyplot: draw it on a canvas here
    canvas.draw()
    renderer = canvas.get_renderer()
    box = figure.bbox
    texts = [t for t in figure.findobj(lambda a: hasattr(a, "get_text") and hasattr(a, "get_window_extent"))
             if t.get_text().strip()]
    assert len(texts) >= 20
    outside = [t.get_text() for t in texts
               if not box.x0 - 1 <= t.get_window_extent(renderer).x0 <= t.get_window_extent(renderer).x1
               <= box.x1 + 1]
    assert outside == []
