"""Heatmaps of the attention tables, with Chinese labels and every value written in.

:class:`AttentionFigure` draws once and then only updates its artists, so the
kernel lab can redraw it many times a second without creating figures.  The
chapter's static figures use the same class.
"""

from __future__ import annotations

import io
import math

import numpy as np

from .core import TOKENS, AttentionResult
from .fonts import use_cjk_font

#: Colour-blind-safe, perceptually uniform; readable in greyscale too.
CMAP = "cividis"
MASK_COLOUR = "#d9d9d9"

TITLES = {
    "Q": "Q 查询表",
    "K": "K 键表",
    "V": "V 值表",
    "S": "S 分数表",
    "A": "A 份额表",
    "O": "O 输出表",
}
ROW_AXIS = {"Q": "位置", "K": "位置", "V": "位置", "S": "查询位置", "A": "查询位置", "O": "查询位置"}
COL_AXIS = {"Q": "特征格", "K": "特征格", "V": "特征格", "S": "被读取位置（Key）", "A": "被读取位置（Key）", "O": "特征格"}


def format_value(value: float, digits: int = 3) -> str:
    """Cell text: ``−∞`` for masked scores, trimmed decimals otherwise."""
    if math.isinf(value):
        return "−∞" if value < 0 else "+∞"
    text = f"{value:.{digits}f}".rstrip("0").rstrip(".")
    if text in ("-0", ""):
        text = "0"
    return text.replace("-", "−")


def _labels(name: str, n_rows: int, n_cols: int, tokens) -> tuple[list[str], list[str]]:
    rows = [f"{tokens[i]}" if i < len(tokens) else str(i) for i in range(n_rows)]
    if name in ("S", "A"):
        cols = [f"{tokens[j]}" if j < len(tokens) else str(j) for j in range(n_cols)]
    else:
        cols = [f"第{j}格" for j in range(n_cols)]
    return rows, cols


def _scale(name: str, result: AttentionResult, values: np.ndarray) -> tuple[float, float]:
    if name == "A":
        return 0.0, 1.0  # shares always lie in [0, 1]: a fixed scale shows change
    if name in ("V", "O"):
        # O is a mix of V's rows, so both share V's scale.
        lo, hi = float(np.min(result.V)), float(np.max(result.V))
    else:
        finite = values[np.isfinite(values)]
        bound = float(np.max(np.abs(finite))) if finite.size else 1.0
        lo, hi = -bound, bound
    if hi - lo < 1e-12:
        lo, hi = lo - 1.0, hi + 1.0
    return lo, hi


def _masked(name: str, result: AttentionResult) -> np.ma.MaskedArray:
    """The table with masked (unreadable) cells hidden, so they draw in grey."""
    values = getattr(result, name)
    if name in ("S", "A"):
        return np.ma.masked_where(np.isneginf(result.S), values)
    return np.ma.masked_invalid(values)


class AttentionFigure:
    """A row of heatmaps (default S, A, O) that can be updated in place."""

    def __init__(self, result: AttentionResult, tables=("S", "A", "O"), tokens=TOKENS,
                 panel_size: float = 3.2, font_size: float = 15, dpi: float = 100):
        use_cjk_font()
        from matplotlib.figure import Figure  # no pyplot: no global state, no GUI

        self.tables = tuple(tables)
        self.tokens = tuple(tokens)
        self.font_size = font_size
        self.figure = Figure(figsize=(panel_size * len(self.tables), panel_size * 0.95), dpi=dpi,
                             layout="constrained")
        self.axes = self.figure.subplots(1, len(self.tables), squeeze=False)[0]
        self._images = {}
        self._texts = {}
        self._shape = {}
        self._build(result)

    def _build(self, result: AttentionResult) -> None:
        import matplotlib as mpl

        cmap = mpl.colormaps[CMAP].with_extremes(bad=MASK_COLOUR)
        fs = self.font_size
        for ax, name in zip(self.axes, self.tables):
            values = getattr(result, name)
            n_rows, n_cols = values.shape
            self._shape[name] = values.shape
            image = ax.imshow(_masked(name, result), cmap=cmap, aspect="equal")
            self._images[name] = image
            rows, cols = _labels(name, n_rows, n_cols, self.tokens)
            ax.set_xticks(range(n_cols), cols, fontsize=fs * 0.85)
            ax.set_yticks(range(n_rows), rows, fontsize=fs * 0.85)
            ax.set_title(TITLES[name], fontsize=fs, pad=6)
            ax.set_xlabel(COL_AXIS[name], fontsize=fs * 0.75)
            ax.set_ylabel(ROW_AXIS[name], fontsize=fs * 0.75)
            ax.tick_params(length=0)
            ax.xaxis.set_label_position("top")
            ax.xaxis.tick_top()
            self._texts[name] = [
                [ax.text(j, i, "", ha="center", va="center", fontsize=fs) for j in range(n_cols)]
                for i in range(n_rows)
            ]
        self.update(result)

    def update(self, result: AttentionResult) -> None:
        """Write new values into the existing artists (no new figure, no new axes)."""
        for name in self.tables:
            values = getattr(result, name)
            if values.shape != self._shape[name]:
                raise ValueError(f"{name} changed shape from {self._shape[name]} to {values.shape}")
            image = self._images[name]
            lo, hi = _scale(name, result, values)
            image.set_data(_masked(name, result))
            image.set_clim(lo, hi)
            for i, row in enumerate(self._texts[name]):
                for j, text in enumerate(row):
                    v = float(values[i, j])
                    masked = name in ("S", "A") and math.isinf(result.S[i, j])
                    text.set_text(format_value(v))
                    if masked:
                        text.set_color("#444444")
                        text.set_fontstyle("italic")
                    else:
                        r, g, b, _ = image.cmap(image.norm(v))
                        luminance = 0.299 * r + 0.587 * g + 0.114 * b
                        text.set_color("black" if luminance > 0.55 else "white")
                        text.set_fontstyle("normal")

    def _repr_png_(self) -> bytes:
        """Lets Jupyter and myst-nb show the figure (also through ``glue``)."""
        return self.to_png()

    def to_png(self) -> bytes:
        """Render with the Agg backend and return PNG bytes."""
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png")
        return buffer.getvalue()


def plot_attention(result: AttentionResult, tables=("S", "A", "O"), **kwargs) -> AttentionFigure:
    """Heatmaps of ``tables`` for the chapter; Jupyter shows the returned object."""
    return AttentionFigure(result, tables=tables, **kwargs)
