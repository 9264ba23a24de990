"""The chapter's data-flow figure: one head of scaled dot-product attention, with shapes on every arrow.

``X → XWq, XWk, XWv → QKᵀ → ÷√d_k → +M → softmax → ×V``.  Drawn with
matplotlib (Chinese labels through :mod:`attention_lab.fonts`); nothing is
computed here except the shapes that the labels print.
"""

from __future__ import annotations

__all__ = ["ARROWS", "data_flow_shapes", "plot_data_flow"]

#: (from box, to box, shape label) for every arrow of the figure, in reading order.
ARROWS = (
    ("X", "Q", "[n, d_model]"),
    ("X", "K", "[m, d_model]"),
    ("X", "V", "[m, d_model]"),
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


_BOXES = {
    # name: (x centre, y centre, text)
    "X": (0.7, 1.5, "X\n输入"),
    "Q": (3.4, 2.6, "Q = X·W$_q$"),
    "K": (3.4, 1.5, "K = X·W$_k$"),
    "V": (3.4, 0.3, "V = X·W$_v$"),
    "QK": (5.9, 2.05, "QK$^\\top$\n点积打分"),
    "scale": (8.0, 2.05, "÷ $\\sqrt{d_k}$\n缩放"),
    "mask": (10.1, 2.05, "+ M\n掩码"),
    "softmax": (12.2, 2.05, "softmax\n逐行"),
    "mix": (13.6, 0.3, "A × V\n加权平均"),
    "out": (15.9, 0.3, "O\n输出"),
}
_W, _H = 1.4, 0.64


def _label(text: str) -> str:
    """Shape label in mathtext: ``d_model`` -> d$_{model}$ etc."""
    return (text.replace("d_model", "d$_{model}$").replace("d_k", "d$_k$").replace("d_v", "d$_v$"))


def plot_data_flow(n: int | None = 2, m: int | None = None, d_model: int = 2, d_k: int = 2, d_v: int = 2,
                   figsize=(13.5, 3.6)):
    """The figure: boxes for each step, arrows labelled with the table's shape ``[rows, columns]``.

    With ``n`` given (default 2, the chapter's example), a footer states the example's
    numbers; ``n=None`` leaves the shapes symbolic only.  Returns a matplotlib ``Figure``.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyBboxPatch

    from .fonts import use_cjk_font

    use_cjk_font()
    fig, ax = plt.subplots(figsize=figsize)
    ax.set_xlim(-0.1, 16.7)
    ax.set_ylim(-0.75, 3.05)
    ax.axis("off")
    for name, (x, y, text) in _BOXES.items():
        face = "#fde8c8" if name in ("X", "out") else ("#dbe9f6" if name in ("Q", "K", "V") else "#eeeeee")
        ax.add_patch(FancyBboxPatch((x - _W / 2, y - _H / 2), _W, _H, boxstyle="round,pad=0.04",
                                    facecolor=face, edgecolor="#333333", linewidth=1.1))
        ax.text(x, y, text, ha="center", va="center", fontsize=10.5)

    gap = 0.08

    def right(name, dy=0.0):
        x, y, _ = _BOXES[name]
        return (x + _W / 2 + gap, y + dy)

    def left(name, dy=0.0):
        x, y, _ = _BOXES[name]
        return (x - _W / 2 - gap, y + dy)

    for a, b, label in ARROWS:
        if a == "X":
            dy = {"Q": 0.2, "K": 0.0, "V": -0.2}[b]
            start, end = right("X", dy), left(b)
            t, off = 0.55, (0.0, 0.16 if b != "V" else -0.16)
        elif b == "QK":
            start, end = right(a), left("QK", 0.12 if a == "Q" else -0.12)
            t, off = 0.5, (0.0, 0.18 if a == "Q" else -0.18)
        elif (a, b) == ("softmax", "mix"):
            x, y, _ = _BOXES["softmax"]
            start, end = (x, y - _H / 2 - gap), (_BOXES["mix"][0] - 0.2, _BOXES["mix"][1] + _H / 2 + gap)
            t, off = 0.5, (0.55, 0.0)
        elif (a, b) == ("V", "mix"):
            start, end = right("V"), left("mix")
            t, off = 0.5, (0.0, 0.16)
        else:
            start, end = right(a), left(b)
            t, off = 0.5, (0.0, 0.2)
        ax.annotate("", xy=end, xytext=start,
                    arrowprops=dict(arrowstyle="-|>", color="#333333", lw=1.2, shrinkA=0, shrinkB=0))
        lx = start[0] + t * (end[0] - start[0]) + off[0]
        ly = start[1] + t * (end[1] - start[1]) + off[1]
        ax.text(lx, ly, _label(label), ha="center", va="center", fontsize=9, color="#1f4e79",
                bbox=dict(boxstyle="round,pad=0.1", facecolor="white", edgecolor="none", alpha=0.9))
    if n is not None:
        m_ = n if m is None else m
        ax.text(8.2, -0.6,
                f"形状写作 [行数, 列数]。本章的例子：n = {n}，m = {m_}，"
                f"d$_{{model}}$ = {d_model}，d$_k$ = {d_k}，d$_v$ = {d_v}（自注意力里 m = n）",
                ha="center", va="center", fontsize=9.5, color="#444444")
    fig.tight_layout()
    return fig
