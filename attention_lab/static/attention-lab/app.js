/* F11 attention lab, static twin: wiring (app.js).
 *
 * For every element with [data-attention-lab]: read its JSON config
 * (<script type="application/json" data-attention-lab-config>, made by
 * attention_lab.web.lab_config), build the controls, the six heatmaps and the
 * worked arithmetic inside it, and keep them equal to one state object
 * {params, row}.  Every change goes through setParam/setAll -> update(), which
 * recomputes everything from the state (attention.js) and redraws (render.js).
 *
 * Links: 复制链接 writes the state into the page's query string
 * (?X=1,1,1,-1&Wq=..&Wk=..&Wv=..&d_k=2&causal=1&row=1) and copies it; opening such
 * a link restores it.  Link values are data only: parsed as numbers, checked,
 * clamped, and any problem is shown with textContent, never as HTML.
 */
(function () {
  "use strict";
  if (typeof window === "undefined" || typeof document === "undefined") return;
  var core = window.AttentionLabCore;
  var render = window.AttentionLabRender;
  var RESULT_TABLES = ["Q", "K", "V", "S", "A", "O"];
  var labCount = 0;

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function copyParams(p) {
    var out = {};
    core.PARAM_NAMES.forEach(function (n) { out[n] = p[n]; });
    return out;
  }

  function Lab(root, config) {
    var self = this;
    var s = config.strings || {};
    var tw = s.twin || {};
    var labStr = s.lab || {};
    var ctl = s.controls || {};
    var tokens = s.tokens || core.TOKENS;
    var index = ++labCount;
    var uid = "al" + index;
    if (!root.id) root.id = index === 1 ? "attention-lab" : "attention-lab-" + index;
    this.root = root;
    this.config = config;
    /** The single source of truth: every number on screen is recomputed from it. */
    this.state = { params: copyParams(config.start), row: config.row === 0 ? 0 : 1 };
    var controls = this.controls = {};   // name -> {range|checkbox, text}
    var handles = {};

    root.classList.add("al-lab");
    var fallback = root.querySelector("[data-attention-lab-fallback]");
    if (fallback) root.removeChild(fallback);

    var title = el("p", { "class": "al-title" }, labStr.title || "");
    var hint = el("p", { "class": "al-hint" }, labStr.hint || "");
    var notes = el("div", { "class": "al-notes", role: "status", "aria-live": "polite", "data-lab-notes": "" });
    notes.hidden = true;
    // What the kernel lab says about the current values (range ends, d_k, causal off).
    var status = el("div", { "class": "al-messages", role: "status", "aria-live": "polite", "data-lab-messages": "" });
    status.hidden = true;
    root.appendChild(title);
    root.appendChild(hint);
    root.appendChild(notes);

    // ---------------------------------------------------------------- controls
    var panel = el("div", { "class": "al-controls" });
    core.TABLES.forEach(function (t) {
      var fs = el("fieldset", { "class": "al-fieldset" });
      fs.appendChild(el("legend", null, ctl["table_" + t] || t));
      var r = config.ranges[t];
      for (var i = 0; i < 2; i++) {
        for (var j = 0; j < 2; j++) {
          fs.appendChild(numberControl(t + "[" + i + "," + j + "]", r, t + "[" + i + "," + j + "]"));
        }
      }
      panel.appendChild(fs);
    });

    var other = el("fieldset", { "class": "al-fieldset al-other" });
    other.appendChild(el("legend", null, tw.other_legend || ""));
    other.appendChild(numberControl("d_k", config.ranges.d_k, ctl.d_k || "d_k"));

    var causalId = uid + "-causal";
    var causalBox = el("input", { type: "checkbox", id: causalId, "data-param": "causal" });
    var causalLabel = el("label", { "for": causalId, "class": "al-check" });
    causalLabel.appendChild(causalBox);
    causalLabel.appendChild(document.createTextNode(" " + (ctl.causal || "causal")));
    other.appendChild(causalLabel);
    controls.causal = { box: causalBox };
    causalBox.addEventListener("change", function () { self.setParam("causal", causalBox.checked); });

    var rowGroup = el("div", { "class": "al-rowchoice", role: "radiogroup", "aria-labelledby": uid + "-rowlabel" });
    rowGroup.appendChild(el("span", { id: uid + "-rowlabel", "class": "al-rowlabel" }, ctl.row || "row"));
    var rowInputs = [];
    (ctl.row_options || tokens).forEach(function (label, i) {
      var id = uid + "-row" + i;
      var radio = el("input", { type: "radio", name: uid + "-row", id: id, value: String(i), "data-lab-row": String(i) });
      radio.addEventListener("change", function () { if (radio.checked) self.setRow(i); });
      var lab = el("label", { "for": id, "class": "al-radio" });
      lab.appendChild(radio);
      lab.appendChild(document.createTextNode(" " + label));
      rowGroup.appendChild(lab);
      rowInputs.push(radio);
    });
    other.appendChild(rowGroup);
    panel.appendChild(other);
    var actions = el("div", { "class": "al-actions" });
    panel.appendChild(actions);
    root.appendChild(panel);
    root.appendChild(status);

    var buttons = el("div", { "class": "al-buttons" });
    var b = s.buttons || {};
    [["reset", null], ["only_wv", "only_wv"], ["only_wq", "only_wq"]].forEach(function (pair) {
      var btn = el("button", { type: "button", "class": "al-button", "data-lab-action": pair[0] }, b[pair[0]] || pair[0]);
      btn.addEventListener("click", function () {
        var target = pair[1] ? config.contrasts[pair[1]] : config.baseline;
        self.setAll(copyParams(target), self.state.row);
        self.showNotes([]);
      });
      buttons.appendChild(btn);
    });
    var copyBtn = el("button", { type: "button", "class": "al-button al-copy", "data-lab-action": "copy_link" }, b.copy_link || "copy");
    buttons.appendChild(copyBtn);
    actions.appendChild(buttons);
    var linkId = uid + "-link";
    var linkBox = el("div", { "class": "al-linkbox" });
    linkBox.hidden = true;
    var linkLabel = el("label", { "for": linkId }, tw.link_manual || "");
    var linkField = el("input", { type: "text", id: linkId, readonly: "", "class": "al-link", "data-lab-link": "" });
    linkBox.appendChild(linkLabel);
    linkBox.appendChild(linkField);
    actions.appendChild(linkBox);
    copyBtn.addEventListener("click", function () { self.copyLink(linkBox, linkLabel, linkField); });

    // ---------------------------------------------------------------- tables
    var matrices = el("div", { "class": "al-matrices" });
    var qkvTitle = el("p", { "class": "al-qkv-title" }, labStr.qkv_title || "");
    ["S", "A", "O", "", "Q", "K", "V"].forEach(function (name) {
      if (!name) { matrices.appendChild(qkvTitle); return; }
      // Labels as attention_lab.plotting: S and A are indexed by tokens on both sides.
      var scoreLike = name === "S" || name === "A";
      var rowAxis = name === "Q" || name === "K" || name === "V" ? tw.axis_pos : tw.axis_query;
      var colAxis = scoreLike ? tw.axis_key : tw.axis_feature;
      handles[name] = render.createMatrix(matrices, {
        name: name,
        title: (s.tables && s.tables[name]) || name,
        rows: tokens.slice(0, 2),
        cols: scoreLike ? tokens.slice(0, 2) : [0, 1].map(function (c) { return (tw.cell || "{c}").split("{c}").join(c); }),
        axes: (tw.axis_caption || "").split("{rows}").join(rowAxis || "").split("{cols}").join(colAxis || ""),
        maskedText: tw.masked_cell || ""
      });
    });
    root.appendChild(matrices);

    var workedBox = el("section", { "class": "al-worked", "aria-live": "off" });
    var workedTitle = el("p", { "class": "al-worked-title" });
    var worked = el("div", { "class": "al-worked-lines", "data-lab-worked": "" });
    workedBox.appendChild(workedTitle);
    workedBox.appendChild(worked);
    root.appendChild(workedBox);
    var errorBox = el("p", { "class": "al-error", role: "alert" });
    errorBox.hidden = true;
    root.appendChild(errorBox);

    this._parts = { handles: handles, worked: worked, workedTitle: workedTitle, status: status,
      notes: notes, rowInputs: rowInputs, errorBox: errorBox };

    // One numeric control: a range slider (data-param) plus a number box for exact typing.
    function numberControl(name, range, labelText) {
      var wrap = el("div", { "class": "al-control" });
      var id = uid + "-" + name.replace(/[^A-Za-z0-9_]/g, "_");
      var label = el("label", { "for": id, "class": "al-label" }, labelText);
      var slider = el("input", { type: "range", id: id, "data-param": name,
        min: String(range.min), max: String(range.max), step: String(range.step) });
      var text = el("input", { type: "number", "data-param-text": name, "class": "al-number",
        min: String(range.min), max: String(range.max), step: String(range.step), inputmode: "decimal",
        "aria-label": (tw.exact_value || "{name}").split("{name}").join(name) });
      slider.addEventListener("input", function () {
        self.setParam(name, Number(slider.value), slider);
      });
      function applyTyped() {
        var c = core.coerce(name, text.value, config.ranges, config.baseline);
        self.showNotes(c.note ? [c.note] : []);
        self.setParam(name, c.value);
        text.value = String(c.value);
      }
      text.addEventListener("change", applyTyped);
      // Arrow keys step the box by the slider's step; apply at once, as a slider does.
      text.addEventListener("keyup", function (e) {
        if (e.key === "ArrowUp" || e.key === "ArrowDown") applyTyped();
      });
      wrap.appendChild(label);
      wrap.appendChild(slider);
      wrap.appendChild(text);
      controls[name] = { range: slider, text: text };
      return wrap;
    }
  }

  /** Change one parameter (a slider move, a typed value, the checkbox) and redraw. */
  Lab.prototype.setParam = function (name, value, from) {
    this.state.params[name] = value;
    var c = this.controls[name];
    if (c.range && c.range !== from) c.range.value = String(value);
    if (c.text) c.text.value = String(value);
    if (c.box) c.box.checked = !!value;
    this.update();
  };

  Lab.prototype.setRow = function (row) {
    this.state.row = row;
    this.update();
  };

  /** Replace the whole state (buttons, links) and bring every control in line. */
  Lab.prototype.setAll = function (params, row) {
    this.state.params = copyParams(params);
    this.state.row = row;
    var self = this;
    core.PARAM_NAMES.forEach(function (name) {
      var c = self.controls[name], v = self.state.params[name];
      if (c.range) { c.range.value = String(v); c.text.value = String(v); }
      if (c.box) c.box.checked = !!v;
    });
    this.update();
  };

  Lab.prototype.showNotes = function (list) {
    var notes = this._parts.notes;
    while (notes.firstChild) notes.removeChild(notes.firstChild);
    list.forEach(function (text) { notes.appendChild(el("p", null, text)); });
    notes.hidden = list.length === 0;
  };

  /** Recompute everything from the state and redraw it. */
  Lab.prototype.update = function () {
    var p = this._parts, s = this.config.strings || {}, labStr = s.lab || {}, tokens = s.tokens || core.TOKENS;
    var state = this.state, result;
    p.rowInputs.forEach(function (r, i) { r.checked = i === state.row; });
    try {
      result = core.attentionFromParams(state.params);
    } catch (e) {
      p.errorBox.textContent = (labStr.error || "{message}").split("{message}").join(e.message);
      p.errorBox.hidden = false;
      return null;
    }
    p.errorBox.hidden = true;
    this.result = result;
    var masked = function (i, j) { return result.S[i][j] === -Infinity; };
    RESULT_TABLES.forEach(function (name) {
      var sc = core.colourScale(name, result);
      render.updateMatrix(p.handles[name], result[name], sc[0], sc[1],
        name === "S" || name === "A" ? masked : null, core.formatValue);
    });
    var msgs = core.messages(state.params, this.config.ranges, labStr);
    var key = msgs.join("\n");
    if (p.status.__key !== key) {
      p.status.__key = key;
      while (p.status.firstChild) p.status.removeChild(p.status.firstChild);
      msgs.forEach(function (m) { p.status.appendChild(el("p", null, m)); });
      p.status.hidden = msgs.length === 0;
    }
    var wt = (labStr.worked_title || "{tok}").split("{tok}").join(tokens[state.row]);
    if (p.workedTitle.textContent !== wt) p.workedTitle.textContent = wt;
    if (s.worked) render.renderWorked(p.worked, core.workedSteps(result, state.row, s.worked, tokens));
    return result;
  };

  Lab.prototype.linkUrl = function () {
    var base = window.location.href.split("#")[0].split("?")[0];
    return base + "?" + core.toQuery(this.state.params, this.state.row) + "#" + this.root.id;
  };

  /** 复制链接: put the state in the address bar, copy it, and show it in a text field. */
  Lab.prototype.copyLink = function (box, label, field) {
    var url = this.linkUrl();
    var tw = (this.config.strings && this.config.strings.twin) || {};
    try { window.history.replaceState(null, "", url); } catch (e) { /* file:// in some browsers */ }
    field.value = url;
    box.hidden = false;
    label.textContent = tw.link_manual || "";
    var done = function () { label.textContent = tw.link_copied || ""; };
    var manual = function () { field.focus(); field.select(); };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(url).then(done, manual);
    } else {
      manual();
    }
    return url;
  };

  function readConfig(root) {
    var script = root.querySelector("script[data-attention-lab-config]");
    if (!script) throw new Error("attention lab: missing data-attention-lab-config");
    return JSON.parse(script.textContent);
  }

  function start(root) {
    if (root.__attentionLab) return root.__attentionLab;
    var config = readConfig(root);
    var lab = new Lab(root, config);
    root.__attentionLab = lab;
    var link = core.fromQuery(window.location.search, lab.state.params, lab.state.row,
      config.ranges, config.baseline, config.strings);
    lab.setAll(link.params, link.row);
    lab.showNotes(link.notes.length ? [(config.strings.twin || {}).link_note_head || ""].concat(link.notes) : []);
    return lab;
  }

  function startAll() {
    var roots = document.querySelectorAll("[data-attention-lab]");
    for (var k = 0; k < roots.length; k++) {
      try {
        start(roots[k]);
      } catch (e) {
        // Say so on the page (the config may be what is broken, so no strings from it).
        var msg = el("p", { "class": "al-error", role: "alert" }, "attention lab: " + e.message);
        roots[k].appendChild(msg);
        if (window.console) window.console.warn(e);
      }
    }
  }

  window.AttentionLab = { start: start, startAll: startAll, Lab: Lab };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", startAll);
  else startAll();
})();
