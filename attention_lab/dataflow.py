"""The chapter's data-flow figure: one head of scaled dot-product attention, with shapes on every arrow.

``X → XWq, XWk, XWv → QKᵀ → ÷√d_k → +M → softmax → ×V``.  Drawn with
matplotlib (Chinese labels through :mod:`attention_lab.fonts`); nothing is
computed here except the shapes that the labels print.
"""

from __future__ import annotations

from .strings import strings
from .strings import text as _text

__all__ = ["ARROWS", "DataFlowFigure", "data_flow_shapes", "plot_data_flow"]

#: (from box, to box, shape label) for every arrow of the figure, in reading order.
#: One X box feeds all three projections (self-attention), so its three arrows carry the
#: same shape: K and V have X's rows, m = n (the footer says so).
ARROWS = (
    ("X", "Q", "[n, d_model]"),
    ("X", "K", "[n, d_model]"),
    ("X", "V", "[n, d_model]"),
    ("Q", "QK", "Q [n, d_k]"),
    ("K", "QK", "K [m, d_k]"),
    ("QK", "scale", "[n, m]"),
    ("scale", "mask", "[n, m]"),
    ("mask", "softmax", "S [n, m]"),
    ("softmax", "mix", "A [n, m]"),
    ("V", "mix", "V [m, d_v]"),
    ("mix", "out", "O [n, d_v]"),
)


def data_flow_shapes(n: int = 2, m: int | None = None, d_model: int = 2, d_k: int = 2, d_v: int = 2) -> dict:
    """Each arrow's shape with the symbols replaced by numbers (the chapter's: all 2).

    >>> data_flow_shapes()["mask->softmax"]
    'S [2, 2]'
    """
    m = n if m is None else m
    values = {"d_model": d_model, "d_k": d_k, "d_v": d_v, "n": n, "m": m}
    out = {}
    for a, b, label in ARROWS:
        text = label
        for name in ("d_model", "d_k", "d_v", "n", "m"):  # longest names first
            text = text.replace(name, str(values[name]))
        out[f"{a}->{b}"] = text
    return out


#: name: (x centre, y centre, text), in inches on a portrait figure (reads top to bottom,
#: so it stays legible on a phone as well as in the desktop text column).
_PLACES = {"X": (2.85, 7.55), "Q": (0.9, 6.2), "K": (2.85, 6.2), "V": (4.8, 6.2), "QK": (1.9, 4.8),
           "scale": (1.9, 3.62), "mask": (1.9, 2.44), "softmax": (1.9, 1.26), "mix": (4.5, 1.26), "out": (4.5, 0.05)}
#: The boxes' text is strings_zh.json's "dataflow" "boxes".
_BOXES = {name: (x, y, strings()["dataflow"]["boxes"][name]) for name, (x, y) in _PLACES.items()}
_W, _H = 1.72, 0.55
_SIZE = (5.7, None)  # width in inches; the height follows the content
#: Shape labels and the footer (points); the boxes' text is half a point larger.  The figure
#: is shown at its own size (547 px wide) in a desktop column and scaled to about 0.76 in a
#: 360 px phone's, where 16 pt gives 12.2 px: no text of it under 12 px there (issue 29).
FONT_SIZE = 16.0


def _label(text: str) -> str:
    """Labels are plain text (no mathtext), written as the chapter's code writes names (Wq, d_k),
    so the SVG keeps them as searchable, selectable text."""
    return text


class DataFlowFigure:
    """The data-flow figure; Jupyter and myst-nb show it as SVG (sharp at any width, text kept as text)."""

    def __init__(self, figure):
        self.figure = figure

    def __repr__(self) -> str:  # the text/plain form (e.g. in a terminal): the arrows and their shapes
        return _text("dataflow.text", arrows=_text("punctuation.semicolon").join(f"{a} → {b} {label}" for a, b, label in ARROWS))

    def to_svg(self) -> str:
        import io

        import matplotlib as mpl

        from .plotting import SVG_METADATA, SVG_RC, embed_cjk_font  # text as text; no date, no random ids

        buffer = io.StringIO()
        with mpl.rc_context(SVG_RC):
            self.figure.savefig(buffer, format="svg", metadata=SVG_METADATA)
        return embed_cjk_font(buffer.getvalue())  # its Chinese glyphs with it (no system font needed)

    def _repr_svg_(self) -> str:
        return self.to_svg()


def plot_data_flow(n: int | None = 2, m: int | None = None, d_model: int = 2, d_k: int = 2, d_v: int = 2,
                   font_size: float = FONT_SIZE) -> DataFlowFigure:
    """The figure: a box per step, each arrow labelled with its table's shape ``[rows, columns]``.

    With ``n`` given (default 2, the chapter's example), a footer states the example's numbers;
    ``n=None`` leaves the shapes symbolic.  Returns a :class:`DataFlowFigure` (``.figure`` is the
    matplotlib Figure, made without pyplot, so a notebook shows it exactly once).
    """
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    from .fonts import use_cjk_font

    family = [use_cjk_font(), "DejaVu Sans"]  # DejaVu for glyphs the CJK font lacks (ᵀ)
    bottom, top = (-1.38 if n is not None else -0.4), _BOXES["X"][1] + _H / 2 + 0.12
    fig = Figure(figsize=(_SIZE[0], top - bottom))  # one data unit = one inch: no distortion
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, _SIZE[0])
    ax.set_ylim(bottom, top)
    ax.axis("off")
    for name, (x, y, text) in _BOXES.items():
        face = "#fde8c8" if name in ("X", "out") else ("#dbe9f6" if name in ("Q", "K", "V") else "#eeeeee")
        width = _W * 0.92 if name in ("Q", "K", "V") else _W
        ax.add_patch(FancyBboxPatch((x - width / 2, y - _H / 2), width, _H, boxstyle="round,pad=0.05",
                                    facecolor=face, edgecolor="#333333", linewidth=1.2))
        ax.text(x, y, text, ha="center", va="center", fontsize=font_size + 0.5, fontfamily=family)

    g = 0.1  # gap between a box and an arrow's end

    def bottom(name, dx=0.0):
        x, y, _ = _BOXES[name]
        return (x + dx, y - _H / 2 - g)

    def top(name, dx=0.0):
        x, y, _ = _BOXES[name]
        return (x + dx, y + _H / 2 + g)

    def side(name, right=True):
        x, y, _ = _BOXES[name]
        return (x + (_W / 2 + g) * (1 if right else -1), y)

    ends = {
        ("X", "Q"): (side("X", right=False), top("Q")),
        ("X", "K"): (bottom("X"), top("K")),
        ("X", "V"): (side("X"), top("V")),
        ("Q", "QK"): (bottom("Q"), top("QK", -0.45)),
        ("K", "QK"): (bottom("K"), top("QK", 0.45)),
        ("QK", "scale"): (bottom("QK"), top("scale")),
        ("scale", "mask"): (bottom("scale"), top("mask")),
        ("mask", "softmax"): (bottom("mask"), top("softmax")),
        ("softmax", "mix"): (side("softmax"), side("mix", right=False)),
        ("V", "mix"): (bottom("V"), top("mix", 0.55)),
        ("mix", "out"): (bottom("mix"), top("out")),
    }
    # Where each label sits: (fraction along the arrow, x offset, y offset, alignment).
    place = {
        ("X", "Q"): (0.4, -0.1, 0.0, "right"), ("X", "K"): (0.5, 0.1, 0.0, "left"),
        ("X", "V"): (0.4, 0.1, 0.0, "left"),
        ("Q", "QK"): (0.5, -0.12, 0.0, "right"), ("K", "QK"): (0.5, 0.12, 0.0, "left"),
        ("softmax", "mix"): (0.5, 0.0, 0.45, "center"), ("V", "mix"): (0.5, -0.1, 0.0, "right"),  # A [n, m] over the boxes: wider than the gap
    }
    for a, b, label in ARROWS:
        start, end = ends[(a, b)]
        ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=14, color="#333333",
                                     linewidth=1.3, shrinkA=0, shrinkB=0))
        t, dx, dy, align = place.get((a, b), (0.5, 0.12, 0.0, "left"))
        x = start[0] + t * (end[0] - start[0]) + dx
        y = start[1] + t * (end[1] - start[1]) + dy
        ax.text(x, y, _label(label), ha=align, va="center", fontsize=font_size, color="#1f4e79",
                fontfamily=family)
    if n is not None:
        m_ = n if m is None else m
        ax.text(_SIZE[0] / 2, -0.62, _text("dataflow.shapes_self" if m_ == n else "dataflow.shapes_cross"),
                ha="center", va="center",
                fontsize=font_size, color="#444444", fontfamily=family)
        # The example's numbers on two lines: at 16 pt one line was as wide as the figure.
        ax.text(_SIZE[0] / 2, -1.1,
                _text("dataflow.example_self", n=n, d_model=d_model, d_k=d_k, d_v=d_v) if m_ == n else
                _text("dataflow.example_cross", n=n, m=m_, d_model=d_model, d_k=d_k, d_v=d_v),
                ha="center", va="center", fontsize=font_size, color="#444444", fontfamily=family, linespacing=1.3)
    return DataFlowFigure(fig)
