/* F11 labs in Jupyter: what the two anywidget glues share (jupyter_glue.js).
 *
 * Joined into the widget's ES module before widget.js (the 2x2 lab, attention_lab.widget) or
 * shapes_widget.js (the shapes lab, attention_lab.shapes_lab).  Each lab's view reads the
 * ipywidgets controls' models in the browser and redraws from them; these are the pieces both do
 * the same way.  Not published on the site (book/_ext/f11_pages.py drops it).
 */

/** "Wq[0,1]" -> "f11-param-Wq-0-1": the class attention_lab.lab.dom_class gives each control. */
function domClass(name) {
  return "f11-param-" + name.replace(/[^A-Za-z0-9_]+/g, "-").replace(/^-+|-+$/g, "");
}

/** A control's value as the lab computes with it: the browser's stepping noise
 *  (0.5 + 0.05 -> 0.5499999999999999) rounded away at 10 decimals, as attention_lab.lab._round. */
function rounded(v) {
  return typeof v === "number" && isFinite(v) ? Number(v.toFixed(10)) : v;
}

/** The trait "controls" ({name: "IPY_MODEL_<id>"}) -> {name: the control's model}. */
async function controlModels(model) {
  const refs = model.get("controls") || {};
  const models = {};
  await Promise.all(Object.keys(refs).map(async (name) => {
    models[name] = await model.widget_manager.get_model(String(refs[name]).replace(/^IPY_MODEL_/, ""));
  }));
  return models;
}

/** A point of the vector plane moved: row i of `table` (X or Xs) set on its controls' models, the
 *  values [a, b] in the order of its columns (the kernel receives them as from a drag). */
function setPointRow(models, table, i, values) {
  values.forEach((x, c) => {
    const m = models[table + "[" + i + "," + c + "]"];
    if (m && m.get("value") !== x) { m.set("value", x); m.save_changes(); }
  });
}

/** Hovering a cell marks the controls it comes from: under the lab's box, by their dom_class. */
function sourcesIn(labBox) {
  return (wanted) => {
    const box = labBox();
    if (!box) return [];
    return wanted.flatMap((name) => Array.from(box.querySelectorAll("." + domClass(name))));
  };
}

/** A model change listener for `redraw`: a change made in this page (a drag, a key, a typed
 *  readout: ipywidgets passes its view as updated_view) is drawn at once; changes from the kernel
 *  come one control at a time (a button or an example sets many) and are drawn once, when the
 *  burst is over, so the marks of what changed show the whole step.  `busy()` true: ignore (the
 *  glue is setting several models itself and draws once after).  `.cancel()` drops a pending draw. */
function changeScheduler(redraw, busy) {
  let burst = null;
  const onChange = (_m, _v, options) => {
    if (busy && busy()) return;
    if (options && options.updated_view) {
      if (burst) { clearTimeout(burst); burst = null; }
      redraw();
      return;
    }
    if (burst) clearTimeout(burst);
    burst = setTimeout(() => { burst = null; redraw(); }, 40);
  };
  onChange.cancel = () => { if (burst) clearTimeout(burst); burst = null; };
  return onChange;
}

/** Capture-phase `handlers` ({type: fn}) on the lab's own box once it is in the page (anywidget
 *  renders before Jupyter attaches the output: tried for up to `tries` frames), then `then(box)`.
 *  Returns the function that takes them off again (the view's teardown). */
function listenOnBox(labBox, handlers, then, tries = 60) {
  let box = null, gone = false;
  const types = Object.keys(handlers);
  const attach = (left) => {
    if (gone) return;
    box = labBox();
    if (box) {
      types.forEach((t) => box.addEventListener(t, handlers[t], true));
      if (then) then(box);
    } else if (left > 0) requestAnimationFrame(() => attach(left - 1));
  };
  attach(tries);
  return () => {
    gone = true;
    if (box) types.forEach((t) => box.removeEventListener(t, handlers[t], true));
  };
}

/** The ipywidgets slider views (FloatSlider, FloatLogSlider, IntSlider) of `models`, each patched
 *  once (placeSlidersExactly); resolves to [{el, view}] for the views there are now. */
async function sliderViews(models) {
  const out = [];
  await Promise.all(Object.keys(models).map(async (name) => {
    const m = models[name];
    const views = await Promise.all(Object.values((m && m.views) || {})).catch(() => []);
    views.forEach((v) => { if (v && v.el && placeSlidersExactly(v)) out.push({ el: v.el, view: v }); });
  }));
  return out;
}

const PLACED = new WeakSet();
/** A slider's ipywidgets view made to show the value its model holds, exactly:
 *  - A value set on the model from anywhere but the slider itself (a typed readout, a button, the
 *    kernel, the lab's own keys) puts the thumb exactly there (d_k 3 between the 2 and 4 marks, Wq
 *    0.53 between 0.50 and 0.55) and is never written back snapped to the track's step.  ipywidgets
 *    moves the thumb with noUiSlider's set(), which snaps and fires "update", and its "update"
 *    handler writes the snapped value to the model (d_k 3 -> 4, 0.53 -> 0.55, −0.5 ->
 *    −0.49999999999999956, sent on to the kernel).  Here set() places the thumb as given
 *    (noUiSlider's exactInput) and the "update" it fires is not taken for the reader's move.  The
 *    reader's own drags go through noUiSlider's inner handlers, not set(): untouched.
 *  - The readout shows every digit of a value off the step (1.25 on X's 0.1 track, not "1.3"; the
 *    site's boxes show it so); values on the step keep ipywidgets' format ("0.50", "−1.0").
 *  Returns false for a view that is no slider. */
function placeSlidersExactly(view) {
  const ui = view.$slider && view.$slider.noUiSlider;
  if (!ui || typeof ui.set !== "function" || typeof view.handleSliderUpdateEvent !== "function") return false;
  if (PLACED.has(ui)) return true;
  PLACED.add(ui);
  const set = ui.set;
  let placing = false;
  ui.set = function (value, fireSetEvent) {
    placing = true;
    try {
      return set.call(this, value, fireSetEvent, true);
    } finally {
      placing = false;
    }
  };
  const onUpdate = view.handleSliderUpdateEvent;
  view.handleSliderUpdateEvent = function (values, handle) {
    if (placing) return undefined;  // ipywidgets' update() writes the readout from the model
    return onUpdate.call(this, values, handle);
  };
  const format = view.valueToString;
  if (typeof format === "function") {
    view.valueToString = function (value) {
      const text = format.call(this, value), x = rounded(Number(value));
      if (typeof x !== "number" || !isFinite(x) || Number(String(text).replace(/\u2212/g, "-")) === x) return text;
      return String(x).replace("-", "\u2212");
    };
    if (view.readout && view.model) view.readout.textContent = view.valueToString(view.model.get("value"));
  }
  return true;
}

/** What a key on a focused slider handle does, as on the site: ±1 step (→ ↑ / ← ↓), ±10 steps
 *  (PgUp / PgDn), an end (Home / End). */
const SLIDER_KEYS = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1, PageUp: 10, PageDown: -10, Home: "min", End: "max" };

/** Keys on a focused slider of the lab box, handled by the lab (`step(sliderEl, k)` sets the value
 *  and returns true; k from SLIDER_KEYS).  Notebook 7 takes the arrow keys for itself before
 *  noUiSlider sees them (its shortcuts listen on the document, capturing), so they would do
 *  nothing; in JupyterLab noUiSlider steps from the snapped thumb and PgUp moves 5 steps.  Listened
 *  for on the window, capturing (before either), so both rooms step as the site does.  Returns the
 *  function that stops listening. */
function sliderKeys(labBox, step) {
  const onKey = (e) => {
    const t = e.target;
    if (!(t instanceof Element) || !t.classList.contains("noUi-handle") || e.altKey || e.ctrlKey || e.metaKey) return;
    const k = SLIDER_KEYS[e.key];
    const box = labBox();
    if (k === undefined || !box || !box.contains(t)) return;
    const slider = t.closest(".widget-slider");
    if (!slider || !step(slider, k)) return;
    e.preventDefault();
    e.stopPropagation();
  };
  window.addEventListener("keydown", onKey, true);
  return () => window.removeEventListener("keydown", onKey, true);
}
