/* F11 attention lab in Jupyter: the anywidget glue (widget.js).
 *
 * attention_lab.widget.LabView ships attention.js + render.js + this file as one ES module.
 * The first two are the website's own files (window.AttentionLabCore, window.AttentionLabRender).
 * Here we mount the website's view (render.js mountView) and feed it, as app.js does on the
 * site, from the controls' own values: the trait "controls" holds references to the ipywidgets
 * models (sliders, the mask box, the row toggle), read through the widget manager.  A slider
 * move changes its model in the browser first, so the view redraws at once with attention.js,
 * whatever the kernel's distance; the kernel receives the same value (ipywidgets sends it) for
 * notebook code.  One model: the controls' values; nothing else holds a copy.
 *
 * Traits (attention_lab/widget.py): "config" (once: names, ranges, d_k stops, strings),
 * "controls" ({name: "IPY_MODEL_<id>"}), "kernel_notes" (notes only the kernel knows:
 * [{name, value, text}]), "beside_px", "scroll_into_view".  domClass, rounded, setPointRow, controlModels,
 * sourcesIn and changeScheduler come from jupyter_glue.js (joined in before this file).
 */

async function renderLab({ model, el }) {
  const render = window.AttentionLabRender;
  const core = window.AttentionLabCore;
  const config = model.get("config") || {};
  const names = config.names || core.PARAM_NAMES;
  const strings = config.strings || {};
  const container = document.createElement("div");
  container.className = "attention-lab-jupyter";
  el.appendChild(container);
  const models = await controlModels(model);
  const labBox = () => el.closest(".f11-lab");

  // ipywidgets' readouts show negatives with the typographic minus ("−0.50") but read typed text
  // with parseFloat, which refuses it (and full-width digits, a decimal comma).  Before ipywidgets
  // reads a readout of this lab (Enter, or leaving it), its text is rewritten in the lab's number
  // grammar (attention.js parseNumber, as the site's boxes and attention_lab.params read it).
  // Listeners on this lab's own box only, in the capture phase (before ipywidgets' handlers).
  const tidy = (e) => {
    const t = e.target;
    if (!(t instanceof Element) || !t.matches(".widget-readout[contenteditable]")) return;
    if (e.type === "keydown" && e.key !== "Enter") return;
    const value = core.parseNumber(t.textContent || "");
    if (Number.isFinite(value)) t.textContent = String(value);
  };
  // A drag on one of this lab's sliders is one gesture: the change marks show what the whole drag
  // changed once it ends (as on the site).  While it lasts, a listener for its end on the window
  // (the pointer may be let go anywhere), removed when it comes.
  let dragging = false;
  const endDrag = () => {
    window.removeEventListener("pointerup", endDrag, true);
    window.removeEventListener("pointercancel", endDrag, true);
    if (!dragging) return;
    dragging = false;
    if (view.settle) view.settle();
  };
  const startDrag = (e) => {
    if (!(e.target instanceof Element) || !e.target.closest(".widget-slider")) return;
    dragging = true;
    window.addEventListener("pointerup", endDrag, true);
    window.addEventListener("pointercancel", endDrag, true);
  };
  // The three buttons (恢复基准, 对照一, 对照二) are ipywidgets Buttons: the kernel gets the click and
  // sets the controls (notebook code sees it), but the view need not wait for that.  Their values
  // are in the config: set here on the controls' models at once, drawn once (the kernel then sets
  // the same values: nothing changes).
  const BUTTONS = { "f11-button-reset": null, "f11-button-only_wv": "only_wv", "f11-button-only_wq": "only_wq" };
  let applying = false;
  const onButton = (e) => {
    const button = e.target instanceof Element ? e.target.closest("button") : null;
    const cls = button && Object.keys(BUTTONS).find((c) => button.classList.contains(c));
    if (!cls) return;
    const target = BUTTONS[cls] ? (config.contrasts || {})[BUTTONS[cls]] : config.baseline;
    if (!target) return;
    applying = true;
    try {
      names.forEach((name) => {
        const m = models[name];
        if (m && target[name] !== undefined && m.get("value") !== target[name]) {
          m.set("value", target[name]);
          m.save_changes();
        }
      });
    } finally {
      applying = false;
    }
    redraw();
  };

  const view = render.mountView(container, {
    strings: strings, ranges: config.ranges, core: core,
    // Hovering a Q/K/V cell marks the sliders it comes from (the controls carry dom_class names).
    findSources: sourcesIn(labBox),
    measure: () => labBox() || container, controlsBeside: true, wideAt: model.get("beside_px") || 560,
    planeFirst: true,  // under the sliders, beside S, A, O: the plane on Binder's first screen
    onLayout: (mode) => { const b = labBox(); if (b) b.classList.toggle("f11-stack", mode !== "wide"); },
    // A row header clicked in the view sets the row toggle's model (its "index"), as a click on it would.
    onRow: (i) => {
      if (!models.row) return;
      models.row.set("index", i);
      models.row.save_changes();
    },
    // A point of the plane dragged (or moved with the arrow keys): that row of X's sliders, set
    // here on their models (the kernel receives them as from a drag) and drawn at once.
    onPoint: (table, i, v, settling) => {
      applying = true;
      try {
        setPointRow(models, table, i, v);
      } finally {
        applying = false;
      }
      dragging = !!settling;
      redraw();
    },
  });

  // Notes of values the reader typed that coerce changed (d_k 3.5 -> 4): kept while the control
  // holds the value it was changed to (also when the kernel writes that value back to it).
  const typed = {};
  const current = {};
  function params() {
    const out = {};
    names.forEach((name) => {
      const m = models[name];
      const raw = m ? m.get("value") : config.start[name];
      const c = core.coerce(name, raw, config.ranges, config.baseline, current[name]);
      const value = rounded(c.value);
      if (c.note) typed[name] = { value: value, text: c.note };
      else if (typed[name] && typed[name].value !== value) delete typed[name];
      out[name] = current[name] = value;
    });
    return out;
  }
  function row() {
    const m = models.row;
    const index = m ? m.get("index") : config.row;
    return index === 0 ? 0 : 1;
  }
  function notes(p) {
    const out = [], noted = [];
    const seen = new Set();
    (model.get("kernel_notes") || []).forEach((n) => {
      if (n.name === null || n.name === undefined) { out.push(n.text); return; }
      if (typed[n.name] || p[n.name] !== n.value) return;  // the control has moved on since
      out.push(n.text); noted.push(n.name); seen.add(n.name);
    });
    names.forEach((name) => {
      if (typed[name] && !seen.has(name)) { out.push(typed[name].text); noted.push(name); }
    });
    return out.concat(core.messages(p, config.ranges, strings.lab || {}, noted));
  }

  function redraw() {
    const p = params();
    let result = null;
    try {
      result = core.attentionFromParams(p);
    } catch (e) {
      const error = ((strings.lab || {}).error || "{message}").split("{message}").join(core.errorText(e, strings));
      view.update({ params: view.state.params || config.baseline, result: null, row: row(), notes: [error].concat(notes(p)) });
      return;
    }
    // settling: a slider is being dragged; the view holds its change marks until the drag ends.
    view.update({ params: p, result: result, row: row(), notes: notes(p), settling: dragging });
  }

  redraw();
  const unlisten = listenOnBox(labBox, { keydown: tidy, blur: tidy, pointerdown: startDrag, click: onButton });
  // A change made here (a drag, a key, a typed readout: ipywidgets passes its view as
  // updated_view) is drawn at once.  Changes from the kernel come one control at a time (a
  // button sets 16 sliders): drawn once when the burst is over, so the marks of what changed
  // show the whole step, not only its last control.
  const onChange = changeScheduler(redraw, () => applying);
  const listeners = [];
  const listen = (m, event) => { m.on(event, onChange); listeners.push([m, event]); };
  names.forEach((name) => { if (models[name]) listen(models[name], "change:value"); });
  if (models.row) listen(models.row, "change:index");
  listen(model, "change:kernel_notes");
  if (model.get("scroll_into_view")) {
    // The projector page: after "Run All" the notebook is at its last cell; bring the lab up, its
    // own top at the notebook's top (not its cell's folded code: the plane needs that room).
    requestAnimationFrame(() => {
      const target = labBox() || el.closest(".jp-Cell") || el;
      target.scrollIntoView({ block: "start" });
    });
  }
  return () => {
    listeners.forEach(([m, event]) => m.off(event, onChange));
    onChange.cancel();
    unlisten();
    endDrag();
    if (view.destroy) view.destroy();
    if (container.parentNode) container.parentNode.removeChild(container);
  };
}

export default { render: renderLab };
