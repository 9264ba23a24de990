/* F11 attention lab: the one view (render.js), the same on the website and in Jupyter.
 *
 * mountView(container, options) draws S, A, O, Q, K, V as HTML tables, the worked text
 * for the chosen row, a note area and an explanation line; view.update(state) redraws
 * from a state {params, result, row, notes}.  It knows nothing about controls: the site
 * (app.js) and the Jupyter widget (attention_lab/widget.py) drive it.  Everything a reader
 * does that changes no parameter lives here, so both places get it:
 *   linked cells (hover/focus -> data-linked on the sources, explanation [data-lab-explain]),
 *   step-through ([data-lab-action=step], data-step on the root, data-pending cells),
 *   what changed (data-changed, "▲0.12"), predict/reveal (A and O show "?"),
 *   row headers of S, A, O as buttons choosing the explained row ([data-lab-row-pick], aria-pressed),
 *   the vector plane (createPlane, [data-plane]: X's rows as points, q, k, v as arrows, o as points;
 *   linked both ways with the cells; its points dragged or moved by the arrow keys call options.onPoint).
 * Colours: cividis on a fixed scale per kind of table (legend under each), text black or
 * white per cell, whichever contrasts more (always >= 4.58:1, WCAG AA); masked cells hatched
 * and labelled.  All Chinese text comes from strings_zh.json (options.strings).
 *
 *   var view = AttentionLabRender.mountView(container, {
 *     strings,      // strings_zh.json as an object
 *     ranges,       // {X: {min, max, step}, Wq, Wk, Wv, d_k}
 *     core,         // AttentionLabCore (attention.js); default window.AttentionLabCore
 *     controls,     // optional Element: the driver's controls, placed in the view's layout
 *     sourceRoot,   // optional Element or () => Element holding [data-lab-source="X[0,1]"] controls
 *     findSources,  // optional (names) => [Element]: the driver's controls for these parameter names
 *                   //   (instead of sourceRoot's [data-lab-source]); Jupyter: the ipywidgets by class
 *     wideAt,       // optional width in px from which the layout is "wide" (default 48rem)
 *     measure,      // optional Element or () => Element whose width sets the layout (default: the root);
 *                   //   Jupyter: the lab's box of ipywidgets controls + this view
 *     controlsBeside, // optional true: the driver lays its own controls (outside the view) beside the
 *                   //   S/A/O column in the wide layout, so the buttons, explanation and notes go with
 *                   //   Q/K/V under them, as when options.controls is given
 *     onPoint,      // optional function (table, i, [a, b], settling): a point of the vector plane was dragged
 *                   //   or moved with the arrow keys (snapped to options.ranges[table]); without it the
 *                   //   points are drawn but cannot be moved.  settling: the drag goes on
 *     keysHint,     // optional text beside the step buttons while no stage is shown (the site's presenter keys)
 *     planeFirst,   // optional true: beside the controls, the plane goes above the explanation (Jupyter)
 *     onLayout,     // optional function (mode): called when data-layout changes
 *     layoutAtMount, // optional true: the layout picked at mount (a layout forced then), for a driver
 *                   //   that sizes its tables by it before the first paint (the shapes lab's strip:
 *                   //   fitted a frame later, the phone's controls jumped 190 px); default: at the
 *                   //   ResizeObserver's first call, still before the first paint, nothing forced
 *     onRow         // optional function (row): a row header of S/A/O was clicked (Enter, Space); without
 *                   //   it the view clicks the driver's control [data-lab-row="row"] under sourceRoot
 *   });
 *   view.update({params, result, row, notes});
 *     params: {"X[0,0]": 1, ..., "d_k": 2, "causal": true}; result: {Q, K, V, S, A, O} as arrays of
 *     rows (masked S cells -Infinity or null; omitted: computed from params); row: 0 | 1;
 *     notes: plain strings for the note area.
 *     Several heads (the shapes lab, h > 1): result is attention.js multiHeadAttention's {Q, K, V,
 *     heads: [{Q, K, V, M, S, A, O, raw_scores, d_k, pad}], O (the heads' outputs side by side), Y, Wo,
 *     d_k, d_v}; the strip then holds per head its S and A (figure and cells [data-head="t"]), then
 *     the concatenation O and Y ([data-matrix="Y"]); Q, K, V, O mark each head's columns
 *     (data-head on their cells, a band of head names over them).  The row headers of a head's S and A
 *     choose the row and the head the worked text and the step-through explain (state.head sets it).
 *   view.step() / view.predict() / view.reveal() / view.destroy()
 * The root ([data-attention-lab], the container's closest, else the container) carries
 * data-layout (wide | narrow | phone, from its own width), data-step, data-predict and
 * data-lab-ready="true" after the first update.
 */
(function (root, factory) {
  "use strict";
  var render = factory(root);
  if (typeof module !== "undefined" && module.exports) module.exports = render;
  if (root) root.AttentionLabRender = render;
})(typeof window !== "undefined" ? window : null, function (global) {
  "use strict";

  /** The cells' colours, from Python (attention_lab.plotting.colour_config, the config's "colours"):
   *  matplotlib's colormap as its N colours (lut, "rrggbb" one after another) and the contrast rule
   *  (text: dark and light ink, the luminance dark_from from which the dark ink contrasts more).
   *  mountView sets them from options.colours; setColours for the pure functions on their own. */
  var CIVIDIS = null, INK = null;
  function setColours(colours) {
    if (!colours || typeof colours.lut !== "string" || !colours.text) {
      throw new Error("attention lab view: options.colours is missing (the config's \"colours\", from attention_lab.plotting.colour_config)");
    }
    CIVIDIS = [];
    for (var k = 0; k + 6 <= colours.lut.length; k += 6) {
      CIVIDIS.push([0, 2, 4].map(function (o) { return parseInt(colours.lut.slice(k + o, k + o + 2), 16); }));
    }
    INK = colours.text;
  }

  /** One colour scale per kind of table, fixed (never rescaled on a change); values
   *  beyond the ends take the end colour (the legend says "≤"/"≥"). */
  var SCALES = { Q: [-3, 3], K: [-3, 3], S: [-3, 3], A: [0, 1], V: [-20, 20], O: [-20, 20] };
  /** Several heads' output Y is drawn on O's scale (an output, like O). */
  function scaleOf(name) { return SCALES[name === "Y" ? "O" : name]; }
  var TABLE_NAMES = ["Q", "K", "V", "S", "A", "O"];
  var PARAM_TABLE = { Q: "Wq", K: "Wk", V: "Wv" };

  /** t in [0, 1] -> [r, g, b] (integers 0..255): the colormap's entry min(N - 1, floor(t·N)), as matplotlib looks it up. */
  function cividis(t) {
    if (!(t > 0)) t = 0;
    if (t > 1) t = 1;
    return CIVIDIS[Math.min(CIVIDIS.length - 1, Math.floor(t * CIVIDIS.length))].slice();
  }

  /** WCAG relative luminance of an sRGB colour [r, g, b] (0..255). */
  function luminance(rgb) {
    var c = rgb.map(function (v) {
      v /= 255;
      return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  }

  /** Text colour for a cell background by Python's contrast rule (INK: dark from the luminance
   *  dark_from on, where it contrasts more), with the contrast ratio (>= 4.58 for every background). */
  function textColour(rgb) {
    var L = luminance(rgb);
    var white = 1.05 / (L + 0.05), black = (L + 0.05) / 0.05;
    return L < INK.dark_from ? { colour: INK.light, ratio: white } : { colour: INK.dark, ratio: black };
  }

  /** Background [r, g, b] of a value in table `name` (fixed scale). */
  function cellColour(name, v) {
    var sc = scaleOf(name);
    return cividis((v - sc[0]) / (sc[1] - sc[0]));
  }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function fill(template, values) {
    template = String(template || "");
    Object.keys(values).forEach(function (key) {
      template = template.split("{" + key + "}").join(String(values[key]));
    });
    return template;
  }

  /** null (JSON from Python) -> -Infinity; everything else as a number. */
  function num(v) { return v === null || v === undefined ? -Infinity : Number(v); }

  function normaliseResult(result) {
    function tables(src, names) {
      var out = {};
      names.forEach(function (n) { out[n] = src[n].map(function (row) { return row.map(num); }); });
      return out;
    }
    if (!isMulti(result)) return tables(result, TABLE_NAMES);
    var out = tables(result, ["Q", "K", "V", "O", "Y"]);
    out.heads = result.heads.map(function (r) { return tables(r, TABLE_NAMES); });
    return out;
  }

  /** a and b (results: arrays and objects of numbers) would give the same JSON, without writing it. */
  function sameData(a, b) {
    if (typeof a === "number" && typeof b === "number") return a === b || (!isFinite(a) && !isFinite(b));
    if (!a || !b || typeof a !== "object" || typeof b !== "object") return a === b;
    var ka = Object.keys(a), kb = Object.keys(b);
    if (ka.length !== kb.length) return false;
    for (var k = 0; k < ka.length; k++) if (!sameData(a[ka[k]], b[ka[k]])) return false;
    return true;
  }

  /** A result of several heads (attention.js multiHeadAttention with h > 1). */
  function isMulti(result) { return !!(result && result.heads && result.heads.length > 1); }

  /** The worked line that carries data-current at each stage (a line's own stage, 0..5, comes
   *  with it from core.workedSteps: worked.STAGE; 6, several heads: core.projectionSteps). */
  var STAGE_LINE = [null, "raw_scores", "scaled", "add_mask", "shares", "output", "y_output"];

  /** A worked line with its long decimals cut to 4 (0.6697615493 -> 0.6698; under 1, 4 significant
   *  digits: 0.0000123457 -> 0.00001235), never to a whole number it is not (0.99999 stays); an "="
   *  after a shortened number becomes "≈" (the numbers beside it are rounded now). */
  function shortNumbers(text) {
    var cut = false;
    return text.replace(/(\d+)\.(\d+)|(\s)=(\s)/g, function (m, whole, dec, a, b) {
      if (whole === undefined) return cut ? a + "\u2248" + b : m;
      for (var keep = (whole === "0" ? dec.match(/^0*/)[0].length : 0) + 4; keep < dec.length; keep++) {
        var out = Number(m).toFixed(keep).replace(/0+$/, "").replace(/\.$/, "");
        if (out.indexOf(".") >= 0) { cut = true; return out; }
      }
      return m;
    });
  }

  // ------------------------------------------------------------------ one table

  /** One table.  spec: {name, title, rows, cols, rowPick, explainId, legend}; several heads also
   *  head (this table belongs to head t: data-head on the figure and the cells) or colHeads (the
   *  width of a head's columns: a band of headLabel over them, data-head on each cell and
   *  data-head-start where a head other than the first begins). */
  function createMatrix(parent, spec) {
    var figure = el("figure", { "class": "al-matrix", "data-matrix-table": spec.name });
    var table = el("table", { "class": "al-table" });
    table.appendChild(el("caption", { "class": "al-caption" }, spec.title));
    var own = spec.head !== undefined && spec.head !== null;
    if (own) figure.setAttribute("data-head", String(spec.head));
    var hd = { name: spec.name, head: own ? spec.head : null, root: figure, cells: [], picks: [],
      caption: table.firstChild, thead: null, tbody: el("tbody"), per: 0, colsAs: null };
    table.appendChild(el("thead"));
    table.appendChild(hd.tbody);
    figure.appendChild(table);
    if (spec.legend) figure.appendChild(typeof spec.legend === "function" ? spec.legend() : spec.legend);
    hd.thead = table.children[1];
    reshapeMatrix(hd, spec);
    if (parent) parent.appendChild(figure);
    return hd;
  }
  /** Column (or row) k of a table whose heads are `width` wide: data-head = its head, data-head-start
   *  where a head other than the first begins; width 0: no heads, both taken away.  Set only when they
   *  differ (a shape change re-marks the cells it keeps).  The shapes lab's input tables use it too. */
  function markHead(node, k, width) {
    var at = width ? String(Math.floor(k / width)) : null, start = !!width && k > 0 && k % width === 0;
    if (node.getAttribute("data-head") !== at) { if (at === null) node.removeAttribute("data-head"); else node.setAttribute("data-head", at); }
    if (start !== node.hasAttribute("data-head-start")) { if (start) node.setAttribute("data-head-start", ""); else node.removeAttribute("data-head-start"); }
    return node;
  }
  /** Mark a header or cell of column j with its head: the table's own (spec.head), or with colHeads
   *  the head whose columns it is in (markHead). */
  function headOf(hd, j, node) {
    if (hd.head === null) return markHead(node, j, hd.per);
    if (node.getAttribute("data-head") !== String(hd.head)) node.setAttribute("data-head", String(hd.head));
    return node;
  }
  function newCell(hd, spec, i, j) {
    var td = headOf(hd, j, el("td", { "class": "al-cell", "data-matrix": spec.name, "data-row": String(i), "data-col": String(j),
      tabindex: i === 0 && j === 0 ? "0" : "-1", "aria-describedby": spec.explainId }));
    var value = el("span", { "class": "al-v" });
    var delta = el("span", { "class": "al-d", "aria-hidden": "true" });
    var mark = el("span", { "class": "al-m" });
    td.appendChild(value);
    td.appendChild(delta);
    td.appendChild(mark);
    return { td: td, value: value, delta: delta, mark: mark, key: null };
  }
  /** Bring a table to `spec` (new, or the last shape's: its caption, its header when the columns
   *  differ, its rows' names, rows and cells added or taken away at the end), so that a shape change
   *  keeps the nodes of every cell that stays: only what is new is styled and laid out anew. */
  function reshapeMatrix(hd, spec) {
    if (hd.caption.textContent !== spec.title) hd.caption.textContent = spec.title;
    var per = spec.colHeads || 0, m = spec.cols.length, n = spec.rows.length;
    var colsAs = [spec.cols.join("\u0001"), per, spec.headLabel || ""].join("|");
    var recolumned = colsAs !== hd.colsAs;
    if (recolumned) {  // the header rows anew (a few nodes); the cells keep theirs
      hd.colsAs = colsAs;
      hd.per = per;
      var thead = el("thead"), headRow = el("tr");
      if (per) {  // the heads' names over their columns
        var band = thead.appendChild(el("tr", { "class": "al-head-band" }));
        band.appendChild(el("td", { "class": "al-corner" }));
        for (var t = 0; t * per < m; t++) {
          band.appendChild(headOf(hd, t * per, el("th", { "class": "al-col al-head-name", scope: "colgroup", colspan: String(per) },
            fill(spec.headLabel || "{t}", { t: t }))));
        }
      }
      headRow.appendChild(el("td", { "class": "al-corner" }));
      spec.cols.forEach(function (label, j) { headRow.appendChild(headOf(hd, j, el("th", { "class": "al-col", scope: "col" }, label))); });
      thead.appendChild(headRow);
      hd.thead.parentNode.replaceChild(thead, hd.thead);
      hd.thead = thead;
    }
    while (hd.cells.length > n) {
      hd.tbody.removeChild(hd.tbody.lastChild);
      hd.cells.pop();
      if (spec.rowPick) hd.picks.pop();
    }
    hd.cells.forEach(function (row, i) {  // the rows that stay: their name, their cells
      var label = spec.rows[i], tr = hd.tbody.children[i], node = spec.rowPick ? hd.picks[i] : tr.firstChild;
      if (node.textContent !== label) node.textContent = label;
      if (spec.rowPick && spec.rowPick !== true) {
        var said = fill(spec.rowPick, { i: i, tok: label });
        if (node.getAttribute("aria-label") !== said) node.setAttribute("aria-label", said);
      }
      if (recolumned) row.forEach(function (c, j) { if (j < m) headOf(hd, j, c.td); });
      while (row.length > m) tr.removeChild(row.pop().td);
      for (var j = row.length; j < m; j++) { var more = newCell(hd, spec, i, j); tr.appendChild(more.td); row.push(more); }
    });
    for (var i = hd.cells.length; i < n; i++) {
      var tr = el("tr"), label = spec.rows[i];
      var th = tr.appendChild(el("th", { "class": "al-row", scope: "row" }, spec.rowPick ? null : label));
      if (spec.rowPick) {
        // The row header chooses the row the worked text explains (a button: click, Enter, Space).
        var pick = el("button", { type: "button", "class": "al-rowpick", "data-lab-row-pick": String(i),
          "aria-pressed": "false" }, label);
        if (spec.rowPick !== true) pick.setAttribute("aria-label", fill(spec.rowPick, { i: i, tok: label }));
        th.appendChild(pick);
        hd.picks.push(pick);
      }
      var rowCells = [];
      for (var c = 0; c < m; c++) { var cell = newCell(hd, spec, i, c); tr.appendChild(cell.td); rowCells.push(cell); }
      hd.cells.push(rowCells);
      hd.tbody.appendChild(tr);
    }
  }

  /** A small legend: the scale's ends, the gradient between them, the masked swatch. */
  function legend(name, strings, format) {
    var sc = scaleOf(name), v = strings.view || {};
    var box = el("div", { "class": "al-legend", "aria-hidden": "true" });
    var clip = name !== "A";
    box.appendChild(el("span", { "class": "al-legend-end" }, (clip ? "≤" : "") + format(sc[0])));
    var stops = [];
    for (var k = 0; k <= 8; k++) stops.push("rgb(" + cividis(k / 8).join(",") + ")");
    var bar = el("span", { "class": "al-legend-bar" });
    bar.style.backgroundImage = "linear-gradient(to right," + stops.join(",") + ")";
    box.appendChild(bar);
    box.appendChild(el("span", { "class": "al-legend-end" }, (clip ? "≥" : "") + format(sc[1])));
    if (name === "S" || name === "A") {
      box.appendChild(el("span", { "class": "al-legend-masked" }));
      box.appendChild(el("span", { "class": "al-legend-end" }, v.masked_label || ""));
    }
    return box;
  }

  // ------------------------------------------------------------------ the vector plane

  /* Every vector of the 2x2 lab is two numbers wide, so the whole computation fits in one plane
   * (createPlane): the rows of X as points, q, k and v as arrows from the origin, o as a point.
   * Two panels of the same plane at two zooms (V is ten times longer than Q and K at the baseline):
   *   打分 (score): X, q, k; for the explained row i the foot of each k_j on the line of q_i (the
   *     dot product is |q_i| times that signed length) with q_i·k_j and ÷ √d_k written beside it;
   *   混合 (mix): v, the hull of the readable values, the shares A[i, ·] at their tips and o_i,
   *     which is their weighted average and so lies inside that hull.
   * Drawn as SVG in CSS pixels (the viewBox is the element's own size, so text keeps the lab's
   * sizes); rebuilt only when the shape changes, otherwise attributes are set when they differ.
   * Test contract: [data-plane] holds, for each drawn row, an element with data-vector (x, xs, q,
   * k, v, o), data-row and data-value="a,b" (full precision). */

  var SVG_NS = "http://www.w3.org/2000/svg";
  function svgEl(tag, attrs, text) {
    var node = document.createElementNS(SVG_NS, tag);
    if (attrs) Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }
  /** Set an attribute of a plane element only when it differs from what this file last set
   *  (kept on the node, so no DOM read: the plane writes ~150 attributes per drawing). */
  function setAttr(node, name, value) {
    value = String(value);
    var was = node.__attrs || (node.__attrs = {});
    if (was[name] !== value) { was[name] = value; node.setAttribute(name, value); }
  }
  /** Set a plane element's text only when it differs from what this file last set. */
  function setText(node, text) {
    if (node.__text !== text) writeText(node, node.__text = text);
  }
  /** node.textContent = text, but into its one text node when it has one (no new node). */
  function writeText(node, text) {
    var t = node.firstChild;
    if (t && t === node.lastChild && t.nodeType === 3 && text) t.data = text;
    else node.textContent = text;
  }

  /** Andrew's monotone chain: the convex hull of points [[x, y], ...], counter-clockwise. */
  function convexHull(points) {
    var p = points.map(function (a) { return [a[0], a[1]]; }).sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
    if (p.length < 3) return p;
    var cross = function (o, a, b) { return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]); };
    var lower = [], upper = [];
    p.forEach(function (a) {
      while (lower.length >= 2 && cross(lower[lower.length - 2], lower[lower.length - 1], a) <= 0) lower.pop();
      lower.push(a);
    });
    p.slice().reverse().forEach(function (a) {
      while (upper.length >= 2 && cross(upper[upper.length - 2], upper[upper.length - 1], a) <= 0) upper.pop();
      upper.push(a);
    });
    return lower.slice(0, -1).concat(upper.slice(0, -1));
  }

  /** The plane's geometry for query row `row` of a result {Q, K, V, S, A, O, raw_scores, d_k}
   *  (pure: the node tests compare it with their own computation).  For each key j: the dot
   *  product q_i·k_j (the raw score), its scaled value, the foot of k_j on the line through q_i
   *  (t·q_i with t = q·k / |q|², so q·k = t·|q|²), masked or not, and its share; the hull of the
   *  readable values; o_i. */
  function planeModel(result, row) {
    var q = result.Q[row], qq = q[0] * q[0] + q[1] * q[1], dk = result.d_k;
    var keys = result.K.map(function (k, j) {
      var dot = result.raw_scores ? result.raw_scores[row][j] : q[0] * k[0] + q[1] * k[1];
      var t = qq > 0 ? (q[0] * k[0] + q[1] * k[1]) / qq : 0;
      return { j: j, dot: dot, scaled: dot / Math.sqrt(dk), t: t, foot: [t * q[0], t * q[1]],
        masked: result.S[row][j] === -Infinity, share: result.A[row][j] };
    });
    var readable = result.V.filter(function (_, j) { return !keys[j].masked; });
    return { row: row, q: q, qNorm: Math.sqrt(qq), keys: keys, hull: convexHull(readable), o: result.O[row] };
  }

  /** 1, 2 or 5 times a power of ten, the smallest not under x. */
  function niceStep(x) {
    if (!(x > 0) || !isFinite(x)) return 1;
    var p = Math.pow(10, Math.floor(Math.log(x) / Math.LN10)), f = x / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
  }

  /** The data box a panel shows: the points and the origin, a little room around them.  The last
   *  box `prev` is kept while everything still fits in it and fills at least half of it, so a small
   *  change never rescales the picture. */
  function planeBox(points, prev) {
    var x0 = 0, x1 = 0, y0 = 0, y1 = 0;
    points.forEach(function (p) {
      if (!isFinite(p[0]) || !isFinite(p[1])) return;
      x0 = Math.min(x0, p[0]); x1 = Math.max(x1, p[0]); y0 = Math.min(y0, p[1]); y1 = Math.max(y1, p[1]);
    });
    var span = Math.max(x1 - x0, y1 - y0);
    if (!(span > 1e-9)) { span = 1; x1 = Math.max(x1, 0.5); y1 = Math.max(y1, 0.5); x0 = Math.min(x0, -0.5); y0 = Math.min(y0, -0.5); }
    if (prev && prev.x0 <= x0 && prev.x1 >= x1 && prev.y0 <= y0 && prev.y1 >= y1 &&
        span >= 0.5 * Math.max(prev.x1 - prev.x0, prev.y1 - prev.y0)) return prev;
    var g = 0.06 * span;
    return { x0: x0 - g, x1: x1 + g, y0: y0 - g, y1: y1 + g };
  }

  /** Map data -> panel pixels (equal scales on both axes, the box centred). */
  function planeMap(box, w, h, pad, right, top) {
    top = top || pad;
    var s = Math.min((w - 2 * pad) / (box.x1 - box.x0), (h - pad - top) / (box.y1 - box.y0));
    if (!(s > 0) || !isFinite(s)) s = 1;
    var ox = w / 2 - s * (box.x0 + box.x1) / 2, oy = (h + top - pad) / 2 + s * (box.y0 + box.y1) / 2;
    // `right`: room to spare goes to the left (the score panel writes its numbers there).
    if (right) ox = Math.max(ox, w - pad - s * box.x1);
    return { s: s, ox: ox, oy: oy, w: w, h: h, box: box, key: [s, ox, oy, w, h].join(),
      X: function (x) { return ox + s * x; }, Y: function (y) { return oy - s * y; } };
  }

  /**
   * The plane inside a view.  ctx: {strings (view.plane), format, subscript, onPoint, ranges}.
   *   plane.draw(st, model) ; plane.vectors(kind, row) -> [Element] ; plane.root ;
   *   plane.describe(node) -> the explanation for a vector ; plane.destroy()
   * ctx.onPoint(table, i, [a, b], settling): a dragged (or arrow-keyed) X point; without it the
   * points are drawn but not draggable.
   */
  function createPlane(ctx) {
    var ps = ctx.strings || {}, format = ctx.format, sub = ctx.subscript;
    var figure = document.createElement("figure");
    figure.className = "al-plane";
    figure.setAttribute("data-plane", "");
    var caption = document.createElement("figcaption");
    caption.className = "al-plane-caption";
    caption.textContent = ps.caption || "";
    figure.appendChild(caption);
    var none = document.createElement("p");
    none.className = "al-plane-none";
    none.hidden = true;
    figure.appendChild(none);
    var panelsBox = document.createElement("div");
    panelsBox.className = "al-plane-panels";
    figure.appendChild(panelsBox);

    var panels = {};
    ["score", "mix"].forEach(function (name) {
      var box = document.createElement("div");
      box.className = "al-plane-panel";
      box.setAttribute("data-plane-panel", name);
      var title = document.createElement("p");
      title.className = "al-plane-title";
      // A group, not an image: it holds focusable points (axe: nested-interactive).
      var svg = svgEl("svg", { "class": "al-plane-svg", role: "group", "aria-label": (ps.panel_label || {})[name] || name });
      var grid = svgEl("g", { "class": "al-plane-grid", "aria-hidden": "true" });
      var body = svgEl("g", { "class": "al-plane-body" });
      svg.appendChild(grid);
      svg.appendChild(body);
      box.appendChild(title);
      box.appendChild(svg);
      panelsBox.appendChild(box);
      panels[name] = { box: box, svg: svg, grid: grid, body: body, title: title, w: 300, h: 170, map: null, gridKey: null };
    });
    /** A panel's drawn size (its viewBox is its own size in CSS pixels) and the score lines' spacing,
     *  from a measured content box; true when either changed. */
    function sized(p, w, h) {
      var changed = false;
      w = Math.round(w); h = Math.round(h);
      if (w > 0 && h > 0 && (w !== p.w || h !== p.h)) { p.w = w; p.h = h; changed = true; }
      // The score lines' spacing follows their font size (larger on a phone).
      var text = p.svg.querySelector(".al-score");
      var fs = text ? parseFloat(getComputedStyle(text).fontSize) : 0;
      if (fs > 0 && Math.abs(fs * 1.2 - lineH) > 0.5) { lineH = fs * 1.2; changed = true; }
      return changed;
    }
    function redrawSized() { if (last) { plane.frozen = null; draw(last.st, true); } }
    var observer = typeof ResizeObserver !== "undefined" ? new ResizeObserver(function (entries) {
      var changed = false;
      entries.forEach(function (e) {
        Object.keys(panels).forEach(function (n) {
          if (panels[n].svg === e.target && sized(panels[n], e.contentRect.width, e.contentRect.height)) changed = true;
        });
      });
      if (changed) redrawSized();
    }) : null;
    // On paper the panels are narrower than on the screen, and no ResizeObserver runs for the
    // print layout: without a redraw the screen's viewBox is shrunk onto the page, and its labels
    // with it (about 6 pt).  The print media query's change comes with the print layout in place
    // (and again after it), so the plane is measured and drawn for the paper's size there.
    var printMedia = typeof matchMedia === "function" ? matchMedia("print") : null;
    function onPrintMedia() {
      var changed = false;
      Object.keys(panels).forEach(function (n) {
        var b = panels[n].svg.getBoundingClientRect();  // no padding or border (lab.css)
        if (sized(panels[n], b.width, b.height)) changed = true;
      });
      if (changed) redrawSized();
    }
    if (printMedia && printMedia.addEventListener) printMedia.addEventListener("change", onPrintMedia);
    if (observer) Object.keys(panels).forEach(function (n) { observer.observe(panels[n].svg); });

    var plane = { root: figure, frozen: null };
    var lineH = 14;
    var parts = null, builtAs = null, last = null, dragging = null;

    function arrow(parent, kind, row, cls) {
      var g = svgEl("g", { "class": "al-vec al-vec-" + kind + (cls ? " " + cls : ""), "data-vector": kind, "data-row": String(row) });
      var halo = svgEl("line", { "class": "al-halo" });
      var line = svgEl("line", { "class": "al-shaft" });
      var head = svgEl("path", { "class": "al-arrowhead" });
      var label = svgEl("text", { "class": "al-tip" });
      g.appendChild(halo); g.appendChild(line); g.appendChild(head); g.appendChild(label);
      parent.appendChild(g);
      return { g: g, halo: halo, line: line, head: head, label: label, kind: kind, row: row };
    }
    function point(parent, kind, row, draggable) {
      var g = svgEl("g", { "class": "al-pt al-pt-" + kind, "data-vector": kind, "data-row": String(row) });
      var hit = svgEl("circle", { "class": "al-hit", r: "16" });
      var dot = svgEl("circle", { "class": "al-dot", r: kind === "o" ? "6" : "7" });
      var label = svgEl("text", { "class": "al-tip" });
      g.appendChild(hit); g.appendChild(dot); g.appendChild(label);
      if (draggable) {
        g.setAttribute("tabindex", "0");
        g.setAttribute("role", "slider");
        g.setAttribute("aria-roledescription", ps.handle_role || "");
        g.setAttribute("data-plane-handle", "");
      }
      parent.appendChild(g);
      return { g: g, hit: hit, dot: dot, label: label, kind: kind, row: row };
    }

    /** The elements for n queries and m keys (cross: the keys' own points, "xs"). */
    function build(n, m, cross) {
      var key = [n, m, cross, !!ctx.onPoint].join();
      if (key === builtAs) return;
      builtAs = key;
      Object.keys(panels).forEach(function (name) {
        var b = panels[name].body;
        while (b.firstChild) b.removeChild(b.firstChild);
      });
      var L = panels.score.body, R = panels.mix.body, i, j;
      parts = { qline: svgEl("line", { "class": "al-qline", "aria-hidden": "true" }), feet: [], k: [], q: [], x: [], xs: [], v: [], o: [], w: [] };
      L.appendChild(parts.qline);
      for (j = 0; j < m; j++) {
        var f = svgEl("g", { "class": "al-foot", "data-part": "score", "data-key": String(j), "aria-hidden": "true" });
        var shadow = svgEl("line", { "class": "al-shadow" }), drop = svgEl("line", { "class": "al-drop" });
        var dot = svgEl("circle", { "class": "al-footdot", r: "3" }), text = svgEl("text", { "class": "al-score" });
        f.appendChild(shadow); f.appendChild(drop); f.appendChild(dot); f.appendChild(text);
        L.appendChild(f);
        parts.feet.push({ g: f, shadow: shadow, drop: drop, dot: dot, text: text });
      }
      for (j = 0; j < m; j++) parts.k.push(arrow(L, "k", j));
      for (i = 0; i < n; i++) parts.q.push(arrow(L, "q", i));
      var draggable = !!ctx.onPoint;
      if (cross) for (j = 0; j < m; j++) parts.xs.push(point(L, "xs", j, draggable));
      for (i = 0; i < n; i++) parts.x.push(point(L, "x", i, draggable));
      parts.hull = svgEl("polygon", { "class": "al-hull", "data-part": "mix", "aria-hidden": "true" });
      R.appendChild(parts.hull);
      for (j = 0; j < m; j++) {
        parts.v.push(arrow(R, "v", j));
        var w = svgEl("text", { "class": "al-weight", "data-part": "share", "data-key": String(j) });
        R.appendChild(w);
        parts.w.push(w);
      }
      for (i = 0; i < n; i++) parts.o.push(point(R, "o", i, false));
    }

    function gridFor(p, map) {
      var key = [map.s, map.ox, map.oy, map.w, map.h].join();
      if (p.gridKey === key) return;
      p.gridKey = key;
      while (p.grid.firstChild) p.grid.removeChild(p.grid.firstChild);
      setAttr(p.svg, "viewBox", "0 0 " + map.w + " " + map.h);
      var step = niceStep(34 / map.s);
      var lo = function (o) { return Math.ceil(-o / map.s / step); };
      var xa = lo(map.ox), xb = Math.floor((map.w - map.ox) / map.s / step);
      var yb = Math.floor(map.oy / map.s / step), ya = Math.ceil((map.oy - map.h) / map.s / step);
      for (var a = xa; a <= xb; a++) {
        var x = map.X(a * step);
        p.grid.appendChild(svgEl("line", { "class": a === 0 ? "al-axis" : "al-gridline", x1: x, x2: x, y1: 0, y2: map.h }));
        if (a !== 0 && a % 2 === 0) p.grid.appendChild(svgEl("text", { "class": "al-ticklabel", x: x, y: map.h - 3 }, format(a * step)));
      }
      for (a = ya; a <= yb; a++) {
        var y = map.Y(a * step);
        p.grid.appendChild(svgEl("line", { "class": a === 0 ? "al-axis" : "al-gridline", x1: 0, x2: map.w, y1: y, y2: y }));
        if (a !== 0 && a % 2 === 0) p.grid.appendChild(svgEl("text", { "class": "al-ticklabel al-ticky", x: 3, y: y - 2 }, format(a * step)));
      }
    }

    function r1(v) { return Math.round(v * 10) / 10; }
    function fits(box, points) {
      return points.every(function (p) { return !(isFinite(p[0]) && isFinite(p[1])) ||
        (p[0] >= box.x0 && p[0] <= box.x1 && p[1] >= box.y0 && p[1] <= box.y1); });
    }
    /** The box and the points together, with room around what is new (it only grows). */
    function grown(box, points) {
      var b = planeBox(points.concat([[box.x0, box.y0], [box.x1, box.y1]]));
      return { x0: Math.min(b.x0, box.x0), x1: Math.max(b.x1, box.x1), y0: Math.min(b.y0, box.y0), y1: Math.max(b.y1, box.y1) };
    }
    /** Where the line through the origin along d crosses the panel's edges: [x1, y1, x2, y2] in pixels. */
    function lineInPanel(map, d) {
      var px = map.X(0), py = map.Y(0), dx = d[0], dy = -d[1], lo = -Infinity, hi = Infinity;
      [[dx, px, map.w], [dy, py, map.h]].forEach(function (a) {
        if (a[0] === 0) return;
        var t1 = (0 - a[1]) / a[0], t2 = (a[2] - a[1]) / a[0];
        lo = Math.max(lo, Math.min(t1, t2));
        hi = Math.min(hi, Math.max(t1, t2));
      });
      if (!(hi > lo) || !isFinite(lo) || !isFinite(hi)) return [px, py, px, py];
      return [px + lo * dx, py + lo * dy, px + hi * dx, py + hi * dy];
    }
    /** True when `part` was last drawn from the same inputs (then nothing of it changes). */
    function same(part, key) {
      if (part.drawn === key) return true;
      part.drawn = key;
      return false;
    }
    function drawArrow(a, map, v, label, side) {
      if (same(a, map.key + "|" + v[0] + "," + v[1] + "|" + label)) return;
      var x1 = map.X(0), y1 = map.Y(0), x2 = map.X(v[0]), y2 = map.Y(v[1]);
      var dx = x2 - x1, dy = y2 - y1, len = Math.sqrt(dx * dx + dy * dy);
      setAttr(a.g, "data-value", v[0] + "," + v[1]);
      var ux = len ? dx / len : 0, uy = len ? dy / len : 0, head = Math.min(9, len);
      var bx = x2 - ux * head, by = y2 - uy * head;
      [a.line, a.halo].forEach(function (l) {
        setAttr(l, "x1", r1(x1)); setAttr(l, "y1", r1(y1)); setAttr(l, "x2", r1(bx)); setAttr(l, "y2", r1(by));
      });
      setAttr(a.head, "d", len < 0.5 ? "M0 0" : "M" + r1(x2) + " " + r1(y2) + "L" + r1(bx - uy * head * 0.5) + " " + r1(by + ux * head * 0.5) +
        "L" + r1(bx + uy * head * 0.5) + " " + r1(by - ux * head * 0.5) + "Z");
      // The name beyond the tip, pushed to one side (q to the left of its direction, k to the right:
      // at the baseline q_0 and k_1 are the same arrow).
      // The label starts (k, v) or ends (q) beside the tip, so two names at one tip never overlap.
      var nx = len ? ux : 0.7, ny = len ? uy : -0.7;
      var lx = x2 + nx * 5 + (-ny) * side * 7, ly = y2 + ny * 5 + nx * side * 7 + 4 + (nx * side > 0.3 ? 6 : 0);
      var anchor = side < 0 ? "end" : "start";
      if (anchor === "end" && lx < 44) anchor = "start";
      if (anchor === "start" && lx > map.w - 44) anchor = "end";
      setAttr(a.label, "x", r1(Math.min(map.w - 3, Math.max(3, lx))));
      setAttr(a.label, "y", r1(Math.min(map.h - 3, Math.max(12, ly))));
      setAttr(a.label, "text-anchor", anchor);
      setText(a.label, label);
    }
    function drawPoint(pt, map, v, label, below) {
      if (same(pt, map.key + "|" + v[0] + "," + v[1] + "|" + label)) return;
      var x = map.X(v[0]), y = map.Y(v[1]);
      setAttr(pt.g, "data-value", v[0] + "," + v[1]);
      [pt.hit, pt.dot].forEach(function (c) { setAttr(c, "cx", r1(x)); setAttr(c, "cy", r1(y)); });
      var ly = below ? y + 19 : y - 10;
      setAttr(pt.label, "x", r1(Math.min(map.w - 4, Math.max(4, x))));
      setAttr(pt.label, "y", r1(Math.min(map.h - 3, Math.max(12, ly))));
      setAttr(pt.label, "text-anchor", x < 18 ? "start" : x > map.w - 18 ? "end" : "middle");
      setText(pt.label, label);
    }
    function show(node, on) {
      var was = node.__attrs || (node.__attrs = {});
      if (!on) setAttr(node, "visibility", "hidden");
      else if (was.visibility !== null) { was.visibility = null; node.removeAttribute("visibility"); }
    }
    function toggleClass(node, cls, on) {
      var was = node.__cls || (node.__cls = {});
      if (was[cls] !== on) { was[cls] = on; node.classList.toggle(cls, on); }
    }

    /** Draw the plane from the view's state st ({result, fullResult, tables, row, step, predict,
     *  moving}) and tokens ({query, key}).  Returns false when there is no plane (widths not 2). */
    function draw(st, keepScale) {
      last = { st: st };
      var r = st.fullResult, res = st.result;
      var X = st.tables && st.tables.X, Xs = st.tables && st.tables.Xs;
      var dModel = X && X[0] ? X[0].length : 0, dk = res.Q[0].length, dv = res.V[0].length;
      var heads = res.heads ? res.heads.length : 1;
      if (heads > 1 || dModel !== 2 || dk !== 2 || dv !== 2) {
        var why = String(heads > 1 ? ps.none_heads : ps.none || "").split("{h}").join(heads)
          .split("{d_model}").join(dModel).split("{d_k}").join(dk).split("{d_v}").join(dv);
        setText(none, why);
        if (none.hidden) none.hidden = false;
        if (!panelsBox.hidden) panelsBox.hidden = true;
        setAttr(figure, "data-plane", "none");
        return false;
      }
      if (!none.hidden) none.hidden = true;
      if (panelsBox.hidden) panelsBox.hidden = false;
      setAttr(figure, "data-plane", "");
      var n = res.Q.length, m = res.K.length, cross = !!Xs, row = st.row;
      build(n, m, cross);
      var tq = st.tokens.query, tk = st.tokens.key;
      var full = { Q: res.Q, K: res.K, V: res.V, S: res.S, A: res.A, O: res.O, raw_scores: r.raw_scores, d_k: r.d_k };
      var model = planeModel(full, row);
      var src = cross ? Xs : X;
      // The scale: while something is being dragged (a point, or a slider: st.moving) the picture
      // only zooms out, when something would leave it (a point dragged off keeps its own pixel
      // mapping from the drag's start: valueAt), and is set anew from the content when it ends.
      var hold = (dragging || st.moving || keepScale === "hold") && plane.frozen;
      var maps, left = X.concat(res.Q, res.K, cross ? Xs : []), right = res.V.concat(res.O);
      if (hold && fits(plane.frozen.score.box, left) && fits(plane.frozen.mix.box, right)) maps = plane.frozen;
      else {
        panels.score.boxPrev = hold ? grown(plane.frozen.score.box, left) : planeBox(left, panels.score.boxPrev);
        panels.mix.boxPrev = hold ? grown(plane.frozen.mix.box, right) : planeBox(right, panels.mix.boxPrev);
        // The score lines go left of the content when it leaves them room (about 150 px), else in a
        // band kept on top (a narrow panel: Jupyter beside S, A, O).
        var scoreMap = planeMap(panels.score.boxPrev, panels.score.w, panels.score.h, 18, true);
        if (scoreMap.X(scoreMap.box.x0) < 150) {
          scoreMap = planeMap(panels.score.boxPrev, panels.score.w, panels.score.h, 18, true, Math.max(18, lineH * res.K.length + 8));
        }
        maps = {
          score: scoreMap,
          mix: planeMap(panels.mix.boxPrev, panels.mix.w, panels.mix.h, 18)
        };
        plane.frozen = maps;
      }
      gridFor(panels.score, maps.score);
      gridFor(panels.mix, maps.mix);
      var Lm = maps.score, Rm = maps.mix;
      var titles = ps.titles || {};
      var title = function (t, v) { return String(t || "").split("{tok}").join(v.tok).split("{qi}").join(v.qi).split("{oi}").join(v.oi); };
      var names = { tok: tq[row], qi: "q" + sub(row), oi: "o" + sub(row) };
      setText(panels.score.title, title(titles.score, names));
      setText(panels.mix.title, title(titles.mix, names));

      var step = st.step || 0, predict = !!st.predict;
      var scoresOn = step === 0 || step >= 1, sharesOn = (step === 0 || step >= 4) && !predict, mixOn = (step === 0 || step >= 5) && !predict;

      // The line through q_i (both ways), the feet of the keys on it.
      var q = model.q, ends = lineInPanel(Lm, q);
      setAttr(parts.qline, "x1", r1(ends[0])); setAttr(parts.qline, "y1", r1(ends[1]));
      setAttr(parts.qline, "x2", r1(ends[2])); setAttr(parts.qline, "y2", r1(ends[3]));
      show(parts.qline, model.qNorm > 0 && scoresOn);
      var dkText = format(r.d_k);
      // Which top corner has fewer tips near it (the score lines go there).
      var band = 4 + lineH * model.keys.length, leftN = 0, rightN = 0;
      X.concat(res.Q, res.K, cross ? Xs : []).forEach(function (p) {
        var px = Lm.X(p[0]), py = Lm.Y(p[1]);
        if (py > band) return;
        if (px < Lm.w * 0.55) leftN++;
        if (px > Lm.w * 0.45) rightN++;
      });
      var corner = rightN < leftN && Lm.X(Lm.box.x0) < Lm.w * 0.3 ? "end" : "start";
      model.keys.forEach(function (key, j) {
        var f = parts.feet[j], k = res.K[j];
        if (same(f, [Lm.key, key.dot, key.scaled, key.foot, k, key.masked, step, corner, lineH, names.qi, dkText, scoresOn].join("|"))) return;
        var fx = Lm.X(key.foot[0]), fy = Lm.Y(key.foot[1]);
        setAttr(f.shadow, "x1", r1(Lm.X(0))); setAttr(f.shadow, "y1", r1(Lm.Y(0)));
        setAttr(f.shadow, "x2", r1(fx)); setAttr(f.shadow, "y2", r1(fy));
        setAttr(f.drop, "x1", r1(Lm.X(k[0]))); setAttr(f.drop, "y1", r1(Lm.Y(k[1])));
        setAttr(f.drop, "x2", r1(fx)); setAttr(f.drop, "y2", r1(fy));
        setAttr(f.dot, "cx", r1(fx)); setAttr(f.dot, "cy", r1(fy));
        var text;
        if (model.qNorm === 0) text = j === 0 ? String(ps.q_zero || "").split("{qi}").join(names.qi) : "";
        else if (step === 1) text = fillIn(ps.score_raw, { kj: "k" + sub(j), qi: names.qi, dot: format(key.dot) });
        else if (key.masked && (step === 0 || step >= 3)) text = fillIn(ps.score_masked, { dot: format(key.dot), d_k: dkText, s: format(key.scaled), kj: "k" + sub(j), qi: names.qi });
        else text = fillIn(Lm.w < 240 && ps.score_short ? ps.score_short : ps.score,
          { dot: format(key.dot), d_k: dkText, s: format(key.scaled), kj: "k" + sub(j), qi: names.qi });
        setAttr(f.g, "data-value", key.dot + "," + key.scaled);
        // The numbers in a column in the panel's emptier top corner (at the baseline a foot, a
        // key's tip and the query's tip are one point: labels there would cover each other).
        setAttr(f.text, "x", corner === "end" ? Lm.w - 5 : 5);
        setAttr(f.text, "y", r1(lineH * (0.95 + j)));
        setAttr(f.text, "text-anchor", corner);
        setText(f.text, text);
        show(f.g, scoresOn && (model.qNorm > 0 || j === 0));
        toggleClass(f.g, "al-masked-key", key.masked && (step === 0 || step >= 3));
      });
      parts.k.forEach(function (a, j) {
        drawArrow(a, Lm, res.K[j], "k" + sub(j) + " " + tk[j], 1);
        toggleClass(a.g, "al-masked-key", model.keys[j].masked && (step === 0 || step >= 3));
      });
      parts.q.forEach(function (a, i) {
        drawArrow(a, Lm, res.Q[i], "q" + sub(i) + " " + tq[i], -1);
        toggleClass(a.g, "al-other-row", i !== row);
      });
      parts.x.forEach(function (pt, i) { drawPoint(pt, Lm, X[i], "x" + sub(i) + " " + tq[i], false); handleLabel(pt, "X", i, X[i], tq[i]); });
      parts.xs.forEach(function (pt, j) { drawPoint(pt, Lm, Xs[j], "x" + sub(j) + " " + tk[j], true); handleLabel(pt, "Xs", j, Xs[j], tk[j]); });

      // Mix: the values, the hull of the readable ones, the shares at their tips, o_i on it.
      setAttr(parts.hull, "points", model.hull.map(function (p) { return r1(Rm.X(p[0])) + "," + r1(Rm.Y(p[1])); }).join(" "));
      show(parts.hull, mixOn || sharesOn);
      parts.v.forEach(function (a, j) {
        drawArrow(a, Rm, res.V[j], "v" + sub(j) + " " + tk[j], 1);
        toggleClass(a.g, "al-masked-key", model.keys[j].masked && (step === 0 || step >= 3));
        var w = parts.w[j], key = model.keys[j], v = res.V[j];
        if (same(w, [Rm.key, key.masked, key.share, res.V, sharesOn].join("|"))) return;
        var text = key.masked ? fillIn(ps.weight_masked, {}) : fillIn(ps.weight, { a: format(key.share) });
        setText(w, text);
        // The share beside the middle of its arrow, on the side away from the other values.
        var mx = Rm.X(v[0] * 0.55), my = Rm.Y(v[1] * 0.55), dx = Rm.X(v[0]) - Rm.X(0), dy = Rm.Y(v[1]) - Rm.Y(0);
        var len = Math.sqrt(dx * dx + dy * dy) || 1, px = -dy / len, py = dx / len;
        var cx = 0, cy = 0;
        res.V.forEach(function (u) { cx += Rm.X(u[0]) / res.V.length; cy += Rm.Y(u[1]) / res.V.length; });
        if ((mx + px - cx) * px + (my + py - cy) * py < 0) { px = -px; py = -py; }
        var wx = mx + px * 8, wy = my + py * 8 + 4;
        setAttr(w, "x", r1(Math.min(Rm.w - 3, Math.max(3, wx))));
        setAttr(w, "y", r1(Math.min(Rm.h - 3, Math.max(12, wy))));
        setAttr(w, "text-anchor", px > 0.3 ? "start" : px < -0.3 ? "end" : "middle");
        setAttr(w, "data-value", String(key.share));
        show(w, sharesOn);
      });
      parts.o.forEach(function (pt, i) {
        drawPoint(pt, Rm, res.O[i], i === row ? "o" + sub(i) + " " + tq[i] : "", true);
        toggleClass(pt.g, "al-other-row", i !== row);
        show(pt.g, mixOn || (i !== row && step === 0 && !predict));
      });
      return true;
    }

    function fillIn(t, v) {
      t = String(t || "");
      Object.keys(v).forEach(function (k) { t = t.split("{" + k + "}").join(String(v[k])); });
      return t;
    }
    function handleLabel(pt, table, i, v, tok) {
      if (!ctx.onPoint || pt.labelled === v[0] + "," + v[1]) return;
      pt.labelled = v[0] + "," + v[1];
      setAttr(pt.g, "aria-label", fillIn(ps.handle_label, { tok: tok, table: table, a: format(v[0]), b: format(v[1]) }));
      setAttr(pt.g, "aria-valuetext", "(" + format(v[0]) + ", " + format(v[1]) + ")");
    }

    // ------------------------------------------------------------ dragging a point, its keys
    function snap(v, range) {
      range = range || { min: -Infinity, max: Infinity, step: 0 };
      if (range.step) v = Math.round(v / range.step) * range.step;
      v = Math.min(range.max, Math.max(range.min, v));
      return Number(v.toFixed(10)) || 0;  // no -0
    }
    function handleOf(target) {
      var g = target && target.closest ? target.closest("[data-plane-handle]") : null;
      return g && figure.contains(g) ? g : null;
    }
    function tableOf(g) { return g.getAttribute("data-vector") === "xs" ? "Xs" : "X"; }
    function valueAt(g, e) {
      // The pixels -> numbers mapping of the drag's start, even if the picture zooms out under it.
      var svg = g.ownerSVGElement, m = (dragging && dragging.map) || (plane.frozen && plane.frozen.score);
      var ctm = svg && svg.getScreenCTM && svg.getScreenCTM();
      if (!ctm || !m) return null;
      var pt = svg.createSVGPoint();
      pt.x = e.clientX; pt.y = e.clientY;
      var u = pt.matrixTransform(ctm.inverse());
      var range = (ctx.ranges || {})[tableOf(g)] || (ctx.ranges || {}).X;
      return [snap((u.x - m.ox) / m.s, range), snap((m.oy - u.y) / m.s, range)];
    }
    function onDown(e) {
      var g = handleOf(e.target);
      if (!g || !ctx.onPoint || (e.button !== undefined && e.button !== 0)) return;
      e.preventDefault();
      dragging = { g: g, id: e.pointerId, value: null, map: plane.frozen && plane.frozen.score };
      if (g.setPointerCapture && e.pointerId !== undefined) { try { g.setPointerCapture(e.pointerId); } catch (err) { /* gone */ } }
      g.setAttribute("data-dragging", "");
      if (g.focus) { try { g.focus({ preventScroll: true }); } catch (err) { g.focus(); } }
    }
    function onMove(e) {
      if (!dragging || e.pointerId !== dragging.id) return;
      e.preventDefault();
      var v = valueAt(dragging.g, e);
      if (!v || (dragging.value && v[0] === dragging.value[0] && v[1] === dragging.value[1])) return;
      dragging.value = v;
      ctx.onPoint(tableOf(dragging.g), Number(dragging.g.getAttribute("data-row")), v, true);
    }
    function onUp(e) {
      if (!dragging || (e.pointerId !== undefined && e.pointerId !== dragging.id)) return;
      var d = dragging;
      dragging = null;
      d.g.removeAttribute("data-dragging");
      if (d.g.releasePointerCapture && e.pointerId !== undefined) { try { d.g.releasePointerCapture(e.pointerId); } catch (err) { /* gone */ } }
      var cur = d.g.getAttribute("data-value").split(",").map(Number);
      ctx.onPoint(tableOf(d.g), Number(d.g.getAttribute("data-row")), d.value || cur, false);
    }
    var KEYS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] };
    function onKey(e) {
      var g = handleOf(e.target), d = KEYS[e.key];
      if (!g || !d || !ctx.onPoint || e.altKey || e.ctrlKey || e.metaKey) return;
      e.preventDefault();
      e.stopPropagation();
      var range = (ctx.ranges || {})[tableOf(g)] || (ctx.ranges || {}).X || { step: 0.1, min: -Infinity, max: Infinity };
      var k = e.shiftKey ? 10 : 1, cur = g.getAttribute("data-value").split(",").map(Number);
      ctx.onPoint(tableOf(g), Number(g.getAttribute("data-row")),
        [snap(cur[0] + d[0] * k * range.step, range), snap(cur[1] + d[1] * k * range.step, range)], false);
    }
    // A finger on a point drags it and never scrolls the page (touch-action is not honoured on SVG
    // children everywhere); anywhere else on the plane a swipe scrolls as usual.
    function onTouch(e) { if (ctx.onPoint && handleOf(e.target) && e.cancelable) e.preventDefault(); }
    var listeners = { pointerdown: onDown, pointermove: onMove, pointerup: onUp, pointercancel: onUp, lostpointercapture: onUp, keydown: onKey };
    Object.keys(listeners).forEach(function (t) { figure.addEventListener(t, listeners[t]); });
    figure.addEventListener("touchstart", onTouch, { passive: false });

    plane.draw = draw;
    plane.dragging = function () { return !!dragging; };
    /** The drawn elements of one kind ("x", "xs", "q", "k", "v", "o"; row undefined: all rows). */
    plane.vectors = function (kind, row) {
      if (!parts || !parts[kind] || !panelsBox || panelsBox.hidden) return [];
      return parts[kind].filter(function (a) { return row === undefined || a.row === row; }).map(function (a) { return a.g; });
    };
    plane.feet = function (j) {
      if (!parts || panelsBox.hidden) return [];
      return parts.feet.filter(function (_, k) { return j === undefined || k === j; }).map(function (f) { return f.g; });
    };
    plane.vectorFrom = function (target) {
      var g = target && target.closest ? target.closest("[data-vector]") : null;
      return g && figure.contains(g) ? g : null;
    };
    plane.destroy = function () {
      if (observer) observer.disconnect();
      if (printMedia && printMedia.removeEventListener) printMedia.removeEventListener("change", onPrintMedia);
      Object.keys(listeners).forEach(function (t) { figure.removeEventListener(t, listeners[t]); });
      figure.removeEventListener("touchstart", onTouch, { passive: false });
    };
    return plane;
  }

  // ------------------------------------------------------------------ the view

  var viewCount = 0;
  /** Lab widths (in rem) at which the layout changes; lab.css styles [data-layout]. */
  var WIDE_REM = 48, PHONE_REM = 30;

  function mountView(container, options) {
    options = options || {};
    var core = options.core || (global && global.AttentionLabCore);
    if (!core) throw new Error("attention lab view: AttentionLabCore (attention.js) is not loaded");
    setColours(options.colours);
    var strings = options.strings || {};
    var vs = strings.view || {}, tw = strings.twin || {}, labStr = strings.lab || {};
    var tokens = strings.tokens || core.TOKENS, keyTokens = tokens;  // query side, key side (cross)
    var format = core.formatValue;
    var root = (container.closest && container.closest("[data-attention-lab]")) || container;
    if (!root.hasAttribute("data-attention-lab")) root.setAttribute("data-attention-lab", "");
    root.classList.add("al-lab");
    var uid = "alv" + (++viewCount);
    var explainId = uid + "-explain";
    var resultsId = uid + "-results";

    var hs = (strings.shapes || {}).heads || {};  // several heads: their captions, stages, explanations
    var st = { params: null, result: null, row: 1, head: 0, notes: [], step: 0, predict: false, prev: null, active: null };
    var view = { root: root, state: st };

    // Layout: [main: controls?, Q/K/V, worked] [results: toolbar, S, A, O, explanation, notes].
    var wrap = el("div", { "class": "al-view" });
    var main = el("div", { "class": "al-main" });
    var results = el("section", { "class": "al-results", id: resultsId, tabindex: "-1", "aria-label": vs.results_label || "" });
    if (options.controls) main.appendChild(options.controls);

    var toolbar = el("div", { "class": "al-toolbar" });
    var buttons = {};
    ["step", "back", "predict", "reveal"].forEach(function (action) {
      var b = el("button", { type: "button", "class": "al-button", "data-lab-action": action }, (vs.buttons || {})[action] || action);
      b.addEventListener("click", function () { view[action](); });
      toolbar.appendChild(b);
      buttons[action] = b;
    });
    buttons.step.setAttribute("aria-describedby", uid + "-stage");
    var stageLabel = el("span", { "class": "al-stage", id: uid + "-stage", "aria-live": "polite" });
    toolbar.appendChild(stageLabel);
    // options.keysHint (the site): what a presenter's keys do, in the stage's place while it is empty.
    if (options.keysHint) toolbar.appendChild(el("span", { "class": "al-keys-hint", "data-lab-keys-hint": "" }, options.keysHint));
    results.appendChild(toolbar);

    var sao = el("div", { "class": "al-sao" });
    var qkvBox = el("div", { "class": "al-qkv" });
    var handles = {}, builtAs = null;
    /** The result tables' keys: the strip's (S, A, O; several heads: S0, A0, S1, A1, …, O, Y), then Q, K, V. */
    var order = TABLE_NAMES, strip = ["S", "A", "O"], heads = 1;
    /** The six tables for n queries, m keys, widths dk and dv (the 2x2 lab: built once, at mount);
     *  options.shapeCaptions adds each table's shape to its caption ("S 分数表 [3, 4]").  h > 1 heads
     *  (dk, dv a head's widths; dm the width of Y): buildHeads. */
    function build(n, m, dk, dv, h, dm) {
      h = h > 1 ? h : 1;
      var key = [n, m, dk, dv, tokens.join("\u0001"), keyTokens.join("\u0001")].join("|") + (h > 1 ? "|" + h + "|" + dm : "");
      if (key === builtAs) return false;
      builtAs = key;
      if (linked && linked.length) clearLinks();  // (none yet at the first build)
      Object.keys(handles).forEach(function (k) { delete handles[k]; });
      heads = h;
      results.setAttribute("aria-label", (h > 1 ? hs.results_label : "") || vs.results_label || "");
      placed = { sao: 0, qkv: 0, groups: {} };
      made = {};
      if (h > 1) buildHeads(n, m, dk, dv, h, dm);
      else buildOne(n, m, dk, dv);
      // What the last shape had and this one has not (a head, a group) goes; what it kept stays in place.
      trim(sao, placed.sao);
      trim(qkvBox, placed.qkv);
      Object.keys(placed.groups).forEach(function (g) { trim(madeGroups[g], placed.groups[g]); });
      Object.keys(madeGroups).forEach(function (g) { if (!madeGroups[g].parentNode) delete madeGroups[g]; });
      kept = made;
      return true;
    }
    /** Tables (and head groups) of the last shape, by name and head, reused (reshapeMatrix), so a
     *  shape change builds only what is new. */
    var kept = {}, made = {}, madeGroups = {}, placed = null;
    function place(parent, node, k) {
      var at = parent.children[k];
      if (at !== node) parent.insertBefore(node, at || null);
    }
    function trim(parent, k) { while (parent.children.length > k) parent.removeChild(parent.lastElementChild); }
    /** Table `spec` as the next child of `where` ("sao", "qkv" or a group's key): the last shape's
     *  table of that name and head brought to the new shape, else a new one. */
    function matrixAt(where, spec) {
      var parent = where === "sao" ? sao : where === "qkv" ? qkvBox : madeGroups[where];
      var k = where === "sao" || where === "qkv" ? placed[where]++ : (placed.groups[where] = (placed.groups[where] || 0) + 1) - 1;
      var id = spec.name + "|" + (spec.head === undefined || spec.head === null ? "" : spec.head);
      var hd = kept[id];
      if (hd) reshapeMatrix(hd, spec); else hd = createMatrix(null, spec);
      made[id] = hd;
      place(parent, hd.root, k);
      return hd;
    }
    /** The k-th child of the strip: a group div (a head's S and A, or the output's O and Y), kept across shapes. */
    function groupAt(name, attrs) {
      var g = madeGroups[name] || (madeGroups[name] = el("div", attrs));
      place(sao, g, placed.sao++);
      placed.groups[name] = placed.groups[name] || 0;
      return name;
    }
    /** A table's legend, made only when the table is new. */
    function legendOf(name) { return function () { return legend(name, strings, format); }; }
    function buildOne(n, m, dk, dv) {
      order = TABLE_NAMES;
      strip = ["S", "A", "O"];
      ["S", "A", "O", "Q", "K", "V"].forEach(function (name) {
        var scoreLike = name === "S" || name === "A", keyRows = name === "K" || name === "V";
        var rows = keyRows ? keyTokens.slice(0, m) : tokens.slice(0, n);
        var cols = scoreLike ? keyTokens.slice(0, m) : range(name === "V" || name === "O" ? dv : dk).map(function (c) {
          return fill(tw.cell || "{c}", { c: c });
        });
        var title = (strings.tables && strings.tables[name]) || name;
        handles[name] = matrixAt(scoreLike || name === "O" ? "sao" : "qkv", {
          name: name,
          title: options.shapeCaptions ? title + " [" + rows.length + ", " + cols.length + "]" : title,
          rows: rows,
          cols: cols,
          rowPick: scoreLike || name === "O" ? (vs.row_pick || true) : null,
          explainId: explainId,
          legend: legendOf(name)
        });
      });
    }
    /** Several heads: per head t a group (div.al-group[data-head=t]) of its S and A, one under the
     *  other; then a group of O (the concatenation, each head's columns marked) over Y; Q, K and V
     *  with each head's columns marked.  Keys: "S0", "A0", …, "O", "Y", "Q", "K", "V". */
    function buildHeads(n, m, dk, dv, h, dm) {
      var names = function (k) { return range(k).map(function (c) { return fill(tw.cell || "{c}", { c: c }); }); };
      var title = function (name) { return (strings.tables && strings.tables[name]) || name; };
      var shape = function (r, c) { return " [" + r + ", " + c + "]"; };
      var common = { rowPick: vs.row_pick || true, explainId: explainId };
      strip = [];
      for (var t = 0; t < h; t++) {
        var group = groupAt("head" + t, { "class": "al-group", "data-head": String(t) });
        ["S", "A"].forEach(function (name) {
          handles[name + t] = matrixAt(group, Object.assign({ name: name, head: t, rows: tokens.slice(0, n), cols: keyTokens.slice(0, m),
            title: fill(hs.caption || "{title} {t}", { title: title(name), t: t }) + shape(n, m), legend: legendOf(name) }, common));
          strip.push(name + t);
        });
      }
      var out = groupAt("output", { "class": "al-group", "data-group": "output" });
      handles.O = matrixAt(out, Object.assign({ name: "O", rows: tokens.slice(0, n), cols: names(h * dv), colHeads: dv,
        headLabel: hs.col_head, title: (hs.table_O || "O") + shape(n, h * dv), legend: legendOf("O") }, common));
      handles.Y = matrixAt(out, Object.assign({ name: "Y", rows: tokens.slice(0, n), cols: names(dm),
        title: (hs.table_Y || "Y") + shape(n, dm), legend: legendOf("Y") }, common));
      strip.push("O", "Y");
      [["Q", n, dk], ["K", m, dk], ["V", m, dv]].forEach(function (q) {
        var rows = q[0] === "Q" ? tokens.slice(0, n) : keyTokens.slice(0, m);
        handles[q[0]] = matrixAt("qkv", { name: q[0], rows: rows, cols: names(h * q[2]), colHeads: q[2], headLabel: hs.col_head,
          title: title(q[0]) + shape(rows.length, h * q[2]), rowPick: null, explainId: explainId, legend: legendOf(q[0]) });
      });
      order = strip.concat(["Q", "K", "V"]);
    }
    function range(k) { var out = []; for (var c = 0; c < k; c++) out.push(c); return out; }

    /** The table behind a key in a result (st.result, or the change marks' base): a head's own
     *  S, A (and its Q, K, V, O slices: result.heads[t]) or the whole-width Q, K, V, O, Y. */
    function tableOf(key, r) {
      var hd = handles[key];
      return hd.head === null ? r[hd.name] : r.heads[hd.head][hd.name];
    }
    /** Head t's result (h = 1: the result itself): shown tables, or the full one (raw_scores, d_k, M). */
    function headResult(t) { return heads > 1 ? st.result.heads[t] : st.result; }
    function headFull(t) { return heads > 1 ? st.fullResult.heads[t] : st.fullResult; }
    /** The head that column j of a whole-width table (Q, K: d_k; V, O: d_v) belongs to, and its column there. */
    function colHead(name, j) {
      var w = name === "Q" || name === "K" ? st.fullResult.d_k : st.fullResult.d_v;
      return heads > 1 ? { t: Math.floor(j / w), c: j % w } : { t: null, c: j };
    }
    function keyOf(td) {
      var name = td.getAttribute("data-matrix");
      return heads > 1 && (name === "S" || name === "A") ? name + td.getAttribute("data-head") : name;
    }
    build(2, 2, 2, 2);
    results.appendChild(sao);
    // Fixed-size boxes: what they say never moves the tables.
    var info = el("div", { "class": "al-info" });
    // The stage's own worked lines, next to the step buttons (the worked text is below the fold).
    var stageLines = info.appendChild(el("div", { "class": "al-stage-lines", "data-lab-stage-lines": "" }));
    // A touch screen (no hover): the hint says what a finger does, no mouse, no Tab key.
    var hint = (typeof matchMedia === "function" && matchMedia("(hover: none)").matches && vs.explain_hint_touch) || vs.explain_hint || "";
    var explain = el("p", { "class": "al-explain", id: explainId, "data-lab-explain": "" }, hint);
    info.appendChild(explain);
    var notes = el("div", { "class": "al-notes", role: "status", "aria-live": "polite", "data-lab-notes": "" });
    info.appendChild(notes);
    // Stacked layouts give each note one line; this opens them whole (the wide layout always does).
    var more = info.appendChild(el("button", { type: "button", "class": "al-notes-more", "aria-expanded": "false" }, vs.notes_more || "+"));
    more.addEventListener("click", function () {
      var open = more.getAttribute("aria-expanded") !== "true";
      more.setAttribute("aria-expanded", String(open));
      more.textContent = open ? vs.notes_less || "−" : vs.notes_more || "+";
    });
    results.appendChild(info);

    var detail = el("section", { "class": "al-detail" });
    detail.appendChild(el("p", { "class": "al-qkv-title" }, labStr.qkv_title || ""));
    detail.appendChild(qkvBox);
    var workedBox = el("section", { "class": "al-worked", "aria-live": "off" });
    var workedTitle = el("p", { "class": "al-worked-title" });
    var worked = el("div", { "class": "al-worked-lines", "data-lab-worked": "" });
    workedBox.appendChild(workedTitle);
    workedBox.appendChild(worked);
    detail.appendChild(workedBox);
    main.appendChild(detail);

    // The vector plane (createPlane): under the explanation beside the controls in the wide
    // layout (on screen with S, A, O), else first in the detail under the sticky results.
    var plane = createPlane({ strings: vs.plane || {}, format: format, subscript: core.subscript,
      ranges: options.ranges, onPoint: options.onPoint ? function (table, i, v, settling) {
        options.onPoint(table, i, v, settling);
        if (!settling) view.settle();  // the gesture is over: its change marks show (as a slider's change)
      } : null });
    detail.insertBefore(plane.root, detail.firstChild);

    // Controls first for the keyboard (Tab), then the results; lab.css still shows the results first.
    wrap.appendChild(main);
    wrap.appendChild(results);
    container.appendChild(wrap);

    // Layout by the lab's own width (the same in a chapter column, on the projector page and
    // in Jupyter): "wide" puts S/A/O in a sticky column right of the controls; "narrow" and
    // "phone" stack the results (sticky, with the buttons, explanation and notes) above them.
    var measured = null;
    function layout() {
      var rem = parseFloat(getComputedStyle(document.documentElement).fontSize) || 16;
      var target = (typeof options.measure === "function" ? options.measure() : options.measure) || root;
      if (target !== measured && target !== root && observer) observer.observe(target);
      measured = target;
      var w = target.clientWidth;
      if (!w) return;
      var wideAt = options.wideAt ? Math.min(options.wideAt, WIDE_REM * rem) : WIDE_REM * rem;
      var mode = w >= wideAt ? "wide" : (w < PHONE_REM * rem ? "phone" : "narrow");
      if (root.getAttribute("data-layout") !== mode) {
        root.setAttribute("data-layout", mode);
        if (options.onLayout) options.onLayout(mode);
      }
      // With the driver's controls beside the tables, the view's buttons, the explanation
      // and the notes go under the controls, so the S/A/O column is only S, A and O.
      var beside = mode === "wide" && (!!options.controls || !!options.controlsBeside);
      if (beside && info.parentNode !== main) {
        main.insertBefore(toolbar, detail);
        main.insertBefore(info, detail);
        // planeFirst (Jupyter, where the room under the sliders is short): the plane before the explanation.
        info.insertBefore(plane.root, options.planeFirst ? explain : notes);
      } else if (!beside && info.parentNode !== results) {
        results.insertBefore(toolbar, results.firstChild);
        results.appendChild(info);
        detail.insertBefore(plane.root, detail.firstChild);
      }
      root.style.setProperty("--al-results-height", mode === "wide" ? "0px" : results.offsetHeight + "px");
    }
    var observer = typeof ResizeObserver !== "undefined" ? new ResizeObserver(layout) : null;
    // The observer's first call comes after the page's own layout, before the first paint: no
    // layout forced at mount (on the chapter, all the text above the lab, laid out twice).
    if (observer) observer.observe(root);
    if (!observer || options.layoutAtMount) layout();

    // ---------------------------------------------------------------- drawing

    function cellName(name, i, j) {
      var scoreLike = name === "S" || name === "A";
      return name + "[" + (name === "K" || name === "V" ? keyTokens : tokens)[i] + "," +
        (scoreLike ? keyTokens[j] : fill(tw.cell || "{c}", { c: j })) + "]";
    }
    /** Key j of the result is padded (the shapes lab's pad), not hidden by the causal mask. */
    function padded(j) { var r = st.fullResult; return !!r.pad && j >= r.K.length - r.pad; }

    function isPending(key, i, j) {
      if (st.step === 0 || i !== st.row) return false;
      var hd = handles[key], name = hd.name;
      if (heads > 1) {  // the explained head's row; Y, from every head, waits for stage 6 (× Wo)
        if (name === "Y") return st.step < 6;
        if (name === "O") return colHead("O", j).t === st.head && st.step < 5;
        if (hd.head !== st.head) return false;
      }
      // The row's A waits for stage 4 (softmax), O for stage 5; S shows each stage's numbers (stageValue).
      return (name === "A" && st.step < 4) || (name === "O" && st.step < 5);
    }

    /** While stepping, the row's S cells show the stage's numbers: raw q·k at stage 1, ÷ √d_k at
     *  stage 2 (masked cells too: the mask comes at stage 3); null when the cell shows S itself. */
    function stageValue(key, i, j) {
      var hd = handles[key];
      if (hd.name !== "S" || i !== st.row || st.step === 0 || st.step > 2 || (heads > 1 && hd.head !== st.head)) return null;
      var full = headFull(st.head), raw = full.raw_scores[i][j];
      return st.step === 1 ? raw : raw / Math.sqrt(full.d_k);
    }

    function drawCell(key, i, j) {
      var hd = handles[key], name = hd.name;
      var cell = hd.cells[i][j];
      var staged = stageValue(key, i, j);
      var v = tableOf(key, st.result)[i][j];
      var masked = v === -Infinity && staged === null;
      var pending = isPending(key, i, j);
      var hidden = st.predict && (name === "A" || name === "O" || name === "Y");
      var maskedA = name === "A" && headResult(hd.head).S[i][j] === -Infinity;
      // What changed since the gesture began (a whole drag, a key, a button), once it settled;
      // predict hides it for A and O with their values.
      var base = st.settled ? st.markBase : null;
      var was = base && tableOf(key, base);
      var prev = was && was[i] && was[i][j];
      var changed = !!base && !hidden && staged === null && !Object.is(prev, v) && !(prev === v);
      // Nothing the cell shows differs from its last drawing (most cells of most inputs): done.
      // A share's text also depends on how many scores of its row are readable (formatShare).
      var readable = name === "A" && staged === null ? readableCount(headResult(hd.head).S[i]) : 0;
      var was0 = cell.drawn;
      if (was0 && Object.is(was0.v, v) && Object.is(was0.staged, staged) && was0.pending === pending &&
          was0.hidden === hidden && was0.maskedA === maskedA && was0.changed === changed &&
          (!changed || Object.is(was0.prev, prev)) && was0.readable === readable) return;
      cell.drawn = { v: v, staged: staged, pending: pending, hidden: hidden, maskedA: maskedA, changed: changed,
        prev: prev, readable: readable };
      var deltaText = "";
      // A masked cell shows its label, not the change (one small line per cell, so a mark
      // never changes a cell's height); its frame still says it changed.
      if (changed && !masked && !maskedA) {
        if (prev === -Infinity) deltaText = vs.changed_mask || "";
        else {
          var d = v - prev, a = format(Math.abs(d));
          deltaText = (d > 0 ? "▲" : "▼") + (a === "0" ? "<0.001" : a);
        }
      }
      var td = cell.td;
      if (!Object.is(cell.v, v)) { cell.v = v; td.setAttribute("data-value", String(v)); }
      // What the cell shows; each part is written only when it differs from what is there.
      var text = "?", mark = "", bg = "", fg = "", cls = "al-cell al-hidden-value";
      if (pending) text = vs.pending || "…";
      if (staged !== null) { v = staged; cls = "al-cell al-staged"; }
      if (!pending && !hidden) {
        // A share that only rounds to 0 or 1 shows its bound ("<0.001"): exp is never 0; a masked one is 0.
        text = name === "A" && staged === null ? core.formatShare(tableOf(key, st.result)[i], headResult(hd.head).S[i], j, 3) : format(v);
        cls = staged !== null ? cls : "al-cell";
        if (masked || maskedA) {
          cls += " al-masked";
          mark = vs.masked_label || "";
        } else {
          var paint = cellPaint(name, v);
          bg = paint[0];
          fg = paint[1];
        }
      } else deltaText = "";
      var shown = cell.shown || (cell.shown = {});
      if (shown.changed !== changed) { shown.changed = changed; toggle(td, "data-changed", changed); }
      if (shown.pending !== pending) { shown.pending = pending; toggle(td, "data-pending", pending); }
      if (shown.text !== text) writeText(cell.value, shown.text = text);
      if (shown.delta !== deltaText) {
        // The arrow and the amount apart: a phone shows the arrow only (lab.css), so a mark never
        // widens a cell there (the strip of S, A, O would grow past the screen).
        var arrow = /^[▲▼]/.test(deltaText), d = cell.delta, amount = d.lastChild;
        shown.delta = deltaText;
        if (arrow && shown.arrow) {  // the same two nodes, new text
          writeText(d.firstChild, deltaText.charAt(0));
          writeText(amount, deltaText.slice(1));
        } else {
          d.textContent = arrow ? deltaText.charAt(0) : deltaText;
          if (arrow) d.appendChild(el("span", { "class": "al-dn" }, deltaText.slice(1)));
        }
        shown.arrow = arrow;
      }
      if (shown.mark !== mark) cell.mark.textContent = shown.mark = mark;
      if (shown.bg !== bg) td.style.backgroundColor = shown.bg = bg;
      if (shown.fg !== fg) td.style.color = shown.fg = fg;
      if (shown.cls !== cls) td.className = shown.cls = cls;
    }

    function toggle(node, attr, on) { if (on) node.setAttribute(attr, ""); else node.removeAttribute(attr); }
    /** A cell's background and text colour for value v of table `name`, remembered (values
     *  come back: the controls step on a grid). */
    var paints = {}, paintCount = 0;
    function cellPaint(name, v) {
      var k = name + v, p = paints[k];
      if (p) return p;
      if (++paintCount > 2000) { paints = {}; paintCount = 1; }
      var rgb = cellColour(name, v);
      return (paints[k] = ["rgb(" + rgb.join(",") + ")", textColour(rgb).colour]);
    }
    function readableCount(scores) {
      var k = 0;
      for (var c = 0; c < scores.length; c++) if (scores[c] !== -Infinity) k++;
      return k;
    }

    var workedKey = null, workedShape = 0;  // what the worked text was drawn from; bumped when its lines change
    var workedFrame = 0;
    // Whether the worked text is on screen (or near it).  During a drag it is rebuilt once per frame
    // while it is (its ten-decimal lines are the costliest part of an update); while it is not (a
    // projector's lab page has it below the fold), when it comes near the screen, a stage of 逐步
    // reads it, the page is printed, or the drag settles (fresh()).  A key or a typed value rebuilds
    // it at once, so that after every gesture the view holds nothing stale.
    // No IntersectionObserver (an older browser): taken as always on screen.
    var workedSeen = true, workedStale = false;
    var seer = typeof IntersectionObserver === "function" ? new IntersectionObserver(function (entries) {
      workedSeen = entries[entries.length - 1].isIntersecting;
      if (workedSeen && fresh()) drawAll(true);
    }, { rootMargin: "25% 0px" }) : null;
    if (seer) { workedSeen = false; seer.observe(worked); }
    /** Bring a worked text left stale off screen up to date; true if it was stale. */
    function fresh() {
      if (!workedStale || !st.result) return false;
      workedStale = false;
      drawWorked();
      return true;
    }
    function drawWorked() {
      var r = st.fullResult, row = st.row;
      // Its inputs: the params (the result follows from them), the row and the head.
      var key = st.key + "|" + row + "|" + st.head;
      if (key === workedKey) return;
      workedKey = key;
      // Several heads: the explained head's five stages, then the heads joined by Wo (stage 6).
      var lines = heads > 1 ? core.workedSteps(headFull(st.head), row, strings.worked || {}, tokens, keyTokens)
        .concat(core.projectionSteps(r, row, hs.worked || {}, tokens)) : core.workedSteps(r, row, strings.worked || {}, tokens, keyTokens);
      var children = worked.children;
      for (var k = 0; k < lines.length; k++) {
        var node = children[k];
        if (!node) node = worked.appendChild(el("p"));
        var info = lines[k];  // {kind, key, stage, j?, c?, text} (attention_lab.worked's template keys)
        if (node.__text !== info.text) writeText(node, node.__text = info.text);
        var shape = [info.kind, info.key, info.j, info.c, info.stage].join();
        if (node.__shape === shape) continue;
        node.__shape = shape;
        workedShape++;
        node.className = "al-worked-" + info.kind;
        node.setAttribute("data-line", info.key || "");
        if (info.j !== undefined) node.setAttribute("data-j", String(info.j)); else node.removeAttribute("data-j");
        if (info.c !== undefined) node.setAttribute("data-c", String(info.c)); else node.removeAttribute("data-c");
        node.setAttribute("data-stage", String(info.stage || 0));
      }
      if (worked.children.length > lines.length) workedShape++;
      while (worked.children.length > lines.length) worked.removeChild(worked.lastChild);
      var wt = fill((heads > 1 ? hs.worked_title : labStr.worked_title) || "{tok}", { tok: tokens[row], t: st.head });
      if (workedTitle.textContent !== wt) workedTitle.textContent = wt;
    }

    function drawStep() {
      root.setAttribute("data-step", String(st.step));
      var stages = (heads > 1 ? hs.stages : vs.stages) || [], label = (heads > 1 ? hs.stage_label : vs.stage_label) || "{n}/5 {text}";
      stageLabel.textContent = st.step === 0 ? "" : fill(label, { n: st.step, text: fill(stages[st.step - 1] || "", { t: st.head }) });
      var current = STAGE_LINE[st.step];
      for (var k = 0; k < worked.children.length; k++) {
        var p = worked.children[k];
        var stage = Number(p.getAttribute("data-stage"));
        if (st.step > 0 && stage > st.step) p.setAttribute("data-pending", ""); else p.removeAttribute("data-pending");
        if (current && p.getAttribute("data-line") === current) p.setAttribute("data-current", "");
        else p.removeAttribute("data-current");
      }
    }

    /** The current stage's lines (not its heading) beside the step buttons; none in predict's A/O stages.
     *  Read from the projector: their numbers with 4 decimals (shortNumbers), the worked text keeps ten. */
    function drawStageLines() {
      var here = [];
      if (st.step && !(st.predict && st.step > 3)) Array.prototype.forEach.call(worked.children, function (p) {
        if (p.getAttribute("data-stage") === String(st.step) && p.className !== "al-worked-head") here.push(shortNumbers(p.textContent));
      });
      var text = here.join("\n");
      if (stageLines.__text !== text) stageLines.textContent = stageLines.__text = text;
    }

    /** Redraw what the state shows; `afterWorked`: only what follows the worked text (its stage
     *  marks, the stage's lines, the links), for the frame that rebuilds it during a drag (the
     *  cells and the plane were drawn by that input's update already). */
    function drawAll(afterWorked) {
      if (st.step) fresh();  // the stage's lines are read from the worked text
      if (!afterWorked) order.forEach(function (key) {
        var hd = handles[key];
        hd.cells.forEach(function (row, i) { row.forEach(function (_, j) { drawCell(key, i, j); }); });
        hd.picks.forEach(function (b, i) {
          var pressed = i === st.row && (hd.head === null || hd.head === st.head) ? "true" : "false";
          if (b.getAttribute("aria-pressed") !== pressed) b.setAttribute("aria-pressed", pressed);
        });
      });
      var drawn = st.step + "|" + workedShape + "|" + st.predict + "|" + st.head;
      if (drawn !== drawnAs) {
        drawnAs = drawn;
        drawStep();
        if (st.predict) root.setAttribute("data-predict", "true"); else root.removeAttribute("data-predict");
        buttons.predict.setAttribute("aria-pressed", st.predict ? "true" : "false");
        buttons.reveal.disabled = !st.predict;
        buttons.back.disabled = st.step === 0;
      }
      drawStageLines();
      st.tokens = { query: tokens, key: keyTokens };
      if (!afterWorked) plane.draw(st);
      if (st.active) link(st.active);
    }
    var drawnAs = null;

    function drawNotes(list) {
      var key = list.join("\n");
      if (notes.__key === key) return;
      notes.__key = key;
      while (notes.firstChild) notes.removeChild(notes.firstChild);
      list.forEach(function (text) { notes.appendChild(el("p", null, text)); });
    }

    // ---------------------------------------------------------------- linked cells

    function cellsOf(name, pick) {
      var out = [];
      handles[name].cells.forEach(function (row, i) { row.forEach(function (c, j) { if (pick(i, j)) out.push(c.td); }); });
      return out;
    }
    /** Row i of a whole-width table, only head t's columns (t null: all of them). */
    function headRow(name, i, t) { return cellsOf(name, function (a, b) { return a === i && (t === null || colHead(name, b).t === t); }); }

    function lines(key, attr, value) {
      return Array.prototype.filter.call(worked.children, function (p) {
        return p.getAttribute("data-line") === key && (attr === undefined || p.getAttribute(attr) === String(value));
      });
    }

    /** Controls marked data-lab-source="X[0,1]" (or "causal"), found under options.sourceRoot
     *  (an Element, or a function returning one at hover time; default: the lab root). */
    function sources(name) {
      if (options.findSources) return options.findSources(name);
      var where = typeof options.sourceRoot === "function" ? options.sourceRoot() : (options.sourceRoot || root);
      if (!where) return [];
      return Array.prototype.slice.call(where.querySelectorAll("[data-lab-source]")).filter(function (e) {
        return name.indexOf(e.getAttribute("data-lab-source")) >= 0;
      });
    }

    /** The source points of key row j in the plane: the rows of Xs (cross), else of X. */
    function keyPoint(j) { return st.tables.Xs ? plane.vectors("xs", j) : plane.vectors("x", j); }

    /** What a drawn vector of the plane comes from and goes into: its cells (and X's controls). */
    function vectorLinks(kind, i) {
      var row = function (name) { return cellsOf(name, function (a) { return a === i; }); };
      if (kind === "x" || kind === "xs") {
        var t = kind === "xs" ? "Xs" : "X", names = st.tables[t][0].map(function (_, p) { return t + "[" + i + "," + p + "]"; });
        var out = sources(names);
        if (kind === "x") out = out.concat(row("Q"), plane.vectors("q", i));
        if (kind === "xs" || !st.tables.Xs) out = out.concat(row("K"), row("V"), plane.vectors("k", i), plane.vectors("v", i));
        return out;
      }
      if (kind === "q") return row("Q").concat(row("S"));
      if (kind === "k") return row("K").concat(cellsOf("S", function (a, b) { return a === st.row && b === i; }), plane.feet(i));
      if (kind === "v") return row("V");
      return row("O").concat(plane.vectors("v"));
    }
    function vectorText(kind, i) {
      var p = (vs.plane || {}).explain || {}, r = st.result;
      var v = kind === "x" ? st.tables.X[i] : kind === "xs" ? st.tables.Xs[i] : r[kind.toUpperCase()][i];
      var tok = kind === "x" || kind === "q" || kind === "o" ? tokens[i] : keyTokens[i];
      var base = { tok: tok, i: i, a: format(v[0]), b: format(v[1]), sub: core.subscript(i) };
      if (kind === "o") base.expr = r.A[i].map(function (a, k) { return format(a) + "·v" + core.subscript(k); }).join(" + ");
      return fill(p[kind] || "", base);
    }

    /** Several heads: what cell (key, i, j) is computed from, and the worked lines that compute it
     *  (those only when the cell is in the explained row and head). */
    function linkedHeads(key, i, j) {
      var hd = handles[key], name = hd.name, row = st.row, out = [], t = hd.head, mine;
      if (name === "S" || name === "A") {
        mine = i === row && t === st.head;
        if (name === "A") return cellsOf("S" + t, function (a) { return a === i; }).concat(mine ? lines("shares") : []);
        out = headRow("Q", i, t).concat(headRow("K", j, t));
        if (headResult(t).S[i][j] === -Infinity) out = out.concat(sources([padded(j) ? "pad" : "causal"]));
        if (mine) out = out.concat(lines("dot", "data-j", j), lines("scaled"), lines("add_mask"), lines("mask_hides", "data-j", j));
        return out;
      }
      if (name === "Y") {
        var wo = (st.tables.Wo || []).map(function (_, p) { return "Wo[" + p + "," + j + "]"; });
        return cellsOf("O", function (a) { return a === i; }).concat(sources(wo), i === row ? lines("y_cell", "data-c", j) : []);
      }
      var at = colHead(name, j);
      mine = i === row && at.t === st.head;
      if (name === "O") {
        return cellsOf("A" + at.t, function (a) { return a === i; }).concat(cellsOf("V", function (a, b) { return b === j; }),
          mine ? lines("out_cell", "data-c", at.c) : []);
      }
      var w = PARAM_TABLE[name], x = name !== "Q" && st.tables.Xs ? "Xs" : "X", names = [];
      st.tables.X[0].forEach(function (_, p) { names.push(x + "[" + i + "," + p + "]", w + "[" + p + "," + j + "]"); });
      out = sources(names);
      if (at.t === st.head && name === "Q" && i === row) out = out.concat(lines("receiver"));
      if (at.t === st.head && name !== "Q") out = out.concat(lines("readable", "data-j", i), lines("masked_pos", "data-j", i));
      return out;
    }

    /** What cell (name, i, j) is computed from, and the worked lines that compute it. */
    function linkedSet(name, i, j) {
      if (heads > 1) return linkedHeads(name, i, j);
      var r = st.result, row = st.row, out = [];
      if (name === "S") {
        out = cellsOf("Q", function (a) { return a === i; }).concat(cellsOf("K", function (a) { return a === j; }));
        out = out.concat(plane.vectors("q", i), plane.vectors("k", j), i === row ? plane.feet(j) : []);
        if (r.S[i][j] === -Infinity) out = out.concat(sources([padded(j) ? "pad" : "causal"]));
        if (i === row) out = out.concat(lines("dot", "data-j", j), lines("scaled"), lines("add_mask"), lines("mask_hides", "data-j", j));
      } else if (name === "A") {
        out = cellsOf("S", function (a) { return a === i; }).concat(plane.vectors("q", i), plane.vectors("k"));
        if (i === row) out = out.concat(lines("shares"));
      } else if (name === "O") {
        out = cellsOf("A", function (a) { return a === i; }).concat(cellsOf("V", function (a, b) { return b === j; }),
          plane.vectors("v"), plane.vectors("o", i));
        if (i === row) out = out.concat(lines("out_cell", "data-c", j));
      } else {
        var w = PARAM_TABLE[name], x = name !== "Q" && st.tables.Xs ? "Xs" : "X", names = [];
        st.tables.X[0].forEach(function (_, p) { names.push(x + "[" + i + "," + p + "]", w + "[" + p + "," + j + "]"); });
        out = sources(names).concat(plane.vectors(name.toLowerCase(), i), name === "Q" ? plane.vectors("x", i) : keyPoint(i));
        if (name === "Q" && i === row) out = out.concat(lines("receiver"));
        if (name !== "Q") out = out.concat(lines("readable", "data-j", i), lines("masked_pos", "data-j", i));
      }
      return out;
    }

    function factor(x) { var t = format(x); return t.charAt(0) === "−" ? "(" + t + ")" : t; }
    /** A number as the tables show it (3 decimals at most), back as a number; the chapter's "="
     *  rule at the tables' decimals (attention.js, the one place: eqShown). */
    function shownNum(x) { return core.shownAs(x, 3); }
    function eqSign(fromShown, x) { return core.eqShown(fromShown, x, 3); }
    function dotShown(a, b) { return a.reduce(function (t, v, p) { return t + shownNum(v) * shownNum(b[p]); }, 0); }

    /** The explanation of one cell, with the numbers the tables show.  Several heads: a head's S
     *  and A, and O's columns of a head, are explained on that head's result (its slices), with the
     *  head in the cell's name; Y from O and Wo. */
    function explainText(key, i, j) {
      var e = vs.explain || {}, hd = handles[key], name = hd.name, cell = cellName(name, i, j), col = j;
      var r = st.result, full = st.fullResult;
      if ((name === "A" || name === "O" || name === "Y") && st.predict) return e.hidden || "";
      if (isPending(key, i, j)) return e.pending || "";
      if (heads > 1) {
        if (name === "Y") return explainY(i, j, cell);
        var at = hd.head !== null ? { t: hd.head, c: j } : colHead(name, j);
        cell = fill(hd.head !== null ? hs.cell : hs.cell_of, { cell: cell, t: at.t, c: at.c });
        if (name !== "Q" && name !== "K" && name !== "V") { r = headResult(at.t); full = headFull(at.t); j = at.c; }
      }
      var base = { cell: cell, value: format(r[name][i][j]), d_k: core.fmt(full.d_k),
        row_tok: tokens[i], col_tok: keyTokens[j], i: i, j: j };
      var pad = padded(col) && (name === "S" || name === "A") ? "_pad" : "";
      if (name === "S") {
        base.qi = "q" + core.subscript(i);
        base.kj = "k" + core.subscript(j);
        base.expr = r.Q[i].map(function (q, p) { return factor(q) + "×" + factor(r.K[j][p]); }).join(" + ");
        if (r.S[i][j] === -Infinity) {  // the same story as the worked text: q·k, ÷ √d_k, then + M = −∞
          var raw = full.raw_scores[i][j], scaled = raw / Math.sqrt(full.d_k);
          base.raw = format(raw);
          base.eq_raw = eqSign(dotShown(r.Q[i], r.K[j]), raw);
          base.scaled = format(scaled);
          base.eq_scaled = eqSign(shownNum(raw) / Math.sqrt(full.d_k), scaled);
          return fill(e["S_masked" + pad], base);
        }
        base.eq = eqSign(dotShown(r.Q[i], r.K[j]) / Math.sqrt(full.d_k), r.S[i][j]);
        return fill(e.S, base);
      }
      if (name === "A") {
        if (r.S[i][j] === -Infinity) return fill(e["A_masked" + pad], base);
        base.s = format(r.S[i][j]);
        var readable = r.S[i].filter(function (s) { return s !== -Infinity; });
        base.sum = readable.map(function (s) { return "exp(" + format(s) + ")"; }).join(" + ");
        base.eq = eqSign(Math.exp(shownNum(r.S[i][j])) / readable.reduce(function (t, s) { return t + Math.exp(shownNum(s)); }, 0),
          r.A[i][j]);
        if (core.formatShare(r.A[i], r.S[i], j, 3) !== base.value) {  // tiny, not 0: its power of ten, as the worked text
          base.value = core.shareTexts(r.S[i], r.A[i])[j];
          base.eq = "≈";
        }
        return fill(e.A, base);
      }
      if (name === "O") {
        var exact = core.shareTexts(r.S[i], r.A[i]), tiny = false;
        var shareText = function (a, k) {
          if (core.formatShare(r.A[i], r.S[i], k, 3) === format(a)) return format(a);
          tiny = true;
          return "(" + exact[k] + ")";
        };
        base.expr = r.A[i].map(function (a, k) { return shareText(a, k) + "×" + factor(r.V[k][j]); }).join(" + ");
        if (tiny) { base.eq = "≈"; return fill(e.O, base); }  // a share too small for the table: said as the worked text says it
        var hand = dotShown(r.A[i], r.V.map(function (v) { return v[j]; }));
        base.eq = eqSign(hand, r.O[i][j]);
        // By hand the shown shares give another number ("0.67×0 + 0.33×20" is 6.6, not 6.605): the
        // explanation writes that and says the table's value comes from the unrounded shares.
        base.hand = format(hand);
        if (base.hand !== base.value && e.O_rounded) return fill(e.O_rounded, base);
        return fill(e.O, base);
      }
      var w = PARAM_TABLE[name], X = st.tables[name !== "Q" && st.tables.Xs ? "Xs" : "X"], W = st.tables[w];
      base.w = w;
      base.expr = X[i].map(function (x, p) { return factor(x) + "×" + factor(W[p][j]); }).join(" + ");
      base.eq = eqSign(dotShown(X[i], W.map(function (w) { return w[j]; })), r[name][i][j]);
      return fill(e.QKV, base);
    }
    /** Y[i, j] = row i of O (the concatenation) · column j of Wo, with the numbers the tables show. */
    function explainY(i, j, cell) {
      var x = hs.explain || {}, O = st.result.O[i], Wo = st.tables.Wo, y = st.result.Y[i][j];
      var col = Wo.map(function (w) { return w[j]; }), hand = dotShown(O, col);
      var base = { cell: cell, i: i, j: j, value: format(y), hand: format(hand), eq: eqSign(hand, y),
        expr: O.map(function (o, p) { return factor(o) + "×" + factor(col[p]); }).join(" + ") };
      return fill(base.hand !== base.value && x.Y_rounded ? x.Y_rounded : x.Y, base);
    }

    var linked = [], linkedAs = null;
    function clearLinks() {
      linkedAs = null;
      linked.forEach(function (n) { n.removeAttribute("data-linked"); });
      linked = [];
      Array.prototype.forEach.call(root.querySelectorAll("[data-active]"), function (n) { n.removeAttribute("data-active"); });
    }

    function link(td) {
      if (!td || !st.result) { clearLinks(); explain.textContent = hint; return; }
      var kind = td.getAttribute("data-vector");
      if (kind) {  // a vector of the plane
        var at = Number(td.getAttribute("data-row"));
        // Redrawn while it stays linked (a point dragged or moved by its keys): only the text changes.
        var as = [kind, at, st.row, builtAs, !!st.tables.Xs].join();
        if (linkedAs === as && td.hasAttribute("data-active")) {
          var said = vectorText(kind, at);
          if (explain.textContent !== said) explain.textContent = said;
          return;
        }
        clearLinks();
        linkedAs = as;
        td.setAttribute("data-active", "");
        linked = vectorLinks(kind, at);
        linked.forEach(function (n) { n.setAttribute("data-linked", ""); });
        explain.textContent = vectorText(kind, at);
        return;
      }
      clearLinks();
      var name = keyOf(td), i = Number(td.getAttribute("data-row")), j = Number(td.getAttribute("data-col"));
      td.setAttribute("data-active", "");
      linked = linkedSet(name, i, j);
      linked.forEach(function (n) { n.setAttribute("data-linked", ""); });
      explain.textContent = explainText(name, i, j);
    }

    function cellFrom(target) {
      var td = target && target.closest ? target.closest("td.al-cell[data-matrix]") : null;  // the view's own cells (not a driver's inputs)
      return td && wrap.contains(td) ? td : null;
    }

    /** A row header was clicked: choose that row the way the driver does (options.onRow, else its
     *  control marked [data-lab-row="i"], clicked), so its state, address and controls follow;
     *  a view with neither explains the row itself. */
    function chooseRow(i, head) {
      if (!st.result) return;
      if (head !== null && head !== undefined && head !== st.head) {  // several heads: a head's S or A
        st.head = head;
        if (i === st.row) { drawWorked(); drawAll(); return; }
      }
      if (i === st.row) return;
      if (options.onRow) { options.onRow(i, st.head); return; }
      var where = typeof options.sourceRoot === "function" ? options.sourceRoot() : (options.sourceRoot || root);
      var control = where && where.querySelector('[data-lab-row="' + i + '"]');
      if (control) { control.click(); return; }
      st.row = i;
      drawWorked();
      drawAll();
    }
    function onClick(e) {
      var b = e.target && e.target.closest ? e.target.closest("button[data-lab-row-pick]") : null;
      var fig = b && b.closest("figure[data-head]");
      if (b && wrap.contains(b)) chooseRow(Number(b.getAttribute("data-lab-row-pick")), fig ? Number(fig.getAttribute("data-head")) : null);
    }

    var focused = null;
    function linkable(target) { return cellFrom(target) || plane.vectorFrom(target); }
    function onOver(e) { var td = linkable(e.target); if (td && td !== st.active) { st.active = td; link(td); } }
    function onOut(e) {
      var td = linkable(e.target);
      if (!td || (e.relatedTarget && td.contains(e.relatedTarget))) return;
      st.active = focused;
      link(focused);
    }
    function onFocusIn(e) {
      var handle = plane.vectorFrom(e.target);
      if (handle) { focused = handle; st.active = handle; link(handle); return; }
      var td = cellFrom(e.target);
      if (!td) return;
      focused = td;
      // Roving tab stop: one per table, the last focused cell.
      Array.prototype.forEach.call(td.closest("table").querySelectorAll("td[data-matrix]"), function (c) {
        c.setAttribute("tabindex", c === td ? "0" : "-1");
      });
      st.active = td;
      link(td);
    }
    function onFocusOut(e) {
      var td = linkable(e.target);
      if (!td || (e.relatedTarget && linkable(e.relatedTarget))) return;
      focused = null;
      st.active = null;
      link(null);
    }
    function onKey(e) {
      if (e.key === "Escape" && st.step) { e.preventDefault(); st.step = 0; drawAll(); return; }  // Esc leaves the step-through
      var td = cellFrom(e.target);
      if (!td) return;
      var d = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] }[e.key];
      if (!d) return;
      var name = keyOf(td), cells = handles[name].cells;
      var i = Number(td.getAttribute("data-row")) + d[0], j = Number(td.getAttribute("data-col")) + d[1];
      // Several heads, as they are drawn: S0 S1 … O over A0 A1 … Y.
      var over = heads > 1 ? strip.filter(function (k) { return k.charAt(0) === "S" || k === "O"; }) : null;
      var under = heads > 1 ? strip.filter(function (k) { return k.charAt(0) === "A" || k === "Y"; }) : null;
      if (i < 0 || i >= cells.length) {
        // Past a table's top or bottom edge (several heads): into the table over or under it.
        var from = over && (i < 0 ? under : over), to = from && (i < 0 ? over : under), at = from ? from.indexOf(name) : -1;
        if (at < 0) return;
        name = to[at];
        cells = handles[name].cells;
        i = i < 0 ? cells.length - 1 : 0;
        j = Math.min(j, cells[0].length - 1);
      } else if (j < 0 || j >= cells[0].length) {
        // Past a table's left or right edge: on into the neighbouring table (S A O, Q K V; several
        // heads: along S0 S1 … O, or A0 A1 … Y).
        var line = !over ? (strip.indexOf(name) >= 0 ? strip : ["Q", "K", "V"]) :
          over.indexOf(name) >= 0 ? over : under.indexOf(name) >= 0 ? under : ["Q", "K", "V"];
        var next = line[line.indexOf(name) + (j < 0 ? -1 : 1)];
        if (!next) return;
        name = next;
        cells = handles[name].cells;
        i = Math.min(i, cells.length - 1);
        j = j < 0 ? cells[0].length - 1 : 0;
      }
      e.preventDefault();
      cells[i][j].td.focus();
    }
    var listeners = { mouseover: onOver, mouseout: onOut, focusin: onFocusIn, focusout: onFocusOut,
      keydown: onKey, click: onClick };
    Object.keys(listeners).forEach(function (type) { wrap.addEventListener(type, listeners[type]); });

    // ---------------------------------------------------------------- API

    view.update = function (state) {
      state = state || {};
      var params = state.params || st.params;
      // The worked text needs raw scores and d_k: a result without them (from Python) is
      // recomputed here from the params, with attention.js, so Python and JS show the same text.
      // Several heads come from attention.js (multiHeadAttention: -Infinity, raw_scores per head).
      var multi = isMulti(state.result);
      var full = state.result && (state.result.raw_scores || multi) ? state.result : core.attentionFromParams(params);
      var result = normaliseResult(state.result || full);
      // Python's masked cells come as null: the worked text needs them as -Infinity too (else
      // "我"'s row would read the masked "爱" as readable).
      if (full === state.result && !multi) full = Object.assign({}, full, result);
      // A driver of other shapes (the shapes lab) gives its tables, tokens and a key of its state.
      if (state.tokens) tokens = state.tokens;
      keyTokens = state.keyTokens || tokens;
      var n = result.Q.length, h = multi ? result.heads.length : 1;
      var rebuilt = build(n, result.K.length, multi ? full.d_k : result.Q[0].length, multi ? full.d_v : result.V[0].length,
        h, multi ? result.Y[0].length : 0);
      if (rebuilt) { st.result = st.markBase = null; st.active = focused = null; }  // no change marks across shapes
      if (state.head !== undefined && state.head !== null) st.head = state.head;
      if (!(st.head >= 0 && st.head < h)) st.head = 0;
      // Change marks count from where the gesture began: state.settling (a slider still moving)
      // keeps that start and holds the marks back until an update without it, or view.settle().
      var same = !!st.result && sameData(st.result, result);
      if (!same) {
        if (!st.moving) st.markBase = st.result;
        st.moving = !!state.settling;
        st.settled = !st.moving;
      }
      st.prev = st.result;
      st.params = params;
      st.result = result;
      st.fullResult = full;
      st.tables = state.tables || core.tablesFromParams(params);
      st.key = state.key !== undefined ? state.key : core.PARAM_NAMES.map(function (n) { return params[n]; }).join();
      st.row = state.row >= 1 && state.row < n && state.row % 1 === 0 ? state.row : (state.row === 0 ? 0 : Math.min(1, n - 1));
      st.notes = state.notes || [];
      // During a drag (state.settling) input events come faster than frames: the worked text,
      // the costliest part, is rebuilt once per frame, for the latest state; otherwise at once.
      if (state.settling && !workedSeen && workedKey !== null) workedStale = true;
      else if (state.settling && typeof requestAnimationFrame === "function") {
        if (!workedFrame) workedFrame = requestAnimationFrame(function () { workedFrame = 0; drawWorked(); drawAll(true); });
      } else {
        if (workedFrame) { cancelAnimationFrame(workedFrame); workedFrame = 0; }
        workedStale = false;
        drawWorked();
      }
      drawAll();
      // Notes, like the change marks, once the value settles: a note appearing mid-drag would grow
      // the sticky results of a phone under the finger (the page scrolls to keep the slider put).
      if (!st.moving) drawNotes(st.notes);
      root.setAttribute("data-lab-ready", "true");
      return view;
    };

    view.step = function (back) {
      st.step = back === true ? Math.max(0, st.step - 1) : (st.step + 1) % (heads > 1 ? 7 : 6);
      if (st.result) drawAll();
      // A short window (a projector at 125 %): the stage's lines, under its buttons, come into view
      // (the tables beside them are sticky and stay).
      var box = st.step && stageLines.getBoundingClientRect();
      if (box && box.height && box.bottom > (window.innerHeight || 0) && stageLines.scrollIntoView) {
        stageLines.scrollIntoView({ block: "nearest" });
      }
      return st.step;
    };
    view.back = function () { return view.step(true); };
    view.settle = function () {
      var stale = fresh();  // the gesture is over: everything the view holds is current again
      if (st.moving) { st.moving = false; st.settled = true; if (st.result) drawAll(); drawNotes(st.notes); }
      else if (stale) drawAll(true);
    };
    /** On paper (app.js, before printing): the change marks count from `result` (the baseline: every
     *  difference, not only the last change's); null: back to the marks the screen had. */
    view.markFrom = function (result) {
      if (result) { if (!("screenBase" in st)) st.screenBase = st.markBase; st.markBase = normaliseResult(result); st.settled = true; }
      else if ("screenBase" in st) { st.markBase = st.screenBase; delete st.screenBase; }
      fresh();  // paper shows the worked text too
      if (st.result) drawAll();
    };
    view.predict = function () {
      st.predict = true;
      if (st.result) drawAll();
    };
    view.reveal = function () {
      st.predict = false;
      if (st.result) drawAll();
    };
    view.resultsId = resultsId;
    view.plane = plane;
    view.handles = handles;
    view.destroy = function () {
      if (observer) observer.disconnect();
      plane.destroy();
      if (workedFrame) cancelAnimationFrame(workedFrame);
      if (seer) seer.disconnect();
      Object.keys(listeners).forEach(function (type) { wrap.removeEventListener(type, listeners[type]); });
      if (wrap.parentNode) wrap.parentNode.removeChild(wrap);
      root.removeAttribute("data-lab-ready");
    };
    return view;
  }

  return {
    SCALES: SCALES,
    cividis: cividis,
    setColours: setColours,
    luminance: luminance,
    textColour: textColour,
    cellColour: cellColour,
    shortNumbers: shortNumbers,
    markHead: markHead,
    planeModel: planeModel,
    planeBox: planeBox,
    convexHull: convexHull,
    mountView: mountView
  };
});
