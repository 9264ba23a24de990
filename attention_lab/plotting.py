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

import functools
import io
import re

import numpy as np

from .core import TOKENS, AttentionResult
from .fonts import CJK_FONT_CANDIDATES, use_cjk_font
from .formatting import CELL_DIGITS, format_number, format_share
from .strings import fill, strings  # the one strings table (not the site module)
from .worked import subscript

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
#: Each kind of text's size as a fraction of ``font_size`` (the values are 1).  None under 0.93: a
#: 360 px phone shows a figure of two panels in its 312 px column at 0.87 of its size, so the
#: smallest text (13.95 pt drawn as 13.95 CSS px) is 12.1 px there (issue 29: 0.82 gave 10.7 px).
TEXT_SCALE = {"title": 1.0, "ticks": 0.93, "axis": 0.93, "colourbar": 0.93}

#: The tables' titles (the lab's, strings_zh.json "tables") and axis names ("figures").
TITLES = strings()["tables"]
ROW_AXIS = strings()["figures"]["row_axis"]
COL_AXIS = strings()["figures"]["col_axis"]


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
    """``"black"`` or ``"white"``, whichever contrasts more with ``background`` (render.js gets the
    same rule from :func:`colour_config`: dark text from the luminance :data:`DARK_TEXT_FROM` on)."""
    black = contrast_ratio(background, (0, 0, 0))
    white = contrast_ratio(background, (1, 1, 1))
    return "black" if black >= white else "white"


#: The relative luminance at which black and white text contrast equally with a background
#: ((L + 0.05) / 0.05 = 1.05 / (L + 0.05)): from it on, black contrasts more (:func:`text_colour`).
DARK_TEXT_FROM = (0.05 * 1.05) ** 0.5 - 0.05


@functools.lru_cache(maxsize=1)
def colour_config() -> dict:
    """The cells' colours for the lab's views (render.js), in the configs Python writes for them
    (``attention_lab.web.lab_config``, ``attention_lab.shapes.shapes_config``): so the site's and
    Jupyter's tables are coloured by matplotlib's own colormap, as the chapter's figures are.

    ``lut``: :data:`CMAP`'s table, its ``N`` colours as ``rrggbb`` hex one after another, the bytes
    matplotlib paints an image with (``cmap(i, bytes=True)``); a value at ``t`` of its scale
    (clipped to [0, 1]) takes entry ``min(N - 1, floor(t·N))``, as matplotlib's lookup does.
    ``text``: the contrast rule, the ink of each kind and the luminance from which the dark one
    contrasts more (:data:`DARK_TEXT_FROM`, :func:`text_colour`)."""
    import matplotlib as mpl

    cmap = mpl.colormaps[CMAP]
    lut = cmap(np.arange(cmap.N), bytes=True)[:, :3]
    return {"cmap": CMAP, "lut": "".join("%02x%02x%02x" % tuple(int(c) for c in rgb) for rgb in lut),
            "text": {"dark": "#000", "light": "#fff", "dark_from": DARK_TEXT_FROM}}


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
        cell = strings()["twin"]["cell"]  # the lab's column headers: "第 0 格"
        cols = [cell.replace("{c}", str(j)) for j in range(n_cols)]
    return rows, cols


def default_columns(n_tables: int) -> int:
    """Panels per row: two (three tables as 2 + 1, the third in the middle), three from five on.

    A row of three 2x2 tables scaled into a 360 px phone's column left every label at 4-6 px;
    two per row at :data:`PANEL_SIZE` keep every text at >= 10 px there (values about 13 px),
    while the desktop column shows the figure at its own size (480 px wide) and paper likewise.
    """
    return 1 if n_tables == 1 else (2 if n_tables <= 4 else 3)


#: Every SVG the package writes (the chapter's figures): text as text, and reproducible: ids from a
#: fixed salt instead of random ones (clip paths), no date in the metadata.  Two builds of one
#: commit then give the same files, so the built figure's name (its content hash) stays the same.
SVG_RC = {"svg.fonttype": "none", "svg.hashsalt": "f11"}
SVG_METADATA = {"Date": None}


class _SharpFigure:
    """SVG (text stays text) and PNG output for a figure held in ``self.figure`` (made without pyplot)."""

    figure = None

    def to_svg(self) -> str:
        """SVG with text as text (Chinese stays sharp and searchable), CJK font fallbacks and its
        own Chinese glyphs (:func:`embed_cjk_font`)."""
        import matplotlib as mpl

        buffer = io.StringIO()
        with mpl.rc_context(SVG_RC):
            self.figure.savefig(buffer, format="svg", metadata=SVG_METADATA)
        return embed_cjk_font(with_font_fallbacks(buffer.getvalue()))

    def _repr_svg_(self) -> str:
        """Lets Jupyter and myst-nb show the figure as SVG."""
        return self.to_svg()

    def to_png(self, scale: float = PNG_SCALE) -> bytes:
        """Render with the Agg backend at ``scale`` times the figure's dpi (default 2×); PNG bytes."""
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png", dpi=self.figure.dpi * scale)
        return buffer.getvalue()


class AttentionFigure(_SharpFigure):
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
        # A margin of 6 pt (constrained layout's is 3): the browser draws the rotated axis names a
        # hair wider than matplotlib measures them, and at 0.93 of the values' size "位置" touched the edge.
        self.figure.get_layout_engine().set(w_pad=6 / 72, h_pad=6 / 72)
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
                        # A share that only rounds to 0 or 1 shows its bound (<0.001), as the lab's A does.
                        text.set_text(format_share(values[i], result.S[i], j) if name == "A" else format_value(v))
                        text.set_color(text_colour(self.cell_colour(name, v)))
                        text.set_bbox(None)

    def cell_colour(self, name: str, value: float):
        """The (r, g, b) a value gets in table ``name`` (fixed scale, clipped at its ends)."""
        image = self._images[name]
        return image.cmap(image.norm(value))[:3]


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


#: The family of the Chinese glyphs every figure carries with it (:func:`embed_cjk_font`).
EMBEDDED_CJK = "f11-figure-cjk"
_TEXT = re.compile(r"<text\b[^>]*>(.*?)</text>", re.S)


def _cjk_font_face() -> tuple[str, int] | None:
    """The build machine's CJK font (the one :mod:`fonts` chose): its file and, in a collection
    (.ttc), the number of the face with that family name; None without one."""
    from matplotlib import font_manager

    try:
        name = use_cjk_font()
    except Exception:  # no CJK font (the missing-font error is fonts' business): nothing to embed
        return None
    if not name:
        return None
    try:
        path = font_manager.findfont(font_manager.FontProperties(family=name), fallback_to_default=False)
    except ValueError:  # the name is known but its file is not found: nothing to embed
        return None
    if not path.lower().endswith((".ttc", ".otc")):
        return path, -1
    from fontTools.ttLib import TTCollection

    with TTCollection(path, lazy=True) as collection:
        for i, face in enumerate(collection.fonts):
            if face["name"].getDebugName(1) == name:
                return path, i
    return path, 0


@functools.lru_cache(maxsize=64)
def _cjk_subset(chars: str) -> bytes:
    """WOFF of the build machine's CJK font holding only ``chars`` (b"" without the font or glyphs);
    no timestamp, so the same characters always give the same bytes."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    face = _cjk_font_face()
    if face is None:
        return b""
    path, number = face
    font = TTFont(path, fontNumber=number, lazy=True, recalcTimestamp=False)
    cmap = font.getBestCmap() or {}
    chars = "".join(c for c in chars if ord(c) in cmap)
    if not chars:
        return b""
    options = subset.Options()
    options.flavor, options.layout_features, options.hinting, options.name_IDs = "woff", [], False, [1, 2]
    options.notdef_outline, options.desubroutinize = False, True
    subsetter = subset.Subsetter(options)
    subsetter.populate(text=chars)
    subsetter.subset(font)
    out = io.BytesIO()
    subset.save_font(font, out, options)
    return out.getvalue()


def embed_cjk_font(svg: str) -> str:
    """``svg`` carrying the glyphs of its own Chinese text: a subset of the build machine's CJK font
    (a few KB of WOFF) in an ``@font-face``, named right after the first family of every
    ``font-family``.  A figure shown as ``<img>`` can use no font of the page, only the reader's
    system fonts: without a CJK one, Chinese would be boxes (issue 29).  Text stays text (sharp,
    searchable); the same text always gives the same bytes (reproducible builds)."""
    import html

    chars = "".join(sorted({c for t in _TEXT.findall(svg) for c in html.unescape(re.sub(r"<[^>]+>", "", t))
                            if ord(c) > 0x7F}))
    woff = _cjk_subset(chars) if chars else b""
    if not woff or EMBEDDED_CJK in svg:
        return svg
    import base64

    style = ('<style type="text/css">@font-face{font-family:"' + EMBEDDED_CJK + '";src:url(data:font/woff;base64,'
             + base64.b64encode(woff).decode("ascii") + ') format("woff")}</style>')

    def name_it(m: re.Match) -> str:
        families = [f.strip() for f in m.group(1).split(",") if f.strip()]
        return "font-family: " + ", ".join(families[:1] + [f"'{EMBEDDED_CJK}'"] + families[1:])

    svg = _FONT_FAMILY.sub(name_it, svg)
    return re.sub(r"(<svg\b[^>]*>)", lambda m: m.group(1) + style, svg, count=1)


def plot_attention(result: AttentionResult, tables=("S", "A", "O"), **kwargs) -> AttentionFigure:
    """Heatmaps of ``tables`` for the chapter; Jupyter shows the returned object."""
    return AttentionFigure(result, tables=tables, **kwargs)


# --------------------------------------------------------------------------- the vector plane

#: One colour per kind of vector, the lab's (lab.css ``--al-c-x`` ... ``--al-c-o``; a test keeps
#: them equal): each row of X a point, q, k, v arrows from the origin, o a point.
PLANE_COLOURS = {"x": "#333333", "q": "#0a5fb4", "k": "#b34700", "v": "#1d7a33", "o": "#7b2cbf"}
#: Muted grey for what the causal mask blocks (a masked key, its value and its score line).
PLANE_MUTED = "#6b6b6b"
#: The plane figure's layout, in inches: each panel a column :data:`PANEL_SIZE` wide with the square
#: plane in it (room on its left for the tick labels), the title above, the lines of numbers below.
PLANE_LAYOUT = {"left": 0.5, "right": 0.18, "top": 0.07, "bottom": 0.06, "ticks": 0.3, "pad": 0.05}
#: Line spacing of the lines of numbers under the panels.
PLANE_LINE_SPACING = 1.35


def _plane_strings() -> tuple[dict, dict]:
    """The lab's plane templates (``view.plane``: titles, scores, shares) and the figure's own."""
    table = strings()
    return table["view"]["plane"], table["plane_figure"]


_fill = fill  # the catalog's one filler, as render.js's fill


def convex_hull(points) -> np.ndarray:
    """The convex hull of 2-D ``points`` (k, 2), counter-clockwise (Andrew's monotone chain, as
    render.js's ``convexHull``); one or two points come back as they are (a point, a segment)."""
    p = sorted({(float(a), float(b)) for a, b in np.asarray(points, dtype=float).reshape(-1, 2)})
    if len(p) < 3:
        return np.array(p, dtype=float).reshape(-1, 2)

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    def chain(seq):
        out = []
        for a in seq:
            while len(out) >= 2 and cross(out[-2], out[-1], a) <= 0:
                out.pop()
            out.append(a)
        return out

    lower, upper = chain(p), chain(reversed(p))
    return np.array(lower[:-1] + upper[:-1], dtype=float)


def plane_model(result: AttentionResult, row: int = 1) -> dict:
    """The plane's geometry for query ``row`` (render.js's ``planeModel``, in numpy).

    ``q`` = Q[row] and its length ``q_norm``; for each key j (``keys``): the raw score
    ``dot`` = q·k_j, ``scaled`` = dot / √d_k, the foot of k_j on the line through q (``foot`` =
    t·q with t = q·k_j / |q|², so q·k_j = t·|q|² = (signed length of the foot) × |q|),
    ``masked`` (S is −∞ there) and its ``share`` A[row, j]; ``hull``: the convex hull of the
    readable values (the only places a weighted average of them can land); ``o`` = O[row].
    """
    Q, K = result.Q, result.K
    if not 0 <= row < Q.shape[0]:
        raise ValueError(f"row must be 0 to {Q.shape[0] - 1} for Q of shape {Q.shape}, not {row!r}")
    q = Q[row]
    qq = float(q @ q)
    keys = []
    for j, k in enumerate(K):
        t = float(q @ k) / qq if qq > 0 else 0.0
        dot = float(result.raw_scores[row, j])
        keys.append({"j": j, "dot": dot, "scaled": dot / result.scale, "t": t, "foot": t * q,
                     "masked": bool(np.isneginf(result.S[row, j])), "share": float(result.A[row, j])})
    readable = result.V[[not key["masked"] for key in keys]]
    return {"row": row, "q": q, "q_norm": float(np.sqrt(qq)), "keys": keys, "hull": convex_hull(readable),
            "o": result.O[row]}


def _plane_box(points, margin: float = 0.25) -> tuple[float, float, float, float]:
    """x0, x1, y0, y1: a square around ``points`` and the origin (the panels are square, so equal
    spans give both axes one scale), ``margin`` of the span added on every side."""
    p = np.vstack([np.zeros((1, 2)), np.asarray(points, dtype=float).reshape(-1, 2)])
    lo, hi = p.min(axis=0), p.max(axis=0)
    span = float(np.max(hi - lo))
    if not span > 1e-9:
        span = 1.0
    centre = (lo + hi) / 2
    half = span * (0.5 + margin)
    return centre[0] - half, centre[0] + half, centre[1] - half, centre[1] + half


class PlaneFigure(_SharpFigure):
    """The lab's vector plane (render.js ``createPlane``) as a still figure for query ``row``.

    Two panels of one plane at two zooms, in the lab's colours (:data:`PLANE_COLOURS`) and with
    its own templates (``view.plane`` in strings_zh.json):

    * **打分** (``axes["score"]``): the rows of X as points (when ``X`` is given), q and k as
      arrows from the origin (the other rows' q faded), the dotted line through q_i, and for
      each key the dashed drop from k_j to its foot on that line and the foot's signed length
      along q_i as a thick translucent segment (q_i·k_j = that length × |q_i|); under the panel
      one line per key: q_i·k_j and ÷ √d_k;
    * **混合** (``axes["mix"]``): v as arrows, the hull of the readable values dashed (a segment
      for two values), the share A[i, j] beside each v_j, o_i on the hull (the other rows' o
      faded); under the panel o_i as the weighted sum, and that the shares are ≥ 0 and add up to 1.

    A masked key (the causal mask) is drawn dashed and grey and its share says 已挡住; its value
    is not part of the hull.  Laid out by hand (:data:`PLANE_LAYOUT`): two columns of
    :data:`PANEL_SIZE`, as wide as the chapter's heatmaps, so a 360 px phone scales both alike; a
    line of numbers too long for its column is broken after a "，".  What was drawn is kept for
    tests: ``points[(kind, i)]`` (a Line2D with one marker), ``arrows[(kind, i)]`` (an annotation
    whose ``xy`` is the tip), ``feet[j]``, ``drops[j]``, ``shadows[j]``, ``hull`` (Line2D),
    ``score_texts[j]``, ``share_texts[j]``, ``mix_texts``, ``titles``.
    """

    def __init__(self, result: AttentionResult, row: int = 1, X=None, tokens=TOKENS, key_tokens=None,
                 panel_size: float = PANEL_SIZE, font_size: float = FONT_SIZE, dpi: float = 100):
        use_cjk_font()
        from matplotlib.figure import Figure  # no pyplot: no global state, no GUI

        widths = {"Q": result.Q.shape[1], "K": result.K.shape[1], "V": result.V.shape[1]}
        if X is not None:
            X = np.asarray(X, dtype=float)
            if X.ndim != 2 or X.shape[0] != result.Q.shape[0]:
                raise ValueError(f"X must have one row per query, ({result.Q.shape[0]}, 2); got shape {X.shape}")
            widths["X"] = X.shape[1]
        if any(w != 2 for w in widths.values()):
            raise ValueError("the plane shows only vectors two numbers wide; got widths "
                             + ", ".join(f"{k} {w}" for k, w in widths.items()))
        self.model = plane_model(result, row)
        self.result, self.row, self.X = result, row, X
        self.tokens = tuple(tokens)
        self.key_tokens = tuple(key_tokens) if key_tokens is not None else self.tokens
        self.font_size = font_size
        # Latin letters, digits, ₀ ₁ and · from DejaVu Sans (the CJK font has no subscripts and a
        # full-width ·), Chinese from the CJK font: matplotlib falls back glyph by glyph, and so does
        # the reader's browser through the SVG's font list (with_font_fallbacks).
        self._family = [f for f in ("DejaVu Sans", use_cjk_font()) if f]
        self.points, self.arrows = {}, {}
        self.feet, self.drops, self.shadows, self.share_texts = [], [], [], []
        self.score_texts, self.mix_texts, self.titles = [], [], []
        self.hull = None
        self._labels = []

        lab, own = _plane_strings()
        self._names = {"qi": "q" + subscript(row), "oi": "o" + subscript(row), "tok": self._token(self.tokens, row)}
        column = panel_size - 2 * PLANE_LAYOUT["pad"]
        small = font_size * TEXT_SCALE["axis"]
        lines = {"score": [self._wrap(text, small, column) for text, _ in self._score_lines(lab)],
                 "mix": [self._wrap(text, small, column) for text in self._mix_lines(own)]}
        n_lines = max(sum(t.count("\n") + 1 for t in texts) for texts in lines.values())
        title_size = font_size * TEXT_SCALE["ticks"]
        titles = {name: _fill(lab["titles"][name], **self._names) for name in ("score", "mix")}
        if max(self._width(t, title_size, "bold") for t in titles.values()) > column * 72:
            title_size = small  # never smaller than the axes' numbers
        L = PLANE_LAYOUT
        side = panel_size - L["left"] - L["right"]
        line_h = small * PLANE_LINE_SPACING / 72
        title_h = title_size * 1.45 / 72
        below = L["ticks"] + n_lines * line_h
        height = L["top"] + title_h + side + below + L["bottom"]
        width = 2 * panel_size
        self.figure = Figure(figsize=(width, height), dpi=dpi)
        self.axes = {}
        for c, name in enumerate(("score", "mix")):
            left = c * panel_size
            self.axes[name] = self.figure.add_axes(((left + L["left"]) / width, (L["bottom"] + below) / height,
                                                    side / width, side / height))
            self.titles.append(self.figure.text(
                (left + panel_size / 2) / width, (height - L["top"]) / height, titles[name], ha="center", va="top",
                fontsize=title_size, fontweight="bold", color="#1a1a1a", fontfamily=self._family))
        self._line_at = lambda c, k: ((c * panel_size + L["pad"]) / width,  # noqa: E731
                                      (L["bottom"] + (n_lines - k) * line_h) / height)
        self._draw(lab, lines)
        self._keep_labels_inside()

    # ------------------------------------------------------------------ text
    def _token(self, names, i):
        return names[i] if i < len(names) else str(i)

    def _width(self, text: str, size: float, weight: str = "normal") -> float:
        """Width of ``text`` in points, in this figure's fonts (the widest line of several)."""
        from matplotlib.backends.backend_agg import RendererAgg
        from matplotlib.font_manager import FontProperties

        renderer = RendererAgg(1, 1, 72)
        prop = FontProperties(family=self._family, size=size, weight=weight)
        return max(renderer.get_text_width_height_descent(t, prop, ismath=False)[0] for t in text.split("\n"))

    def _wrap(self, text: str, size: float, width_in: float) -> str:
        """``text`` broken after a "，" wherever a line would be wider than ``width_in``."""
        comma = strings()["punctuation"]["comma"]
        parts = [p + comma for p in text.split(comma)]
        parts[-1] = parts[-1][:-1]
        out = [parts[0]]
        for part in parts[1:]:
            if self._width(out[-1] + part, size) <= width_in * 72:
                out[-1] += part
            else:
                out.append(part)
        return "\n".join(out)

    def _score_lines(self, lab) -> list[tuple[str, bool]]:
        """One line per key: q_i·k_j and ÷ √d_k (the lab's ``score`` / ``score_masked``), masked or not."""
        m, d_k = self.model, format_value(self.result.d_k)
        out = []
        for key in m["keys"]:
            if m["q_norm"] == 0:
                text = _fill(lab["q_zero"], qi=self._names["qi"]) if key["j"] == 0 else ""
            else:
                text = _fill(lab["score_masked" if key["masked"] else "score"], qi=self._names["qi"],
                             kj="k" + subscript(key["j"]), dot=format_value(key["dot"]), d_k=d_k,
                             s=format_value(key["scaled"]))
            out.append((text, key["masked"]))
        return out

    def _mix_lines(self, own) -> list[str]:
        keys = self.model["keys"]
        terms = " + ".join(_fill(own["mix_term"], a=format_value(key["share"]), vj="v" + subscript(key["j"]))
                           for key in keys if not key["masked"])
        return [_fill(own["mix_sum"], oi=self._names["oi"], terms=terms),
                _fill(own["share_sum"], total=format_value(sum(key["share"] for key in keys)))]

    def _label(self, ax, xy, off, text, colour, size, alpha=1.0, **kw):
        """A text ``off`` points from ``xy``, anchored on the side it leans to; near an edge of the
        panel it turns back inwards (as the lab keeps its labels inside the plane)."""
        (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
        fx, fy = (xy[0] - x0) / (x1 - x0), (xy[1] - y0) / (y1 - y0)
        ha = "left" if off[0] > 2 else ("right" if off[0] < -2 else "center")
        va = "bottom" if off[1] > 2 else ("top" if off[1] < -2 else "center")
        if fx > 0.78 and ha == "left":
            ha = "right"
        elif fx < 0.22 and ha == "right":
            ha = "left"
        if fy > 0.9 and va == "bottom":
            va = "top"
        elif fy < 0.1 and va == "top":
            va = "bottom"
        label = ax.annotate(text, xy=(float(xy[0]), float(xy[1])), xytext=off, textcoords="offset points",
                            ha=ha, va=va, fontsize=size, color=colour, alpha=alpha, fontfamily=self._family,
                            zorder=7, **kw)
        self._labels.append((ax, label))
        return label

    def _keep_labels_inside(self) -> None:
        """Move every label that reaches past its panel's frame back inside it (drawn once to
        measure; a long share such as “×0（已挡住）” beside a value near the edge would otherwise
        run into the other panel)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        renderer = FigureCanvasAgg(self.figure).get_renderer()
        to_points = 72 / self.figure.dpi
        for ax, label in self._labels:
            frame, box = ax.get_window_extent(renderer), label.get_window_extent(renderer)
            dx = max(0.0, frame.x0 + 2 - box.x0) - max(0.0, box.x1 - (frame.x1 - 2))
            dy = max(0.0, frame.y0 + 2 - box.y0) - max(0.0, box.y1 - (frame.y1 - 2))
            if dx or dy:
                x, y = label.xyann
                label.xyann = (x + dx * to_points, y + dy * to_points)

    # ------------------------------------------------------------------ pieces
    def _frame(self, ax, points):
        """A square data box (one scale on both axes), the origin's axes, a light grid, a few ticks."""
        from matplotlib.ticker import MaxNLocator

        x0, x1, y0, y1 = _plane_box(points)
        ax.set_xlim(x0, x1)
        ax.set_ylim(y0, y1)
        ax.set_aspect("equal")  # the box is square and so is the panel: nothing to adjust
        ax.axhline(0, color="#8a8a8a", linewidth=0.9, zorder=0)
        ax.axvline(0, color="#8a8a8a", linewidth=0.9, zorder=0)
        locate = MaxNLocator(nbins=3, integer=True)  # a few whole-number ticks, only those in view
        ax.set_xticks([v for v in locate.tick_values(x0, x1) if x0 <= v <= x1])
        ax.set_yticks([v for v in locate.tick_values(y0, y1) if y0 <= v <= y1])
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_formatter(lambda v, _pos: format_value(v))
        ax.grid(True, color="#e3e3e3", linewidth=0.6, zorder=-1)
        ax.tick_params(labelsize=self.font_size * TEXT_SCALE["axis"], length=0, colors="#555555", pad=3)
        for label in ax.get_xticklabels() + ax.get_yticklabels():
            label.set_fontfamily(self._family)
        for spine in ax.spines.values():
            spine.set_color("#c8c8c8")

    def _arrow(self, ax, kind, i, v, label, side, faded=False, masked=False):
        """An arrow from the origin to ``v``; its name beyond the tip, a step to one side (``side`` 1:
        left of its direction, as q; −1: right, as k and v: at the baseline q₀ and k₁ are one arrow)."""
        colour = PLANE_MUTED if masked else PLANE_COLOURS[kind]
        alpha = 0.35 if faded else (0.6 if kind == "k" else 1.0)
        self.arrows[(kind, i)] = ax.annotate(
            "", xy=(float(v[0]), float(v[1])), xytext=(0.0, 0.0), zorder=2 if kind == "k" else 3,
            arrowprops={"arrowstyle": "-|>,head_length=0.55,head_width=0.3", "color": colour,
                        "linewidth": 4.2 if kind == "k" else 2.2, "alpha": alpha, "shrinkA": 0, "shrinkB": 0,
                        "linestyle": (0, (3, 2)) if masked else "-"})
        n = float(np.hypot(*v))
        ux, uy = (v[0] / n, v[1] / n) if n > 0 else (0.7, 0.7)
        off = (8 * ux - side * 11 * uy, 8 * uy + side * 11 * ux)
        self._label(ax, v, off, label, colour, self.font_size * TEXT_SCALE["axis"], alpha=0.5 if faded else 1.0,
                    fontweight="bold")

    def _point(self, ax, kind, i, p, label, faded=False):
        colour = PLANE_COLOURS[kind]
        (dot,) = ax.plot([p[0]], [p[1]], marker="o", markersize=8 if kind == "x" else 7.5, color=colour,
                         markeredgecolor="white", markeredgewidth=1.2, alpha=0.4 if faded else 1.0, zorder=6,
                         linestyle="none")
        self.points[(kind, i)] = dot
        if label:  # beyond the point, away from the origin
            n = float(np.hypot(*p))
            ux, uy = (p[0] / n, p[1] / n) if n > 0 else (0.0, -1.0)
            self._label(ax, p, (9 * ux, 9 * uy), label, colour, self.font_size * TEXT_SCALE["axis"],
                        fontweight="bold")

    # ------------------------------------------------------------------ the two panels
    def _draw(self, lab, lines) -> None:
        r, m, row = self.result, self.model, self.row
        tq = lambda i: self._token(self.tokens, i)  # noqa: E731
        tk = lambda j: self._token(self.key_tokens, j)  # noqa: E731
        small = self.font_size * TEXT_SCALE["axis"]

        # 打分: X, q, k; the line through q_i, each key's foot on it; the scores under the panel.
        ax = self.axes["score"]
        shown = [r.Q, r.K, np.array([key["foot"] for key in m["keys"]])] + ([self.X] if self.X is not None else [])
        self._frame(ax, np.vstack(shown))
        if m["q_norm"] > 0:
            ax.axline((0.0, 0.0), (float(m["q"][0]), float(m["q"][1])), color=PLANE_COLOURS["q"],
                      linewidth=1.0, linestyle=(0, (1.5, 2.5)), alpha=0.7, zorder=1)
        k_line = 0
        for key, text in zip(m["keys"], lines["score"]):
            j, k = key["j"], r.K[key["j"]]
            colour = PLANE_MUTED if key["masked"] else PLANE_COLOURS["k"]
            (shadow,) = ax.plot([0.0, key["foot"][0]], [0.0, key["foot"][1]], color=colour, linewidth=7,
                                alpha=0.22, solid_capstyle="butt", zorder=1)
            (drop,) = ax.plot([k[0], key["foot"][0]], [k[1], key["foot"][1]], color=colour, linewidth=1.3,
                              linestyle=(0, (3, 2.5)), zorder=4)
            (foot,) = ax.plot([key["foot"][0]], [key["foot"][1]], marker="o", markersize=4.5, color=colour,
                              linestyle="none", zorder=4)
            self.shadows.append(shadow)
            self.drops.append(drop)
            self.feet.append(foot)
            x, y = self._line_at(0, k_line)
            self.score_texts.append(self.figure.text(x, y, text, ha="left", va="top", fontsize=small, color=colour,
                                                     linespacing=PLANE_LINE_SPACING, fontfamily=self._family))
            k_line += text.count("\n") + 1
        for j, k in enumerate(r.K):
            self._arrow(ax, "k", j, k, f"k{subscript(j)} {tk(j)}", -1, masked=m["keys"][j]["masked"])
        for i, q in enumerate(r.Q):
            self._arrow(ax, "q", i, q, f"q{subscript(i)} {tq(i)}", 1, faded=i != row)
        if self.X is not None:
            for i, x in enumerate(self.X):
                self._point(ax, "x", i, x, f"x{subscript(i)} {tq(i)}")

        # 混合: v, the hull of the readable values, the shares beside the v arrows, o_i on the hull.
        ax = self.axes["mix"]
        self._frame(ax, np.vstack([r.V, r.O]))
        hull = m["hull"]
        closed = np.vstack([hull, hull[:1]]) if len(hull) > 2 else hull
        (self.hull,) = ax.plot(closed[:, 0], closed[:, 1], color=PLANE_COLOURS["o"], linewidth=1.4,
                               linestyle=(0, (5, 3)), zorder=2)
        if len(hull) > 2:
            ax.fill(hull[:, 0], hull[:, 1], color=PLANE_COLOURS["o"], alpha=0.08, zorder=1)
        centre = r.V.mean(axis=0)
        for j, v in enumerate(r.V):
            key = m["keys"][j]
            self._arrow(ax, "v", j, v, f"v{subscript(j)} {tk(j)}", -1, masked=key["masked"])
            # The share beside the middle of its arrow, on the side away from the other values.
            n = float(np.hypot(*v)) or 1.0
            px, py = -v[1] / n, v[0] / n
            mid = 0.55 * v
            if (mid[0] + px - centre[0]) * px + (mid[1] + py - centre[1]) * py < 0:
                px, py = -px, -py
            text = lab["weight_masked"] if key["masked"] else _fill(lab["weight"], a=format_value(key["share"]))
            self.share_texts.append(self._label(ax, mid, (9 * px, 9 * py), text,
                                                PLANE_MUTED if key["masked"] else PLANE_COLOURS["v"],
                                                self.font_size * TEXT_SCALE["axis"], fontweight="bold"))
        for i, o in enumerate(r.O):
            if i != row:
                self._point(ax, "o", i, o, "", faded=True)
        self._point(ax, "o", row, r.O[row], f"{self._names['oi']} {tq(row)}")
        k_line = 0
        for text in lines["mix"]:
            x, y = self._line_at(1, k_line)
            self.mix_texts.append(self.figure.text(x, y, text, ha="left", va="top", fontsize=small,
                                                   color=PLANE_COLOURS["o"], linespacing=PLANE_LINE_SPACING,
                                                   fontfamily=self._family))
            k_line += text.count("\n") + 1


def plane_figure(result: AttentionResult, row: int = 1, X=None, **kwargs) -> PlaneFigure:
    """The lab's vector plane for query ``row`` of ``result`` (``X``: its rows drawn as points too);
    Jupyter shows the returned object.  See :class:`PlaneFigure`."""
    return PlaneFigure(result, row=row, X=X, **kwargs)
