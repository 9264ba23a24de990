/* F11 attention lab, static twin: drawing (render.js).
 *
 * Takes plain arrays and an element; knows nothing about controls or state.
 * A heatmap is an HTML table (crisp when projected, cheap to update): built once
 * by createMatrix, then updateMatrix rewrites only text, colours and data-value.
 * Colours: cividis (as attention_lab.plotting), masked cells grey.
 */
(function (root, factory) {
  "use strict";
  var render = factory();
  if (typeof module !== "undefined" && module.exports) module.exports = render;
  if (root) root.AttentionLabRender = render;
})(typeof window !== "undefined" ? window : null, function () {
  "use strict";

  /** matplotlib's cividis sampled at 17 even stops; linear interpolation in between. */
  var CIVIDIS = [
    "00224e", "002e6a", "1a386f", "32436d", "434e6c", "535a6d", "61656f", "6f7073", "7d7c78",
    "8c8878", "9b9476", "aba072", "bcae6c", "cdbb63", "dec958", "f0d846", "fee838"
  ].map(function (h) { return [parseInt(h.slice(0, 2), 16), parseInt(h.slice(2, 4), 16), parseInt(h.slice(4, 6), 16)]; });

  /** t in [0, 1] -> [r, g, b] (0..255). */
  function cividis(t) {
    if (!(t > 0)) t = 0;
    if (t > 1) t = 1;
    var x = t * (CIVIDIS.length - 1);
    var i = Math.min(CIVIDIS.length - 2, Math.floor(x));
    var f = x - i, a = CIVIDIS[i], b = CIVIDIS[i + 1];
    return [a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f, a[2] + (b[2] - a[2]) * f];
  }

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  /** Build an empty heatmap table inside `parent`.
   *  spec: {name, title, rows: [labels], cols: [labels], axes (what rows and columns are), maskedText}. */
  function createMatrix(parent, spec) {
    var figure = el("figure", "al-matrix");
    figure.setAttribute("data-matrix-table", spec.name);
    var table = el("table", "al-table");
    var caption = el("caption", "al-caption", spec.title);
    table.appendChild(caption);
    var thead = el("thead");
    var headRow = el("tr");
    var corner = el("td", "al-corner");
    headRow.appendChild(corner);
    spec.cols.forEach(function (label) {
      var th = el("th", "al-col", label);
      th.setAttribute("scope", "col");
      headRow.appendChild(th);
    });
    thead.appendChild(headRow);
    table.appendChild(thead);
    var tbody = el("tbody");
    var cells = [];
    spec.rows.forEach(function (label, i) {
      var tr = el("tr");
      var th = el("th", "al-row", label);
      th.setAttribute("scope", "row");
      tr.appendChild(th);
      var rowCells = [];
      spec.cols.forEach(function (_, j) {
        var td = el("td", "al-cell");
        td.setAttribute("data-matrix", spec.name);
        td.setAttribute("data-row", String(i));
        td.setAttribute("data-col", String(j));
        var value = el("span", "al-v");
        var hidden = el("span", "al-sr");
        td.appendChild(value);
        td.appendChild(hidden);
        tr.appendChild(td);
        rowCells.push({ td: td, value: value, hidden: hidden, key: null });
      });
      cells.push(rowCells);
      tbody.appendChild(tr);
    });
    table.appendChild(tbody);
    figure.appendChild(table);
    if (spec.axes) {
      var axes = el("figcaption", "al-axes", spec.axes);
      figure.appendChild(axes);
    }
    parent.appendChild(figure);
    return { name: spec.name, root: figure, cells: cells, maskedText: spec.maskedText || "" };
  }

  /** Write `values` (array of rows) into a heatmap made by createMatrix.
   *  lo/hi: colour scale; masked(i, j) -> true for cells the causal mask hides;
   *  format(v) -> the cell text. Only cells whose value changed are touched. */
  function updateMatrix(handle, values, lo, hi, masked, format) {
    var span = hi - lo;
    for (var i = 0; i < handle.cells.length; i++) {
      for (var j = 0; j < handle.cells[i].length; j++) {
        var cell = handle.cells[i][j];
        var v = values[i][j];
        var isMasked = !!(masked && masked(i, j));
        var key = String(v) + (isMasked ? "m" : "") + "|" + lo + "|" + hi;
        if (cell.key === key) continue;
        cell.key = key;
        cell.td.setAttribute("data-value", String(v));
        cell.value.textContent = format(v);
        if (isMasked) {
          cell.td.className = "al-cell al-masked";
          cell.td.style.backgroundColor = "";
          cell.td.style.color = "";
          cell.hidden.textContent = handle.maskedText;
        } else {
          var rgb = cividis((v - lo) / span);
          var luminance = (0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]) / 255;
          cell.td.className = "al-cell";
          cell.td.style.backgroundColor = "rgb(" + Math.round(rgb[0]) + "," + Math.round(rgb[1]) + "," + Math.round(rgb[2]) + ")";
          cell.td.style.color = luminance > 0.55 ? "#000" : "#fff";
          cell.hidden.textContent = "";
        }
      }
    }
  }

  /** Show the worked lines ({kind, text}) in `container`, reusing its children. */
  function renderWorked(container, lines) {
    var children = container.children;
    for (var k = 0; k < lines.length; k++) {
      var node = children[k];
      if (!node) node = container.appendChild(el("p"));
      var cls = "al-worked-" + lines[k].kind;
      if (node.className !== cls) node.className = cls;
      if (node.textContent !== lines[k].text) node.textContent = lines[k].text;
    }
    while (container.children.length > lines.length) container.removeChild(container.lastChild);
  }

  return { cividis: cividis, createMatrix: createMatrix, updateMatrix: updateMatrix, renderWorked: renderWorked };
});
