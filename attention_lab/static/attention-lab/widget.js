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

  // The control a slider element (or its readout) belongs to: by the class dom_class gave it.
  const nameOf = (node) => {
    const slider = node && node.closest(".widget-slider");
    return slider ? names.find((n) => n !== "causal" && slider.classList.contains(domClass(n))) : undefined;
  };
  // The sliders' ipywidgets views (their thumbs placed exactly, never a snapped value written back:
  // jupyter_glue.js placeSlidersExactly), found once the lab is in the page and again for a view
  // met later (the lab shown a second time).
  const views = new Map();  // slider element -> its ipywidgets view
  const findViews = () => sliderViews(models).then((found) => found.forEach(({ el: e, view: v }) => views.set(e, v)));
  const viewOf = (node) => {
    const slider = node.closest(".widget-slider");
    if (!views.has(slider)) findViews();
    return views.get(slider);
  };
  const show = (name, node, value) => {
    const v = viewOf(node);
    return v && typeof v.valueToString === "function" ? v.valueToString(value) : String(value);
  };

  // A value typed into a slider's readout is the lab's, read as the site reads its number boxes:
  // attention.js coerce (its grammar: "−0.5", full-width digits, a decimal comma; a clamp, d_k to an
  // integer, a refusal, each with the site's note; 3 stays 3, 0.53 stays 0.53).  ipywidgets would
  // read it with parseFloat, clamp it silently and snap it to the track's step (d_k 3 -> 4).  So on
  // Enter or leaving the readout (capturing, on the lab's own box: before ipywidgets' handlers,
  // which never see it) the value is set on the control's model here; the note is shown until
  // another value is typed or a control is moved (as on the site), and sent to the kernel (lab.notes).
  const edited = new WeakSet();  // readouts typed into since their value was last taken
  let typed = null;              // the last typed value's note: {name, value, text}, or null
  const sendTyped = () => model.send({ typed: typed });
  const clearTyped = () => {
    if (!typed) return;
    typed = null;
    sendTyped();
  };
  const onInput = (e) => {
    if (e.target instanceof Element && e.target.matches(".widget-readout[contenteditable]")) edited.add(e.target);
  };
  const takeTyped = (e) => {
    const t = e.target;
    if (!(t instanceof Element) || !t.matches(".widget-readout[contenteditable]")) return;
    if (e.type === "keydown" && e.key !== "Enter") return;
    const name = nameOf(t), m = name && models[name];
    if (!m) return;
    e.stopPropagation();
    if (e.type === "keydown") e.preventDefault();
    const now = current[name];
    if (!edited.has(t)) { t.textContent = show(name, t, m.get("value")); return; }
    edited.delete(t);
    const c = core.coerce(name, t.textContent || "", config.ranges, config.baseline, now, strings);
    const value = rounded(c.value);
    const before = typed;
    typed = c.note ? { name: name, value: value, text: c.note } : null;
    if (value !== now) setOwn(() => { m.set("value", value); m.save_changes(); });
    t.textContent = show(name, t, value);
    if (typed || before) sendTyped();
    redraw();
  };
  // Keys on a focused slider (jupyter_glue.js sliderKeys): a step from the value the lab holds (a
  // typed 0.53 -> 0.58; d_k to the next power of two, from a typed 3 to 4), as the site's controls.
  const DK_POWERS = config.dk_powers || [1, 2, 4, 8, 16, 32, 64];
  const keyStep = (slider, k) => {
    const name = nameOf(slider), m = name && models[name];
    if (!m) return false;
    viewOf(slider);
    const r = config.ranges[core.tableOf(name)];
    const now = current[name];
    let v;
    if (k === "min" || k === "max") v = name === "d_k" ? DK_POWERS[k === "min" ? 0 : DK_POWERS.length - 1] : r[k];
    else if (name === "d_k") {
      const on = DK_POWERS.filter((p) => (k > 0 ? p > now : p < now));
      const hops = Math.min(Math.abs(k) > 1 ? 2 : 1, on.length);
      v = hops ? (k > 0 ? on[hops - 1] : on[on.length - hops]) : now;
    } else {
      v = Math.min(r.max, Math.max(r.min, Number((now + k * r.step).toFixed(10))));
    }
    clearTyped();
    if (v !== now) setOwn(() => { m.set("value", v); m.save_changes(); });
    redraw();
    return true;
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
  /** Model changes the view makes itself (typed, keys, buttons, a dragged point): the models' change
   *  events they cause are not redrawn as the kernel's. */
  const setOwn = (fn) => {
    applying = true;
    try {
      fn();
    } finally {
      applying = false;
    }
  };
  const onButton = (e) => {
    const button = e.target instanceof Element ? e.target.closest("button") : null;
    const cls = button && Object.keys(BUTTONS).find((c) => button.classList.contains(c));
    if (!cls) return;
    const target = BUTTONS[cls] ? (config.contrasts || {})[BUTTONS[cls]] : config.baseline;
    if (!target) return;
    clearTyped();
    setOwn(() => names.forEach((name) => {
      const m = models[name];
      if (m && target[name] !== undefined && rounded(m.get("value")) !== rounded(target[name])) {
        m.set("value", target[name]);
        m.save_changes();
      }
    }));
    redraw();
  };

  const view = render.mountView(container, {
    strings: strings, ranges: config.ranges, colours: config.colours, core: core,
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
      clearTyped();
      setOwn(() => setPointRow(models, table, i, v));
      dragging = !!settling;
      redraw();
    },
  });

  // The values as the lab computes with them (coerced as the site's, the browser's stepping noise
  // rounded away); a typed note goes once its control holds another value.
  const current = {};
  function params() {
    const out = {};
    names.forEach((name) => {
      const m = models[name];
      const raw = m ? m.get("value") : config.start[name];
      const c = core.coerce(name, raw, config.ranges, config.baseline, current[name], strings);
      out[name] = current[name] = rounded(c.value);
    });
    if (typed && out[typed.name] !== typed.value) clearTyped();
    return out;
  }
  function row() {
    const m = models.row;
    const index = m ? m.get("index") : config.row;
    return index === 0 ? 0 : 1;
  }
  function notes(p) {
    const out = [], noted = [];
    (model.get("kernel_notes") || []).forEach((n) => {
      if (n.name === null || n.name === undefined) { out.push(n.text); return; }
      if ((typed && typed.name === n.name) || p[n.name] !== n.value) return;  // the control has moved on since
      out.push(n.text); noted.push(n.name);
    });
    if (typed) { out.push(typed.text); noted.push(typed.name); }
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
  const unlisten = listenOnBox(labBox, { keydown: takeTyped, blur: takeTyped, input: onInput, pointerdown: startDrag, click: onButton },
                               findViews);
  const unlistenKeys = sliderKeys(labBox, keyStep);
  // A change made here (a drag, a key, a typed readout: ipywidgets passes its view as
  // updated_view) is drawn at once.  Changes from the kernel come one control at a time (a
  // button sets 16 sliders): drawn once when the burst is over, so the marks of what changed
  // show the whole step, not only its last control.
  // A slider dragged here takes the typed note away (as on the site: another control moved).
  const scheduled = changeScheduler(redraw, () => applying);
  const onChange = (m, v, options) => {
    if (options && options.updated_view && m !== models.row && !applying) clearTyped();
    scheduled(m, v, options);
  };
  onChange.cancel = scheduled.cancel;
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
    unlistenKeys();
    endDrag();
    if (view.destroy) view.destroy();
    if (container.parentNode) container.parentNode.removeChild(container);
  };
}

export default { render: renderLab };
