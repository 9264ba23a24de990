/* F11 shapes lab (形状实验台) on the static site: its controls and its address (shapes.js).
 *
 * For every [data-shapes-lab] root: read its JSON config (<script data-shapes-lab-config>, made by
 * attention_lab.shapes.shapes_config), build the controls (shape numbers, self/cross, causal, pad,
 * the input tables X, Xs, Wq, Wk, Wv as tables of text boxes, token names, examples, copy link) and
 * hand them to the one view (render.js mountView, with shapeCaptions), which draws Q, K, V, S, A, O
 * and the worked text.  One state object (attention_lab/shapes.py's docstring); every change goes
 * through set() -> update(): attention.js generalAttention, view.update, the address.
 *
 * A shape change keeps every cell that remains; new cells start from config.defaults (Python's
 * shapes.default_value), new tokens from config.default_tokens.  state.causal is the reader's
 * causal box, applied in self mode only: cross mode hides the box (the source is given whole) and
 * going back to self brings it back as it was (Python's shapes.resized and compute, and the
 * Jupyter lab's box, do the same).  The address:
 * ?n=3&d_model=2&d_k=2&d_v=3&mode=cross&m=4&causal=0&pad=1&X=..&Xs=..&Wq=..&Wk=..&Wv=..&row=0&tok=..&src=..
 * (tables row by row, comma lists); a link that does not fit (a shape out of range, a table with
 * the wrong count, pad >= m...) is refused part by part with a note, and the nearest valid state shown.
 * Heads (issue 31): h = 2..4 adds &h=2 and &Wo=.. (Wq, Wk [d_model, h·d_k], Wv [d_model, h·d_v],
 * Wo [h·d_v, d_model]; attention.js multiHeadAttention); an address without h is one head, no Wo.
 */
(function () {
  "use strict";
  if (typeof window === "undefined" || typeof document === "undefined") return;
  var core = window.AttentionLabCore, render = window.AttentionLabRender;
  var TABLES = ["X", "Xs", "Wq", "Wk", "Wv", "Wo"], SHAPES = ["n", "m", "d_model", "d_k", "d_v", "h"];
  var count = 0;

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function fill(t, v) {
    t = String(t || "");
    Object.keys(v).forEach(function (k) { t = t.split("{" + k + "}").join(String(v[k])); });
    return t;
  }
  function clone(x) { return JSON.parse(JSON.stringify(x)); }
  function short(t) { t = String(t); return t.length > 24 ? t.slice(0, 24) + "…" : t; }

  /** (rows, cols) of input table `t`; m is the source side's (cross mode); h heads (shapes.table_shape). */
  function dims(t, s) {
    var h = s.h || 1;
    return { X: [s.n, s.d_model], Xs: [s.m, s.d_model], Wq: [s.d_model, h * s.d_k], Wk: [s.d_model, h * s.d_k],
      Wv: [s.d_model, h * s.d_v], Wo: [h * s.d_v, s.d_model] }[t];
  }
  /** Input table `t` is used (and shown, and in the address): Xs in cross mode, Wo with heads. */
  function used(t, s) { return (t !== "Xs" || s.mode === "cross") && (t !== "Wo" || s.h > 1); }
  /** Keys and values: m in cross mode, n in self mode. */
  function keysOf(s) { return s.mode === "cross" ? s.m : s.n; }

  /** The state brought to its shape: cells that remain keep their values, new ones take the
   *  defaults; tokens likewise; pad and row inside their new ranges. */
  function fit(s, config, kept) {
    var out = clone(s);
    kept = kept || { tables: {} };
    TABLES.forEach(function (t) {
      var d = dims(t, out), old = s.tables[t] || [], was = kept.tables[t] || [];
      out.tables[t] = [];
      for (var i = 0; i < d[0]; i++) {
        var row = [];
        for (var j = 0; j < d[1]; j++) {
          row.push(old[i] && old[i][j] !== undefined ? old[i][j]
            : was[i] && was[i][j] !== undefined ? was[i][j] : config.defaults[t][i][j]);
        }
        out.tables[t].push(row);
      }
    });
    function names(list, k, before, defaults) {
      list = (list || []).slice(0, k);
      while (list.length < k) list.push((before || [])[list.length] || defaults[list.length]);
      return list;
    }
    out.tokens = names(s.tokens, out.n, kept.tokens, config.default_tokens);
    out.source_tokens = names(s.source_tokens, out.m, kept.source_tokens, config.default_source_tokens);
    out.pad = Math.min(out.pad, keysOf(out) - 1);
    out.row = Math.min(out.row, out.n - 1);
    return out;
  }

  /** A token's name as typed: shapes.py coerce_token (control characters dropped, trimmed, an ASCII
   *  comma, the address's separator, made "，", at most 8 characters, an empty name back to its
   *  default), {value, note}. */
  function coerceToken(raw, fallback, ss) {
    var text = String(raw === null || raw === undefined ? "" : raw).replace(/[\u0000-\u001f\u007f-\u009f]/g, "").trim();
    if (!text) return { value: fallback, note: fill(ss.token_empty, { value: fallback }) };
    if (text.indexOf(",") >= 0) {
      var fixed = coerceToken(text.split(",").join("，"), fallback, ss);
      return { value: fixed.value, note: fixed.note || fill(ss.token_comma, { raw: text, value: fixed.value }) };
    }
    var chars = Array.from(text);
    if (chars.length <= 8) return { value: text, note: null };
    var value = chars.slice(0, 8).join(""), raw24 = chars.length > 24 ? chars.slice(0, 24).join("") + "…" : text;
    return { value: value, note: fill(ss.token_long, { max: 8, raw: raw24, value: value }) };
  }

  function compute(s) {
    var t = s.tables, source = s.mode === "cross" ? t.Xs : null, causal = s.mode === "self" && !!s.causal;
    if (s.h > 1) return core.multiHeadAttention(t.X, t.Wq, t.Wk, t.Wv, t.Wo, s.h, source, causal, s.pad);
    return core.generalAttention(t.X, t.Wq, t.Wk, t.Wv, source, causal, s.pad);
  }

  // ---------------------------------------------------------------- the address

  function flat(table) { return table.map(function (r) { return r.join(","); }).join(","); }

  function toQuery(s) {
    var parts = ["n=" + s.n];
    if (s.mode === "cross") parts.push("mode=cross", "m=" + s.m);
    parts.push("d_model=" + s.d_model, "d_k=" + s.d_k, "d_v=" + s.d_v);
    if (s.h > 1) parts.push("h=" + s.h);  // one head: no h, no Wo (the address as before heads)
    // Cross mode: only a causal box left off is written (causal=1 there would read as a mask).
    if (s.mode === "self" || !s.causal) parts.push("causal=" + (s.causal ? "1" : "0"));
    parts.push("pad=" + s.pad);
    TABLES.forEach(function (t) { if (used(t, s)) parts.push(t + "=" + flat(s.tables[t])); });
    parts.push("row=" + s.row);
    parts.push("tok=" + s.tokens.map(encodeURIComponent).join(","));
    if (s.mode === "cross") parts.push("src=" + s.source_tokens.map(encodeURIComponent).join(","));
    return parts.join("&");
  }

  /** A query string over the baseline: {state, notes, found}.  Everything is data: numbers parsed
   *  and checked, texts shown with textContent; whatever does not fit is said in a note. */
  function fromQuery(search, config) {
    var ss = config.strings.shapes || {}, notes = [], seen = {}, q = {};
    search = String(search || "").replace(/^\?/, "");
    var base = clone(config.examples.baseline);
    if (!search) return { state: base, notes: notes, found: false };
    if (search.length > 4000) return { state: base, notes: [config.strings.twin.link_too_long], found: true };
    search.split("&").forEach(function (pair) {
      if (!pair) return;
      var eq = pair.indexOf("="), key;
      try { key = decodeURIComponent(eq < 0 ? pair : pair.slice(0, eq)); } catch (e) { notes.push(ss.link_bad + short(pair)); return; }
      if (key === "highlight") return;
      if (seen[key]) notes.push(ss.link_repeated + short(key));
      seen[key] = true;
      q[key] = eq < 0 ? "" : pair.slice(eq + 1);
    });
    var known = SHAPES.concat(TABLES, ["mode", "causal", "pad", "row", "tok", "src"]);
    Object.keys(q).forEach(function (k) { if (known.indexOf(k) < 0) notes.push(ss.link_unknown + short(k)); });
    function text(k) { try { return decodeURIComponent(q[k].replace(/\+/g, " ")); } catch (e) { return q[k]; } }
    var s = base;
    if ("mode" in q) {
      if (text("mode") === "cross" || text("mode") === "self") s.mode = text("mode");
      else notes.push(fill(ss.link_mode, { raw: short(text("mode")) }));
    }
    SHAPES.forEach(function (k) {
      if (!(k in q)) { if (k === "m" && s.mode === "cross" && !("m" in q)) s.m = s.n; return; }
      if (k === "m" && s.mode === "self") { notes.push(ss.link_m_self); return; }
      var lim = config.limits[k], v = core.parseNumber(text(k));
      var ok = isFinite(v) ? Math.min(lim[1], Math.max(lim[0], Math.round(v))) : s[k];
      if (ok !== v) notes.push(fill(ss.link_shape, { name: k, min: lim[0], max: lim[1], raw: short(text(k)), value: ok }));
      s[k] = ok;
    });
    if (s.mode === "self") {
      s.m = s.n;
      if ("Xs" in q) { if (!("m" in q)) notes.push(ss.link_m_self); delete q.Xs; }
    }
    if (!(s.h > 1) && "Wo" in q) { notes.push(ss.link_wo_single); delete q.Wo; }
    if ("causal" in q) {
      var c = text("causal").trim().toLowerCase();
      if (["1", "true", "on", "yes"].indexOf(c) >= 0) {
        if (s.mode === "cross") notes.push(ss.link_causal_cross); else s.causal = true;
      } else if (["0", "false", "off", "no"].indexOf(c) >= 0) s.causal = false;
      else notes.push(ss.link_causal + short(text("causal")));
    }
    var pad = "pad" in q ? core.parseNumber(text("pad")) : 0;
    s.pad = 0;
    s = fit(s, config);
    if ("pad" in q) {
      var maxPad = keysOf(s) - 1, p = isFinite(pad) ? Math.min(maxPad, Math.max(0, Math.round(pad))) : 0;
      if (p !== pad) notes.push(fill(ss.link_pad, { max: maxPad, m: keysOf(s), raw: short(text("pad")), value: p }));
      s.pad = p;
    }
    TABLES.forEach(function (t) {
      if (!(t in q)) return;
      var d = dims(t, s), vals = text(t).split(",");
      if (vals.length !== d[0] * d[1]) {
        notes.push(fill(ss.link_count, { name: t, rows: d[0], cols: d[1], count: d[0] * d[1], got: vals.length }));
        return;
      }
      vals.forEach(function (raw, k) {
        var i = Math.floor(k / d[1]), j = k % d[1], name = t + "[" + i + "," + j + "]";
        var c = core.coerce(name, raw, config.ranges, {}, s.tables[t][i][j], config.strings);
        if (c.note) notes.push(c.note);
        s.tables[t][i][j] = c.value;
      });
    });
    [["tok", "tokens", s.n], ["src", "source_tokens", s.m]].forEach(function (x) {
      if (!(x[0] in q) || (x[0] === "src" && s.mode === "self")) return;
      // Decoded whole, then split: names hold no ASCII comma (coerceToken), so this also reads an
      // address that a script re-encoded (sphinx_highlight.js rewrites it with URLSearchParams: %2C, +).
      var list = text(x[0]).split(",");
      if (list.length !== x[2]) notes.push(fill(ss.link_tokens, { name: x[0], count: x[2], got: list.length }));
      else s[x[1]] = list.map(function (t, i) {
        var c = coerceToken(t, config[x[0] === "tok" ? "default_tokens" : "default_source_tokens"][i], ss);
        if (c.note) notes.push(c.note);
        return c.value;
      });
    });
    if ("row" in q) {
      var r = core.parseNumber(text("row"));
      if (r >= 0 && r < s.n && r % 1 === 0) s.row = r;
      else notes.push(fill(ss.link_row, { max: s.n - 1 }) + short(text("row")));
    }
    return { state: s, notes: notes.length ? [ss.link_note_head].concat(notes) : notes, found: true };
  }

  // ---------------------------------------------------------------- S, A and O on the screen

  /** How large S, A and O's cells are and how their strip wraps (S A O in one line; S A, then O;
   *  S, A, O one under another), for a strip `width` px wide with `room` px of the window's height
   *  for it; pure.  g: {width, room, n, m, dv, head (a row header's width in units of its font
   *  size), phone, step}.
   *  A cell is w px wide; its value is w / 3.3 px (six characters, "−0.294", fill it), its other
   *  texts (captions, headers, legends, marks) max(18 px, 0.62 of that; on a phone 14 px).
   *  The largest w from STRIP.max down to STRIP.min at which every table fits the width and the
   *  strip fits the room wins (fits: true; the results then stay on screen, sticky, with the
   *  controls under them).  When no legible w fits (6 x 6 on a projector), the fewest lines that
   *  the minimum allows, as large as those lines allow up to STRIP.tall (fits: false: the strip
   *  scrolls with the page).  Stepping through (step: true) the tables, their buttons and the
   *  stage's lines must share the screen: then w may go down to STRIP.stepMin (values 14 px, as
   *  on a phone) before the strip gives up and scrolls. */
  var STRIP = { min: 66, max: 160, tall: 80, stepMin: 47, phoneMin: 47, phoneMax: 80, gap: 13, gapY: 5 };
  function arrange(g) {
    var phone = !!g.phone, max = phone ? STRIP.phoneMax : STRIP.max;
    var min = phone ? STRIP.phoneMin : g.step ? STRIP.stepMin : STRIP.min;
    // What wraps: S, A, O; with g.h > 1 heads, groups of two tables one over the other (each head's
    // S over its A, then O over Y: shapes.css .al-group), each as wide as its widest table.
    var groups = g.h > 1 ? [] : [[g.m], [g.m], [g.dv]];
    for (var t = 0; g.h > 1 && t < g.h; t++) groups.push([g.m, g.m]);
    if (g.h > 1) groups.push([g.h * g.dv, g.dmodel]);
    var stacked = groups[0].length;
    function small(w) { return Math.max(phone ? 14 : 18, 0.62 * w / 3.3); }
    function widths(w) {
      var head = g.head * small(w) + 8, spacing = phone ? 1 : 3;  // shapes.css: the tables' border-spacing
      return groups.map(function (group) { return head + Math.max.apply(null, group) * (w + spacing) + 6; });
    }
    function lines(w) {
      var k = 0, used = 0;
      widths(w).forEach(function (x) { if (!k || used + STRIP.gap + x > g.width) { k++; used = x; } else used += STRIP.gap + x; });
      return k;
    }
    function fits(w) { return widths(w).every(function (x) { return x <= g.width; }); }
    function tall(w) {
      var t = small(w), cell = 1.05 * w / 3.3 + 1.15 * t + 8, k = lines(w);
      return k * (stacked * (g.n * cell + 3.6 * t + 14) + (stacked - 1) * STRIP.gapY) + (k - 1) * STRIP.gapY;
    }
    for (var w = max; w >= min; w--) if (fits(w) && tall(w) <= g.room) return { w: w, lines: lines(w), fits: true };
    min = phone ? STRIP.phoneMin : STRIP.min;
    // A group wider than the strip at the smallest legible size (4 heads' O): smaller, down to a phone's.
    while (min > STRIP.phoneMin && !fits(min)) min--;
    var k = lines(min);
    for (w = Math.min(max, STRIP.tall); w > min; w--) if (fits(w) && lines(w) <= k) break;
    return { w: w, lines: lines(w), fits: false };
  }

  /** Keeps one lab's strip arranged (arrange) for its shape, its width and the window's height:
   *  sets --al-w (px) on the strip, data-sao-fit ("screen" | "scroll") and data-sao-lines on the lab's root.
   *  The room for the strip is the window's height less the sticky top, the rest of the results
   *  (the buttons, the explanation, the notes; stepping through, the stage's lines instead of the
   *  explanation) and, when not stepping, STRIP_CONTROLS of the window for the controls under them.
   *  fit(n, m, dv, names) after every redraw reads nothing from the page unless something around
   *  the strip changed: the strip's width is kept from a ResizeObserver (read once at the start), a
   *  row header's width (in units of its font) only when the widest row name changes (a rename, an
   *  example), the rest of the results only when the notes, the step, the layout or the window
   *  change, so a shape change is sized in the same task and drawn with one layout.  A size change
   *  (the strip's width, the window, the layout) refits in the next animation frame; entering or
   *  leaving the step-through (the view's data-step) at once, and then the results are brought
   *  into view whole if they fit. */
  var STRIP_CONTROLS = 0.25;
  function StripFitter(root) {
    var self = this;
    this.root = root;
    this.sao = null;
    this.width = 0;
    this.names = null;
    this.key = null;
    this.around = null;
    this.args = null;
    this.frame = 0;
    this.resized = function () {
      if (self.frame || !self.args) return;
      self.frame = requestAnimationFrame(function () { self.frame = 0; self.fit.apply(self, self.args); });
    };
    this.observer = typeof ResizeObserver === "undefined" ? null : new ResizeObserver(function (entries) {
      var w = entries[entries.length - 1].contentRect.width;
      if (Math.abs(w - self.width) > 0.5) { self.width = w; self.resized(); }
    });
    window.addEventListener("resize", this.resized);
    if (typeof MutationObserver !== "undefined") new MutationObserver(function () {
      if (!self.args) return;
      self.fit.apply(self, self.args);
      if (self.stepping) self.show();
    }).observe(root, { attributes: true, attributeFilter: ["data-step"] });
  }
  /** The results whole on the screen (after the step-through starts), when they fit there. */
  StripFitter.prototype.show = function () {
    var results = this.root.querySelector(".al-results");
    if (!results || this.root.getAttribute("data-sao-fit") !== "screen") return;
    var r = results.getBoundingClientRect(), top = parseFloat(getComputedStyle(results).top) || 0;
    // (Chromium's scrollIntoView leaves a sticky box where it is: the window is scrolled by hand.)
    if (r.top < top - 1 || r.bottom > window.innerHeight + 1) window.scrollBy({ top: r.top - top, behavior: "instant" });
  };
  /** The row name that makes the widest header (a CJK character counts 1, anything else 0.6). */
  function widest(names) {
    var best = "", most = -1;
    (names || []).forEach(function (t) {
      var w = 0;
      Array.from(String(t)).forEach(function (c) { w += c.charCodeAt(0) > 0x2e7f ? 1 : 0.6; });
      if (w > most) { most = w; best = String(t); }
    });
    return best;
  }
  StripFitter.prototype.fit = function (n, m, dv, names, h, dmodel) {
    this.args = [n, m, dv, names, h, dmodel];
    var root = this.root, sao = root.querySelector(".al-sao");
    if (!sao) return null;
    if (sao !== this.sao) {
      this.sao = sao;
      this.width = 0;
      this.key = null;  // a new strip has no cell width yet
      if (this.observer) this.observer.observe(sao);
    }
    if (!this.width) this.width = sao.clientWidth;  // once; then the observer's
    var layout = root.getAttribute("data-layout");
    names = widest(names);
    if (names !== this.names || layout !== this.layout) {  // other row headers, or restyled
      var th = sao.querySelector("th.al-row");
      if (!th || !this.width) return null;
      this.head = th.offsetWidth / (parseFloat(getComputedStyle(th).fontSize) || 16);
      this.names = names;
      this.layout = layout;
    }
    var step = root.getAttribute("data-step");
    this.stepping = !!step && step !== "0";
    var results = sao.parentNode, notes = root.querySelector("[data-lab-notes]"), lines = root.querySelector("[data-lab-stage-lines]");
    if (this.stepping && lines) {  // the stage lines' box as tall as the tallest stage's: no table moves between stages
      var most = 0, per = {}, worked = root.querySelectorAll("[data-lab-worked] > [data-stage]:not(.al-worked-head)");
      for (var k = 0; k < worked.length; k++) {
        var st = worked[k].getAttribute("data-stage");
        per[st] = (per[st] || 0) + 1;
        if (per[st] > most) most = per[st];
      }
      var mh = most * 1.45 + "em";
      if (lines.style.minHeight !== mh) lines.style.minHeight = mh;
    }
    var around = [layout, this.width, window.innerHeight, notes ? notes.childElementCount : 0, this.stepping,
      lines ? lines.style.minHeight : ""].join("|");
    if (around !== this.around) {  // the results less the strip: buttons, explanation, notes (stage lines)
      this.around = around;
      this.rest = results.offsetHeight - sao.offsetHeight;
      this.top = parseFloat(getComputedStyle(results).top) || 0;
    }
    var H = window.innerHeight, room = H - this.top - this.rest - (this.stepping ? 0 : STRIP_CONTROLS * H) - 4;
    var key = [n, m, dv, this.width, room, this.head, layout, this.stepping, h, dmodel].join("|");
    if (key === this.key) return null;
    this.key = key;
    var out = arrange({ width: this.width, room: room, n: n, m: m, dv: dv, head: this.head, h: h || 1, dmodel: dmodel,
      phone: layout === "phone", step: this.stepping });
    // On the strip, not the root: only the strip's cells use it, and a custom property changed on the
    // root restyles every element of the lab (4,000 at h = 4, 6x6: 12 ms of a shape change).
    sao.style.setProperty("--al-w", out.w + "px");
    root.setAttribute("data-sao-fit", out.fits ? "screen" : "scroll");
    root.setAttribute("data-sao-lines", String(out.lines));
    return out;
  };

  // ---------------------------------------------------------------- the lab

  function ShapesLab(root, config) {
    var self = this, str = config.strings, ss = str.shapes || {};
    var uid = "as" + (++count);
    if (!root.id) root.id = count === 1 ? "shapes-lab" : "shapes-lab-" + count;
    this.root = root;
    this.config = config;
    this.first = count === 1;
    this.notes = [];
    root.classList.add("al-lab", "al-shapes");
    var fallback = root.querySelector("[data-attention-lab-fallback]");
    if (fallback) root.removeChild(fallback);
    var head = el("div", { "class": "al-head" });
    head.appendChild(el("p", { "class": "al-title" }, ss.title));
    head.appendChild(el("p", { "class": "al-hint" }, ss.hint));
    root.appendChild(head);

    var panel = this.panel = el("div", { "class": "al-controls" });
    // Shapes and masks.
    var shapeBox = el("fieldset", { "class": "al-fieldset al-shape" });
    shapeBox.appendChild(el("legend", null, ss.shape_legend));
    var inputs = this.inputs = {};
    SHAPES.concat(["pad"]).forEach(function (k) {
      var id = uid + "-" + k, wrap = el("div", { "class": "al-shape-field", "data-lab-source": k });
      var lim = k === "pad" ? [0, 5] : config.limits[k];
      var input = el("input", { type: "number", id: id, "data-param": k, min: String(lim[0]), max: String(lim[1]),
        step: "1", inputmode: "numeric" });
      input.addEventListener("change", function () {
        // shapes.py coerce_shape's rule and notes: an integer in the limits, else refused or moved, said.
        var limits = k === "pad" ? [0, keysOf(self.state) - 1] : lim;
        var c = core.coerceShape(k, input.value, limits, self.state[k], ss);
        self.set(k, c.value, c.note);
      });
      wrap.appendChild(el("label", { "for": id }, ss[k]));
      wrap.appendChild(input);
      shapeBox.appendChild(wrap);
      inputs[k] = { input: input, wrap: wrap };
    });
    var modeBox = el("div", { "class": "al-mode", role: "radiogroup", "aria-label": ss.mode });
    this.modeInputs = ["self", "cross"].map(function (mode) {
      var id = uid + "-mode-" + mode, radio = el("input", { type: "radio", name: uid + "-mode", id: id, value: mode, "data-param": "mode" });
      radio.addEventListener("change", function () { if (radio.checked) self.set("mode", mode); });
      var label = el("label", { "for": id, "class": "al-radio" });
      label.appendChild(radio);
      label.appendChild(document.createTextNode(" " + ss[mode]));
      modeBox.appendChild(label);
      return radio;
    });
    shapeBox.insertBefore(modeBox, inputs.m.wrap);
    var causal = el("input", { type: "checkbox", id: uid + "-causal", "data-param": "causal" });
    causal.addEventListener("change", function () { self.set("causal", causal.checked); });
    var causalLabel = el("label", { "for": uid + "-causal", "class": "al-check", "data-lab-source": "causal" });
    causalLabel.appendChild(causal);
    causalLabel.appendChild(document.createTextNode(" " + ss.causal));
    shapeBox.insertBefore(causalLabel, inputs.pad.wrap);
    this.causal = { box: causal, label: causalLabel };
    this.sqrtNote = shapeBox.appendChild(el("p", { "class": "al-shape-note" }));
    panel.appendChild(shapeBox);

    // Examples and the link: with the step and predict buttons, over S, A and O (the view's
    // toolbar), so a class's buttons are on the first screen with the tables and a tapped example
    // has its result right under it (a phone).  The copied link lies over the tables (it moves
    // nothing) until ×, Esc, a press elsewhere or the next change.
    var ex = this.actions = el("div", { "class": "al-shape-actions", role: "group", "aria-label": ss.examples_legend });
    Object.keys(config.examples).forEach(function (k) {
      var b = el("button", { type: "button", "class": "al-button", "data-lab-example": k }, (ss.examples || {})[k] || k);
      b.addEventListener("click", function () { self.notes = []; self.replace(clone(config.examples[k])); self.reveal(); });
      ex.appendChild(b);
    });
    var copy = el("button", { type: "button", "class": "al-button al-copy", "data-lab-action": "copy_link" }, ss.copy_link);
    ex.appendChild(copy);
    var linkBox = el("div", { "class": "al-linkbox" });
    linkBox.hidden = true;
    var linkLabel = el("label", { "for": uid + "-link" }, str.twin.link_manual);
    var linkField = el("input", { type: "text", id: uid + "-link", readonly: "", "class": "al-link", "data-lab-link": "" });
    var linkClose = el("button", { type: "button", "class": "al-link-close", "aria-label": str.twin.link_close || "×" }, "×");
    linkBox.appendChild(linkLabel);
    linkBox.appendChild(linkField);
    linkBox.appendChild(linkClose);
    ex.appendChild(linkBox);
    var closeLink = this.closeLink = function () {
      linkBox.hidden = true;
      self.linkQuery = null;
      document.removeEventListener("pointerdown", outside, true);
    };
    var outside = function (e) { if (!linkBox.contains(e.target) && e.target !== copy) closeLink(); };
    linkClose.addEventListener("click", function () { closeLink(); copy.focus(); });
    linkBox.addEventListener("keydown", function (e) { if (e.key === "Escape") { e.preventDefault(); closeLink(); copy.focus(); } });
    copy.addEventListener("click", function () {
      var url = window.location.href.split("#")[0].split("?")[0] + "?" + toQuery(self.state) + "#" + root.id;
      try { window.history.replaceState(window.history.state, "", url); } catch (e) { /* file:// */ }
      linkField.value = url;
      linkBox.hidden = false;
      self.linkQuery = toQuery(self.state);
      document.addEventListener("pointerdown", outside, true);
      linkLabel.textContent = str.twin.link_manual;
      var p = null;
      try { p = navigator.clipboard && window.isSecureContext && navigator.clipboard.writeText(url); } catch (e) { p = null; }
      var manual = function () { linkField.focus(); linkField.select(); };
      if (p && typeof p.then === "function") p.then(function () { linkLabel.textContent = str.twin.link_copied; }, manual); else manual();
    });

    // On paper the shape controls are left out: one line lists the shapes, the mode and the masks.
    this.printParams = panel.appendChild(el("p", { "class": "al-print-params", "data-lab-print-params": "" }));

    // The input tables (rebuilt when their shape changes).
    this.tableBoxes = {};
    TABLES.forEach(function (t) {
      var fs = el("fieldset", { "class": "al-fieldset al-input-table", "data-input-table": t });
      fs.appendChild(el("legend"));
      panel.appendChild(fs);
      self.tableBoxes[t] = { box: fs, key: null };
    });
    panel.addEventListener("change", function (e) {
      var t = e.target;
      if (t.hasAttribute("data-param-text")) self.typed(t.getAttribute("data-param-text"), t.value);
      else if (t.hasAttribute("data-token")) self.rename(t.getAttribute("data-token"), Number(t.getAttribute("data-i")), t.value);
    });
    panel.addEventListener("keydown", function (e) {
      var t = e.target;
      if ((e.key !== "ArrowUp" && e.key !== "ArrowDown") || !t.hasAttribute || !t.hasAttribute("data-param-text")) return;
      e.preventDefault();
      var name = t.getAttribute("data-param-text"), tab = name.split("[")[0], r = config.ranges[tab];
      var ij = name.match(/\d+/g).map(Number), v = self.state.tables[tab][ij[0]][ij[1]];
      v = Math.min(r.max, Math.max(r.min, Number((v + (e.key === "ArrowUp" ? 1 : -1) * r.step).toFixed(10))));
      self.notes = [];
      self.state.tables[tab][ij[0]][ij[1]] = v;
      self.update(true);
    });

    // The view gets no controls of its own to lay out (it would put its buttons, explanation and
    // notes under them, beside the tables: the 2x2 lab's wide layout): here the results are on top
    // with their buttons and the stage's lines, and the controls, first for Tab, go under them.
    // layoutAtMount: the first update() fits S, A and O to the layout the first paint shows.
    this.view = render.mountView(root, { strings: str, colours: config.colours, core: core, sourceRoot: panel,
      shapeCaptions: true, layoutAtMount: true, onRow: function (i) { self.state.row = i; self.update(); },
      // A point of the plane (d_model = d_k = d_v = 2) dragged or moved with the arrow keys: that row
      // of X (or Xs), snapped and clamped by the view to the boxes' step and range.
      ranges: config.ranges, onPoint: function (table, i, v, settling) {
        var row = self.state.tables[table] && self.state.tables[table][i];
        if (!row) return;
        self.notes = [];
        row[0] = v[0];
        row[1] = v[1];
        self.update(!!settling);
      },
      onLayout: function () { if (self.fitter) self.fitter.resized(); } });
    var wrap = root.querySelector(".al-view");
    wrap.insertBefore(panel, wrap.firstChild);
    root.querySelector(".al-toolbar").appendChild(ex);
    this.fitter = new StripFitter(root);
  }

  /** After an example: the tables in view.  When S, A and O are not all on the screen (stacked on
   *  a phone, or the page scrolled), the page scrolls so the strip starts under the sticky top. */
  ShapesLab.prototype.reveal = function () {
    var sao = this.root.querySelector(".al-sao"), results = this.root.querySelector(".al-results");
    if (!sao || !results || !sao.getClientRects().length) return;
    var top = parseFloat(getComputedStyle(results).top) || 0, r = sao.getBoundingClientRect();
    if (r.top >= top - 1 && r.bottom <= window.innerHeight + 1) return;
    window.scrollBy({ top: r.top - top, behavior: "instant" });
  };

  /** One input table as a <table>: cells [data-matrix=X][data-row][data-col][data-value] holding
   *  text boxes [data-param-text="X[i,j]"]; X's and Xs's row headers hold the token names.  With
   *  heads, Wq, Wk, Wv name each head over its columns, and Wo over its rows' groups (data-head). */
  ShapesLab.prototype.drawTable = function (t) {
    var s = this.state, ss = this.config.strings.shapes, hs = ss.heads || {}, d = dims(t, s), holder = this.tableBoxes[t];
    holder.box.hidden = !used(t, s);
    var per = s.h > 1 ? { Wq: s.d_k, Wk: s.d_k, Wv: s.d_v }[t] : 0, perRow = s.h > 1 && t === "Wo" ? s.d_v : 0;
    var key = [d, t === "X" ? s.tokens : t === "Xs" ? s.source_tokens : "", per, perRow].join("|");
    if (holder.key !== key) {
      holder.key = key;
      holder.box.firstChild.textContent = ss["table_" + t] + " [" + d[0] + ", " + d[1] + "]";
      // A shape change keeps the rows and cells that stay (their nodes: only what is new is styled
      // and laid out anew); the header rows are made anew, and the heads' marks set again.
      var table = holder.table, cells = holder.cells;
      if (!table) {
        table = holder.table = el("table", { "class": "al-table al-input" });
        cells = holder.cells = [];
        table.appendChild(el("thead"));
        table.appendChild(el("tbody"));
        holder.box.appendChild(table);
      }
      var mark = render.markHead;  // a head's columns (Wo: rows), and where the next head begins
      var head = el("thead");
      if (per) {
        var band = head.appendChild(el("tr"));
        band.appendChild(el("td", { "class": "al-corner" }));
        for (var h = 0; h < s.h; h++) band.appendChild(mark(el("th", { "class": "al-col al-head-name", scope: "colgroup",
          colspan: String(per) }, fill(hs.col_head, { t: h })), h * per, per));
      }
      var hr = head.appendChild(el("tr"));
      hr.appendChild(el("td", { "class": "al-corner" }));
      for (var j = 0; j < d[1]; j++) hr.appendChild(mark(el("th", { "class": "al-col", scope: "col" }, String(j)), j, per));
      table.replaceChild(head, table.firstChild);
      var body = table.lastChild;
      while (cells.length > d[0]) { body.removeChild(body.lastChild); cells.pop(); }
      for (var i = 0; i < d[0]; i++) {
        var tr = body.children[i], th;
        if (!tr) {
          tr = body.appendChild(el("tr"));
          th = tr.appendChild(el("th", { "class": "al-row", scope: "row" }));
          if (t === "X" || t === "Xs") {
            th.appendChild(el("input", { type: "text", "class": "al-token", "data-token": t === "X" ? "tokens" : "source_tokens",
              "data-i": String(i), maxlength: "8", "aria-label": fill(ss.token_label, { i: i }) }));
          } else th.textContent = String(i);
          cells.push([]);
        }
        th = tr.firstChild;
        mark(tr, i, perRow);
        var title = perRow && i % perRow === 0 ? fill(hs.col_head, { t: i / perRow }) : null;  // Wo's rows: head (i div d_v)'s outputs
        if (th.getAttribute("title") !== title) { if (title === null) th.removeAttribute("title"); else th.setAttribute("title", title); }
        if (t === "X" || t === "Xs") {
          var token = (t === "X" ? s.tokens : s.source_tokens)[i];
          if (th.firstChild.value !== token) th.firstChild.value = token;
        }
        var row = cells[i];
        while (row.length > d[1]) tr.removeChild(row.pop().td);
        row.forEach(function (c, k) { mark(c.td, k, per); });
        for (j = row.length; j < d[1]; j++) {
          var name = t + "[" + i + "," + j + "]";
          var td = tr.appendChild(mark(el("td", { "class": "al-in", "data-matrix": t, "data-row": String(i), "data-col": String(j),
            "data-lab-source": name }), j, per));
          var input = td.appendChild(el("input", { type: "text", "class": "al-number", "data-param-text": name, inputmode: "decimal",
            autocomplete: "off", spellcheck: "false", "aria-label": fill(ss.cell_label, { table: t, i: i, j: j }) }));
          row.push({ td: td, input: input });
        }
      }
    }
    var values = s.tables[t];
    holder.cells.forEach(function (row, i) {
      row.forEach(function (c, j) {
        var v = values[i][j];
        if (c.td.getAttribute("data-value") !== String(v)) c.td.setAttribute("data-value", String(v));
        if (document.activeElement !== c.input || c.input.value !== String(v)) {
          if (c.input.value !== String(v)) c.input.value = String(v);
        }
      });
    });
  };

  ShapesLab.prototype.typed = function (name, raw) {
    var tab = name.split("[")[0], ij = name.match(/\d+/g).map(Number);
    var c = core.coerce(name, raw, this.config.ranges, {}, this.state.tables[tab][ij[0]][ij[1]], this.config.strings);
    this.notes = c.note ? [c.note] : [];
    this.cell(tab, ij[0], ij[1], c.value);
  };

  ShapesLab.prototype.cell = function (tab, i, j, v) {
    this.state.tables[tab][i][j] = v;
    this.update();
  };

  ShapesLab.prototype.rename = function (list, i, text) {
    var c = this.config, fallback = (list === "tokens" ? c.default_tokens : c.default_source_tokens)[i];
    var t = coerceToken(text, fallback, c.strings.shapes || {});
    this.notes = t.note ? [t.note] : [];
    this.state[list][i] = t.value;
    this.tableBoxes[list === "tokens" ? "X" : "Xs"].key = null;  // the box shows the name kept
    this.update();
  };

  /** A shape, mode, causal or pad change: the state refitted (cells that remain keep their values). */
  ShapesLab.prototype.set = function (key, value, note) {
    this.notes = note ? [note] : [];
    this.state[key] = value;
    this.state = fit(this.state, this.config, this.kept);
    this.update();
  };

  ShapesLab.prototype.replace = function (state) {
    this.kept = null;  // another state altogether: nothing of the old one comes back
    this.state = fit(state, this.config);
    this.update();
  };

  /** Every cell and name the reader has had, by position: a smaller shape hides rows and columns,
   *  the shape grown again brings them back (as the Jupyter lab, whose controls keep every cell). */
  ShapesLab.prototype.keep = function () {
    var s = this.state, kept = this.kept || (this.kept = { tables: {}, tokens: [], source_tokens: [] });
    TABLES.forEach(function (t) {
      var to = kept.tables[t] || (kept.tables[t] = []);
      s.tables[t].forEach(function (row, i) {
        var r = to[i] || (to[i] = []);
        row.forEach(function (v, j) { r[j] = v; });
      });
    });
    s.tokens.forEach(function (name, i) { kept.tokens[i] = name; });
    s.source_tokens.forEach(function (name, i) { kept.source_tokens[i] = name; });
  };

  /** Recompute from the state, redraw the controls that differ and the view; write the address (now,
   *  or with `later` when the value is still moving: an arrow key held, a point being dragged). */
  ShapesLab.prototype.update = function (later) {
    var s = this.state, ss = this.config.strings.shapes, self = this;
    this.keep();
    SHAPES.concat(["pad"]).forEach(function (k) {
      var c = self.inputs[k];
      if (c.input.value !== String(s[k])) c.input.value = String(s[k]);
    });
    this.inputs.pad.input.max = String(keysOf(s) - 1);
    this.inputs.m.wrap.hidden = s.mode !== "cross";
    this.modeInputs.forEach(function (r) { r.checked = r.value === s.mode; });
    this.causal.box.checked = !!s.causal;
    this.causal.label.hidden = s.mode === "cross";  // kept as it is for self mode; the note says why
    TABLES.forEach(function (t) { self.drawTable(t); });
    var notes = this.notes.slice();
    var result;
    try {
      result = compute(s);
    } catch (e) {
      notes.push(fill(ss.error, { message: core.errorText(e, this.config.strings) }));
      if (this.shown) this.view.update(Object.assign({}, this.shown, { notes: notes }));
      return null;
    }
    this.result = result;
    var hs = ss.heads || {}, widths = { d_k: s.d_k, d_v: s.d_v, hdk: s.h * s.d_k, hdv: s.h * s.d_v, d_model: s.d_model, h: s.h };
    var sq = fill(s.h > 1 ? hs.sqrt_note : ss.sqrt_note, widths);
    if (this.sqrtNote.textContent !== sq) this.sqrtNote.textContent = sq;
    var pp = fill(ss.print_params, { n: s.n, m: keysOf(s), d_model: s.d_model, d_k: s.d_k, d_v: s.d_v, pad: s.pad,
      mode: ss[s.mode], causal: s.causal && s.mode === "self" ? ss.print_causal_on : ss.print_causal_off }) +
      (s.h > 1 ? fill(ss.print_heads, widths) : "");
    if (this.printParams.textContent !== pp) this.printParams.textContent = pp;
    if (s.mode === "cross") notes.push(ss.causal_cross);
    // Heads whose widths do not add up to d_model: allowed here, not in nn.MultiheadAttention.
    if (s.h > 1 && (s.h * s.d_k !== s.d_model || s.h * s.d_v !== s.d_model)) notes.push(fill(hs.width_note, widths));
    var keyTokens = s.mode === "cross" ? s.source_tokens : s.tokens;
    this.shown = { params: {}, result: result, row: s.row, tables: { X: s.tables.X, Xs: s.mode === "cross" ? s.tables.Xs : null,
      Wq: s.tables.Wq, Wk: s.tables.Wk, Wv: s.tables.Wv, Wo: s.h > 1 ? s.tables.Wo : null }, tokens: s.tokens, keyTokens: keyTokens,
      key: toQuery(s), notes: notes };
    this.view.update(this.shown);
    this.fitter.fit(s.n, keysOf(s), s.d_v, s.tokens, s.h, s.d_model);
    if (this.linkQuery && this.linkQuery !== this.shown.key) this.closeLink();  // the link box follows the state
    if (later) this.urlLater(); else this.syncUrl();
    return result;
  };

  /** The address follows the state once a value settles: URL_WAIT ms after the last change (keys held
   *  down, a point dragged), or at once when the page is left, so a reload or a bookmark has it. */
  var URL_WAIT = 300;
  ShapesLab.prototype.urlLater = function () {
    if (!this.first) return;
    var self = this;
    if (!this.urlFlush) {
      this.urlFlush = function () { if (self.urlTimer) self.syncUrl(); };
      window.addEventListener("pagehide", this.urlFlush);
      document.addEventListener("visibilitychange", this.urlFlush);
    }
    clearTimeout(this.urlTimer);
    this.urlTimer = setTimeout(function () { self.syncUrl(); }, URL_WAIT);
  };

  ShapesLab.prototype.syncUrl = function () {
    clearTimeout(this.urlTimer);
    this.urlTimer = null;
    if (!this.first || !window.history || !window.history.replaceState) return;
    var loc = window.location, query = this.shown ? this.shown.key : toQuery(this.state);
    if (this.baseQuery === undefined) this.baseQuery = toQuery(fit(this.config.examples.baseline, this.config));
    var atBase = query === this.baseQuery;
    var keep = loc.search.replace(/^\?/, "").split("&").filter(function (p) { return /^highlight=/.test(p); });
    var q = (atBase ? [] : [query]).concat(keep).join("&");
    var url = loc.pathname + (q ? "?" + q : "") + loc.hash;
    if (url === loc.pathname + loc.search + loc.hash) return;
    try { window.history.replaceState(window.history.state, "", url); } catch (e) { /* file:// */ }
  };

  function start(root) {
    if (root.__attentionLab) return root.__attentionLab;
    var script = root.querySelector("script[data-shapes-lab-config]");
    var config = JSON.parse(script.textContent);
    var lab = new ShapesLab(root, config);
    root.__attentionLab = lab;
    var link = lab.first ? fromQuery(window.location.search, config) : { state: clone(config.start), notes: [] };
    lab.notes = link.notes;
    lab.replace(link.found ? link.state : clone(config.start));
    return lab;
  }

  /** One Chinese sentence in the fallback's place, the lab left unbuilt (app.js's showFault does so
   *  for the 2×2 lab). */
  function showFault(root, text) {
    root.__attentionLab = true;
    root.style.minHeight = "0";  // no lab comes: the page's text follows the sentence (f11-site.css holds a screen)
    var fb = root.querySelector("[data-attention-lab-fallback]");
    if (!fb) return;
    fb.textContent = text;
    fb.className = "al-fallback al-error";
    fb.setAttribute("role", "alert");
  }

  function startAll() {
    var roots = document.querySelectorAll("[data-shapes-lab]");
    for (var k = 0; k < roots.length; k++) {
      var root = roots[k], fb = root.querySelector("[data-attention-lab-fallback]");
      var failed = (fb && fb.getAttribute("data-failed")) || "";
      if (root.__attentionLab || !root.querySelector("script[data-shapes-lab-config]")) continue;
      try {
        if (!core || !render) throw new Error("attention.js / render.js");
        // An older browser: say what it lacks (the 2×2 lab's check and sentence), build nothing.
        var lacks = core.browserLacks();
        if (lacks.length) {
          var faults = (JSON.parse(root.querySelector("script[data-shapes-lab-config]").textContent).strings || {}).faults;
          showFault(root, fill((faults || {}).browser_lacks || failed, { what: lacks.join("、") }));
          continue;
        }
        start(root);
      } catch (e) {
        showFault(root, failed + " (" + e.message + ")");
        if (window.console) window.console.warn(e);
      }
    }
  }

  window.AttentionShapesLab = { start: start, startAll: startAll, fromQuery: fromQuery, toQuery: toQuery, fit: fit,
    arrange: arrange, StripFitter: StripFitter, coerceToken: coerceToken };
  startAll();
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", startAll);
})();
