/* F11 shapes lab in Jupyter: the anywidget glue (shapes_widget.js).
 *
 * attention_lab.shapes_lab.ShapesLabView ships attention.js + render.js + shapes.js (for its
 * StripFitter: S, A and O sized and wrapped as on the site) + jupyter_glue.js + this file as one
 * ES module, as widget.js does for the 2x2 lab.  The trait "controls" holds the ipywidgets models
 * (sliders n, m, d_model, d_k, d_v, h, pad; the self/cross toggle; the causal box; one number box
 * per cell of X, Xs, Wq, Wk, Wv, Wo at the largest shape).  h > 1 heads: attention.js
 * multiHeadAttention (Wq, Wk [d_model, h·d_k], Wv [d_model, h·d_v], Wo [h·d_v, d_model]), as the site.  Every change is read here from those
 * models and drawn at once with attention.js generalAttention and render.js (no round trip);
 * the kernel receives the same values and keeps lab.result.  A shape change also sets the lab
 * box's data-rows-* / data-cols-* / data-mode attributes, which hide the cells outside the shape
 * (the rules are in attention_lab/shapes_lab.py CSS).
 *
 * Other traits: "config" (attention_lab.shapes.shapes_config), "tokens", "source_tokens" (six
 * names each), "row" (the row explained), "kernel_notes" ([{name, value, text}]).  domClass,
 * rounded, controlModels, sourcesIn, changeScheduler and sliderKeys come from jupyter_glue.js.
 */

var TABLES = ["X", "Xs", "Wq", "Wk", "Wv", "Wo"], SHAPES = ["n", "m", "d_model", "d_k", "d_v", "h"];

function dims(t, s) {
  var h = s.h || 1;
  return { X: [s.n, s.d_model], Xs: [s.m, s.d_model], Wq: [s.d_model, h * s.d_k], Wk: [s.d_model, h * s.d_k],
    Wv: [s.d_model, h * s.d_v], Wo: [h * s.d_v, s.d_model] }[t];
}

/** The state the controls' values mean: attention_lab.shapes_lab.state_from_values. */
function stateOf(value, tokens, sourceTokens, row) {
  var s = {};
  SHAPES.forEach(function (k) { s[k] = Math.round(Number(value(k))); });
  s.mode = value("mode") === "cross" ? "cross" : "self";
  if (s.mode === "self") s.m = s.n;
  s.causal = !!value("causal");  // the box: applied in self mode only (hidden in cross mode, kept)
  s.pad = Math.max(0, Math.min(Math.round(Number(value("pad"))), s.m - 1));
  s.tables = {};
  TABLES.forEach(function (t) {
    var d = dims(t, s), table = [];
    for (var i = 0; i < d[0]; i++) {
      var r = [];
      for (var j = 0; j < d[1]; j++) r.push(rounded(Number(value(t + "[" + i + "," + j + "]"))));
      table.push(r);
    }
    s.tables[t] = table;
  });
  s.tokens = tokens.slice(0, s.n);
  s.source_tokens = sourceTokens.slice(0, s.m);
  s.row = Math.max(0, Math.min(row, s.n - 1));
  return s;
}

async function renderShapes({ model, el }) {
  const render = window.AttentionLabRender;
  const core = window.AttentionLabCore;
  const config = model.get("config") || {};
  const strings = config.strings || {};
  const ss = strings.shapes || {};
  const container = document.createElement("div");
  container.className = "attention-lab-jupyter al-lab al-shapes";
  el.appendChild(container);
  const models = await controlModels(model);
  const labBox = () => el.closest(".f11-shapes");
  const value = (name) => {
    const m = models[name];
    if (name === "mode") return m && m.get("index") === 1 ? "cross" : "self";
    return m ? m.get("value") : undefined;
  };

  const view = render.mountView(container, {
    strings: strings, colours: config.colours, core: core, shapeCaptions: true,
    // The lab's box sets the layout: the view's own wrappers take no box (attention_lab.shapes_lab
    // CSS: S, A, O first, then the ipywidgets controls, then the rest of the view).
    measure: () => labBox() || container,
    // Hovering a Q/K/V cell marks the number boxes it comes from (the controls carry dom_class names).
    findSources: sourcesIn(labBox),
    onRow: (i) => { model.set("row", i); model.save_changes(); redraw(); },
    onLayout: () => fitter.resized(),
    // A point of the plane (d_model = d_k = d_v = 2) dragged or moved with the arrow keys: that row
    // of X (or Xs) set on its number boxes' models, drawn at once.
    ranges: config.ranges,
    onPoint: (table, i, v) => {
      applying = true;
      try {
        setPointRow(models, table, i, v);
      } finally {
        applying = false;
      }
      redraw();
    },
  });
  const fitter = new window.AttentionShapesLab.StripFitter(container);

  // The shown shape: attributes on the lab's box hide the cells outside it; titles carry the shape.
  let shownKey = null;
  function showShape(s) {
    const b = labBox();
    if (!b) return;
    const key = JSON.stringify([s.n, s.m, s.d_model, s.d_k, s.d_v, s.h, s.mode]);
    if (key === shownKey) return;
    shownKey = key;
    b.setAttribute("data-mode", s.mode);
    b.setAttribute("data-heads", String(s.h));
    TABLES.forEach((t) => {
      const d = dims(t, s);
      b.setAttribute("data-rows-" + t, String(d[0]));
      b.setAttribute("data-cols-" + t, String(d[1]));
      const title = b.querySelector('[data-f11-title="' + t + '"]');
      if (title) title.textContent = (ss["table_" + t] || t) + " [" + d[0] + ", " + d[1] + "]";
    });
    const pad = models.pad;
    // pad leaves one key readable: the slider's range follows the keys (the reader's own change).
    if (pad && pad.get("max") !== s.m - 1) {
      pad.set("max", s.m - 1);
      if (pad.get("value") > s.m - 1) pad.set("value", s.m - 1);
      pad.save_changes();
    }
  }

  function notes(s) {
    const out = [];
    (model.get("kernel_notes") || []).forEach((n) => {
      if (n.name === null || n.name === undefined || value(n.name) === n.value) out.push(n.text);
    });
    if (s.mode === "cross") out.push(ss.causal_cross);
    // Heads whose widths do not add up to d_model: allowed here, not in nn.MultiheadAttention (as the site).
    if (s.h > 1 && (s.h * s.d_k !== s.d_model || s.h * s.d_v !== s.d_model)) {
      out.push(fillIn((ss.heads || {}).width_note,
        { d_k: s.d_k, d_v: s.d_v, hdk: s.h * s.d_k, hdv: s.h * s.d_v, d_model: s.d_model, h: s.h }));
    }
    return out;
  }
  function fillIn(t, v) {
    t = String(t || "");
    Object.keys(v).forEach((k) => { t = t.split("{" + k + "}").join(String(v[k])); });
    return t;
  }

  let shown = null;  // the last state drawn (kept on screen, with the error, when a state cannot be computed)
  function redraw() {
    const s = stateOf(value, model.get("tokens") || [], model.get("source_tokens") || [], model.get("row") || 0);
    showShape(s);
    let result;
    try {
      const t = s.tables;
      const source = s.mode === "cross" ? t.Xs : null, causal = s.mode === "self" && s.causal;
      result = s.h > 1 ? core.multiHeadAttention(t.X, t.Wq, t.Wk, t.Wv, t.Wo, s.h, source, causal, s.pad)
        : core.generalAttention(t.X, t.Wq, t.Wk, t.Wv, source, causal, s.pad);
    } catch (e) {
      const error = (ss.error || "{message}").split("{message}").join(core.errorText(e, strings));
      if (shown) view.update(Object.assign({}, shown, { notes: [error].concat(notes(s)) }));
      return;
    }
    view.update(shown = { params: {}, result: result, row: s.row,
      tables: { X: s.tables.X, Xs: s.mode === "cross" ? s.tables.Xs : null, Wq: s.tables.Wq, Wk: s.tables.Wk, Wv: s.tables.Wv,
        Wo: s.h > 1 ? s.tables.Wo : null },
      tokens: s.tokens, keyTokens: s.mode === "cross" ? s.source_tokens : s.tokens,
      key: JSON.stringify(s), notes: notes(s) });
    fitter.fit(s.n, s.m, s.d_v, s.tokens, s.h, s.d_model);
  }

  // The examples are ipywidgets Buttons (the kernel sets the same values after): set here on the
  // models at once, drawn once.
  let applying = false;
  const onButton = (e) => {
    const button = e.target instanceof Element ? e.target.closest("button") : null;
    const key = button && Object.keys(config.examples || {}).find((k) => button.classList.contains("f11-example-" + k));
    if (!key) return;
    const ex = config.examples[key];
    applying = true;
    try {
      const set = (name, v) => {
        const m = models[name];
        if (!m) return;
        const attr = name === "mode" ? "index" : "value";
        if (name === "mode") v = v === "cross" ? 1 : 0;
        if (m.get(attr) !== v) { m.set(attr, v); m.save_changes(); }
      };
      if (models.pad) { models.pad.set("max", 5); models.pad.save_changes(); }
      SHAPES.forEach((k) => set(k, ex[k]));
      set("mode", ex.mode); set("causal", !!ex.causal); set("pad", ex.pad);
      TABLES.forEach((t) => (ex.tables[t] || []).forEach((r, i) => r.forEach((v, j) => set(t + "[" + i + "," + j + "]", v))));
      const full = (list, defaults) => list.concat(defaults.slice(list.length, 6));
      model.set("tokens", full(ex.tokens, config.default_tokens));
      model.set("source_tokens", full(ex.source_tokens, config.default_source_tokens));
      model.set("row", ex.row);
      model.save_changes();
    } finally {
      applying = false;
    }
    redraw();
  };

  // Keys on a focused shape slider (n, m, d_model, d_k, d_v, h, p; jupyter_glue.js sliderKeys): ±1,
  // PgUp/PgDn ten (to an end here), Home/End the ends; handled here, as Notebook 7 takes the arrow
  // keys before ipywidgets' slider sees them.
  // The control an element belongs to (the class dom_class gave it), and a value set on its model
  // from here (drawn by redraw, not again by the change listener).
  const nameOf = (node) => Object.keys(models).find((n) => node.classList.contains(domClass(n)));
  const setOwn = (m, v) => {
    applying = true;
    try {
      m.set("value", v);
      m.save_changes();
    } finally {
      applying = false;
    }
  };
  const keyStep = (slider, k) => {
    const name = nameOf(slider);
    const m = name && models[name];
    if (!m || typeof m.get("min") !== "number" || typeof m.get("max") !== "number") return false;
    const lo = m.get("min"), hi = m.get("max"), now = Number(m.get("value"));
    const v = k === "min" ? lo : k === "max" ? hi : Math.min(hi, Math.max(lo, Math.round(now) + k));
    if (v !== now) setOwn(m, v);
    redraw();
    return true;
  };

  // A value typed into a cell's box is read as the site's shapes lab reads it: attention.js coerce
  // (its grammar: "−0.5", full-width digits, a decimal comma; a clamp or a refusal, each with the
  // site's note), on Enter or on leaving the box (its change event) and on ↑/↓ (PgUp/PgDn ten
  // steps), which then step from the typed value, as the site.  Capturing, on the lab's own box:
  // ipywidgets' Text never sees the raw text (it would hand it to the model as a string); the
  // number is set on the cell's model here and the note (or null) sent to the kernel, which shows
  // it while the cell holds that value (ShapesLab._on_view_msg).
  const CELL_KEYS = { ArrowUp: 1, ArrowDown: -1, PageUp: 10, PageDown: -10 };
  const cellOf = (t) => {
    const box = t instanceof HTMLInputElement ? t.closest(".f11-cell") : null;
    return box ? nameOf(box) : null;
  };
  const edited = new WeakSet();  // cell boxes typed into since their text was last taken
  const onCellInput = (e) => { if (cellOf(e.target)) edited.add(e.target); };
  const takeCell = (e) => {
    const t = e.target, name = cellOf(t), m = name && models[name];
    // (Enter too: the browser sends no change event for a text typed again as it was.)
    const k = e.type === "keydown" ? (e.key === "Enter" ? 0 : CELL_KEYS[e.key]) : 0;
    if (!m || (e.type === "keydown" && ((!k && e.key !== "Enter") || e.altKey || e.ctrlKey || e.metaKey))) return;
    e.stopPropagation();
    if (k) e.preventDefault();
    const now = Number(m.get("value")), typed = edited.has(t);
    edited.delete(t);
    const c = typed ? core.coerce(name, t.value, config.ranges, {}, now, strings) : { value: now, note: null };
    let v = rounded(c.value);
    if (k) {
      const r = config.ranges[core.tableOf(name)];
      v = rounded(Math.min(r.max, Math.max(r.min, Number((v + k * r.step).toFixed(10)))));
    }
    if (v !== now) setOwn(m, v);
    t.value = String(v);
    // Its note, or none (the value a note named typed again: that note goes, as on the site).
    if (typed) model.send({ typed: { name: name, value: v, text: c.note } });
    redraw();
  };

  redraw();
  const unlisten = listenOnBox(labBox, { click: onButton, change: takeCell, keydown: takeCell, input: onCellInput }, redraw);
  const unlistenKeys = sliderKeys(labBox, keyStep);
  // A change made here is drawn at once; the kernel's changes (an example: many controls) once the burst is over.
  const onChange = changeScheduler(redraw, () => applying);
  const listeners = [];
  const listen = (m, event) => { m.on(event, onChange); listeners.push([m, event]); };
  Object.keys(models).forEach((name) => listen(models[name], name === "mode" ? "change:index" : "change:value"));
  ["change:kernel_notes", "change:tokens", "change:source_tokens", "change:row"].forEach((e) => listen(model, e));
  return () => {
    listeners.forEach(([m, event]) => m.off(event, onChange));
    onChange.cancel();
    unlisten();
    unlistenKeys();
    if (view.destroy) view.destroy();
    if (container.parentNode) container.parentNode.removeChild(container);
  };
}

export default { render: renderShapes };
