"""Heatmaps of the attention tables, with Chinese labels and every value written in.

Drawn the way the lab draws its tables (``static/attention-lab/render.js``), so a reader
meets one picture language in the chapter and in the lab:

* colours: cividis on a **fixed scale per kind of table** (:data:`SCALES`, the same as
  render.js's ``SCALES``), never rescaled to the numbers in one figure; each table has a
  colour bar; values outside the scale get the end colour (the bar says ``≤``/``≥``);
* text black or white per cell, whichever contrasts more with the cell's colour (WCAG
  contrast ≥ 4.5:1 for every cell, see :func:`text_colour`);
* masked cells (the causal mask's −∞ in S and the 0 it leaves in A) are **hatched** and
  labelled :data:`MASKED_LABEL` (“已挡住”) under their value, never just grey.

Laid out for every screen the chapter is read on: two panels per row (three tables as 2 + 1,
:func:`default_columns`), drawn 480 px wide, so the desktop column and paper show the figure at
its own size and a 360 px phone scales it to about 0.65 with no text under 10 px (a row of
three, scaled into the phone's column, left labels at 4-6 px).

Figures are SVG for the website (text stays text, so Chinese is sharp at any zoom and
in print) and PNG at twice the size when a raster is needed (:meth:`AttentionFigure.to_png`).
:class:`AttentionFigure` draws once and then only updates its artists.
"""

from __future__ import annotations

import io
import re

import numpy as np

from .core import TOKENS, AttentionResult
from .fonts import CJK_FONT_CANDIDATES, use_cjk_font
from .formatting import CELL_DIGITS, format_number
from .strings import strings  # the one strings table (not the site module)

#: Colour-blind-safe, perceptually uniform; readable in greyscale too (as the lab).
CMAP = "cividis"
#: One fixed colour scale per kind of table (render.js's SCALES; a test keeps them equal).
SCALES = {"Q": (-3.0, 3.0), "K": (-3.0, 3.0), "S": (-3.0, 3.0), "A": (0.0, 1.0),
          "V": (-20.0, 20.0), "O": (-20.0, 20.0)}
#: Label under a masked cell's value: the lab's own (strings_zh.json view.masked_label).
MASKED_LABEL = strings()["view"]["masked_label"]
MASK_FACE = "#ffffff"
MASK_HATCH = "#5a5a5a"
MASK_TEXT = "#1a1a1a"  # on white: 17:1
#: Raster figures are drawn at twice the size they are shown at (sharp on HiDPI screens).
PNG_SCALE = 2
#: One panel's width (inches) and the values' font size (points); every other text is a fixed
#: fraction of it (:data:`TEXT_SCALE`).  Chosen so the figure reads on a 360 px phone as
#: well as in the desktop column and on paper: see :func:`default_columns`.
PANEL_SIZE = 2.5
FONT_SIZE = 15.0
#: A panel's height over its width (title, axis names, the 2x2 table and its colour bar).
PANEL_ASPECT = 1.24
#: Each kind of text's size as a fraction of ``font_size`` (the values are 1).
TEXT_SCALE = {"title": 1.0, "ticks": 0.93, "axis": 0.82, "colourbar": 0.82}

TITLES = {
    "Q": "Q 查询表",
    "K": "K 键表",
    "V": "V 值表",
    "S": "S 分数表",
    "A": "A 份额表",
    "O": "O 输出表",
}
ROW_AXIS = {"Q": "位置", "K": "位置", "V": "位置", "S": "接收位置", "A": "接收位置", "O": "接收位置"}
COL_AXIS = {"Q": "特征格", "K": "特征格", "V": "特征格", "S": "被读取位置（键）", "A": "被读取位置（键）", "O": "特征格"}


def format_value(value: float, digits: int = CELL_DIGITS) -> str:
    """Cell text (``−∞`` for a masked score, trimmed decimals otherwise): the book's one
    formatter, :func:`~attention_lab.formatting.format_number`, at the tables' 3 decimals."""
    return format_number(value, digits)


def relative_luminance(rgb) -> float:
    """WCAG 2 relative luminance of an sRGB colour with components in [0, 1]."""
    def lin(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(float(c)) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(rgb_a, rgb_b) -> float:
    """WCAG 2 contrast ratio of two colours (1 to 21)."""
    la, lb = sorted((relative_luminance(rgb_a), relative_luminance(rgb_b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def text_colour(background) -> str:
    """``"black"`` or ``"white"``, whichever contrasts more with ``background`` (as render.js)."""
    black = contrast_ratio(background, (0, 0, 0))
    white = contrast_ratio(background, (1, 1, 1))
    return "black" if black >= white else "white"


def masked_cells(name: str, result: AttentionResult) -> np.ndarray:
    """Boolean table: which cells of ``name`` the causal mask blocked (only S and A have any)."""
    values = getattr(result, name)
    if name in ("S", "A"):
        return np.isneginf(result.S)
    return np.zeros(values.shape, dtype=bool)


def _labels(name: str, n_rows: int, n_cols: int, tokens) -> tuple[list[str], list[str]]:
    rows = [f"{tokens[i]}" if i < len(tokens) else str(i) for i in range(n_rows)]
    if name in ("S", "A"):
        cols = [f"{tokens[j]}" if j < len(tokens) else str(j) for j in range(n_cols)]
    else:
        cols = [f"第{j}格" for j in range(n_cols)]
    return rows, cols


def default_columns(n_tables: int) -> int:
    """Panels per row: two (three tables as 2 + 1, the third in the middle), three from five on.

    A row of three 2x2 tables scaled into a 360 px phone's column left every label at 4-6 px;
    two per row at :data:`PANEL_SIZE` keep every text at >= 10 px there (values about 13 px),
    while the desktop column shows the figure at its own size (480 px wide) and paper likewise.
    """
    return 1 if n_tables == 1 else (2 if n_tables <= 4 else 3)


class AttentionFigure:
    """Heatmaps (default S, A, O; two panels per row, see :func:`default_columns`) that can be
    updated in place."""

    def __init__(self, result: AttentionResult, tables=("S", "A", "O"), tokens=TOKENS,
                 panel_size: float = PANEL_SIZE, font_size: float = FONT_SIZE, dpi: float = 100,
                 columns: int | None = None):
        use_cjk_font()
        from matplotlib.figure import Figure  # no pyplot: no global state, no GUI

        unknown = [t for t in tables if t not in SCALES]
        if unknown:
            raise ValueError(f"unknown table(s) {unknown}; choose from {sorted(SCALES)}")
        self.tables = tuple(tables)
        if not self.tables:
            raise ValueError("tables is empty; choose from " + ", ".join(sorted(SCALES)))
        self.tokens = tuple(tokens)
        self.font_size = font_size
        self.columns = default_columns(len(self.tables)) if columns is None else int(columns)
        if not 1 <= self.columns <= len(self.tables):
            raise ValueError(f"columns must be 1 to {len(self.tables)} for {len(self.tables)} tables, not {columns!r}")
        rows = -(-len(self.tables) // self.columns)
        self.figure = Figure(figsize=(panel_size * self.columns, panel_size * PANEL_ASPECT * rows), dpi=dpi,
                             layout="constrained")
        # Panels on a grid of half-columns, so a last row with fewer panels sits in the middle.
        grid = self.figure.add_gridspec(rows, 2 * self.columns)
        self.axes = []
        for k in range(len(self.tables)):
            row, col = divmod(k, self.columns)
            in_row = min(self.columns, len(self.tables) - row * self.columns)
            start = 2 * col + (self.columns - in_row)
            self.axes.append(self.figure.add_subplot(grid[row, start:start + 2]))
        self._images = {}
        self._texts = {}
        self._masks = {}
        self._shape = {}
        self._build(result)

    def _build(self, result: AttentionResult) -> None:
        import matplotlib as mpl
        from matplotlib.colors import Normalize
        from matplotlib.patches import Rectangle

        cmap = mpl.colormaps[CMAP]
        fs = self.font_size
        for ax, name in zip(self.axes, self.tables):
            values = getattr(result, name)
            n_rows, n_cols = values.shape
            self._shape[name] = values.shape
            lo, hi = SCALES[name]
            image = ax.imshow(np.zeros(values.shape), cmap=cmap, norm=Normalize(lo, hi, clip=True),
                              aspect="equal")
            self._images[name] = image
            rows, cols = _labels(name, n_rows, n_cols, self.tokens)
            ax.set_xticks(range(n_cols), cols, fontsize=fs * TEXT_SCALE["ticks"])
            ax.set_yticks(range(n_rows), rows, fontsize=fs * TEXT_SCALE["ticks"])
            ax.set_title(TITLES[name], fontsize=fs * TEXT_SCALE["title"], pad=6)
            ax.set_xlabel(COL_AXIS[name], fontsize=fs * TEXT_SCALE["axis"])
            ax.set_ylabel(ROW_AXIS[name], fontsize=fs * TEXT_SCALE["axis"])
            ax.tick_params(length=0)
            ax.xaxis.set_label_position("top")
            ax.xaxis.tick_top()
            # Masked cells: a white, hatched square over the colour (shown only where masked).
            self._masks[name] = [
                [ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor=MASK_FACE, edgecolor=MASK_HATCH,
                                        hatch="///", linewidth=0, visible=False, zorder=2))
                 for j in range(n_cols)]
                for i in range(n_rows)
            ]
            self._texts[name] = [
                [ax.text(j, i, "", ha="center", va="center", fontsize=fs, zorder=3,
                         linespacing=1.25) for j in range(n_cols)]
                for i in range(n_rows)
            ]
            bar = self.figure.colorbar(image, ax=ax, orientation="horizontal", fraction=0.07, pad=0.04,
                                       aspect=14)
            clip = name != "A"
            bar.set_ticks([lo, (lo + hi) / 2, hi],
                          labels=[("≤" if clip else "") + format_value(lo), format_value((lo + hi) / 2),
                                  ("≥" if clip else "") + format_value(hi)])
            bar.ax.tick_params(labelsize=fs * TEXT_SCALE["colourbar"], length=2)
            bar.outline.set_linewidth(0.5)
        self.update(result)

    def update(self, result: AttentionResult) -> None:
        """Write new values into the existing artists (no new figure, no new axes)."""
        for name in self.tables:
            values = getattr(result, name)
            if values.shape != self._shape[name]:
                raise ValueError(f"{name} changed shape from {self._shape[name]} to {values.shape}")
            image = self._images[name]
            masked = masked_cells(name, result)
            image.set_data(np.where(np.isfinite(values), values, 0.0))
            for i, row in enumerate(self._texts[name]):
                for j, text in enumerate(row):
                    v = float(values[i, j])
                    self._masks[name][i][j].set_visible(bool(masked[i, j]))
                    if masked[i, j]:
                        text.set_text(f"{format_value(v)}\n{MASKED_LABEL}")
                        text.set_color(MASK_TEXT)
                        text.set_bbox({"facecolor": MASK_FACE, "edgecolor": "none", "pad": 1.5})
                    else:
                        text.set_text(format_value(v))
                        text.set_color(text_colour(self.cell_colour(name, v)))
                        text.set_bbox(None)

    def cell_colour(self, name: str, value: float):
        """The (r, g, b) a value gets in table ``name`` (fixed scale, clipped at its ends)."""
        image = self._images[name]
        return image.cmap(image.norm(value))[:3]

    def to_svg(self) -> str:
        """SVG with text as text (Chinese stays sharp and searchable) and CJK font fallbacks."""
        import matplotlib as mpl

        buffer = io.StringIO()
        with mpl.rc_context({"svg.fonttype": "none", "svg.hashsalt": "f11"}):
            self.figure.savefig(buffer, format="svg", metadata={"Date": None})
        return with_font_fallbacks(buffer.getvalue())

    def _repr_svg_(self) -> str:
        """Lets Jupyter and myst-nb show the figure as SVG."""
        return self.to_svg()

    def to_png(self, scale: float = PNG_SCALE) -> bytes:
        """Render with the Agg backend at ``scale`` times the figure's dpi (default 2×); PNG bytes."""
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png", dpi=self.figure.dpi * scale)
        return buffer.getvalue()


_FONT_FAMILY = re.compile(r"font-family:\s*([^;\"]+)")


def with_font_fallbacks(svg: str) -> str:
    """Every ``font-family`` in ``svg`` also lists the CJK fonts of :mod:`fonts` and sans-serif,
    so a reader's browser without the build machine's font still shows Chinese, not boxes."""
    def extend(m: re.Match) -> str:
        families = [f.strip().strip("'\"") for f in m.group(1).split(",") if f.strip()]
        ordered = families[:1] + list(CJK_FONT_CANDIDATES) + families[1:] + ["sans-serif"]
        unique = list(dict.fromkeys(ordered))
        return "font-family: " + ", ".join(f if f == "sans-serif" else f"'{f}'" for f in unique)

    return _FONT_FAMILY.sub(extend, svg)


def plot_attention(result: AttentionResult, tables=("S", "A", "O"), **kwargs) -> AttentionFigure:
    """Heatmaps of ``tables`` for the chapter; Jupyter shows the returned object."""
    return AttentionFigure(result, tables=tables, **kwargs)
