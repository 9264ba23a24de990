"""Fast re-rendering of an :class:`~attention_lab.plotting.AttentionFigure` to PNG.

The kernel lab redraws six small heatmaps on every slider move.  A full
matplotlib draw plus Pillow's PNG encoder takes about 100 ms per figure here;
most of it is text layout (matplotlib 3.11 shapes every string with FreeType)
and laying out the axes again.  :class:`FastRenderer` keeps the figure and its
artists as the single description of the picture and only speeds up drawing:

1. The first render draws everything once with matplotlib and freezes the
   layout.  It keeps a picture of the figure without the changing artists (the
   heatmap images and the cell texts): the *background*.
2. Afterwards, for each axes whose images or texts changed, it restores that
   axes' background and paints the cells directly: each heatmap cell is a flat
   rectangle of the colour matplotlib would use (``image.to_rgba``), and each
   cell text is composed from glyph bitmaps that matplotlib's own text renderer
   drew once per character.  The spines are then redrawn by matplotlib.
3. The first render also paints the same state this way and compares it with
   matplotlib's full drawing.  If they differ (a future change of
   ``plotting.py``: other artists, rotated text, another interpolation ...),
   the renderer falls back to matplotlib drawing the changed axes (slower,
   always right).  ``FastRenderer.mode`` says which path is used.

PNG encoding uses zlib without row filters, which is several times faster than
Pillow for flat-coloured pictures of the same size.
"""

from __future__ import annotations

import math
import struct
import zlib

import numpy as np

__all__ = ["FastRenderer", "encode_png"]


def encode_png(rgb: np.ndarray, level: int = 1) -> bytes:
    """PNG bytes of an ``(h, w, 3)`` uint8 array: no row filters, light zlib."""
    if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
        raise ValueError(f"need an (h, w, 3) uint8 array; got {rgb.shape} {rgb.dtype}")
    h, w, _ = rgb.shape
    raw = np.empty((h, w * 3 + 1), dtype=np.uint8)
    raw[:, 0] = 0  # filter type 0 (None) on every row
    raw[:, 1:] = rgb.reshape(h, w * 3)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)  # 8-bit RGB, no interlace
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw.tobytes(), level)) + chunk(b"IEND", b""))


def _near_difference(mine: np.ndarray, reference: np.ndarray) -> float:
    """Fraction of pixels that differ visibly (> 64 of 255) even allowing a 1-pixel shift."""
    h, w = mine.shape[:2]
    padded = np.pad(mine, ((1, 1), (1, 1), (0, 0)), mode="edge")
    best = None
    for dy in (0, 1, 2):
        for dx in (0, 1, 2):
            shifted = padded[dy:dy + h, dx:dx + w]
            diff = np.abs(shifted - reference).max(axis=2)
            best = diff if best is None else np.minimum(best, diff)
    return float(np.mean(best > 64))


class _Glyphs:
    """Glyph bitmaps drawn by matplotlib, one per (font, size, character), for composing strings."""

    def __init__(self, dpi: float):
        self.dpi = dpi
        self._cache: dict = {}
        self._metrics: dict = {}

    def _font(self, prop):
        from matplotlib.font_manager import findfont, get_font

        font = get_font(findfont(prop))
        font.set_size(prop.get_size_in_points(), self.dpi)
        return font

    def line_metrics(self, prop) -> tuple[float, float]:
        """Height and descent (px) of one line, as matplotlib's layout uses for "lp"."""
        from matplotlib.backends.backend_agg import RendererAgg

        key = (prop.get_file() or "", hash(prop), self.dpi)
        if key not in self._metrics:
            renderer = RendererAgg(4, 4, self.dpi)
            _, h, d = renderer.get_text_width_height_descent("lp", prop, ismath=False)
            self._metrics[key] = (h, d)
        return self._metrics[key]

    def glyph(self, char: str, prop):
        """``(alpha (h, w) float32, dx, dy, advance)``; offsets from the pen (baseline, y down)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg, get_hinting_flag
        from matplotlib.figure import Figure

        key = (hash(prop), self.dpi, char)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        font = self._font(prop)
        advance = font.load_char(ord(char), flags=get_hinting_flag()).horiAdvance / 64.0
        size = int(prop.get_size_in_points() * self.dpi / 72 * 4) + 8
        fig = Figure(figsize=(size / self.dpi, size / self.dpi), dpi=self.dpi)
        canvas = FigureCanvasAgg(fig)
        px, py = size // 4, size // 4  # pen position in pixels from the bottom-left
        fig.text(px / size, py / size, char, fontproperties=prop, ha="left", va="baseline",
                 color="black")
        canvas.draw()
        grey = np.asarray(canvas.buffer_rgba())[..., 0].astype(np.float32)
        alpha = 1.0 - grey / 255.0
        rows = np.nonzero(alpha.max(axis=1) > 0)[0]
        cols = np.nonzero(alpha.max(axis=0) > 0)[0]
        if rows.size == 0:  # a space
            hit = (np.zeros((0, 0), np.float32), 0, 0, advance)
        else:
            r0, r1, c0, c1 = rows[0], rows[-1] + 1, cols[0], cols[-1] + 1
            base_row = size - py  # row index of the baseline (y down)
            hit = (alpha[r0:r1, c0:c1].copy(), int(c0 - px), int(r0 - base_row), advance)
        self._cache[key] = hit
        return hit


class FastRenderer:
    """Renders a figure of heatmaps to PNG, redrawing only what changed (see module docstring)."""

    def __init__(self, figure, verify: bool = True):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        self.figure = figure
        self.canvas = FigureCanvasAgg(figure)
        self.verify = verify
        self.mode = None  # "cells" (fast path) or "blit" (matplotlib draws changed axes)
        self.verify_diff = None
        self._background = None
        self._signatures: dict = {}
        self._png = b""
        self._glyphs = _Glyphs(figure.dpi)
        self._text_offset = (0, 0)  # whole pixels (right, down), calibrated in _prepare

    # --- set-up ------------------------------------------------------------------------------
    @staticmethod
    def _dynamic(ax):
        return list(ax.images) + list(ax.texts)

    def _prepare(self) -> None:
        self.canvas.draw()  # constrained layout runs here, once
        self.figure.set_layout_engine("none")  # freeze positions: no layout per change
        reference = np.asarray(self.canvas.buffer_rgba()).copy()
        hidden = [a for ax in self.figure.axes for a in self._dynamic(ax) if a.get_visible()]
        for a in hidden:
            a.set_visible(False)
        self.canvas.draw()
        self._background = np.asarray(self.canvas.buffer_rgba()).copy()
        for a in hidden:
            a.set_visible(True)
        self._height = self._background.shape[0]
        self._regions = {ax: self._region(ax) for ax in self.figure.axes}
        self.mode = "cells" if self._fast_path_applies() else "blit"
        if self.mode == "cells":
            ref = reference[..., :3].astype(np.int16)
            # Calibrate: the whole-pixel text offset that best matches matplotlib's drawing.
            scores = {}
            for dy in (-3, -2, -1, 0, 1, 2, 3):
                for dx in (-1, 0, 1):
                    self._text_offset = (dx, dy)
                    self._paint_all_cells()
                    mine = np.asarray(self.canvas.buffer_rgba())[..., :3].astype(np.int16)
                    scores[(dx, dy)] = float(np.mean(np.abs(mine - ref).max(axis=2) > 64))
            self._text_offset = min(scores, key=lambda k: (scores[k], abs(k[0]) + abs(k[1])))
            self._paint_all_cells()
            mine = np.asarray(self.canvas.buffer_rgba())[..., :3].astype(np.int16)
            self.verify_diff = _near_difference(mine, ref)
            # Glyphs sit on whole pixels here, on sub-pixels in matplotlib: allow a
            # one-pixel shift, nothing else (wrong colours or text show up at once).
            if self.verify and self.verify_diff > 0.001:
                self.mode = "blit"
        self._signatures.clear()
        np.asarray(self.canvas.buffer_rgba())[...] = reference
        self._png = b""

    def _region(self, ax):
        """Pixel slice (rows, cols) of an axes plus a small margin for its frame."""
        x0, y0, x1, y1 = ax.bbox.extents
        h = self._height
        return (slice(max(0, int(math.floor(h - y1)) - 3), min(h, int(math.ceil(h - y0)) + 3)),
                slice(max(0, int(math.floor(x0)) - 3), int(math.ceil(x1)) + 3))

    def _fast_path_applies(self) -> bool:
        for ax in self.figure.axes:
            if len(ax.images) != 1 or ax.collections or ax.patches or ax.lines:
                return False
            image = ax.images[0]
            if image.get_interpolation() not in ("nearest", "none") or image.get_alpha() not in (None, 1):
                return False
            for text in ax.texts:
                if (text.get_rotation() != 0 or text.get_ha() != "center" or text.get_va() != "center"
                        or "\n" in text.get_text() or "$" in text.get_text()):
                    return False
        return True

    # --- drawing -----------------------------------------------------------------------------
    @staticmethod
    def _signature(ax):
        parts = []
        for image in ax.images:
            data = image.get_array()
            parts.append((np.ma.getdata(data).tobytes(), np.ma.getmaskarray(data).tobytes(),
                          image.get_clim(), image.get_visible()))
        for text in ax.texts:
            parts.append((text.get_text(), str(text.get_color()), text.get_fontstyle(),
                          text.get_visible(), text.get_position()))
        return tuple(parts)

    def _paint_cells(self, ax, buf) -> None:
        """Heatmap cells as flat rectangles, then the cell texts, then the frame."""
        h = self._height
        image = ax.images[0]
        data = image.get_array()
        colours = (image.to_rgba(data, bytes=True)[..., :3]).astype(np.uint8)
        n_rows, n_cols = data.shape[:2]
        left, right, bottom, top = image.get_extent()
        # Clip the cells to the axes box, as matplotlib clips the image.
        ax0, ay0, ax1, ay1 = ax.bbox.extents
        to_display = ax.transData.transform
        for i in range(n_rows):
            for j in range(n_cols):
                # Cell (i, j) spans data x in [left + j, left + j + 1] and y from row i's edges.
                xa = left + (right - left) * j / n_cols
                xb = left + (right - left) * (j + 1) / n_cols
                ya = top + (bottom - top) * i / n_rows
                yb = top + (bottom - top) * (i + 1) / n_rows
                (dx0, dy0), (dx1, dy1) = to_display([(xa, ya), (xb, yb)])
                x_lo, x_hi = max(min(dx0, dx1), ax0), min(max(dx0, dx1), ax1)
                y_lo, y_hi = max(min(dy0, dy1), ay0), min(max(dy0, dy1), ay1)
                # Pixels whose centres fall inside the cell (nearest-neighbour sampling).
                c0, c1 = int(math.ceil(x_lo - 0.5)), int(math.ceil(x_hi - 0.5))
                r0, r1 = int(math.ceil(h - y_hi - 0.5)), int(math.ceil(h - y_lo - 0.5))
                if c1 > c0 and r1 > r0:
                    buf[max(r0, 0):r1, max(c0, 0):c1, :3] = colours[i, j]
        for text in ax.texts:
            if text.get_visible() and text.get_text():
                self._paint_text(text, buf)

    def _paint_text(self, text, buf) -> None:
        from matplotlib.colors import to_rgb

        prop = text.get_fontproperties()
        glyphs = [self._glyphs.glyph(ch, prop) for ch in text.get_text()]
        width = sum(g[3] for g in glyphs)
        line_h, line_d = self._glyphs.line_metrics(prop)
        cx, cy = text.get_transform().transform(text.get_position())
        pen_x = cx - width / 2.0
        baseline_row = self._height - (cy - line_h / 2.0 + line_d)  # y down
        colour = np.array(to_rgb(text.get_color()), dtype=np.float32) * 255.0
        H, W = buf.shape[:2]
        for alpha, dx, dy, advance in glyphs:
            if alpha.size:
                r0 = int(round(baseline_row)) + dy + self._text_offset[1]
                c0 = int(round(pen_x)) + dx + self._text_offset[0]
                r1, c1 = r0 + alpha.shape[0], c0 + alpha.shape[1]
                if r0 >= 0 and c0 >= 0 and r1 <= H and c1 <= W:
                    a = alpha[..., None]
                    region = buf[r0:r1, c0:c1, :3].astype(np.float32)
                    buf[r0:r1, c0:c1, :3] = (region * (1.0 - a) + colour * a + 0.5).astype(np.uint8)
            pen_x += advance

    def _paint_all_cells(self) -> None:
        buf = np.asarray(self.canvas.buffer_rgba())
        buf[...] = self._background
        renderer = self.canvas.get_renderer()
        for ax in self.figure.axes:
            self._paint_cells(ax, buf)
            for spine in ax.spines.values():
                spine.draw(renderer)

    def render_rgba(self) -> tuple[np.ndarray, bool]:
        """The current picture (RGBA, a view of the canvas) and whether it may have changed."""
        if self._background is None:
            self._prepare()
        buf = np.asarray(self.canvas.buffer_rgba())
        renderer = self.canvas.get_renderer()
        changed = False
        for ax in self.figure.axes:
            signature = self._signature(ax)
            if self._signatures.get(ax) == signature:
                continue
            self._signatures[ax] = signature
            changed = True
            rows, cols = self._regions[ax]
            buf[rows, cols] = self._background[rows, cols]
            if self.mode == "cells":
                self._paint_cells(ax, buf)
            else:
                for a in self._dynamic(ax):
                    if a.get_visible():
                        a.draw(renderer)
            for spine in ax.spines.values():
                spine.draw(renderer)
        return buf, changed

    def to_png(self) -> bytes:
        """PNG bytes of the current picture (encoded again only when something changed)."""
        rgba, changed = self.render_rgba()
        if changed or not self._png:
            self._png = encode_png(np.ascontiguousarray(rgba[..., :3]))
        return self._png
